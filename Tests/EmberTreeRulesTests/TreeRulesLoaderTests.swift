import EmberModel
import Testing
@testable import EmberTreeRules

/// Loading a rules source: comments, the strict form, and what is refused with which reason.
@Suite struct TreeRulesLoaderTests {
    @Test func commentsAreAcceptedAndKeptInTheSource() throws {
        let source = """
        // the whole database
        {
          /* top level */ "rules": {
            ".read": "auth != null", // signed in
            "a": {".write": "'//' == '//'"}   /* a string with slashes is not a comment */
          }
        }
        """
        let r = try TreeRules(source: source)
        #expect(r.source == source)
        #expect(!r.strict.contains("signed in") && !r.strict.contains("top level"))
        #expect(r.strict.contains(#""'//' == '//'""#))
        #expect(r.canWrite([TreeWriteOp(path: TreePath(unchecked: ["a"]), value: .int(1))], auth: .signedOut, nowMillis: 0, read: { _ in .null }))
    }

    @Test func strictFormIsPlainJSONWithWildcardsAsTheyAre() throws {
        let r = try TreeRules(source: #"{"rules": {"users": {"$uid": {".read": true}}}}"#)
        #expect(r.strict == #"{"rules":{"users":{"$uid":{".read":true}}}}"#)
    }

    @Test(arguments: [
        (#"not json"#, "not valid JSON"),
        (#"{"rules": {".read": true"#, "not valid JSON"),
        (#"{"rules": true}"#, "one key, \"rules\""),
        (#"{"other": {}}"#, "one key, \"rules\""),
        (#"{"rules": {}, "x": 1}"#, "one key, \"rules\""),
        (#"{"rules": {".reed": true}}"#, "unknown rule '.reed'"),
        (#"{"rules": {".read": 1}}"#, "true, false or a string"),
        (#"{"rules": {"a": true}}"#, "must be an object"),
        (#"{"rules": {"$a": {}, "$b": {}}}"#, "one wildcard"),
        (#"{"rules": {"$a": {"$a": {}}}}"#, "used twice"),
        (#"{"rules": {".read": "auth.uid =="}}"#, "unexpected the end of the rule"),
        (#"{"rules": {".read": "foo == 1"}}"#, "unknown variable 'foo'"),
        (#"{"rules": {".read": "$x == 1"}}"#, "unknown variable '$x'"),
        (#"{"rules": {".read": "newData.exists()"}}"#, "'newData' is not defined in a .read"),
        (#"{"rules": {".write": "query.orderByKey"}}"#, "'query' is only defined in a .read"),
        (#"{"rules": {".read": "data.frobnicate()"}}"#, "unknown method 'frobnicate'"),
        (#"{"rules": {".read": "auth = null"}}"#, "assignment is not allowed"),
        (#"{"rules": {".read": "'a'.matches(/(/)"}}"#, "invalid regular expression"),
        (#"{"rules": {".read": "'a'.matches(/a/g)"}}"#, "unsupported regular expression flags"),
        (#"{"rules": {".read": "'abc"}}"#, "unterminated string"),
        (#"{"rules": {".indexOn": 3}}"#, ".indexOn is a child path"),
        (#"{"rules": {".indexOn": ["a", 1]}}"#, ".indexOn is a child path"),
        (#"{"rules": {".indexOn": "a.b"}}"#, "Invalid .indexOn path"),
        (#"{"rules": {"a#b": {}}}"#, "rules/a#b"),
        (#"{"rules": {} /* unterminated"#, "unterminated /* comment"),
    ])
    func refused(_ source: String, _ reason: String) {
        #expect {
            _ = try TreeRules(source: source)
        } throws: { error in
            guard let e = error as? TreeRulesError else { return false }
            return e.message.contains(reason)
        }
    }

    @Test func indexOnAcceptsAStringAnArrayAndValue() throws {
        let r = try TreeRules(source: #"{"rules": {"d": {".indexOn": ["height", "ratings/pos", ".value"]}, "e": {"$k": {".indexOn": "x"}}}}"#)
        #expect(r.hasIndex("height", at: TreePath(unchecked: ["d"])))
        #expect(r.hasIndex("ratings/pos", at: TreePath(unchecked: ["d"])))
        #expect(r.hasIndex(".value", at: TreePath(unchecked: ["d"])))
        #expect(!r.hasIndex("weight", at: TreePath(unchecked: ["d"])))
        #expect(r.hasIndex("x", at: TreePath(unchecked: ["e", "anything"])))
        #expect(!r.hasIndex("x", at: TreePath(unchecked: ["e"])))
        #expect(!r.hasIndex("height", at: TreePath(unchecked: ["nowhere"])))
    }

    @Test func readDependenceOnDataAndClock() throws {
        let r = try TreeRules(source: #"{"rules": {"a": {".read": "auth != null", "b": {".read": "data.exists()"}}, "t": {".read": "now > 0"}}}"#)
        #expect(r.readDepends(at: TreePath(unchecked: ["a"])) == (false, false))
        #expect(r.readDepends(at: TreePath(unchecked: ["a", "b"])) == (true, false))
        #expect(r.readDepends(at: TreePath(unchecked: ["t"])) == (false, true))
    }

    @Test func overrideAuthMustBeAnObjectOrNull() throws {
        #expect(throws: TreeRulesError.self) { try TreeRulesAuth(override: .string("x")) }
        let auth = try TreeRulesAuth(override: try ValueJSON.parse(#"{"uid": "u1", "role": "editor"}"#, plain: true))
        let r = try TreeRules(source: #"{"rules": {".read": "auth.uid == 'u1' && auth.role == 'editor'"}}"#)
        #expect(r.canRead(.root, auth: auth, nowMillis: 0, read: { _ in .null }))
        #expect(!r.canRead(.root, auth: try TreeRulesAuth(override: .null), nowMillis: 0, read: { _ in .null }))
    }

    /// Every node is read once per decision, however often the rules name it.
    @Test func readsAreCachedWithinADecision() throws {
        let r = try TreeRules(source: #"{"rules": {".read": "root.child('a').val() == 1 && root.child('a').exists() && root.child('a/b').val() == null"}}"#)
        let counter = ReadCounter()
        #expect(r.canRead(.root, auth: .signedOut, nowMillis: 0, read: { p in counter.count += 1; return p.segments == ["a"] ? .int(1) : .null }))
        #expect(counter.count == 1)
    }
}

private final class ReadCounter: @unchecked Sendable { var count = 0 }
