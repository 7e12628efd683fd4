import EmberFirestoreProto
import EmberModel
import Foundation
import SwiftProtobuf

typealias WireValue = Google_Firestore_V1_Value
typealias WireDocument = Google_Firestore_V1_Document

/// Responsible for: converting values, documents and times between the wire (Firestore v1
/// protobuf) and Ember's model, for one database: references on the wire are full document names,
/// in the model backend keys. Bad input (a value without a type, a reference to another database
/// or a malformed name, a timestamp out of range, nesting past Firestore's limit) throws
/// INVALID_ARGUMENT; nothing recurses without a bound.
struct WireCodec: Sendable {
    let db: DatabaseName
    /// Deeper than Firestore's 20 levels is refused later with its message; this bound only
    /// keeps the conversion's recursion finite.
    static let maxDepth = 64

    func value(_ v: WireValue, depth: Int = 0) throws -> Value {
        guard depth <= WireCodec.maxDepth else { throw EmberError.invalidArgument("Value is nested more than \(DocumentLimits.maxDepth) levels deep") }
        switch v.valueType {
        case .nullValue?: return .null
        case .booleanValue(let b)?: return .bool(b)
        case .integerValue(let i)?: return .int(i)
        case .doubleValue(let d)?: return .double(d)
        case .timestampValue(let t)?: return .timestamp(try timestamp(t))
        case .stringValue(let s)?: return .string(s)
        case .bytesValue(let b)?: return .bytes([UInt8](b))
        case .referenceValue(let name)?:
            let (other, key) = try DatabaseName.parse(document: name)
            guard other == db else {
                throw EmberError.invalidArgument("Document reference '\(name)' is not in database '\(db.name)'")
            }
            return .reference(key)
        case .geoPointValue(let g)?:
            guard g.latitude >= -90, g.latitude <= 90, g.longitude >= -180, g.longitude <= 180 else {
                throw EmberError.invalidArgument("GeoPoint latitude must be in [-90, 90] and longitude in [-180, 180]")
            }
            return .geoPoint(GeoPoint(latitude: g.latitude, longitude: g.longitude))
        case .arrayValue(let a)?:
            return .array(try a.values.map { try value($0, depth: depth + 1) })
        case .mapValue(let m)?:
            return .map(try map(m.fields, depth: depth + 1))
        case nil:
            throw EmberError.invalidArgument("Value has no type set (value_type is required)")
        }
    }

    /// A wire map's fields (a key sent twice: the last, as protobuf maps; keys by UTF-8 bytes).
    func map(_ fields: [Google_Firestore_V1_MapField], depth: Int = 0) throws -> MapValue {
        let entries = lastWinsByUTF8(fields.pairs)
        return MapValue(sortedEntries: try entries.map { (key: $0.key, value: try value($0.value, depth: depth)) })
    }

    func wire(_ v: Value) -> WireValue {
        var w = WireValue()
        switch v {
        case .null: w.nullValue = .nullValue
        case .bool(let b): w.booleanValue = b
        case .int(let i): w.integerValue = i
        case .double(let d): w.doubleValue = d
        case .timestamp(let t): w.timestampValue = WireCodec.timestamp(micros: t.micros)
        case .string(let s): w.stringValue = s
        case .bytes(let b): w.bytesValue = Data(b)
        case .reference(let key): w.referenceValue = (DatabaseName.of(key) ?? db).name(of: key)
        case .geoPoint(let g):
            var p = Google_Type_LatLng()
            p.latitude = g.latitude
            p.longitude = g.longitude
            w.geoPointValue = p
        case .array(let a):
            var arr = Google_Firestore_V1_ArrayValue()
            arr.values = a.map(wire)
            w.arrayValue = arr
        case .map(let m):
            var mv = Google_Firestore_V1_MapValue()
            mv.fields = wireFields(m)
            w.mapValue = mv
        }
        return w
    }

    func wireFields(_ m: MapValue) -> [Google_Firestore_V1_MapField] {
        m.entries.map { .init(key: $0.key, value: wire($0.value)) }
    }

    /// The wire form of an existing document, optionally projected to `mask`'s fields.
    func document(_ d: Document, mask: [FieldPath]? = nil) -> WireDocument {
        var w = WireDocument()
        w.name = db.name(of: d.key)
        if let mask {
            var projected = MapValue()
            for f in mask { if let v = d.data.value(at: f) { projected.setValue(v, at: f) } }
            w.fields = wireFields(projected)
        } else {
            w.fields = wireFields(d.data)
        }
        w.createTime = WireCodec.timestamp(micros: d.createTime)
        w.updateTime = WireCodec.timestamp(micros: d.updateTime)
        return w
    }

    static func timestamp(micros: Int64) -> Google_Protobuf_Timestamp {
        let t = Timestamp(micros: micros)
        var w = Google_Protobuf_Timestamp()
        w.seconds = t.seconds
        w.nanos = t.nanoseconds
        return w
    }

    /// Firestore keeps microseconds: the nanoseconds below are dropped.
    func timestamp(_ t: Google_Protobuf_Timestamp) throws -> Timestamp {
        guard t.seconds >= -62_135_596_800, t.seconds <= 253_402_300_799, t.nanos >= 0, t.nanos < 1_000_000_000 else {
            throw EmberError.invalidArgument("Timestamp out of range: seconds \(t.seconds), nanos \(t.nanos)")
        }
        return Timestamp(micros: t.seconds * 1_000_000 + Int64(t.nanos / 1000))
    }

    static func micros(_ t: Google_Protobuf_Timestamp) -> Int64 { t.seconds * 1_000_000 + Int64(t.nanos / 1000) }

    func fieldPath(_ s: String) throws -> FieldPath {
        if s == "__name__" { return .documentId }
        return try FieldPath(parsing: s)
    }
}
