/// Responsible for: turning rules source into a `RuleSet`: the statements (`rules_version`,
/// `service`, `match`, `allow`, `function`) and the raw-text `match` paths. Expressions are in
/// RulesParser+Expressions.swift. Every error carries the line and column where it was found.
///
///     let rules = try RulesParser.parse(source)   // throws RulesParseError("4:12: ...")
public struct RulesParser {
    var lexer: RulesLexer
    var current: RulesLexer.Token

    init(_ source: String) throws {
        lexer = RulesLexer(source)
        current = RulesLexer.Token(kind: .end, start: 0, end: 0)
        current = try lexer.next()
    }

    public static func parse(_ source: String) throws -> RuleSet {
        var p = try RulesParser(source)
        return try p.ruleSet()
    }

    // MARK: tokens

    mutating func advance() throws { current = try lexer.next() }

    var here: SourceLocation { lexer.location(current.start) }

    func isSymbol(_ s: String) -> Bool { current.kind == .symbol(s) }
    func isKeyword(_ s: String) -> Bool { current.kind == .identifier(s) }

    func describe(_ t: RulesLexer.Token) -> String {
        switch t.kind {
        case .identifier(let s): return "'\(s)'"
        case .int(let i): return "number \(i)"
        case .float(let d): return "number \(d)"
        case .string: return "a string"
        case .symbol(let s): return "'\(s)'"
        case .end: return "end of file"
        }
    }

    func error(_ expected: String) -> RulesParseError {
        RulesParseError("expected \(expected), found \(describe(current))", at: here)
    }

    mutating func expectSymbol(_ s: String, _ context: String = "") throws {
        guard isSymbol(s) else { throw error("'\(s)'" + (context.isEmpty ? "" : " " + context)) }
        try advance()
    }

    mutating func expectKeyword(_ s: String) throws {
        guard isKeyword(s) else { throw error("'\(s)'") }
        try advance()
    }

    mutating func identifier(_ what: String) throws -> String {
        guard case .identifier(let s) = current.kind else { throw error(what) }
        try advance()
        return s
    }

    // MARK: statements

    mutating func ruleSet() throws -> RuleSet {
        var version: String?
        if isKeyword("rules_version") {
            try advance()
            try expectSymbol("=", "after rules_version")
            guard case .string(let v) = current.kind else { throw error("a quoted version such as '2'") }
            guard v == "1" || v == "2" else { throw RulesParseError("unsupported rules_version '\(v)' (expected '1' or '2')", at: here) }
            version = v
            try advance()
            try expectSymbol(";", "after rules_version")
        }
        guard isKeyword("service") else { throw error("'service'") }
        try advance()
        var name = try identifier("a service name such as cloud.firestore")
        while isSymbol(".") {
            try advance()
            name += "." + (try identifier("a service name such as cloud.firestore"))
        }
        if name != "cloud.firestore" {
            throw RulesParseError("unsupported service '\(name)' (expected cloud.firestore)", at: here)
        }
        try expectSymbol("{", "to open the service body")
        var functions: [FunctionDecl] = [], matches: [MatchBlock] = []
        while !isSymbol("}") {
            if isKeyword("function") { functions.append(try function()) }
            else if isKeyword("match") { matches.append(try match()) }
            else { throw error("'match', 'function' or '}'") }
        }
        try advance()
        guard current.kind == .end else { throw error("end of file after the service") }
        return RuleSet(version: version, service: ServiceBlock(name: name, functions: functions, matches: matches))
    }

    mutating func match() throws -> MatchBlock {
        let location = here
        try advance()
        let pattern = try pathPattern()
        try expectSymbol("{", "to open the match body")
        var block = MatchBlock(pattern: pattern, functions: [], allows: [], matches: [], location: location)
        while !isSymbol("}") {
            if isKeyword("function") { block.functions.append(try function()) }
            else if isKeyword("match") { block.matches.append(try match()) }
            else if isKeyword("allow") { block.allows.append(try allow()) }
            else { throw error("'allow', 'match', 'function' or '}'") }
        }
        try advance()
        return block
    }

    mutating func allow() throws -> AllowStatement {
        let location = here
        try advance()
        var methods: [RuleMethod] = []
        repeat {
            if isSymbol(",") { try advance() }
            let at = here
            let word = try identifier("a method (read, write, get, list, create, update, delete)")
            guard let m = RuleMethod.expand(word) else {
                throw RulesParseError("unknown method '\(word)' (expected read, write, get, list, create, update or delete)", at: at)
            }
            methods += m.filter { !methods.contains($0) }
        } while isSymbol(",")
        var condition = Expr.bool(true)
        if isSymbol(":") {
            try advance()
            try expectKeyword("if")
            condition = try expression()
        }
        if isSymbol(";") { try advance() }
        else if !isSymbol("}") && !isKeyword("allow") && !isKeyword("match") && !isKeyword("function") {
            throw error("';' after the allow statement")
        }
        return AllowStatement(methods: methods, condition: condition, location: location)
    }

    mutating func function() throws -> FunctionDecl {
        let location = here
        try advance()
        let name = try identifier("a function name")
        try expectSymbol("(", "after the function name")
        var params: [String] = []
        while !isSymbol(")") {
            if !params.isEmpty { try expectSymbol(",", "between parameters") }
            params.append(try identifier("a parameter name"))
        }
        try advance()
        try expectSymbol("{", "to open the function body")
        var lets: [(name: String, value: Expr)] = []
        while isKeyword("let") {
            try advance()
            let n = try identifier("a name after 'let'")
            try expectSymbol("=", "after the let name")
            lets.append((n, try expression()))
            try expectSymbol(";", "after the let binding")
        }
        try expectKeyword("return")
        let body = try expression()
        if isSymbol(";") { try advance() }
        try expectSymbol("}", "to close the function body")
        return FunctionDecl(name: name, parameters: params, lets: lets, body: body, location: location)
    }

    /// `/databases/{database}/documents`, read as raw text from the current '/' token.
    mutating func pathPattern() throws -> PathPattern {
        guard isSymbol("/") else { throw error("a path starting with '/'") }
        let bytes = lexer.bytes
        var pos = current.start
        var segments: [PathPattern.Segment] = []
        func stop(_ b: UInt8) -> Bool {
            b == UInt8(ascii: "/") || b == UInt8(ascii: "{") || b == UInt8(ascii: "}") || b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D
        }
        while pos < bytes.count, bytes[pos] == UInt8(ascii: "/") {
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "{") {
                let open = pos
                guard let close = bytes[open...].firstIndex(of: UInt8(ascii: "}")) else {
                    throw RulesParseError("unterminated '{' in match path", at: lexer.location(open))
                }
                let inner = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
                let parts = inner.split(separator: "=", omittingEmptySubsequences: false)
                let name = String(parts[0])
                guard let f = name.utf8.first, RulesLexer.isIdentStart(f), name.utf8.allSatisfy(RulesLexer.isIdentPart) else {
                    throw RulesParseError("invalid variable name '\(name)' in match path", at: lexer.location(open + 1))
                }
                if parts.count == 1 { segments.append(.variable(name)) }
                else if parts.count == 2 && parts[1] == "**" { segments.append(.rest(name)) }
                else { throw RulesParseError("expected '{name}' or '{name=**}' in match path", at: lexer.location(open)) }
                pos = close + 1
            } else {
                let start = pos
                while pos < bytes.count, !stop(bytes[pos]) { pos += 1 }
                guard pos > start else { throw RulesParseError("empty segment in match path", at: lexer.location(start)) }
                segments.append(.literal(String(decoding: bytes[start..<pos], as: UTF8.self)))
            }
        }
        // rules_version 2: a recursive wildcard anywhere in the path, one per path.
        if segments.filter({ if case .rest = $0 { return true }; return false }).count > 1 {
            throw RulesParseError("a match path has at most one '{name=**}' segment", at: here)
        }
        lexer.pos = pos
        try advance()
        return PathPattern(segments: segments)
    }
}
