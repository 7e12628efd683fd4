// Tests for ResourcePath.swift: parsing and validating resource paths, DocumentKey, and their order.
import XCTest
@testable import EmberModel

final class ResourcePathTests: XCTestCase {

    func testParsesCollectionAndDocumentPaths() throws {
        let c = try ResourcePath(parsing: "cities")
        XCTAssertEqual(c.segments, ["cities"])
        XCTAssertTrue(c.isCollectionPath)
        XCTAssertFalse(c.isDocumentPath)

        let d = try ResourcePath(parsing: "cities/SF")
        XCTAssertEqual(d.segments, ["cities", "SF"])
        XCTAssertTrue(d.isDocumentPath)
        XCTAssertFalse(d.isCollectionPath)

        let sub = try ResourcePath(parsing: "cities/SF/landmarks")
        XCTAssertTrue(sub.isCollectionPath)
        XCTAssertEqual(sub.count, 3)
        XCTAssertTrue(try ResourcePath(parsing: "cities/SF/landmarks/gg").isDocumentPath)

        let empty = ResourcePath(segments: [])
        XCTAssertTrue(empty.isEmpty)
        XCTAssertFalse(empty.isCollectionPath)
        XCTAssertFalse(empty.isDocumentPath)
    }

    func testAcceptsUnusualButValidIds() throws {
        for s in ["a/ b ", "a/...", "a/_x_", "a/__x", "a/x__", "a/___", "a/\u{1F600}", "a/a.b", "a/-", "a/__"] {
            XCTAssertNoThrow(try ResourcePath(parsing: s), s)
        }
    }

    func testRejectsEmptySegments() {
        assertInvalid("non-empty") { try ResourcePath(parsing: "") }
        XCTAssertEqual(try ResourcePath(parsing: "/a").segments, ["a"])
        // One leading and one trailing slash are ignored, as the Apple and C++ SDKs do.
        XCTAssertEqual(try ResourcePath(parsing: "a/").segments, ["a"])
        XCTAssertEqual(try ResourcePath(parsing: "/a/b/").segments, ["a", "b"])
        assertInvalid("empty segment") { try ResourcePath(parsing: "/") }
        assertInvalid("must not contain //") { try ResourcePath(parsing: "//") }
        assertInvalid("must not contain //") { try ResourcePath(parsing: "a//b") }
    }

    func testRejectsDotAndDotDot() {
        assertInvalid("'.'") { try ResourcePath(parsing: "a/.") }
        assertInvalid("'..'") { try ResourcePath(parsing: "a/../b") }
        assertInvalid("'.'") { try ResourcePath(parsing: "./b") }
    }

    func testRejectsReservedIds() {
        assertInvalid("__x__", "reserved") { try ResourcePath(parsing: "a/__x__") }
        assertInvalid("reserved") { try ResourcePath(parsing: "__name__") }
        assertInvalid("reserved") { try ResourcePath(parsing: "a/_____") }
        assertInvalid("reserved") { try ResourcePath(parsing: "__a__/b") }
        assertInvalid("reserved") { try ResourcePath(parsing: "a/__id05__") }   // not a canonical number
        assertInvalid("reserved") { try ResourcePath(parsing: "a/__id__") }
        assertInvalid("reserved") { try ResourcePath(parsing: "a/__id1.5__") }
    }

    /// As the Firestore emulator: `____` (nothing between the underscores) is an id, and numeric
    /// ids `__id<int64>__` are not reserved; they order before every other id, by number.
    func testNumericIdsAreValidAndOrderFirst() throws {
        XCTAssertNoThrow(try ResourcePath(parsing: "a/____"))
        XCTAssertNoThrow(try ResourcePath(parsing: "a/__id-9223372036854775808__/b/__id9223372036854775807__"))
        XCTAssertEqual(ResourcePath.numericId("__id-5__"), -5)
        XCTAssertEqual(ResourcePath.numericId("__id0__"), 0)
        XCTAssertNil(ResourcePath.numericId("__id9223372036854775808__"))   // past Int64
        XCTAssertNil(ResourcePath.numericId("__id+5__"))
        XCTAssertNil(ResourcePath.numericId("_id5__"))
        let ordered = ["a/__id-9223372036854775808__", "a/__id-1__", "a/__id2__", "a/__id10__", "a/\u{0}", "a/A", "a/__x", "a/b"]
        for (i, x) in ordered.enumerated() {
            for (j, y) in ordered.enumerated() {
                XCTAssertEqual(path(x).compare(path(y)), i < j ? -1 : (i > j ? 1 : 0), "\(x) vs \(y)")
            }
        }
    }

    /// Other ids order by their UTF-8 bytes, short (inline) and long (heap) strings alike, with
    /// canonically equivalent ids apart; an id starting with '_' that is not numeric among them.
    func testIdsOrderByTheirBytes() throws {
        let long = String(repeating: "b", count: 20)
        let ordered = ["a/__id7__", "a/_", "a/_" + long, "a/" + long, "a/" + long + "c", "a/e\u{301}",
                       "a/e\u{301}" + long, "a/\u{E9}", "a/\u{E9}" + long, "a/\u{1F600}"]
        for (i, x) in ordered.enumerated() {
            for (j, y) in ordered.enumerated() {
                XCTAssertEqual(path(x).compare(path(y)), i < j ? -1 : (i > j ? 1 : 0), "\(x) vs \(y)")
                XCTAssertEqual(path(x) == path(y), i == j, "\(x) vs \(y)")
            }
        }
    }

    /// A key built with its collection's hash given is the key parsed from the same path.
    func testAKeyGivenItsCollectionsHashIsTheSameKey() throws {
        for p in ["c/a", "c/b", "rooms/r1/messages/m1", "c/\u{0}x", "é/\u{301}e"] {
            let k = try DocumentKey(parsing: p)
            let given = DocumentKey(unchecked: k.path, parentHash: DocumentKey.parentHash(of: k.collectionPath))
            XCTAssertEqual(given, k)
            XCTAssertEqual(given.precomputedHash, k.precomputedHash, p)
            XCTAssertEqual(Set([given, k]).count, 1)
        }
    }

    /// Segments that share their representation (one small string, or one large string's
    /// storage) are skipped as equal; copies made apart compare by their bytes: both give the
    /// same order.
    func testSharedAndSeparateSegmentsCompareAlike() {
        let long = String(repeating: "c", count: 40)
        let segs = ["a", "b", long, long + "d", "\u{E9}" + long, "_x", "__id3__"]
        func copy(_ s: String) -> String { String(decoding: Array(s.utf8), as: UTF8.self) }
        for x in segs {
            for y in segs {
                for z in segs {
                    let shared = ResourcePath(segments: [x, y]), alike = ResourcePath(segments: [copy(x), z])
                    let byBytes = ResourcePath(segments: [copy(x), copy(y)])
                    XCTAssertEqual(shared.compare(alike), byBytes.compare(ResourcePath(segments: [copy(x), copy(z)])), "\(x)/\(y) vs \(x)/\(z)")
                    XCTAssertEqual(shared.compare(ResourcePath(segments: [x, z])), byBytes.compare(ResourcePath(segments: [copy(x), copy(z)])))
                }
            }
        }
        XCTAssertEqual(ResourcePath(segments: [long, "b"]).compare(ResourcePath(segments: [copy(long), "b"])), 0)
        XCTAssertEqual(ResourcePath(segments: [long, "a"]).compare(ResourcePath(segments: [long, "b"])), -1)
    }

    /// Firestore's limits (issue 10.4): an id is at most 1,500 bytes; a document name at most 6 KiB
    /// counted as Firestore counts a name's size (each id plus 1, plus 16). The emulator refuses an
    /// id of 1,501 bytes ("The key path element name is longer than 1500 bytes.") and does not
    /// enforce the name limit; Ember follows the documented one.
    func testIdAndNameLimits() throws {
        XCTAssertNoThrow(try ResourcePath(parsing: "c/" + String(repeating: "x", count: 1_500)))
        assertInvalid("1500") { try ResourcePath(parsing: "c/" + String(repeating: "x", count: 1_501)) }
        // Bytes, not characters: 501 three-byte characters are 1,503 bytes.
        assertInvalid("1500") { try ResourcePath(parsing: "c/" + String(repeating: "\u{FF61}", count: 501)) }
        // A path longer than 1,500 bytes is fine while each id is short enough.
        let long = (0..<4).map { _ in String(repeating: "p", count: 1_400) }.joined(separator: "/")
        XCTAssertEqual(try ResourcePath(parsing: long).segments.count, 4)
        // Name size: 16 + sum(id + 1). Four ids of 1,500 bytes and one of 60: 16 + 4 * 1,501 + 61 = 6,081.
        let four = (0..<4).map { _ in String(repeating: "n", count: 1_500) }.joined(separator: "/")
        XCTAssertNoThrow(try ResourcePath(parsing: four + "/" + String(repeating: "d", count: 60)))
        // 16 + 4 * 1,501 + 124 = 6,144: the largest name; one byte more is refused.
        XCTAssertNoThrow(try ResourcePath(parsing: four + "/" + String(repeating: "d", count: 123)))
        assertInvalid("6144") { try ResourcePath(parsing: four + "/" + String(repeating: "d", count: 124)) }
    }

    func testValidateSegment() {
        XCTAssertNoThrow(try ResourcePath.validateSegment("SF"))
        assertInvalid("empty") { try ResourcePath.validateSegment("") }
        assertInvalid("'/'") { try ResourcePath.validateSegment("a/b") }
        assertInvalid("'.'") { try ResourcePath.validateSegment(".") }
        assertInvalid("'..'") { try ResourcePath.validateSegment("..") }
        assertInvalid("reserved") { try ResourcePath.validateSegment("__id__") }
        assertInvalid("1500") { try ResourcePath.validateSegment(String(repeating: "y", count: 1_501)) }
        XCTAssertNoThrow(try ResourcePath.validateSegment(String(repeating: "y", count: 1_500)))
    }

    func testAccessors() throws {
        let p = try ResourcePath(parsing: "a/b/c")
        XCTAssertEqual(p.canonical, "a/b/c")
        XCTAssertEqual(p.description, "a/b/c")
        XCTAssertEqual(p.last, "c")
        XCTAssertEqual(p.parent, try ResourcePath(parsing: "a/b"))
        XCTAssertEqual(p.appending("d").canonical, "a/b/c/d")
        XCTAssertNil(ResourcePath(segments: []).parent)
        XCTAssertEqual(ResourcePath(segments: []).last, "")
        XCTAssertEqual(ResourcePath(segments: ["a"]).parent, ResourcePath(segments: []))
    }

    func testIsPrefix() throws {
        let a = try ResourcePath(parsing: "a/b")
        XCTAssertTrue(a.isPrefix(of: try ResourcePath(parsing: "a/b/c")))
        XCTAssertTrue(a.isPrefix(of: a))
        XCTAssertFalse(a.isPrefix(of: try ResourcePath(parsing: "a")))
        XCTAssertFalse(a.isPrefix(of: try ResourcePath(parsing: "a/bc")))
        XCTAssertTrue(ResourcePath(segments: []).isPrefix(of: a))
        XCTAssertFalse(ResourcePath(segments: ["c", "\u{E9}"]).isPrefix(of: ResourcePath(segments: ["c", "e\u{301}", "x"])))
    }

    func testCompareIsSegmentBySegmentByUTF8() throws {
        func cmp(_ a: String, _ b: String) throws -> Int { try ResourcePath(parsing: a).compare(ResourcePath(parsing: b)) }
        XCTAssertEqual(try cmp("a/b", "a/b"), 0)
        XCTAssertEqual(try cmp("a", "a/b"), -1)
        XCTAssertEqual(try cmp("a/b/c", "a/c"), -1)
        XCTAssertEqual(try cmp("a/z", "a-b/c"), -1, "segment 'a' is a prefix of 'a-b', whatever '/' vs '-' says")
        XCTAssertEqual(try cmp("c/\u{FF61}", "c/\u{1F600}"), -1)
        XCTAssertEqual(try cmp("c/B", "c/a"), -1)
        XCTAssertEqual(try cmp("c/b", "c/a"), 1)
    }

    func testEqualityAndHashAreByBytes() {
        // Swift's String == uses canonical equivalence; Firestore ids are compared byte for byte.
        let a = ResourcePath(segments: ["c", "\u{E9}"]), b = ResourcePath(segments: ["c", "e\u{301}"])
        XCTAssertNotEqual(a.compare(b), 0)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(Set([a, b]).count, 2)
        XCTAssertEqual(a, ResourcePath(segments: ["c", "\u{E9}"]))
        XCTAssertEqual(Set([a, ResourcePath(segments: ["c", "\u{E9}"])]).count, 1)
        // Segment boundaries count: ["ab", "c"] is not ["a", "bc"].
        XCTAssertNotEqual(ResourcePath(segments: ["ab", "c"]), ResourcePath(segments: ["a", "bc"]))
        XCTAssertEqual(Set([ResourcePath(segments: ["ab", "c"]), ResourcePath(segments: ["a", "bc"])]).count, 2)
    }

    // MARK: DocumentKey

    func testDocumentKeyAccessors() throws {
        let k = try DocumentKey(parsing: "cities/SF/landmarks/gg")
        XCTAssertEqual(k.id, "gg")
        XCTAssertEqual(k.collectionPath.canonical, "cities/SF/landmarks")
        XCTAssertEqual(k.collectionGroup, "landmarks")
        XCTAssertEqual(k.description, "cities/SF/landmarks/gg")
        XCTAssertEqual(k.path.segments, ["cities", "SF", "landmarks", "gg"])
        let top = try DocumentKey(parsing: "cities/SF")
        XCTAssertEqual(top.collectionGroup, "cities")
        XCTAssertEqual(top.collectionPath, ResourcePath(segments: ["cities"]))
    }

    func testDocumentKeyNeedsAnEvenNumberOfSegments() {
        assertInvalid("even number of segments", "has 1") { try DocumentKey(parsing: "cities") }
        assertInvalid("even number of segments", "has 3") { try DocumentKey(parsing: "cities/SF/landmarks") }
        assertInvalid("even number") { try DocumentKey(path: ResourcePath(segments: [])) }
        assertInvalid("must not contain //") { try DocumentKey(parsing: "cities//SF") }
        assertInvalid("reserved") { try DocumentKey(parsing: "cities/__x__") }
        XCTAssertNoThrow(try DocumentKey(path: ResourcePath(segments: ["a", "b"])))
    }

    func testDocumentKeyOrderAndEquality() throws {
        let keys = try ["a/b", "a/b/c/d", "a/c", "a-b/a", "b/a"].map { try DocumentKey(parsing: $0) }
        XCTAssertEqual(keys.shuffled().sorted(), keys)
        XCTAssertEqual(try DocumentKey(parsing: "a/b"), try DocumentKey(parsing: "a/b"))
        XCTAssertFalse(try DocumentKey(parsing: "a/b") < DocumentKey(parsing: "a/b"))
        let k1 = try DocumentKey(parsing: "c/\u{E9}"), k2 = try DocumentKey(parsing: "c/e\u{301}")
        XCTAssertNotEqual(k1, k2)
        XCTAssertEqual(Set([k1, k2]).count, 2, "two documents whose ids differ in bytes are two keys")
        XCTAssertTrue(k2 < k1)
    }

    // A "/" followed by a combining mark is still a separator (Swift's characters would join them):
    // Firestore's clients split paths at the "/" code unit.
    func testASlashBeforeACombiningMarkSeparatesSegments() throws {
        XCTAssertEqual(try ResourcePath(parsing: "a/\u{301}b/c/\u{301}d").segments, ["a", "\u{301}b", "c", "\u{301}d"])
        XCTAssertEqual(try ResourcePath(parsing: "/\u{301}a/").segments, ["\u{301}a"])
        XCTAssertEqual(try DocumentKey(parsing: "c/\u{301}x").id, "\u{301}x")
        XCTAssertThrowsError(try ResourcePath(parsing: "a//\u{301}b"), "// inside a path")
        XCTAssertEqual(try ResourcePath(parsing: "/\u{301}").segments, ["\u{301}"], "a leading slash is dropped")
        XCTAssertThrowsError(try ResourcePath.validateSegment("/\u{301}x"), "an id cannot contain '/'")
        XCTAssertTrue(ResourcePath.isReserved("__\u{301}x__"), "reserved by bytes: __.*__")
        XCTAssertFalse(ResourcePath.isReserved("_\u{301}_x__"))
        XCTAssertEqual(splitAtSlashes("a//b"), ["a", "", "b"])
        XCTAssertEqual(splitAtSlashes("/a//\u{301}b/", omittingEmpty: true), ["a", "\u{301}b"])
        XCTAssertEqual(splitAtSlashes(""), [""])
        XCTAssertEqual(splitAtSlashes("", omittingEmpty: true), [])
    }
}
