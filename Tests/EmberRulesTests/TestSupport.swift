// Test support: rules around one condition, and evaluating a bare expression.
import EmberModel
@testable import EmberRules

enum RulesTestSupport {
    /// A rules file that allows `methods` on /c/{id} (and /c/{id}/{rest=**} nothing) when `condition` holds.
    static func rules(_ condition: String, methods: String = "read, write", extra: String = "") throws -> Rules {
        try Rules(source: """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                \(extra)
                match /c/{id} { allow \(methods): if \(condition); }
              }
            }
            """)
    }

    /// The value of `expr` on a get of /c/x (with `existing` as resource.data), or the error.
    static func eval(_ expr: String, auth: RulesAuth? = RulesAuth(uid: "u"), existing: MapValue? = MapValue(["n": .int(1)]),
                     lookup: RulesDocumentLookup? = nil) throws -> RuleValue {
        let set = try RulesParser.parse("service cloud.firestore { match /databases/{database}/documents { match /c/{id} { allow get: if \(expr); } } }")
        let r = RulesRequest(method: .get, path: ["c", "x"], auth: auth, existing: existing)
        let rules = Rules(set)
        let ev = ExpressionEvaluator(request: rules.requestValue(r), resource: rules.resourceValue(r), database: "(default)", lookup: lookup)
        let hit = MatchResolver.resolve(set, path: r.matchPath.map { $0 })[0]
        return try ev.eval(hit.block.allows[0].condition, .init(names: hit.bindings, functions: hit.functionScopes))
    }
}
