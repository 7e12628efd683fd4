/// Responsible for: one token of a Realtime Database rule expression (a JavaScript-like
/// expression: names, numbers, quoted strings, `/regex/flags` literals, operators, brackets).
struct RuleToken: Equatable {
    enum Kind: Equatable {
        case name(String)
        case number(Double)
        case string(String)
        case regex(pattern: String, flags: String)
        case op(String)
        case end
    }
    let kind: Kind
    /// The token's offset in the expression, in characters (for errors).
    let offset: Int
}

/// Responsible for: splitting a rule expression into tokens. A `/` where an operand is
/// expected starts a regular expression literal (`matches(/^a+$/)`); elsewhere it divides.
/// Errors name the offending offset.
struct RuleLexer {
    /// Operators, longest first so `===` is not read as `==` then `=`.
    private static let operators = ["===", "!==", "==", "!=", "<=", ">=", "&&", "||",
                                    "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", ",", "(", ")", "[", "]"]

    static func tokens(_ source: String) throws -> [RuleToken] {
        let chars = Array(source.unicodeScalars)
        var out: [RuleToken] = []
        var i = 0
        func operandExpected() -> Bool {
            guard let last = out.last else { return true }
            switch last.kind {
            case .name, .number, .string, .regex: return false
            case .op(let o): return o != ")" && o != "]"
            case .end: return true
            }
        }
        while i < chars.count {
            let c = chars[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" { i += 1; continue }
            let start = i
            if c == "_" || c == "$" || c.properties.isAlphabetic {
                var s = ""
                while i < chars.count, chars[i] == "_" || chars[i] == "$" || chars[i].properties.isAlphabetic || ("0"..."9").contains(chars[i]) {
                    s.unicodeScalars.append(chars[i]); i += 1
                }
                out.append(RuleToken(kind: .name(s), offset: start))
            } else if ("0"..."9").contains(c) || (c == "." && i + 1 < chars.count && ("0"..."9").contains(chars[i + 1])) {
                var s = ""
                while i < chars.count, ("0"..."9").contains(chars[i]) || chars[i] == "." || chars[i] == "e" || chars[i] == "E"
                        || ((chars[i] == "+" || chars[i] == "-") && (s.last == "e" || s.last == "E")) {
                    s.unicodeScalars.append(chars[i]); i += 1
                }
                guard let d = Double(s) else { throw RuleSyntaxError("invalid number '\(s)'", offset: start) }
                out.append(RuleToken(kind: .number(d), offset: start))
            } else if c == "'" || c == "\"" {
                i += 1
                var s = ""
                var closed = false
                while i < chars.count {
                    let d = chars[i]
                    if d == c { closed = true; i += 1; break }
                    if d == "\\" {
                        guard i + 1 < chars.count else { break }
                        let e = chars[i + 1]
                        switch e {
                        case "n": s += "\n"
                        case "t": s += "\t"
                        case "r": s += "\r"
                        case "0": s += "\0"
                        case "u":
                            guard i + 5 < chars.count, let v = UInt32(String(String.UnicodeScalarView(chars[(i + 2)...(i + 5)])), radix: 16),
                                  let scalar = Unicode.Scalar(v) else { throw RuleSyntaxError("invalid \\u escape", offset: i) }
                            s.unicodeScalars.append(scalar); i += 4
                        default: s.unicodeScalars.append(e)
                        }
                        i += 2
                        continue
                    }
                    s.unicodeScalars.append(d); i += 1
                }
                guard closed else { throw RuleSyntaxError("unterminated string", offset: start) }
                out.append(RuleToken(kind: .string(s), offset: start))
            } else if c == "/" && operandExpected() {
                i += 1
                var pattern = ""
                var closed = false
                var inClass = false
                while i < chars.count {
                    let d = chars[i]
                    if d == "\\", i + 1 < chars.count { pattern.unicodeScalars.append(d); pattern.unicodeScalars.append(chars[i + 1]); i += 2; continue }
                    if d == "[" { inClass = true } else if d == "]" { inClass = false }
                    if d == "/" && !inClass { closed = true; i += 1; break }
                    pattern.unicodeScalars.append(d); i += 1
                }
                guard closed else { throw RuleSyntaxError("unterminated regular expression", offset: start) }
                var flags = ""
                while i < chars.count, chars[i].properties.isAlphabetic { flags.unicodeScalars.append(chars[i]); i += 1 }
                out.append(RuleToken(kind: .regex(pattern: pattern, flags: flags), offset: start))
            } else {
                var matched: String?
                for o in operators where o.unicodeScalars.count <= chars.count - i {
                    if String(String.UnicodeScalarView(chars[i..<(i + o.unicodeScalars.count)])) == o { matched = o; break }
                }
                guard let o = matched else {
                    throw RuleSyntaxError(c == "=" ? "assignment is not allowed" : "unexpected character '\(c)'", offset: start)
                }
                i += o.unicodeScalars.count
                out.append(RuleToken(kind: .op(o), offset: start))
            }
        }
        out.append(RuleToken(kind: .end, offset: chars.count))
        return out
    }
}

/// Responsible for: why a rule expression does not parse, and where.
struct RuleSyntaxError: Error {
    let message: String
    let offset: Int
    init(_ message: String, offset: Int) { self.message = message; self.offset = offset }
}
