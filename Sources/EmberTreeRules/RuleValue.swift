import EmberModel
import Foundation

/// Responsible for: a value while a rule runs: JavaScript's null, booleans, numbers (doubles),
/// strings, arrays and objects (`auth`, `query`, a `val()` of a node with children), a
/// `RuleSnapshot` (`root`, `data`, `newData` and what their methods return) and a regular
/// expression literal.
enum RuleValue {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([RuleValue])
    case object([String: RuleValue])
    case snapshot(RuleSnapshot)
    case regex(RuleRegex)

    /// A stored node as `val()` returns it.
    init(_ v: TreeValue) {
        switch v {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .number(Double(i))
        case .double(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .object(let o):
            var out: [String: RuleValue] = [:]
            for (k, c) in o.children { out[k.s] = RuleValue(c) }
            self = .object(out)
        }
    }

    /// A JSON-like value (ID-token claims, `auth_variable_override`).
    init(_ v: Value) {
        switch v {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .number(Double(i))
        case .double(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .timestamp(let t): self = .number(Double(t.micros) / 1_000_000)
        case .array(let a): self = .array(a.map { RuleValue($0) })
        case .map(let m):
            var out: [String: RuleValue] = [:]
            for (k, c) in m.entries { out[k] = RuleValue(c) }
            self = .object(out)
        default: self = .null
        }
    }

    /// JavaScript's `String(x)`, for `+` with a string.
    var text: String? {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d): return RuleValue.numberText(d)
        case .string(let s): return s
        default: return nil
        }
    }

    static func numberText(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == d.rounded(), abs(d) < 1e21 { return String(Int64(d)) }
        return String(d)
    }
}

/// Responsible for: a `/pattern/flags` literal, compiled once when the rules load. Matching
/// searches the string (JavaScript's `test`): anchor with `^` and `$` to match it whole.
final class RuleRegex: Sendable {
    private let regex: NSRegularExpression

    init?(pattern: String, caseInsensitive: Bool) {
        guard let r = try? NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : []) else { return nil }
        regex = r
    }

    func test(_ s: String) -> Bool {
        regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
    }
}

/// Responsible for: why a rule failed while it ran (it then counts as false).
struct RuleEvaluationError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

// Values kept beyond one decision (`auth`, `query`, literals in loaded rules) hold no snapshot;
// snapshots exist only while one decision runs on one thread.
extension RuleValue: @unchecked Sendable {} // values kept across threads hold no snapshot (see above)
