import EmberModel

/// Responsible for: deciding the Realtime Database's requests by a rules source:
///
/// - a read of a location is allowed when a `.read` at it or above it is true, tried from the
///   root down (a grant covers everything below; a deeper rule cannot take it back; and a
///   deeper grant does not allow reading a parent: rules are not filters);
/// - a write (one or several overwrites, judged together as one operation on the tree they
///   produce) is allowed when, for each overwrite, a `.write` at or above its path is true and
///   every `.validate` holds: on the path down to it where the new data is not null, and at
///   every node of the new data below it (`.validate` does not cascade, and is skipped where
///   the new data is null);
/// - a child or `$value` order needs an `.indexOn` at the queried location.
///
/// Variables: `auth`, `now` (ms), `root`/`data` (before), `newData` (after, writes), `$names`
/// bound by wildcards, `query` (reads). A rule that fails while it runs is false. Paths are the
/// namespace's own; `read` gives the node at a path as it is before the operation. Immutable
/// and thread-safe; a decision runs on its caller's thread.
public final class TreeRules: Sendable {
    /// The source as given (comments included: `GET /.settings/rules.json`).
    public let source: String
    /// The rules as JSON without comments (`format=strict`).
    public let strict: String
    private let root: TreeRuleNode

    /// `{".read": true, ".write": true}` at the root: everyone may do everything.
    public static let open = try! TreeRules(source: "{\"rules\": {\".read\": true, \".write\": true}}")
    /// `{".read": false, ".write": false}`: no one but the admin.
    public static let locked = try! TreeRules(source: "{\"rules\": {\".read\": false, \".write\": false}}")

    public init(source: String) throws {
        let (node, json) = try TreeRulesLoader.load(source)
        self.source = source
        strict = ValueJSON.render(json, plain: true)
        root = node
    }

    /// `priorities` reads the tree of priorities (a node's priority at `<its path>/.p`), for
    /// `getPriority()`; without it every node has none.
    public func canRead(_ path: TreePath, auth: TreeRulesAuth, query: TreeRulesQuery? = nil, nowMillis: Int64,
                        read: @escaping (TreePath) -> TreeValue, priorities: ((TreePath) -> TreeValue)? = nil) -> Bool {
        let before = RuleData(read: read, priorities: priorities.map { RuleData(read: $0) })
        var vars: [String: RuleValue] = [
            "auth": auth.value, "now": .number(Double(nowMillis)),
            "root": .snapshot(RuleSnapshot(path: .root, data: before)),
            "query": (query ?? TreeRulesQuery()).value,
        ]
        var node: TreeRuleNode? = root
        var depth = 0
        while let n = node {
            if let rule = n.read {
                vars["data"] = .snapshot(RuleSnapshot(path: TreePath(unchecked: Array(path.segments.prefix(depth))), data: before))
                if RuleEvaluator(variables: vars).allows(rule) { return true }
            }
            guard depth < path.count, let (next, binding) = n.child(path.segments[depth]) else { return false }
            if let binding { vars[binding] = .string(path.segments[depth]) }
            node = next
            depth += 1
        }
        return false
    }

    /// `ops` applied in order, as one operation; `priorityOps` the priorities it sets, over the
    /// tree of priorities `priorities` reads (see `canRead`).
    public func canWrite(_ ops: [TreeWriteOp], auth: TreeRulesAuth, nowMillis: Int64,
                         read: @escaping (TreePath) -> TreeValue,
                         priorities: ((TreePath) -> TreeValue)? = nil, priorityOps: [TreeWriteOp] = []) -> Bool {
        let before = RuleData(read: read, priorities: priorities.map { RuleData(read: $0) })
        let after = RuleData(read: read, overlay: ops, priorities: priorities.map { RuleData(read: $0, overlay: priorityOps) })
        let base: [String: RuleValue] = [
            "auth": auth.value, "now": .number(Double(nowMillis)),
            "root": .snapshot(RuleSnapshot(path: .root, data: before)),
        ]
        for op in ops {
            var vars = base
            var granted = false
            var node: TreeRuleNode? = root
            var depth = 0
            // The path down to the overwrite: a grant, and every validate where data remains.
            while let n = node {
                let here = TreePath(unchecked: Array(op.path.segments.prefix(depth)))
                vars["data"] = .snapshot(RuleSnapshot(path: here, data: before))
                vars["newData"] = .snapshot(RuleSnapshot(path: here, data: after))
                if !granted, let rule = n.write, RuleEvaluator(variables: vars).allows(rule) { granted = true }
                if let rule = n.validate, after.value(at: here).exists, !RuleEvaluator(variables: vars).allows(rule) { return false }
                if depth == op.path.count { break }
                guard let (next, binding) = n.child(op.path.segments[depth]) else { node = nil; break }
                if let binding { vars[binding] = .string(op.path.segments[depth]) }
                node = next
                depth += 1
            }
            guard granted else { return false }
            if let n = node, !validateBelow(n, op.path, vars, before, after) { return false }
        }
        return true
    }

    /// Every `.validate` below `path` where the new data has a node.
    private func validateBelow(_ n: TreeRuleNode, _ path: TreePath, _ vars: [String: RuleValue],
                               _ before: RuleData, _ after: RuleData) -> Bool {
        guard n.wildcard != nil || !n.children.isEmpty, case .object(let o) = after.value(at: path) else { return true }
        for (key, _) in o.children {
            guard let (c, binding) = n.child(key.s) else { continue }
            let here = path.child(key.s)
            var v = vars
            if let binding { v[binding] = .string(key.s) }
            if let rule = c.validate {
                v["data"] = .snapshot(RuleSnapshot(path: here, data: before))
                v["newData"] = .snapshot(RuleSnapshot(path: here, data: after))
                if !RuleEvaluator(variables: v).allows(rule) { return false }
            }
            if !validateBelow(c, here, v, before, after) { return false }
        }
        return true
    }

    /// Whether `.indexOn` at `path` names `index` (a child path "a/b", or ".value").
    public func hasIndex(_ index: String, at path: TreePath) -> Bool {
        var node = root
        for s in path.segments {
            guard let (next, _) = node.child(s) else { return false }
            node = next
        }
        return node.indexOn.contains(index)
    }

    /// Whether a read decision at `path` may change when the data does (a `.read` on the way
    /// reads `root` or `data`) or with time alone (it reads `now`).
    public func readDepends(at path: TreePath) -> (onData: Bool, onClock: Bool) {
        var onData = false, onClock = false
        var node: TreeRuleNode? = root
        var depth = 0
        while let n = node {
            if let r = n.read { onData = onData || r.readsData; onClock = onClock || r.readsClock }
            guard depth < path.count, let (next, _) = n.child(path.segments[depth]) else { break }
            node = next
            depth += 1
        }
        return (onData, onClock)
    }
}
