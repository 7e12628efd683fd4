import EmberConcurrency
import Ember
import Foundation
import XCTest

/// The public API over a server (`FirestoreSettings.host`, issue 12): two `Firestore` instances on
/// an in-process `ember serve` see each other's writes, a writer's own snapshot is pending then
/// acknowledged, the tree stays local; a durable client restarted while the server is down sends
/// its queued writes once it is back, each applied once; hosts that are not `host:port`, an
/// unreadable trusted certificates file and a token that is no header value are refused.
final class FirestoreHostTests: XCTestCase {
    var dir: String!

    override func setUp() {
        dir = NSTemporaryDirectory() + "ember-host-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// Settings for a client of the server on `port` (plaintext), durable at `path` when given.
    func settings(port: Int, path: String? = nil) -> FirestoreSettings {
        let s = FirestoreSettings()
        s.host = "127.0.0.1:\(port)"
        s.isSSLEnabled = false
        s.path = path
        return s
    }

    /// A collection of its own (the emulator behind EMBER_REMOTE_TEST_PORT is shared by every test).
    func uniqueCollection() -> String { "host-" + UUID().uuidString.prefix(8).lowercased() }

    func testTwoClientsSeeEachOthersWritesPendingThenAcknowledgedAndTheTreeStaysLocal() throws {
        let server = try TestServer()
        defer { server.stop() }
        let a = try Firestore.open(settings: settings(port: server.port))
        let b = try Firestore.open(settings: settings(port: server.port))
        defer { a.terminate(); b.terminate() }
        let name = uniqueCollection()

        // A's own document: wait until the server answered (from cache false), then write.
        let own = Recorder<(exists: Bool, pending: Bool, fromCache: Bool)>()
        let ownReg = a.collection(name).document("SF").addSnapshotListener(includeMetadataChanges: true) { s, e in
            XCTAssertNil(e)
            if let s { own.append((s.exists, s.metadata.hasPendingWrites, s.metadata.isFromCache)) }
        }
        defer { ownReg.remove() }
        own.wait(until: { !$0.fromCache }, timeout: 10)

        let seen = Recorder<[String: Int]>()
        let bReg = b.collection(name).addSnapshotListener { s, e in
            XCTAssertNil(e)
            guard let s else { return }
            var pops: [String: Int] = [:]
            for d in s.documents { pops[d.documentID] = d.data()["pop"] as? Int }
            seen.append(pops)
        }
        defer { bReg.remove() }

        let acked = expectation(description: "A's write acknowledged")
        a.collection(name).document("SF").setData(["name": "San Francisco", "pop": 860_000]) { e in
            XCTAssertNil(e)
            acked.fulfill()
        }
        wait(for: [acked], timeout: 10)
        let states = own.wait(until: { $0.exists && !$0.pending }, timeout: 10)
        let written = states.drop { !$0.exists }
        XCTAssertEqual(written.first?.pending, true, "A's own snapshot is first the local, pending write: \(states)")
        XCTAssertEqual(written.last?.pending, false, "then acknowledged: \(states)")
        XCTAssertEqual(Array(written.map(\.pending)), [true, false], "one pending, then one acknowledged: \(states)")
        seen.wait(until: { $0["SF"] == 860_000 }, timeout: 10)

        // And the other way round: B writes, A's collection listener sees it.
        let aSeen = Recorder<Set<String>>()
        let aReg = a.collection(name).addSnapshotListener { s, _ in
            if let s { aSeen.append(Set(s.documents.map(\.documentID))) }
        }
        defer { aReg.remove() }
        b.collection(name).document("LA").setData(["name": "Los Angeles", "pop": 3_900_000])
        aSeen.wait(until: { $0 == ["SF", "LA"] }, timeout: 10)

        // The tree is not synced with the server: A's value stays in A's in-process backend.
        let tree = "host-tree-" + name
        _ = try blockingAwait { try await a.database().reference().child(tree).setValue(["n": 1]) }
        let inA = try blockingAwait { try await a.database().reference().child(tree).getData() }
        XCTAssertTrue(inA.exists())
        let inB = try blockingAwait { try await b.database().reference().child(tree).getData() }
        XCTAssertFalse(inB.exists(), "B's tree does not see A's tree write: the tree stays local")
    }

    func testDurableClientRestartedWhileTheServerIsDownSendsItsQueuedWritesOnce() throws {
        if TestServer.externalPort != nil { throw XCTSkip("stops and restarts an in-process server") }
        let serverFile = dir + "/server.ember"
        let clientFile = dir + "/client.ember"
        // A port, then no server on it.
        var server = try TestServer(path: serverFile)
        let port = server.port
        server.stop()
        let name = uniqueCollection()

        // Written while the server is unreachable, then the client closes with them queued.
        let first = try Firestore.open(settings: settings(port: port, path: clientFile))
        for i in 0..<3 {
            first.collection(name).document("counter").setData(["n": FieldValue.increment(Int64(1))], merge: true)
            first.collection(name).document("d\(i)").setData(["i": i])
        }
        let queued = try blockingAwait { try await first.collection(name).getDocuments(source: .cache) }
        XCTAssertEqual(queued.count, 4)
        XCTAssertTrue(queued.metadata.hasPendingWrites)
        first.terminate()

        // Restarted, still without a server: the writes are still queued, read from the file.
        let second = try Firestore.open(settings: settings(port: port, path: clientFile))
        defer { second.terminate() }
        let cached = try blockingAwait { try await second.collection(name).document("counter").getDocument(source: .cache) }
        XCTAssertEqual(cached.data()?["n"] as? Int, 3)
        XCTAssertTrue(cached.metadata.hasPendingWrites)

        // The server comes back on its port: the queue drains, each batch applied once.
        server = try TestServer(port: port, path: serverFile)
        defer { server.stop() }
        let drained = expectation(description: "pending writes acknowledged")
        second.waitForPendingWrites { e in
            XCTAssertNil(e)
            drained.fulfill()
        }
        wait(for: [drained], timeout: 30)

        let other = try Firestore.open(settings: settings(port: port))
        defer { other.terminate() }
        let onServer = try blockingAwait { try await other.collection(name).getDocuments(source: .server) }
        XCTAssertEqual(onServer.documents.map(\.documentID).sorted(), ["counter", "d0", "d1", "d2"])
        let counter = onServer.documents.first { $0.documentID == "counter" }
        XCTAssertEqual(counter?.data()["n"] as? Int, 3, "three increments, each applied exactly once")
        XCTAssertFalse(onServer.metadata.isFromCache)
    }

    func testHostsThatAreNotHostColonPortAndBadTLSOrTokenSettingsAreRefused() throws {
        func refusal(_ host: String, ssl: Bool = false, ca: String? = nil, token: String? = nil) -> FirestoreError? {
            let s = FirestoreSettings()
            s.host = host
            s.isSSLEnabled = ssl
            s.trustedCertificatesFile = ca
            s.authToken = token
            do {
                let db = try Firestore.open(settings: s)
                db.terminate()
                return nil
            } catch {
                return error as? FirestoreError
            }
        }
        let cases: [(String, String)] = [
            ("", "The host is empty"),
            ("127.0.0.1\u{0}:8080", "NUL character"),
            ("localhost", "no port"),
            ("127.0.0.1:", "the port must be a number in 1-65535"),
            ("127.0.0.1:0", "the port must be a number in 1-65535"),
            ("127.0.0.1:65536", "the port must be a number in 1-65535"),
            ("127.0.0.1:80a", "the port must be a number in 1-65535"),
            ("http://127.0.0.1:8080", "without a scheme or a path"),
            ("::1:8080", "IPv6 address in brackets"),
            ("[::1]", "no port"),
            ("local host:8080", "space or a control character"),
            (":8080", "no host before the port"),
        ]
        for (host, message) in cases {
            let e = refusal(host)
            XCTAssertEqual(e?.code, .invalidArgument, "host '\(host)': \(String(describing: e))")
            XCTAssertTrue(e?.message.contains(message) ?? false, "host '\(host)': \(String(describing: e?.message))")
        }
        let ca = refusal("127.0.0.1:8080", ssl: true, ca: dir + "/missing.pem")
        XCTAssertEqual(ca?.code, .invalidArgument)
        XCTAssertTrue(ca?.message.contains("Cannot read the trusted certificates file") ?? false, "\(String(describing: ca))")
        for token in ["", "a b", "tab\t", String(repeating: "x", count: 20_000)] {
            XCTAssertEqual(refusal("127.0.0.1:8080", token: token)?.code, .invalidArgument, "token '\(token.prefix(10))'")
        }
        // TLS is Firebase's default: a host alone opens with TLS and the system's roots.
        let s = FirestoreSettings()
        XCTAssertTrue(s.isSSLEnabled)
        XCTAssertNil(s.host)
        XCTAssertNil(refusal("127.0.0.1:8080", ssl: true))
        // A valid host opens at once, whether or not a server answers (writes queue meanwhile).
        XCTAssertNil(refusal("[::1]:9"))
        XCTAssertNil(refusal("localhost:9"))
    }
}

/// Collects values from Ember's event thread and waits, bounded, for them.
final class Recorder<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []

    func append(_ x: T) { lock.lock(); items.append(x); lock.unlock() }
    var all: [T] { lock.lock(); defer { lock.unlock() }; return items }

    /// Waits (at most `timeout` s) until the last value satisfies `done`; returns them all.
    @discardableResult
    func wait(until done: (T) -> Bool, timeout: Double, file: StaticString = #filePath, line: UInt = #line) -> [T] {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if let last = all.last, done(last) { return all }
            usleep(2_000)
        }
        XCTFail("timed out; values: \(all)", file: file, line: line)
        return all
    }
}

/// Runs an async call from a synchronous test (on the concurrency pool), waiting at most 30 s.
func blockingAwait<T>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = Box<Result<T, Error>>()
    let sem = DispatchSemaphore(value: 0)
    Task {
        do { box.value = .success(try await body()) } catch { box.value = .failure(error) }
        sem.signal()
    }
    guard sem.wait(timeout: .now() + 30) == .success else { throw FirestoreError(.deadlineExceeded, "no answer in 30 s") }
    return try box.value!.get()
}
