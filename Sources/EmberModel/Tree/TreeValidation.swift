/// Responsible for: what may be written into the tree: every key valid (TreeKey), numbers
/// finite, server values' placeholders well formed (TreeServerValues), nothing under `.info`,
/// and the written value's depth plus its path's at most 32 levels (docs/semantics.md; Firebase
/// `validateFirebaseData`). The pass also says whether the value holds server values.
///
///     try TreeLimits.validate(value, at: path)
public enum TreeLimits {
    public static let maxDepth = 32

    /// Finite numbers, valid keys, and every path the value makes (with `path`) at most
    /// `maxDepth` levels and `TreePath.maxBytes` bytes, as the Firebase SDKs check a write.
    /// Returns whether the value holds a server value's placeholder.
    @discardableResult
    public static func validate(_ value: TreeValue, at path: TreePath) throws -> Bool {
        try check(value, depth: path.count, bytes: path.segments.reduce(0) { $0 + $1.utf8.count + 1 }, where: path)
    }

    private static func check(_ v: TreeValue, depth: Int, bytes: Int, where path: TreePath) throws -> Bool {
        switch v {
        case .double(let d) where !d.isFinite:
            throw EmberError.invalidArgument("Invalid value at '\(path)': \(d) is not a valid number (NaN and infinities cannot be stored).")
        case .object(let o) where try TreeServerValues.kind(o) != nil:
            // A server value's placeholder stands for a leaf.
            if depth > maxDepth {
                throw EmberError.invalidArgument("Invalid value at '\(path)': the tree is at most \(maxDepth) levels deep (path and value together).")
            }
            return true
        case .object(let o):
            if depth + 1 > maxDepth {
                throw EmberError.invalidArgument("Invalid value at '\(path)': the tree is at most \(maxDepth) levels deep (path and value together).")
            }
            var serverValues = false
            for (k, c) in o.children {
                try TreeKey.validate(k.s, context: "key at '\(path)'")
                let childBytes = bytes + k.s.utf8.count + 1
                if childBytes > TreePath.maxBytes {
                    throw EmberError.invalidArgument("Invalid value at '\(String(path.description.prefix(60)))': the path of its key '\(String(k.s.prefix(40)))' would be \(childBytes) bytes; paths are at most \(TreePath.maxBytes) bytes.")
                }
                if try check(c, depth: depth + 1, bytes: childBytes, where: path.child(k.s)) { serverValues = true }
            }
            return serverValues
        default:
            if depth > maxDepth {
                throw EmberError.invalidArgument("Invalid value at '\(path)': the tree is at most \(maxDepth) levels deep (path and value together).")
            }
            return false
        }
    }
}

extension TreeLimits {
    /// Validates a multi-path write: each value at its path, and no path inside another
    /// (Firebase: "Path '/a' is an ancestor of '/a/b' and so it can't be updated at the same time").
    /// Returns whether a value holds a server value's placeholder.
    @discardableResult
    public static func validate(_ ops: [TreeWriteOp]) throws -> Bool {
        var serverValues = false
        for op in ops {
            if op.path.segments.first == TreePath.infoKey {
                throw EmberError.invalidArgument("Invalid write location '\(op.path)': .info is read-only (the client's connection state).")
            }
            if try validate(op.value, at: op.path) { serverValues = true }
        }
        if ops.count > 1 {
            let sorted = ops.map { $0.path }.sorted()
            for i in 1..<sorted.count where sorted[i - 1].isAncestorOrSelf(of: sorted[i]) {
                throw EmberError.invalidArgument("Invalid update: path '\(sorted[i - 1])' is \(sorted[i - 1] == sorted[i] ? "given twice" : "an ancestor of '\(sorted[i])'") and so they can't be updated at the same time.")
            }
        }
        return serverValues
    }
}
