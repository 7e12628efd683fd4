/// Responsible for: Ember's JSON notation for values, exact in both directions.
/// JSON's own types map directly (an integer literal is an int64, a number with a fraction or
/// exponent is a double: `1` is an int, `1.0` a double); the types JSON lacks are one-key
/// objects whose key starts with `$`:
///
///     {"$double": "NaN" | "Infinity" | "-Infinity" | "-0.0"}     special doubles
///     {"$timestamp": "2024-05-01T12:00:00.000001Z"}             RFC 3339, UTC, µs
///     {"$bytes": "aGVsbG8="}                                    base64
///     {"$ref": "cities/SF"}                                     document reference
///     {"$geo": [37.77, -122.42]}                                geopoint (latitude, longitude)
///     {"$map": {"$weird": 1}}                                   a map whose keys would look special
///
///     let v = try ValueJSON.parse(#"{"n": 1, "d": 1.0}"#); ValueJSON.render(v)
public enum ValueJSON {
    /// Deepest nesting the parser accepts (documents are further limited to 20 levels).
    public static let maxParseDepth = 64

    /// `plain`: standard JSON only: an object with one `$` key is a map, not a special value
    /// (the Realtime Database's bodies and rules, where `$` keys mean something else).
    public static func parse(_ text: String, plain: Bool = false) throws -> Value {
        var p = JSONParser(bytes: Array(text.utf8))
        p.plain = plain
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.i != p.bytes.count { throw p.error("unexpected text after the value") }
        return v
    }

    /// Parses a JSON object into a document's fields.
    public static func parseMap(_ text: String) throws -> MapValue {
        guard case .map(let m) = try parse(text) else {
            throw EmberError.invalidArgument("Invalid JSON: a document must be a JSON object.")
        }
        return m
    }

    /// `plain`: a map with one `$` key is written as it is, not inside `{"$map": ...}` (for what
    /// `parse(_:plain: true)` read).
    public static func render(_ v: Value, plain: Bool = false) -> String {
        var out = ""
        write(v, to: &out, plain: plain)
        return out
    }

    public static func render(_ m: MapValue) -> String { render(.map(m)) }

    static func write(_ v: Value, to out: inout String, plain: Bool = false) {
        switch v {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isNaN { out += #"{"$double":"NaN"}"# }
            else if d.isInfinite { out += d < 0 ? #"{"$double":"-Infinity"}"# : #"{"$double":"Infinity"}"# }
            else if d == 0 && d.sign == .minus { out += #"{"$double":"-0.0"}"# }
            else {
                var s = "\(d)"
                if !s.contains(".") && !s.contains("e") && !s.contains("E") { s += ".0" }
                out += s
            }
        case .timestamp(let t): out += #"{"$timestamp":""# + RFC3339.format(t) + #""}"#
        case .string(let s): writeString(s, to: &out)
        case .bytes(let b): out += #"{"$bytes":""# + Base64.encode(b) + #""}"#
        case .reference(let k): out += #"{"$ref":"# ; writeString(k.path.canonical, to: &out); out += "}"
        case .geoPoint(let g):
            out += #"{"$geo":["#
            write(.double(g.latitude), to: &out); out += ","; write(.double(g.longitude), to: &out)
            out += "]}"
        case .array(let a):
            out += "["
            for (i, e) in a.enumerated() { if i > 0 { out += "," }; write(e, to: &out, plain: plain) }
            out += "]"
        case .map(let m):
            let special = !plain && m.count == 1 && m.entries[0].key.hasPrefix("$")
            if special { out += #"{"$map":"# }
            out += "{"
            for (i, e) in m.entries.enumerated() {
                if i > 0 { out += "," }
                writeString(e.key, to: &out); out += ":"; write(e.value, to: &out, plain: plain)
            }
            out += "}"
            if special { out += "}" }
        }
    }

    /// Appends `s` as a JSON string literal (quotes, backslash and control characters escaped).
    public static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let h = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}

/// Responsible for: reading JSON text byte by byte into values (strict RFC 8259, with Ember's
/// `$` notation), with errors that say where.
struct JSONParser {
    let bytes: [UInt8]
    var i = 0
    /// No special values (`ValueJSON.parse(_:plain:)`).
    var plain = false

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ what: String) -> EmberError {
        EmberError.invalidArgument("Invalid JSON at byte \(i): \(what).")
    }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func expect(_ literal: String) throws {
        for b in literal.utf8 {
            guard i < bytes.count, bytes[i] == b else { throw error("expected '\(literal)'") }
            i += 1
        }
    }

    /// `literal`: an object read as a plain map even with one `$` key (the operand of `$map`).
    mutating func value(depth: Int, literal: Bool = false) throws -> Value {
        if depth > ValueJSON.maxParseDepth { throw error("nested more than \(ValueJSON.maxParseDepth) levels") }
        guard i < bytes.count else { throw error("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            i += 1
            var arr: [Value] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(arr) }
            while true {
                skipSpace()
                arr.append(try value(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw error("unterminated array") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(arr) }
                throw error("expected ',' or ']'")
            }
        case UInt8(ascii: "{"):
            i += 1
            var order: [(key: String, value: Value)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .map(MapValue()) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a string key") }
                let k = try string()
                skipSpace()
                try expect(":")
                skipSpace()
                let v = try value(depth: depth + 1, literal: !literal && !plain && order.isEmpty && k == "$map")
                order.append((k, v))
                skipSpace()
                guard i < bytes.count else { throw error("unterminated object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; break }
                throw error("expected ',' or '}'")
            }
            if !literal, !plain, order.count == 1, order[0].key.hasPrefix("$") { return try special(order[0].key, order[0].value) }
            guard let m = MapValue(uniqueEntries: order) else {
                var seen = Set<UTF8String>()
                let k = order.first { !seen.insert(UTF8String($0.key)).inserted }!.key
                throw error("duplicate key '\(k)'")
            }
            return .map(m)
        default:
            return try number()
        }
    }

    func special(_ key: String, _ v: Value) throws -> Value {
        switch (key, v) {
        case ("$double", .string(let s)):
            switch s {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            case "-0.0": return .double(-0.0)
            default: throw error("$double takes \"NaN\", \"Infinity\", \"-Infinity\" or \"-0.0\"")
            }
        case ("$double", .double), ("$double", .int):
            if case .int(let n) = v { return .double(Double(n)) }
            return v
        case ("$timestamp", .string(let s)):
            guard let t = RFC3339.parse(s) else { throw error("$timestamp must be RFC 3339 in UTC, like 2024-05-01T12:00:00.000001Z") }
            return .timestamp(t)
        case ("$bytes", .string(let s)):
            guard let b = Base64.decode(s) else { throw error("$bytes must be base64") }
            return .bytes(b)
        case ("$ref", .string(let s)):
            return .reference(try DocumentKey(parsing: s))
        case ("$geo", .array(let a)):
            guard a.count == 2, let lat = a[0].asDouble, let lng = a[1].asDouble, (-90...90).contains(lat), (-180...180).contains(lng) else {
                throw error("$geo takes [latitude in -90...90, longitude in -180...180]")
            }
            return .geoPoint(GeoPoint(latitude: lat, longitude: lng))
        case ("$map", .map(let m)): return .map(m)
        default:
            throw error("unknown or malformed special value '\(key)' (use {\"$map\": {...}} for a map with a '$' key)")
        }
    }

    mutating func string() throws -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw error("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw error("control character in string") }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw error("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { throw error("lone surrogate") }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("bad surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw error("lone surrogate")
                }
                out.append(contentsOf: Array(String(Unicode.Scalar(scalar)!).utf8))
            default: throw error("bad escape")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
        return s
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw error("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw error("bad hex digit")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    mutating func number() throws -> Value {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw error("unexpected character") }
        if bytes[i] == 0x30, i + 1 < bytes.count, (0x30...0x39).contains(bytes[i + 1]) { throw error("leading zero") }
        while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
        var isDouble = false
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isDouble = true
            i += 1
            guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw error("digit expected after '.'") }
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isDouble = true
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw error("digit expected in exponent") }
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isDouble {
            guard let d = Double(text) else { throw error("bad number") }
            return .double(d)
        }
        guard let n = Int64(text) else { throw error("integer \(text) does not fit in 64 bits (write it as a double, e.g. \(text).0)") }
        return .int(n)
    }
}

extension Value {
    var asDouble: Double? {
        switch self {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: return nil
        }
    }
}
