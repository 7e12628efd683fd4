import EmberCore
import EmberModel
#if canImport(EmberRemote)
import EmberRemote
#endif

/// Responsible for: opening a client whose documents sync with a server (`FirestoreSettings.host`):
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
    static func client(host: String, ssl: Bool, authToken: String? = nil, trustedCertificatesFile: String? = nil,
                       options: EmberOptions) throws -> (EmberClient, @Sendable () -> Int) {
        #if canImport(EmberRemote)
        let address = try RemoteAddress(parsing: host)
        let remote = try RemoteBackend(address: address, authToken: authToken, tls: ssl, trustedCertificatesFile: trustedCertificatesFile)
        let client = try EmberClient(options: options, documents: remote)
        client.atClose { remote.close() }
        let stats = remote.stats
        return (client, { stats.documentsReceived })
    #else
        throw EmberError(.unimplemented, "This build has no remote support (built with EMBER_CORE_ONLY=1): settings.host '\(host)' cannot be used")
        #endif
    }
}
