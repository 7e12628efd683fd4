import EmberModel

/// Responsible for: deciding requests against one parsed rules file: finds the matching `match`
/// blocks, evaluates their `allow` conditions for the request's method, and denies by default.
/// A condition that fails to evaluate counts as false, as in Firestore.
///
///     let rules = try Rules(source: text)
///     let d = rules.evaluate(RulesRequest(method: .get, path: ["users", "alice"], auth: RulesAuth(uid: "alice")),
///                            lookup: { path in store.data(at: path) })
///     d.allowed   // true or false
public struct Rules: Sendable {
    public let ruleSet: RuleSet

    public init(source: String) throws { ruleSet = try RulesParser.parse(source) }
    public init(_ ruleSet: RuleSet) { self.ruleSet = ruleSet }

    /// `budget` bounds the documents `get()` / `exists()` read (shared by the evaluations of one
    /// request: pass one for the documents of a batch); nil: 10 for this call.
    public func evaluate(_ request: RulesRequest, lookup: RulesDocumentLookup? = nil, budget: RulesReadBudget? = nil) -> RulesDecision {
        let budget = budget ?? RulesReadBudget()
        let hits = MatchResolver.resolve(ruleSet, segments: request.matchSegments)
        if hits.isEmpty { return RulesDecision(allowed: false, reason: "no match for /\(request.matchPath.joined(separator: "/"))") }
        guard request.method == .list else {
            return decide(request, hits, resource: resourceValue(request), lookup: lookup, budget: budget)
        }
        // A listing with no filter is a query with none: `resource` is never null for `list`.
        let query = request.query ?? RulesQuery()
        if request.collectionGroup && ruleSet.version != "2" {
            return RulesDecision(allowed: false, reason: "denied: collection-group queries need rules_version = '2'")
        }
        // A query is allowed when the rule holds for every way its filter can match.
        guard let ways = query.alternatives else {
            return RulesDecision(allowed: false, reason: "denied: the query's filter has more than \(RulesQuery.maxAlternatives) alternatives")
        }
        var last = RulesDecision(allowed: false, reason: "denied: the query matches nothing")
        for pins in ways {
            last = decide(request, hits, resource: RulesQuery.resource(pins, database: request.database), lookup: lookup, budget: budget)
            if !last.allowed { return last }
        }
        return last
    }

    private func decide(_ request: RulesRequest, _ hits: [MatchResolver.Hit], resource: RuleValue,
                        lookup: RulesDocumentLookup?, budget: RulesReadBudget) -> RulesDecision {
        let ev = ExpressionEvaluator(request: requestValue(request), resource: resource,
                                     database: request.database, lookup: lookup, budget: budget)
        var lastError: String?
        for hit in hits {
            for allow in hit.block.allows where allow.methods.contains(request.method) {
                let scope = ExpressionEvaluator.Scope(names: hit.bindings, functions: hit.functionScopes)
                do {
                    if case .bool(true) = try ev.eval(allow.condition, scope) {
                        return RulesDecision(allowed: true, reason: "allowed by the rule at \(allow.location)")
                    }
                } catch {
                    lastError = "\(allow.location): \(error)"
                }
            }
        }
        return RulesDecision(allowed: false, reason: lastError.map { "denied (error at \($0))" } ?? "denied: no rule allows \(request.method.rawValue)")
    }

    private func fullPath(_ r: RulesRequest) -> [String] { r.matchPath }

    func requestValue(_ r: RulesRequest) -> RuleValue {
        var m: RuleMap = [
            "method": .string(r.method.rawValue),
            "path": .path(fullPath(r)),
            "time": .timestamp(r.time),
            "auth": r.auth.map { .map(["uid": .string($0.uid), "token": .map(RuleValue.map($0.token, database: r.database))]) } ?? .null,
        ]
        if let q = r.query { m["query"] = q.value }
        if let data = r.newData {
            m["resource"] = document(r, data)
        } else {
            m["resource"] = .null
        }
        return .map(m)
    }

    func resourceValue(_ r: RulesRequest) -> RuleValue {
        guard r.method != .list, let data = r.existing else { return .null }
        return document(r, data)
    }

    private func document(_ r: RulesRequest, _ data: MapValue) -> RuleValue {
        .map(["data": .map(RuleValue.map(data, database: r.database)), "id": .string(r.path.last ?? ""),
              "__name__": .path(fullPath(r))])
    }
}
