import EmberFirestoreProto
import EmberModel
import Foundation
import GRPCCore
import SwiftProtobuf

typealias WireValue = Google_Firestore_V1_Value
typealias WireDocument = Google_Firestore_V1_Document

/// Responsible for: the client's side of the wire's names, values, documents and times, for one
/// database: a document key (`cities/SF`) is the name `projects/P/databases/D/documents/cities/SF`
/// on the wire, and back. A name of another database, or a value without a type, is refused with
/// INVALID_ARGUMENT (a server bug, never the user's input).
/// (EmberServer's WireCodec does the server's side of the same mapping.)
///
///     let codec = RemoteCodec(project: "demo", database: "(default)")
///     codec.name(of: key)          // "projects/demo/databases/(default)/documents/cities/SF"
struct RemoteCodec: Sendable {
    let project: String
    let databaseId: String
    /// The caller's ID token, sent as `authorization: Bearer <token>` on every call (a server
    /// with rules decides by it); nil: no header, an anonymous caller.
    var authToken: String? = nil

    /// `projects/P/databases/D`.
    var database: String { "projects/\(project)/databases/\(databaseId)" }
    /// `projects/P/databases/D/documents`, the parent of root collections.
    var documentsRoot: String { database + "/documents" }

    /// The headers the Firebase SDKs send with every call naming the database (the emulator finds
    /// the database of a stream by them: "could not infer db from headers" otherwise).
    var metadata: Metadata {
        var m = Metadata()
        m.addString(database, forKey: "google-cloud-resource-prefix")
        m.addString("database=" + database, forKey: "x-goog-request-params")
        if let authToken { m.addString("Bearer " + authToken, forKey: "authorization") }
        return m
    }

    // MARK: names

    func name(of key: DocumentKey) -> String { name(of: key.path) }

    /// The wire name of a path under the documents root (the root itself for the empty path).
    func name(of path: ResourcePath) -> String {
        path.isEmpty ? documentsRoot : documentsRoot + "/" + path.canonical
    }

    func key(_ name: String) throws -> DocumentKey {
        let prefix = documentsRoot + "/"
        guard name.utf8.starts(with: prefix.utf8) else {
            throw EmberError.invalidArgument("The server named document '\(name)', not in database '\(database)'")
        }
        let path = ResourcePath(segments: splitAtSlashes(Substring(name.utf8.dropFirst(prefix.utf8.count))))
        guard path.isDocumentPath, !path.segments.contains("") else {
            throw EmberError.invalidArgument("The server sent '\(name)', which is not a document name")
        }
        return DocumentKey(unchecked: path)
    }

    // MARK: values

    func wire(_ v: Value) -> WireValue {
        var w = WireValue()
        switch v {
        case .null: w.nullValue = .nullValue
        case .bool(let b): w.booleanValue = b
        case .int(let i): w.integerValue = i
        case .double(let d): w.doubleValue = d
        case .timestamp(let t): w.timestampValue = RemoteCodec.timestamp(micros: t.micros)
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

    func wireFields(_ m: MapValue) -> [Google_Firestore_V1_MapField] {
        m.entries.map { .init(key: $0.key, value: wire($0.value)) }
    }

    func value(_ v: WireValue) throws -> Value {
        switch v.valueType {
        case .nullValue?: return .null
        case .booleanValue(let b)?: return .bool(b)
        case .integerValue(let i)?: return .int(i)
        case .doubleValue(let d)?: return .double(d)
        case .timestampValue(let t)?: return .timestamp(Timestamp(micros: RemoteCodec.micros(t)))
        case .stringValue(let s)?: return .string(s)
        case .bytesValue(let b)?: return .bytes([UInt8](b))
        case .referenceValue(let n)?: return .reference(try key(n))
        case .geoPointValue(let g)?: return .geoPoint(GeoPoint(latitude: g.latitude, longitude: g.longitude))
        case .arrayValue(let a)?: return .array(try a.values.map(value))
        case .mapValue(let m)?: return .map(try map(m.fields))
        case nil: throw EmberError.invalidArgument("The server sent a value without a type")
        }
    }

    /// A wire map's fields (a key sent twice: the last, as protobuf maps; keys by UTF-8 bytes).
    func map(_ fields: [Google_Firestore_V1_MapField]) throws -> MapValue {
        let entries = lastWinsByUTF8(fields.pairs)
        return MapValue(sortedEntries: try entries.map { (key: $0.key, value: try value($0.value)) })
    }

    // MARK: documents

    /// A document the server sent: its version is its update time (Firebase's document version).
    func document(_ w: WireDocument) throws -> Document {
        let updated = RemoteCodec.micros(w.updateTime)
        return Document(key: try key(w.name), data: try map(w.fields), version: updated,
                        createTime: RemoteCodec.micros(w.createTime), updateTime: updated)
    }

    // MARK: times

    static func timestamp(micros: Int64) -> Google_Protobuf_Timestamp {
        let t = Timestamp(micros: micros)
        var w = Google_Protobuf_Timestamp()
        w.seconds = t.seconds
        w.nanos = t.nanoseconds
        return w
    }

    /// Ember keeps microseconds: the nanoseconds below are dropped.
    static func micros(_ t: Google_Protobuf_Timestamp) -> Int64 { t.seconds &* 1_000_000 &+ Int64(t.nanos / 1000) }
}
