import EmberFirestoreProto
import Foundation
import EmberModel
import EmberWire
@testable import EmberRemote
import XCTest

/// The Listen stream's messages read into consistent snapshots, without a stream: initial
/// results at the first global NO_CHANGE after CURRENT, changes to delivered targets, documents
/// left without their new state, resets, existence filters and removals with a cause.
final class WatchAggregatorTests: XCTestCase {
    let codec = WireCodec(db: try! DatabaseName(project: "p", database: "(default)"), keys: .plain)
    var agg: WatchAggregator!

    override func setUp() { agg = WatchAggregator(codec: codec) }

    private func change(_ type: Google_Firestore_V1_TargetChange.TargetChangeType, _ ids: [Int32] = [], readTime: Int64? = nil, cause: Int32 = 0) -> ListenResponse {
        var tc = Google_Firestore_V1_TargetChange()
        tc.targetChangeType = type
        tc.targetIds = ids
        if let readTime { tc.readTime = WireCodec.timestamp(micros: readTime) }
        if cause != 0 { tc.cause.code = cause; tc.cause.message = "bad target" }
        var r = ListenResponse()
        r.targetChange = tc
        return r
    }

    private func docChange(_ path: String, n: Int64, updated: Int64, in ids: [Int32], out removed: [Int32] = []) -> ListenResponse {
        var dc = Google_Firestore_V1_DocumentChange()
        dc.document.name = codec.name(of: key(path))
        dc.document.fields = [.init(key: "n", value: codec.wire(.int(n)))]
        dc.document.updateTime = WireCodec.timestamp(micros: updated)
        dc.document.createTime = WireCodec.timestamp(micros: updated)
        dc.targetIds = ids
        dc.removedTargetIds = removed
        var r = ListenResponse()
        r.documentChange = dc
        return r
    }

    private func feed(_ rs: ListenResponse...) throws -> WatchSnapshot? {
        var last: WatchSnapshot?
        for r in rs { if let s = try agg.handle(r) { last = s } }
        return last
    }

    func testATargetsResultIsDeliveredAtTheFirstConsistentPointAfterCurrent() throws {
        agg.add(1, query: collection("c"), knownKeys: [key("c/old")])
        XCTAssertNil(try feed(change(.add, [1]), docChange("c/a", n: 1, updated: 5, in: [1]), change(.noChange, readTime: 6)),
                     "not CURRENT yet: nothing to deliver")
        let s = try XCTUnwrap(try feed(change(.current, [1]), change(.noChange, readTime: 7)))
        XCTAssertEqual(s.version, 7)
        XCTAssertEqual(s.results.count, 1)
        XCTAssertEqual(s.results[0].documents.map { $0.key.id }, ["a"])
        XCTAssertEqual(s.results[0].resolve, [key("c/old")], "a known key not in the result is looked up")
        XCTAssertEqual(s.keysToFetch, [key("c/old")])
        XCTAssertEqual(agg.targets[1]?.keys, [key("c/a")])
    }

    func testLaterChangesComeAtEachConsistentPoint() throws {
        agg.add(1, query: collection("c"), knownKeys: [])
        _ = try feed(change(.current, [1]), change(.noChange, readTime: 1))
        var dd = Google_Firestore_V1_DocumentDelete()
        dd.document = codec.name(of: key("c/b"))
        dd.removedTargetIds = [1]
        var del = ListenResponse()
        del.documentDelete = dd
        var dr = Google_Firestore_V1_DocumentRemove()
        dr.document = codec.name(of: key("c/c"))
        dr.removedTargetIds = [1]
        var rem = ListenResponse()
        rem.documentRemove = dr
        let s = try XCTUnwrap(try feed(docChange("c/a", n: 2, updated: 9, in: [1]), del, rem, change(.noChange, readTime: 9)))
        XCTAssertTrue(s.results.isEmpty)
        XCTAssertEqual(s.changed.map { "\($0.key.id) \($0.exists) \($0.version)" }, ["a true 9", "b false 9"])
        XCTAssertEqual(s.refetch, [key("c/c")], "left without its new state: fetched")
        XCTAssertNil(try feed(change(.noChange, readTime: 10)), "nothing new")
    }

    func testAMissingDocumentOfADocumentsTargetIsATombstone() throws {
        agg.add(2, query: Query(document: key("c/none")), knownKeys: [])
        let s = try XCTUnwrap(try feed(change(.current, [2]), change(.noChange, readTime: 4)))
        XCTAssertEqual(s.results.first?.documents.map { "\($0.key.id) \($0.exists) \($0.version)" }, ["none false 4"])
        XCTAssertTrue(s.keysToFetch.isEmpty)
    }

    func testResetAndExistenceFilterStartATargetAgain() throws {
        agg.add(1, query: collection("c"), knownKeys: [])
        _ = try feed(docChange("c/a", n: 1, updated: 1, in: [1]), change(.current, [1]), change(.noChange, readTime: 2))
        var f = Google_Firestore_V1_ExistenceFilter()
        f.targetID = 1
        f.count = 1
        var filter = ListenResponse()
        filter.filter = f
        _ = try feed(filter)
        XCTAssertTrue(agg.takeRelisten().isEmpty, "the count matches")
        f.count = 2
        filter.filter = f
        _ = try feed(filter)
        XCTAssertEqual(agg.takeRelisten(), [1])
        XCTAssertEqual(agg.targets[1]?.delivered, false)
        let s = try XCTUnwrap(try feed(change(.current, [1]), change(.noChange, readTime: 3)))
        XCTAssertEqual(s.results.first?.resolve, [key("c/a")], "what it held is looked up if not sent again")

        _ = try feed(change(.reset, [1]))
        XCTAssertEqual(agg.targets[1]?.current, false)
    }

    func testAStreamRestartResumesADeliveredTargetWithAToken() throws {
        agg.add(1, query: collection("c"), knownKeys: [])
        agg.add(2, query: collection("d"), knownKeys: [])
        var current = change(.current, [1])
        current.targetChange.resumeToken = Data([0, 0, 0, 0, 0, 0, 0, 7])
        _ = try feed(docChange("c/a", n: 1, updated: 1, in: [1]), current, change(.noChange, readTime: 7))
        agg.resetAll()
        XCTAssertEqual(agg.targets[1]?.delivered, true, "resumed: still delivered, with its keys")
        XCTAssertEqual(agg.targets[1]?.current, false)
        XCTAssertEqual(agg.targets[1]?.keys, [key("c/a")])
        XCTAssertEqual(agg.targets[2]?.delivered, false, "never current, no token: from scratch")
        // The server sends what changed since the token, the filter, CURRENT: plain changes.
        var f = Google_Firestore_V1_ExistenceFilter()
        f.targetID = 1
        f.count = 2
        var filter = ListenResponse()
        filter.filter = f
        let s = try XCTUnwrap(try feed(docChange("c/b", n: 2, updated: 8, in: [1]), filter, change(.current, [1]), change(.noChange, readTime: 8)))
        XCTAssertTrue(agg.takeRelisten().isEmpty, "2 documents held, 2 counted")
        XCTAssertEqual(s.changed.map { $0.key.id }, ["b"])
        XCTAssertTrue(s.results.isEmpty)
        XCTAssertEqual(s.recovered, [1], "current again: its listeners stop being fromCache")
        // Once only: the next consistent point has no news.
        XCTAssertNil(try feed(change(.noChange, readTime: 9)))
    }

    func testAFirstTokenAfterTheResultIsReportedAtAQuietConsistentPointNewerOnesAreNot() throws {
        agg.add(1, query: collection("c"), knownKeys: [])
        // The result is delivered at a consistent point that carries no token (the emulator, at times).
        let first = try XCTUnwrap(try feed(docChange("c/a", n: 1, updated: 1, in: [1]), change(.current, [1]), change(.noChange, readTime: 2)))
        XCTAssertTrue(first.tokens.isEmpty)
        var tokened = change(.noChange, readTime: 3)
        tokened.targetChange.resumeToken = Data([0, 0, 0, 0, 0, 0, 0, 3])
        let late = try XCTUnwrap(try feed(tokened), "the first token alone is news")
        XCTAssertEqual(late.tokens.map { $0.0 }, [1])
        XCTAssertTrue(late.changed.isEmpty && late.results.isEmpty)
        var newer = change(.noChange, readTime: 4)
        newer.targetChange.resumeToken = Data([0, 0, 0, 0, 0, 0, 0, 4])
        XCTAssertNil(try feed(newer), "a newer token at a quiet point is not")
    }

    func testAResumedTargetWithNoChangesIsStillReportedCurrentAgain() throws {
        agg.add(1, query: collection("c"), knownKeys: [])
        var current = change(.current, [1])
        current.targetChange.resumeToken = Data([0, 0, 0, 0, 0, 0, 0, 7])
        _ = try feed(docChange("c/a", n: 1, updated: 1, in: [1]), current, change(.noChange, readTime: 7))
        agg.resetAll()
        let s = try XCTUnwrap(try feed(change(.current, [1]), change(.noChange, readTime: 9)))
        XCTAssertTrue(s.changed.isEmpty)
        XCTAssertEqual(s.recovered, [1])
    }

    func testARemoveWithACauseEndsTheTarget() throws {
        agg.add(3, query: collection("c"), knownKeys: [])
        _ = try feed(change(.remove, [3], cause: 3))
        let rejected = agg.takeRejected()
        XCTAssertEqual(rejected.map { $0.0 }, [3])
        XCTAssertEqual(rejected.first?.1.code, .invalidArgument)
        XCTAssertNil(agg.targets[3])
    }
}
