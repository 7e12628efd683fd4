import EmberModel
import Foundation

/// Responsible for: the tree's JSON on the REST API. In: strict JSON (RFC 8259) to a tree value,
/// with the Realtime Database's placeholders resolved when the write is applied (`TreeInput`):
/// `{".sv": "timestamp"}` (ms since 1970 at the commit) and `{".sv": {"increment": n}}` (added to
/// the number stored there, or n where there is none); `{".value": v, ".priority": p}` is v
/// (Ember keeps no priorities); arrays are objects keyed "0", "1", ...; nulls and empty
/// containers vanish. Out: a node as JSON, an object whose keys are dense integers as an array
/// (as the Realtime Database renders it), integral doubles without a fraction (JavaScript
/// numbers), `pretty` as the Realtime Database's `print=pretty`.
enum TreeJSON {
    /// Parses `text` into a write's input; `path` names the location in errors.
    static func input(_ text: String, at path: TreePath) throws -> TreeInput {
        let v: Value
        do { v = try ValueJSON.parse(text, plain: true) } catch let e as EmberError {
            throw EmberError.invalidArgument("Invalid data; couldn't parse JSON object, array, or value. \(e.message)")
        }
        var input = TreeInput()
        input.value = try tree(v, path: [], input: &input, at: path)
        try TreeLimits.validate(input.value, at: path)
        // A priority on a node the value does not have (an empty object) is dropped.
        input.priorityEntries.removeAll { !input.value.value(at: $0.0).exists }
        return input
    }

    private static func tree(_ v: Value, path: [String], input: inout TreeInput, at base: TreePath) throws -> TreeValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let a):
            var out: [String: TreeValue] = [:]
            for (i, c) in a.enumerated() {
                let t = try tree(c, path: path + [String(i)], input: &input, at: base)
                if t.exists { out[String(i)] = t }
            }
            return out.isEmpty ? .null : .object(TreeObject(out))
        case .map(let m):
            if let sv = m[".sv"] {
                guard m.count == 1 else { throw invalid(base, path, "a server value ('.sv') must be the only key of its object") }
                return try serverValue(sv, path: path, input: &input, at: base)
            }
            if let p = m[".priority"] { try priority(p, path: path, input: &input, at: base) }
            if let inner = m[".value"] {
                guard m.entries.allSatisfy({ $0.key == ".value" || $0.key == ".priority" }) else {
                    throw invalid(base, path, "'.value' may only be next to '.priority'")
                }
                return try tree(inner, path: path, input: &input, at: base)
            }
            var out: [String: TreeValue] = [:]
            for (k, c) in m.entries where k != ".priority" {
                do { try TreeKey.validate(k, context: "key") } catch let e as EmberError { throw invalid(base, path, e.message) }
                let t = try tree(c, path: path + [k], input: &input, at: base)
                if t.exists { out[k] = t }
            }
            return out.isEmpty ? .null : .object(TreeObject(out))
        case .timestamp, .bytes, .reference, .geoPoint:
            throw invalid(base, path, "not a JSON value")
        }
    }

    /// A node's `.priority`: a number, a string or null (none).
    private static func priority(_ p: Value, path: [String], input: inout TreeInput, at base: TreePath) throws {
        switch p {
        case .null: return
        case .int, .double, .string:
            if case .double(let d) = p, !d.isFinite { throw invalid(base, path, "a priority must be a finite number") }
            if case .string(let s) = p, s.utf8.count > 768 { throw invalid(base, path, "a string priority is at most 768 bytes") }
            input.priorityEntries.append((path, TreeValue.leaf(p)!))
        default:
            throw invalid(base, path, "a priority must be a number, a string or null")
        }
    }

    /// `p` as a priority value, for `/.priority` writes (nil: none).
    static func priority(_ text: String, at base: TreePath) throws -> TreeValue {
        let v: Value
        do { v = try ValueJSON.parse(text, plain: true) } catch let e as EmberError {
            throw EmberError.invalidArgument("Invalid data; couldn't parse JSON object, array, or value. \(e.message)")
        }
        var input = TreeInput()
        try priority(v, path: [], input: &input, at: base)
        return input.priorityEntries.first?.1 ?? .null
    }

    private static func serverValue(_ sv: Value, path: [String], input: inout TreeInput, at base: TreePath) throws -> TreeValue {
        switch sv {
        case .string("timestamp"):
            input.timestamps.append(path)
            return .int(0)
        case .map(let m) where m.count == 1:
            if let n = m["increment"] {
                switch n {
                case .int(let i): input.increments.append((path, .int(i)))
                case .double(let d) where d.isFinite: input.increments.append((path, .double(d)))
                default: throw invalid(base, path, "increment takes a number")
                }
                return .int(0)
            }
            throw invalid(base, path, "unrecognized server value")
        default:
            throw invalid(base, path, "unrecognized server value")
        }
    }

    private static func invalid(_ base: TreePath, _ path: [String], _ why: String) -> EmberError {
        EmberError.invalidArgument("Invalid data at '\(base.appending(TreePath(unchecked: path)))': \(why)")
    }

    /// `v` as JSON text.
    static func render(_ v: TreeValue, pretty: Bool = false) -> String {
        var out = ""
        write(v, into: &out, pretty: pretty, indent: 0)
        return out
    }

    private static func write(_ v: TreeValue, into out: inout String, pretty: Bool, indent: Int) {
        switch v {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d == d.rounded(), abs(d) < 9_007_199_254_740_992 { out += String(Int64(d)) } else { out += "\(d)" }
        case .string(let s): quote(s, into: &out)
        case .object(let o):
            let pad = pretty ? String(repeating: " ", count: indent + 2) : ""
            let nl = pretty ? "\n" : ""
            if let n = v.arrayLength {
                out += "[" + nl
                for i in 0..<n {
                    out += pad
                    write(o[String(i)], into: &out, pretty: pretty, indent: indent + 2)
                    out += (i < n - 1 ? "," : "") + nl
                }
                out += (pretty ? String(repeating: " ", count: indent) : "") + "]"
                return
            }
            out += "{" + nl
            let keys = o.sortedKeys()
            for (i, k) in keys.enumerated() {
                out += pad
                quote(k, into: &out)
                out += pretty ? " : " : ":"
                write(o[k], into: &out, pretty: pretty, indent: indent + 2)
                out += (i < keys.count - 1 ? "," : "") + nl
            }
            out += (pretty ? String(repeating: " ", count: indent) : "") + "}"
        }
    }

    /// Appends `s` as a JSON string literal (ValueJSON's escaping).
    static func quote(_ s: String, into out: inout String) { ValueJSON.writeString(s, to: &out) }
}

/// Responsible for: a write's value as parsed, with the places of its server values, resolved
/// against the stored tree when the write is applied (on the backend's queue).
struct TreeInput: Sendable {
    var value: TreeValue = .null
    /// Paths (relative to the written location) of `{".sv": "timestamp"}`.
    var timestamps: [[String]] = []
    /// Paths of `{".sv": {"increment": n}}` with n.
    var increments: [([String], TreeValue)] = []
    /// The priorities the value gives its nodes (paths relative to the written location).
    var priorityEntries: [([String], TreeValue)] = []

    /// The priorities as stored beside the data: each node's at `<its path>/.p`; null: none.
    var priorities: TreeValue {
        var t = TreeValue.null
        for (p, v) in priorityEntries { t.set((p + [TreePriorities.key])[...], v) }
        return t
    }

    var hasServerValues: Bool { !timestamps.isEmpty || !increments.isEmpty }

    /// The value to store at `base`, given the tree as it is (`read`) and the commit's time.
    func resolved(at base: TreePath, read: (TreePath) -> TreeValue, nowMillis: Int64) -> TreeValue {
        guard hasServerValues else { return value }
        var v = value
        for p in timestamps { v.set(p[...], .int(nowMillis)) }
        for (p, delta) in increments {
            let current = read(base.appending(TreePath(unchecked: p)))
            v.set(p[...], TreeServerValues.add(current, delta))
        }
        return v
    }
}
