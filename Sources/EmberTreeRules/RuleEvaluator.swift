import EmberModel
import Foundation

/// Responsible for: running one rule expression against one location: the variables (`auth`,
/// `now`, `root`, `data`, `newData`, `query`, the `$wildcards` matched on the way) and
/// JavaScript's operators over `RuleValue`s, with the Realtime Database's strictness: `==` is
/// `===` (no coercion), `&&`/`||`/`!`/`?:` want booleans, `<` compares two numbers or two
/// strings, `+` adds numbers or joins when either side is a string. Anything else, and a member
/// of null, is an error, and an error makes the rule false (the caller's business).
struct RuleEvaluator {
    var variables: [String: RuleValue]

    /// The rule's answer: true only for a boolean true.
    func allows(_ e: RuleExpr) -> Bool {
        guard case .bool(true)? = try? eval(e) else { return false }
        return true
    }

    func eval(_ e: RuleExpr) throws -> RuleValue {
        switch e {
        case .literal(let v): return v
        case .variable(let n):
            guard let v = variables[n] else { throw RuleEvaluationError("'\(n)' is not defined here") }
            return v
        case .array(let items): return .array(try items.map(eval))
        case .member(let o, let name): return try member(try eval(o), name)
        case .index(let o, let i):
            let base = try eval(o), key = try eval(i)
            switch (base, key) {
            case (.object(let m), .string(let k)): return m[k] ?? .null
            case (.array(let a), .number(let d)):
                guard d >= 0, d == d.rounded(), Int(d) < a.count else { return .null }
                return a[Int(d)]
            case (.null, _): throw RuleEvaluationError("index of null")
            default: throw RuleEvaluationError("cannot index this value")
            }
        case .call(let o, let name, let argExprs):
            let target = try eval(o)
            let args = try argExprs.map(eval)
            switch target {
            case .snapshot(let s): return try s.call(name, args)
            case .string(let s): return try RuleEvaluator.stringMethod(s, name, args)
            default: throw RuleEvaluationError("\(name)() is not a method of this value")
            }
        case .unary(let op, let x):
            let v = try eval(x)
            switch (op, v) {
            case ("!", .bool(let b)): return .bool(!b)
            case ("-", .number(let d)): return .number(-d)
            default: throw RuleEvaluationError("'\(op)' needs a \(op == "!" ? "boolean" : "number")")
            }
        case .conditional(let c, let a, let b):
            guard case .bool(let t) = try eval(c) else { throw RuleEvaluationError("the condition of '?:' is not a boolean") }
            return try eval(t ? a : b)
        case .binary(let op, let l, let r):
            if op == "&&" || op == "||" {
                guard case .bool(let a) = try eval(l) else { throw RuleEvaluationError("'\(op)' needs booleans") }
                if op == "&&" && !a { return .bool(false) }
                if op == "||" && a { return .bool(true) }
                guard case .bool(let b) = try eval(r) else { throw RuleEvaluationError("'\(op)' needs booleans") }
                return .bool(b)
            }
            return try RuleEvaluator.binary(op, try eval(l), try eval(r))
        }
    }

    private func member(_ v: RuleValue, _ name: String) throws -> RuleValue {
        switch v {
        case .object(let m): return m[name] ?? .null
        case .string(let s) where name == "length": return .number(Double(s.utf16.count))
        case .array(let a) where name == "length": return .number(Double(a.count))
        case .null: throw RuleEvaluationError("'\(name)' of null")
        case .snapshot: throw RuleEvaluationError("a snapshot's '\(name)' is a method: call it")
        default: throw RuleEvaluationError("this value has no '\(name)'")
        }
    }

    static func binary(_ op: String, _ a: RuleValue, _ b: RuleValue) throws -> RuleValue {
        switch op {
        case "==", "===": return .bool(try strictlyEqual(a, b))
        case "!=", "!==": return .bool(!(try strictlyEqual(a, b)))
        case "<", "<=", ">", ">=":
            let c: Int
            switch (a, b) {
            case (.number(let x), .number(let y)): c = x < y ? -1 : (x > y ? 1 : 0); if x.isNaN || y.isNaN { return .bool(false) }
            case (.string(let x), .string(let y)): c = Array(x.utf16).lexicographicallyPrecedes(Array(y.utf16)) ? -1 : (x == y ? 0 : 1)
            default: throw RuleEvaluationError("'\(op)' compares two numbers or two strings")
            }
            switch op {
            case "<": return .bool(c < 0)
            case "<=": return .bool(c <= 0)
            case ">": return .bool(c > 0)
            default: return .bool(c >= 0)
            }
        case "+":
            if case .number(let x) = a, case .number(let y) = b { return .number(x + y) }
            if case .string = a, let x = a.text, let y = b.text { return .string(x + y) }
            if case .string = b, let x = a.text, let y = b.text { return .string(x + y) }
            throw RuleEvaluationError("'+' adds numbers or joins strings")
        case "-", "*", "/", "%":
            guard case .number(let x) = a, case .number(let y) = b else { throw RuleEvaluationError("'\(op)' needs numbers") }
            switch op {
            case "-": return .number(x - y)
            case "*": return .number(x * y)
            case "/": return .number(x / y)
            default: return .number(x.truncatingRemainder(dividingBy: y))
            }
        default:
            throw RuleEvaluationError("unknown operator '\(op)'")
        }
    }

    /// `===`: the same type and value; snapshots and regular expressions are not compared.
    static func strictlyEqual(_ a: RuleValue, _ b: RuleValue) throws -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.snapshot, _), (_, .snapshot): throw RuleEvaluationError("a snapshot cannot be compared: use val()")
        case (.regex, _), (_, .regex): throw RuleEvaluationError("a regular expression cannot be compared")
        case (.array, _), (_, .array), (.object, _), (_, .object):
            // JavaScript compares objects by identity: two written separately are never equal.
            if case .null = a { return false }
            if case .null = b { return false }
            throw RuleEvaluationError("objects cannot be compared")
        default: return false
        }
    }

    static func stringMethod(_ s: String, _ name: String, _ args: [RuleValue]) throws -> RuleValue {
        func oneString() throws -> String {
            guard args.count == 1, case .string(let x) = args[0] else { throw RuleEvaluationError("\(name)() takes one string") }
            return x
        }
        switch name {
        case "contains": return .bool(try oneString().isEmpty || s.contains(try oneString()))
        case "beginsWith": return .bool(s.hasPrefix(try oneString()))
        case "endsWith": return .bool(s.hasSuffix(try oneString()))
        case "toLowerCase": guard args.isEmpty else { throw RuleEvaluationError("toLowerCase() takes no arguments") }; return .string(s.lowercased())
        case "toUpperCase": guard args.isEmpty else { throw RuleEvaluationError("toUpperCase() takes no arguments") }; return .string(s.uppercased())
        case "replace":
            guard args.count == 2, case .string(let from) = args[0], case .string(let to) = args[1] else {
                throw RuleEvaluationError("replace() takes two strings")
            }
            return .string(from.isEmpty ? s : s.replacingOccurrences(of: from, with: to))
        case "matches":
            guard args.count == 1, case .regex(let r) = args[0] else { throw RuleEvaluationError("matches() takes a regular expression literal") }
            return .bool(r.test(s))
        default:
            throw RuleEvaluationError("a string has no method \(name)()")
        }
    }
}
