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
    private func commit(_ conn: BackendConnection, _ i: Int, file: StaticString = #filePath, line: UInt = #line) -> Int64? {
        let m = Mutation(key: try! DocumentKey(parsing: "c/d\(i % 7)"), kind: .set(MapValue(["v": .int(Int64(i))])))
        guard case .acknowledged(.commit(let version, _, _)) = conn.commitNow(MutationBatch(batchId: Int64(i + 1), localWriteTime: 0, mutations: [m])) else {
            XCTFail("commit \(i) was not acknowledged", file: file, line: line)
            return nil
        }
        return version
    }

    func testTheStoredClockCoversEveryVersionAndIsWrittenOncePerLease() throws {
        let dir = try TemporaryDirectory("clock")
        var versions: [Int64] = []
        do {
            let db = try DurableBackend(path: dir.database)
            let p = db.persistence, conn = db.connection
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
            db.close(storingExactClock: false)
        }
        XCTAssertEqual(versions, versions.sorted())
        XCTAssertEqual(Set(versions).count, versions.count)
        let db = try DurableBackend(path: dir.database)
        defer { db.close(storingExactClock: false) }
        let after = try XCTUnwrap(commit(db.connection, 100))
        XCTAssertGreaterThan(after, versions.last!)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(db.persistence.metadata(PersistenceKey.backendVersion)), after)
    }

    /// A refused commit gives its version back: the backend hands out `lastVersion` as a read
    /// time (a listen's, a lookup's), and the file's mark covers only stored commits' versions,
    /// so a version taken by a refusal would be handed out, not covered, and issued again after
    /// a reopen (a resuming listener would skip that write).
    func testARefusedCommitGivesItsVersionBack() throws {
        let dir = try TemporaryDirectory("clock")
        let committed: Int64
        do {
            let db = try DurableBackend(path: dir.database)
            let backend = db.backend, conn = db.connection
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
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(db.persistence.metadata(PersistenceKey.backendVersion)), committed)
            db.close(storingExactClock: true)
        }
        let db = try DurableBackend(path: dir.database)
        defer { db.close(storingExactClock: false) }
        XCTAssertGreaterThan(try XCTUnwrap(commit(db.connection, 1)), committed)
    }

    func testOpeningAndClosingAgainAndAgainKeepsTheClockAtTheWallClock() throws {
        // Each clean close stores the exact last version: without it, every reopen would start a
        // lease ahead and twenty cycles would run twenty leases ahead of the wall clock.
        let dir = try TemporaryDirectory("clock")
        var last: Int64 = 0
        for cycle in 0..<20 {
            let db = try DurableBackend(path: dir.database)
            guard let v = commit(db.connection, cycle) else { return }
            XCTAssertGreaterThan(v, last)
            last = v
            db.connection.disconnect()
            db.backend.flush()
            db.backend.storeExactClock()
            XCTAssertEqual(db.persistence.metadata(PersistenceKey.backendVersion), v)
            db.persistence.close()
        }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        XCTAssertLessThanOrEqual(last, now + Backend.clockLease, "the clock ran \(last - now) µs ahead")
    }
}
