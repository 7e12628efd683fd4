import CEmberABI
import EmberModel
import EmberCore

// Responsible for: tree values crossing the ABI in the two formats of ember.h. In: maps are
// objects, arrays objects with keys "0", "1", ... (null elements and empty containers vanish, as
// in the Realtime Database); timestamps, bytes, references and geo points are refused. Out:
// objects whose keys are dense integers come back as arrays (nulls in the holes), other objects
// as maps in key order, except a snapshot's own children, which come in its query's order.

enum TreeValues {
    /// The tree value of one caller value (`what` names it in errors).
    static func tree(_ v: Value, _ what: String) throws -> TreeValue {
        do { return try TreeValue(json: v) } catch let e as EmberError { throw invalid("\(what): \(e.message)") }
    }

    /// Decodes a caller's buffer as a tree value.
    static func decode(_ p: UnsafeRawPointer?, _ len: Int, _ format: Int32, _ what: String) throws -> TreeValue {
        try tree(try decodeValue(p, len, format, what), what)
    }

    /// The value to encode for `v`; `index` (when not nil) orders `v`'s own children.
    static func value(_ v: TreeValue, orderedBy index: TreeIndex? = nil) -> Value {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .object(let o):
            if let index, index != .key {
                let entries = o.children.map { ChildEntry(key: $0.key.s, sortValue: index.sortValue(of: $0.value)) }
                    .sorted { ChildEntry.compare($0, $1) < 0 }
                return .map(MapValue(sortedEntries: entries.map { (key: $0.key, value: value(o[$0.key])) }))
            }
            if let n = v.arrayLength {
                var a = [Value](repeating: .null, count: n)
                for (k, c) in o.children { a[Int(k.s)!] = value(c) }
                return .array(a)
            }
            // Key order (docs/semantics.md 15); the entries are only iterated by the encoders.
            return .map(MapValue(sortedEntries: o.sortedKeys().map { (key: $0, value: value(o[$0])) }))
        }
    }

    /// An OWNED buffer (ember_free) holding `v` in `format`.
    static func encode(_ v: TreeValue, orderedBy index: TreeIndex? = nil, _ format: Int32,
                       _ outLen: UnsafeMutablePointer<Int>?) throws -> UnsafeMutablePointer<CChar> {
        try EmberC.encode(value(v, orderedBy: index), format, outLen)
    }
}
