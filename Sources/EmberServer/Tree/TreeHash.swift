import Crypto
import EmberModel
import Foundation

/// Responsible for: the Realtime Database's hash of a node, as its SDKs compute it (firebase-js-sdk
/// `core/snap/LeafNode.ts`, `ChildrenNode.ts`): a leaf hashes `<type>:<value>` (numbers as the 16
/// hex digits of their IEEE 754 double), a node with children the concatenation of `:<key>:<hash>`
/// over its children in key order (32-bit integer keys numerically first); base64 of the SHA-1 of
/// the UTF-8 text. Ember has no priorities. Used as the REST ETag (`null_etag` for an empty
/// location) and, later, as the realtime protocol's compare-and-set hash.
///
///     TreeHash.of(.bool(true))   // "E5z61QM0lN/U2WsOnusszCTkR8M="
enum TreeHash {
    static let nullETag = "null_etag"

    /// The hash of `v` ("" for null).
    static func of(_ v: TreeValue) -> String {
        guard v.exists else { return "" }
        return Data(Insecure.SHA1.hash(data: Data(text(v).utf8))).base64EncodedString()
    }

    /// The ETag of a location holding `v`.
    static func etag(_ v: TreeValue) -> String { v.exists ? of(v) : nullETag }

    private static func text(_ v: TreeValue) -> String {
        switch v {
        case .null: return ""
        case .bool(let b): return "boolean:\(b)"
        case .int(let i): return "number:" + hex(Double(i))
        case .double(let d): return "number:" + hex(d)
        case .string(let s): return "string:" + s
        case .object(let o):
            var out = ""
            for k in o.sortedKeys() {
                let child = o[k]
                guard child.exists else { continue }
                out += ":" + k + ":" + of(child)
            }
            return out
        }
    }

    private static func hex(_ d: Double) -> String {
        let bits = d.bitPattern
        let s = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
