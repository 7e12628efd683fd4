#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
/// Responsible for: values as MessagePack, exact in both directions. Ints are int64 (any
/// MessagePack int family; a uint64 above Int64.max is an error), floats are doubles (float32 is
/// widened), str is string, bin is bytes, and three extension types carry the rest:
///
///     ext -1  timestamp  MessagePack's standard timestamp (32, 64 or 96-bit form; µs kept)
///     ext  1  reference  the document path as UTF-8 ("cities/SF")
///     ext  2  geopoint   latitude then longitude, each a big-endian IEEE 754 double (16 bytes)
///
///     let bytes = ValueMessagePack.encode(v); let back = try ValueMessagePack.decode(bytes)
public enum ValueMessagePack {
    public static let referenceExt: Int8 = 1
    public static let geoPointExt: Int8 = 2
    public static let timestampExt: Int8 = -1
    public static let maxDecodeDepth = 64

    public static func encode(_ v: Value) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(v, to: &out)
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws -> Value {
        try bytes.withUnsafeBufferPointer { try decode($0) }
    }

    public static func decode(_ buf: UnsafeBufferPointer<UInt8>) throws -> Value {
        var r = MPReader(buf: buf)
        let v = try r.value(depth: 0)
        if r.i != buf.count { throw r.error("\(buf.count - r.i) bytes after the value") }
        return v
    }

    /// Decodes a document's fields (a MessagePack map).
    public static func decodeMap(_ buf: UnsafeBufferPointer<UInt8>) throws -> MapValue {
        guard case .map(let m) = try decode(buf) else { throw EmberError.invalidArgument("Invalid MessagePack: a document must be a map.") }
        return m
    }

    /// The value at the field path `segments` (each the UTF-8 bytes of one key) inside the encoded
    /// map `buf`, decoding nothing else: nil when a key is absent or an intermediate value is not
    /// a map. Throws on malformed input, and on keys out of UTF-8 order (which Ember never
    /// writes; callers then decode the whole document, which reports or accepts it).
    public static func field(_ segments: [[UInt8]], in buf: UnsafeBufferPointer<UInt8>) throws -> Value? {
        try field(levels: segments.count, in: buf) { level, key in key.elementsEqual(segments[level]) }
    }

    /// `field(_:in:)` for a path of String segments (a `FieldPath`'s).
    public static func field(_ segments: [String], in buf: UnsafeBufferPointer<UInt8>) throws -> Value? {
        try field(levels: segments.count, in: buf) { level, key in
            var segment = segments[level]
            return segment.withUTF8 { s in s.count == key.count && (s.count == 0 || memcmp(s.baseAddress!, key.baseAddress!, s.count) == 0) }
        }
    }

    @inline(__always)
    private static func field(levels: Int, in buf: UnsafeBufferPointer<UInt8>,
                              _ isSegment: (Int, UnsafeBufferPointer<UInt8>) -> Bool) throws -> Value? {
        var r = MPReader(buf: buf)
        var depth = 0
        guard var n = try r.mapHeader() else { throw r.error("a document must be a map") }
        for level in 0..<levels {
            var found = false
            var previous: UnsafeBufferPointer<UInt8>?
            for _ in 0..<n {
                let k = try r.keyBytes()
                if let p = previous, !p.lexicographicallyPrecedes(k) { throw r.error("map keys out of order") }
                previous = k
                if isSegment(level, k) { found = true; break }
                try r.skip(depth: depth + 1)
            }
            guard found else { return nil }
            depth += 1
            if level == levels - 1 { return try r.value(depth: depth) }
            guard let m = try r.mapHeader() else { return nil }
            n = m
        }
        return nil
    }

    /// The low `n` bytes of `v`, big-endian.
    @inline(__always)
    static func be(_ v: UInt64, _ n: Int, _ out: inout [UInt8]) {
        var x = v.bigEndian
        withUnsafeBytes(of: &x) { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[(8 - n)...])) }
    }

    /// A string's header and UTF-8 bytes, copied from its contiguous storage.
    @inline(__always)
    static func writeString(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { u in
            header(u.count, fix: 0xA0, fixMax: 31, d8: 0xD9, d16: 0xDA, d32: 0xDB, &out)
            out.append(contentsOf: u)
        }
    }

    static func write(_ v: Value, to out: inout [UInt8]) {
        switch v {
        case .null: out.append(0xC0)
        case .bool(let b): out.append(b ? 0xC3 : 0xC2)
        case .int(let i):
            if i >= 0 && i < 128 { out.append(UInt8(i)) }
            else if i < 0 && i >= -32 { out.append(UInt8(bitPattern: Int8(i))) }
            else { out.append(0xD3); be(UInt64(bitPattern: i), 8, &out) }
        case .double(let d): out.append(0xCB); be(d.bitPattern, 8, &out)
        case .timestamp(let t):
            // timestamp 96: nanoseconds (uint32) then seconds (int64).
            out.append(contentsOf: [0xC7, 12, UInt8(bitPattern: timestampExt)])
            be(UInt64(UInt32(t.nanoseconds)), 4, &out)
            be(UInt64(bitPattern: t.seconds), 8, &out)
        case .string(let s): writeString(s, to: &out)
        case .bytes(let b): header(b.count, fix: nil, fixMax: 0, d8: 0xC4, d16: 0xC5, d32: 0xC6, &out); out.append(contentsOf: b)
        case .reference(let k): ext(Array(k.path.canonical.utf8), referenceExt, &out)
        case .geoPoint(let g):
            var payload: [UInt8] = []
            be(g.latitude.bitPattern, 8, &payload); be(g.longitude.bitPattern, 8, &payload)
            ext(payload, geoPointExt, &out)
        case .array(let a):
            header(a.count, fix: 0x90, fixMax: 15, d8: nil, d16: 0xDC, d32: 0xDD, &out)
            for e in a { write(e, to: &out) }
        case .map(let m):
            header(m.count, fix: 0x80, fixMax: 15, d8: nil, d16: 0xDE, d32: 0xDF, &out)
            for (k, e) in m.entries { writeString(k, to: &out); write(e, to: &out) }
        }
    }

    static func header(_ n: Int, fix: UInt8?, fixMax: Int, d8: UInt8?, d16: UInt8, d32: UInt8, _ out: inout [UInt8]) {
        if let f = fix, n <= fixMax { out.append(f | UInt8(n)) }
        else if let c = d8, n <= 0xFF { out.append(c); out.append(UInt8(n)) }
        else if n <= 0xFFFF { out.append(d16); be(UInt64(n), 2, &out) }
        else { out.append(d32); be(UInt64(n), 4, &out) }
    }

    static func ext(_ payload: [UInt8], _ type: Int8, _ out: inout [UInt8]) {
        switch payload.count {
        case 1: out.append(0xD4)
        case 2: out.append(0xD5)
        case 4: out.append(0xD6)
        case 8: out.append(0xD7)
        case 16: out.append(0xD8)
        default: header(payload.count, fix: nil, fixMax: 0, d8: 0xC7, d16: 0xC8, d32: 0xC9, &out)
        }
        out.append(UInt8(bitPattern: type))
        out.append(contentsOf: payload)
    }
}

/// Responsible for: reading MessagePack safely: every length is checked against the input, and
/// nesting is bounded.
struct MPReader {
    let buf: UnsafeBufferPointer<UInt8>
    var i = 0
    /// Values decoded (tests: each value of the input is decoded once).
    private(set) var valuesDecoded = 0

    func error(_ what: String) -> EmberError { EmberError.invalidArgument("Invalid MessagePack at byte \(i): \(what).") }

    mutating func byte() throws -> UInt8 {
        guard i < buf.count else { throw error("unexpected end of input") }
        defer { i += 1 }
        return buf[i]
    }

    mutating func uint(_ n: Int) throws -> UInt64 {
        guard i + n <= buf.count else { throw error("unexpected end of input") }
        var v: UInt64 = 0
        for k in 0..<n { v = v << 8 | UInt64(buf[i + k]) }
        i += n
        return v
    }

    mutating func take(_ n: Int) throws -> UnsafeBufferPointer<UInt8> {
        guard n >= 0, n <= buf.count - i else { throw error("length \(n) runs past the end of input") }
        defer { i += n }
        return UnsafeBufferPointer(rebasing: buf[i..<(i + n)])
    }

    mutating func str(_ n: Int) throws -> String { try text(n).string }

    /// The next `n` bytes as a string, and whether they are all ASCII.
    mutating func text(_ n: Int) throws -> (string: String, ascii: Bool) {
        let b = try take(n)
        // ASCII (the common case) is valid UTF-8: skip the generic validating initializer.
        var ascii = true
        for x in b where x >= 0x80 { ascii = false; break }
        if ascii { return (String(decoding: b, as: UTF8.self), true) }
        guard let s = String(validating: b, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return (s, false)
    }

    /// The entry count when a map starts here (consumed), nil for any other value (not consumed).
    mutating func mapHeader() throws -> Int? {
        guard i < buf.count else { throw error("unexpected end of input") }
        let b = buf[i]
        let n: Int
        switch b {
        case 0x80...0x8F: i += 1; n = Int(b & 0x0F)
        case 0xDE: i += 1; n = Int(try uint(2))
        case 0xDF: i += 1; n = Int(try uint(4))
        default: return nil
        }
        guard n <= (buf.count - i) / 2 else { throw error("map of \(n) entries is longer than the input") }
        return n
    }

    /// A map key's UTF-8 bytes (not validated: only compared).
    @inline(__always)
    mutating func keyBytes() throws -> UnsafeBufferPointer<UInt8> {
        let b = try byte()
        switch b {
        case 0xA0...0xBF, 0xD9...0xDB: return try stringBytes(after: b)
        default: throw error("map keys must be strings")
        }
    }

    /// A string's UTF-8 bytes (not validated) after its type byte `b`: a fixstr or str 8/16/32.
    @inline(__always)
    mutating func stringBytes(after b: UInt8) throws -> UnsafeBufferPointer<UInt8> {
        switch b {
        case 0xA0...0xBF: return try take(Int(b & 0x1F))
        case 0xD9: return try take(Int(try uint(1)))
        case 0xDA: return try take(Int(try uint(2)))
        case 0xDB: return try take(Int(try uint(4)))
        default: throw error("not a string")
        }
    }

    /// An integer after its type byte `b`: a positive or negative fixint, uint 8-64 or int 8-64.
    /// A uint64 past Int64.max is an error (Firestore's integers are 64-bit signed).
    @inline(__always)
    mutating func integer(after b: UInt8) throws -> Int64 {
        switch b {
        case 0x00...0x7F: return Int64(b)
        case 0xE0...0xFF: return Int64(Int8(bitPattern: b))
        case 0xCC: return Int64(try uint(1))
        case 0xCD: return Int64(try uint(2))
        case 0xCE: return Int64(try uint(4))
        case 0xCF:
            let u = try uint(8)
            guard u <= UInt64(Int64.max) else { throw error("uint64 \(u) does not fit in an int64") }
            return Int64(u)
        case 0xD0: return Int64(Int8(truncatingIfNeeded: try uint(1)))
        case 0xD1: return Int64(Int16(truncatingIfNeeded: try uint(2)))
        case 0xD2: return Int64(Int32(truncatingIfNeeded: try uint(4)))
        case 0xD3: return Int64(bitPattern: try uint(8))
        default: throw error("not an integer")
        }
    }

    /// Steps over one value without building it (lengths checked, nesting bounded).
    mutating func skip(depth: Int) throws {
        if depth > ValueMessagePack.maxDecodeDepth { throw error("nested more than \(ValueMessagePack.maxDecodeDepth) levels") }
        let b = try byte()
        switch b {
        case 0x00...0x7F, 0xE0...0xFF, 0xC0, 0xC2, 0xC3: return
        case 0x80...0x8F: try skipValues(Int(b & 0x0F) * 2, depth)
        case 0x90...0x9F: try skipValues(Int(b & 0x0F), depth)
        case 0xA0...0xBF: _ = try take(Int(b & 0x1F))
        case 0xC4, 0xD9: _ = try take(Int(try uint(1)))
        case 0xC5, 0xDA: _ = try take(Int(try uint(2)))
        case 0xC6, 0xDB: _ = try take(Int(try uint(4)))
        case 0xC7: _ = try take(Int(try uint(1)) + 1)
        case 0xC8: _ = try take(Int(try uint(2)) + 1)
        case 0xC9: _ = try take(Int(try uint(4)) + 1)
        case 0xCC, 0xD0: _ = try take(1)
        case 0xCD, 0xD1: _ = try take(2)
        case 0xCA, 0xCE, 0xD2: _ = try take(4)
        case 0xCB, 0xCF, 0xD3: _ = try take(8)
        case 0xD4: _ = try take(2)
        case 0xD5: _ = try take(3)
        case 0xD6: _ = try take(5)
        case 0xD7: _ = try take(9)
        case 0xD8: _ = try take(17)
        case 0xDC: try skipValues(Int(try uint(2)), depth)
        case 0xDD: try skipValues(Int(try uint(4)), depth)
        case 0xDE: try skipValues(Int(try uint(2)) * 2, depth)
        case 0xDF: try skipValues(Int(try uint(4)) * 2, depth)
        default: throw error("unused type byte 0x\(String(b, radix: 16))")
        }
    }

    private mutating func skipValues(_ n: Int, _ depth: Int) throws {
        guard n <= buf.count - i else { throw error("\(n) values run past the end of input") }
        for _ in 0..<n { try skip(depth: depth + 1) }
    }

    mutating func value(depth: Int) throws -> Value {
        valuesDecoded &+= 1
        if depth > ValueMessagePack.maxDecodeDepth { throw error("nested more than \(ValueMessagePack.maxDecodeDepth) levels") }
        let b = try byte()
        switch b {
        case 0x00...0x7F, 0xCC...0xD3, 0xE0...0xFF: return .int(try integer(after: b))
        case 0x80...0x8F: return try map(Int(b & 0x0F), depth)
        case 0x90...0x9F: return try array(Int(b & 0x0F), depth)
        case 0xA0...0xBF: return .string(try str(Int(b & 0x1F)))
        case 0xC0: return .null
        case 0xC2: return .bool(false)
        case 0xC3: return .bool(true)
        case 0xC4: return .bytes(Array(try take(Int(try uint(1)))))
        case 0xC5: return .bytes(Array(try take(Int(try uint(2)))))
        case 0xC6: return .bytes(Array(try take(Int(try uint(4)))))
        case 0xC7: return try ext(Int(try uint(1)))
        case 0xC8: return try ext(Int(try uint(2)))
        case 0xC9: return try ext(Int(try uint(4)))
        case 0xCA: return .double(Double(Float(bitPattern: UInt32(try uint(4)))))
        case 0xCB: return .double(Double(bitPattern: try uint(8)))
        case 0xD4: return try ext(1)
        case 0xD5: return try ext(2)
        case 0xD6: return try ext(4)
        case 0xD7: return try ext(8)
        case 0xD8: return try ext(16)
        case 0xD9: return .string(try str(Int(try uint(1))))
        case 0xDA: return .string(try str(Int(try uint(2))))
        case 0xDB: return .string(try str(Int(try uint(4))))
        case 0xDC: return try array(Int(try uint(2)), depth)
        case 0xDD: return try array(Int(try uint(4)), depth)
        case 0xDE: return try map(Int(try uint(2)), depth)
        case 0xDF: return try map(Int(try uint(4)), depth)
        default: throw error("unused type byte 0x\(String(b, radix: 16))")
        }
    }

    mutating func array(_ n: Int, _ depth: Int) throws -> Value {
        guard n <= buf.count - i else { throw error("array of \(n) elements is longer than the input") }
        var a: [Value] = []
        a.reserveCapacity(n)
        for _ in 0..<n { a.append(try value(depth: depth + 1)) }
        return .array(a)
    }

    /// A map's entries, each value decoded once whatever happens (no second pass: nested maps
    /// would otherwise double the work per level). Ember writes keys in UTF-8 order: kept as they
    /// come while strictly ascending. Callers' maps (C, Python) usually are not sorted: ASCII keys
    /// are sorted by their bytes where they lie in the input (no String compared); other keys by
    /// their UTF-8 strings. Errors are those of a dictionary built in input order: a repeated key
    /// (the same UTF-8 bytes; canonically equivalent keys are two fields) is reported after its value,
    /// unless the keys were ascending; a bad value after an earlier repeated key reports the key.
    mutating func map(_ n: Int, _ depth: Int) throws -> Value {
        guard n <= (buf.count - i) / 2 else { throw error("map of \(n) entries is longer than the input") }
        let start = i
        return try withUnsafeTemporaryAllocation(of: UnsafeBufferPointer<UInt8>.self, capacity: n) { keys -> Value in
            var entries: [(key: String, value: Value)] = []
            entries.reserveCapacity(n)
            var ascending = true, ascii = true
            for j in 0..<n {
                let k: String, kb: UnsafeBufferPointer<UInt8>, keyASCII: Bool, v: Value
                do {
                    (k, kb, keyASCII) = try keyWithBytes(depth: depth + 1)
                    v = try value(depth: depth + 1)
                } catch {
                    if !ascending, let e = repeatedKeyError(count: j, from: start, depth: depth) { throw e }
                    throw error
                }
                ascii = ascii && keyASCII
                if ascending && j > 0 && compareUTF8(keys[j - 1], kb) >= 0 { ascending = false }
                keys[j] = kb
                entries.append((key: k, value: v))
            }
            if ascending { return .map(MapValue(sortedEntries: entries)) }
            if ascii {
                if MPReader.sortByKeyBytes(&entries, keys) { return .map(MapValue(sortedEntries: entries)) }
            } else {
                // Repeats by bytes: "\u{E9}" and "e\u{301}" are two keys (Swift's String `==` says one).
                entries.sort { compareUTF8($0.key, $1.key) < 0 }
                if !zip(entries, entries.dropFirst()).contains(where: { equalUTF8($0.key, $1.key) }) {
                    return .map(MapValue(sortedEntries: entries))
                }
            }
            throw repeatedKeyError(count: n, from: start, depth: depth) ?? error("duplicate key")
        }
    }

    /// A map key, its UTF-8 bytes in the input and whether they are ASCII: a string read
    /// directly (the common forms), anything else through `value`, which also throws the depth
    /// error first as it always did.
    @inline(__always)
    mutating func keyWithBytes(depth: Int) throws -> (String, UnsafeBufferPointer<UInt8>, ascii: Bool) {
        if depth <= ValueMessagePack.maxDecodeDepth && i < buf.count {
            let b = buf[i]
            var n = -1
            if b & 0xE0 == 0xA0 { i += 1; n = Int(b & 0x1F) }
            else if b == 0xD9 { i += 1; n = Int(try uint(1)) }
            if n >= 0 {
                let (s, ascii) = try text(n)
                return (s, UnsafeBufferPointer(rebasing: buf[(i - n)..<i]), ascii)
            }
        }
        guard case .string(let k) = try value(depth: depth) else { throw error("map keys must be strings") }
        // A string form read by `value` (str16, str32): its bytes are the last ones read.
        let n = k.utf8.count
        return (k, UnsafeBufferPointer(rebasing: buf[(i - n)..<i]), k.utf8.allSatisfy { $0 < 0x80 })
    }

    /// The error a dictionary built in input order would have thrown for the first `count`
    /// entries of the map at `start` (the first key equal to an earlier one, reported at the end
    /// of its value), or nil when none repeats. Walks the input again without decoding values.
    private mutating func repeatedKeyError(count: Int, from start: Int, depth: Int) -> EmberError? {
        var seen = Set<UTF8String>()
        seen.reserveCapacity(count)
        i = start
        for _ in 0..<count {
            guard let (k, _, _) = try? keyWithBytes(depth: depth + 1), (try? skip(depth: depth + 1)) != nil else { return nil }
            if !seen.insert(UTF8String(k)).inserted { return error("duplicate key '\(k)'") }
        }
        return nil
    }

    /// Sorts `entries` by their keys' bytes (`keys[j]` is entry j's; insertion sort for the few
    /// fields of a typical document); false when two keys are equal.
    static func sortByKeyBytes(_ entries: inout [(key: String, value: Value)], _ keys: UnsafeMutableBufferPointer<UnsafeBufferPointer<UInt8>>) -> Bool {
        let n = entries.count
        if n > 16 {
            let order = (0..<n).sorted { compareUTF8(keys[$0], keys[$1]) < 0 }
            for j in 1..<n where compareUTF8(keys[order[j - 1]], keys[order[j]]) == 0 { return false }
            entries = order.map { entries[$0] }
            return true
        }
        return entries.withUnsafeMutableBufferPointer { e -> Bool in
            for j in 1..<n {
                var k = j
                while k > 0 {
                    let c = compareUTF8(keys[k - 1], keys[k])
                    if c == 0 { return false }
                    if c < 0 { break }
                    keys.swapAt(k - 1, k)
                    e.swapAt(k - 1, k)
                    k -= 1
                }
            }
            return true
        }
    }

    mutating func ext(_ n: Int) throws -> Value {
        let type = Int8(bitPattern: try byte())
        let p = try take(n)
        switch type {
        case ValueMessagePack.timestampExt:
            var r = MPReader(buf: p)
            let secs: Int64, nanos: UInt32
            switch n {
            case 4: secs = Int64(try r.uint(4)); nanos = 0
            case 8:
                let v = try r.uint(8)
                nanos = UInt32(v >> 34); secs = Int64(v & 0x3_FFFF_FFFF)
            case 12: nanos = UInt32(try r.uint(4)); secs = Int64(bitPattern: try r.uint(8))
            default: throw error("timestamp extension of \(n) bytes")
            }
            guard nanos < 1_000_000_000 else { throw error("timestamp nanoseconds out of range") }
            let t = Timestamp(seconds: secs, nanoseconds: Int32(nanos))
            guard secs >= Timestamp.minMicros / 1_000_000, secs <= Timestamp.maxMicros / 1_000_000 else { throw error("timestamp out of Firestore's range (years 1-9999)") }
            return .timestamp(t)
        case ValueMessagePack.referenceExt:
            guard let s = String(validating: p, as: UTF8.self) else { throw error("reference is not valid UTF-8") }
            return .reference(try DocumentKey(parsing: s))
        case ValueMessagePack.geoPointExt:
            guard n == 16 else { throw error("geopoint extension must be 16 bytes") }
            var r = MPReader(buf: p)
            let lat = Double(bitPattern: try r.uint(8)), lng = Double(bitPattern: try r.uint(8))
            guard (-90...90).contains(lat), (-180...180).contains(lng) else { throw error("geopoint out of range") }
            return .geoPoint(GeoPoint(latitude: lat, longitude: lng))
        default:
            throw error("unknown extension type \(type)")
        }
    }
}
