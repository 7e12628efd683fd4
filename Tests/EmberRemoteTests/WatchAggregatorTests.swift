import EmberFirestoreProto
import Foundation
import EmberBackend
import EmberModel
import EmberWire
@testable import EmberRemote
import ScriptedFirestore
import XCTest

/// The Listen stream's messages read into consistent events, without a stream (the Firebase
/// SDKs' `WatchChangeAggregator`): what each target gained and lost at each global NO_CHANGE,
/// targets ignored until their requests are acknowledged, tombstones for deletes and for
/// missing documents of document targets, resets, existence filters, tokens, removals with a cause.
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

    private func feed(_ rs: ListenResponse...) throws -> WatchEvent? {
        var last: WatchEvent?
        for r in rs { if let s = try agg.handle(r) { last = s } }
        return last
    }

    /// A target added and acknowledged.
    private func listening(_ id: Int32, _ q: Query, known: [DocumentKey] = [], token: Data? = nil) throws {
        agg.add(id, query: q, knownKeys: known, resumeToken: token)
        agg.sent(id)
        XCTAssertNil(try feed(change(.add, [id])))
    }

    private func deleted(_ path: String, readTime: Int64?, out ids: [Int32]) -> ListenResponse {
        var dd = Google_Firestore_V1_DocumentDelete()
        dd.document = codec.name(of: key(path))
        dd.removedTargetIds = ids
        if let readTime { dd.readTime = WireCodec.timestamp(micros: readTime) }
        var r = ListenResponse()
        r.documentDelete = dd
        return r
    }

    private func filter(_ id: Int32, _ count: Int32) -> ListenResponse {
        var r = ListenResponse()
        r.filter.targetID = id
        r.filter.count = count
        return r
    }

    func testEachGlobalSnapshotHandsOverWhatChangedCurrentOrNot() throws {
        try listening(1, collection("c"))
        let e1 = try XCTUnwrap(try feed(docChange("c/a", n: 1, updated: 5, in: [1]), change(.noChange, readTime: 6)))
        XCTAssertEqual(e1.version, 6)
        XCTAssertEqual(e1.documents.map { $0.key.id }, ["a"])
        XCTAssertEqual(e1.targets.map { $0.current }, [false], "not current yet: handed over as such")
        XCTAssertEqual(e1.targets[0].added, [key("c/a")])
        let e2 = try XCTUnwrap(try feed(change(.current, [1]), change(.noChange, readTime: 7)))
        XCTAssertEqual(e2.documents.count, 0)
        XCTAssertEqual(e2.targets.map { $0.current }, [true])
        XCTAssertEqual(e2.targets[0].added, [], "a is the target's already")
        XCTAssertEqual(agg.targets[1]?.remoteKeys, [key("c/a")])
        XCTAssertNil(try feed(change(.noChange, readTime: 8)), "nothing new: no event")
    }

    func testMessagesForATargetWaitForItsAcknowledgement() throws {
        agg.add(1, query: collection("c"), knownKeys: [])
        agg.sent(1)
        XCTAssertNil(try feed(docChange("c/a", n: 1, updated: 5, in: [1]), change(.current, [1]), change(.noChange, readTime: 6)),
                     "before its ADD the target is not active")
        XCTAssertNil(try feed(change(.add, [1])))
        let e = try XCTUnwrap(try feed(docChange("c/b", n: 1, updated: 7, in: [1]), change(.noChange, readTime: 8)))
        XCTAssertEqual(e.documents.map { $0.key.id }, ["b"])
    }

    func testDeletesAndRemovesLeaveTheTarget() throws {
        try listening(1, collection("c"), known: [key("c/a"), key("c/b")], token: Data("t".utf8))
        let e = try XCTUnwrap(try feed(deleted("c/a", readTime: nil, out: [1]), change(.current, [1]), change(.noChange, readTime: 9)))
        XCTAssertEqual(e.targets[0].removed, [key("c/a")])
        XCTAssertEqual(e.documents.map { "\($0.key.id) \($0.exists) \($0.version)" }, ["a false 9"], "a delete without a read time: at the event's")
        XCTAssertEqual(agg.targets[1]?.remoteKeys, [key("c/b")])
    }

    func testAMissingDocumentOfACurrentDocumentTargetIsATombstone() throws {
        try listening(3, Query(document: key("c/gone")))
        let e = try XCTUnwrap(try feed(change(.current, [3]), change(.noChange, readTime: 4)))
        XCTAssertEqual(e.documents.map { "\($0.key.id) \($0.exists) \($0.version)" }, ["gone false 4"])
    }

    func testAFilterCountingZeroDeletesADocumentTargetsDocument() throws {
        try listening(3, Query(document: key("c/a")))
        _ = try feed(docChange("c/a", n: 1, updated: 5, in: [3]), change(.current, [3]), change(.noChange, readTime: 6))
        let e = try XCTUnwrap(try feed(filter(3, 0), change(.noChange, readTime: 7)))
        XCTAssertEqual(e.documents.map { "\($0.key.id) \($0.exists)" }, ["a false"])
    }

    func testAFilterMismatchResetsTheTargetAndAsksForItAgain() throws {
        try listening(1, collection("c"))
        _ = try feed(docChange("c/a", n: 1, updated: 5, in: [1]), change(.current, [1]), change(.noChange, readTime: 6))
        XCTAssertNil(try feed(filter(1, 1)), "a count that agrees changes nothing")
        // CURRENT and a global token in the same batch (ember serve sends them): the target is
        // still reset, and the token is not what it resumes from.
        var global = change(.noChange, readTime: 7)
        global.targetChange.resumeToken = Data("g".utf8)
        let e = try XCTUnwrap(try feed(filter(1, 2), change(.current, [1]), global))
        XCTAssertEqual(e.targets.map { "\($0.current) \($0.reset) \($0.removed.map { $0.id }) \($0.resumeToken == nil)" },
                       ["false true [\"a\"] true"])
        XCTAssertEqual(agg.takeRelisten(), [1], "asked for again once the event is out")
        XCTAssertNil(agg.targets[1]?.deliveredToken)
    }

    func testABloomFilterThatExplainsTheCountTakesOutOnlyWhatItLacks() throws {
        try listening(1, collection("c"), known: [key("c/a"), key("c/b")], token: Data("t".utf8))
        var f = filter(1, 1)
        var bitmap = [UInt8](repeating: 0, count: 8)
        for bit in bloomBits(codec.name(of: key("c/b")), bitCount: 64, hashCount: 5) { bitmap[bit / 8] |= 1 << UInt8(bit % 8) }
        f.filter.unchangedNames.bits.bitmap = Data(bitmap)
        f.filter.unchangedNames.hashCount = 5
        let e = try XCTUnwrap(try feed(f, change(.current, [1]), change(.noChange, readTime: 7)))
        XCTAssertEqual(e.targets.map { "\($0.current) \($0.reset) \($0.removed.map { $0.id })" }, ["true false [\"a\"]"])
        XCTAssertEqual(agg.takeRelisten(), [], "explained: no re-run")
    }

    func testResetTakesEveryKeyOutUntilSentAgain() throws {
        try listening(1, collection("c"))
        _ = try feed(docChange("c/a", n: 1, updated: 5, in: [1]), docChange("c/b", n: 1, updated: 5, in: [1]),
                     change(.current, [1]), change(.noChange, readTime: 6))
        let e = try XCTUnwrap(try feed(change(.reset, [1]), docChange("c/a", n: 2, updated: 7, in: [1]), change(.current, [1]),
                                       change(.noChange, readTime: 8)))
        XCTAssertEqual(e.targets[0].removed, [key("c/b")])
        XCTAssertEqual(e.targets[0].added, [])
    }

    func testAGlobalTokenIsEveryTargetsAndAResumeUsesTheLastHandedOver() throws {
        try listening(1, collection("c"))
        try listening(2, collection("d"))
        var global = change(.noChange, readTime: 6)
        global.targetChange.resumeToken = Data("g1".utf8)
        let e = try XCTUnwrap(try feed(change(.current, [1, 2]), global))
        XCTAssertEqual(e.targets.map { $0.resumeToken.map { String(decoding: $0, as: UTF8.self) } }, ["g1", "g1"])
        var later = change(.noChange, [1])
        later.targetChange.resumeToken = Data("t2".utf8)
        XCTAssertNil(try feed(later))
        agg.resetAll()
        XCTAssertEqual(agg.targets[1]?.deliveredToken, Data("g1".utf8), "t2 was never handed over with an event")
    }

    func testARemoveWithACauseEndsTheTarget() throws {
        try listening(1, collection("c"))
        XCTAssertNil(try feed(change(.remove, [1], cause: 7)))
        let rejected = agg.takeRejected()
        XCTAssertEqual(rejected.map { $0.0 }, [1])
        XCTAssertEqual(rejected.first?.1.code, .permissionDenied)
        XCTAssertNil(agg.targets[1])
    }
}
