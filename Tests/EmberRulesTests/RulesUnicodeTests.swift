// Rules compare text by its bytes and count it in code points: "\u{E9}" and "e\u{301}" are
// equal Swift Strings but different ids, field names and values in Firestore, so no rule may
// take one for the other (a uid, an owner field, a collection in a match pattern).
import XCTest
import EmberModel
@testable import EmberRules

final class RulesUnicodeTests: XCTestCase {
    let a = "\u{E9}", b = "e\u{301}"

    private func value(_ expr: String, existing: MapValue? = MapValue(["n": .int(1)]), uid: String = "u") throws -> RuleValue {
        try RulesTestSupport.eval(expr, auth: RulesAuth(uid: uid), existing: existing)
    }

    func testMatchLiteralsCompareByBytes() throws {
        let rules = try Rules(source: "service cloud.firestore { match /databases/{d}/documents { match /\(a)/{id} { allow get: if true; } } }")
        XCTAssertTrue(rules.evaluate(RulesRequest(method: .get, path: [a, "x"])).allowed)
        XCTAssertFalse(rules.evaluate(RulesRequest(method: .get, path: [b, "x"])).allowed, "another collection")
    }

    func testStringsCompareByBytes() throws {
        let doc = MapValue(uniqueEntries: [(key: "owner", value: .string(a)), (key: "members", value: .array([.string(a)]))])!
        XCTAssertEqual(try value("resource.data.owner == request.auth.uid", existing: doc, uid: b), .bool(false))
        XCTAssertEqual(try value("resource.data.owner == request.auth.uid", existing: doc, uid: a), .bool(true))
        XCTAssertEqual(try value("request.auth.uid in resource.data.members", existing: doc, uid: b), .bool(false))
        XCTAssertEqual(try value("'\(b)' < '\(a)'"), .bool(true), "0x65 0xCC 0x81 sorts before 0xC3 0xA9")
        XCTAssertEqual(try value("'\(b)' <= '\(a)' && !('\(a)' <= '\(b)')"), .bool(true))
        XCTAssertEqual(try value("['\(a)'].hasAny(['\(b)'])"), .bool(false))
        XCTAssertEqual(try value("['\(a)', '\(b)'].toSet().size()"), .int(2))
    }

    func testFieldsDifferingOnlyInNormalizationAreTwo() throws {
        let doc = MapValue(uniqueEntries: [(key: a, value: .int(1)), (key: b, value: .int(2))])!
        XCTAssertEqual(try value("resource.data.size()", existing: doc), .int(2))
        XCTAssertEqual(try value("resource.data['\(b)']", existing: doc), .int(2))
        XCTAssertEqual(try value("resource.data['\(a)']", existing: doc), .int(1))
        XCTAssertEqual(try value("resource.data.keys().hasOnly(['\(a)'])", existing: doc), .bool(false))
        XCTAssertEqual(try value("resource.data.keys()", existing: doc), .list([.string(b), .string(a)]), "by bytes")
        XCTAssertEqual(try value("{'\(a)': 1, '\(b)': 2}.size()"), .int(2))
        let changed = MapValue(uniqueEntries: [(key: a, value: .int(1)), (key: b, value: .int(3))])!
        let diff = MapDiff(new: RuleValue.map(changed), old: RuleValue.map(doc))
        XCTAssertEqual(diff.affectedKeys.map { Array($0.utf8) }, [Array(b.utf8)])
    }

    func testStringsAreCodePoints() throws {
        XCTAssertEqual(try value("'\(b)'.size()"), .int(2))
        XCTAssertEqual(try value("'\(b)'.matches('e.')"), .bool(true))
        XCTAssertEqual(try value("'\(b)'.matches('\(a)')"), .bool(false))
        XCTAssertEqual(try value("'\(b)'.split('').size()"), .int(2))
        XCTAssertEqual(try value("'a\(b)b'.split('\(a)')"), .list([.string("a\(b)b")]), "no \\u{E9} in it")
        XCTAssertEqual(try value("'x\(b)y'.split('e')"), .list([.string("x"), .string("\u{301}y")]))
        XCTAssertEqual(try value("'a,b,,c'.split(',')"), .list([.string("a"), .string("b"), .string(""), .string("c")]))
    }
}
