import CEmberABI
import EmberCore
import EmberModel
#if canImport(EmberRemote)
import EmberRemote
#endif

// Responsible for: ember_settings.host, .ssl, .ssl_ca_file and .auth_token: opening a database
// whose documents sync with a server (`ember serve`, the Firestore emulator). The strings are
// read as the others are (NULL: the in-process backend / system roots / anonymous; bad UTF-8 or
// an empty host: invalid-argument), the host as `host:port`; the connection (project
// demo-ember, database (default); TLS when ssl) ends when the database closes. A library built
// without the server's targets (EMBER_CORE_ONLY=1) refuses any host with unimplemented.

/// The client `settings` (NULL: defaults) describe: in-process, or synced with settings->host.
func openClient(_ settings: UnsafePointer<ember_settings>?) throws -> EmberClient {
    let o = try options(settings)
    guard let s = settings?.pointee, let hostPointer = s.host else { return try EmberClient(options: o) }
    let host = try text(hostPointer, "settings.host")
    if host.isEmpty {
        throw invalid("settings.host is empty: give the server as host:port (e.g. 127.0.0.1:8080), or NULL for the in-process backend")
    }
    #if canImport(EmberRemote)
    let address = try RemoteAddress(parsing: host)
    let caFile = try s.ssl_ca_file.map { try text($0, "settings.ssl_ca_file") }
    let token = try s.auth_token.map { try text($0, "settings.auth_token") }
    let remote = try RemoteBackend(address: address, authToken: token, tls: s.ssl, trustedCertificatesFile: caFile)
    let client = try EmberClient(options: o, documents: remote)
    client.atClose { remote.close() }
    return client
    #else
    throw EmberError(.unimplemented, "This build of libember has no remote support (built with EMBER_CORE_ONLY=1): settings.host '\(host)' cannot be used")
    #endif
}
