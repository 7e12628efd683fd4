import EmberModel
@testable import EmberPostgres
import Foundation
import XCTest

/// `PostgresStore` on a real PostgreSQL: the one a test run starts (`Tests/scripts/with_postgres.py`
/// sets `EMBER_TEST_POSTGRES_URL`; `make test` runs the Swift tests under it). Each test uses
/// databases (log heads) of its own names, so tests share the schema but not their logs.
final class PostgresStoreTests: XCTestCase {
    private var store: PostgresStore!

    private var url: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["EMBER_TEST_POSTGRES_URL"] else {
                throw XCTSkip("EMBER_TEST_POSTGRES_URL is not set: run under Tests/scripts/with_postgres.py (make test does)")
            }
            return url
        }
    }

    override func setUp() async throws {
        store = try await PostgresStore.open(url: try url)
    }

    override func tearDown() { store?.close() }

    private func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
    private func name() -> String { "projects/t/databases/" + UUID().uuidString }
    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func testOpeningMigratesOnceAndAgainIsANoOp() async throws {
        let again = try await PostgresStore.open(url: try url)
        again.close()
        let db = try await store.database(named: name())
        XCTAssertEqual(db.seq, 0)
        let same = try await store.database(named: "projects/t/databases/fixed")
        let twice = try await store.database(named: "projects/t/databases/fixed")
        XCTAssertEqual(same.db, twice.db)
        XCTAssertEqual(same.epoch, twice.epoch, "a database keeps its epoch")
    }

    func testACommitIsStoredAtTheNextPositionAndLogged() async throws {
        let db = try await store.database(named: name()).db
        let first = try await store.commit(db, [PostgresWrite(key: key("c/a"), fields: bytes("a1"), expect: .absent),
                                                PostgresWrite(key: key("c/b"), fields: bytes("b1"))])
        XCTAssertEqual(first.seq, 1)
        let second = try await store.commit(db, [PostgresWrite(key: key("c/a"), fields: bytes("a2"), expect: .updateTime(first.commitTime)),
                                                 PostgresWrite(key: key("c/b"), fields: nil, expect: .exists)])
        XCTAssertEqual(second.seq, 2)
        XCTAssertGreaterThan(second.commitTime, first.commitTime)
        let a = try await store.document(db, key("c/a"))
        XCTAssertEqual(a?.fields, bytes("a2"))
        XCTAssertEqual(a?.updateSeq, 2)
        XCTAssertEqual(a?.createTime, first.commitTime, "an update keeps the create time")
        XCTAssertEqual(a?.updateTime, second.commitTime)
        let b = try await store.document(db, key("c/b"))
        XCTAssertNil(b, "deleted")
        let v101 = try await store.documents(db, in: ResourcePath(parsing: "c")).map { $0.key.id }
        XCTAssertEqual(v101, ["a"])
        let log = try await store.changes(db, after: 0)
        XCTAssertEqual(log.map { "\($0.seq).\($0.index) \($0.key.id) \($0.fields.map { String(decoding: $0, as: UTF8.self) } ?? "deleted")" },
                       ["1.1 a a1", "1.2 b b1", "2.1 a a2", "2.2 b deleted"])
        let v102 = try await store.changes(db, after: 1).map { $0.seq }
        XCTAssertEqual(v102, [2, 2])
        let head = try await store.head(db)
        XCTAssertEqual(head.seq, 2)
        XCTAssertEqual(head.commitTime, second.commitTime)
    }

    func testAnExpectationNotMetRollsTheWholeCommitBack() async throws {
        let db = try await store.database(named: name()).db
        _ = try await store.commit(db, [PostgresWrite(key: key("c/a"), fields: bytes("a1"))])
        for expect: PostgresWrite.Expectation in [.absent, .updateTime(7)] {
            do {
                _ = try await store.commit(db, [PostgresWrite(key: key("c/x"), fields: bytes("x")),
                                                PostgresWrite(key: key("c/a"), fields: bytes("a2"), expect: expect)])
                XCTFail("expected ABORTED for \(expect)")
            } catch let e as EmberError {
                XCTAssertEqual(e.code, .aborted, "\(e)")
            }
        }
        do {
            _ = try await store.commit(db, [PostgresWrite(key: key("c/none"), fields: nil, expect: .exists)])
            XCTFail("expected ABORTED")
        } catch let e as EmberError {
            XCTAssertEqual(e.code, .aborted)
        }
        let v103 = try await store.document(db, key("c/x"))
        XCTAssertNil(v103, "nothing of a refused commit stays")
        let v104 = try await store.head(db).seq
        XCTAssertEqual(v104, 1, "the position is not taken")
        let next = try await store.commit(db, [PostgresWrite(key: key("c/y"), fields: bytes("y"))])
        XCTAssertEqual(next.seq, 2, "no hole")
        // A check only: refused when the document changed, else nothing written nor logged for it.
        let a = try await store.document(db, key("c/a"))
        do {
            _ = try await store.commit(db, [.check(key("c/a"), .updateTime(1)), PostgresWrite(key: key("c/z"), fields: bytes("z"))])
            XCTFail("expected ABORTED")
        } catch let e as EmberError {
            XCTAssertEqual(e.code, .aborted)
        }
        let checked = try await store.commit(db, [.check(key("c/a"), .updateTime(a!.updateTime)), PostgresWrite(key: key("c/z"), fields: bytes("z"))])
        let logged = try await store.changes(db, after: next.seq)
        XCTAssertEqual(logged.map { "\($0.seq) \($0.key.id)" }, ["\(checked.seq) z"])
        let unchanged = try await store.document(db, key("c/a"))
        XCTAssertEqual(unchanged, a)
    }

    /// Committers on several connections, through two stores (two instances), while a tailer
    /// follows the log: the positions are 1...N with no hole, commit times increase with them, and
    /// the tailer sees every commit once, in order, never one behind a position it already read.
    func testConcurrentCommittersLeaveNoHoleAndATailerMissesNothing() async throws {
        let other = try await PostgresStore.open(url: try url)
        defer { other.close() }
        let name = name()
        let db = try await store.database(named: name).db
        let stores = [store!, other]
        let committers = 8, each = 40
        let tailed = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for c in 0..<committers {
                group.addTask {
                    for i in 0..<each {
                        _ = try await stores[c % 2].commit(db, [PostgresWrite(key: try DocumentKey(parsing: "c/w\(c)-\(i)"), fields: [UInt8(i)])])
                    }
                    return []
                }
            }
            let store = self.store!
            group.addTask {
                var seen: [Int64] = []
                var last: Int64 = 0
                let deadline = Date().addingTimeInterval(60)
                while last < Int64(committers * each) && Date() < deadline {
                    let batch = try await store.changes(db, after: last, limit: 7)
                    for ch in batch where ch.seq != last { seen.append(ch.seq); last = ch.seq }
                    if batch.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
                }
                return seen
            }
            var seen: [Int64] = []
            for try await s in group where !s.isEmpty { seen = s }
            return seen
        }
        let total = Int64(committers * each)
        XCTAssertEqual(tailed, Array(1...total), "the tailer saw every position once, in order")
        let log = try await other.changes(db, after: 0, limit: 10_000)
        XCTAssertEqual(log.map { $0.seq }, Array(1...total))
        XCTAssertEqual(zip(log, log.dropFirst()).filter { $0.0.commitTime >= $0.1.commitTime }.count, 0,
                       "commit times increase with positions")
        let v105 = try await store.head(db).seq
        XCTAssertEqual(v105, total)
    }

    /// A writer's commit time must be after the last commit's; a snapshot reads every document
    /// with the head it is current at.
    func testAWritersTimeAndASnapshot() async throws {
        let db = try await store.database(named: name()).db
        let first = try await store.commit(db, [PostgresWrite(key: key("c/a"), fields: bytes("a"))], at: 5_000)
        XCTAssertEqual(first.commitTime, 5_000)
        do {
            _ = try await store.commit(db, [PostgresWrite(key: key("c/b"), fields: bytes("b"))], at: 5_000)
            XCTFail("expected ABORTED")
        } catch let e as EmberError {
            XCTAssertEqual(e.code, .aborted)
        }
        let later = try await store.commit(db, [PostgresWrite(key: key("c/b"), fields: bytes("b"))])
        XCTAssertGreaterThan(later.commitTime, 5_000)
        let snap = try await store.snapshot(db)
        XCTAssertEqual(snap.head.seq, 2)
        XCTAssertEqual(Set(snap.documents.map { "\($0.key) \($0.updateSeq)" }), ["c/a 1", "c/b 2"])
        let log = try await store.changes(db, after: 0)
        XCTAssertEqual(log.map { $0.createTime }, [5_000, later.commitTime])
    }

    func testTheTailNeverSplitsACommit() async throws {
        let db = try await store.database(named: name()).db
        let writes = (0..<5).map { PostgresWrite(key: key("c/d\($0)"), fields: [UInt8($0)]) }
        _ = try await store.commit(db, writes)
        _ = try await store.commit(db, [PostgresWrite(key: key("c/e"), fields: [1])])
        let v106 = try await store.changes(db, after: 0, limit: 2).count
        XCTAssertEqual(v106, 5, "the first commit whole")
        let v107 = try await store.changes(db, after: 1, limit: 2).map { $0.seq }
        XCTAssertEqual(v107, [2])
        let v108 = try await store.changes(db, after: 2, limit: 2)
        XCTAssertEqual(v108, [])
    }

    /// Trimming removes whole commits made before a time and moves the floor; a reader behind
    /// the floor is told so (it must start again from a snapshot), one at or past it is not.
    func testTrimmingRemovesWholeCommitsAndMovesTheFloor() async throws {
        let db = try await store.database(named: name()).db
        var positions: [CommitPosition] = []
        for i in 0..<4 {
            positions.append(try await store.commit(db, [PostgresWrite(key: key("c/a\(i)"), fields: [1]), PostgresWrite(key: key("c/b\(i)"), fields: [2])]))
        }
        let floor = try await store.trim(db, before: positions[2].commitTime)
        XCTAssertEqual(floor.seq, positions[1].seq)
        XCTAssertEqual(floor.time, positions[1].commitTime)
        let head = try await store.head(db)
        XCTAssertEqual(head.floorSeq, positions[1].seq)
        XCTAssertEqual(head.floorTime, positions[1].commitTime)
        let behind = try await store.tail(db, after: 0)
        XCTAssertTrue(behind.behindFloor)
        let atFloor = try await store.tail(db, after: positions[1].seq)
        XCTAssertFalse(atFloor.behindFloor)
        XCTAssertEqual(atFloor.changes.map { $0.seq }, [3, 3, 4, 4].map { positions[0].seq + Int64($0) - 1 })
        // Trimming again before the same time changes nothing; the documents stay.
        let again = try await store.trim(db, before: positions[2].commitTime)
        XCTAssertEqual(again.seq, floor.seq)
        let kept = try await store.documents(db, in: try ResourcePath(parsing: "c"))
        XCTAssertEqual(kept.count, 8)
    }

    func testBadURLsAndAnUnreachableServer() async throws {
        for bad in ["mysql://u@h/db", "postgresql://h/db", "postgresql://u@h/", "postgresql://u@h/db?sslmode=maybe", "not a url"] {
            do {
                _ = try await PostgresStore.open(url: bad)
                XCTFail("expected invalidArgument for \(bad)")
            } catch let e as EmberError {
                XCTAssertEqual(e.code, .invalidArgument, "\(bad): \(e)")
            }
        }
        do {
            _ = try await PostgresStore.open(url: "postgresql://ember@127.0.0.1:9/ember", connectTimeout: 1, operationTimeout: 1)
            XCTFail("expected UNAVAILABLE")
        } catch let e as EmberError {
            XCTAssertEqual(e.code, .unavailable, "\(e)")
        }
    }

    func testADatabaseWithANewerSchemaIsRefused() async throws {
        let base = try url
        let fresh = "ember_newer_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await PostgresStore.open(url: base)
        defer { admin.close() }
        try await admin.execute("CREATE DATABASE \(fresh)")
        let freshURL = String(base[..<base.lastIndex(of: "/")!]) + "/" + fresh
        let first = try await PostgresStore.open(url: freshURL)
        try await first.execute("UPDATE ember_meta SET value = '99' WHERE key = 'schema_version'")
        first.close()
        do {
            _ = try await PostgresStore.open(url: freshURL)
            XCTFail("expected failedPrecondition")
        } catch let e as EmberError {
            XCTAssertEqual(e.code, .failedPrecondition, "\(e)")
        }
    }
}
