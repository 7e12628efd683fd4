import XCTest
@testable import EmberModel

/// Query building errors (docs/semantics.md 19) and range matching (18), every operator.
final class TreeQueryTests: XCTestCase {
    func e(_ k: String, _ v: TreeValue = .null) -> ChildEntry { ChildEntry(key: k, sortValue: v) }
    func child(_ p: String) -> TreeIndex { .child(try! TreePath(parsing: p)) }

    func assertInvalid<T>(_ body: () throws -> T, _ fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { err in
            guard let ee = err as? EmberError else { return XCTFail("not an EmberError", file: file, line: line) }
            XCTAssertEqual(ee.code, .invalidArgument, file: file, line: line)
            XCTAssertTrue(ee.message.contains(fragment), "'\(ee.message)' lacks '\(fragment)'", file: file, line: line)
        }
    }

    func testErrors() {
        let q = TreeQuery()
        assertInvalid({ try q.orderBy(.key).orderBy(.value) }, "multiple orderBy")
        assertInvalid({ try q.orderBy(child("a")).orderBy(.key) }, "multiple orderBy")
        assertInvalid({ try TreeQuery.childIndex("$key") }, "$key")
        assertInvalid({ try TreeQuery.childIndex("$value") }, "$value")
        assertInvalid({ try TreeQuery.childIndex("$priority") }, "$priority")
        assertInvalid({ try TreeQuery.childIndex("") }, "empty")
        assertInvalid({ try TreeQuery.childIndex("a.b") }, "Invalid")
        assertInvalid({ try q.limit(0, .first) }, "positive")
        assertInvalid({ try q.limit(-1, .last) }, "positive")
        assertInvalid({ try q.limit(1, .first).limit(2, .last) }, "already set")
        assertInvalid({ try q.start(.at, .int(1), key: nil).start(.exclusive, .int(2), key: nil) }, "Starting point")
        assertInvalid({ try q.end(.at, .int(1), key: nil).end(.exclusive, .int(2), key: nil) }, "Ending point")
        assertInvalid({ try q.start(.at, .int(1), key: nil).equal(.int(1), key: nil) }, "Starting point")
        assertInvalid({ try q.end(.at, .int(1), key: nil).equal(.int(1), key: nil) }, "Ending point")
        assertInvalid({ try q.equal(.int(1), key: nil).start(.at, .int(1), key: nil) }, "Starting point")
        assertInvalid({ try q.equal(.int(1), key: nil).end(.at, .int(1), key: nil) }, "Ending point")
        assertInvalid({ try q.orderBy(.key).start(.at, .int(1), key: nil) }, "must be a string")
        assertInvalid({ try q.start(.at, .int(1), key: nil).orderBy(.key) }, "must be a string")     // checked when the order-by comes
        assertInvalid({ try q.orderBy(.key).end(.at, .string("a"), key: "b") }, "only pass a value")
        assertInvalid({ try q.orderBy(.value).equal(.object(TreeObject(["a": .int(1)])), key: nil) }, "object")
        assertInvalid({ try q.orderBy(.value).start(.at, .int(1), key: "a.b") }, "Invalid")
        // No order-by: the default (priority) index takes priorities: null, numbers, strings.
        XCTAssertThrowsError(try q.start(.at, .bool(true), key: nil).validate())
        XCTAssertNoThrow(try q.start(.at, .int(1), key: nil).validate())
        XCTAssertNoThrow(try q.start(.at, .string("a"), key: nil).validate())
        XCTAssertNoThrow(try q.start(.at, .null, key: "b").end(.at, .null, key: "g").validate())
    }

    func testOrderByKeyRanges() throws {
        let keys = ["0", "3", "03", "003", "5", "9", "20", "100", "bar", "foo"]
        func run(_ q: TreeQuery) -> [String] { keys.filter { q.contains(e($0)) } }
        let k = try TreeQuery().orderBy(.key)
        XCTAssertEqual(run(try k.start(.at, .string("5"), key: nil)), ["5", "9", "20", "100", "bar", "foo"])
        XCTAssertEqual(run(try k.start(.exclusive, .string("5"), key: nil)), ["9", "20", "100", "bar", "foo"])
        XCTAssertEqual(run(try k.end(.at, .string("3"), key: nil)), ["0", "3"])
        XCTAssertEqual(run(try k.end(.exclusive, .string("03"), key: nil)), ["0", "3"])
        XCTAssertEqual(run(try k.equal(.string("bar"), key: nil)), ["bar"])
        XCTAssertEqual(run(try k.start(.exclusive, .string("b"), key: nil).end(.at, .string("m"), key: nil)), ["bar", "foo"])
        XCTAssertEqual(run(try k.start(.exclusive, .string("bar"), key: nil).end(.exclusive, .string("foo"), key: nil)), [])
        // No order-by: priority (null for every child in Ember), then key.
        XCTAssertEqual(run(try TreeQuery().start(.at, .null, key: "bar")), ["bar", "foo"])
        XCTAssertEqual(run(try TreeQuery().start(.at, .null, key: "b").end(.at, .null, key: "g")), ["bar", "foo"])
        XCTAssertEqual(run(try TreeQuery().start(.exclusive, .null, key: "bar")), ["foo"])
        XCTAssertEqual(run(try TreeQuery().start(.at, .null, key: nil)), keys)          // every priority is null
        XCTAssertEqual(run(try TreeQuery().start(.at, .string("bar"), key: nil)), [])   // a priority above null
        XCTAssertEqual(run(try TreeQuery().end(.at, .int(5), key: nil)), keys)          // null sorts before 5
    }

    func testOrderByValueRangesWithAndWithoutKey() throws {
        let data: [(String, TreeValue)] = [("a", .int(1)), ("b", .int(2)), ("c", .int(2)), ("d", .int(3)), ("e", .string("x")), ("f", .null), ("g", .bool(true))]
        let v = try TreeQuery().orderBy(.value)
        func run(_ q: TreeQuery) -> [String] { data.filter { q.contains(e($0.0, $0.1)) }.map { $0.0 } }
        XCTAssertEqual(run(try v.start(.at, .int(2), key: nil)), ["b", "c", "d", "e"])
        XCTAssertEqual(run(try v.start(.exclusive, .int(2), key: nil)), ["d", "e"])                 // skips every child with 2
        XCTAssertEqual(run(try v.start(.exclusive, .int(2), key: "b")), ["c", "d", "e"])            // (value, key) exclusive
        XCTAssertEqual(run(try v.start(.at, .int(2), key: "c")), ["c", "d", "e"])
        XCTAssertEqual(run(try v.end(.at, .int(2), key: nil)), ["a", "b", "c", "f", "g"])
        XCTAssertEqual(run(try v.end(.exclusive, .int(2), key: nil)), ["a", "f", "g"])
        XCTAssertEqual(run(try v.end(.exclusive, .int(2), key: "c")), ["a", "b", "f", "g"])
        XCTAssertEqual(run(try v.end(.at, .int(2), key: "b")), ["a", "b", "f", "g"])
        XCTAssertEqual(run(try v.equal(.int(2), key: nil)), ["b", "c"])
        XCTAssertEqual(run(try v.equal(.int(2), key: "c")), ["c"])
        XCTAssertEqual(run(try v.equal(.null, key: nil)), ["f"])
        XCTAssertEqual(run(try v.start(.at, .bool(true), key: nil).end(.at, .int(1), key: nil)), ["a", "g"])
    }

    func testOrderByNestedChild() throws {
        let idx = child("metrics/views")
        let a = TreeValue.object(TreeObject(["metrics": .object(TreeObject(["views": .int(1200000)]))]))
        let b = TreeValue.object(TreeObject(["metrics": .object(TreeObject(["views": .int(900000)]))]))
        let c = TreeValue.object(TreeObject(["title": .string("no metrics")]))
        let entries = [("ts-functions", a), ("android-arch-3", b), ("c", c)].map { ChildEntry(key: $0.0, sortValue: idx.sortValue(of: $0.1)) }
        XCTAssertEqual(entries.sorted { ChildEntry.compare($0, $1) < 0 }.map { $0.key }, ["c", "android-arch-3", "ts-functions"])
        XCTAssertTrue(idx.indexedValueChanged(a, b))
        XCTAssertFalse(idx.indexedValueChanged(a, .object(TreeObject(["metrics": .object(TreeObject(["views": .int(1200000), "likes": .int(1)]))]))))
    }

    func testDescriptionIdentifiesQueries() throws {
        XCTAssertEqual(TreeQuery().description, "default")
        XCTAssertNotEqual(try TreeQuery().limit(1, .first).description, try TreeQuery().limit(1, .last).description)
        XCTAssertEqual(try TreeQuery().orderBy(.value).limit(2, .last), try TreeQuery().orderBy(.value).limit(2, .last))
    }
}
