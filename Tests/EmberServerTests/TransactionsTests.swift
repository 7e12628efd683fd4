import EmberModel
import EmberWire
@testable import EmberServer
import Foundation
import XCTest

/// The server's open transactions belong to their caller: another caller can neither use one
/// nor, by beginning many of its own, push one out; the total is bounded without evicting.
final class TransactionsTests: XCTestCase {
    let db = try! DatabaseName(project: "demo-ember", database: "(default)")

    static func user(_ uid: String) -> Caller {
        .user(VerifiedToken(auth: .init(uid: uid, token: MapValue()), audience: ["demo-ember"], issuer: "https://securetoken.google.com/demo-ember"))
    }

    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body(); return nil } catch let e as EmberError { return e.code } catch { return .unknown }
    }

    func testAnonymousCallersCannotEvictAUsersTransaction() throws {
        let t = Transactions(perOwner: 100, anonymousShare: 200, capacity: 1_000)
        let alice = Self.user("alice")
        let mine = try t.begin(alice, db: db, readOnly: false)
        for _ in 0..<(t.anonymousShare + 50) { _ = try t.begin(.anonymous, db: db, readOnly: false) }
        for i in 0..<20 { _ = try t.begin(Self.user("u\(i)"), db: db, readOnly: false) }
        XCTAssertNoThrow(try t.check(alice, mine, db: db))
        XCTAssertNoThrow(try t.finish(alice, mine, db: db))
        // The anonymous callers pushed out only their own oldest.
        XCTAssertEqual(t.openCount, t.anonymousShare + 20)
    }

    func testOnlyTheOwnerMayUseATransaction() throws {
        let t = Transactions()
        let alice = Self.user("alice")
        let id = try t.begin(alice, db: db, readOnly: false)
        for other in [Self.user("bob"), Caller.anonymous, Caller.admin] {
            XCTAssertEqual(code { try t.check(other, id, db: db) }, .invalidArgument)
            XCTAssertEqual(code { _ = try t.finish(other, id, db: db) }, .invalidArgument)
            XCTAssertEqual(code { try t.rollback(other, id, db: db) }, .invalidArgument)
        }
        XCTAssertNoThrow(try t.finish(alice, id, db: db))
        // Ended: rolling back again is a no-op for its owner, any other use is refused as closed.
        XCTAssertNoThrow(try t.rollback(alice, id, db: db))
        XCTAssertEqual(code { try t.check(alice, id, db: db) }, .invalidArgument)
    }

    func testAnOwnerPastItsBoundLosesItsOwnOldest() throws {
        let t = Transactions(perOwner: 3, capacity: 100)
        let bob = Self.user("bob")
        let ids = try (0..<4).map { _ in try t.begin(bob, db: db, readOnly: true) }
        XCTAssertEqual(code { try t.check(bob, ids[0], db: db) }, .invalidArgument)
        for id in ids[1...] { XCTAssertNoThrow(try t.check(bob, id, db: db)) }
    }

    func testTheTotalIsBoundedByRefusingNewOnes() throws {
        let t = Transactions(perOwner: 2, capacity: 4)
        let first = try t.begin(Self.user("a"), db: db, readOnly: false)
        _ = try t.begin(Self.user("b"), db: db, readOnly: false)
        _ = try t.begin(Self.user("c"), db: db, readOnly: false)
        _ = try t.begin(Self.user("d"), db: db, readOnly: false)
        XCTAssertEqual(code { _ = try t.begin(Self.user("e"), db: db, readOnly: false) }, .resourceExhausted)
        XCTAssertNoThrow(try t.check(Self.user("a"), first, db: db))
        // One ended makes room.
        _ = try t.finish(Self.user("a"), first, db: db)
        XCTAssertNoThrow(try t.begin(Self.user("e"), db: db, readOnly: false))
    }

    func testManyEndedTransactionsKeepTheBookkeepingSmall() throws {
        let t = Transactions(perOwner: 10, anonymousShare: 10, capacity: 100)
        let leaked = try t.begin(.anonymous, db: db, readOnly: false)
        for _ in 0..<5_000 {
            let id = try t.begin(.anonymous, db: db, readOnly: false)
            _ = try t.finish(.anonymous, id, db: db)
        }
        XCTAssertNoThrow(try t.check(.anonymous, leaked, db: db))
        XCTAssertEqual(t.openCount, 1)
    }

    /// A transaction lives at most its lifetime; when the server is full, the expired ones make
    /// room before anyone is refused.
    func testExpiredTransactionsAreRefusedAndMakeRoom() throws {
        final class Clock: @unchecked Sendable { var t = ContinuousClock.now }
        let clock = Clock()
        let t = Transactions(perOwner: 2, capacity: 2, lifetime: .seconds(270))
        t.now = { clock.t }
        let a = try t.begin(Self.user("a"), db: db, readOnly: false)
        _ = try t.begin(Self.user("b"), db: db, readOnly: false)
        XCTAssertEqual(code { _ = try t.begin(Self.user("c"), db: db, readOnly: false) }, .resourceExhausted)
        clock.t += .seconds(271)
        // Full: the two expired ones go, and c is begun.
        let c = try t.begin(Self.user("c"), db: db, readOnly: false)
        XCTAssertEqual(t.openCount, 1)
        XCTAssertEqual(code { try t.check(Self.user("a"), a, db: db) }, .invalidArgument)
        // An expired one that is used is refused and forgotten.
        clock.t += .seconds(271)
        XCTAssertEqual(code { try t.check(Self.user("c"), c, db: db) }, .invalidArgument)
        XCTAssertEqual(t.openCount, 0)
    }
}
