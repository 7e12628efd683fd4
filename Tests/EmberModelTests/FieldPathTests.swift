// Tests for FieldPath.swift: parsing dotted and backquoted field paths, validation, canonical form.
import XCTest
@testable import EmberModel

final class FieldPathTests: XCTestCase {

    func testParsesDottedPaths() throws {
        XCTAssertEqual(try FieldPath(parsing: "a").segments, ["a"])
        XCTAssertEqual(try FieldPath(parsing: "address.city").segments, ["address", "city"])
        XCTAssertEqual(try FieldPath(parsing: "a.b.c.d").segments, ["a", "b", "c", "d"])
        XCTAssertEqual(try FieldPath(parsing: "with space.\u{E9}-x").segments, ["with space", "\u{E9}-x"])
        XCTAssertEqual(try FieldPath(parsing: "1.2").segments, ["1", "2"])
    }

    func testParsesBackquotedSegments() throws {
        XCTAssertEqual(try FieldPath(parsing: "`a.b`.c").segments, ["a.b", "c"])
        XCTAssertEqual(try FieldPath(parsing: "c.`a.b`").segments, ["c", "a.b"])
        XCTAssertEqual(try FieldPath(parsing: "regions.`bay.area`.pop").segments, ["regions", "bay.area", "pop"])
        XCTAssertEqual(try FieldPath(parsing: "`~*/[]`").segments, ["~*/[]"])
        XCTAssertEqual(try FieldPath(parsing: "`a`").segments, ["a"])
    }

    func testBackquoteEscapes() throws {
        XCTAssertEqual(try FieldPath(parsing: #"`a\`b`"#).segments, ["a`b"])
        XCTAssertEqual(try FieldPath(parsing: #"`a\\b`"#).segments, [#"a\b"#])
        XCTAssertEqual(try FieldPath(parsing: #"`\\`.x"#).segments, [#"\"#, "x"])
        assertInvalid("trailing escape") { try FieldPath(parsing: #"`a\"#) }
    }

    func testDocumentIdPath() throws {
        let p = try FieldPath(parsing: "__name__")
        XCTAssertEqual(p, FieldPath.documentId)
        XCTAssertTrue(p.isDocumentId)
        XCTAssertFalse(try FieldPath(parsing: "a.__name__").isDocumentId)
        XCTAssertFalse(try FieldPath(parsing: "__name__.a").isDocumentId)
        XCTAssertEqual(FieldPath.documentId.canonical, "__name__")
    }

    func testRejectsInvalidPaths() {
        assertInvalid("non-empty") { try FieldPath(parsing: "") }
        assertInvalid("'..'") { try FieldPath(parsing: "a..b") }
        assertInvalid("begin with '.'") { try FieldPath(parsing: ".a") }
        assertInvalid("end with '.'") { try FieldPath(parsing: "a.") }
        assertInvalid("'.'") { try FieldPath(parsing: ".") }
        for bad in ["~", "*", "/", "[", "]", "a~b", "a.b*", "a/b", "a[0]", "x]"] {
            assertInvalid("'~', '*', '/', '[', or ']'") { try FieldPath(parsing: bad) }
        }
        assertInvalid("unterminated backquote") { try FieldPath(parsing: "`a.b") }
        assertInvalid("unterminated backquote") { try FieldPath(parsing: "a.`b") }
        assertInvalid("backquote must open a segment") { try FieldPath(parsing: "a`b`") }
        assertInvalid("after a closing backquote") { try FieldPath(parsing: "`a`b") }
        assertInvalid("backquote must open a segment") { try FieldPath(parsing: "`a``b`") }
    }

    func testRejectsEmptyBackquotedSegment() {
        // A field name cannot be empty (DocumentLimits rejects it, FieldPath([""]) rejects it, and so do the
        // Firebase SDKs), so "``" must not parse to an empty segment either.
        assertInvalid() { try FieldPath([""]) }
        assertInvalid() { try FieldPath(parsing: "``") }
        assertInvalid() { try FieldPath(parsing: "a.``") }
        assertInvalid() { try FieldPath(parsing: "``.a") }
    }

    func testExplicitSegments() throws {
        XCTAssertEqual(try FieldPath(["a.b", "c"]).segments, ["a.b", "c"])
        XCTAssertEqual(try FieldPath(["a.b", "c"]), try FieldPath(parsing: "`a.b`.c"))
        assertInvalid("no segments") { try FieldPath([]) }
        assertInvalid("empty segment") { try FieldPath(["a", ""]) }
    }

    func testLengthLimit() {
        XCTAssertNoThrow(try FieldPath(parsing: String(repeating: "a", count: 1_500)))
        assertInvalid("1500") { try FieldPath(parsing: String(repeating: "a", count: 1_501)) }
        assertInvalid("1500") { try FieldPath([String(repeating: "a", count: 1_000), String(repeating: "b", count: 500)]) }
    }

    func testCanonicalForm() throws {
        XCTAssertEqual(try FieldPath(parsing: "a.b_1.C").canonical, "a.b_1.C")
        XCTAssertEqual(try FieldPath(["a.b", "c"]).canonical, "`a.b`.c")
        XCTAssertEqual(try FieldPath(["1a"]).canonical, "`1a`")
        XCTAssertEqual(try FieldPath(["with space"]).canonical, "`with space`")
        XCTAssertEqual(try FieldPath(["\u{E9}"]).canonical, "`\u{E9}`")
        XCTAssertEqual(try FieldPath(["a`b"]).canonical, #"`a\`b`"#)
        XCTAssertEqual(try FieldPath([#"a\b"#]).canonical, #"`a\\b`"#)
        XCTAssertEqual(try FieldPath(["_x"]).description, "_x")
    }

    func testCanonicalRoundTrip() throws {
        let cases: [[String]] = [["a"], ["a", "b"], ["a.b", "c"], ["1"], ["with space", "x"], ["~*/[]"], ["a`b"],
                                 [#"a\b"#], ["`"], [#"\"#], ["\u{E9}", "e\u{301}"], ["\u{1F600}"], ["__name__", "x"], ["a.", ".b"]]
        for segs in cases {
            let p = try FieldPath(segs)
            let back = try FieldPath(parsing: p.canonical)
            XCTAssertEqual(back.segments, segs, "round trip of \(p.canonical)")
            XCTAssertEqual(back, p)
        }
    }

    func testPrefixAppendAndOrder() throws {
        let a = try FieldPath(parsing: "a")
        XCTAssertTrue(a.isPrefix(of: try FieldPath(parsing: "a.b")))
        XCTAssertFalse(a.isPrefix(of: try FieldPath(parsing: "ab")))
        XCTAssertFalse(try FieldPath(parsing: "a.b").isPrefix(of: a))
        XCTAssertEqual(a.appending("b"), try FieldPath(parsing: "a.b"))
        XCTAssertEqual(a.first, "a")
        XCTAssertEqual(try FieldPath(parsing: "a").compare(FieldPath(parsing: "a.b")), -1)
        XCTAssertEqual(try FieldPath(parsing: "a.z").compare(FieldPath(parsing: "`a.b`")), -1, "segment by segment")
        XCTAssertEqual(try FieldPath(parsing: "B").compare(FieldPath(parsing: "a")), -1)
        XCTAssertEqual(try FieldPath(parsing: "a.b").compare(FieldPath(parsing: "a.b")), 0)
    }

    func testEqualityIsByBytes() throws {
        // Two field names that differ in bytes are two different map keys, so two different paths.
        let a = try FieldPath(["\u{E9}"]), b = try FieldPath(["e\u{301}"])
        XCTAssertNotEqual(a.compare(b), 0)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(Set([a, b]).count, 2)
    }

    // "." and "/" followed by a combining mark are still what they are (Swift's characters would join them).
    func testADotOrSlashBeforeACombiningMarkKeepsItsMeaning() throws {
        XCTAssertEqual(try FieldPath(parsing: "a.\u{301}b").segments, ["a", "\u{301}b"])
        XCTAssertThrowsError(try FieldPath(parsing: "a/\u{301}b"), "'/' outside backquotes")
        XCTAssertEqual(try FieldPath(parsing: "`a.\u{301}b`").segments, ["a.\u{301}b"])
        for segs in [["`\u{301}"], ["x.\u{301}", "\\\u{301}"], ["\u{301}"]] {
            let p = try FieldPath(segs)
            XCTAssertEqual(try FieldPath(parsing: p.canonical).segments, segs, p.canonical)
        }
    }
}
