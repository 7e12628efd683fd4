import Crypto
import EmberModel
@testable import EmberServer
import XCTest

/// The tree REST layer's pieces on their own: the SDKs' node hash (ETags), the JSON in and out
/// (arrays, server values, refusals), and the query parameters.
final class TreeRESTTests: XCTestCase {
    func tree(_ json: String) throws -> TreeValue { try TreeJSON.input(json, at: .root).value }

    func testNodeHashesMatchTheFirebaseSDKs() throws {
        XCTAssertEqual(TreeHash.of(.bool(true)), "E5z61QM0lN/U2WsOnusszCTkR8M=")
        XCTAssertEqual(TreeHash.of(.bool(false)), "aSSNoqcS4oQwJ2xxH20rvpp3zP0=")
        XCTAssertEqual(TreeHash.of(.int(500)), "Ajg9bohDwTVmqR14o1bVJnneryM=")
        XCTAssertEqual(TreeHash.of(.double(500)), "Ajg9bohDwTVmqR14o1bVJnneryM=")
        XCTAssertEqual(TreeHash.of(.string("Hello World")), "B8HWXc7zXMjrsnJxPRj7wrNGqt4=")
        XCTAssertEqual(TreeHash.of(try tree(#"{"foo":"bar"}"#)), "XnLeTeWQmzTHImTbSMDLg/qMrKY=")
        XCTAssertEqual(TreeHash.of(try tree(#"{".priority":200,".value":"primitive"}"#)), TreeHash.of(.string("primitive")))
        // With its priority, as the SDKs hash it (urish/firebase-server's vector).
        let input = try TreeJSON.input(#"{".priority":200,".value":"primitive"}"#, at: .root)
        XCTAssertEqual(TreeHash.of(input.value, priorities: input.priorities), "R9u8hs9fhRzuQ2M/3BQ0uhxz5ys=")
        // Children in priority order: none, numbers, strings; the node's own priority first.
        let ordered = try TreeJSON.input(#"{"a": {".value": 1, ".priority": "z"}, "b": {".value": 1, ".priority": 5}, "c": 1, ".priority": 1}"#, at: .root)
        let c = TreeHash.of(.int(1))
        let expected = "priority:number:3ff0000000000000::c:\(c):b:\(TreeHash.of(.int(1), priorities: .object(TreeObject([".p": .int(5)])))):a:\(TreeHash.of(.int(1), priorities: .object(TreeObject([".p": .string("z")]))))"
        XCTAssertEqual(TreeHash.of(ordered.value, priorities: ordered.priorities), sha1Base64(expected))
        XCTAssertEqual(TreeHash.of(try tree(#"{"10":1,"9":1,"a":1}"#)), "evCfROj4O5BuYeBWBzyApN5V/lQ=")
        XCTAssertEqual(TreeHash.etag(.null), "null_etag")
    }

    func testJSONInAndOut() throws {
        XCTAssertEqual(TreeJSON.render(try tree(#"[1, null, 3]"#)), "[1,null,3]")
        XCTAssertEqual(TreeJSON.render(try tree(#"{"b": {}, "a": [], "c": 2.0, "d": 2.5}"#)), #"{"c":2,"d":2.5}"#)
        XCTAssertEqual(TreeJSON.render(.string("q\"\\\n\u{1}")), #""q\"\\\n\u0001""#)
        XCTAssertEqual(TreeJSON.render(try tree(#"{"a": {"b": 1}}"#), pretty: true), "{\n  \"a\" : {\n    \"b\" : 1\n  }\n}")
        for bad in [#"{"a.b": 1}"#, #"{"a": 1"#, #"{".sv": "later"}"#, #"{".sv": "timestamp", "x": 1}"#, #"{".sv": {"increment": "1"}}"#] {
            XCTAssertThrowsError(try tree(bad), bad)
        }
    }

    func testServerValuesResolveAgainstTheStoredTree() throws {
        let input = try TreeJSON.input(#"{"n": {".sv": {"increment": 2}}, "m": {".sv": {"increment": 1}}, "at": {".sv": "timestamp"}}"#, at: .root)
        let base = TreePath(unchecked: ["x"])
        let stored: [String: TreeValue] = ["n": .int(Int64.max), "m": .string("not a number")]
        let v = input.resolved(at: base, read: { stored[$0.segments.last!] ?? .null }, nowMillis: 1234)
        XCTAssertEqual(v.child("at"), .int(1234))
        XCTAssertEqual(v.child("n"), .double(Double(Int64.max) + 2))
        XCTAssertEqual(v.child("m"), .int(1))
    }

    func testQueryParameters() throws {
        XCTAssertNil(try TreeRESTQuery.parse(["ns": "x"]))
        let q = try XCTUnwrap(TreeRESTQuery.parse(["orderBy": "\"s\"", "startAt": "15", "limitToLast": "2"]))
        let node = try tree(#"{"a": {"s": 30}, "b": {"s": 10}, "c": {"s": 20}, "d": {"s": 40}}"#)
        XCTAssertEqual(q.apply(to: node).object.map { Set($0.keys) }, ["a", "d"])
        let keyed = try XCTUnwrap(TreeRESTQuery.parse(["orderBy": "\"$key\"", "startAt": "\"b\"", "endAt": "\"c\""]))
        XCTAssertEqual(keyed.apply(to: node).object.map { Set($0.keys) }, ["b", "c"])
        let refusals: [[String: String]] = [
            ["limitToFirst": "1"], ["orderBy": "$key"], ["orderBy": "\"$priority\"", "startAt": "{}"],
            ["orderBy": "\"$key\"", "limitToFirst": "1", "limitToLast": "1"], ["orderBy": "\"s\"", "limitToFirst": "-1"],
            ["orderBy": "\"s\"", "equalTo": "1", "startAt": "0"], ["orderBy": "\"s\"", "startAt": "{}"],
        ]
        for params in refusals {
            XCTAssertThrowsError(try TreeRESTQuery.parse(params), "\(params)") { XCTAssertEqual(($0 as? TreeRESTError)?.status, 400) }
        }
    }
}

private func sha1Base64(_ text: String) -> String {
    Data(Insecure.SHA1.hash(data: Data(text.utf8))).base64EncodedString()
}
