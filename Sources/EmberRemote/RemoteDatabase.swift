import EmberWire
import GRPCCore

/// Responsible for: what every call to one database carries: the shared wire codec (plain keys:
/// a client's store holds its database's documents at their own paths) and the headers that
/// name the database and the caller.
///
///     let db = try RemoteDatabase(project: "demo", database: "(default)")
///     db.codec.name(of: key)       // "projects/demo/databases/(default)/documents/cities/SF"
struct RemoteDatabase: Sendable {
    let codec: WireCodec
    /// The caller's ID token, sent as `authorization: Bearer <token>` on every call (a server
    /// with rules decides by it); nil: no header, an anonymous caller.
    var authToken: String? = nil

    init(project: String, database: String) throws {
        codec = WireCodec(db: try DatabaseName(project: project, database: database), keys: .plain)
    }

    /// `projects/P/databases/D`.
    var name: String { codec.db.name }

    /// The headers the Firebase SDKs send with every call naming the database (the emulator finds
    /// the database of a stream by them: "could not infer db from headers" otherwise).
    var metadata: Metadata {
        var m = Metadata()
        m.addString(name, forKey: "google-cloud-resource-prefix")
        m.addString("database=" + name, forKey: "x-goog-request-params")
        if let authToken { m.addString("Bearer " + authToken, forKey: "authorization") }
        return m
    }
}
