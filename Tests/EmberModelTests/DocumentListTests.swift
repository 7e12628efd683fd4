// Tests for DocumentList.swift: the chunked list behaves like an array under random inserts,
// removes and replacements, copies are unaffected by later changes, and partitionIndex finds
// the same position as a linear scan.
import XCTest
@testable import EmberModel

final class DocumentListTests: XCTestCase {

    private func doc(_ i: Int) -> Document {
        Document(key: try! DocumentKey(parsing: "c/d\(i)"), data: MapValue(["n": .int(Int64(i))]), version: 1, createTime: 1, updateTime: 1)
    }

    private func ids(_ l: DocumentList) -> [String] { l.map { $0.key.id } }
    private func ids(_ a: [Document]) -> [String] { a.map { $0.key.id } }

    func testRandomEditsMatchAnArrayAndCopiesStayAsTheyWere() {
        var rng = SystemRandomNumberGenerator()
        var list = DocumentList()
        var model: [Document] = []
        var copies: [(DocumentList, [String])] = []
        for step in 0..<5_000 {
            let r = Int(rng.next(upperBound: 10 as UInt))
            if model.isEmpty || r < 5 {
                let i = Int(rng.next(upperBound: UInt(model.count + 1)))
                let d = doc(step)
                list.insert(d, at: i); model.insert(d, at: i)
            } else if r < 8 {
                let i = Int(rng.next(upperBound: UInt(model.count)))
                XCTAssertEqual(list.remove(at: i).key, model.remove(at: i).key)
            } else {
                let i = Int(rng.next(upperBound: UInt(model.count)))
                let d = doc(100_000 + step)
                list.replace(at: i, with: d); model[i] = d
            }
            XCTAssertEqual(list.count, model.count)
            if step % 97 == 0 { copies.append((list, ids(model))) }
            if step % 499 == 0 { XCTAssertEqual(ids(list), ids(model), "step \(step)") }
        }
        XCTAssertEqual(ids(list), ids(model))
        for (copy, expected) in copies { XCTAssertEqual(ids(copy), expected) }
    }

    func testBuildsFromASequenceAndSplitsLargeChunks() {
        let docs = (0..<1_000).map(doc)
        var list = DocumentList(docs)
        XCTAssertEqual(ids(list), ids(docs))
        for i in 0..<500 { list.insert(doc(5_000 + i), at: 10) }   // one chunk grows past 2x64 and splits
        XCTAssertEqual(list.count, 1_500)
        XCTAssertEqual(list[10].key.id, "d5499")
        XCTAssertEqual(list[509].key.id, "d5000")
        XCTAssertEqual(list[510].key.id, "d10")
        XCTAssertEqual(list.last?.key.id, "d999")
        while !list.isEmpty { list.remove(at: list.count / 2) }
        XCTAssertEqual(list.count, 0)
        list.insert(doc(1), at: 0)
        XCTAssertEqual(ids(list), ["d1"])
    }

    func testPartitionIndexMatchesALinearScan() {
        let list = DocumentList((0..<700).map { doc($0 * 2) })
        for target in -1...1_401 {
            let before: (Document) -> Bool = { Value.compare($0.data["n"]!, .int(Int64(target))) < 0 }
            let expected = list.firstIndex { !before($0) } ?? list.count
            XCTAssertEqual(list.partitionIndex(before), expected, "target \(target)")
        }
        XCTAssertEqual(DocumentList().partitionIndex { _ in true }, 0)
    }

    func testPrefixAndSuffixWindows() {
        let list = DocumentList((0..<200).map(doc))
        XCTAssertEqual(ids(list.prefix(count: 3)), ["d0", "d1", "d2"])
        XCTAssertEqual(ids(list.suffix(count: 2)), ["d198", "d199"])
        XCTAssertEqual(list.prefix(count: 500).count, 200)
        XCTAssertEqual(list.suffix(count: 200).count, 200)
    }
}
