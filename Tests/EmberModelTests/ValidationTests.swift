// Tests for Validation.swift: DocumentLimits (depth, nested arrays, field names, 1 MiB size).
import XCTest
@testable import EmberModel

final class ValidationTests: XCTestCase {

    /// A document whose deepest field path has `depth` segments: {f1: {f2: ... {f<depth>: 1}}}.
    func nested(depth: Int, leaf: Value = .int(1)) -> MapValue {
        var v = leaf
        for i in stride(from: depth, to: 1, by: -1) { v = map(["f\(i)": v]) }
        return MapValue(["f1": v])
    }

    /// The Firestore emulator's answers (probed 2026-11-22, google-cloud-firestore set()):
    /// nested(21) ok, nested(22) rejected; nested(20, {}) ok, nested(21, {}) rejected;
    /// nested(20, [1]) ok, nested(21, [1]) rejected; nested(19, [{}]) ok. That is: at most 20
    /// maps or arrays inside one another below the document.
    func testTwentyNestedContainersAreAcceptedAndTwentyOneRejected() {
        let k = key("c/d")
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: nested(depth: 1)))
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: nested(depth: 21)))
        assertInvalid("more than 20 levels", "f1.f2.f3") { try DocumentLimits.validate(key: k, data: nested(depth: 22)) }
        assertInvalid("more than 20 levels") { try DocumentLimits.validate(key: k, data: nested(depth: 30)) }
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: nested(depth: 20, leaf: .map(MapValue()))))
        assertInvalid("more than 20 levels") { try DocumentLimits.validate(key: k, data: nested(depth: 21, leaf: .map(MapValue()))) }
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: nested(depth: 20, leaf: arr(.int(1)))))
        assertInvalid("more than 20 levels") { try DocumentLimits.validate(key: k, data: nested(depth: 21, leaf: arr(.int(1)))) }
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: nested(depth: 19, leaf: arr(map([:])))))
        assertInvalid("more than 20 levels") { try DocumentLimits.validate(key: k, data: nested(depth: 20, leaf: arr(map([:])))) }
    }

    func testFreeStandingValueDepth() {
        var v: Value = .int(1)
        for _ in 0..<20 { v = map(["x": v]) }
        XCTAssertNoThrow(try DocumentLimits.validate(value: v))
        assertInvalid("more than 20 levels") { try DocumentLimits.validate(value: map(["x": v])) }
    }

    func testNestedArraysAreRejected() {
        let k = key("c/d")
        assertInvalid("nested arrays", "tags") { try DocumentLimits.validate(key: k, data: MapValue(["tags": arr(arr(.int(1)))])) }
        assertInvalid("nested arrays", "a.b") { try DocumentLimits.validate(key: k, data: MapValue(["a": map(["b": arr(.int(1), arr())])])) }
        assertInvalid("nested arrays") { try DocumentLimits.validate(value: arr(arr())) }
        // An array inside a map inside an array is fine.
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: MapValue(["a": arr(map(["b": arr(.int(1))]))])))
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: MapValue(["a": arr(.int(1), str("x"), .null)])))
    }

    func testEmptyFieldNameIsRejected() {
        let k = key("c/d")
        assertInvalid("Empty field name", "document") { try DocumentLimits.validate(key: k, data: MapValue(["": .int(1)])) }
        assertInvalid("Empty field name", "'a'") { try DocumentLimits.validate(key: k, data: MapValue(["a": map(["": .int(1)])])) }
        assertInvalid("Empty field name") { try DocumentLimits.validate(key: k, data: MapValue(["a": arr(map(["": .null]))])) }
    }

    func testFieldNameLengthLimit() {
        let k = key("c/d")
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: MapValue([String(repeating: "n", count: 1_500): .int(1)])))
        assertInvalid("longer than 1500 bytes") { try DocumentLimits.validate(key: k, data: MapValue([String(repeating: "n", count: 1_501): .int(1)])) }
    }

    func testNameSize() {
        // Firestore: the sum of (segment bytes + 1) plus 16.
        XCTAssertEqual(DocumentLimits.nameSize(path("c/d")), 16 + 2 + 2)
        XCTAssertEqual(DocumentLimits.nameSize(path("users/jeff/tasks/my_task_id")), 16 + 6 + 5 + 6 + 11)
    }

    func testSizeLimitIsOneMiBInclusive() {
        // key "c/d" is 20 bytes, the document overhead 32, field "s" 2, and a string its bytes + 1:
        // total = n + 55.
        let k = key("c/d")
        let n = DocumentLimits.maxDocumentBytes - 55
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: MapValue(["s": str(String(repeating: "x", count: n))])), "exactly 1 MiB is allowed")
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: MapValue(["s": str(String(repeating: "x", count: n - 1))])))
        assertInvalid("1048577 bytes", "1048576", "c/d") {
            try DocumentLimits.validate(key: k, data: MapValue(["s": str(String(repeating: "x", count: n + 1))]))
        }
        // Bytes values count their length without a terminator: one more byte than the string.
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: MapValue(["s": .bytes([UInt8](repeating: 1, count: n + 1))])))
        assertInvalid("larger than the maximum") { try DocumentLimits.validate(key: k, data: MapValue(["s": .bytes([UInt8](repeating: 1, count: n + 2))])) }
    }

    func testSizeCountsEveryValueKind() throws {
        // Sizes per Firestore's storage-size formula, checked through the exact limit.
        let k = key("c/d")
        let fields: [String: Value] = [
            "n": .null, "b": .bool(true), "i": .int(1), "d": .double(1), "t": ts(0), "g": geo(0, 0),
            "r": ref("a/b"), "a": arr(.int(1), str("ab")), "m": map(["x": .int(1)]),
        ]
        // names: 9 fields * 2 bytes; values: 1 + 1 + 8 + 8 + 8 + 16 + 20 + (8 + 3) + (2 + 8)
        let expectedFields = 9 * 2 + 1 + 1 + 8 + 8 + 8 + 16 + 20 + 11 + 10
        let padding = DocumentLimits.maxDocumentBytes - 20 - 32 - expectedFields - 2 - 1   // field "p" and its string's + 1
        var data = MapValue(fields)
        data["p"] = str(String(repeating: "x", count: padding))
        XCTAssertNoThrow(try DocumentLimits.validate(key: k, data: data))
        data["p"] = str(String(repeating: "x", count: padding + 1))
        assertInvalid("larger than the maximum") { try DocumentLimits.validate(key: k, data: data) }
    }

    func testLongerKeysLeaveLessRoom() {
        let n = DocumentLimits.maxDocumentBytes - 55
        let data = MapValue(["s": str(String(repeating: "x", count: n))])
        XCTAssertNoThrow(try DocumentLimits.validate(key: key("c/d"), data: data))
        assertInvalid("larger than the maximum") { try DocumentLimits.validate(key: key("c/dd"), data: data) }
    }
}
