import XCTest
import Foundation
import Dispatch
import EmberModel
import EmberStorage
@testable import EmberBackend

/// The backend's clock in a durable store: the file holds a mark at or above every version
/// issued, written once per lease rather than by every commit, and a reopened backend's versions
/// continue above every version issued before.
final class BackendClockTests: XCTestCase {
    private final class SilentClient: BackendClient, @unchecked Sendable {
        let queue = DispatchQueue(label: "test.clock.client")
        func backend(_ link: any BackendLink, didSend event: BackendEvent) {}
    }

    private func commit(_ conn: BackendConnection, _ i: Int, file: StaticString = #filePath, line: UInt = #line) -> Int64? {
        let m = Mutation(key: try! DocumentKey(parsing: "c/d\(i % 7)"), kind: .set(MapValue(["v": .int(Int64(i))])))
        guard case .acknowledged(.commit(let version, _, _)) = conn.commitNow(MutationBatch(batchId: Int64(i + 1), localWriteTime: 0, mutations: [m])) else {
            XCTFail("commit \(i) was not acknowledged", file: file, line: line)
            return nil
        }
        return version
    }

    func testTheStoredClockCoversEveryVersionAndIsWrittenOncePerLease() throws {
        let dir = NSTemporaryDirectory() + "ember-clock-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/db.ember"
        var versions: [Int64] = []
        do {
            let p = try SQLitePersistence(path: path)
            let backend = Backend(persistence: p)
            let client = SilentClient()
            let conn = backend.connect(client: client, queue: client.queue)
            var marks = Set<Int64>()
            let start = Date()
            for i in 0..<60 {
                guard let v = commit(conn, i) else { return }
                versions.append(v)
                let mark = try XCTUnwrap(p.metadata(PersistenceKey.backendVersion))
                XCTAssertGreaterThanOrEqual(mark, v, "the file's clock covers every version issued")
                marks.insert(mark)
            }
            // One mark per lease of versions, not one per commit.
            let micros = Int64(Date().timeIntervalSince(start) * 1_000_000)
            XCTAssertLessThanOrEqual(Int64(marks.count), micros / Backend.clockLease + 2, "\(marks.count) marks")
            conn.disconnect()
            backend.flush()
            p.close()
        }
        XCTAssertEqual(versions, versions.sorted())
        XCTAssertEqual(Set(versions).count, versions.count)
        let q = try SQLitePersistence(path: path)
        defer { q.close() }
        let backend = Backend(persistence: q)
        let client = SilentClient()
        let conn = backend.connect(client: client, queue: client.queue)
        defer { conn.disconnect(); backend.flush() }
        let after = try XCTUnwrap(commit(conn, 100))
        XCTAssertGreaterThan(after, versions.last!)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(q.metadata(PersistenceKey.backendVersion)), after)
    }

    /// A refused commit gives its version back: the backend hands out `lastVersion` as a read
    /// time (a listen's, a lookup's), and the file's mark covers only stored commits' versions,
    /// so a version taken by a refusal would be handed out, not covered, and issued again after
    /// a reopen (a resuming listener would skip that write).
    func testARefusedCommitGivesItsVersionBack() throws {
        let dir = NSTemporaryDirectory() + "ember-clock-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/db.ember"
        let committed: Int64
        do {
            let p = try SQLitePersistence(path: path)
            let backend = Backend(persistence: p)
            let client = SilentClient()
            let conn = backend.connect(client: client, queue: client.queue)
            committed = try XCTUnwrap(commit(conn, 0))
            let update = Mutation(key: try DocumentKey(parsing: "c/missing"),
                                  kind: .patch(MapValue(["x": .int(1)]), mask: [try FieldPath(parsing: "x")]),
                                  precondition: .exists(true))
            for i in 0..<3 {
                guard case .rejected(let e) = conn.commitNow(MutationBatch(batchId: Int64(10 + i), localWriteTime: 0, mutations: [update])) else {
                    return XCTFail("the update of a missing document was not refused")
                }
                XCTAssertEqual(e.code, .notFound)
            }
            XCTAssertEqual(backend.queue.sync { backend.lastVersion }, committed, "what a read is given is the last stored commit's version")
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(p.metadata(PersistenceKey.backendVersion)), committed)
            conn.disconnect()
            backend.flush()
            backend.storeExactClock()
            p.close()
        }
        let q = try SQLitePersistence(path: path)
        defer { q.close() }
        let backend = Backend(persistence: q)
        let client = SilentClient()
        let conn = backend.connect(client: client, queue: client.queue)
        defer { conn.disconnect(); backend.flush() }
        XCTAssertGreaterThan(try XCTUnwrap(commit(conn, 1)), committed)
    }

    func testOpeningAndClosingAgainAndAgainKeepsTheClockAtTheWallClock() throws {
        // Each clean close stores the exact last version: without it, every reopen would start a
        // lease ahead and twenty cycles would run twenty leases ahead of the wall clock.
        let dir = NSTemporaryDirectory() + "ember-clock-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var last: Int64 = 0
        for cycle in 0..<20 {
            let p = try SQLitePersistence(path: dir + "/db.ember")
            let backend = Backend(persistence: p)
            let client = SilentClient()
            let conn = backend.connect(client: client, queue: client.queue)
            guard let v = commit(conn, cycle) else { return }
            XCTAssertGreaterThan(v, last)
            last = v
            conn.disconnect()
            backend.flush()
            backend.storeExactClock()
            XCTAssertEqual(p.metadata(PersistenceKey.backendVersion), v)
            p.close()
        }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        XCTAssertLessThanOrEqual(last, now + Backend.clockLease, "the clock ran \(last - now) µs ahead")
    }
}
