/// Responsible for: a parsed rule expression (the syntax tree the evaluator walks).
indirect enum RuleExpr: Sendable {
    case literal(RuleValue)
    /// `auth`, `now`, `root`, `data`, `newData`, `query` or a `$wildcard`.
    case variable(String)
    case array([RuleExpr])
    case member(RuleExpr, String)
    case index(RuleExpr, RuleExpr)
    case call(RuleExpr, String, [RuleExpr])
    case unary(String, RuleExpr)
    case binary(String, RuleExpr, RuleExpr)
    case conditional(RuleExpr, RuleExpr, RuleExpr)

    /// Whether evaluating it may read the tree (`root`, `data`, `newData`): a decision without
    /// them does not change when the data does.
    var readsData: Bool {
        switch self {
        case .literal: return false
        case .variable(let n): return n == "root" || n == "data" || n == "newData"
        case .array(let a): return a.contains { $0.readsData }
        case .member(let e, _): return e.readsData
        case .index(let a, let b): return a.readsData || b.readsData
        case .call(let e, _, let args): return e.readsData || args.contains { $0.readsData }
        case .unary(_, let e): return e.readsData
        case .binary(_, let a, let b): return a.readsData || b.readsData
        case .conditional(let a, let b, let c): return a.readsData || b.readsData || c.readsData
        }
    }

    /// Whether it uses `now` (a decision that may change with time alone).
    var readsClock: Bool {
        switch self {
        case .literal: return false
        case .variable(let n): return n == "now"
        case .array(let a): return a.contains { $0.readsClock }
        case .member(let e, _): return e.readsClock
        case .index(let a, let b): return a.readsClock || b.readsClock
        case .call(let e, _, let args): return e.readsClock || args.contains { $0.readsClock }
        case .unary(_, let e): return e.readsClock
        case .binary(_, let a, let b): return a.readsClock || b.readsClock
        case .conditional(let a, let b, let c): return a.readsClock || b.readsClock || c.readsClock
        }
    }
}

/// Responsible for: turning a rule's text into a `RuleExpr` by precedence climbing (JavaScript's
/// precedence: `?:` < `||` < `&&` < equality < relational < `+ -` < `* / %` < unary < member,
/// index and call), and refusing at load time what could never run: unknown variables,
/// `newData` in a `.read`, `query` outside one, unknown methods, assignments.
struct RuleParser {
    /// The variables a rule may name besides its `$wildcards`.
    enum Kind { case read, write, validate }

    static let snapshotMethods: Set<String> = ["val", "child", "parent", "hasChild", "hasChildren", "exists",
                                               "getPriority", "isNumber", "isString", "isBoolean"]
    static let stringMethods: Set<String> = ["contains", "beginsWith", "endsWith", "replace", "toLowerCase",
                                             "toUpperCase", "matches"]

    private var tokens: [RuleToken]
    private var at = 0
    private let kind: Kind
    private let wildcards: Set<String>

    static func parse(_ source: String, kind: Kind, wildcards: Set<String>) throws -> RuleExpr {
        var p = RuleParser(tokens: try RuleLexer.tokens(source), kind: kind, wildcards: wildcards)
        let e = try p.conditional()
        guard case .end = p.peek.kind else { throw RuleSyntaxError("unexpected \(p.describe(p.peek))", offset: p.peek.offset) }
        return e
    }

    private init(tokens: [RuleToken], kind: Kind, wildcards: Set<String>) {
        self.tokens = tokens
        self.kind = kind
        self.wildcards = wildcards
    }

    private var peek: RuleToken { tokens[at] }
    private mutating func advance() -> RuleToken { let t = tokens[at]; if at < tokens.count - 1 { at += 1 }; return t }
    private func isOp(_ o: String) -> Bool { if case .op(let x) = peek.kind { return x == o }; return false }
    private mutating func expect(_ o: String) throws {
        guard isOp(o) else { throw RuleSyntaxError("expected '\(o)' but found \(describe(peek))", offset: peek.offset) }
        _ = advance()
    }
    private func describe(_ t: RuleToken) -> String {
        switch t.kind {
        case .name(let n): return "'\(n)'"
        case .number(let d): return "'\(d)'"
        case .string: return "a string"
        case .regex: return "a regular expression"
        case .op(let o): return "'\(o)'"
        case .end: return "the end of the rule"
        }
    }

    private mutating func conditional() throws -> RuleExpr {
        let c = try binary(0)
        guard isOp("?") else { return c }
        _ = advance()
        let a = try conditional()
        try expect(":")
        let b = try conditional()
        return .conditional(c, a, b)
    }

    private static let levels: [[String]] = [["||"], ["&&"], ["==", "!=", "===", "!=="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]]

    private mutating func binary(_ level: Int) throws -> RuleExpr {
        guard level < Self.levels.count else { return try unary() }
        var left = try binary(level + 1)
        while case .op(let o) = peek.kind, Self.levels[level].contains(o) {
            _ = advance()
            let right = try binary(level + 1)
            left = .binary(o, left, right)
        }
        return left
    }

    private mutating func unary() throws -> RuleExpr {
        if isOp("!") || isOp("-") {
            guard case .op(let o) = advance().kind else { fatalError("unreachable") }
            return .unary(o, try unary())
        }
        return try postfix()
    }

    private mutating func postfix() throws -> RuleExpr {
        var e = try primary()
        while true {
            if isOp(".") {
                _ = advance()
                let t = advance()
                guard case .name(let n) = t.kind else { throw RuleSyntaxError("expected a name after '.' but found \(describe(t))", offset: t.offset) }
                if isOp("(") {
                    _ = advance()
                    var args: [RuleExpr] = []
                    if !isOp(")") {
                        repeat {
                            if isOp(",") { _ = advance() }
                            args.append(try conditional())
                        } while isOp(",")
                    }
                    try expect(")")
                    guard Self.snapshotMethods.contains(n) || Self.stringMethods.contains(n) else {
                        throw RuleSyntaxError("unknown method '\(n)'", offset: t.offset)
                    }
                    e = .call(e, n, args)
                } else {
                    e = .member(e, n)
                }
            } else if isOp("[") {
                _ = advance()
                let i = try conditional()
                try expect("]")
                e = .index(e, i)
            } else if isOp("(") {
                throw RuleSyntaxError("only methods may be called", offset: peek.offset)
            } else {
                return e
            }
        }
    }

    private mutating func primary() throws -> RuleExpr {
        let t = advance()
        switch t.kind {
        case .number(let d): return .literal(.number(d))
        case .string(let s): return .literal(.string(s))
        case .regex(let pattern, let flags):
            guard flags.allSatisfy({ $0 == "i" }) else { throw RuleSyntaxError("unsupported regular expression flags '\(flags)' (only 'i')", offset: t.offset) }
            guard let r = RuleRegex(pattern: pattern, caseInsensitive: !flags.isEmpty) else {
                throw RuleSyntaxError("invalid regular expression /\(pattern)/", offset: t.offset)
            }
            return .literal(.regex(r))
        case .name(let n):
            switch n {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "null": return .literal(.null)
            case "auth", "now", "root", "data": return .variable(n)
            case "newData":
                guard kind != .read else { throw RuleSyntaxError("'newData' is not defined in a .read rule", offset: t.offset) }
                return .variable(n)
            case "query":
                guard kind == .read else { throw RuleSyntaxError("'query' is only defined in a .read rule", offset: t.offset) }
                return .variable(n)
            default:
                guard n.hasPrefix("$"), wildcards.contains(n) else { throw RuleSyntaxError("unknown variable '\(n)'", offset: t.offset) }
                return .variable(n)
            }
        case .op("("):
            let e = try conditional()
            try expect(")")
            return e
        case .op("["):
            var items: [RuleExpr] = []
            if !isOp("]") {
                repeat {
                    if isOp(",") { _ = advance() }
                    items.append(try conditional())
                } while isOp(",")
            }
            try expect("]")
            return .array(items)
        default:
            throw RuleSyntaxError("unexpected \(describe(t))", offset: t.offset)
        }
    }
}
