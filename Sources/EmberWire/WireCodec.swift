import EmberFirestoreProto
import EmberModel
import Foundation
import SwiftProtobuf

public typealias WireValue = Google_Firestore_V1_Value
public typealias WireDocument = Google_Firestore_V1_Document

/// Responsible for: the one mapping between the wire (Firestore v1 protobuf) and Ember's model,
/// for one database, on both sides of a connection: values, documents, document names and
/// times. Firestore's clients and servers share one serializer; so do Ember's (`ember serve`
/// and its clients), and what a client receives passes the checks a server applies to what it
/// is sent. Bad input (a value without a type, a name of another database or a malformed one, a
/// timestamp or GeoPoint out of range, nesting past the bound) throws INVALID_ARGUMENT; nothing
/// recurses without a bound.
///
/// `keys` says how a document name maps to a model key: a server keeps every database in one
/// backend under a prefix (`.p:P/.d:D/cities/SF`), a client's store holds its one database's
/// documents at their own paths (`cities/SF`).
///
///     let codec = WireCodec(db: try DatabaseName(project: "demo", database: "(default)"), keys: .plain)
///     codec.name(of: key)          // "projects/demo/databases/(default)/documents/cities/SF"
public struct WireCodec: Sendable {
    /// How document names map to model keys.
    public enum Keys: Sendable {
        /// Under the database's prefix (`DatabaseName.key(_:)`): a server's backend.
        case prefixed
        /// At their own paths: a client of one database.
        case plain
    }

    public let db: DatabaseName
    public let keys: Keys
    /// Deeper than Firestore's 20 levels is refused later with its message; this bound only
    /// keeps the conversion's recursion finite.
    public static let maxDepth = 64

    public init(db: DatabaseName, keys: Keys = .prefixed) {
        self.db = db
        self.keys = keys
    }

    // MARK: names

    /// The wire name of a model key (a prefixed key of another database keeps its own).
    public func name(of key: DocumentKey) -> String {
        switch keys {
        case .prefixed: return (DatabaseName.of(key) ?? db).name(of: key)
        case .plain: return name(of: key.path)
        }
    }

    /// The wire name of a client path under the documents root (the root itself for the empty path).
    public func name(of path: ResourcePath) -> String {
        path.isEmpty ? db.documentsRoot : db.documentsRoot + "/" + path.canonical
    }

    /// The model key of the document named `name`, which must be in this database.
    public func key(_ name: String) throws -> DocumentKey {
        let (other, path) = try DatabaseName.parse(resource: name)
        guard path.isDocumentPath else {
            throw EmberError.invalidArgument("Document name \"\(name)\" has odd number of segments")
        }
        guard other == db else {
            throw EmberError.invalidArgument("Document reference '\(name)' is not in database '\(db.name)'")
        }
        switch keys {
        case .prefixed: return db.key(path)
        case .plain: return DocumentKey(unchecked: path)
        }
    }

    // MARK: values

    public func value(_ v: WireValue, depth: Int = 0) throws -> Value {
        guard depth <= WireCodec.maxDepth else { throw EmberError.invalidArgument("Value is nested more than \(DocumentLimits.maxDepth) levels deep") }
        switch v.valueType {
        case .nullValue?: return .null
        case .booleanValue(let b)?: return .bool(b)
        case .integerValue(let i)?: return .int(i)
        case .doubleValue(let d)?: return .double(d)
        case .timestampValue(let t)?: return .timestamp(try timestamp(t))
        case .stringValue(let s)?: return .string(s)
        case .bytesValue(let b)?: return .bytes([UInt8](b))
        case .referenceValue(let name)?: return .reference(try key(name))
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
    public func map(_ fields: [Google_Firestore_V1_MapField], depth: Int = 0) throws -> MapValue {
        let entries = lastWinsByUTF8(fields.pairs)
        return MapValue(sortedEntries: try entries.map { (key: $0.key, value: try value($0.value, depth: depth)) })
    }

    public func wire(_ v: Value) -> WireValue {
        var w = WireValue()
        switch v {
        case .null: w.nullValue = .nullValue
        case .bool(let b): w.booleanValue = b
        case .int(let i): w.integerValue = i
        case .double(let d): w.doubleValue = d
        case .timestamp(let t): w.timestampValue = WireCodec.timestamp(micros: t.micros)
        case .string(let s): w.stringValue = s
        case .bytes(let b): w.bytesValue = Data(b)
        case .reference(let key): w.referenceValue = name(of: key)
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

    public func wireFields(_ m: MapValue) -> [Google_Firestore_V1_MapField] {
        m.entries.map { .init(key: $0.key, value: wire($0.value)) }
    }

    // MARK: documents

    /// The wire form of an existing document, optionally projected to `mask`'s fields.
    public func document(_ d: Document, mask: [FieldPath]? = nil) -> WireDocument {
        var w = WireDocument()
        // A document read from this database is named by it (no parse of the key's prefix).
        w.name = keys == .prefixed ? db.name(of: d.key) : name(of: d.key.path)
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

    /// A document the wire carries: its version is its update time (Firebase's document version).
    public func document(_ w: WireDocument) throws -> Document {
        let updated = try timestamp(w.updateTime).micros
        return Document(key: try key(w.name), data: try map(w.fields), version: updated,
                        createTime: try timestamp(w.createTime).micros, updateTime: updated)
    }

    // MARK: times

    public static func timestamp(micros: Int64) -> Google_Protobuf_Timestamp {
        let t = Timestamp(micros: micros)
        var w = Google_Protobuf_Timestamp()
        w.seconds = t.seconds
        w.nanos = t.nanoseconds
        return w
    }

    /// Firestore keeps microseconds: the nanoseconds below are dropped.
    public func timestamp(_ t: Google_Protobuf_Timestamp) throws -> Timestamp {
        guard t.seconds >= -62_135_596_800, t.seconds <= 253_402_300_799, t.nanos >= 0, t.nanos < 1_000_000_000 else {
            throw EmberError.invalidArgument("Timestamp out of range: seconds \(t.seconds), nanos \(t.nanos)")
        }
        return Timestamp(micros: t.seconds * 1_000_000 + Int64(t.nanos / 1000))
    }

    /// Microseconds of a time the caller has already checked (or produced): no range check.
    public static func micros(_ t: Google_Protobuf_Timestamp) -> Int64 { t.seconds &* 1_000_000 &+ Int64(t.nanos / 1000) }

    public func fieldPath(_ s: String) throws -> FieldPath {
        if s == "__name__" { return .documentId }
        return try FieldPath(parsing: s)
    }
}
