/// Responsible for: what may be written into the tree: every key valid (TreeKey), numbers
/// finite, and the written value's depth plus its path's at most 32 levels (SEMANTICS.md;
/// Firebase `validateFirebaseData`).
///
///     try TreeLimits.validate(value, at: path)
public enum TreeLimits {
    public static let maxDepth = 32

    public static func validate(_ value: TreeValue, at path: TreePath) throws {
        try check(value, depth: path.count, where: path)
    }

    private static func check(_ v: TreeValue, depth: Int, where path: TreePath) throws {
        switch v {
        case .double(let d) where !d.isFinite:
            throw EmberError.invalidArgument("Invalid value at '\(path)': \(d) is not a valid number (NaN and infinities cannot be stored).")
        case .object(let o):
            if depth + 1 > maxDepth {
                throw EmberError.invalidArgument("Invalid value at '\(path)': the tree is at most \(maxDepth) levels deep (path and value together).")
            }
            for (k, c) in o.children {
                try TreeKey.validate(k, context: "key at '\(path)'")
                try check(c, depth: depth + 1, where: path.child(k))
            }
        default:
            if depth > maxDepth {
                throw EmberError.invalidArgument("Invalid value at '\(path)': the tree is at most \(maxDepth) levels deep (path and value together).")
            }
        }
    }
}
