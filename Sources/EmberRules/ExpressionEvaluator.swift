import EmberModel

/// Responsible for: evaluating one condition for one request: names (wildcard bindings, function
/// parameters and `let`s, `request`, `resource`), member access, indexing, calls of custom
/// functions and the global ones (`get`, `exists`, `string`, `int`, `float`), `&&` / `||` with
/// Firestore's error rules, `?:` and `is`. Operators are in RuleValue+Operators.swift, methods in
/// RuleValue+Methods.swift. Document reads are bounded per request (`RulesReadBudget`), only
/// of the request's database. Query-time stand-ins (`.partialMap`, `.bounded`) may be compared
/// (RuleValue+Operators) and read from, nothing else: in a list or map literal, as a method's
/// receiver or argument, they are an error.
final class ExpressionEvaluator {
    static let maxCallDepth = 20

    let request: RuleValue
    let resource: RuleValue
    let database: String
    let lookup: RulesDocumentLookup?
    private let budget: RulesReadBudget
    private var depth = 0

    init(request: RuleValue, resource: RuleValue, database: String, lookup: RulesDocumentLookup?,
         budget: RulesReadBudget = RulesReadBudget()) {
        self.request = request
        self.resource = resource
        self.database = database
        self.lookup = lookup
        self.budget = budget
    }

    struct Scope {
        var names: [String: RuleValue]
        var functions: [[FunctionDecl]]

        func function(_ name: String) -> FunctionDecl? {
            for level in functions { if let f = level.first(where: { $0.name == name }) { return f } }
            return nil
        }
    }

    func fail(_ message: String) -> RulesEvaluationError { RulesEvaluationError(message) }

    func eval(_ e: Expr, _ scope: Scope) throws -> RuleValue {
        switch e {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let d): return .float(d)
        case .string(let s): return .string(s)
        case .list(let items):
            let values = try items.map { try eval($0, scope) }
            if values.contains(where: { $0.isPartial }) { throw fail("the query does not decide this list for every document it could return") }
            return .list(values)
        case .map(let entries):
            var m: RuleMap = [:]
            for (k, v) in entries {
                guard case .string(let key) = try eval(k, scope) else { throw fail("map keys must be strings") }
                let value = try eval(v, scope)
                if value.isPartial { throw fail("the query does not decide this map for every document it could return") }
                m[UTF8String(key)] = value
            }
            return .map(m)
        case .path(let segments):
            var out: [String] = []
            for seg in segments {
                switch seg {
                case .text(let t): out.append(t)
                case .interpolated(let x):
                    switch try eval(x, scope) {
                    case .string(let s): out.append(s)
                    case .int(let i): out.append(String(i))
                    case .path(let p): out += p
                    case let v: throw fail("cannot put a \(v.typeName) into a path")
                    }
                }
            }
            return .path(out)
        case .identifier(let name):
            if let v = scope.names[name] { return v }
            switch name {
            case "request": return request
            case "resource": return resource
            default: throw fail("unknown variable '\(name)'")
            }
        case .member(let target, let name):
            return try member(try eval(target, scope), name)
        case .index(let target, let index):
            return try self.index(try eval(target, scope), try eval(index, scope))
        case .call(let callee, let args):
            return try call(callee, args, scope)
        case .unary(.not, let x):
            guard case .bool(let b) = try eval(x, scope) else { throw fail("'!' needs a bool") }
            return .bool(!b)
        case .unary(.negate, let x):
            switch try eval(x, scope) {
            case .int(let i):
                guard i != .min else { throw fail("integer overflow") }
                return .int(-i)
            case .float(let d): return .float(-d)
            case let v: throw fail("cannot negate a \(v.typeName)")
            }
        case .binary(.and, let a, let b): return try logical(a, b, scope, isAnd: true)
        case .binary(.or, let a, let b): return try logical(a, b, scope, isAnd: false)
        case .binary(let op, let a, let b):
            return try RuleValue.apply(op, try eval(a, scope), try eval(b, scope))
        case .isType(let x, let type):
            let v = try eval(x, scope)
            if v.isPartial { throw fail("the query does not decide the type for every document it could return") }
            return .bool(v.isType(type))
        case .ternary(let c, let a, let b):
            guard case .bool(let cond) = try eval(c, scope) else { throw fail("the condition of '?:' must be a bool") }
            return try eval(cond ? a : b, scope)
        }
    }

    /// `&&` and `||`: short-circuit, and an error on one side is overridden by the other side
    /// deciding the result (`error || true` is true, `error && false` is false).
    private func logical(_ a: Expr, _ b: Expr, _ scope: Scope, isAnd: Bool) throws -> RuleValue {
        var leftError: Error?
        do {
            let l = try eval(a, scope)
            guard case .bool(let lb) = l else { throw fail("'\(isAnd ? "&&" : "||")' needs bools, got \(l.typeName)") }
            if lb != isAnd { return .bool(lb) }
        } catch {
            leftError = error
        }
        let r = try eval(b, scope)
        guard case .bool(let rb) = r else { throw fail("'\(isAnd ? "&&" : "||")' needs bools, got \(r.typeName)") }
        if let leftError {
            if rb != isAnd { return .bool(rb) }
            throw leftError
        }
        return .bool(rb)
    }

    func member(_ v: RuleValue, _ name: String) throws -> RuleValue {
        if case .partialMap(let m) = v {
            guard let x = m[UTF8String(name)] else { throw fail("the query does not constrain '\(name)'") }
            return x
        }
        guard case .map(let m) = v else { throw fail("cannot read '.\(name)' of a \(v.typeName)") }
        guard let x = m[UTF8String(name)] else { throw fail("no field '\(name)'") }
        return x
    }

    func index(_ v: RuleValue, _ i: RuleValue) throws -> RuleValue {
        switch (v, i) {
        case (.list(let l), .int(let n)):
            guard n >= 0, n < l.count else { throw fail("index \(n) out of range") }
            return l[Int(n)]
        case (.map(let m), .string(let k)), (.partialMap(let m), .string(let k)):
            guard let x = m[UTF8String(k)] else { throw fail("no field '\(k)'") }
            return x
        case (.path(let p), .int(let n)):
            guard n >= 0, n < p.count else { throw fail("index \(n) out of range") }
            return .string(p[Int(n)])
        default:
            throw fail("cannot index a \(v.typeName) with a \(i.typeName)")
        }
    }

    private func call(_ callee: Expr, _ argExprs: [Expr], _ scope: Scope) throws -> RuleValue {
        if case .member(let target, let method) = callee {
            let t = try eval(target, scope)
            let args = try argExprs.map { try eval($0, scope) }
            if t.isPartial || args.contains(where: { $0.isPartial }) {
                throw fail("the query does not decide \(method)() for every document it could return")
            }
            return try t.call(method, args, self)
        }
        guard case .identifier(let name) = callee else { throw fail("this expression cannot be called") }
        let args = try argExprs.map { try eval($0, scope) }
        if let f = scope.function(name) { return try callFunction(f, args, scope) }
        return try global(name, args)
    }

    private func callFunction(_ f: FunctionDecl, _ args: [RuleValue], _ scope: Scope) throws -> RuleValue {
        guard args.count == f.parameters.count else {
            throw fail("\(f.name)() takes \(f.parameters.count) arguments, got \(args.count)")
        }
        guard depth < Self.maxCallDepth else { throw fail("function calls nested too deeply") }
        depth += 1
        defer { depth -= 1 }
        var inner = scope
        for (p, a) in zip(f.parameters, args) { inner.names[p] = a }
        for (n, x) in f.lets { inner.names[n] = try eval(x, inner) }
        return try eval(f.body, inner)
    }

    private func global(_ name: String, _ args: [RuleValue]) throws -> RuleValue {
        switch (name, args.count, args.first ?? .null, args.count > 1 ? args[1] : .null) {
        case ("get", 1, .path(let p), _):
            guard let data = try read(p) else { return .null }
            return document(p, data)
        case ("exists", 1, .path(let p), _):
            return .bool(try read(p) != nil)
        case ("string", 1, let v, _): return .string(try v.stringForm())
        case ("int", 1, .int(let i), _): return .int(i)
        case ("int", 1, .float(let d), _):
            guard d.isFinite, let i = Int64(exactly: d.rounded(FloatingPointRoundingRule.towardZero)) else { throw fail("int() of \(d)") }
            return .int(i)
        case ("int", 1, .string(let s), _):
            guard let i = Int64(s) else { throw fail("int() of '\(s)'") }
            return .int(i)
        case ("float", 1, .int(let i), _): return .float(Double(i))
        case ("float", 1, .float(let d), _): return .float(d)
        case ("float", 1, .string(let s), _):
            guard let d = Double(s) else { throw fail("float() of '\(s)'") }
            return .float(d)
        case ("path", 1, .string(let s), _): return .path(splitAtSlashes(s, omittingEmpty: true))
        default: throw fail("unknown function \(name)() for these arguments")
        }
    }

    /// A document for a rule: `{data, id, __name__}`.
    func document(_ fullPath: [String], _ data: MapValue) -> RuleValue {
        .map(["data": .map(RuleValue.map(data, database: database)), "id": .string(fullPath.last ?? ""),
              "__name__": .path(fullPath)])
    }

    /// One document through the caller's lookup, counted against the bound (repeats are free).
    private func read(_ fullPath: [String]) throws -> MapValue? {
        guard fullPath.count >= 5, fullPath.count % 2 == 1, fullPath[0] == "databases", fullPath[2] == "documents" else {
            throw fail("get()/exists() needs /databases/<db>/documents/<document path>")
        }
        guard fullPath[1] == database else { throw fail("get()/exists() of another database (\(fullPath[1]))") }
        guard fullPath.dropFirst(3).allSatisfy({ !$0.isEmpty && !$0.utf8.contains(0x2F) }) else {
            throw fail("get()/exists() of a path with an empty segment or a '/' inside one")
        }
        // Keyed by bytes: String's == would take "é" and "e\u{301}" for one document.
        let readKey = Array(fullPath.joined(separator: "/").utf8)
        if let cached = budget.reads[readKey] { return cached }
        guard budget.reads.count < budget.limit else { throw fail("more than \(budget.limit) document reads in one request") }
        guard let lookup else { throw fail("no document lookup for get()/exists()") }
        let data = lookup(Array(fullPath.dropFirst(3)))
        budget.reads[readKey] = .some(data)
        return data
    }
}
