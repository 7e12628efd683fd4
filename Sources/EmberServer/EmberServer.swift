import EmberBackend
import EmberModel
import EmberStorage
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging

/// Responsible for: `ember serve`: one backend (durable in one SQLite file, or in memory) behind
/// the Cloud Firestore v1 gRPC service, on a loopback address until authentication exists. It
/// runs until `shutDown()` (SIGTERM/SIGINT in the command line): new calls are refused, open
/// streams end with UNAVAILABLE, calls in flight finish (connections still open `shutdownGrace`
/// after the GOAWAY are closed, which ends their calls), then the file closes. A commit is
/// acknowledged only once it is in the file, so a kill -9 loses nothing acknowledged.
///
///     let server = try EmberServer(configuration: .init(host: "127.0.0.1", port: 8080, path: "data.ember"))
///     try await server.run()
public final class EmberServer: @unchecked Sendable {
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

        public init(host: String = "127.0.0.1", port: Int = 8080, path: String? = nil,
                    maxRequestBytes: Int = 16 << 20, maxConcurrentStreams: Int = 10_000,
                    shutdownGrace: Duration = .seconds(10)) {
            self.host = host
            self.port = port
            self.path = path
            self.maxRequestBytes = maxRequestBytes
            self.maxConcurrentStreams = maxConcurrentStreams
            self.shutdownGrace = shutdownGrace
        }
    }

    public let configuration: Configuration
    let logger: Logger
    private let persistence: Persistence
    private let door: BackendDoor
    private let streams = StreamRegistry()
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    private let transport: HTTP2ServerTransport.Posix

    /// Opens the store. Refuses a host that is not loopback (nothing authenticates callers yet).
    public init(configuration: Configuration, logger: Logger = Logger(label: "ember.server")) throws {
        guard EmberServer.isLoopback(configuration.host) else {
            throw EmberError.invalidArgument("Refusing to listen on '\(configuration.host)': until authentication exists, ember serve listens on a loopback address only (127.0.0.1, ::1 or localhost)")
        }
        guard (0...65535).contains(configuration.port) else {
            throw EmberError.invalidArgument("Invalid port \(configuration.port): use 0-65535 (0 picks a free port)")
        }
        self.configuration = configuration
        self.logger = logger
        if let path = configuration.path {
            persistence = try SQLitePersistence(path: path)
        } else {
            persistence = MemoryPersistence()
        }
        door = BackendDoor(backend: Backend(persistence: persistence))
        let service = FirestoreService(door: door, streams: streams)
        let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
        let address: GRPCNIOTransportCore.SocketAddress = host.contains(":") ? .ipv6(host: host, port: configuration.port) : .ipv4(host: host, port: configuration.port)
        transport = HTTP2ServerTransport.Posix(
            address: address, transportSecurity: .plaintext,
            config: .defaults { c in
                c.rpc.maxRequestPayloadSize = configuration.maxRequestBytes
                c.http2.maxConcurrentStreams = configuration.maxConcurrentStreams
                // A connection still open this long after the shutdown's GOAWAY is closed: a call
                // whose client stopped reading (flow control) would otherwise hold it forever.
                c.connection.maxGraceTime = configuration.shutdownGrace
            })
        server = GRPCServer(transport: transport, services: [service])
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Serves until `shutDown()`; then closes the store.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.server.serve() }
            group.addTask {
                if let port = try? await self.listeningPort {
                    self.logger.info("started", metadata: ["event": "start", "host": "\(self.configuration.host)", "port": "\(port)",
                                                          "store": "\(self.configuration.path ?? ":memory:")"])
                }
            }
            do {
                try await group.waitForAll()
            } catch {
                logger.error("stopped on error", metadata: ["event": "error", "error": "\(error)"])
                door.close()
                persistence.close()
                throw error
            }
        }
        door.backend.flush()
        door.close()
        persistence.close()
        logger.info("stopped", metadata: ["event": "stop"])
    }

    /// The port bound (the one asked for, or the one picked for port 0); waits for the bind.
    public var listeningPort: Int {
        get async throws {
            let address = try await transport.listeningAddress
            return address.ipv4?.port ?? address.ipv6?.port ?? configuration.port
        }
    }

    /// Graceful stop: streams end with UNAVAILABLE, calls in flight finish, `run` returns.
    public func shutDown() {
        logger.info("stopping", metadata: ["event": "stopping", "open_streams": "\(streams.count)"])
        streams.shutDown()
        server.beginGracefulShutdown()
    }
}
