// Tests for MutationResult.swift: a committed write applied to the cached document with the
// backend's result (Firebase's applyToRemoteDocument).
import XCTest
@testable import EmberModel

final class MutationResultTests: XCTestCase {
    let k = key("c/d")

    func cached(_ fields: [String: Value], version: Int64 = 10) -> Document {
        Document(key: k, data: MapValue(fields), version: version, createTime: 5, updateTime: version)
    }

    func testASetIsTheCommittedDocumentAtTheResultsVersion() {
        let m = Mutation(key: k, kind: .set(MapValue(["a": .int(1)])))
        let d = m.applyCommitted(to: cached(["old": .int(0)]), result: MutationResult(version: 20))
        XCTAssertEqual(d?.data, MapValue(["a": .int(1)]))
        XCTAssertEqual(d?.version, 20)
        XCTAssertEqual(d?.updateTime, 20)
        XCTAssertEqual(d?.createTime, 5, "an existing document keeps its create time")
        XCTAssertEqual(d?.hasLocalMutations, false)
        XCTAssertEqual(m.applyCommitted(to: nil, result: MutationResult(version: 20))?.createTime, 20)
    }

    func testAPatchMergesIntoTheCachedDocumentAndNeedsIt() {
        let m = Mutation(key: k, kind: .patch(MapValue(["b": .int(2)]), mask: [fp("b"), fp("gone")]), precondition: .exists(true))
        let d = m.applyCommitted(to: cached(["a": .int(1), "gone": .int(0)]), result: MutationResult(version: 20))
        XCTAssertEqual(d?.data, MapValue(["a": .int(1), "b": .int(2)]))
        XCTAssertNil(m.applyCommitted(to: nil, result: MutationResult(version: 20)), "not cached: unknown here")
        XCTAssertNil(m.applyCommitted(to: .missing(k, version: 9), result: MutationResult(version: 20)),
                     "cached as missing though the server had it: the cache is stale, unknown here")
    }

    func testTransformsTakeTheServersResultsElseAreComputedAtTheCommitTime() {
        let m = Mutation(key: k, kind: .patch(MapValue(), mask: []),
                         transforms: [FieldTransform(path: fp("n"), op: .increment(.int(1))),
                                      FieldTransform(path: fp("t"), op: .serverTimestamp)])
        let stale = cached(["n": .int(1)])
        let fromServer = m.applyCommitted(to: stale, result: MutationResult(version: 30, transformResults: [.int(7), .timestamp(Timestamp(micros: 30))]))
        XCTAssertEqual(fromServer?.data["n"], .int(7))
        XCTAssertEqual(fromServer?.data["t"], .timestamp(Timestamp(micros: 30)))
        let computed = m.applyCommitted(to: stale, result: MutationResult(version: 30))
        XCTAssertEqual(computed?.data["n"], .int(2))
        XCTAssertEqual(computed?.data["t"], .timestamp(Timestamp(micros: 30)))
    }

    func testADeleteIsATombstoneAndAVerifyChangesNothing() {
        let del = Mutation(key: k, kind: .delete).applyCommitted(to: cached([:]), result: MutationResult(version: 40))
        XCTAssertEqual(del?.exists, false)
        XCTAssertEqual(del?.version, 40)
        XCTAssertNil(Mutation(key: k, kind: .verify, precondition: .updateTime(10)).applyCommitted(to: cached([:]), result: MutationResult(version: 40)))
    }
}
