import ArgumentParser
import Dispatch
import EmberModel
import EmberServer
import Foundation
import Logging

/// Responsible for: the `ember` command line. `ember serve` runs the server (EmberServer) until
/// SIGTERM or SIGINT, logging one structured line per start, stop and error on stderr.
/// (The entry point is main.swift.)
struct Ember: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ember",
        abstract: "Ember, an embeddable realtime document store.",
        subcommands: [Serve.self])
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store over the Cloud Firestore v1 gRPC API.",
        discussion: """
            Any Firestore client works against it as against the Firestore emulator:
              ember serve --path data.ember --port 8080
              FIRESTORE_EMULATOR_HOST=127.0.0.1:8080 python app.py
            Every project and database id is accepted; each database is its own namespace.
            With --rules, Firestore security rules decide every call, for the caller its
            `authorization: Bearer <ID token>` names (HS256 with --jwt-secret-file, RS256/ES256
            with --jwks; the --admin-token-file value is the admin, whom rules do not bind):
              ember serve --path data.ember --host 0.0.0.0 --rules firestore.rules \
                --jwks keys.json --tls-cert cert.pem --tls-key key.pem
            A non-loopback --host needs --rules, and TLS unless --insecure.
            SIGTERM or SIGINT stop it gracefully (open streams end with UNAVAILABLE).
            """)

    @Option(help: "The SQLite file that holds the data (created if missing). Durable by default.")
    var path: String = "data.ember"

    @Flag(help: "Keep the data in memory only (nothing survives a restart); --path is ignored.")
    var memory = false

    @Option(help: "Keep the documents on this PostgreSQL (postgresql://user@host:port/database), shared by every instance started on it; --path is then not used (the tree stays in each instance's memory).")
    var postgres: String?

    @Option(help: "With --postgres: seconds the shared change log keeps a commit (a listen resumed from an older token gets a reset and the whole result).")
    var logRetention: Double = 3600

    @Option(help: "The address to listen on (a non-loopback one needs --rules, and TLS unless --insecure).")
    var host: String = "127.0.0.1"

    @Option(help: "The TCP port (0 picks a free one, printed in the start line).")
    var port: Int = 8080

    @Option(help: "The largest request accepted, in bytes.")
    var maxRequestBytes: Int = 16 << 20

    @Option(help: "The most concurrent streams (calls) on one client connection.")
    var maxConcurrentStreams: Int = 10_000

    @Option(help: "The tree's HTTP/1.1 port (the Realtime Database REST API; 0 picks one, printed in the start line).")
    var databasePort: Int = 9000

    @Flag(help: "Do not serve the tree (no --database-port).")
    var noDatabase = false

    @Option(help: "The tree namespace of a request that names none (no ns= and no namespace in its Host).")
    var databaseNamespace: String = "ember"

    @Option(help: "Realtime Database security rules (JSON with comments) for every tree namespace without its own (PUT /.settings/rules.json). Without it the tree is open on a loopback server without --rules, else locked to the admin; a non-loopback --host needs it.")
    var databaseRules: String?

    @Option(help: "The most connections open at once; past it a new one is closed and logged (default: the descriptor limit less a reserve).")
    var maxConnections: Int?

    @Option(help: "Seconds an accepted connection may take to send the HTTP/2 preface before it is closed.")
    var handshakeTimeout: Double = 10

    @Option(help: "Seconds a connection with no call stays open before it is closed.")
    var idleTimeout: Double = 300

    @Option(help: "Response bytes a stream may keep queued while its client does not read.")
    var maxQueuedOutput: Int = 16 << 20

    @Option(help: "Seconds a stream may stay over --max-queued-output with no write completing before it ends with RESOURCE_EXHAUSTED.")
    var stalledOutputGrace: Double = 10

    @Option(help: "A Firestore security rules file deciding every call (without it, everything is allowed).")
    var rules: String?

    @Option(help: "A file holding the HS256 secret ID tokens may be signed with (at least 16 bytes).")
    var jwtSecretFile: String?

    @Option(help: "A JSON Web Key Set file of the RS256/ES256 public keys ID tokens may be signed with.")
    var jwks: String?

    @Option(help: "A file holding the admin's bearer token (at least 16 bytes): rules do not bind the admin.")
    var adminTokenFile: String?

    @Option(help: "The issuer (iss) ID tokens must name; {project} is the request's project id.")
    var tokenIssuer: String = "https://securetoken.google.com/{project}"

    @Option(help: "The TLS certificate chain (PEM).")
    var tlsCert: String?

    @Option(help: "The TLS private key (PEM).")
    var tlsKey: String?

    @Flag(help: "Allow plaintext on a non-loopback --host.")
    var insecure = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var h = KeyValueLogHandler(label: label)
            h.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return h
        }
        let logger = Logger(label: "ember.server")
        // The store's errors are log lines like every other (not the library's bare stderr line).
        StorageErrorLog.setHandler { message in
            logger.error("storage error", metadata: ["event": "storage_error", "error": "\(message)"])
        }
        let server: EmberServer
        do {
            var c = EmberServer.Configuration(host: host, port: port, path: memory ? nil : path,
                                              maxRequestBytes: maxRequestBytes, maxConcurrentStreams: maxConcurrentStreams)
            c.rules = try rules.map { try Serve.read($0, "rules file") }
            c.tokenSecret = try jwtSecretFile.map { Array(try Serve.read($0, "JWT secret file").trimmingCharacters(in: .whitespacesAndNewlines).utf8) }
            c.jwks = try jwks.map { try Serve.read($0, "JWKS file") }
            c.adminToken = try adminTokenFile.map { try Serve.read($0, "admin token file").trimmingCharacters(in: .whitespacesAndNewlines) }
            c.tokenIssuer = tokenIssuer
            c.postgres = postgres
            c.logRetention = logRetention
            c.tlsCertificatePath = tlsCert
            c.tlsKeyPath = tlsKey
            c.insecure = insecure
            c.databasePort = noDatabase ? nil : databasePort
            c.defaultNamespace = databaseNamespace
            c.databaseRules = try databaseRules.map { try Serve.read($0, "tree rules file") }
            c.maxConnections = try maxConnections.map { n in
                guard n > 0 else { throw EmberError.invalidArgument("--max-connections must be positive, got \(n)") }
                return n
            }
            c.handshakeTimeout = try Serve.seconds(handshakeTimeout, "--handshake-timeout")
            c.idleTimeout = try Serve.seconds(idleTimeout, "--idle-timeout")
            guard maxQueuedOutput > 0 else { throw EmberError.invalidArgument("--max-queued-output must be positive, got \(maxQueuedOutput)") }
            c.maxQueuedOutputBytes = maxQueuedOutput
            c.stalledOutputGrace = try Serve.seconds(stalledOutputGrace, "--stalled-output-grace")
            server = try await EmberServer(configuration: c, logger: logger)
        } catch let e as EmberError {
            logger.error("cannot start", metadata: ["event": "error", "error": "\(e.message)"])
            throw ExitCode(2)
        }
        // A closed stderr pipe must not kill the server (log lines are then lost).
        signal(SIGPIPE, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let sources = [SIGTERM, SIGINT].map { sig in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { server.shutDown() }
            s.resume()
            return s
        }
        defer { sources.forEach { $0.cancel() } }
        do {
            try await server.run()
        } catch {
            throw ExitCode(1)
        }
    }
}

extension Serve {
    /// A positive, finite number of seconds as a Duration, or INVALID_ARGUMENT naming the option.
    static func seconds(_ s: Double, _ option: String) throws -> Duration {
        guard s.isFinite, s > 0, s <= 86_400 * 365 else { throw EmberError.invalidArgument("\(option) must be a number of seconds above 0, got \(s)") }
        return .milliseconds(Int64((s * 1000).rounded(.up)))
    }

    /// A file's text, or INVALID_ARGUMENT naming it.
    static func read(_ path: String, _ what: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw EmberError.invalidArgument("Cannot read the \(what) '\(path)': \(error.localizedDescription)")
        }
    }
}

/// Responsible for: one log line per event, `time level label key=value ...`, on stderr.
struct KeyValueLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let m = event.metadata { all.merge(m) { $1 } }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\(KeyValueLogHandler.quote("\($0.value)"))" }
        let time = ISO8601DateFormatter().string(from: Date())
        let line = ([time, "level=\(event.level)", "logger=\(label)", "msg=\(KeyValueLogHandler.quote("\(event.message)"))"] + fields).joined(separator: " ") + "\n"
        KeyValueLogHandler.writeToStandardError(line)
    }

    /// Writes `line` to fd 2 whole, retrying short writes; a failing stderr (a full or broken
    /// disk under the log file, a closed pipe) loses the line instead of stopping the server.
    static func writeToStandardError(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    static func quote(_ s: String) -> String {
        s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : s
    }
}
