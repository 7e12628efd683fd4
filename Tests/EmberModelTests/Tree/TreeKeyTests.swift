import XCTest
@testable import EmberModel

/// Key order (docs/semantics.md 15) and key validation.
final class TreeKeyTests: XCTestCase {
    func testKeyOrderTable() {
        let expected = ["0", "3", "03", "003", "5", "9", "20", "100", "bar", "foo"]
        for _ in 0..<20 {
            XCTAssertEqual(expected.shuffled().sorted { TreeKey.compare($0, $1) < 0 }, expected)
        }
    }

    func testIntegerKeysAre32BitAndFirst() {
        let expected = ["-2147483648", "-5", "-1", "0", "-0", "1", "2147483647", "-2147483649", "10000000000", "2147483648", "a", "b"]
        XCTAssertEqual(expected.shuffled().sorted { TreeKey.compare($0, $1) < 0 }, expected)
        XCTAssertEqual(TreeKey.int32Value("007"), 7)
        XCTAssertEqual(TreeKey.int32Value("00000000000000001"), 1)      // leading zeros do not count
        XCTAssertNil(TreeKey.int32Value("12345678901"))
        XCTAssertNil(TreeKey.int32Value("1a"))
        XCTAssertNil(TreeKey.int32Value("-"))
        XCTAssertNil(TreeKey.int32Value(""))
        XCTAssertNil(TreeKey.int32Value("+1"))
        XCTAssertNil(TreeKey.int32Value("1.5"))
    }

    func testStringKeysCompareAsJavaScriptDoes() {
        XCTAssertLessThan(TreeKey.compare("Z", "a"), 0)
        XCTAssertLessThan(TreeKey.compare("a", "ab"), 0)
        XCTAssertLessThan(TreeKey.compare("-abc", "_abc"), 0)
        // UTF-16 order: U+FF5E (one unit 0xFF5E) sorts after U+1F600 (surrogates 0xD83D...).
        XCTAssertLessThan(TreeKey.compare("\u{1F600}", "\u{FF5E}"), 0)
        XCTAssertEqual(TreeKey.compare("same", "same"), 0)
    }

    func testValidation() {
        for bad in ["", "a.b", "a$", "#", "a[", "b]", "a/b", "x\u{0}", "x\u{1F}", "x\u{7F}", String(repeating: "k", count: 769)] {
            XCTAssertThrowsError(try TreeKey.validate(bad), bad) { e in
                XCTAssertEqual((e as? EmberError)?.code, .invalidArgument)
            }
        }
        for good in ["a", "-Nabc", "with space", "émoji😀", "0", String(repeating: "k", count: 768)] {
            XCTAssertNoThrow(try TreeKey.validate(good), good)
        }
    }
}
