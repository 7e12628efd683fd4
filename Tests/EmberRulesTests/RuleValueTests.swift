// Tests for RuleValue.swift, RuleValue+Operators.swift and RuleValue+Methods.swift: conversion,
// `is`, equality across numbers, orderings, `in`, arithmetic with its errors, and the methods.
import XCTest
import EmberModel
@testable import EmberRules

final class RuleValueTests: XCTestCase {
    private func v(_ expr: String) throws -> RuleValue { try RulesTestSupport.eval(expr) }
    private func isError(_ expr: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try v(expr), expr, file: file, line: line)
    }

    func testConversionAndTypes() throws {
        let m = RuleValue(.map(MapValue(["a": .array([.int(1), .double(2.5)]), "t": .timestamp(Timestamp(micros: 5)),
                                         "r": .reference(try DocumentKey(parsing: "c/d"))])))
        XCTAssertEqual(m, .map(["a": .list([.int(1), .float(2.5)]), "t": .timestamp(Timestamp(micros: 5)),
                                "r": .path(["databases", "(default)", "documents", "c", "d"])]))
        for (e, t) in [("1", "int"), ("1", "number"), ("1.5", "float"), ("1.5", "number"), ("'s'", "string"), ("true", "bool"),
                       ("null", "null"), ("[1]", "list"), ("{'a': 1}", "map"), ("/a/b", "path"), ("request.time", "timestamp")] {
            XCTAssertEqual(try v("\(e) is \(t)"), .bool(true), "\(e) is \(t)")
        }
        XCTAssertEqual(try v("1 is float"), .bool(false))
        XCTAssertEqual(try v("'1' is int"), .bool(false))
    }

    func testComparisons() throws {
        XCTAssertEqual(try v("1 == 1.0"), .bool(true))
        XCTAssertEqual(try v("1 != '1'"), .bool(true))
        XCTAssertEqual(try v("[1, {'a': null}] == [1.0, {'a': null}]"), .bool(true))
        XCTAssertEqual(try v("2 < 2.5 && 'abc' < 'abd' && 3 >= 3 && 'b' > 'a'"), .bool(true))
        isError("1 < 'a'")
        isError("null < 1")
        XCTAssertEqual(try v("2 in [1, 2]"), .bool(true))
        XCTAssertEqual(try v("'a' in {'a': 1}"), .bool(true))
        XCTAssertEqual(try v("'b' in {'a': 1}"), .bool(false))
        isError("'a' in 'abc'")
    }

    func testArithmetic() throws {
        XCTAssertEqual(try v("7 / 2"), .int(3))
        XCTAssertEqual(try v("7 % 3"), .int(1))
        XCTAssertEqual(try v("7.0 / 2"), .float(3.5))
        XCTAssertEqual(try v("1 + 2 * 3 - 4"), .int(3))
        XCTAssertEqual(try v("'a' + 'b'"), .string("ab"))
        XCTAssertEqual(try v("[1] + [2]"), .list([.int(1), .int(2)]))
        XCTAssertEqual(try v("-(2 + 3)"), .int(-5))
        isError("1 / 0")
        isError("1 % 0")
        isError("9223372036854775807 + 1")
        isError("'a' + 1")
        isError("'a' - 'b'")
    }

    func testStringMethods() throws {
        XCTAssertEqual(try v("'héllo'.size()"), .int(5))
        XCTAssertEqual(try v("'Ab'.lower() + 'Ab'.upper()"), .string("abAB"))
        XCTAssertEqual(try v("'a,b,,c'.split(',')"), .list([.string("a"), .string("b"), .string(""), .string("c")]))
        XCTAssertEqual(try v("'abc'.matches('a.c')"), .bool(true))
        XCTAssertEqual(try v("'xabc'.matches('a.c')"), .bool(false))   // the whole string must match
        XCTAssertEqual(try v("'a@b.com'.matches('.*@b[.]com')"), .bool(true))
        XCTAssertEqual(try v("'  x '.trim()"), .string("x"))
        isError("'a'.matches('(')")
        isError("'a'.nope()")
    }

    func testListMethods() throws {
        XCTAssertEqual(try v("[1, 2].size()"), .int(2))
        XCTAssertEqual(try v("[1, 2, 3].hasAll([1, 3])"), .bool(true))
        XCTAssertEqual(try v("[1, 2, 3].hasAll([1, 4])"), .bool(false))
        XCTAssertEqual(try v("[1, 2].hasAny([4, 2])"), .bool(true))
        XCTAssertEqual(try v("[1, 2].hasAny([])"), .bool(false))
        XCTAssertEqual(try v("[1, 2].hasOnly([1, 2, 3])"), .bool(true))
        XCTAssertEqual(try v("[1, 4].hasOnly([1, 2, 3])"), .bool(false))
        XCTAssertEqual(try v("['a', 'b'].join('-')"), .string("a-b"))
        XCTAssertEqual(try v("[1, 1, 2].toSet().size()"), .int(2))
        XCTAssertEqual(try v("[1, 2, 3].removeAll([2])"), .list([.int(1), .int(3)]))
        XCTAssertEqual(try v("[5, 6][1]"), .int(6))
        isError("[5, 6][2]")
    }

    func testMapMethodsAndDiff() throws {
        XCTAssertEqual(try v("{'b': 1, 'a': 2}.keys()"), .list([.string("a"), .string("b")]))
        XCTAssertEqual(try v("{'b': 1, 'a': 2}.values()"), .list([.int(2), .int(1)]))
        XCTAssertEqual(try v("{'a': 1}.size()"), .int(1))
        XCTAssertEqual(try v("{'a': 1}.get('b', 7)"), .int(7))
        XCTAssertEqual(try v("{'a': {'b': 3}}.get(['a', 'b'], 7)"), .int(3))
        XCTAssertEqual(try v("{'a': {'b': 3}}.get(['a', 'c'], 7)"), .int(7))
        XCTAssertEqual(try v("{'a': 1}['a']"), .int(1))
        isError("{'a': 1}['b']")
        isError("{'a': 1}.b")
        let d = "{'a': 1, 'b': 2, 'c': 3}.diff({'a': 1, 'b': 5, 'd': 4})"
        XCTAssertEqual(try v("\(d).addedKeys()"), .list([.string("c")]))
        XCTAssertEqual(try v("\(d).removedKeys()"), .list([.string("d")]))
        XCTAssertEqual(try v("\(d).changedKeys()"), .list([.string("b")]))
        XCTAssertEqual(try v("\(d).unchangedKeys()"), .list([.string("a")]))
        XCTAssertEqual(try v("\(d).affectedKeys()"), .list([.string("b"), .string("c"), .string("d")]))
    }
}
