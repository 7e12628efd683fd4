/// Responsible for: paths to fields inside a document ("address.city", "`a.b`.c"), their
/// parsing, validation and canonical form; `FieldPath.documentId` is the special `__name__`.
///
///     try FieldPath(parsing: "regions.`bay.area`").segments == ["regions", "bay.area"]
public struct FieldPath: Hashable, Sendable, CustomStringConvertible {
    public let segments: [String]

    public static let documentId = FieldPath(unchecked: ["__name__"])
    public static let maxBytes = 1_500

    public init(unchecked segments: [String]) { self.segments = segments }

    /// Builds from explicit segments (each non-empty), as `FieldPath(["a.b", "c"])`.
    public init(_ segments: [String]) throws {
        if segments.isEmpty { throw EmberError.invalidArgument("Invalid field path: it has no segments") }
        for s in segments where s.isEmpty {
            throw EmberError.invalidArgument("Invalid field path \(segments): empty segment")
        }
        self.segments = segments
        try checkLength()
    }

    /// Parses the dotted form. Backquoted segments may hold any character ("`a.b`", with \` and \\
    /// escapes); no segment may be empty (not even "``"), and unquoted ones may not contain ~ * / [ ] or a backquote.
    public init(parsing s: String) throws {
        if s.isEmpty { throw EmberError.invalidArgument("Invalid field path '': a field path must be a non-empty string") }
        if s == "__name__" { self.segments = ["__name__"]; return }
        var segs: [String] = []
        var cur = ""
        var quoted = false
        var wasQuoted = false
        // Scalars, not characters: a combining mark after "." or "/" must not hide it.
        var it = s.unicodeScalars.makeIterator()
        while let ch = it.next() {
            if quoted {
                if ch == "\\" {
                    guard let next = it.next() else { throw EmberError.invalidArgument("Invalid field path '\(s)': trailing escape") }
                    cur.unicodeScalars.append(next)
                } else if ch == "`" {
                    quoted = false
                } else {
                    cur.unicodeScalars.append(ch)
                }
                continue
            }
            switch ch {
            case "`":
                if !cur.isEmpty || wasQuoted { throw EmberError.invalidArgument("Invalid field path '\(s)': a backquote must open a segment") }
                quoted = true
                wasQuoted = true
            case ".":
                if cur.isEmpty { throw EmberError.invalidArgument("Invalid field path '\(s)': paths must not be empty, begin with '.', end with '.', or contain '..'") }
                segs.append(cur); cur = ""; wasQuoted = false
            case "~", "*", "/", "[", "]":
                throw EmberError.invalidArgument("Invalid field path '\(s)': paths must not contain '~', '*', '/', '[', or ']' outside backquotes")
            default:
                if wasQuoted { throw EmberError.invalidArgument("Invalid field path '\(s)': text after a closing backquote") }
                cur.unicodeScalars.append(ch)
            }
        }
        if quoted { throw EmberError.invalidArgument("Invalid field path '\(s)': unterminated backquote") }
        if cur.isEmpty { throw EmberError.invalidArgument("Invalid field path '\(s)': paths must not be empty, begin with '.', end with '.', or contain '..'") }
        segs.append(cur)
        self.segments = segs
        try checkLength()
    }

    private func checkLength() throws {
        if canonical.utf8.count > FieldPath.maxBytes {
            throw EmberError.invalidArgument("Invalid field path: longer than \(FieldPath.maxBytes) bytes")
        }
    }

    /// Equal when every segment has the same UTF-8 bytes, consistent with `compare` and with map keys.
    public static func == (a: FieldPath, b: FieldPath) -> Bool { a.compare(b) == 0 }
    public func hash(into hasher: inout Hasher) { hashUTF8Segments(segments, into: &hasher) }

    public var isDocumentId: Bool { segments.count == 1 && segments[0] == "__name__" }
    public var first: String { segments[0] }

    public func appending(_ segment: String) -> FieldPath { FieldPath(unchecked: segments + [segment]) }

    public func isPrefix(of other: FieldPath) -> Bool {
        other.segments.count >= segments.count && zip(segments, other.segments).allSatisfy { compareUTF8($0, $1) == 0 }
    }

    /// The dotted form, backquoting segments that are not simple identifiers.
    public var canonical: String {
        segments.map { seg -> String in
            let simple = !seg.isEmpty && seg.unicodeScalars.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }
                && !(seg.unicodeScalars.first! >= "0" && seg.unicodeScalars.first! <= "9")
            if simple { return seg }
            return "`" + seg.replacingBackslashesAndBackquotes() + "`"
        }.joined(separator: ".")
    }

    public var description: String { canonical }

    /// Order of field paths: segment by segment, by UTF-8 bytes.
    public func compare(_ other: FieldPath) -> Int {
        ResourcePath(segments: segments).compare(ResourcePath(segments: other.segments))
    }
}

extension String {
    func replacingBackslashesAndBackquotes() -> String {
        var out = ""
        for ch in unicodeScalars {   // (a combining mark after a backquote must not hide it)
            if ch == "\\" || ch == "`" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out
    }
}
