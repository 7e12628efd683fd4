import Foundation
import EmberModel

/// Responsible for: turning Swift values given to tree writes and query bounds into tree
/// values (dictionaries are objects, arrays objects with keys "0", "1", ...; nil and NSNull
/// are null) and tree values back into Swift values (objects whose keys are dense integers
/// come back as arrays, with NSNull in the holes, as Firebase returns them).
enum TreeUserData {
    static func parse(_ v: Any?, at path: String = "") throws -> TreeValue {
        guard let v else { return .null }
        switch v {
        case is NSNull: return .null
        case let d as [String: Any]:
            var out: [String: TreeValue] = [:]
            out.reserveCapacity(d.count)
            for (k, c) in d {
                let value = try parse(c, at: path + "/" + k)
                if value.exists { out[k] = value }
            }
            return out.isEmpty ? .null : .object(TreeObject(out))
        case let d as [AnyHashable: Any]:
            var s: [String: Any] = [:]
            for (k, c) in d {
                guard let ks = k.base as? String else { throw EmberError.invalidArgument("Invalid key \(k) at '\(path)': keys must be strings.") }
                s[ks] = c
            }
            return try parse(s, at: path)
        case let a as [Any]:
            var out: [String: TreeValue] = [:]
            for (i, c) in a.enumerated() {
                let value = try parse(c, at: path + "/\(i)")
                if value.exists { out["\(i)"] = value }
            }
            return out.isEmpty ? .null : .object(TreeObject(out))
        default:
            switch try UserData.plainValue(v, path: path) {
            case .null: return .null
            case .bool(let b): return .bool(b)
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string(let s): return .string(s)
            default: throw EmberError.invalidArgument("Unsupported type \(type(of: v)) at '\(path)': the tree holds null, booleans, numbers, strings, dictionaries and arrays.")
            }
        }
    }

    /// nil for null; Bool, Int, Double, String, [String: Any] or [Any].
    static func toSwift(_ v: TreeValue) -> Any? {
        switch v {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .object(let o):
            if let n = v.arrayLength {
                var a = [Any](repeating: NSNull(), count: n)
                for (k, c) in o.children { a[Int(k.s)!] = toSwift(c) ?? NSNull() }
                return a
            }
            var d: [String: Any] = [:]
            d.reserveCapacity(o.count)
            // (A Swift dictionary merges keys that differ only in Unicode normalization.)
            for (k, c) in o.children { d[k.s] = toSwift(c) }
            return d
        }
    }
}
