// Tests for MatchResolver.swift: exact segments, {var}, {rest=**} (zero or more segments, bound
// as a path, at the end or in the middle), nested blocks, a list's open document segment, a
// collection group's unknown depth, and paths that match nothing.
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

    private let groups = try! RulesParser.parse("""
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /{path=**}/comments/{id} { allow read; }
            match /posts/{post}/comments/{id} { allow read; }
          }
        }
        """)

    private func groupHits(_ segments: [MatchResolver.Segment]) -> [[String: RuleValue]] {
        MatchResolver.resolve(groups, segments: [.id("databases"), .id("(default)"), .id("documents")] + segments).map(\.bindings)
    }

    func testRestInTheMiddleMatchesZeroOrMoreSegments() {
        XCTAssertEqual(groupHits([.id("comments"), .id("c")]).map { $0["path"] }, [.path([])])
        let nested = groupHits([.id("posts"), .id("p"), .id("comments"), .id("c")])
        XCTAssertEqual(nested.count, 2)
        XCTAssertEqual(nested[0]["path"], .path(["posts", "p"]))
        XCTAssertEqual(nested[1]["post"], .string("p"))
        XCTAssertEqual(groupHits([.id("a"), .id("b"), .id("c"), .id("d"), .id("comments"), .id("c")]).first?["path"],
                       .path(["a", "b", "c", "d"]))
        XCTAssertTrue(groupHits([.id("posts"), .id("p")]).isEmpty)
    }

    func testACollectionGroupIsMatchedOnlyByARestBeforeItsId() {
        let h = groupHits([.anyDepth, .id("comments"), .open])
        XCTAssertEqual(h.count, 1, "only /{path=**}/comments/{id}")
        XCTAssertNil(h.first?["path"], "the parents of a group are unknown")
        XCTAssertTrue(groupHits([.anyDepth, .id("posts"), .open]).isEmpty)
    }
}
