import EmberBackend
import EmberModel
import EmberPostgres
import EmberRules
import EmberTreeRules
import EmberStorage
import Foundation
import EmberConcurrency
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import NIOPosix
import NIOSSL

/// Responsible for: `ember serve`: one backend (durable in one SQLite file, or in memory) behind
/// the Cloud Firestore v1 gRPC service. Callers are who their ID token says (AuthInterceptor)
/// and may do what the rules file grants them (AccessControl); without a rules file everyone may
/// do everything, which only a loopback address allows. A non-loopback address also needs TLS
/// (a certificate and key) unless `insecure` says otherwise. It
/// runs until `shutDown()` (SIGTERM/SIGINT in the command line): new calls are refused, open
/// streams end with UNAVAILABLE, calls in flight finish (connections still open `shutdownGrace`
/// after the GOAWAY are closed, which ends their calls), then the file closes. A commit is
/// acknowledged only once it is in the file, so a kill -9 loses nothing acknowledged.
///
///     let server = try EmberServer(configuration: .init(host: "127.0.0.1", port: 8080, path: "data.ember"))
///     try await server.run()
public final class EmberServer: @unchecked Sendable { // set up in `init`, then started and stopped once, from one task
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// The SQLite file; nil keeps everything in memory.
        public var path: String?
        /// The largest request accepted (bytes); Firestore's own limit on a request is 10 MiB.
        public var maxRequestBytes: Int
        /// Concurrent streams per connection.
        public var maxConcurrentStreams: Int
        /// How long a shutdown waits for calls in flight before cancelling them.
        public var shutdownGrace: Duration
        /// The Firestore security rules (the text of a rules file); nil lets every caller do
        /// everything (loopback only).
        public var rules: String?
        /// The HS256 key ID tokens may be signed with.
        public var tokenSecret: [UInt8]?
        /// A JSON Web Key Set of the RS256/ES256 public keys ID tokens may be signed with.
        public var jwks: String?
        /// The bearer value of the admin, whom rules do not bind (at least 16 bytes).
        public var adminToken: String?
        /// The issuer (`iss`) a project's tokens must name; `{project}` is the project id.
        public var tokenIssuer: String
        /// PEM files of the certificate chain and private key: TLS instead of plaintext.
        public var tlsCertificatePath: String?
        public var tlsKeyPath: String?
        /// Allows plaintext on a non-loopback address.
        public var insecure: Bool
        /// Response bytes a stream (Listen, RunQuery) may keep queued while its client does not
        /// read, and how long it may stay over that with no write completing before it is ended
        /// with RESOURCE_EXHAUSTED (sooner, after half of it, past four times the bytes).
        public var maxQueuedOutputBytes: Int = 16 << 20
        public var stalledOutputGrace: Duration = .seconds(10)
        /// The most connections open at once (past it a new one is closed at once, logged); nil
        /// takes the descriptor limit less a reserve (ConnectionGuard.defaultLimit).
        public var maxConnections: Int?
        /// How long an accepted connection may take to send the HTTP/2 preface.
        public var handshakeTimeout: Duration = .seconds(10)
        /// How long a connection with no call stays open (then gRPC closes it with a GOAWAY).
        public var idleTimeout: Duration = .seconds(300)
        /// The tree's HTTP/1.1 port (the Realtime Database REST API; 0 picks one); nil: none.
        /// HTTPS with the gRPC port's certificate and key when TLS is on.
        public var databasePort: Int?
        /// The namespace of a tree request with no `ns` and no namespace in its Host.
        public var defaultNamespace: String = "ember"
        /// The tree's security rules (Realtime Database rules source, JSON with comments) for
        /// every namespace without its own. Nil: locked with Firestore `rules`, else open
        /// (loopback only).
        public var databaseRules: String?
        /// Keep the documents on this PostgreSQL (`postgresql://user@host:port/database`), shared
        /// with every instance started on it (docs/scale-out.md); `path` is then not used for them.
        public var postgres: String?
        /// With `postgres`: seconds the shared change log keeps a commit (0.1 at least).
        public var logRetention: Double = 3600

        public init(host: String = "127.0.0.1", port: Int = 8080, path: String? = nil,
                    maxRequestBytes: Int = 16 << 20, maxConcurrentStreams: Int = 10_000,
                    shutdownGrace: Duration = .seconds(10), rules: String? = nil, tokenSecret: [UInt8]? = nil,
                    jwks: String? = nil, adminToken: String? = nil,
                    tokenIssuer: String = "https://securetoken.google.com/{project}",
                    tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil, insecure: Bool = false) {
            self.host = host
            self.port = port
            self.path = path
            self.maxRequestBytes = maxRequestBytes
            self.maxConcurrentStreams = maxConcurrentStreams
            self.shutdownGrace = shutdownGrace
            self.rules = rules
            self.tokenSecret = tokenSecret
            self.jwks = jwks
            self.adminToken = adminToken
            self.tokenIssuer = tokenIssuer
            self.tlsCertificatePath = tlsCertificatePath
            self.tlsKeyPath = tlsKeyPath
            self.insecure = insecure
        }
    }

    public let configuration: Configuration
    let logger: Logger
    private let persistence: Persistence
    /// With `--postgres`: the shared store and this instance's log on it.
    private let postgres: (store: PostgresStore, log: PostgresCommitLog, tree: PostgresTreeLog)?
    private let door: BackendDoor
    private let streams = StreamRegistry()
    private let service: FirestoreService
    private let connectionGuard: ConnectionGuard
    private let treeDoor: TreeDoor
    private let treeServer: TreeHTTPServer?
    private let boundDatabasePort = LockedPort()
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    /// Whether this instance takes traffic (health service, `/healthz`).
    private let health: ServerHealth
    private let transport: HTTP2ServerTransport.Posix

    /// Opens the store, parses the rules and loads the keys. Refuses a non-loopback host without
    /// rules, or without TLS unless `insecure`.
    public init(configuration: Configuration, logger: Logger = Logger(label: "ember.server")) async throws {
        if !EmberServer.isLoopback(configuration.host) {
            guard configuration.rules != nil else {
                throw EmberError.invalidArgument("Refusing to listen on '\(configuration.host)' without a rules file (--rules): every caller could read and write everything. Without rules, ember serve listens on a loopback address only (127.0.0.1, ::1 or localhost)")
            }
            guard configuration.tlsCertificatePath != nil || configuration.insecure else {
                throw EmberError.invalidArgument("Refusing to listen on '\(configuration.host)' in plaintext: give a certificate and key (--tls-cert, --tls-key), or --insecure")
            }
        }
        if !EmberServer.isLoopback(configuration.host), configuration.databasePort != nil, configuration.databaseRules == nil {
            throw EmberError.invalidArgument("Refusing to serve the tree on '\(configuration.host)' without tree rules (--database-rules): every caller could read and write it. Give them, or --no-database")
        }
        guard (configuration.tlsCertificatePath == nil) == (configuration.tlsKeyPath == nil) else {
            throw EmberError.invalidArgument("TLS needs both a certificate chain and its private key")
        }
        if let cert = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            do {
                guard try !NIOSSLCertificate.fromPEMFile(cert).isEmpty else { throw EmberError.invalidArgument("no certificate in it") }
            } catch {
                throw EmberError.invalidArgument("Cannot read the TLS certificate chain '\(cert)' (PEM): \(error)")
            }
            do {
                _ = try NIOSSLPrivateKey(file: key, format: .pem)
            } catch {
                throw EmberError.invalidArgument("Cannot read the TLS private key '\(key)' (PEM): \(error)")
            }
        }
        guard (0...65535).contains(configuration.port) else {
            throw EmberError.invalidArgument("Invalid port \(configuration.port): use 0-65535 (0 picks a free port)")
        }
        self.configuration = configuration
        self.logger = logger
        if configuration.postgres != nil, !(configuration.logRetention >= 0.1 && configuration.logRetention <= 3.2e7) {
            throw EmberError.invalidArgument("Invalid log retention \(configuration.logRetention): give seconds, from 0.1 to about a year")
        }
        if let url = configuration.postgres {
            // The documents are PostgreSQL's: this instance keeps a copy in memory, loaded from
            // its snapshot and kept up by the shared log.
            persistence = MemoryPersistence()
            let store = try await PostgresStore.open(url: url)
            let backend = Backend(persistence: persistence)
            let log: PostgresCommitLog
            let tree: PostgresTreeLog
            do {
                log = try await PostgresCommitLog.attach(to: backend, store: store, database: "ember",
                                                         retention: configuration.logRetention)
                tree = try await PostgresTreeLog.attach(to: backend, store: store, documents: log)
            } catch {
                store.close()
                throw error
            }
            postgres = (store, log, tree)
            door = BackendDoor(backend: backend)
        } else {
            persistence = try configuration.path.map { try SQLitePersistence(path: $0) } ?? MemoryPersistence()
            postgres = nil
            door = BackendDoor(backend: Backend(persistence: persistence))
        }
        let rules: Rules?
        do {
            rules = try configuration.rules.map { try Rules(source: $0) }
        } catch let e as RulesParseError {
            persistence.close()
            throw EmberError.invalidArgument("Invalid rules: \(e)")
        }
        let verifier: TokenVerifier
        do {
            verifier = try await TokenVerifier(secret: configuration.tokenSecret, jwks: configuration.jwks, adminToken: configuration.adminToken)
        } catch {
            persistence.close()
            throw error
        }
        health = ServerHealth(log: postgres?.log)
        let access = AccessControl(rules: rules, backend: door.backend, issuerTemplate: configuration.tokenIssuer)
        let service = FirestoreService(door: door, streams: streams, access: access,
                                       outputLimits: .init(bound: configuration.maxQueuedOutputBytes, grace: configuration.stalledOutputGrace))
        self.service = service
        let keepaliveTimeout = min(Duration.seconds(20), configuration.idleTimeout)
        let connectionGuard = ConnectionGuard(limit: configuration.maxConnections ?? ConnectionGuard.defaultLimit(),
                                              handshakeTimeout: configuration.handshakeTimeout,
                                              silenceTimeout: configuration.idleTimeout + keepaliveTimeout, logger: logger)
        self.connectionGuard = connectionGuard
        let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
        let address: GRPCNIOTransportCore.SocketAddress = host.contains(":") ? .ipv6(host: host, port: configuration.port) : .ipv4(host: host, port: configuration.port)
        transport = HTTP2ServerTransport.Posix(
            address: address, transportSecurity: EmberServer.security(configuration),
            config: .defaults { c in
                c.rpc.maxRequestPayloadSize = configuration.maxRequestBytes
                c.http2.maxConcurrentStreams = configuration.maxConcurrentStreams
                // A connection still open this long after the shutdown's GOAWAY is closed: a call
                // whose client stopped reading (flow control) would otherwise hold it forever.
                c.connection.maxGraceTime = configuration.shutdownGrace
                // No call for the idle timeout: gRPC's GOAWAY. A keepalive PING after the same
                // time without reading; a peer silent past both is closed (PeerDeadlines).
                c.connection.maxIdleTime = configuration.idleTimeout
                c.connection.keepalive.time = configuration.idleTimeout
                c.connection.keepalive.timeout = keepaliveTimeout
                c.channelDebuggingCallbacks.onAcceptTCPConnection = { [connectionGuard] channel in connectionGuard.admit(channel) }
            })
        treeDoor = TreeDoor(backend: door.backend)
        let metrics = ServerMetrics(backend: door.backend, streams: streams, connections: connectionGuard, ledger: service.ledger,
                                    health: health, postgres: postgres.map { ($0.store, $0.log) })
        if let dp = configuration.databasePort {
            guard (0...65535).contains(dp) else {
                throw EmberError.invalidArgument("Invalid database port \(dp): use 0-65535 (0 picks a free port)")
            }
            guard TreeREST.isValidNamespace(configuration.defaultNamespace) else {
                throw EmberError.invalidArgument("Invalid default namespace '\(configuration.defaultNamespace)': 1 to 63 letters, digits, '-' or '_'")
            }
            let decider: TreeAccess.Decider
            if let source = configuration.databaseRules {
                do {
                    decider = .init(rules: try TreeRules(source: source), requiresIndexes: true)
                } catch let e as TreeRulesError {
                    persistence.close()
                    throw EmberError.invalidArgument("Invalid tree rules (--database-rules): \(e.message)")
                }
            } else {
                decider = .init(rules: rules == nil ? .open : .locked, requiresIndexes: false)
            }
            // The emulator's admin, `owner`, on a loopback server unless another is given.
            let admin = configuration.adminToken ?? (EmberServer.isLoopback(configuration.host) ? "owner" : nil)
            let access = TreeAccess(door: treeDoor, verifier: verifier, adminToken: admin, issuerTemplate: configuration.tokenIssuer,
                                    defaultDecider: decider)
            if postgres != nil { access.followSharedRules() }
            let rest = TreeREST(door: treeDoor, access: access, defaultNamespace: configuration.defaultNamespace,
                                maxBodyBytes: configuration.maxRequestBytes)
            var tls: NIOSSLContext?
            if let cert = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
                let chain = try NIOSSLCertificate.fromPEMFile(cert).map { NIOSSLCertificateSource.certificate($0) }
                tls = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: chain,
                                                                                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))
            }
            treeServer = TreeHTTPServer(rest: rest, backend: door.backend, group: MultiThreadedEventLoopGroup.singleton, connectionGuard: connectionGuard,
                                        maxBodyBytes: configuration.maxRequestBytes, tls: tls,
                                        operations: OperationsHTTP(health: health, metrics: metrics))
        } else {
            treeServer = nil
        }
        // Without rules no call is refused, so no token is read (the emulator's clients send
        // `Bearer owner`, which is no JWT).
        var interceptors: [any ServerInterceptor] = rules == nil ? [] : [AuthInterceptor(verifier: verifier)]
        if let log = postgres?.log { interceptors.insert(StoreGate(log: log), at: 0) }
        server = GRPCServer(transport: transport, services: [service, HealthService(health: health)], interceptors: interceptors)
    }

    private static func security(_ c: Configuration) -> HTTP2ServerTransport.Posix.TransportSecurity {
        guard let cert = c.tlsCertificatePath, let key = c.tlsKeyPath else { return .plaintext }
        return .tls(certificateChain: [.file(path: cert, format: .pem)], privateKey: .file(path: key, format: .pem))
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Serves until `shutDown()`; then closes the store.
    public func run() async throws {
        if let treeServer, let dp = configuration.databasePort {
            let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
            do {
                boundDatabasePort.set(try await treeServer.start(host: host, port: dp))
            } catch {
                logger.error("cannot start", metadata: ["event": "error", "error": "cannot listen on the database port \(dp): \(error)"])
                closeStore()
                throw error
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.server.serve() }
            group.addTask {
                if let port = try? await self.listeningPort {
                    self.logger.info("started", metadata: ["event": "start", "host": "\(self.configuration.host)", "port": "\(port)",
                                                          "store": "\(self.storeDescription)",
                                                          "rules": "\(self.configuration.rules == nil ? "none (everything allowed)" : "on")",
                                                          "database_rules": "\(self.configuration.databaseRules != nil ? "file" : (self.configuration.rules == nil ? "open" : "locked (admin only)"))",
                                                          "max_connections": "\(self.connectionGuard.limit)",
                                                          "database_port": "\(self.boundDatabasePort.get().map(String.init) ?? "off")",
                                                          "namespace": "\(self.configuration.defaultNamespace)",
                                                          "tls": "\(self.configuration.tlsCertificatePath == nil ? "off" : "on")",
                                                          "executor": "\(EventLoopExecutor.isAdopted ? "event-loops" : "swift-pool")"])
                }
            }
            do {
                try await group.waitForAll()
            } catch {
                logger.error("stopped on error", metadata: ["event": "error", "error": "\(error)"])
                closeStore()
                throw error
            }
        }
        closeStore()
        logger.info("stopped", metadata: ["event": "stop"])
    }

    /// Ends the backend's work and closes the file, with the clock's exact last version stored
    /// (on either way of stopping), so the next start does not begin a lease ahead.
    private func closeStore() {
        postgres?.log.stop()
        postgres?.tree.stop()
        door.backend.flush()
        door.close()
        treeDoor.close()
        door.backend.storeExactClock()
        persistence.close()
        postgres?.store.close()
    }

    /// Where the documents are, for the start line (a PostgreSQL URL without its password).
    var storeDescription: String {
        if let url = configuration.postgres, var c = URLComponents(string: url) {
            c.password = nil
            return "postgresql " + (c.string ?? "")
        }
        return configuration.path ?? ":memory:"
    }

    /// The port bound (the one asked for, or the one picked for port 0); waits for the bind.
    public var listeningPort: Int {
        get async throws {
            let address = try await transport.listeningAddress
            return address.ipv4?.port ?? address.ipv6?.port ?? configuration.port
        }
    }

    /// The tree's port once bound (nil before, or when it is off).
    public var databasePort: Int? { boundDatabasePort.get() }

    /// Connections open now (ConnectionGuard).
    public var openConnections: Int { connectionGuard.openConnections }

    /// Response bytes queued on all streams, not yet written (OutputGate).
    public var queuedOutputBytes: Int { service.ledger.queuedBytes }

    /// Graceful stop: streams end with UNAVAILABLE, calls in flight finish, `run` returns.
    public func shutDown() {
        logger.info("stopping", metadata: ["event": "stopping", "open_streams": "\(streams.count)"])
        health.shutDown()
        streams.shutDown()
        server.beginGracefulShutdown()
        if let treeServer { Task { await treeServer.stop() } }
    }
}

/// Responsible for: the tree port once bound, read from any thread.
final class LockedPort: Sendable {
    private let port = LockedValueBox<Int?>(nil)
    func set(_ p: Int) { port.withLockedValue { $0 = p } }
    func get() -> Int? { port.current }
}
