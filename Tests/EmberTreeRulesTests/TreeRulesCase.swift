import EmberModel
import Testing
@testable import EmberTreeRules

/// One allow/deny case of the rules tables: rules, an operation over `RulesFixture.tree`, who
/// asks, and the expected answer.
struct RulesCase: Sendable, CustomTestStringConvertible {
    enum Operation: Sendable {
        case read(String, TreeRulesQuery?)
        /// A PUT at a path (JSON; "null" deletes).
        case set(String, String)
        /// A PATCH at a path: child paths and their JSON values.
        case update(String, [(String, String)])
    }
    let name: String
    let rules: String
    let operation: Operation
    let auth: TreeRulesAuth
    let allowed: Bool

    var testDescription: String { name }

    static func read(_ name: String, _ rules: String, _ path: String, _ auth: TreeRulesAuth,
                     query: TreeRulesQuery? = nil, _ allowed: Bool) -> RulesCase {
        RulesCase(name: name, rules: rules, operation: .read(path, query), auth: auth, allowed: allowed)
    }
    static func read(_ name: String, _ rules: String, _ path: String, query: TreeRulesQuery? = nil, _ allowed: Bool) -> RulesCase {
        read(name, rules, path, RulesFixture.nobody, query: query, allowed)
    }
    static func set(_ name: String, _ rules: String, _ path: String, _ json: String, _ auth: TreeRulesAuth,
                    _ allowed: Bool) -> RulesCase {
        RulesCase(name: name, rules: rules, operation: .set(path, json), auth: auth, allowed: allowed)
    }
    static func set(_ name: String, _ rules: String, _ path: String, _ json: String, _ allowed: Bool) -> RulesCase {
        set(name, rules, path, json, RulesFixture.nobody, allowed)
    }
    static func update(_ name: String, _ rules: String, _ path: String, _ children: [(String, String)],
                       _ auth: TreeRulesAuth, _ allowed: Bool) -> RulesCase {
        RulesCase(name: name, rules: rules, operation: .update(path, children), auth: auth, allowed: allowed)
    }
    static func update(_ name: String, _ rules: String, _ path: String, _ children: [(String, String)], _ allowed: Bool) -> RulesCase {
        update(name, rules, path, children, RulesFixture.nobody, allowed)
    }

    /// The decision of `TreeRules` for this case.
    func decide() throws -> Bool {
        let r = try TreeRules(source: rules)
        let tree = RulesFixture.tree
        let read: (TreePath) -> TreeValue = { tree.value(at: $0) }
        switch operation {
        case .read(let p, let q):
            return r.canRead(try TreePath(parsing: p), auth: auth, query: q, nowMillis: RulesFixture.now, read: read)
        case .set(let p, let json):
            let ops = [TreeWriteOp(path: try TreePath(parsing: p), value: try RulesFixture.value(json))]
            return r.canWrite(ops, auth: auth, nowMillis: RulesFixture.now, read: read)
        case .update(let p, let children):
            let base = try TreePath(parsing: p)
            let ops = try children.map { TreeWriteOp(path: base.appending(try TreePath(parsing: $0.0)), value: try RulesFixture.value($0.1)) }
            return r.canWrite(ops, auth: auth, nowMillis: RulesFixture.now, read: read)
        }
    }
}

/// The data every case runs against, and its callers.
enum RulesFixture {
    static let now: Int64 = 1_800_000_000_000

    static let tree = try! value(#"""
    {
      "users": {
        "alice": {"name": "Alice", "age": 30, "admin": true, "email": "alice@example.com"},
        "bob": {"name": "Bob", "age": 17}
      },
      "records": {"rec1": {"owner": "alice", "v": 1}, "rec2": {"owner": "bob", "v": 2}},
      "messages": {"m1": {"text": "hello", "owner": "alice", "ts": 1000}},
      "baskets": {"b1": {"owner": "alice", "items": 2}},
      "config": {"open": true, "max": 10, "motd": "Welcome"},
      "widget": {"title": "w", "color": "red"},
      "counters": {"c": 5}
    }
    """#)

    static let nobody = TreeRulesAuth.signedOut
    static let alice = TreeRulesAuth(uid: "alice", claims: MapValue([
        "sub": .string("alice"), "email": .string("alice@example.com"), "email_verified": .bool(true),
        "admin": .bool(true), "firebase": .map(MapValue(["sign_in_provider": .string("password")])),
    ]))
    static let bob = TreeRulesAuth(uid: "bob", claims: MapValue([
        "sub": .string("bob"), "email": .string("bob@example.org"), "email_verified": .bool(false),
        "firebase": .map(MapValue(["sign_in_provider": .string("anonymous")])),
    ]))

    static func value(_ json: String) throws -> TreeValue { try TreeValue(json: try ValueJSON.parse(json, plain: true)) }

    static func query(_ build: (inout TreeRulesQuery) -> Void) -> TreeRulesQuery {
        var q = TreeRulesQuery()
        build(&q)
        return q
    }
}
