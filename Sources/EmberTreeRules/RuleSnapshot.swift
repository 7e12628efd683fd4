import EmberModel

/// Responsible for: the tree a rule reads, before (`root`, `data`) or after (`newData`) the
/// operation: nodes read through the caller's reader (the backend's store, or a value), each
/// read once per decision, with the operation's overwrites laid over them for the after view.
/// Paths are the namespace's own. Used on one thread at a time (one decision).
final class RuleData {
    private let base: (TreePath) -> TreeValue
    private let overlay: [TreeWriteOp]
    private var cache: [TreePath: TreeValue] = [:]
    /// The priorities, in the same view (a node's at `<path>/.p`); nil: none anywhere.
    let priorities: RuleData?

    init(read: @escaping (TreePath) -> TreeValue, overlay: [TreeWriteOp] = [], priorities: RuleData? = nil) {
        base = read
        self.overlay = overlay
        self.priorities = priorities
    }

    /// The priority of the node at `p` (null: none).
    func priority(at p: TreePath) -> TreeValue { priorities?.value(at: p.child(".p")) ?? .null }

    func value(at p: TreePath) -> TreeValue {
        if let v = cache[p] { return v }
        // A cached ancestor holds it already.
        var ancestor = p
        while let up = ancestor.parent {
            ancestor = up
            if let v = cache[ancestor] { return v.value(at: ancestor.relative(p)) }
        }
        var v = base(p)
        for op in overlay {
            if op.path.isAncestorOrSelf(of: p) {
                v = op.value.value(at: op.path.relative(p))
            } else if p.isAncestor(of: op.path) {
                v.set(p.relative(op.path), op.value)
            }
        }
        cache[p] = v
        return v
    }
}

/// Responsible for: a RuleDataSnapshot: one location of a `RuleData`, with the methods rules
/// call on it (`val`, `child`, `parent`, `hasChild`, `hasChildren`, `exists`, `getPriority`,
/// `isNumber`, `isString`, `isBoolean`).
struct RuleSnapshot {
    let path: TreePath
    let data: RuleData

    var value: TreeValue { data.value(at: path) }

    func call(_ method: String, _ args: [RuleValue]) throws -> RuleValue {
        func noArguments() throws {
            guard args.isEmpty else { throw RuleEvaluationError("\(method)() takes no arguments") }
        }
        switch method {
        case "val": try noArguments(); return RuleValue(value)
        case "exists": try noArguments(); return .bool(value.exists)
        case "getPriority": try noArguments(); return RuleValue(data.priority(at: path))
        case "isNumber":
            try noArguments()
            switch value { case .int, .double: return .bool(true); default: return .bool(false) }
        case "isString":
            try noArguments()
            if case .string = value { return .bool(true) }; return .bool(false)
        case "isBoolean":
            try noArguments()
            if case .bool = value { return .bool(true) }; return .bool(false)
        case "parent":
            try noArguments()
            guard let up = path.parent else { throw RuleEvaluationError("parent() of the root") }
            return .snapshot(RuleSnapshot(path: up, data: data))
        case "child":
            return .snapshot(RuleSnapshot(path: path.appending(try childPath(args)), data: data))
        case "hasChild":
            return .bool(data.value(at: path.appending(try childPath(args))).exists)
        case "hasChildren":
            if args.isEmpty { return .bool(value.childCount > 0) }
            guard args.count == 1, case .array(let names) = args[0] else {
                throw RuleEvaluationError("hasChildren() takes nothing or an array of child names")
            }
            let v = value
            for n in names {
                guard case .string(let s) = n else { throw RuleEvaluationError("hasChildren() takes an array of strings") }
                guard v.value(at: try RuleSnapshot.parse(s).segments).exists else { return .bool(false) }
            }
            return .bool(true)
        default:
            throw RuleEvaluationError("a snapshot has no method \(method)()")
        }
    }

    private func childPath(_ args: [RuleValue]) throws -> TreePath {
        guard args.count == 1, case .string(let s) = args[0] else { throw RuleEvaluationError("child() and hasChild() take one string") }
        return try RuleSnapshot.parse(s)
    }

    /// A child path as rules write it ("a/b"); an invalid key is an error.
    static func parse(_ s: String) throws -> TreePath {
        do { return try TreePath(parsing: s, context: "child path") } catch { throw RuleEvaluationError("invalid child path '\(s)'") }
    }
}
