/// Responsible for: cutting rules source into tokens on demand (identifiers, numbers, quoted
/// strings, punctuation), skipping whitespace and `//` and `/* */` comments, and mapping byte
/// offsets to line:column. The parser reads raw text from it for `match` paths and path literals.
///
///     var lx = RulesLexer("allow read: if true;")
///     try lx.next()   // Token(kind: .identifier("allow"), ...)
struct RulesLexer {
    enum Kind: Equatable {
        case identifier(String)
        case int(Int64)
        case float(Double)
        case string(String)
        /// Punctuation and operators: `{ } ( ) [ ] , ; : . ? = == != < <= > >= ! && || + - * / %`.
        case symbol(String)
        case end
    }

    struct Token: Equatable {
        var kind: Kind
        var start: Int
        var end: Int
    }

    let bytes: [UInt8]
    var pos = 0
    private var lineStarts: [Int] = [0]

    init(_ source: String) {
        bytes = Array(source.utf8)
        for (i, b) in bytes.enumerated() where b == UInt8(ascii: "\n") { lineStarts.append(i + 1) }
    }

    func location(_ offset: Int) -> SourceLocation {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        let start = lineStarts[lo]
        let column = String(decoding: bytes[start..<min(offset, bytes.count)], as: UTF8.self).count + 1
        return SourceLocation(line: lo + 1, column: column)
    }

    func peekByte(_ at: Int) -> UInt8? { at < bytes.count ? bytes[at] : nil }

    static func isIdentStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
    }
    static func isIdentPart(_ b: UInt8) -> Bool { isIdentStart(b) || isDigit(b) }
    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Skips whitespace and comments; an unterminated block comment is an error.
    mutating func skipTrivia() throws {
        while pos < bytes.count {
            let b = bytes[pos]
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { pos += 1; continue }
            if b == UInt8(ascii: "/"), peekByte(pos + 1) == UInt8(ascii: "/") {
                while pos < bytes.count, bytes[pos] != 0x0A { pos += 1 }
                continue
            }
            if b == UInt8(ascii: "/"), peekByte(pos + 1) == UInt8(ascii: "*") {
                let open = pos
                pos += 2
                while pos < bytes.count, !(bytes[pos] == UInt8(ascii: "*") && peekByte(pos + 1) == UInt8(ascii: "/")) { pos += 1 }
                if pos >= bytes.count { throw RulesParseError("unterminated comment", at: location(open)) }
                pos += 2
                continue
            }
            break
        }
    }

    mutating func next() throws -> Token {
        try skipTrivia()
        let start = pos
        guard pos < bytes.count else { return Token(kind: .end, start: pos, end: pos) }
        let b = bytes[pos]
        if Self.isIdentStart(b) {
            while pos < bytes.count, Self.isIdentPart(bytes[pos]) { pos += 1 }
            return Token(kind: .identifier(String(decoding: bytes[start..<pos], as: UTF8.self)), start: start, end: pos)
        }
        if Self.isDigit(b) { return try number(start) }
        if b == UInt8(ascii: "'") || b == UInt8(ascii: "\"") { return try string(start, quote: b) }
        let two = pos + 1 < bytes.count ? String(decoding: bytes[pos...pos + 1], as: UTF8.self) : ""
        if ["==", "!=", "<=", ">=", "&&", "||"].contains(two) {
            pos += 2
            return Token(kind: .symbol(two), start: start, end: pos)
        }
        let one = String(UnicodeScalar(b))
        if "{}()[],;:.?=<>!+-*/%".contains(one) {
            pos += 1
            return Token(kind: .symbol(one), start: start, end: pos)
        }
        let ch = String(decoding: bytes[start...].prefix(4), as: UTF8.self).first.map(String.init) ?? "?"
        throw RulesParseError("unexpected character '\(ch)'", at: location(start))
    }

    private mutating func number(_ start: Int) throws -> Token {
        while pos < bytes.count, Self.isDigit(bytes[pos]) { pos += 1 }
        var isFloat = false
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "."), let d = peekByte(pos + 1), Self.isDigit(d) {
            isFloat = true
            pos += 1
            while pos < bytes.count, Self.isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            var p = pos + 1
            if let s = peekByte(p), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { p += 1 }
            if let d = peekByte(p), Self.isDigit(d) {
                isFloat = true
                pos = p
                while pos < bytes.count, Self.isDigit(bytes[pos]) { pos += 1 }
            }
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if isFloat {
            guard let d = Double(text) else { throw RulesParseError("invalid number '\(text)'", at: location(start)) }
            return Token(kind: .float(d), start: start, end: pos)
        }
        guard let i = Int64(text) else { throw RulesParseError("integer '\(text)' is out of range", at: location(start)) }
        return Token(kind: .int(i), start: start, end: pos)
    }

    private mutating func string(_ start: Int, quote: UInt8) throws -> Token {
        pos += 1
        var out: [UInt8] = []
        while true {
            guard pos < bytes.count, bytes[pos] != 0x0A else {
                throw RulesParseError("unterminated string", at: location(start))
            }
            let b = bytes[pos]
            if b == quote { pos += 1; break }
            if b == UInt8(ascii: "\\") {
                guard let e = peekByte(pos + 1) else { throw RulesParseError("unterminated string", at: location(start)) }
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "."), UInt8(ascii: "d"), UInt8(ascii: "w"), UInt8(ascii: "s"),
                     UInt8(ascii: "+"), UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "("), UInt8(ascii: ")"),
                     UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "$"),
                     UInt8(ascii: "^"), UInt8(ascii: "|"):
                    // Kept for regular expressions: '\\.' and '\.' both reach the regex as '\.'.
                    out.append(b); out.append(e)
                default:
                    throw RulesParseError("unknown escape '\\\(String(UnicodeScalar(e)))' in string", at: location(pos))
                }
                pos += 2
                continue
            }
            out.append(b)
            pos += 1
        }
        return Token(kind: .string(String(decoding: out, as: UTF8.self)), start: start, end: pos)
    }
}
