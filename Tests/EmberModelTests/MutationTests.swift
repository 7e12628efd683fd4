// Tests for Mutation.swift: set / patch / delete / verify, preconditions, and field transforms,
// applied locally and at the backend.
import XCTest
@testable import EmberModel

final class MutationTests: XCTestCase {
    let k = key("cities/SF")

    func existing(_ fields: [String: Value], version: Int64 = 10, createTime: Int64 = 5, updateTime: Int64 = 10) -> Document {
        Document(key: k, data: MapValue(fields), version: version, createTime: createTime, updateTime: updateTime)
    }

    func transform(_ field: String, _ op: FieldTransform.Op, on base: [String: Value]?, local: Bool = false) throws -> Value? {
        let m = Mutation(key: k, kind: .patch(MapValue(), mask: []), transforms: [FieldTransform(path: fp(field), op: op)])
        let d = base.map { existing($0) }
        let out = local ? m.applyLocally(to: d, localWriteTime: 1) : try m.applyAtBackend(to: d, commitTime: 100)
        return out?.field(fp(field))
    }

    // MARK: set

    func testSetReplacesTheWholeDocument() throws {
        let m = Mutation(key: k, kind: .set(MapValue(["name": str("SF")])))
        let old = existing(["name": str("old"), "pop": .int(1)])
        let local = try XCTUnwrap(m.applyLocally(to: old, localWriteTime: 50))
        XCTAssertEqual(local.data, MapValue(["name": str("SF")]))
        XCTAssertTrue(local.exists)
        XCTAssertTrue(local.hasLocalMutations)
        XCTAssertEqual(local.version, 10, "the local view keeps the backend version")
        XCTAssertEqual(local.createTime, 5)

        let remote = try XCTUnwrap(m.applyAtBackend(to: old, commitTime: 70))
        XCTAssertEqual(remote.data, MapValue(["name": str("SF")]))
        XCTAssertFalse(remote.hasLocalMutations)
        XCTAssertEqual(remote.version, 70)
        XCTAssertEqual(remote.updateTime, 70)
        XCTAssertEqual(remote.createTime, 5, "create time survives an overwrite")
    }

    func testSetCreatesAMissingDocument() throws {
        let m = Mutation(key: k, kind: .set(MapValue(["a": .int(1)])))
        let local = try XCTUnwrap(m.applyLocally(to: nil, localWriteTime: 50))
        XCTAssertTrue(local.exists)
        XCTAssertEqual(local.version, 0)
        XCTAssertEqual(local.key, k)
        let fromTombstone = try XCTUnwrap(m.applyAtBackend(to: Document.missing(k, version: 3), commitTime: 80))
        XCTAssertEqual(fromTombstone.createTime, 80)
        XCTAssertEqual(fromTombstone.updateTime, 80)
        XCTAssertEqual(fromTombstone.data["a"], .int(1))
    }

    // MARK: patch

    func testPatchWritesOnlyTheMaskedFields() throws {
        let old = existing(["a": .int(1), "b": .int(2), "nested": map(["x": .int(1), "y": .int(2)])])
        let m = Mutation(key: k, kind: .patch(MapValue(["a": .int(10), "nested": map(["x": .int(9)]), "ignored": .int(0)]),
                                              mask: [fp("a"), fp("nested.x")]))
        let out = try XCTUnwrap(m.applyAtBackend(to: old, commitTime: 20))
        XCTAssertEqual(out.data, MapValue(["a": .int(10), "b": .int(2), "nested": map(["x": .int(9), "y": .int(2)])]))
        XCTAssertEqual(out.createTime, 5)
        XCTAssertEqual(out.updateTime, 20)
        XCTAssertEqual(m.applyLocally(to: old, localWriteTime: 1)?.data, out.data)
    }

    func testPatchDeletesMaskedFieldsAbsentFromData() throws {
        let old = existing(["a": .int(1), "b": .int(2), "nested": map(["x": .int(1), "y": .int(2)])])
        let m = Mutation(key: k, kind: .patch(MapValue(["b": .int(3)]), mask: [fp("a"), fp("b"), fp("nested.x"), fp("zzz")]))
        let out = try XCTUnwrap(m.applyAtBackend(to: old, commitTime: 20))
        XCTAssertNil(out.data["a"])
        XCTAssertEqual(out.data["b"], .int(3))
        XCTAssertEqual(out.data["nested"], map(["y": .int(2)]))
        XCTAssertNil(out.data["zzz"], "deleting a field that is not there is a no-op")
        XCTAssertEqual(m.applyLocally(to: old, localWriteTime: 1)?.data, out.data)
    }

    func testPatchReplacesAWholeMapWhenTheMaskNamesIt() throws {
        let old = existing(["nested": map(["x": .int(1), "y": .int(2)])])
        let m = Mutation(key: k, kind: .patch(MapValue(["nested": map(["z": .int(3)])]), mask: [fp("nested")]))
        XCTAssertEqual(try m.applyAtBackend(to: old, commitTime: 2)?.data["nested"], map(["z": .int(3)]))
    }

    func testPatchOfAMissingDocumentWithoutPreconditionCreatesIt() throws {
        let m = Mutation(key: k, kind: .patch(MapValue(["a": map(["b": .int(1)])]), mask: [fp("a.b")]))
        let out = try XCTUnwrap(m.applyAtBackend(to: nil, commitTime: 9))
        XCTAssertTrue(out.exists)
        XCTAssertEqual(out.data, MapValue(["a": map(["b": .int(1)])]))
        XCTAssertEqual(out.createTime, 9)
        let local = try XCTUnwrap(m.applyLocally(to: Document.missing(k, version: 4), localWriteTime: 1))
        XCTAssertTrue(local.exists)
        XCTAssertEqual(local.version, 4)
        XCTAssertEqual(local.data, out.data)
    }

    // MARK: delete and verify

    func testDeleteLeavesATombstone() throws {
        let m = Mutation(key: k, kind: .delete)
        let old = existing(["a": .int(1)])
        let local = try XCTUnwrap(m.applyLocally(to: old, localWriteTime: 1))
        XCTAssertFalse(local.exists)
        XCTAssertTrue(local.hasLocalMutations)
        XCTAssertEqual(local.version, 10)
        let remote = try XCTUnwrap(m.applyAtBackend(to: old, commitTime: 30))
        XCTAssertFalse(remote.exists)
        XCTAssertEqual(remote.version, 30)
        XCTAssertFalse(remote.hasLocalMutations)
        XCTAssertFalse(try XCTUnwrap(m.applyAtBackend(to: nil, commitTime: 31)).exists, "deleting nothing succeeds")
    }

    func testVerifyChangesNothing() throws {
        let old = existing(["a": .int(1)])
        let m = Mutation(key: k, kind: .verify, precondition: .updateTime(10))
        XCTAssertNil(try m.applyAtBackend(to: old, commitTime: 40))
        XCTAssertTrue(m.applyLocally(to: old, localWriteTime: 1) === old)
        assertEmberError(.failedPrecondition) { try Mutation(key: k, kind: .verify, precondition: .updateTime(11)).applyAtBackend(to: old, commitTime: 40) }
    }

    // MARK: preconditions

    func testExistsTrueOnAMissingDocumentIsNotFound() {
        let m = Mutation(key: k, kind: .patch(MapValue(["a": .int(1)]), mask: [fp("a")]), precondition: .exists(true))
        assertEmberError(.notFound, ["cities/SF"]) { try m.applyAtBackend(to: nil, commitTime: 1) }
        assertEmberError(.notFound) { try m.applyAtBackend(to: Document.missing(k, version: 3), commitTime: 1) }
        XCTAssertNoThrow(try m.applyAtBackend(to: existing([:]), commitTime: 1))
    }

    func testExistsFalseOnAnExistingDocumentIsAlreadyExists() {
        let m = Mutation(key: k, kind: .set(MapValue(["a": .int(1)])), precondition: .exists(false))
        assertEmberError(.alreadyExists, ["cities/SF"]) { try m.applyAtBackend(to: existing([:]), commitTime: 1) }
        XCTAssertNoThrow(try m.applyAtBackend(to: nil, commitTime: 1))
        XCTAssertNoThrow(try m.applyAtBackend(to: Document.missing(k, version: 3), commitTime: 1))
    }

    func testUpdateTimeMismatchIsFailedPrecondition() {
        let old = existing(["a": .int(1)], updateTime: 10)
        let m = Mutation(key: k, kind: .delete, precondition: .updateTime(9))
        assertEmberError(.failedPrecondition, ["cities/SF", "10", "9"]) { try m.applyAtBackend(to: old, commitTime: 1) }
        assertEmberError(.failedPrecondition) { try m.applyAtBackend(to: nil, commitTime: 1) }
        XCTAssertNoThrow(try Mutation(key: k, kind: .delete, precondition: .updateTime(10)).applyAtBackend(to: old, commitTime: 1))
    }

    func testUpdateTimePreconditionNeedsAnExistingDocument() {
        // A missing document has no update time: even .updateTime(0) fails, at the backend as locally.
        let m = Mutation(key: k, kind: .set(MapValue(["a": .int(1)])), precondition: .updateTime(0))
        assertEmberError(.failedPrecondition) { try m.applyAtBackend(to: nil, commitTime: 1) }
        assertEmberError(.failedPrecondition) { try m.applyAtBackend(to: Document.missing(k, version: 4), commitTime: 1) }
        XCTAssertNil(m.applyLocally(to: nil, localWriteTime: 1))
    }

    func testAFailingPreconditionLeavesTheLocalDocumentAsItIs() {
        let old = existing(["a": .int(1)])
        let create = Mutation(key: k, kind: .set(MapValue(["a": .int(2)])), precondition: .exists(false))
        XCTAssertTrue(create.applyLocally(to: old, localWriteTime: 1) === old)
        let update = Mutation(key: k, kind: .patch(MapValue(["a": .int(2)]), mask: [fp("a")]), precondition: .exists(true))
        XCTAssertNil(update.applyLocally(to: nil, localWriteTime: 1))
        let tomb = Document.missing(k, version: 2)
        XCTAssertTrue(update.applyLocally(to: tomb, localWriteTime: 1) === tomb)
        let stale = Mutation(key: k, kind: .delete, precondition: .updateTime(3))
        XCTAssertTrue(stale.applyLocally(to: old, localWriteTime: 1) === old)
        XCTAssertNil(stale.applyLocally(to: nil, localWriteTime: 1))
    }

    func testAHoldingPreconditionAppliesLocally() throws {
        let old = existing(["a": .int(1)])
        let update = Mutation(key: k, kind: .patch(MapValue(["a": .int(2)]), mask: [fp("a")]), precondition: .exists(true))
        XCTAssertEqual(try XCTUnwrap(update.applyLocally(to: old, localWriteTime: 1)).data["a"], .int(2))
        let create = Mutation(key: k, kind: .set(MapValue(["a": .int(3)])), precondition: .exists(false))
        XCTAssertEqual(try XCTUnwrap(create.applyLocally(to: nil, localWriteTime: 1)).data["a"], .int(3))
        let pinned = Mutation(key: k, kind: .delete, precondition: .updateTime(10))
        XCTAssertFalse(try XCTUnwrap(pinned.applyLocally(to: old, localWriteTime: 1)).exists)
    }

    // MARK: transforms

    func testServerTimestampIsNullLocallyAndTheCommitTimeAtTheBackend() throws {
        let m = Mutation(key: k, kind: .set(MapValue(["a": .int(1)])), transforms: [FieldTransform(path: fp("meta.at"), op: .serverTimestamp)])
        let local = try XCTUnwrap(m.applyLocally(to: nil, localWriteTime: 77))
        XCTAssertEqual(local.field(fp("meta.at")), .null)
        XCTAssertEqual(local.field(fp("a")), .int(1))
        let remote = try XCTUnwrap(m.applyAtBackend(to: nil, commitTime: 1_700_000_000_123_456))
        XCTAssertEqual(remote.field(fp("meta.at")), .timestamp(Timestamp(micros: 1_700_000_000_123_456)))
    }

    func testIncrementKeepsIntegersIntegers() throws {
        XCTAssertEqual(try transform("n", .increment(.int(5)), on: ["n": .int(2)]), .int(7))
        XCTAssertEqual(try transform("n", .increment(.int(-5)), on: ["n": .int(2)]), .int(-3))
        XCTAssertEqual(try transform("n", .increment(.int(5)), on: ["n": .int(2)], local: true), .int(7))
    }

    func testIncrementSaturatesOnOverflow() throws {
        XCTAssertEqual(try transform("n", .increment(.int(1)), on: ["n": .int(Int64.max)]), .int(Int64.max))
        XCTAssertEqual(try transform("n", .increment(.int(Int64.max)), on: ["n": .int(Int64.max)]), .int(Int64.max))
        XCTAssertEqual(try transform("n", .increment(.int(-1)), on: ["n": .int(Int64.min)]), .int(Int64.min))
        XCTAssertEqual(try transform("n", .increment(.int(Int64.min)), on: ["n": .int(-1)]), .int(Int64.min))
        XCTAssertEqual(try transform("n", .increment(.int(Int64.min)), on: ["n": .int(Int64.max)]), .int(-1), "no overflow, no saturation")
    }

    func testIncrementWithDoubles() throws {
        XCTAssertEqual(try transform("n", .increment(.double(0.5)), on: ["n": .double(1.25)]), .double(1.75))
        XCTAssertEqual(try transform("n", .increment(.int(1)), on: ["n": .double(1.5)]), .double(2.5), "double stays double")
        XCTAssertEqual(try transform("n", .increment(.double(0.5)), on: ["n": .int(1)]), .double(1.5), "int + double is double")
        XCTAssertEqual(try transform("n", .increment(.double(1.0)), on: ["n": .int(1)]), .double(2.0))
    }

    func testIncrementOfAMissingOrNonNumericFieldIsTheOperand() throws {
        XCTAssertEqual(try transform("n", .increment(.int(3)), on: [:]), .int(3))
        XCTAssertEqual(try transform("n", .increment(.int(3)), on: nil), .int(3))
        XCTAssertEqual(try transform("n", .increment(.double(2.5)), on: ["n": str("x")]), .double(2.5))
        XCTAssertEqual(try transform("n", .increment(.int(3)), on: ["n": .null]), .int(3))
        XCTAssertEqual(try transform("n", .increment(.int(3)), on: ["n": arr(.int(1))], local: true), .int(3))
        XCTAssertEqual(try transform("a.b", .increment(.int(3)), on: ["a": .int(1)]), .int(3))
    }

    func testArrayUnionAddsMissingElementsOnly() throws {
        XCTAssertEqual(try transform("t", .arrayUnion([.int(2), .int(3)]), on: ["t": arr(.int(1), .int(2))]), arr(.int(1), .int(2), .int(3)))
        XCTAssertEqual(try transform("t", .arrayUnion([.int(1), .int(1)]), on: ["t": arr()]), arr(.int(1)), "no duplicates from the operand")
        XCTAssertEqual(try transform("t", .arrayUnion([.int(1)]), on: ["t": arr(.int(1), .int(1))]), arr(.int(1), .int(1)), "existing duplicates stay")
        // Equal as the value order has it (the Firestore emulator's backend): double 1.0 is int 1,
        // -0.0 is 0, 2^53 + 1 is not the double 2^53, and maps compare their values so.
        XCTAssertEqual(try transform("t", .arrayUnion([.double(1.0)]), on: ["t": arr(.int(1))]), arr(.int(1)))
        XCTAssertEqual(try transform("t", .arrayUnion([.int(1), .double(1.0)]), on: ["t": arr()]), arr(.int(1)))
        XCTAssertEqual(try transform("t", .arrayUnion([.int(0)]), on: ["t": arr(.double(-0.0))]), arr(.double(-0.0)))
        XCTAssertEqual(try transform("t", .arrayUnion([.double(9_007_199_254_740_992)]), on: ["t": arr(.int(9_007_199_254_740_993))]),
                       arr(.int(9_007_199_254_740_993), .double(9_007_199_254_740_992)))
        XCTAssertEqual(try transform("t", .arrayUnion([map(["a": .int(1)])]), on: ["t": arr(map(["a": .double(1.0)]))]), arr(map(["a": .double(1.0)])))
        XCTAssertEqual(try transform("t", .arrayUnion([.double(.nan)]), on: ["t": arr(.double(.nan))]), arr(.double(.nan)))
        XCTAssertEqual(try transform("t", .arrayUnion([map(["a": .int(1)])]), on: ["t": arr(map(["a": .int(1)]))]), arr(map(["a": .int(1)])))
        XCTAssertEqual(try transform("t", .arrayUnion([.int(1)]), on: [:]), arr(.int(1)))
        XCTAssertEqual(try transform("t", .arrayUnion([.int(1)]), on: ["t": str("not an array")], local: true), arr(.int(1)))
    }

    func testArrayRemoveRemovesEveryEqualElement() throws {
        XCTAssertEqual(try transform("t", .arrayRemove([.int(1)]), on: ["t": arr(.int(1), .int(2), .int(1))]), arr(.int(2)))
        XCTAssertEqual(try transform("t", .arrayRemove([.int(1)]), on: ["t": arr(.double(1.0), .int(1), .int(2))]), arr(.int(2)))
        XCTAssertEqual(try transform("t", .arrayRemove([.double(.nan)]), on: ["t": arr(.double(.nan), .int(2))]), arr(.int(2)))
        XCTAssertEqual(try transform("t", .arrayRemove([.int(9)]), on: ["t": arr(.int(1))]), arr(.int(1)))
        XCTAssertEqual(try transform("t", .arrayRemove([.int(1)]), on: [:]), arr())
        XCTAssertEqual(try transform("t", .arrayRemove([.int(1)]), on: ["t": .int(1)], local: true), arr())
    }

    func testTransformsApplyAfterTheDataInOrder() throws {
        let m = Mutation(key: k, kind: .set(MapValue(["n": .int(1)])), transforms: [
            FieldTransform(path: fp("n"), op: .increment(.int(1))),
            FieldTransform(path: fp("n"), op: .increment(.int(10))),
        ])
        XCTAssertEqual(try m.applyAtBackend(to: existing(["n": .int(100)]), commitTime: 1)?.data["n"], .int(12))
        XCTAssertEqual(m.applyLocally(to: nil, localWriteTime: 1)?.data["n"], .int(12))
    }

    func testBatchKeepsItsMutations() {
        let b = MutationBatch(batchId: 3, localWriteTime: 99, mutations: [Mutation(key: k, kind: .delete)])
        XCTAssertEqual(b.batchId, 3)
        XCTAssertEqual(b.localWriteTime, 99)
        XCTAssertEqual(b.mutations.count, 1)
        XCTAssertEqual(MutationBatch.maxOperations, 500)
    }
}
