import Foundation
import EmberModel

/// Responsible for: turning Swift values given to writes and queries into Ember values, and
/// field values and sentinels into a mutation's data, mask and transforms; and back for reads.
/// Errors name the field that was wrong.
enum UserData {
    struct Parsed {
        var data = MapValue()
        var mask: [EmberModel.FieldPath] = []
        var transforms: [FieldTransform] = []
        /// The fields FieldValue.delete() names (also in `mask`).
        var deletes: [EmberModel.FieldPath] = []
    }

    /// Parses a document for set / set-merge: nested dictionaries are maps, sentinels are collected.
    static func parseSet(_ dict: [String: Any], merge: Bool) throws -> Parsed {
        var p = Parsed()
        p.data = try parseMap(dict, path: [], into: &p, allowSentinels: true, merge: merge)
        return p
    }

    /// Parses updateData's field paths (dotted strings or FieldPath) into data and mask.
    static func parseUpdate(_ fields: [AnyHashable: Any]) throws -> Parsed {
        var p = Parsed()
        if fields.isEmpty { throw EmberError.invalidArgument("updateData needs at least one field.") }
        for (k, v) in fields {
            let path: EmberModel.FieldPath
            if let s = k.base as? String { path = try EmberModel.FieldPath(parsing: s) }
            else if let f = k.base as? FieldPath { path = try modelPath(f) }
            else { throw EmberError.invalidArgument("updateData keys must be strings or FieldPath, got \(type(of: k.base)).") }
            if let fv = v as? FieldValue {
                try addSentinel(fv, at: path, into: &p, inMerge: true)
                continue
            }
            let value = try parseValue(v, path: path.segments, into: &p, allowSentinels: true, merge: false)
            p.data.setValue(value, at: path)
            p.mask.append(path)
        }
        return p
    }

    static func modelPath(_ f: FieldPath) throws -> EmberModel.FieldPath {
        if let e = f.error { throw e }
        return f.model!
    }

    static func fieldPath(_ any: Any) throws -> EmberModel.FieldPath {
        if let s = any as? String { return try EmberModel.FieldPath(parsing: s) }
        if let f = any as? FieldPath { return try modelPath(f) }
        throw EmberError.invalidArgument("A field path must be a String or a FieldPath, got \(type(of: any)).")
    }

    private static func addSentinel(_ fv: FieldValue, at path: EmberModel.FieldPath, into p: inout Parsed, inMerge: Bool) throws {
        switch fv.kind {
        case .delete:
            if !inMerge { throw EmberError.invalidArgument("FieldValue.delete() can only be used with updateData() and setData(merge: true) (field '\(path)').") }
            p.mask.append(path)
            p.deletes.append(path)
        case .serverTimestamp: p.transforms.append(FieldTransform(path: path, op: .serverTimestamp))
        case .increment(let v): p.transforms.append(FieldTransform(path: path, op: .increment(v)))
        case .arrayUnion(let a): p.transforms.append(FieldTransform(path: path, op: .arrayUnion(try a.map { try plainValue($0, path: path.canonical) })))
        case .arrayRemove(let a): p.transforms.append(FieldTransform(path: path, op: .arrayRemove(try a.map { try plainValue($0, path: path.canonical) })))
        }
    }

    private static func parseMap(_ dict: [String: Any], path: [String], into p: inout Parsed, allowSentinels: Bool, merge: Bool) throws -> MapValue {
        var entries: [(key: String, value: Value)] = []
        entries.reserveCapacity(dict.count)
        for (k, v) in dict {
            let sub = path + [k]
            if k.isEmpty { throw EmberError.invalidArgument("Invalid data: empty field name at '\(path.joined(separator: "."))'.") }
            if let fv = v as? FieldValue {
                guard allowSentinels else { throw EmberError.invalidArgument("FieldValue sentinels cannot be used inside arrays (field '\(sub.joined(separator: "."))').") }
                try addSentinel(fv, at: EmberModel.FieldPath(unchecked: sub), into: &p, inMerge: merge)
                continue
            }
            let value = try parseValue(v, path: sub, into: &p, allowSentinels: allowSentinels, merge: merge)
            if merge, case .map(let m) = value, !m.isEmpty {} else if merge { p.mask.append(EmberModel.FieldPath(unchecked: sub)) }
            entries.append((key: k, value: value))
        }
        entries.sort { compareUTF8($0.key, $1.key) < 0 }
        return MapValue(sortedEntries: entries)
    }

    private static func parseValue(_ v: Any, path: [String], into p: inout Parsed, allowSentinels: Bool, merge: Bool) throws -> Value {
        if let d = v as? [String: Any] { return .map(try parseMap(d, path: path, into: &p, allowSentinels: allowSentinels, merge: merge)) }
        return try plainValue(v, path: path.joined(separator: "."))
    }

    /// A value with no sentinels in it (query operands, array elements).
    static func plainValue(_ v: Any, path: String) throws -> Value {
        switch v {
        case is NSNull: return .null
        case let n as NSNumber where type(of: v) is NSNumber.Type:
            switch String(cString: n.objCType) {
            case "c", "B": return .bool(n.boolValue)
            case "d", "f": return .double(n.doubleValue)
            case "Q", "L":
                guard n.uint64Value <= UInt64(Int64.max) else { throw EmberError.invalidArgument("Integer \(n) at '\(path)' does not fit in 64 bits.") }
                return .int(n.int64Value)
            default: return .int(n.int64Value)
            }
        case let b as Bool: return .bool(b)
        case let i as Int: return .int(Int64(i))
        case let i as Int64: return .int(i)
        case let i as Int32: return .int(Int64(i))
        case let i as Int16: return .int(Int64(i))
        case let i as Int8: return .int(Int64(i))
        case let i as UInt32: return .int(Int64(i))
        case let i as UInt16: return .int(Int64(i))
        case let i as UInt8: return .int(Int64(i))
        case let i as UInt:
            guard i <= UInt(Int64.max) else { throw EmberError.invalidArgument("Integer \(i) at '\(path)' does not fit in 64 bits.") }
            return .int(Int64(i))
        case let i as UInt64:
            guard i <= UInt64(Int64.max) else { throw EmberError.invalidArgument("Integer \(i) at '\(path)' does not fit in 64 bits.") }
            return .int(Int64(i))
        case let d as Double: return .double(d)
        case let f as Float: return .double(Double(f))
        case let s as String: return .string(s)
        case let d as Data: return .bytes([UInt8](d))
        case let t as Timestamp: return .timestamp(t.model)
        case let d as Date: return .timestamp(Timestamp(date: d).model)
        case let g as GeoPoint:
            guard g.latitude >= -90, g.latitude <= 90, g.longitude >= -180, g.longitude <= 180 else {
                throw EmberError.invalidArgument("GeoPoint at '\(path)' is out of range: latitude must be in [-90, 90] and longitude in [-180, 180].")
            }
            return .geoPoint(EmberModel.GeoPoint(latitude: g.latitude, longitude: g.longitude))
        case let r as DocumentReference: return .reference(try r.validKey())
        case let a as [Any]:
            var out: [Value] = []
            out.reserveCapacity(a.count)
            for e in a {
                if e is FieldValue { throw EmberError.invalidArgument("FieldValue sentinels cannot be used inside arrays (field '\(path)').") }
                if let d = e as? [String: Any] {
                    var scratch = Parsed()
                    out.append(.map(try parseMap(d, path: [path], into: &scratch, allowSentinels: false, merge: false)))
                } else {
                    out.append(try plainValue(e, path: path))
                }
            }
            return .array(out)
        case let d as [String: Any]:
            var scratch = Parsed()
            return .map(try parseMap(d, path: [path], into: &scratch, allowSentinels: false, merge: false))
        case let fv as FieldValue:
            _ = fv
            throw EmberError.invalidArgument("FieldValue sentinels are only allowed in setData and updateData (field '\(path)').")
        default:
            let m = Mirror(reflecting: v)
            if m.displayStyle == .optional {
                if let child = m.children.first { return try plainValue(child.value, path: path) }
                return .null
            }
            throw EmberError.invalidArgument("Unsupported type \(type(of: v)) at '\(path)'.")
        }
    }

    /// Back to Swift: NSNull, Bool, Int, Double, String, Data, Timestamp, GeoPoint,
    /// DocumentReference, [Any], [String: Any].
    static func toSwift(_ v: Value, firestore: Firestore) -> Any {
        switch v {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .timestamp(let t): return Timestamp(t)
        case .string(let s): return s
        case .bytes(let b): return Data(b)
        case .reference(let k): return DocumentReference(firestore: firestore, key: k)
        case .geoPoint(let g): return GeoPoint(latitude: g.latitude, longitude: g.longitude)
        case .array(let a): return a.map { toSwift($0, firestore: firestore) }
        case .map(let m): return toSwift(m, firestore: firestore)
        }
    }

    static func toSwift(_ m: MapValue, firestore: Firestore) -> [String: Any] {
        var out: [String: Any] = [:]
        out.reserveCapacity(m.count)
        for (k, v) in m.entries { out[k] = toSwift(v, firestore: firestore) }
        return out
    }
}
