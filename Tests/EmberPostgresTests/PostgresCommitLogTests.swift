import Dispatch
import EmberBackend
import EmberConcurrency
import EmberModel
@testable import EmberPostgres
import EmberStorage
import Foundation
import XCTest

/// Several backends (instances of `ember serve`) sharing one log on the test run's PostgreSQL:
/// every listener on every instance sees every commit once, in the log's order; transactions
/// through different instances lose no update; an instance that starts late loads the snapshot
/// and follows the log.
final class PostgresCommitLogTests: XCTestCase {
    /// The `.commit` events a connection received, in order (its listen result is not one), and
    /// whether the listen result came.
    final class Recorder: BackendClient, @unchecked Sendable {
        private let box = ConditionBox<[(version: Int64, docs: [Document])]>([])
        private let listening = ConditionBox(false)
        func backend(_ link: any BackendLink, didSend event: BackendEvent) {
            switch event {
            case .commit(let version, let docs, _): box.update { $0.append((version, docs)) }
            case .listenResult: listening.update { $0 = true }
            default: break
            }
        }
        /// Waits for the listen result: commits after it arrive as `.commit` events.
        func waitListening(timeout: Double = 30) -> Bool {
            listening.wait(until: { $0 }, deadline: Deadline(secondsFromNow: timeout)) { _ in true } ?? false
        }
        var commits: [(version: Int64, docs: [Document])] { box.update { $0 } }
        func wait(documents n: Int, timeout: Double = 30) -> Bool {
            box.wait(until: { $0.reduce(0) { $0 + $1.docs.count } >= n }, deadline: Deadline(secondsFromNow: timeout)) { _ in true } ?? false
        }
    }

    /// One instance: a memory backend following the shared log.
    struct Instance {
        let backend: Backend
        let log: PostgresCommitLog
        let store: PostgresStore
        let connection: BackendConnection
        let recorder: Recorder
        let queue = DispatchQueue(label: "test.instance")
    }

    private var instances: [Instance] = []
    private var logName = ""

    private var url: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["EMBER_TEST_POSTGRES_URL"] else {
                throw XCTSkip("EMBER_TEST_POSTGRES_URL is not set: run under Tests/scripts/with_postgres.py (make test does)")
            }
            return url
        }
    }

    override func setUp() { logName = "test-log-" + UUID().uuidString }

    override func tearDown() {
        for i in instances {
            i.log.stop()
            i.backend.flush()
            i.store.close()
        }
        instances = []
    }

    private func start(wakeUps: Bool = true) async throws -> Instance {
        let store = try await PostgresStore.open(url: try url)
        let backend = Backend(persistence: MemoryPersistence())
        let log = try await PostgresCommitLog.attach(to: backend, store: store, database: logName, wakeUps: wakeUps)
        let recorder = Recorder()
        let connection = backend.connect(client: recorder, queue: DispatchQueue(label: "test.delivery"))
        connection.listen(targetId: 1, query: Query(collection: try ResourcePath(parsing: "c")), knownKeys: [])
        XCTAssertTrue(recorder.waitListening(), "the listen result")
        let i = Instance(backend: backend, log: log, store: store, connection: connection, recorder: recorder)
        instances.append(i)
        return i
    }

    private func set(_ path: String, _ n: Int64) -> Mutation {
        Mutation(key: try! DocumentKey(parsing: path), kind: .set(MapValue(["n": .int(n)])))
    }

    func testCommitsThroughTwoInstancesReachEveryListenerOnceInOrder() async throws {
        try await commitsThroughTwoInstances(wakeUps: true)
    }

    /// The same with no NOTIFY sent or listened to: the tailers' polls alone.
    func testWithoutWakeUpsEveryCommitStillReachesEveryListenerOnceInOrder() async throws {
        try await commitsThroughTwoInstances(wakeUps: false)
    }

    private func commitsThroughTwoInstances(wakeUps: Bool) async throws {
        let a = try await start(wakeUps: wakeUps), b = try await start(wakeUps: wakeUps)
        for i in 0..<40 {
            let through = i % 2 == 0 ? a : b
            _ = try through.connection.commitWaiting([set("c/d\(i)", Int64(i))]).get()
        }
        XCTAssertTrue(a.recorder.wait(documents: 40))
        XCTAssertTrue(b.recorder.wait(documents: 40))
        // The same commits, at the same versions, in the same order, on both.
        let seenA = a.recorder.commits.map { "\($0.version) \($0.docs.map { $0.key.id })" }
        let seenB = b.recorder.commits.map { "\($0.version) \($0.docs.map { $0.key.id })" }
        XCTAssertEqual(seenA.count, 40)
        XCTAssertEqual(seenA, seenB)
        XCTAssertEqual(a.recorder.commits.map { $0.docs.first!.key.id }, (0..<40).map { "d\($0)" })
        let versions = a.recorder.commits.map { $0.version }
        XCTAssertEqual(versions, versions.sorted())
        XCTAssertEqual(Set(versions).count, 40)
        let fromNotices = a.log.status.appliedFromNotices + b.log.status.appliedFromNotices
        if wakeUps {
            XCTAssertGreaterThan(fromNotices, 0, "some commits applied from their NOTIFY's payload")
        } else {
            XCTAssertEqual(fromNotices, 0)
        }
    }

    /// Read-modify-write transactions on one counter through two instances at once: each
    /// commit expects the counter as it read it; a refused one reads again. None is lost.
    func testConcurrentIncrementsThroughTwoInstancesLoseNothing() async throws {
        let a = try await start(), b = try await start()
        let counter = try DocumentKey(parsing: "c/counter")
        _ = try a.connection.commitWaiting([set("c/counter", 0)]).get()
        let perWorker = 15, workers = 4
        let aborted = LockedValueBox(0)
        let group = DispatchGroup()
        for w in 0..<workers {
            let through = w % 2 == 0 ? a : b
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var done = 0
                while done < perWorker {
                    let (docs, _) = through.connection.lookupWaiting([counter])
                    let current = docs[0]
                    guard case .int(let n)? = current.data["n"] else { usleep(1000); continue }   // not here yet
                    let result = through.connection.commitWaiting([Mutation(key: counter, kind: .set(MapValue(["n": .int(n + 1)])))],
                                                                  reads: [counter: current.exists ? current.updateTime : 0])
                    switch result {
                    case .success: done += 1
                    case .failure(let e) where e.code == .aborted: aborted.withLockedValue { $0 += 1 }
                    case .failure(let e): XCTFail("\(e)"); return
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        let total = Int64(perWorker * workers)
        let stored = try await a.store.document(a.log.databaseId, counter)
        let final = stored.flatMap { try? ValueMessagePack.decode($0.fields) }
        XCTAssertEqual(final, .map(MapValue(["n": .int(total)])), "every increment is in PostgreSQL (\(aborted.current) retried)")
        for i in [a, b] {
            i.log.catchUpWaiting()
            let (docs, _) = i.connection.lookupWaiting([counter])
            XCTAssertEqual(docs[0].data["n"], .int(total))
        }
    }

    /// A read on one instance sees every commit acknowledged on another before it began (the
    /// read catches up with the log first), not only what the tailer has applied.
    func testAReadOnOneInstanceSeesWhatAnotherAcknowledged() async throws {
        let a = try await start(), b = try await start()
        let key = try DocumentKey(parsing: "c/fresh")
        for i in 1...20 {
            _ = try a.connection.commitWaiting([set("c/fresh", Int64(i))]).get()
            let (docs, _) = b.connection.lookupWaiting([key])
            XCTAssertEqual(docs[0].data["n"], .int(Int64(i)), "read \(i) on the other instance")
        }
    }

    func testAnInstanceStartingLateLoadsTheSnapshotThenFollows() async throws {
        let a = try await start()
        for i in 0..<5 { _ = try a.connection.commitWaiting([set("c/e\(i)", Int64(i))]).get() }
        let late = try await start()
        let (docs, _) = late.connection.lookupWaiting((0..<5).map { try! DocumentKey(parsing: "c/e\($0)") })
        XCTAssertEqual(docs.map { $0.exists }, [true, true, true, true, true])
        XCTAssertEqual(late.log.appliedPosition, a.log.appliedPosition)
        _ = try a.connection.commitWaiting([set("c/after", 9)]).get()
        XCTAssertTrue(late.recorder.wait(documents: 1), "the commit after its listen result")
        XCTAssertEqual(late.recorder.commits.last?.docs.map { $0.key.id }, ["after"])
    }

    /// An instance that stopped reading while the log was trimmed past its position starts
    /// again from a snapshot: its listener sees every difference once (changes, additions and
    /// deletions), and it follows the log again after.
    func testAnInstanceBehindTheTrimmedLogStartsAgainFromASnapshot() async throws {
        let a = try await start(), b = try await start()
        for i in 0..<4 { _ = try a.connection.commitWaiting([set("c/t\(i)", Int64(i))]).get() }
        XCTAssertTrue(b.recorder.wait(documents: 4))
        b.log.stop()   // b reads nothing more
        _ = try a.connection.commitWaiting([set("c/t0", 100)]).get()
        _ = try a.connection.commitWaiting([Mutation(key: try DocumentKey(parsing: "c/t1"), kind: .delete)]).get()
        _ = try a.connection.commitWaiting([set("c/t9", 9)]).get()
        let floor = try await a.store.trim(a.log.databaseId, before: Int64.max)
        XCTAssertEqual(floor.seq, a.log.appliedPosition, "everything trimmed")
        let before = b.recorder.commits.count
        let keys = ["t0", "t1", "t2", "t3", "t9"].map { try! DocumentKey(parsing: "c/\($0)") }
        let (docs, _) = b.connection.lookupWaiting(keys)   // the read catches up: a resync
        XCTAssertEqual(docs.map { $0.data["n"] }, [.int(100), nil, .int(2), .int(3), .int(9)])
        XCTAssertEqual(b.log.appliedPosition, a.log.appliedPosition)
        XCTAssertTrue(b.recorder.wait(documents: 4 + 3))
        let resync = b.recorder.commits.dropFirst(before)
        XCTAssertEqual(resync.count, 1, "one commit of the differences")
        XCTAssertEqual(Set(resync.first?.docs.map { "\($0.key.id) \($0.exists)" } ?? []), ["t0 true", "t1 false", "t9 true"])
        XCTAssertEqual(b.log.resumeFloor, floor.time)
        // It follows the log again.
        _ = try a.connection.commitWaiting([set("c/t2", 22)]).get()
        let (after, _) = b.connection.lookupWaiting([keys[2]])
        XCTAssertEqual(after[0].data["n"], .int(22))
    }
}
