// Tests for MatchResolver.swift: exact segments, {var}, {rest=**} (zero or more segments, bound
// as a path), nested blocks, a list's open document segment, and paths that match nothing.
import XCTest
@testable import EmberRules

final class MatchResolverTests: XCTestCase {
    private let set = try! RulesParser.parse("""
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid} {
              allow read;
              match /private/{rest=**} { allow read; }
            }
            match /{all=**} { allow read: if false; }
          }
        }
        """)

    private func hits(_ path: [String?]) -> [[String: RuleValue]] {
        MatchResolver.resolve(set, path: ["databases", "(default)", "documents"] + path).map(\.bindings)
    }

    func testVariablesBindOneSegment() {
        let h = hits(["users", "al"])
        XCTAssertEqual(h.count, 2)
        XCTAssertEqual(h[0]["uid"], .string("al"))
        XCTAssertEqual(h[0]["database"], .string("(default)"))
        XCTAssertEqual(h[1]["all"], .path(["users", "al"]))
    }

    func testRestMatchesZeroOrMoreSegmentsAsAPath() {
        XCTAssertEqual(hits(["users", "al", "private", "a", "b", "c"]).first?["rest"], .path(["a", "b", "c"]))
        XCTAssertEqual(hits(["users", "al", "private"]).first?["rest"], .path([]))
    }

    func testPartialMatchesDoNotCount() {
        XCTAssertEqual(hits(["users", "al", "other", "x"]).count, 1)   // only {all=**}
        XCTAssertEqual(hits(["users", "al", "other", "x"])[0]["all"], .path(["users", "al", "other", "x"]))
        XCTAssertTrue(MatchResolver.resolve(set, path: ["databases", "(default)", "other", "x"]).isEmpty)
    }

    func testListDocumentSegmentMatchesAVariableUnbound() {
        let h = hits(["users", nil])
        XCTAssertEqual(h.count, 2)
        XCTAssertNil(h[0]["uid"])
    }
}
