import XCTest
import EmberModel
@testable import EmberStorage

/// The memory TreeStore: subtree reads and writes, leaf counting, and Persistence's default.
final class MemoryTreeStoreTests: XCTestCase {
    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }
    func obj(_ d: [String: TreeValue]) -> TreeValue { .object(TreeObject(d)) }

    func testReadWriteSubtrees() {
        let s = MemoryTreeStore()
        s.write(p("posts/a"), obj(["title": .string("Hi"), "n": .int(1)]))
        s.write(p("posts/b/title"), .string("Yo"))
        XCTAssertEqual(s.leafCount, 3)
        XCTAssertEqual(s.read(p("posts/a/n")), .int(1))
        XCTAssertEqual(s.read(p("posts")).childCount, 2)
        s.write(p("posts/a"), .null)
        XCTAssertEqual(s.leafCount, 1)
        XCTAssertTrue(s.read(p("posts/a")).isNull)
        s.write(p("posts/b/title/deeper"), .int(5))       // the leaf on the way becomes an object
        XCTAssertEqual(s.leafCount, 1)
        XCTAssertEqual(s.read(p("posts/b/title/deeper")), .int(5))
        s.write(.root, .null)
        XCTAssertEqual(s.leafCount, 0)
        XCTAssertTrue(s.read(.root).isNull)
    }

    func testMemoryPersistenceHasABackendTree() {
        XCTAssertNotNil(MemoryPersistence().backendTree)
    }
}
