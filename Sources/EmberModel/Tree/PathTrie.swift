/// Responsible for: values attached to tree paths, found by ancestry: everything at a path's
/// ancestors (and itself), and everything below a path. Engines index listeners and listens on
/// it so that a change at a path reaches only what is above or below it.
///
///     let t = PathTrie<Int>(); t[p] = 1
///     t.forEachAncestorOrSelf(of: q) { path, v in }   // p when p is q or above it
public final class PathTrie<T> {
    final class Node {
        var value: T?
        var children: [UTF8String: Node] = [:]   // by bytes, as tree keys
    }
    private let root = Node()
    public private(set) var count = 0

    public init() {}

    private func node(_ path: TreePath, create: Bool) -> Node? {
        var n = root
        for s in path.segments {
            if let c = n.children[UTF8String(s)] { n = c } else {
                guard create else { return nil }
                let c = Node()
                n.children[UTF8String(s)] = c
                n = c
            }
        }
        return n
    }

    public subscript(path: TreePath) -> T? {
        get { node(path, create: false)?.value }
        set {
            if let v = newValue {
                let n = node(path, create: true)!
                if n.value == nil { count += 1 }
                n.value = v
            } else {
                remove(path)
            }
        }
    }

    private func remove(_ path: TreePath) {
        var trail: [Node] = [root]
        var n = root
        for s in path.segments {
            guard let c = n.children[UTF8String(s)] else { return }
            trail.append(c)
            n = c
        }
        if n.value != nil { count -= 1 }
        n.value = nil
        // Prune empty nodes bottom-up.
        var i = path.segments.count
        while i > 0, trail[i].value == nil, trail[i].children.isEmpty {
            trail[i - 1].children[UTF8String(path.segments[i - 1])] = nil
            i -= 1
        }
    }

    /// Calls `body` with the depth (number of segments) and value of each ancestor of `path`
    /// that has a value, root first, then `path` itself.
    public func forEachAncestorOrSelf(of path: TreePath, _ body: (Int, T) -> Void) {
        var n = root
        if let v = n.value { body(0, v) }
        for (i, s) in path.segments.enumerated() {
            guard let c = n.children[UTF8String(s)] else { return }
            n = c
            if let v = n.value { body(i + 1, v) }
        }
    }

    /// Whether `path` or one of its ancestors has a value.
    public func hasAncestorOrSelf(of path: TreePath) -> Bool {
        var found = false
        forEachAncestorOrSelf(of: path) { _, _ in found = true }
        return found
    }

    /// Calls `body` with the path and value of each entry strictly below `path`.
    public func forEachDescendant(of path: TreePath, _ body: (TreePath, T) -> Void) {
        guard let start = node(path, create: false) else { return }
        func walk(_ n: Node, _ segs: inout [String]) {
            for (k, c) in n.children {
                segs.append(k.s)
                if let v = c.value { body(TreePath(unchecked: segs), v) }
                walk(c, &segs)
                segs.removeLast()
            }
        }
        var segs = path.segments
        walk(start, &segs)
    }

    /// Whether anything lies strictly below `path`.
    public func hasDescendant(of path: TreePath) -> Bool {
        guard let n = node(path, create: false) else { return false }
        return !n.children.isEmpty
    }
}
