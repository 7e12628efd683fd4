import EmberCore
import EmberModel
#if canImport(EmberRemote)
import EmberRemote
#endif

/// Responsible for: opening a client whose documents (`FirestoreSettings.host`) or tree
/// (`FirestoreSettings.databaseHost`: `ember serve`'s tree port, the realtime protocol, namespace
/// `demo-ember`) sync with a server:
/// the address is read and checked, the connection made with `RemoteBackend` (project
/// `demo-ember`, database `(default)`; TLS when `ssl`, verified against the system's roots or
/// `trustedCertificatesFile`; the caller's `authToken`) and ended when the client closes. A
/// build without the server's targets (`EMBER_CORE_ONLY=1`) refuses every host.
///
///     let (client, received) = try FirestoreHost.client(host: "127.0.0.1:8080", ssl: false, options: o)
///
/// `received` reads `RemoteBackend.stats.documentsReceived` (for the process tests, through
/// `Firestore.documentsReceivedFromServer`, SPI `EmberTesting`).
enum FirestoreHost {
    static func client(host: String?, databaseHost: String? = nil, ssl: Bool, authToken: String? = nil,
                       trustedCertificatesFile: String? = nil, options: EmberOptions) throws -> (EmberClient, @Sendable () -> Int) {
        #if canImport(EmberRemote)
        let remote = try host.map {
            try RemoteBackend(addresses: try RemoteAddress.list(parsing: $0), authToken: authToken, tls: ssl, trustedCertificatesFile: trustedCertificatesFile)
        }
        var tree: RemoteTreeEndpoint?
        if let databaseHost {
            let a: RemoteAddress
            do { a = try RemoteAddress(parsing: databaseHost) } catch let e as EmberError {
                throw EmberError.invalidArgument("settings.databaseHost: \(e.message)")
            }
            let realtime = RealtimeClient.Settings(host: a.host, port: a.port, namespace: "demo-ember", tls: ssl,
                                                   trustedCertificatesFile: trustedCertificatesFile)
            try realtime.validate()
            tree = RemoteTreeEndpoint(settings: realtime, token: authToken)
        }
        let client = try EmberClient(options: options, documents: remote, tree: tree)
        if let remote { client.atClose { remote.close() } }
        let stats = remote?.stats
        return (client, { stats?.documentsReceived ?? 0 })
        #else
        throw EmberError(.unimplemented, "This build has no remote support (built with EMBER_CORE_ONLY=1): settings.host '\(host ?? databaseHost ?? "")' cannot be used")
        #endif
    }
}
