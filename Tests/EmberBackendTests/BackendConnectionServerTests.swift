import XCTest
import Dispatch
import EmberConcurrency
import EmberModel
import EmberStorage
@testable import EmberBackend

/// A client that keeps every event it hears (the commits a request's commit raises for others).
private final class Recorder: BackendClient, Sendable {
    let queue = DispatchQueue(label: "test.recorder")
    private let received = ConditionBox<[BackendEvent]>([])

    func backend(_ link: any BackendLink, didSend event: BackendEvent) {
        received.update { $0.append(event) }
    }

    /// The events heard once `n` have arrived (at most 5 s).
    func events(_ n: Int) -> [BackendEvent] {
        received.wait(until: { $0.count >= n }, deadline: Deadline(secondsFromNow: 5)) { $0 } ?? received.update { $0 }
    }
}

/// BackendConnection's request-side calls (BackendConnection+Server): the commit a server request
/// makes, waited for on the caller's thread (`commitWaiting`, `lookupWaiting`) or answered on
/// the delivery queue, with its transaction reads, and what other connections hear of it.
final class BackendConnectionServerTests: XCTestCase {
    private var backend: Backend!
    private var door: BackendConnection!
    private var watcher: Recorder!
    private var watching: BackendConnection!

    private func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
    private func set(_ k: String, _ v: Int64) -> Mutation { Mutation(key: key(k), kind: .set(MapValue(["v": .int(v)]))) }

    override func setUp() {
        backend = Backend(persistence: MemoryPersistence())
        let door = Recorder()
        self.door = backend.connect(client: door, queue: door.queue)
        watcher = Recorder()
        watching = backend.connect(client: watcher, queue: watcher.queue)
    }

    override func tearDown() {
        door.disconnect()
        watching.disconnect()
        backend.flush()
    }

    func testACommitWaitedForIsStoredReadBackAndHeardByAWatcher() throws {
        watching.listen(targetId: 1, query: Query(collection: try ResourcePath(parsing: "c")), knownKeys: [])
        XCTAssertEqual(watcher.events(1).count, 1, "the watch's first result")
        let outcome = try door.commitWaiting([set("c/a", 1), set("c/b", 2)]).get()
        XCTAssertEqual(outcome.documents[key("c/a")]?.data["v"], .int(1))
        XCTAssertEqual(outcome.documents[key("c/b")]?.updateTime, outcome.version)
        let (docs, version) = door.lookupWaiting([key("c/a"), key("c/missing")])
        XCTAssertEqual(version, outcome.version)
        XCTAssertEqual(docs.map(\.exists), [true, false])
        XCTAssertEqual(docs.first?.data["v"], .int(1))
        guard case .commit(let v, let changed, _)? = watcher.events(2).last else { return XCTFail("the watcher heard no commit") }
        XCTAssertEqual(v, outcome.version)
        XCTAssertEqual(Set(changed.map(\.key)), [key("c/a"), key("c/b")])
    }

    /// The wait runs the commit on the caller's thread (dispatch_sync): the authorizer, which runs
    /// inside the commit, sees the test's own thread.
    func testACommitWaitedForRunsOnTheCallersThread() throws {
        let caller = pthread_self()
        let sameThread = LockedValueBox<Bool?>(nil)
        _ = try door.commitWaiting([set("c/a", 1)], authorize: { _, _, _, _, _ in
            sameThread.withLockedValue { $0 = pthread_equal(pthread_self(), caller) != 0 }
            return nil
        }).get()
        XCTAssertEqual(sameThread.current, true)
    }

    func testAStaleTransactionReadAbortsAndAppliesNothing() throws {
        let first = try door.commitWaiting([set("c/a", 1)]).get()
        _ = try door.commitWaiting([set("c/a", 2)]).get()
        let r = door.commitWaiting([set("c/a", 3), set("c/new", 1)], reads: [key("c/a"): first.version])
        guard case .failure(let e) = r else { return XCTFail("a stale read must abort the commit") }
        XCTAssertEqual(e.code, .aborted)
        let (docs, _) = door.lookupWaiting([key("c/a"), key("c/new")])
        XCTAssertEqual(docs[0].data["v"], .int(2))
        XCTAssertFalse(docs[1].exists)
        // A read of a document that did not exist is 0; it still does not: the commit goes through.
        XCTAssertNoThrow(try door.commitWaiting([set("c/other", 1)], reads: [key("c/other"): 0]).get())
    }

    func testARefusedCommitWaitedForReportsTheAuthorizersError() {
        let r = door.commitWaiting([set("c/a", 1)], authorize: { _, _, _, _, _ in EmberError(.permissionDenied, "no") })
        guard case .failure(let e) = r else { return XCTFail("the authorizer refused the commit") }
        XCTAssertEqual(e.code, .permissionDenied)
        XCTAssertFalse(door.lookupWaiting([key("c/a")]).0[0].exists)
    }

    func testTheCompletionFormAnswersOnTheDeliveryQueueWithTheSameOutcome() {
        let done = ConditionBox<Result<CommitOutcome, EmberError>?>(nil)
        door.commit([set("c/a", 5)]) { r in done.update { $0 = r } }
        let r = done.wait(until: { $0 != nil }, deadline: Deadline(secondsFromNow: 5)) { $0 }
        guard case .success(let outcome)?? = r else { return XCTFail("no outcome within 5 s") }
        XCTAssertEqual(outcome.documents[key("c/a")]?.data["v"], .int(5))
    }
}
