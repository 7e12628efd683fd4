/// Responsible for: the Realtime-Database key rules: the order of child keys (docs/semantics.md 15,
/// Firebase JS `core/util/util.ts` nameCompare) and what a key may contain.
///
///     TreeKey.compare("3", "03") < 0          // both 3: the shorter string first
///     try TreeKey.validate("posts")           // throws for "a.b", "$x", "", ...
public enum TreeKey {
    /// Most bytes a key may have (UTF-8).
    public static let maxBytes = 768

    /// The key's value when it is a 32-bit integer as Firebase reads one (`^-?(0*)\d{1,10}$` and
    /// in Int32's range), else nil.
    @inline(__always)
    public static func int32Value(_ s: String) -> Int64? {
        var it = s.utf8.makeIterator()
        guard var c = it.next() else { return nil }
        var negative = false
        if c == UInt8(ascii: "-") {
            negative = true
            guard let n = it.next() else { return nil }
            c = n
        }
        var value: Int64 = 0
        var significant = 0
        var digits = 0
        while true {
            guard c >= 48 && c <= 57 else { return nil }
            digits += 1
            if significant > 0 || c != 48 { significant += 1 }
            if significant > 10 { return nil }
            value = value * 10 + Int64(c - 48)
            guard let n = it.next() else { break }
            c = n
        }
        guard digits > 0 else { return nil }
        if negative { value = -value }
        return value >= -2_147_483_648 && value <= 2_147_483_647 ? value : nil
    }

    /// Negative, zero or positive as `a` sorts before, with or after `b`: 32-bit integer keys first,
    /// numerically (equal numbers: shorter string first), then the others in JavaScript string
    /// order (UTF-16 code units).
    public static func compare(_ a: String, _ b: String) -> Int {
        let ai = int32Value(a), bi = int32Value(b)
        if let x = ai {
            guard let y = bi else { return -1 }
            if x != y { return x < y ? -1 : 1 }
            let la = a.utf8.count, lb = b.utf8.count
            if la != lb { return la < lb ? -1 : 1 }
            return compareJS(a, b)
        }
        if bi != nil { return 1 }
        return compareJS(a, b)
    }

    /// JavaScript's `<` on strings: by UTF-16 code units. (UTF-8 byte order is the same except
    /// where U+E000...U+FFFF meets a character outside the BMP.)
    public static func compareJS(_ a: String, _ b: String) -> Int {
        var ia = a.utf8.makeIterator(), ib = b.utf8.makeIterator()
        while true {
            let x = ia.next(), y = ib.next()
            switch (x, y) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?):
                if x == y { continue }
                if x < 0x80 && y < 0x80 { return x < y ? -1 : 1 }
                return compareUTF16(a, b)
            }
        }
    }

    static func compareUTF16(_ a: String, _ b: String) -> Int {
        var ia = a.utf16.makeIterator(), ib = b.utf16.makeIterator()
        while true {
            let x = ia.next(), y = ib.next()
            switch (x, y) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }

    /// The first character a key may not contain, if any: `. $ # [ ] /` and ASCII control characters.
    static func forbiddenCharacter(_ s: String) -> Unicode.Scalar? {
        for u in s.unicodeScalars {
            switch u {
            case ".", "$", "#", "[", "]", "/": return u
            default: if u.value < 0x20 || u.value == 0x7F { return u }
            }
        }
        return nil
    }

    /// Throws invalid-argument unless `key` is a valid child key (not empty, at most 768 bytes,
    /// none of `. $ # [ ] /` nor control characters). `context` names the caller in the message.
    public static func validate(_ key: String, context: String = "key") throws {
        if key.isEmpty { throw EmberError.invalidArgument("Invalid \(context) '': keys must not be empty.") }
        if key.utf8.count > maxBytes {
            throw EmberError.invalidArgument("Invalid \(context) '\(key.prefix(40))...': keys are at most \(maxBytes) bytes (UTF-8), this one has \(key.utf8.count).")
        }
        if let c = forbiddenCharacter(key) {
            let shown = c.value < 0x20 || c.value == 0x7F ? "control character U+\(String(c.value, radix: 16, uppercase: true))" : "'\(c)'"
            throw EmberError.invalidArgument("Invalid \(context) '\(key)': keys must not contain '.', '$', '#', '[', ']', '/' or control characters (found \(shown)).")
        }
    }
}
