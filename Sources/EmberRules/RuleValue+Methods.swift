import EmberModel

/// Responsible for: the methods rules call on values. Strings: `size() matches() lower() upper()
/// split() trim()`; lists: `size() hasAll() hasAny() hasOnly() join() toSet() removeAll()`; maps:
/// `keys() values() size() get(key, default) diff()`; map diffs: `addedKeys() removedKeys()
/// changedKeys() unchangedKeys() affectedKeys()`. Anything else is an evaluation error.
extension RuleValue {
    func call(_ method: String, _ args: [RuleValue], _ ev: ExpressionEvaluator) throws -> RuleValue {
        switch (self, method, args.count, args.first ?? .null, args.count > 1 ? args[1] : .null) {
        // strings
        // Strings are sequences of code points (as in CEL), not of Swift's grapheme clusters.
        case (.string(let s), "size", 0, _, _): return .int(Int64(s.unicodeScalars.count))
        case (.string(let s), "lower", 0, _, _): return .string(s.lowercased())
        case (.string(let s), "upper", 0, _, _): return .string(s.uppercased())
        case (.string(let s), "trim", 0, _, _): return .string(s.trimmingSpaces())
        case (.string(let s), "matches", 1, .string(let pattern), _):
            let re: Regex<AnyRegexOutput>
            do { re = try Regex(pattern).matchingSemantics(.unicodeScalar) } catch { throw RulesEvaluationError("invalid regular expression '\(pattern)'") }
            return .bool(s.wholeMatch(of: re) != nil)
        case (.string(let s), "split", 1, .string(let sep), _):
            guard !sep.isEmpty else { return .list(s.unicodeScalars.map { .string(String($0)) }) }
            return .list(RuleValue.split(s, by: sep).map { .string($0) })
        // lists
        case (.list(let l), "size", 0, _, _): return .int(Int64(l.count))
        case (.list(let l), "hasAll", 1, .list(let o), _): return .bool(o.allSatisfy { l.contains($0) })
        case (.list(let l), "hasAny", 1, .list(let o), _): return .bool(o.contains { l.contains($0) })
        case (.list(let l), "hasOnly", 1, .list(let o), _): return .bool(l.allSatisfy { o.contains($0) })
        case (.list(let l), "toSet", 0, _, _): return .list(l.reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
        case (.list(let l), "removeAll", 1, .list(let o), _): return .list(l.filter { !o.contains($0) })
        case (.list(let l), "concat", 1, .list(let o), _): return .list(l + o)
        case (.list(let l), "join", 1, .string(let sep), _):
            return .string(try l.map { v -> String in
                guard case .string(let s) = v else { throw RulesEvaluationError("join() needs a list of strings") }
                return s
            }.joined(separator: sep))
        // maps
        case (.map(let m), "size", 0, _, _): return .int(Int64(m.count))
        case (.map(let m), "keys", 0, _, _): return .list(m.keys.sorted().map { .string($0.s) })   // by UTF-8 bytes
        case (.map(let m), "values", 0, _, _): return .list(m.keys.sorted().map { m[$0]! })
        case (.map(let m), "diff", 1, .map(let o), _): return .mapDiff(MapDiff(new: m, old: o))
        case (.map, "get", 2, let key, let fallback):
            var cur = self
            let keys: [RuleValue]
            if case .list(let l) = key { keys = l } else { keys = [key] }
            for k in keys {
                guard case .string(let name) = k else { throw RulesEvaluationError("get() keys must be strings") }
                guard case .map(let inner) = cur, let next = inner[UTF8String(name)] else { return fallback }
                cur = next
            }
            return cur
        // map diffs
        case (.mapDiff(let d), "addedKeys", 0, _, _): return .list(d.addedKeys.map { .string($0) })
        case (.mapDiff(let d), "removedKeys", 0, _, _): return .list(d.removedKeys.map { .string($0) })
        case (.mapDiff(let d), "changedKeys", 0, _, _): return .list(d.changedKeys.map { .string($0) })
        case (.mapDiff(let d), "unchangedKeys", 0, _, _): return .list(d.unchangedKeys.map { .string($0) })
        case (.mapDiff(let d), "affectedKeys", 0, _, _): return .list(d.affectedKeys.map { .string($0) })
        default:
            throw RulesEvaluationError("no method \(method)() on \(typeName) with \(args.count) arguments")
        }
    }

    /// `string(x)`: the text of a value.
    func stringForm() throws -> String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let d): return String(d)
        case .string(let s): return s
        case .path(let p): return "/" + p.joined(separator: "/")
        default: throw RulesEvaluationError("string() of a \(typeName)")
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }.reversed()
        return String(String.UnicodeScalarView(scalars))
    }
}

extension RuleValue {
    /// `s` cut at each occurrence of `sep`, both as code points (Swift's own `split` compares
    /// grapheme clusters: "e\u{301}" would not contain "e", and would equal "\u{E9}").
    static func split(_ s: String, by sep: String) -> [String] {
        let a = Array(s.unicodeScalars), b = Array(sep.unicodeScalars)
        var out: [String] = []
        var piece = String.UnicodeScalarView()
        var i = 0
        while i < a.count {
            if i + b.count <= a.count && a[i..<(i + b.count)].elementsEqual(b) {
                out.append(String(piece))
                piece = String.UnicodeScalarView()
                i += b.count
            } else {
                piece.append(a[i])
                i += 1
            }
        }
        out.append(String(piece))
        return out
    }
}
