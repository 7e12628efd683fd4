/// Responsible for: the expressions of the rules language, as the parser produces them.
///
///     request.auth.uid == uid && request.resource.data.keys().hasOnly(['name'])
///     // .binary(.and, .binary(.eq, .member(.member(.identifier("request"), "auth"), "uid"), ...), ...)
public indirect enum Expr: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case list([Expr])
    case map([(key: Expr, value: Expr)])
    /// `/databases/$(database)/documents/users/$(uid)`: each segment literal text or an expression.
    case path([PathLiteralSegment])
    case identifier(String)
    case member(Expr, String)
    case index(Expr, Expr)
    /// `f(args)` or `target.f(args)` (a method when the callee is a member access).
    case call(Expr, [Expr])
    case unary(UnaryOp, Expr)
    case binary(BinaryOp, Expr, Expr)
    /// `value is string`
    case isType(Expr, String)
    case ternary(Expr, Expr, Expr)

    public static func == (a: Expr, b: Expr) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.list(let x), .list(let y)): return x == y
        case (.map(let x), .map(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.path(let x), .path(let y)): return x == y
        case (.identifier(let x), .identifier(let y)): return x == y
        case (.member(let x, let n), .member(let y, let m)): return x == y && n == m
        case (.index(let x, let i), .index(let y, let j)): return x == y && i == j
        case (.call(let x, let p), .call(let y, let q)): return x == y && p == q
        case (.unary(let o, let x), .unary(let p, let y)): return o == p && x == y
        case (.binary(let o, let x1, let x2), .binary(let p, let y1, let y2)): return o == p && x1 == y1 && x2 == y2
        case (.isType(let x, let t), .isType(let y, let u)): return x == y && t == u
        case (.ternary(let a1, let a2, let a3), .ternary(let b1, let b2, let b3)): return a1 == b1 && a2 == b2 && a3 == b3
        default: return false
        }
    }
}

/// Responsible for: one segment of a path literal: fixed text or `$(expr)`.
public enum PathLiteralSegment: Sendable, Equatable {
    case text(String)
    case interpolated(Expr)
}

public enum UnaryOp: String, Sendable { case not = "!", negate = "-" }

public enum BinaryOp: String, Sendable {
    case or = "||", and = "&&"
    case eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">=", `in` = "in"
    case add = "+", sub = "-", mul = "*", div = "/", mod = "%"
}
