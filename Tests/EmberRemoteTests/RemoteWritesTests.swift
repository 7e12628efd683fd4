import EmberFirestoreProto
import EmberModel
import EmberWire
@testable import EmberRemote
@testable import EmberServer
import XCTest

/// Ember's mutations as wire writes, read back by the server's own reader (WireWrites), and
/// write results read as MutationResults.
final class RemoteWritesTests: XCTestCase {
    let codec = WireCodec(db: try! DatabaseName(project: "demo-ember", database: "(default)"), keys: .plain)
    var writes: RemoteWrites { RemoteWrites(codec: codec) }

    private func serverReads(_ m: Mutation) throws -> Mutation {
        let db = try DatabaseName(project: "demo-ember", database: "(default)")
        return try WireWrites(codec: WireCodec(db: db)).mutation(writes.write(m))
    }

    /// Fields whose names Swift finds canonically equivalent ("\u{E9}", "e\u{301}") are two fields
    /// on the wire, both ways and nested; a name sent twice byte for byte keeps its last value.
    func testFieldsDifferingOnlyInNormalizationSurviveTheWire() throws {
        let a = "\u{E9}", b = "e\u{301}"
        let inner = MapValue(uniqueEntries: [(key: a, value: .int(3)), (key: b, value: .int(4))])!
        let data = MapValue(uniqueEntries: [(key: a, value: .int(1)), (key: b, value: .int(2)), (key: "m", value: .map(inner))])!
        let set = try serverReads(Mutation(key: key("c/a"), kind: .set(data)))
        guard case .set(let got) = set.kind else { return XCTFail("\(set.kind)") }
        XCTAssertEqual(got, data)
        XCTAssertEqual(try codec.value(codec.wire(.map(data))), .map(data), "the client's reader")
        var twice = Google_Firestore_V1_MapValue()
        for (k, v) in [(a, 1), (b, 2), (a, 3)] as [(String, Int64)] {
            twice.fields.append(.init(key: k, value: codec.wire(.int(v))))
        }
        var w = Google_Firestore_V1_Value()
        w.mapValue = twice
        XCTAssertEqual(try codec.value(w), .map(MapValue(uniqueEntries: [(key: a, value: .int(3)), (key: b, value: .int(2))])!))
    }

    func testSetsPatchesDeletesTransformsAndPreconditionsSurviveTheWire() throws {
        let set = try serverReads(Mutation(key: key("c/a"), kind: .set(MapValue(["r": .reference(key("c/b")), "t": .timestamp(Timestamp(micros: 1_500_000))])),
                                           precondition: .exists(false)))
        guard case .set(let data) = set.kind else { return XCTFail("\(set.kind)") }
        XCTAssertEqual(data["t"], .timestamp(Timestamp(micros: 1_500_000)))
        guard case .reference(let r)? = data["r"] else { return XCTFail("no reference") }
        XCTAssertEqual(r.path.segments.suffix(2), ["c", "b"])
        XCTAssertEqual(set.precondition, .exists(false))

        let patch = try serverReads(Mutation(key: key("c/a"), kind: .patch(MapValue(["x": .int(1)]), mask: [fp("x"), fp("y")]),
                                             transforms: [FieldTransform(path: fp("n"), op: .increment(.int(2))),
                                                          FieldTransform(path: fp("at"), op: .serverTimestamp),
                                                          FieldTransform(path: fp("l"), op: .arrayUnion([.int(1)]))],
                                             precondition: .updateTime(77)))
        guard case .patch(let pd, let mask) = patch.kind else { return XCTFail("\(patch.kind)") }
        XCTAssertEqual(pd["x"], .int(1))
        XCTAssertEqual(mask.map { $0.canonical }, ["x", "y"])
        XCTAssertEqual(patch.transforms.count, 3)
        XCTAssertEqual(patch.precondition, .updateTime(77))

        let del = try serverReads(Mutation(key: key("c/a"), kind: .delete))
        guard case .delete = del.kind else { return XCTFail("\(del.kind)") }
    }

    func testAVerifyIsAWriteThatChangesNothingUnderItsPrecondition() throws {
        let unchanged = try serverReads(Mutation(key: key("c/a"), kind: .verify, precondition: .updateTime(5)))
        guard case .patch(let d, let mask) = unchanged.kind else { return XCTFail("\(unchanged.kind)") }
        XCTAssertTrue(d.entries.isEmpty && mask.isEmpty)
        XCTAssertEqual(unchanged.precondition, .updateTime(5))
        let missing = try serverReads(Mutation(key: key("c/a"), kind: .verify, precondition: .exists(false)))
        guard case .delete = missing.kind else { return XCTFail("\(missing.kind)") }
        XCTAssertEqual(missing.precondition, .exists(false))
    }

    func testWriteResultsBecomeMutationResults() throws {
        var r = Google_Firestore_V1_WriteResult()
        XCTAssertEqual(try writes.result(r, commitTime: 9), MutationResult(version: 9), "a delete: no update time, the commit time")
        r.updateTime = WireCodec.timestamp(micros: 4)
        r.transformResults = [codec.wire(.int(3))]
        XCTAssertEqual(try writes.result(r, commitTime: 9), MutationResult(version: 4, transformResults: [.int(3)]),
                       "an unchanged document keeps its update time")
    }
}
