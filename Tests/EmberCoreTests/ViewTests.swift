// Tests of View: the merged result of one query and the exact changes between its snapshots
// (docs/semantics.md 8, 10, 11), driven directly with documents, plus a seeded random walk whose
// every snapshot must replay exactly.
import XCTest
import EmberModel
@testable import EmberCore

final class ViewTests: XCTestCase {
    private func take(_ v: View, fromCache: Bool = false) -> ViewSnapshot? { v.takeSnapshot(fromCache: fromCache) }

    func testFirstSnapshotIsEveryDocumentAddedInQueryOrder() {
        let v = View(query: ordered("c"))
        v.reset([doc("c/x", n(3)), doc("c/y", n(1)), doc("c/z", n(2))])
        let s = take(v, fromCache: true)!
        XCTAssertEqual(summary(s), ["added y -1 0", "added z -1 1", "added x -1 2"])
        XCTAssertEqual(ids(s), ["y", "z", "x"])
        XCTAssertTrue(s.isFromCache)
        XCTAssertFalse(s.hasPendingWrites)
    }

    /// A one-shot read's snapshot is exactly a new view's first snapshot: documents, changes and
    /// their indexes, pending writes, sync state; with and without limits (first and last).
    func testOneShotSnapshotEqualsANewViewsFirst() throws {
        for round in 0..<200 {
            let count = Int.random(in: 0..<30)
            let docs = (0..<count).map { i in doc("c/d\(i)", n(Int64.random(in: 0..<8)), local: Int.random(in: 0..<5) == 0) }.shuffled()
            var q = ordered("c", descending: Bool.random())
            switch Int.random(in: 0..<3) {
            case 0: q = try q.limit(Int.random(in: 1..<10), type: .first)
            case 1: q = try q.limit(Int.random(in: 1..<10), type: .last)
            default: break
            }
            for fromCache in [true, false] {
                let v = View(query: q)
                v.reset(docs)
                let live = take(v, fromCache: fromCache)!
                let once = View.snapshot(of: q, docs, fromCache: fromCache, readTime: 0)
                XCTAssertEqual(summary(once), summary(live), "round \(round)")
                XCTAssertEqual(ids(once), ids(live), "round \(round)")
                XCTAssertEqual(once.hasPendingWrites, live.hasPendingWrites, "round \(round)")
                XCTAssertEqual(once.syncStateChanged, live.syncStateChanged, "round \(round)")
                XCTAssertEqual(once.isFromCache, live.isFromCache)
            }
        }
    }

    func testEmptyFirstSnapshotIsTakenOnceThenOnlyChangesAreSnapshots() {
        let v = View(query: collection("c"))
        v.reset([])
        let first = take(v, fromCache: true)!
        XCTAssertEqual(first.documents.count, 0)
        XCTAssertNil(take(v, fromCache: true), "nothing changed")
        let synced = take(v, fromCache: false)!
        XCTAssertEqual(summary(synced), [])
        XCTAssertTrue(synced.syncStateChanged)
        XCTAssertNil(take(v, fromCache: false))
        v.update(key("c/gone"), nil)                       // not in the view: nothing to say
        v.update(key("c/gone"), .missing(key("c/gone"), version: 3))
        XCTAssertNil(take(v, fromCache: false))
    }

    func testModifyMovesWithOldAndNewIndex() {
        let v = View(query: ordered("c"))
        v.reset([doc("c/a", n(1)), doc("c/b", n(2)), doc("c/c", n(3))])
        _ = take(v)
        v.update(key("c/a"), doc("c/a", n(5), local: true))
        let s = take(v)!
        XCTAssertEqual(summary(s), ["modified a 0 2"])
        XCTAssertTrue(s.hasPendingWrites)
        XCTAssertEqual(ids(s), ["b", "c", "a"])
    }

    func testDocumentsLeavingAndEnteringTheFilter() {
        let q = try! ordered("c").filter(.field(FieldFilter(field: fp("n"), op: .lessThan, value: .int(10))))
        let v = View(query: q)
        v.reset([doc("c/a", n(1)), doc("c/b", n(2))])
        _ = take(v)
        v.update(key("c/a"), doc("c/a", n(11)))          // leaves
        v.update(key("c/z"), doc("c/z", n(0)))           // enters
        v.update(key("c/y"), doc("c/y", n(12)))          // never matches
        let s = take(v)!
        XCTAssertEqual(summary(s), ["removed a 0 -1", "added z -1 0"])
        XCTAssertEqual(ids(s), ["z", "b"])
    }

    /// The example of docs/semantics.md 8: removed, added, modified, each in query order, indexes
    /// computed step by step.
    func testBatchOfChangesIsOrderedAndIndexedStepByStep() {
        let v = View(query: ordered("c"))
        let start = ["a", "b", "c", "d", "e"].enumerated().map { doc("c/\($1)", n(Int64($0 + 1))) }
        v.reset(start)
        let first = take(v)!
        v.update(key("c/d"), doc("c/d", n(0)))                     // modified, moves to the front
        v.update(key("c/b"), .missing(key("c/b"), version: 2))     // removed
        v.update(key("c/f"), doc("c/f", n(6)))                     // added at the end
        v.update(key("c/a"), doc("c/a", ["n": .int(1), "x": .bool(true)]))  // modified in place
        v.update(key("c/g"), doc("c/g", n(2)))                     // added in b's old place
        let s = take(v)!
        // [a b c d e] -b-> [a c d e] +g-> [a g c d e] +f-> [a g c d e f] ~d-> [d a g c e f] ~a-> [d a g c e f]
        XCTAssertEqual(summary(s), ["removed b 1 -1", "added g -1 1", "added f -1 5", "modified d 3 0", "modified a 1 1"])
        XCTAssertEqual(ids(s), ["d", "a", "g", "c", "e", "f"])
        assertReplays([.snapshot(first), .snapshot(s)], includeMetadata: true)
    }

    func testMetadataOnlyChange() {
        let v = View(query: ordered("c"))
        v.reset([doc("c/a", n(1), local: true), doc("c/b", n(2))])
        let first = take(v)!
        XCTAssertTrue(first.hasPendingWrites)
        v.update(key("c/a"), doc("c/a", n(1), version: 9))     // acknowledged: same data
        let s = take(v)!
        XCTAssertEqual(summary(s), ["metadata a 0 0"])
        XCTAssertFalse(s.hasPendingWrites)
        XCTAssertEqual(summary(s.withoutMetadataChanges()), [])
        v.update(key("c/b"), doc("c/b", n(2), version: 10))    // a newer version, same content
        XCTAssertNil(take(v), "nothing a listener could see changed")
    }

    func testLimitRefillsFromTheRestOfTheMatches() {
        let v = View(query: try! ordered("c").limit(2))
        v.reset(["a", "b", "c", "d"].enumerated().map { doc("c/\($1)", n(Int64($0))) })
        XCTAssertEqual(summary(take(v)!), ["added a -1 0", "added b -1 1"])
        v.update(key("c/a"), nil)
        XCTAssertEqual(summary(take(v)!), ["removed a 0 -1", "added c -1 1"])
        v.update(key("c/z"), doc("c/z", n(-1)))                  // pushes c out
        XCTAssertEqual(summary(take(v)!), ["removed c 1 -1", "added z -1 0"])
        v.update(key("c/d"), doc("c/d", n(99)))                  // outside the window: no change
        XCTAssertNil(take(v))
        v.update(key("c/b"), doc("c/b", n(50)))                  // b leaves, c comes back
        let s = take(v)!
        XCTAssertEqual(summary(s), ["removed b 1 -1", "added c -1 1"])
        XCTAssertEqual(ids(s), ["z", "c"])
    }

    func testLimitToLastKeepsTheLastAndRefills() {
        let v = View(query: try! ordered("c").limit(2, type: .last))
        v.reset(["a", "b", "c", "d"].enumerated().map { doc("c/\($1)", n(Int64($0))) })
        let first = take(v)!
        XCTAssertEqual(summary(first), ["added c -1 0", "added d -1 1"])
        v.update(key("c/d"), nil)
        let s = take(v)!
        XCTAssertEqual(summary(s), ["removed d 1 -1", "added b -1 0"])
        XCTAssertEqual(ids(s), ["b", "c"])
    }

    /// hasPendingWrites covers only documents in the result (a pending document outside a limit
    /// window does not count).
    func testPendingWritesOutsideTheWindowDoNotCount() {
        let v = View(query: try! ordered("c").limit(1))
        v.reset([doc("c/a", n(1)), doc("c/b", n(2), local: true)])
        let s = take(v)!
        XCTAssertEqual(ids(s), ["a"])
        XCTAssertFalse(s.hasPendingWrites)
        v.update(key("c/a"), doc("c/a", n(3)))
        let s2 = take(v)!
        XCTAssertEqual(summary(s2), ["removed a 0 -1", "added b -1 0"])
        XCTAssertTrue(s2.hasPendingWrites)
    }

    /// Seeded random walk over plain, descending, filtered, limit and limit-to-last views with ties:
    /// every snapshot is checked by replaying its changes, and its documents are the query's
    /// result over the truth.
    func testRandomChangesAlwaysReplayExactly() {
        var rng = SplitMix64(seed: 0xE3BE5)
        let lessThan15 = Filter.field(FieldFilter(field: fp("n"), op: .lessThan, value: .int(15)))
        let queries: [Query] = [
            collection("r"), ordered("r"), ordered("r", descending: true),
            try! ordered("r").limit(3), try! ordered("r", descending: true).limit(4),
            try! ordered("r").limit(3, type: .last), try! ordered("r").limit(1, type: .last),
            try! ordered("r").filter(lessThan15), try! ordered("r").filter(lessThan15).limit(2),
            try! collection("r").order(by: fp("m")).order(by: fp("n"), descending: true).limit(5),
        ]
        for (qi, q) in queries.enumerated() {
            for trial in 0..<25 {
                var truth: [DocumentKey: Document] = [:]
                func randomDoc(_ k: DocumentKey) -> Document? {
                    switch rng.next(8) {
                    case 0: return nil
                    case 1: return .missing(k, version: 1)
                    default:
                        var f: [String: Value] = ["n": .int(Int64(rng.next(20)))]
                        if rng.next(4) != 0 { f["m"] = .int(Int64(rng.next(3))) }
                        if rng.next(3) == 0 { f["x"] = .int(Int64(rng.next(1000))) }
                        return Document(key: k, data: MapValue(f), version: 1, createTime: 1, updateTime: 1,
                                        hasLocalMutations: rng.next(3) == 0)
                    }
                }
                let keys = (0..<12).map { key("r/k\($0)") }
                for k in keys { truth[k] = randomDoc(k) }
                let v = View(query: q)
                v.reset(truth.values.filter { q.matches($0) })   // as LocalStore.execute gives it
                var events: [ListenEvent] = [.snapshot(take(v, fromCache: true)!)]
                for _ in 0..<40 {
                    for _ in 0..<(1 + rng.next(4)) {
                        let k = keys[rng.next(keys.count)]
                        truth[k] = randomDoc(k)
                        v.update(k, truth[k])
                    }
                    guard let s = take(v, fromCache: rng.next(2) == 0) else { continue }
                    events.append(.snapshot(s))
                    var expected = DocumentSet(orderBy: q.normalizedOrderBy)
                    expected.replaceAll(truth.values.filter { q.matches($0) })
                    let want = Array(expected.window(limit: q.limit, type: q.limitType)).map { $0.key.id }
                    if ids(s) != want {
                        XCTFail("query \(qi) trial \(trial): view has \(ids(s)), the truth gives \(want)")
                        return
                    }
                }
                assertReplays(events, includeMetadata: true)
            }
        }
    }
}

/// A small deterministic generator (SplitMix64), so random tests replay identically.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
