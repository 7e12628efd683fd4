import EmberConcurrency
import Dispatch
import Foundation
import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import EmberStorage
import GRPCCore
import GRPCNIOTransportHTTP2

/// Responsible for: a Firestore v1 server (`ember serve`, the emulator) as a backend the core
/// opens links to: its address and database, the caller's ID token, and the one HTTP/2
/// connection (plaintext or TLS) every link opened on it shares. The connection is
/// started at once and ends with `close()` or when the last link and the caller let go. Each
/// failed attempt of its links' streams to reach the server is told by its `ConnectionLog`
/// (stderr by default).
///
///     let server = try RemoteBackend(host: "127.0.0.1", port: 8080)
///     let client = EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: MemoryPersistence()),
///                              documents: server)
public final class RemoteBackend: BackendEndpoint {
    /// The first server of `addresses`.
    public let host: String
    public let port: Int
    /// The servers, in the order they are tried (see `RemoteHosts`).
    public let addresses: [RemoteAddress]
    let remoteDatabase: RemoteDatabase
    /// What the links opened on this backend received (for tests and benchmarks).
    public let stats = RemoteStats()
    /// Tells each failed attempt to reach the server (stderr by default).
    let connectionLog: ConnectionLog
    private let grpc: GRPCClient<HTTP2ClientTransport.Posix>
    let firestore: FirestoreClient
    /// Runs the connection; `ended` is signalled once it has stopped.
    private var running: Task<Void, Never>!
    private let ended = DispatchSemaphore(value: 0)
    private let closeLock = NSLock()
    private var closed = false

    /// Connects to `host:port` (an IPv4 or IPv6 address, or a name resolved by DNS) for database
    /// `projects/PROJECT/databases/DATABASE`, as the caller `authToken` names (an ID token; nil:
    /// anonymous). Throws invalidArgument for a port out of range or a token that cannot be a
    /// header value.
    ///
    /// `tls` connects with TLS, the server's certificate verified against the system's roots,
    /// or against the PEM certificates in `trustedCertificatesFile` (a private CA, a
    /// self-signed `ember serve`).
    public convenience init(host: String, port: Int, project: String = "demo-ember", database: String = "(default)",
                            authToken: String? = nil, tls: Bool = false, trustedCertificatesFile: String? = nil) throws {
        try self.init(addresses: [RemoteAddress(host: host, port: port)], project: project, database: database,
                      authToken: authToken, tls: tls, trustedCertificatesFile: trustedCertificatesFile)
    }

    /// Connects to the first of `addresses` that answers, moving on to the next when it fails
    /// (`RemoteHosts`; several servers must be IP addresses). One address is `init(host:port:)`.
    public init(addresses: [RemoteAddress], project: String = "demo-ember", database: String = "(default)",
                authToken: String? = nil, tls: Bool = false, trustedCertificatesFile: String? = nil) throws {
        guard let first = addresses.first else { throw EmberError.invalidArgument("No server given") }
        for a in addresses where !(1...65535).contains(a.port) {
            throw EmberError.invalidArgument("Invalid port \(a.port): use 1-65535")
        }
        let host = first.host, port = first.port
        if let t = authToken, t.isEmpty || t.utf8.count > 16 << 10 || !t.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw EmberError.invalidArgument("Invalid auth token: expected 1 to 16384 printable ASCII characters without spaces (a JWT)")
        }
        self.host = host
        self.port = port
        self.addresses = addresses
        var remoteDatabase = try RemoteDatabase(project: project, database: database)
        remoteDatabase.authToken = authToken
        self.remoteDatabase = remoteDatabase
        connectionLog = ConnectionLog(address: addresses.map(\.description).joined(separator: ","), tls: tls)
        let target: any ResolvableTarget
        var resolvers = NameResolverRegistry.defaults
        if addresses.count > 1 {
            target = try RemoteHosts(addresses)
            resolvers.registerFactory(RemoteHosts.Resolver())
        } else if host.split(separator: ".").count == 4, host.allSatisfy({ $0.isNumber || $0 == "." }) {
            target = .ipv4(address: host, port: port)
        } else if host.contains(":") {
            target = .ipv6(address: host, port: port)
        } else {
            target = .dns(host: host, port: port)
        }
        do {
            // No idle timer: grpc-swift-nio-transport 2.9's connection handler and its idle
            // timer hold each other until the channel goes inactive, which a connection that
            // never opened (server down) never does, so every failed attempt leaked them (found by
            // the C tests under valgrind and LSan). A link keeps its streams open anyway.
            let config = HTTP2ClientTransport.Posix.Config.defaults { $0.connection.maxIdleTime = nil }
            let security: HTTP2ClientTransport.Posix.TransportSecurity
            if tls {
                if let file = trustedCertificatesFile, !FileManager.default.isReadableFile(atPath: file) {
                    throw EmberError.invalidArgument("Cannot read the trusted certificates file '\(file)'")
                }
                security = .tls { c in
                    if let file = trustedCertificatesFile { c.trustRoots = .certificates([.file(path: file, format: .pem)]) }
                }
            } else {
                security = .plaintext
            }
            let transport = try HTTP2ClientTransport.Posix(target: target, transportSecurity: security, config: config,
                                                           resolverRegistry: resolvers)
            grpc = GRPCClient(transport: transport)
        } catch let e as EmberError {
            throw e
        } catch {
            throw EmberError(.invalidArgument, "Cannot connect to \(addresses.map(\.description).joined(separator: ",")): \(error)")
        }
        firestore = FirestoreClient(wrapping: grpc)
        let grpc = self.grpc, ended = self.ended
        running = Task {
            try? await grpc.runConnections()
            ended.signal()
        }
    }

    /// Connects to `address` (see `RemoteAddress(parsing:)` for the `host:port` text).
    public convenience init(address: RemoteAddress, project: String = "demo-ember", database: String = "(default)",
                            authToken: String? = nil, tls: Bool = false, trustedCertificatesFile: String? = nil) throws {
        try self.init(addresses: [address], project: project, database: database, authToken: authToken,
                      tls: tls, trustedCertificatesFile: trustedCertificatesFile)
    }

    public func openLink(client: BackendClient, queue: DispatchQueue, clientPersistence: Persistence?) -> any BackendLink {
        RemoteLink(endpoint: self, client: client, deliveryQueue: queue)
    }

    /// Ends the connection and returns once it has stopped: the calls in flight get two seconds
    /// to finish, then the connection is cancelled (streams still open end with it). Nothing of
    /// the connection runs after it returns. Idempotent. Not from inside an async task.
    public func close() {
        closeLock.lock()
        defer { closeLock.unlock() }
        guard !closed else { return }
        closed = true
        connectionLog.close()
        grpc.beginGracefulShutdown()
        if ended.wait(timeout: .now() + 2) == .timedOut {
            running.cancel()
            _ = ended.wait(timeout: .now() + 5)
        }
    }

    deinit { grpc.beginGracefulShutdown() }
}
