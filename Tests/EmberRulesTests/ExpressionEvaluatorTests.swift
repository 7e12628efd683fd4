// Tests for ExpressionEvaluator.swift: names, request and resource, Firestore's error rules for
// && and ||, custom functions with lets and their depth bound, globals, and get()/exists()
// through the lookup with at most 10 distinct documents per request.
import XCTest
import EmberModel
@testable import EmberRules

final class ExpressionEvaluatorTests: XCTestCase {
    private func v(_ expr: String, auth: RulesAuth? = RulesAuth(uid: "u"), lookup: RulesDocumentLookup? = nil) throws -> RuleValue {
        try RulesTestSupport.eval(expr, auth: auth, lookup: lookup)
    }

    func testRequestAndResource() throws {
        XCTAssertEqual(try v("request.auth.uid"), .string("u"))
        XCTAssertEqual(try v("request.auth == null", auth: nil), .bool(true))
        XCTAssertThrowsError(try v("request.auth.uid", auth: nil))
        XCTAssertEqual(try v("request.auth.token.admin", auth: RulesAuth(uid: "u", token: MapValue(["admin": .bool(true)]))), .bool(true))
        XCTAssertEqual(try v("resource.data.n"), .int(1))
        XCTAssertEqual(try v("resource.id"), .string("x"))
        XCTAssertEqual(try v("resource.__name__"), .path(["databases", "(default)", "documents", "c", "x"]))
        XCTAssertEqual(try v("request.method"), .string("get"))
        XCTAssertEqual(try v("request.resource"), .null)
        XCTAssertEqual(try v("id + database"), .string("x(default)"))
        XCTAssertThrowsError(try v("nope"))
    }

    func testErrorsAreOverriddenByTheDecidingSide() throws {
        XCTAssertEqual(try v("resource.data.missing || true"), .bool(true))
        XCTAssertEqual(try v("resource.data.missing && false"), .bool(false))
        XCTAssertEqual(try v("true || resource.data.missing"), .bool(true))
        XCTAssertEqual(try v("false && resource.data.missing"), .bool(false))
        XCTAssertThrowsError(try v("resource.data.missing || false"))
        XCTAssertThrowsError(try v("resource.data.missing && true"))
        XCTAssertThrowsError(try v("1 && true"))
        XCTAssertThrowsError(try v("!1"))
        XCTAssertThrowsError(try v("1 ? 2 : 3"))
        XCTAssertEqual(try v("false ? resource.data.missing : 3"), .int(3))
    }

    func testGlobals() throws {
        XCTAssertEqual(try v("string(12) + string(true) + string(null)"), .string("12truenull"))
        XCTAssertEqual(try v("int('42') + int(2.9)"), .int(44))
        XCTAssertEqual(try v("float(1)"), .float(1))
        XCTAssertThrowsError(try v("int('x')"))
        XCTAssertThrowsError(try v("nosuch(1)"))
    }

    func testGetAndExistsThroughTheLookup() throws {
        let lookup: RulesDocumentLookup = { path in path == ["users", "u"] ? MapValue(["role": .string("admin")]) : nil }
        XCTAssertEqual(try v("get(/databases/$(database)/documents/users/$(request.auth.uid)).data.role", lookup: lookup), .string("admin"))
        XCTAssertEqual(try v("get(/databases/$(database)/documents/users/$(request.auth.uid)).id", lookup: lookup), .string("u"))
        XCTAssertEqual(try v("exists(/databases/$(database)/documents/users/u)", lookup: lookup), .bool(true))
        XCTAssertEqual(try v("exists(/databases/$(database)/documents/users/v)", lookup: lookup), .bool(false))
        XCTAssertEqual(try v("get(/databases/$(database)/documents/users/v)", lookup: lookup), .null)
        XCTAssertThrowsError(try v("exists(/databases/$(database)/documents/users)", lookup: lookup))   // a collection
        XCTAssertThrowsError(try v("exists(/databases/$(database)/documents/users/u)"))                  // no lookup
    }

    func testAtMostTenDistinctDocumentReads() throws {
        let lookup: RulesDocumentLookup = { _ in MapValue() }
        let ten = (0..<10).map { "exists(/databases/$(database)/documents/d/\($0))" }.joined(separator: " && ")
        XCTAssertEqual(try v(ten, lookup: lookup), .bool(true))
        XCTAssertEqual(try v(ten + " && exists(/databases/$(database)/documents/d/0)", lookup: lookup), .bool(true))   // repeats are free
        XCTAssertThrowsError(try v(ten + " && exists(/databases/$(database)/documents/d/10)", lookup: lookup))
    }
}
