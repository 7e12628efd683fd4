/// Responsible for: the Realtime Database's hash of a node, as its SDKs compute it (firebase-js-sdk
/// `core/snap/LeafNode.ts`, `ChildrenNode.ts`): a leaf hashes `<type>:<value>` (numbers as the 16
/// hex digits of their IEEE 754 double), a node with children the concatenation of `:<key>:<hash>`
/// over its children in priority order (none, then numbers, then strings; ties in key order, 32-bit
/// integer keys numerically first); a node with a priority starts with `priority:<type>:<value>:`;
/// base64 of the SHA-1 of the UTF-8 text. The server's REST ETag and the realtime protocol's
/// compare-and-set hash (`p` with `h`), which a client's transaction sends.
///
/// Priorities, when a node has any, come as a tree beside it: a node's own priority is its
/// priorities' child `.p` (`priorityKey`), its children's priorities are the same-named children.
///
///     TreeHash.of(.bool(true))   // "E5z61QM0lN/U2WsOnusszCTkR8M="
public enum TreeHash {
    public static let nullETag = "null_etag"
    /// A node's own priority's key among its children's priorities.
    public static let priorityKey = ".p"

    /// The hash of `v` ("" for null) with its `priorities`.
    public static func of(_ v: TreeValue, priorities: TreeValue = .null) -> String {
        guard v.exists else { return "" }
        return Base64.encode(SHA1.digest(Array(text(v, priorities).utf8)))
    }

    /// The ETag of a location holding `v`.
    public static func etag(_ v: TreeValue, priorities: TreeValue = .null) -> String { v.exists ? of(v, priorities: priorities) : nullETag }

    private static func text(_ v: TreeValue, _ p: TreeValue) -> String {
        var out = ""
        let mine = p.child(priorityKey)
        if mine.exists { out = "priority:" + leaf(mine) + ":" }
        switch v {
        case .null: return ""
        case .object(let o):
            var keys = o.sortedKeys()
            if p.exists {
                // Priority order: none first, then numbers, then strings; ties keep key order.
                let ranked = keys.enumerated().map { (i, k) in (i, k, p.child(k).child(priorityKey)) }
                keys = ranked.sorted { a, b in
                    let c = TreeValue.compareIndexed(a.2, b.2)
                    return c != 0 ? c < 0 : a.0 < b.0
                }.map(\.1)
            }
            for k in keys {
                let child = o[k]
                guard child.exists else { continue }
                out += ":" + k + ":" + of(child, priorities: p.child(k))
            }
            return out
        default:
            return out + leaf(v)
        }
    }

    private static func leaf(_ v: TreeValue) -> String {
        switch v {
        case .bool(let b): return "boolean:\(b)"
        case .int(let i): return "number:" + hex(Double(i))
        case .double(let d): return "number:" + hex(d)
        case .string(let s): return "string:" + s
        default: return ""
        }
    }

    private static func hex(_ d: Double) -> String {
        let s = String(d.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
