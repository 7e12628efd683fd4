import XCTest
import EmberModel

/// UTF8String and sortedDistinctUTF8: equality, hashing and order by UTF-8 bytes, where Swift's
/// String would merge canonically equivalent strings.
final class UTF8StringTests: XCTestCase {
    let precomposed = "\u{E9}", decomposed = "e\u{301}"

    func testCanonicallyEquivalentStringsAreTwoKeys() {
        XCTAssertEqual(precomposed, decomposed, "the premise: Swift's String merges them")
        XCTAssertNotEqual(UTF8String(precomposed), UTF8String(decomposed))
        XCTAssertEqual(Set([UTF8String(precomposed), UTF8String(decomposed), UTF8String("e\u{301}")]).count, 2)
        XCTAssertEqual(UTF8String("abc"), UTF8String(String(Substring("xabc").dropFirst())))
    }

    func testIdenticalOnlyShortCutsEqualityAndSameBytesInlineIsEquality() {
        // The same 16 bytes: the same small string, or the same storage.
        let long = String(repeating: "k", count: 40)
        XCTAssertTrue(UTF8String.identical(UTF8String("score"), UTF8String("score")))
        XCTAssertTrue(UTF8String.identical(UTF8String(long), UTF8String(long)))
        XCTAssertFalse(UTF8String.identical(UTF8String("score"), UTF8String("scorf")))
        XCTAssertFalse(UTF8String.identical(UTF8String(precomposed), UTF8String(decomposed)))
        // The same bytes in two storages are not identical, and still equal (`==` decides).
        let other = String(decoding: Array(long.utf8), as: UTF8.self)
        XCTAssertFalse(UTF8String.identical(UTF8String(long), UTF8String(other)), "two storages")
        XCTAssertEqual(UTF8String(long), UTF8String(other))
        for (a, b) in [("score", "scorf"), ("score", "title"), ("score", "score"), ("", ""), ("", "a"), (precomposed, decomposed),
                       (long, other), (long, long + "x"), ("a\u{301}\u{323}", "a\u{323}\u{301}")] {
            XCTAssertEqual(UTF8String.sameBytesInline(UTF8String(a), UTF8String(b)), UTF8String(a) == UTF8String(b), "\(a) / \(b)")
        }
        XCTAssertFalse(UTF8String.sameBytesInline(UTF8String(precomposed), UTF8String(decomposed)))
    }

    func testOrderIsByteOrder() {
        // 0x65 0xCC 0x81 before 0xC3 0xA9; "z" (0x7A) between them; a prefix first.
        XCTAssertLessThan(UTF8String(decomposed), UTF8String("z"))
        XCTAssertLessThan(UTF8String("z"), UTF8String(precomposed))
        XCTAssertLessThan(UTF8String("e"), UTF8String(decomposed))
    }

    func testLastWinsKeepsTheLastOfEachByteSequenceInByteOrder() {
        let ascending = lastWinsByUTF8([(key: "a", value: 1), (key: decomposed, value: 2), (key: precomposed, value: 3)])
        XCTAssertEqual(ascending.map { $0.value }, [1, 2, 3])
        let mixed = lastWinsByUTF8([(key: precomposed, value: 1), (key: "a", value: 2), (key: decomposed, value: 3), (key: precomposed, value: 4), (key: "a", value: 5)])
        XCTAssertEqual(mixed.map { Array($0.key.utf8) }, [[0x61], Array(decomposed.utf8), Array(precomposed.utf8)])
        XCTAssertEqual(mixed.map { $0.value }, [5, 3, 4])
        XCTAssertEqual(lastWinsByUTF8([(key: "x", value: 1), (key: "x", value: 2)]).map { $0.value }, [2])
        XCTAssertTrue(lastWinsByUTF8([(key: String, value: Int)]()).isEmpty)
    }

    func testSortedDistinctKeepsEachByteSequenceOnce() {
        let out = sortedDistinctUTF8([precomposed, "z", decomposed, precomposed, "e", decomposed])
        XCTAssertEqual(out.map { Array($0.utf8) }, [[0x65], [0x65, 0xCC, 0x81], [0x7A], [0xC3, 0xA9]])
        XCTAssertEqual(sortedDistinctUTF8([String]()), [])
    }
}
