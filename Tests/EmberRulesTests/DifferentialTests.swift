// The rules differential test: EmberRules must decide every case the Firestore emulator decided
// (Resources/differential_cases.json, recorded by Tests/server/rules/record_rules_cases.py
// against Resources/differential.rules): gets, creates, updates, deletes, lists (with the
// query's filters and limit; collection groups), multi-write commits (denied when one write is) and listens (a
// document's `get`, a query's `list`).
import Foundation
import XCTest
import EmberModel
@testable import EmberRules

final class DifferentialTests: XCTestCase {
    struct Case {
        struct Auth { var uid: String; var token: JSONValue }
        struct Query { var filters: [[JSONValue]]; var limit: Int? }
        struct Write { var op: String; var path: String; var data: JSONValue? }
        var name: String
        var method: String
        var path: String
        var auth: Auth?
        var data: JSONValue?
        var query: Query?
        var writes: [Write]?
        /// A collection-group query of the path's last segment (under the documents root).
        var group = false
        var expected: String

        init(_ j: JSONValue) throws {
            name = try XCTUnwrap(j["name"]?.string)
            method = try XCTUnwrap(j["method"]?.string, name)
            path = try XCTUnwrap(j["path"]?.string, name)
            expected = try XCTUnwrap(j["expected"]?.string, name)
            if let a = j["auth"], !a.isNull { auth = Auth(uid: try XCTUnwrap(a["uid"]?.string, name), token: a["token"] ?? .null) }
            if let d = j["data"], !d.isNull { data = d }
            if let q = j["query"] { query = Query(filters: (q["where"]?.array ?? []).compactMap(\.array), limit: q["limit"]?.int) }
            if case .bool(true)? = j["group"] { group = true }
            writes = try j["writes"]?.array?.map { w in
                Write(op: try XCTUnwrap(w["op"]?.string), path: try XCTUnwrap(w["path"]?.string), data: w["data"].flatMap { $0.isNull ? nil : $0 })
            }
        }
    }

    private let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources")

    func testSameDecisionsAsTheEmulator() throws {
        let file = try JSONValue.parse(Data(contentsOf: resources.appendingPathComponent("differential_cases.json")))
        let rules = try Rules(source: String(contentsOf: resources.appendingPathComponent(try XCTUnwrap(file["rules"]?.string)), encoding: .utf8))
        guard case .object(let seedObjects)? = file["seed"] else { return XCTFail("no seed") }
        let seed = seedObjects.compactMapValues(\.map)
        let cases = try XCTUnwrap(file["cases"]?.array).map(Case.init)
        let lookup: RulesDocumentLookup = { path in seed[path.joined(separator: "/")] }
        XCTAssertGreaterThanOrEqual(cases.count, 200)
        var disagreements: [String] = []
        for c in cases {
            let decisions = try requests(c, seed).map { rules.evaluate($0, lookup: lookup) }
            let denial = decisions.first { !$0.allowed }
            if (denial == nil ? "allow" : "deny") != c.expected {
                disagreements.append("\(c.name): emulator \(c.expected), ember \(denial == nil ? "allow" : "deny") (\(denial?.reason ?? decisions.map(\.reason).joined(separator: "; ")))")
            }
        }
        XCTAssertEqual(disagreements, [], "\n" + disagreements.joined(separator: "\n"))
    }

    /// The requests a case makes; it is allowed when every one is.
    private func requests(_ c: Case, _ seed: [String: MapValue]) throws -> [RulesRequest] {
        let auth = c.auth.map { RulesAuth(uid: $0.uid, token: $0.token.map ?? MapValue()) }
        let time = Timestamp(micros: 1_700_000_000_000_000)
        func request(_ method: RuleMethod, _ path: String, _ data: JSONValue?) -> RulesRequest {
            RulesRequest(method: method, path: path.split(separator: "/").map(String.init), auth: auth, newData: data?.map,
                         existing: method == .list ? nil : seed[path], time: time)
        }
        switch c.method {
        case "commit":
            return try (c.writes ?? []).map { w in
                switch w.op {
                case "set": return request(seed[w.path] == nil ? .create : .update, w.path, w.data)
                case let op: return request(try XCTUnwrap(RuleMethod(rawValue: op), c.name), w.path, w.data)
                }
            }
        case "listen", "list":
            let isDocument = c.path.split(separator: "/").count % 2 == 0
            if isDocument { return [request(.get, c.path, nil)] }
            var r = request(.list, c.group ? String(c.path.split(separator: "/").last ?? "") : c.path, nil)
            r.collectionGroup = c.group
            if let q = c.query { r.query = RulesQuery(filters: try q.filters.map(filter), limit: q.limit) }
            return [r]
        default:
            return [request(try XCTUnwrap(RuleMethod(rawValue: c.method), c.name), c.path, c.data)]
        }
    }

    private func filter(_ triple: [JSONValue]) throws -> Filter {
        guard triple.count == 3, case .string(let field) = triple[0], case .string(let op) = triple[1] else {
            throw XCTSkip("malformed filter \(triple)")
        }
        return .field(FieldFilter(field: try FieldPath(parsing: field), op: try FilterOperator(parsing: op), value: triple[2].value))
    }
}
