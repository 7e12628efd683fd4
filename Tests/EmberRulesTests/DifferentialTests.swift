// The rules differential test: EmberRules must decide every case the Firestore emulator decided
// (Resources/differential_cases.json, recorded by Tests/server/rules/record_rules_cases.py
// against Resources/differential.rules).
import Foundation
import XCTest
import EmberModel
@testable import EmberRules

final class DifferentialTests: XCTestCase {
    struct Case: Decodable {
        struct Auth: Decodable { var uid: String; var token: JSONValue }
        var name: String
        var method: String
        var path: String
        var auth: Auth?
        var data: JSONValue?
        var expected: String
    }

    struct File: Decodable {
        var rules: String
        var seed: [String: JSONValue]
        var cases: [Case]
    }

    private let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources")

    func testSameDecisionsAsTheEmulator() throws {
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: resources.appendingPathComponent("differential_cases.json")))
        let rules = try Rules(source: String(contentsOf: resources.appendingPathComponent(file.rules), encoding: .utf8))
        let seed = file.seed.compactMapValues(\.map)
        let lookup: RulesDocumentLookup = { path in seed[path.joined(separator: "/")] }
        XCTAssertGreaterThanOrEqual(file.cases.count, 30)
        var disagreements: [String] = []
        for c in file.cases {
            let method = try XCTUnwrap(RuleMethod(rawValue: c.method), c.name)
            let path = c.path.split(separator: "/").map(String.init)
            let request = RulesRequest(
                method: method, path: path,
                auth: c.auth.map { RulesAuth(uid: $0.uid, token: $0.token.map ?? MapValue()) },
                newData: c.data?.map,
                existing: method == .list ? nil : seed[c.path],
                time: Timestamp(micros: 1_700_000_000_000_000))
            let decision = rules.evaluate(request, lookup: lookup)
            if (decision.allowed ? "allow" : "deny") != c.expected {
                disagreements.append("\(c.name): emulator \(c.expected), ember \(decision.allowed ? "allow" : "deny") (\(decision.reason))")
            }
        }
        XCTAssertEqual(disagreements, [], "\n" + disagreements.joined(separator: "\n"))
    }
}
