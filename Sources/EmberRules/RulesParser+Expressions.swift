/// Responsible for: the expression grammar, lowest precedence first: `?:`, `||`, `&&`,
/// comparisons with `in` and `is`, `+ -`, `* / %`, unary `! -`, then member access, indexing and
/// calls on literals, names, parentheses, lists, maps and path literals (`/a/$(b)/c`).
extension RulesParser {
    mutating func expression() throws -> Expr { try ternary() }

    mutating func ternary() throws -> Expr {
        let cond = try or()
        guard isSymbol("?") else { return cond }
        try advance()
        let a = try ternary()
        try expectSymbol(":", "in the conditional expression")
        let b = try ternary()
        return .ternary(cond, a, b)
    }

    mutating func or() throws -> Expr {
        var lhs = try and()
        while isSymbol("||") { try advance(); lhs = .binary(.or, lhs, try and()) }
        return lhs
    }

    mutating func and() throws -> Expr {
        var lhs = try relation()
        while isSymbol("&&") { try advance(); lhs = .binary(.and, lhs, try relation()) }
        return lhs
    }

    mutating func relation() throws -> Expr {
        var lhs = try additive()
        while true {
            if case .symbol(let s) = current.kind, let op = BinaryOp(rawValue: s),
               [.eq, .ne, .lt, .le, .gt, .ge].contains(op) {
                try advance()
                lhs = .binary(op, lhs, try additive())
            } else if isKeyword("in") {
                try advance()
                lhs = .binary(.in, lhs, try additive())
            } else if isKeyword("is") {
                try advance()
                lhs = .isType(lhs, try identifier("a type name after 'is'"))
            } else {
                return lhs
            }
        }
    }

    mutating func additive() throws -> Expr {
        var lhs = try multiplicative()
        while isSymbol("+") || isSymbol("-") {
            let op: BinaryOp = isSymbol("+") ? .add : .sub
            try advance()
            lhs = .binary(op, lhs, try multiplicative())
        }
        return lhs
    }

    mutating func multiplicative() throws -> Expr {
        var lhs = try unary()
        while isSymbol("*") || isSymbol("/") || isSymbol("%") {
            let op: BinaryOp = isSymbol("*") ? .mul : (isSymbol("/") ? .div : .mod)
            try advance()
            lhs = .binary(op, lhs, try unary())
        }
        return lhs
    }

    mutating func unary() throws -> Expr {
        if isSymbol("!") { try advance(); return .unary(.not, try unary()) }
        if isSymbol("-") {
            try advance()
            switch current.kind {
            case .int(let i): try advance(); return try postfix(.int(-i))
            case .float(let d): try advance(); return try postfix(.float(-d))
            default: return .unary(.negate, try unary())
            }
        }
        return try postfix(try primary())
    }

    mutating func postfix(_ start: Expr) throws -> Expr {
        var e = start
        while true {
            if isSymbol(".") {
                try advance()
                e = .member(e, try identifier("a field or method name after '.'"))
            } else if isSymbol("[") {
                try advance()
                let i = try expression()
                try expectSymbol("]", "to close the index")
                e = .index(e, i)
            } else if isSymbol("(") {
                try advance()
                e = .call(e, try arguments(closing: ")"))
            } else {
                return e
            }
        }
    }

    /// Comma-separated expressions up to `closing` (consumed); a trailing comma is allowed.
    mutating func arguments(closing: String) throws -> [Expr] {
        var args: [Expr] = []
        while !isSymbol(closing) {
            args.append(try expression())
            if isSymbol(",") { try advance() } else if !isSymbol(closing) { throw error("',' or '\(closing)'") }
        }
        try advance()
        return args
    }

    mutating func primary() throws -> Expr {
        switch current.kind {
        case .int(let i): try advance(); return .int(i)
        case .float(let d): try advance(); return .float(d)
        case .string(let s): try advance(); return .string(s)
        case .identifier(let name):
            try advance()
            switch name {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default: return .identifier(name)
            }
        case .symbol("("):
            try advance()
            let e = try expression()
            try expectSymbol(")", "to close the parenthesis")
            return e
        case .symbol("["):
            try advance()
            return .list(try arguments(closing: "]"))
        case .symbol("{"):
            try advance()
            var entries: [(key: Expr, value: Expr)] = []
            while !isSymbol("}") {
                let k = try expression()
                try expectSymbol(":", "after the map key")
                entries.append((k, try expression()))
                if isSymbol(",") { try advance() } else if !isSymbol("}") { throw error("',' or '}' in the map") }
            }
            try advance()
            return .map(entries)
        case .symbol("/"):
            return try pathLiteral()
        default:
            throw error("an expression")
        }
    }

    /// `/databases/$(database)/documents/users/$(request.auth.uid)`, read as raw text.
    mutating func pathLiteral() throws -> Expr {
        let bytes = lexer.bytes
        var pos = current.start
        var segments: [PathLiteralSegment] = []
        func segmentByte(_ b: UInt8) -> Bool {
            RulesLexer.isIdentPart(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "~") || b == UInt8(ascii: "%")
        }
        while pos < bytes.count, bytes[pos] == UInt8(ascii: "/") {
            let next = lexer.peekByte(pos + 1)
            if next == UInt8(ascii: "$"), lexer.peekByte(pos + 2) == UInt8(ascii: "(") {
                lexer.pos = pos + 3
                try advance()
                let e = try expression()
                guard isSymbol(")") else { throw error("')' to close '$('") }
                segments.append(.interpolated(e))
                pos = current.end
            } else if let n = next, segmentByte(n) {
                let start = pos + 1
                pos = start
                while pos < bytes.count, segmentByte(bytes[pos]) { pos += 1 }
                segments.append(.text(String(decoding: bytes[start..<pos], as: UTF8.self)))
            } else {
                if segments.isEmpty { throw RulesParseError("expected a path segment after '/'", at: lexer.location(pos + 1)) }
                break
            }
        }
        lexer.pos = pos
        try advance()
        return .path(segments)
    }
}
