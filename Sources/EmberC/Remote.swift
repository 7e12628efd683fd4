import CEmberABI
import EmberCore
import EmberModel
#if canImport(EmberRemote)
import EmberRemote
#endif

// Responsible for: ember_settings.host, .database_host, .ssl, .ssl_ca_file and .auth_token:
// opening a database whose documents (host: `ember serve`, the Firestore emulator) or tree
// (database_host: `ember serve`'s tree port, the realtime protocol) sync with a server. The strings are
// read as the others are (NULL: the in-process backend / system roots / anonymous; bad UTF-8 or
// an empty host: invalid-argument), the host as `host:port`; the connection (project
// demo-ember, database (default); TLS when ssl) ends when the database closes. A library built
// without the server's targets (EMBER_CORE_ONLY=1) refuses any host with unimplemented.

/// The client `settings` (NULL: defaults) describe: in-process, or synced with settings->host
/// (documents) and settings->database_host (the tree).
func openClient(_ settings: UnsafePointer<ember_settings>?) throws -> EmberClient {
    let o = try options(settings)
    guard let s = settings?.pointee, s.host != nil || s.database_host != nil else { return try EmberClient(options: o) }
    let host = try s.host.map { try address($0, "settings.host", example: "127.0.0.1:8080", null: "the in-process backend") }
    let databaseHost = try s.database_host.map { try address($0, "settings.database_host", example: "127.0.0.1:9000", null: "a tree in this process") }
    #if canImport(EmberRemote)
    let caFile = try s.ssl_ca_file.map { try text($0, "settings.ssl_ca_file") }
    let token = try s.auth_token.map { try text($0, "settings.auth_token") }
    let remote = try host.map { try RemoteBackend(addresses: try RemoteAddress.list(parsing: $0), authToken: token, tls: s.ssl, trustedCertificatesFile: caFile) }
    var tree: RemoteTreeEndpoint?
    if let databaseHost {
        let a: RemoteAddress
        do { a = try RemoteAddress(parsing: databaseHost) } catch let e as EmberError { throw invalid("settings.database_host: \(e.message)") }
        let realtime = RealtimeClient.Settings(host: a.host, port: a.port, namespace: "demo-ember", tls: s.ssl,
                                               trustedCertificatesFile: caFile)
        try realtime.validate()
        tree = RemoteTreeEndpoint(settings: realtime, token: token)
    }
    let client = try EmberClient(options: o, documents: remote, tree: tree)
    if let remote { client.atClose { remote.close() } }
    return client
    #else
    throw EmberError(.unimplemented, "This build of libember has no remote support (built with EMBER_CORE_ONLY=1): settings.host '\(host ?? databaseHost ?? "")' cannot be used")
    #endif
}

/// A "host:port" setting's text (empty: invalid-argument).
private func address(_ p: UnsafePointer<CChar>, _ name: String, example: String, null: String) throws -> String {
    let text = try text(p, name)
    if text.isEmpty { throw invalid("\(name) is empty: give the server as host:port (e.g. \(example)), or NULL for \(null)") }
    return text
}
