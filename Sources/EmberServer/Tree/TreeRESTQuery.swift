import EmberModel
import EmberTreeRules

/// Responsible for: a REST GET's query parameters as a tree query (`orderBy` "$key", "$value" or
/// a child path, JSON-quoted; `limitToFirst`/`limitToLast`; `startAt`/`startAfter`/`endAt`/
/// `endBefore`/`equalTo` as JSON values, optionally followed by `,<JSON key>`), with the
/// Realtime Database's refusals, and its result over a node: the children in range, the limit
/// applied, as an object (its order is the client's to restore).
struct TreeRESTQuery {
    static let parameters = ["orderBy", "limitToFirst", "limitToLast", "startAt", "startAfter", "endAt", "endBefore", "equalTo"]

    let query: TreeQuery
    /// `limitToFirst=0` / `limitToLast=0`: nothing.
    let empty: Bool
    /// The query as `.read` rules see it (`query.*`).
    var rulesQuery = TreeRulesQuery()
    /// The `.indexOn` entry the order needs (a child path, or ".value"); nil for `$key`.
    var indexName: String?
    /// `orderBy="$priority"`: children ordered (and bounded) by their priorities, which the
    /// caller passes to `apply` (`query` then carries the bounds over a value order).
    var byPriority = false

    /// Nil when no query parameter is given.
    static func parse(_ params: [String: String]) throws -> TreeRESTQuery? {
        let given = parameters.filter { params[$0] != nil }
        guard !given.isEmpty else { return nil }
        guard let orderText = params["orderBy"] else {
            throw TreeRESTError(400, "orderBy must be defined when other query parameters are defined")
        }
        var q = TreeQuery()
        var rq = TreeRulesQuery()
        var indexName: String?
        var byPriority = false
        do {
            guard case .string(let order)? = try? ValueJSON.parse(orderText, plain: true) else {
                throw TreeRESTError(400, "orderBy must be a valid JSON encoded path")
            }
            switch order {
            case "$key": q = try q.orderBy(.key); rq.orderByKey = true
            case "$value": q = try q.orderBy(.value); rq.orderByValue = true; indexName = ".value"
            case "$priority": q = try q.orderBy(.value); rq.orderByPriority = true; byPriority = true
            default:
                let path = try TreePath(parsing: order, context: "orderBy path")
                guard !path.isRoot else { throw TreeRESTError(400, "orderBy must be a valid JSON encoded path") }
                q = try q.orderBy(.child(path))
                indexName = path.segments.joined(separator: "/")
                rq.orderByChild = indexName
            }
            if params["limitToFirst"] != nil && params["limitToLast"] != nil {
                throw TreeRESTError(400, "limitToFirst and limitToLast cannot both be given")
            }
            var empty = false
            for (name, type) in [("limitToFirst", TreeQuery.LimitType.first), ("limitToLast", .last)] {
                guard let text = params[name] else { continue }
                guard let n = Int(text), n >= 0 else { throw TreeRESTError(400, "\(name) must be a non-negative integer, got '\(text)'") }
                if n == 0 { empty = true } else { q = try q.limit(n, type) }
                if type == .first { rq.limitToFirst = n } else { rq.limitToLast = n }
            }
            if let eq = params["equalTo"] {
                if params["startAt"] != nil || params["startAfter"] != nil || params["endAt"] != nil || params["endBefore"] != nil {
                    throw TreeRESTError(400, "equalTo cannot be given with startAt, startAfter, endAt or endBefore")
                }
                let (v, k) = try bound(eq, "equalTo")
                q = try q.equal(v, key: k)
                rq.equalTo = v
            }
            if params["startAt"] != nil && params["startAfter"] != nil { throw TreeRESTError(400, "startAt and startAfter cannot both be given") }
            if params["endAt"] != nil && params["endBefore"] != nil { throw TreeRESTError(400, "endAt and endBefore cannot both be given") }
            if let s = params["startAt"] { let (v, k) = try bound(s, "startAt"); q = try q.start(.at, v, key: k); rq.startAt = v }
            if let s = params["startAfter"] { let (v, k) = try bound(s, "startAfter"); q = try q.start(.exclusive, v, key: k); rq.startAt = v }
            if let s = params["endAt"] { let (v, k) = try bound(s, "endAt"); q = try q.end(.at, v, key: k); rq.endAt = v }
            if let s = params["endBefore"] { let (v, k) = try bound(s, "endBefore"); q = try q.end(.exclusive, v, key: k); rq.endAt = v }
            return TreeRESTQuery(query: q, empty: empty, rulesQuery: rq, indexName: indexName, byPriority: byPriority)
        } catch let e as EmberError {
            throw TreeRESTError(400, e.message)
        }
    }

    /// A bound's value (null, a boolean, a number or a string), and its key when `,<JSON key>` follows.
    private static func bound(_ text: String, _ name: String) throws -> (TreeValue, String?) {
        if let v = try? leaf(ValueJSON.parse(text, plain: true)) { return (v, nil) }
        // `<json>,<json key>`: the last comma after which a JSON string parses.
        var i = text.endIndex
        while let comma = text[..<i].lastIndex(of: ",") {
            if let v = try? leaf(ValueJSON.parse(String(text[..<comma]), plain: true)),
               case .string(let k)? = try? ValueJSON.parse(String(text[text.index(after: comma)...]), plain: true) {
                return (v, k)
            }
            i = comma
        }
        throw TreeRESTError(400, "\(name) must be a JSON null, boolean, number or string (optionally followed by ,<JSON key>), got '\(text)'")
    }

    private static func leaf(_ v: Value) throws -> TreeValue {
        guard let t = TreeValue.leaf(v) else { throw EmberError.invalidArgument("not a leaf") }
        return t
    }

    /// The query's result over `node`; `priorities`: the node's priorities (TreePriorities'
    /// layout), for `orderBy="$priority"`.
    func apply(to node: TreeValue, priorities: TreeValue = .null) -> TreeValue {
        guard case .object(let o) = node else { return empty ? .null : node }
        if empty { return .null }
        let index = query.index
        let byPriority = self.byPriority
        var entries = o.children.map {
            ChildEntry(key: $0.key.s, sortValue: byPriority ? TreePriorities.own(priorities.child($0.key.s)) : index.sortValue(of: $0.value))
        }.filter { query.contains($0) }
        entries.sort { ChildEntry.compare($0, $1) < 0 }
        if let n = query.limit, entries.count > n {
            entries = query.limitType == .first ? Array(entries.prefix(n)) : Array(entries.suffix(n))
        }
        var out: [String: TreeValue] = [:]
        for e in entries { out[e.key] = o[e.key] }
        return out.isEmpty ? .null : .object(TreeObject(out))
    }
}
