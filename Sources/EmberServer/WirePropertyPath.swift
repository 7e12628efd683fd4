import EmberModel

/// Responsible for: reading a field path of a query (filter, order, select, aggregation) as the
/// Firestore backend reads it, with its messages: dot-separated segments, each an identifier
/// (`[a-zA-Z_][a-zA-Z_0-9]*`) or a backquoted name (`` `...` `` with `\` escapes); a segment
/// named like `__x__` is reserved. A lone `__name__` (or `` `__name__` ``) is the document
/// name; `__name__` inside a longer path is left to the key rules (WireQueryRules), which refuse it
/// in filters, as the emulator does.
///
///     try WirePropertyPath.parse("a.`b c`").segments == ["a", "b c"]
///     try WirePropertyPath.parse("a..b")   // throws: Invalid property path "a..b". Unquoted ...
enum WirePropertyPath {
    static func invalid(_ s: String) -> EmberError {
        EmberError.invalidArgument("Invalid property path \"\(s)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)")
    }

    static func parse(_ s: String) throws -> FieldPath {
        if s.isEmpty { throw EmberError.invalidArgument("Invalid empty property path string.") }
        var segments: [String] = []
        var chars = Array(s.unicodeScalars)[...]
        while true {
            segments.append(try segment(&chars, path: s))
            guard let next = chars.first else { break }
            guard next == "." else { throw invalid(s) }
            chars = chars.dropFirst()
        }
        for seg in segments where isReserved(seg) && seg != "__name__" {
            throw EmberError.invalidArgument("Invalid reserved name in field path \(seg)")
        }
        if segments == ["__name__"] { return .documentId }
        return try FieldPath(segments)
    }

    /// Names that begin and end with two underscores are Firestore's own.
    static func isReserved(_ name: String) -> Bool {
        name.utf8.count >= 4 && name.utf8.starts(with: [0x5F, 0x5F]) && name.utf8.reversed().starts(with: [0x5F, 0x5F])
    }

    /// One segment from the front of `chars`: an identifier or a backquoted name.
    private static func segment(_ chars: inout ArraySlice<Unicode.Scalar>, path: String) throws -> String {
        var out = String.UnicodeScalarView()
        if chars.first == "`" {
            chars = chars.dropFirst()
            while let c = chars.first {
                chars = chars.dropFirst()
                switch c {
                case "`":
                    if out.isEmpty { throw invalid(path) }
                    return String(out)
                case "\\":
                    guard let escaped = chars.first else { throw invalid(path) }
                    chars = chars.dropFirst()
                    out.append(escaped)
                default:
                    out.append(c)
                }
            }
            throw invalid(path)  // no closing backquote
        }
        while let c = chars.first, isIdentifier(c, first: out.isEmpty) {
            out.append(c)
            chars = chars.dropFirst()
        }
        if out.isEmpty { throw invalid(path) }
        return String(out)
    }

    private static func isIdentifier(_ c: Unicode.Scalar, first: Bool) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_" || (!first && c >= "0" && c <= "9")
    }
}
