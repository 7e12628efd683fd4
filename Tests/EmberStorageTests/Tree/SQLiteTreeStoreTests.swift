import XCTest
import EmberModel
@testable import EmberStorage

/// The SQLite TreeStore and the client's stored tree: subtree reads and writes as the memory
/// store does them (randomized comparison), leaf types, key prefixes that are not ancestors,
/// reopen round trips of the backend tree, the client cache, complete paths and pending writes,
/// and the codec of pending writes.
final class SQLiteTreeStoreTests: XCTestCase {
    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }
    func obj(_ d: [String: TreeValue]) -> TreeValue { .object(TreeObject(d)) }

    func testReadWriteSubtreesLikeTheMemoryStore() throws {
        let dir = TempDir("ember-tree")
        let db = try SQLitePersistence(path: dir.file())
        defer { db.close() }
        let s = db.backendTree!
        try! db.runTransaction("t") { s.write(p("posts/a"), obj(["title": .string("Hi"), "n": .int(1)])) }
        s.write(p("posts/b/title"), .string("Yo"))
        XCTAssertEqual(s.leafCount, 3)
        XCTAssertEqual(s.read(p("posts/a/n")), .int(1))
        XCTAssertEqual(s.read(p("posts")).childCount, 2)
        s.write(p("posts/a"), .null)
        XCTAssertEqual(s.leafCount, 1)
        XCTAssertTrue(s.read(p("posts/a")).isNull)
        XCTAssertFalse(s.exists(p("posts/a")))
        XCTAssertTrue(s.exists(p("posts")))
        s.write(p("posts/b/title/deeper"), .int(5))       // the leaf on the way becomes an object
        XCTAssertEqual(s.leafCount, 1)
        XCTAssertEqual(s.read(p("posts/b/title/deeper")), .int(5))
        s.write(.root, .int(7))                            // the root itself may be a leaf
        XCTAssertEqual(s.read(.root), .int(7))
        s.write(p("x"), .bool(true))
        XCTAssertEqual(s.read(.root), obj(["x": .bool(true)]))
        s.write(.root, .null)
        XCTAssertEqual(s.leafCount, 0)
        XCTAssertTrue(s.read(.root).isNull)
    }

    func testLeafTypesAndPrefixKeys() throws {
        let dir = TempDir("ember-tree")
        let db = try SQLitePersistence(path: dir.file())
        defer { db.close() }
        let s = db.backendTree!
        let v = obj(["a": .bool(false), "ab": .double(1.0), "a b": .string("s"), "é": .int(-3), "a-": .double(2.5), "big": .int(Int64.max)])
        s.write(p("t"), v)
        XCTAssertEqual(s.read(p("t")), v)
        guard case .double = s.read(p("t/ab")) else { return XCTFail("1.0 stays a double") }
        guard case .bool(false) = s.read(p("t/a")) else { return XCTFail("false stays a boolean") }
        s.write(p("t/a"), .null)                           // "ab", "a b", "a-" are not under "a"
        XCTAssertEqual(s.read(p("t")).childCount, 5)
        XCTAssertEqual(s.read(p("t/ab")), .double(1))
    }

    func testRandomWritesMatchTheMemoryStore() throws {
        let dir = TempDir("ember-tree")
        let db = try SQLitePersistence(path: dir.file())
        defer { db.close() }
        let s = db.backendTree!
        let m = MemoryTreeStore()
        var rng = SystemRandomNumberGenerator()
        let keys = ["a", "b", "ab", "0", "1", "10"]
        func randomPath() -> TreePath { TreePath(unchecked: (0..<Int.random(in: 0...3, using: &rng)).map { _ in keys.randomElement(using: &rng)! }) }
        func randomValue(_ depth: Int) -> TreeValue {
            switch Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &rng) {
            case 0: return .null
            case 1: return .int(Int64.random(in: -5...5, using: &rng))
            case 2: return .string(keys.randomElement(using: &rng)!)
            case 3: return .bool(Bool.random(using: &rng))
            default:
                var d: [String: TreeValue] = [:]
                for _ in 0..<Int.random(in: 1...3, using: &rng) { d[keys.randomElement(using: &rng)!] = randomValue(depth + 1) }
                let o = TreeObject(d)
                return o.isEmpty ? .null : .object(o)
            }
        }
        for i in 0..<400 {
            let path = randomPath(), v = randomValue(path.count)
            try! db.runTransaction("w") { s.write(path, v) }
            m.write(path, v)
            let probe = randomPath()
            XCTAssertEqual(s.read(probe), m.read(probe), "step \(i): read \(probe) after writing \(v) at \(path)")
            XCTAssertEqual(s.exists(probe), m.exists(probe))
        }
        XCTAssertEqual(s.read(.root), m.read(.root))
        XCTAssertEqual(s.leafCount, m.leafCount)
    }

    func testBackendTreeAndClientStateSurviveReopen() throws {
        let dir = TempDir("ember-tree")
        var db: SQLitePersistence? = try SQLitePersistence(path: dir.file())
        let ops = [TreeWriteOp(path: p("list/x"), value: obj(["n": .int(1), "s": .string("é")])), TreeWriteOp(path: p("other"), value: .null)]
        try! db!.runTransaction("w") {
            db!.backendTree!.write(p("posts"), obj(["a": .int(1), "b": obj(["c": .double(0.5)])]))
            db!.clientTree!.cache.write(p("posts/a"), .int(1))
            db!.clientTree!.markComplete(p("posts/a"))
            db!.clientTree!.markComplete(p("x/y"))
            db!.clientTree!.markComplete(p("x"))                // covers x/y: that record goes
            db!.clientTree!.markComplete(p("x/z"))              // covered by x: nothing to record
            db!.clientTree!.addPendingWrite(id: 3, ops)
            db!.clientTree!.addPendingWrite(id: 4, [TreeWriteOp(path: .root, value: .bool(true))])
            db!.clientTree!.removePendingWrite(id: 4)
        }
        db!.close()
        db = nil
        let again = try SQLitePersistence(path: dir.file())
        defer { again.close() }
        XCTAssertEqual(again.backendTree!.read(p("posts")), obj(["a": .int(1), "b": obj(["c": .double(0.5)])]))
        let c = again.clientTree!
        XCTAssertEqual(c.cache.read(.root), obj(["posts": obj(["a": .int(1)])]))
        XCTAssertEqual(Set(c.completePaths()), [p("posts/a"), p("x")])
        let pending = c.pendingWrites()
        XCTAssertEqual(pending.map { $0.id }, [3])
        XCTAssertEqual(pending[0].ops.map { $0.path }, ops.map { $0.path })
        XCTAssertEqual(pending[0].ops.map { $0.value }, ops.map { $0.value })
        XCTAssertEqual(c.lastWriteId(), 4, "ids are never reused")
        XCTAssertNil(again.failure)
    }

    func testCodecRoundTripAndDamage() throws {
        let v = obj(["a": .int(-1), "b": .double(-0.25), "c": .string("x\u{1F600}"), "d": .bool(true), "e": obj(["f": .bool(false)])])
        XCTAssertEqual(try TreeCodec.decodeValue(TreeCodec.encode(v)), v)
        let ops = [TreeWriteOp(path: p("a/b"), value: v), TreeWriteOp(path: .root, value: .null)]
        let back = try TreeCodec.decodeOps(TreeCodec.encode(ops))
        XCTAssertEqual(back.map { $0.path }, ops.map { $0.path })
        XCTAssertEqual(back.map { $0.value }, ops.map { $0.value })
        let bytes = TreeCodec.encode(ops)
        for cut in [1, 5, bytes.count / 2, bytes.count - 1] {
            XCTAssertThrowsError(try TreeCodec.decodeOps(bytes.prefix(cut))) { XCTAssertEqual(errorCode($0), .dataLoss) }
        }
        XCTAssertThrowsError(try TreeCodec.decodeValue([9]))
    }
}
