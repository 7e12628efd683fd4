import EmberConcurrency
import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberServer
import EmberStorage
import Foundation
import XCTest

/// An in-process `ember serve` (in memory) on a free loopback port, for the length of a test.
/// With `EMBER_REMOTE_TEST_PORT` set (a Firestore emulator already running on 127.0.0.1 there),
/// the tests that need no restart use it instead, each in a project of its own.
final class TestServer: @unchecked Sendable {
    let server: EmberServer?
    let port: Int
    /// The project the clients use (one per test against an external server: a clean database).
    let project: String
    private let serving: Task<Void, Error>?

    static var externalPort: Int? { ProcessInfo.processInfo.environment["EMBER_REMOTE_TEST_PORT"].flatMap { Int($0) } }

    /// `port` 0 picks a free port; `path` keeps the data in that SQLite file (for a restart);
    /// `configure` sets more of the server (rules, keys: always an in-process server then).
    init(port: Int = 0, path: String? = nil, configure: ((inout EmberServer.Configuration) -> Void)? = nil) throws {
        if let external = TestServer.externalPort, port == 0, path == nil, configure == nil {
            server = nil
            serving = nil
            self.port = external
            project = "demo-ember-" + UUID().uuidString.prefix(8).lowercased()
            return
        }
        var configuration = EmberServer.Configuration(host: "127.0.0.1", port: port, path: path)
        configure?(&configuration)
        let c = configuration
        let server = try blocking { try await EmberServer(configuration: c) }
        self.server = server
        serving = Task { try await server.run() }
        project = "demo-ember"
        self.port = try blocking { try await server.listeningPort }
    }

    /// `projects/P/databases/(default)/documents` of the clients' database.
    var documentsRoot: String { "projects/\(project)/databases/(default)/documents" }

    /// A client whose documents sync with this server (its tree stays in its own local backend).
    func client() throws -> (EmberClient, RemoteBackend) {
        let remote = try RemoteBackend(host: "127.0.0.1", port: port, project: project)
        let local = MemoryPersistence()
        return (EmberClient(persistence: local, backend: Backend(persistence: MemoryPersistence()), documents: remote), remote)
    }

    /// The tree's port (configured with `databasePort`), once the server listens there (10 s at
    /// most).
    func treePort() throws -> Int {
        let deadline = Date().addingTimeInterval(10)
        while server?.databasePort == nil && Date() < deadline { usleep(10_000) }
        return try XCTUnwrap(server?.databasePort)
    }

    func stop() {
        guard let server, let serving else { return }
        server.shutDown()
        _ = try? blocking { try await serving.value }
    }
}

/// Runs `body` on the concurrency pool and waits for it on this (non-pool) thread.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let sem = DispatchSemaphore(value: 0)
    let box = Box<Result<T, Error>>()
    Task {
        do { box.value = .success(try await body()) } catch { box.value = .failure(error) }
        sem.signal()
    }
    guard sem.wait(timeout: .now() + 30) == .success else { throw EmberError(.deadlineExceeded, "no answer in 30 s") }
    return try box.value!.get()
}

final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// Collects a listener's events (on the event thread) and waits, bounded, for a condition on them.
final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ListenEvent] = []

    func append(_ e: ListenEvent) { lock.lock(); events.append(e); lock.unlock() }

    var all: [ListenEvent] { lock.lock(); defer { lock.unlock() }; return events }
    var snapshots: [ViewSnapshot] { all.compactMap { if case .snapshot(let s) = $0 { return s }; return nil } }

    /// Waits (at most `timeout` s) until `done` holds for the snapshots so far; false on timeout.
    @discardableResult
    func wait(timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
              until done: ([ViewSnapshot]) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if done(snapshots) { return true }
            usleep(2_000)
        }
        XCTFail("timed out; snapshots: \(snapshots.map(describe))", file: file, line: line)
        return false
    }
}

func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
func collection(_ s: String) -> Query { Query(collection: try! ResourcePath(parsing: s)) }
func fp(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
func setM(_ k: String, _ d: [String: Value]) -> Mutation { Mutation(key: key(k), kind: .set(MapValue(d))) }
func deleteM(_ k: String) -> Mutation { Mutation(key: key(k), kind: .delete) }
/// Firestore's update(): sets the given fields, the document must exist.
func updateM(_ k: String, _ d: [String: Value]) -> Mutation {
    Mutation(key: key(k), kind: .patch(MapValue(d), mask: d.keys.sorted().map { fp($0) }), precondition: .exists(true))
}

/// "kind id" per change, and the metadata, of a snapshot.
func describe(_ s: ViewSnapshot) -> String {
    let kinds = ["added", "removed", "modified", "metadata"]
    let changes = s.changes.map { "\(kinds[$0.kind.rawValue]) \($0.document.key.id)" }.joined(separator: ",")
    return "[\(changes)] docs=\(s.documents.map { $0.key.id }) cache=\(s.isFromCache) pending=\(s.hasPendingWrites)"
}

/// Waits for a write's completion (at most 10 s); its error, nil when acknowledged.
func written(_ client: EmberClient, _ ms: [Mutation], file: StaticString = #filePath, line: UInt = #line) throws -> EmberError? {
    let sem = DispatchSemaphore(value: 0)
    let box = Box<EmberError?>()
    try client.write(ms) { e in box.value = e; sem.signal() }
    guard sem.wait(timeout: .now() + 10) == .success else {
        XCTFail("no acknowledgement in 10 s", file: file, line: line)
        return EmberError(.deadlineExceeded, "no acknowledgement")
    }
    return box.value ?? nil
}
