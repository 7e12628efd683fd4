import EmberModel
import Foundation
import EmberConcurrency

/// Responsible for: the tree's priorities on the server, kept beside the data: a namespace's
/// node at `<path>` has its priority at the stored `.pri/<ns>/<path>/.p` (no user key starts
/// with '.'), so the data, its queries, streams and rules see no priorities, and every write
/// replaces the priorities under the path it writes (a set drops the old ones, as in the
/// Realtime Database). Priorities appear only where asked: `format=export`, `/.priority`,
/// `orderBy="$priority"`, `getPriority()`, and the node hashes (ETags).
enum TreePriorities {
    /// The stored tree's key under which namespaces' priorities live.
    static let namespacesKey = ".pri"
    /// A node's own priority's key among its children's priorities.
    static let key = TreeHash.priorityKey

    /// The root of `namespace`'s priorities in the stored tree.
    static func base(_ namespace: String) -> TreePath { TreePath(unchecked: [namespacesKey, namespace]) }

    /// The priority of the node whose priorities subtree is `t`.
    static func own(_ t: TreeValue) -> TreeValue { t.child(key) }

    /// `v` with its priorities (subtree `p`) in the Realtime Database's export format: an object
    /// gets a `.priority` key, a leaf with one becomes `{".value": v, ".priority": p}`.
    static func export(_ v: TreeValue, _ p: TreeValue) -> TreeValue {
        guard p.exists, v.exists else { return v }
        let mine = own(p)
        switch v {
        case .object(let o):
            var out: [String: TreeValue] = [:]
            for (k, c) in o.children { out[k.s] = export(c, p.child(k.s)) }
            if mine.exists { out[".priority"] = mine }
            return .object(TreeObject(out))
        default:
            return mine.exists ? .object(TreeObject([".value": v, ".priority": mine])) : v
        }
    }
}

/// Responsible for: knowing which namespaces may hold priorities, so that a write to one that
/// never had any skips replacing them (one overwrite less per write). A namespace is asked once
/// (whether its priorities subtree exists) and marked when a write gives one; it is never
/// unmarked (a namespace whose priorities were all removed only pays the extra overwrite).
/// Used on the backend's queue; thread-safe.
final class TreePriorityFlags: Sendable {
    private let known = LockedValueBox<[String: Bool]>([:])

    /// Whether `namespace` may hold priorities; `read` reads the stored tree (first time only).
    func mayHave(_ namespace: String, read: (TreePath) -> TreeValue) -> Bool {
        if let k = known.withLockedValue({ $0[namespace] }) { return k }
        let has = read(TreePriorities.base(namespace)).exists
        known.withLockedValue { $0[namespace] = ($0[namespace] ?? false) || has }
        return has
    }

    /// `namespace` now holds priorities.
    func mark(_ namespace: String) { known.withLockedValue { $0[namespace] = true } }
}
