// Tests for RulesParser.swift and RulesParser+Expressions.swift: statements, match paths,
// precedence, path literals, and errors with their line and column.
import XCTest
@testable import EmberRules

final class RulesParserTests: XCTestCase {
    private func wrap(_ body: String) -> String {
        "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n\(body)\n  }\n}\n"
    }

    private func condition(_ expr: String) throws -> Expr {
        let set = try RulesParser.parse(wrap("match /a/{b} { allow read: if \(expr); }"))
        return set.service.matches[0].matches[0].allows[0].condition
    }

    private func parseError(_ source: String) -> RulesParseError? {
        do { _ = try RulesParser.parse(source); return nil } catch let e as RulesParseError { return e } catch { return nil }
    }

    func testStatementsAndMatchPaths() throws {
        let set = try RulesParser.parse(wrap("""
            function signedIn() { return request.auth != null; }
            match /users/{uid} {
              allow read, update: if signedIn();
              allow delete;
              match /posts/{rest=**} { allow write: if false; }
            }
            """))
        XCTAssertEqual(set.version, "2")
        XCTAssertEqual(set.service.name, "cloud.firestore")
        let root = set.service.matches[0]
        XCTAssertEqual(root.pattern.description, "/databases/{database}/documents")
        XCTAssertEqual(root.functions.map(\.name), ["signedIn"])
        let users = root.matches[0]
        XCTAssertEqual(users.pattern.segments, [.literal("users"), .variable("uid")])
        XCTAssertEqual(users.allows[0].methods, [.get, .list, .update])
        XCTAssertEqual(users.allows[1].methods, [.delete])
        XCTAssertEqual(users.allows[1].condition, .bool(true))
        XCTAssertEqual(users.matches[0].pattern.segments, [.literal("posts"), .rest("rest")])
        XCTAssertEqual(users.matches[0].allows[0].methods, [.create, .update, .delete])
    }

    func testFunctionWithLets() throws {
        let set = try RulesParser.parse(wrap("function f(a, b) { let s = a + b; return s > 2; }"))
        let f = set.service.matches[0].functions[0]
        XCTAssertEqual(f.parameters, ["a", "b"])
        XCTAssertEqual(f.lets.map(\.name), ["s"])
        XCTAssertEqual(f.body, .binary(.gt, .identifier("s"), .int(2)))
    }

    func testPrecedence() throws {
        XCTAssertEqual(try condition("a || b && !c"),
                       .binary(.or, .identifier("a"), .binary(.and, .identifier("b"), .unary(.not, .identifier("c")))))
        XCTAssertEqual(try condition("1 + 2 * 3 == 7"),
                       .binary(.eq, .binary(.add, .int(1), .binary(.mul, .int(2), .int(3))), .int(7)))
        XCTAssertEqual(try condition("x ? 1 : y ? 2 : 3"),
                       .ternary(.identifier("x"), .int(1), .ternary(.identifier("y"), .int(2), .int(3))))
        XCTAssertEqual(try condition("a is string && 'k' in m"),
                       .binary(.and, .isType(.identifier("a"), "string"), .binary(.in, .string("k"), .identifier("m"))))
        XCTAssertEqual(try condition("-3 < -x"), .binary(.lt, .int(-3), .unary(.negate, .identifier("x"))))
    }

    func testLiteralsMembersCalls() throws {
        XCTAssertEqual(try condition("[1, 2.5, \"s\", 't', null, true, {'k': [false]}].size() > 0"),
                       .binary(.gt, .call(.member(.list([.int(1), .float(2.5), .string("s"), .string("t"), .null, .bool(true),
                                                           .map([(key: .string("k"), value: .list([.bool(false)]))])]), "size"), []), .int(0)))
        XCTAssertEqual(try condition("request.resource.data['a'].b"),
                       .member(.index(.member(.member(.identifier("request"), "resource"), "data"), .string("a")), "b"))
    }

    func testPathLiterals() throws {
        XCTAssertEqual(try condition("exists(/databases/$(database)/documents/users/$(request.auth.uid))"),
                       .call(.identifier("exists"), [.path([.text("databases"), .interpolated(.identifier("database")), .text("documents"),
                                                            .text("users"), .interpolated(.member(.member(.identifier("request"), "auth"), "uid"))])]))
        XCTAssertEqual(try condition("get(/databases/$(database)/documents/g/$(g)).data.open == true"),
                       .binary(.eq, .member(.member(.call(.identifier("get"), [.path([.text("databases"), .interpolated(.identifier("database")),
                                                                                   .text("documents"), .text("g"), .interpolated(.identifier("g"))])]), "data"), "open"), .bool(true)))
    }

    func testCommentsAndOptionalSemicolons() throws {
        let set = try RulesParser.parse("""
            // header
            service cloud.firestore { /* block
            comment */ match /databases/{d}/documents { match /x/{y} { allow read: if true } } }
            """)
        XCTAssertNil(set.version)
        XCTAssertEqual(set.service.matches[0].matches[0].allows.count, 1)
    }

    func testErrorsCarryLineAndColumn() {
        let missingSemicolon = parseError("service cloud.firestore {\n  match /a/{b} {\n    allow read: if true false;\n  }\n}")
        XCTAssertEqual(missingSemicolon?.description, "3:25: expected ';' after the allow statement, found 'false'")
        let badMethod = parseError("service cloud.firestore {\n match /a/{b} { allow reed: if true; }\n}")
        XCTAssertEqual(badMethod?.description, "2:23: unknown method 'reed' (expected read, write, get, list, create, update or delete)")
        let unterminated = parseError("service cloud.firestore {\n match /a/{b} {\n  allow read: if 'abc;\n }\n}")
        XCTAssertEqual(unterminated?.description, "3:18: unterminated string")
        let noExpr = parseError("service cloud.firestore { match /a/{b} { allow read: if ; } }")
        XCTAssertEqual(noExpr?.description, "1:57: expected an expression, found ';'")
        let badChar = parseError("service cloud.firestore {\n  match /a/{b} { allow read: if a # b; }\n}")
        XCTAssertEqual(badChar?.description, "2:35: unexpected character '#'")
        XCTAssertNil(parseError("service cloud.firestore { match /a/{b=**}/c { } }"), "a recursive wildcard may be anywhere")
        let twoRests = parseError("service cloud.firestore {\n match /{a=**}/x/{b=**} { } }")
        XCTAssertEqual(twoRests?.line, 2)
        XCTAssertEqual(twoRests?.message, "a match path has at most one '{name=**}' segment")
        XCTAssertEqual(parseError("service cloud.storage { }")?.message, "unsupported service 'cloud.storage' (expected cloud.firestore)")
        XCTAssertEqual(parseError("rules_version = '3'; service cloud.firestore { }")?.description,
                       "1:17: unsupported rules_version '3' (expected '1' or '2')")
        XCTAssertEqual(parseError("service cloud.firestore { match /a/{b} { } ")?.description, "1:44: expected 'match', 'function' or '}', found end of file")
        XCTAssertEqual(parseError("service cloud.firestore { } }")?.description, "1:29: expected end of file after the service, found '}'")
    }
}
