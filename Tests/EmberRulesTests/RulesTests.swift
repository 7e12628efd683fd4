// Tests for Rules.swift: deny by default, read/write expansion, custom functions (parameters,
// lets, scopes, recursion bound), request.resource for writes, and errors denying.
import XCTest
import EmberModel
@testable import EmberRules

final class RulesTests: XCTestCase {
    private func allowed(_ rules: Rules, _ method: RuleMethod, _ path: [String] = ["c", "x"], auth: RulesAuth? = nil,
                         newData: MapValue? = nil, existing: MapValue? = nil) -> Bool {
        rules.evaluate(RulesRequest(method: method, path: path, auth: auth, newData: newData, existing: existing)).allowed
    }

    func testDenyByDefault() throws {
        let rules = try RulesTestSupport.rules("true", methods: "get")
        XCTAssertTrue(allowed(rules, .get))
        for m in [RuleMethod.list, .create, .update, .delete] { XCTAssertFalse(allowed(rules, m), "\(m)") }
        XCTAssertFalse(allowed(rules, .get, ["other", "x"]))
        XCTAssertFalse(allowed(rules, .get, ["c", "x", "sub", "y"]))
        let none = try Rules(source: "service cloud.firestore { match /databases/{d}/documents { } }")
        XCTAssertFalse(allowed(none, .get))
        XCTAssertEqual(none.evaluate(RulesRequest(method: .get, path: ["c", "x"])).reason, "no match for /databases/(default)/documents/c/x")
    }

    func testReadAndWriteExpand() throws {
        let read = try RulesTestSupport.rules("true", methods: "read")
        XCTAssertTrue(allowed(read, .get) && allowed(read, .list, ["c"]))
        XCTAssertFalse(allowed(read, .create) || allowed(read, .update) || allowed(read, .delete))
        let write = try RulesTestSupport.rules("true", methods: "write")
        XCTAssertTrue(allowed(write, .create) && allowed(write, .update) && allowed(write, .delete))
        XCTAssertFalse(allowed(write, .get) || allowed(write, .list, ["c"]))
    }

    func testAnyAllowGrants() throws {
        let rules = try Rules(source: """
            service cloud.firestore { match /databases/{d}/documents {
              match /c/{id} { allow get: if false; allow get: if id == 'x'; }
              match /{all=**} { allow get: if request.auth != null; }
            } }
            """)
        XCTAssertTrue(allowed(rules, .get))
        XCTAssertFalse(allowed(rules, .get, ["c", "y"]))
        XCTAssertTrue(allowed(rules, .get, ["c", "y"], auth: RulesAuth(uid: "u")))
    }

    func testFunctionsWithLetsAndScopes() throws {
        let rules = try RulesTestSupport.rules("owns(request.auth.uid) && small()", methods: "create",
                                               extra: "function owns(u) { let d = request.resource.data; return d.owner == u; } function small() { return request.resource.data.size() < 3; }")
        let alice = RulesAuth(uid: "alice")
        XCTAssertTrue(allowed(rules, .create, auth: alice, newData: MapValue(["owner": .string("alice")])))
        XCTAssertFalse(allowed(rules, .create, auth: alice, newData: MapValue(["owner": .string("bob")])))
        XCTAssertFalse(allowed(rules, .create, auth: alice, newData: MapValue(["owner": .string("alice"), "a": .int(1), "b": .int(2)])))
        XCTAssertFalse(allowed(rules, .create, auth: nil, newData: MapValue(["owner": .string("alice")])))
    }

    func testRecursionIsBoundedAndDenies() throws {
        let rules = try RulesTestSupport.rules("f(1)", methods: "get", extra: "function f(n) { return f(n + 1); }")
        let d = rules.evaluate(RulesRequest(method: .get, path: ["c", "x"]))
        XCTAssertFalse(d.allowed)
        XCTAssertTrue(d.reason.contains("nested too deeply"), d.reason)
    }

    func testResourceForEachMethod() throws {
        let rules = try RulesTestSupport.rules("resource == null && request.resource.data.v == 1", methods: "create")
        XCTAssertTrue(allowed(rules, .create, newData: MapValue(["v": .int(1)])))
        XCTAssertFalse(allowed(rules, .create, newData: MapValue(["v": .int(1)]), existing: MapValue()))
        let update = try RulesTestSupport.rules("request.resource.data.v > resource.data.v", methods: "update")
        XCTAssertTrue(allowed(update, .update, newData: MapValue(["v": .int(2)]), existing: MapValue(["v": .int(1)])))
        XCTAssertFalse(allowed(update, .update, newData: MapValue(["v": .int(1)]), existing: MapValue(["v": .int(1)])))
        let list = try RulesTestSupport.rules("resource.data.public == true", methods: "list")
        XCTAssertFalse(allowed(list, .list, ["c"], existing: MapValue(["public": .bool(true)])))   // a list has no resource
    }
}
