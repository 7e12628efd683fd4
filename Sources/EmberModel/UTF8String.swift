/// Responsible for: a String that is equal to, hashes like and sorts like another by its UTF-8
/// bytes, as Firestore compares ids and field names. Swift's own `String` `==` and hashing use
/// canonical equivalence, under which "\u{E9}" and "e\u{301}" are one key; in Firestore they are
/// two collections, two documents, two fields.
///
///     var ids = Set<UTF8String>(); ids.insert(UTF8String("\u{E9}")); ids.insert(UTF8String("e\u{301}"))   // 2
public struct UTF8String: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let s: String
    public init(_ s: String) { self.s = s }
    public init(stringLiteral s: String) { self.s = s }
    public var description: String { s }
    public static func == (a: UTF8String, b: UTF8String) -> Bool { equalUTF8(a.s, b.s) }
    public static func < (a: UTF8String, b: UTF8String) -> Bool { compareUTF8(a.s, b.s) < 0 }
    /// Whether `a` and `b` are the same 16 bytes: the same small string inline, or the same
    /// storage with the same length and flags. Then they have the same bytes; when not, they may
    /// still have (`==` decides). A quick test before `==`, never a reason to say "different".
    @inline(__always)
    public static func identical(_ a: UTF8String, _ b: UTF8String) -> Bool {
        guard MemoryLayout<String>.size == 16 else { return false }
        let x = unsafeBitCast(a.s, to: (UInt64, UInt64).self), y = unsafeBitCast(b.s, to: (UInt64, UInt64).self)
        return x.0 == y.0 && x.1 == y.1
    }
    /// `a == b` (the same UTF-8 bytes), compared byte by byte in the caller's code: no call, so
    /// a loop that holds a borrowed value around it need not retain it (`==` calls `memcmp`).
    @inline(__always)
    public static func sameBytesInline(_ a: UTF8String, _ b: UTF8String) -> Bool {
        a.s.utf8.count == b.s.utf8.count && a.s.utf8.elementsEqual(b.s.utf8)
    }

    public func hash(into h: inout Hasher) {
        var s = s
        s.withUTF8 { h.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// `strings` without repeats and sorted, both by UTF-8 bytes (Firestore's order of ids).
public func sortedDistinctUTF8<S: Sequence>(_ strings: S) -> [String] where S.Element == String {
    var out: [String] = []
    for s in strings.sorted(by: { compareUTF8($0, $1) < 0 }) where out.last.map({ !equalUTF8($0, s) }) ?? true {
        out.append(s)
    }
    return out
}

/// `s` after its UTF-8 length and a colon ("3:abc"): text that cannot run into what follows it
/// when identities are built by joining several of them.
public func lengthPrefixedUTF8(_ s: String) -> String { "\(s.utf8.count):\(s)" }

/// `s` with every byte from 0x80, and `%`, written as `%XX` (uppercase hex): ASCII text, equal to
/// another such text, as Swift Strings too, exactly when the originals have the same bytes. For
/// identities built from user text and used as String keys.
public func asciiEscapedUTF8(_ s: String) -> String {
    guard s.utf8.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "%") }) else { return s }
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count + 16)
    for b in s.utf8 {
        if b >= 0x80 || b == UInt8(ascii: "%") {
            out.append(UInt8(ascii: "%"))
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0x0F)])
        } else {
            out.append(b)
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// `pairs` sorted by their keys' UTF-8 bytes, one per key: of pairs whose keys have the same bytes
/// the last one given (a protobuf map's rule for a key sent twice). Keys that differ only in
/// their Unicode normalization are different keys.
public func lastWinsByUTF8<V>(_ pairs: [(key: String, value: V)]) -> [(key: String, value: V)] {
    // The usual case (Ember's own encoders write keys in this order): already strictly ascending.
    if zip(pairs, pairs.dropFirst()).allSatisfy({ compareUTF8($0.key, $1.key) < 0 }) { return pairs }
    let order = pairs.indices.sorted { i, j in
        let c = compareUTF8(pairs[i].key, pairs[j].key)
        return c != 0 ? c < 0 : i < j
    }
    var out: [(key: String, value: V)] = []
    out.reserveCapacity(pairs.count)
    for i in order {
        if let last = out.last, equalUTF8(last.key, pairs[i].key) { out[out.count - 1] = pairs[i] } else { out.append(pairs[i]) }
    }
    return out
}
