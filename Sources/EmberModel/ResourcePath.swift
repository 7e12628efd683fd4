/// Responsible for: slash-separated resource paths ("cities/SF/landmarks") and their validation
/// and order (segment by segment, each by UTF-8 bytes), as Firestore defines them.
///
///     let p = try ResourcePath(parsing: "cities/SF")   // 2 segments: a document path
public struct ResourcePath: Hashable, Sendable, CustomStringConvertible {
    public let segments: [String]

    public init(segments: [String]) { self.segments = segments }

    /// Parses and validates a path: each id valid and at most 1,500 bytes, the whole name at most
    /// 6 KiB (Firestore's limits; the name's size as Firestore counts it: each id plus one, plus
    /// 16). As in the Firebase Apple and C++ SDKs, one leading and one trailing slash are ignored
    /// ("/cities/SF/" is "cities/SF"), while "//" inside a path and a path of slashes only are errors.
    public init(parsing string: String) throws {
        if string.isEmpty { throw EmberError.invalidArgument("Invalid path '': a path must be a non-empty string") }
        if string.utf8.count > ResourcePath.maxNameBytes {
            throw EmberError.invalidArgument("Invalid path: a document name is at most \(ResourcePath.maxNameBytes) bytes (6 KiB)")
        }
        // Slashes are bytes: a combining mark after one does not make it part of an id.
        let u = string.utf8
        if zip(u, u.dropFirst()).contains(where: { $0 == 0x2F && $1 == 0x2F }) {
            throw EmberError.invalidArgument("Invalid path (\(string)). Paths must not contain // in them.")
        }
        var body = Substring(string).utf8[...]
        if body.first == 0x2F { body = body.dropFirst() }
        if body.last == 0x2F { body = body.dropLast() }
        if body.isEmpty { throw EmberError.invalidArgument("Invalid path '\(string)': empty segment") }
        let parts = splitAtSlashes(Substring(body))
        for part in parts {
            try ResourcePath.validateSegment(part, in: string)
        }
        if parts.reduce(16, { $0 + $1.utf8.count + 1 }) > ResourcePath.maxNameBytes {
            throw EmberError.invalidArgument("Invalid path: a document name is at most \(ResourcePath.maxNameBytes) bytes (6 KiB) as Firestore counts it (each id plus 1, plus 16)")
        }
        self.segments = parts
    }

    /// The longest id (document or collection), in UTF-8 bytes.
    public static let maxBytes = 1_500
    /// The largest document name (6 KiB), counted as Firestore counts a name's size.
    public static let maxNameBytes = 6_144

    /// Ids may not be empty, "." or "..", nor be reserved (`isReserved`), nor contain "/"; at
    /// most 1,500 bytes.
    public static func validateSegment(_ id: String, in path: String? = nil) throws {
        let context = path.map { " in path '\($0)'" } ?? ""
        if id.isEmpty { throw EmberError.invalidArgument("Invalid path\(context): empty segment") }
        if id == "." || id == ".." { throw EmberError.invalidArgument("Invalid id '\(id)'\(context): '.' and '..' are not allowed") }
        if id.utf8.contains(0x2F) { throw EmberError.invalidArgument("Invalid id '\(id)': an id cannot contain '/'") }
        let u = Array(id.utf8)
        if u.count > maxBytes {
            let start = String(decoding: u.prefix(24), as: UTF8.self)
            throw EmberError.invalidArgument("Invalid id '\(start)...' (\(u.count) bytes): an id is at most \(maxBytes) bytes")
        }
        if isReserved(id) {
            throw EmberError.invalidArgument("Invalid id '\(id)'\(context): ids matching __.*__ are reserved")
        }
    }

    /// An id of the form `__x__` (something between the underscores) that is not a numeric id:
    /// Firestore reserves them (the emulator accepts `____`, and numeric ids `__id<n>__`).
    public static func isReserved(_ id: String) -> Bool {
        let u = id.utf8
        // Bytes, not characters: "__\u{301}x__" is reserved too (Firestore's `__.*__`).
        guard u.count > 4, u.starts(with: [0x5F, 0x5F]), u.reversed().starts(with: [0x5F, 0x5F]) else { return false }
        return numericId(id) == nil
    }

    /// The number of a numeric id, `__id<int64>__` written canonically (`__id-5__`, `__id12__`;
    /// not `__id05__`): Firestore orders these before every other id, by number.
    public static func numericId(_ id: String) -> Int64? {
        var s = Substring(id)
        guard s.utf8.first == 95, s.hasPrefix("__id"), s.hasSuffix("__"), s.utf8.count > 6 else { return nil }
        s = s.dropFirst(4).dropLast(2)
        guard let n = Int64(s), String(n) == s else { return nil }
        return n
    }

    /// -1, 0, 1: numeric ids first, by number; then other ids by UTF-8 bytes.
    @inline(__always)
    public static func compareSegments(_ a: String, _ b: String) -> Int {
        // Only an id starting with '_' can be numeric: the common case reads both strings' bytes
        // once, for the first byte and the comparison (a key comparison was a tenth of a write
        // to a 1,000-document query's view).
        if let r = a.utf8.withContiguousStorageIfAvailable({ pa in
            b.utf8.withContiguousStorageIfAvailable { pb -> Int? in
                if pa.first == 95 || pb.first == 95 { return nil }
                return compareUTF8(pa, pb)
            }
        }), let r2 = r, let c = r2 { return c }
        if a.utf8.first == 95 || b.utf8.first == 95 {
            switch (numericId(a), numericId(b)) {
            case (let x?, let y?): return x < y ? -1 : (x > y ? 1 : 0)
            case (.some, nil): return -1
            case (nil, .some): return 1
            case (nil, nil): break
            }
        }
        return compareUTF8(a, b)
    }

    /// Equal when every segment has the same UTF-8 bytes, consistent with `compare`. (Swift's
    /// `String ==` uses canonical equivalence: "\u{E9}" and "e\u{301}" would be one id, but they are
    /// two different documents in Firestore.)
    /// Same storage means equal; otherwise segments are compared last first, where keys of one
    /// collection differ (dictionary probes compare many unequal keys).
    public static func == (a: ResourcePath, b: ResourcePath) -> Bool {
        let n = a.segments.count
        guard n == b.segments.count else { return false }
        let same = a.segments.withUnsafeBufferPointer { pa in
            b.segments.withUnsafeBufferPointer { pb in pa.baseAddress == pb.baseAddress }
        }
        if same { return true }
        var i = n
        while i > 0 {
            i -= 1
            let x = a.segments[i], y = b.segments[i]
            if !equalUTF8(x, y) { return false }
        }
        return true
    }
    public func hash(into hasher: inout Hasher) { hashUTF8Segments(segments, into: &hasher) }

    public var count: Int { segments.count }
    public var isEmpty: Bool { segments.isEmpty }
    public var last: String { segments.last ?? "" }
    public var isDocumentPath: Bool { !segments.isEmpty && segments.count % 2 == 0 }
    public var isCollectionPath: Bool { segments.count % 2 == 1 }
    public var canonical: String { segments.joined(separator: "/") }
    public var description: String { canonical }

    public func appending(_ segment: String) -> ResourcePath { ResourcePath(segments: segments + [segment]) }
    public var parent: ResourcePath? { segments.isEmpty ? nil : ResourcePath(segments: Array(segments.dropLast())) }

    public func isPrefix(of other: ResourcePath) -> Bool {
        other.segments.count >= segments.count && zip(segments, other.segments).allSatisfy { compareUTF8($0, $1) == 0 }
    }

    /// True when the two strings have the same 16 bytes: then they are equal (a small string
    /// holds its bytes inline, a large one its storage): two keys of one collection usually share
    /// their collection segments this way, and skip comparing them. False says nothing.
    @inline(__always)
    static func sameRepresentation(_ a: String, _ b: String) -> Bool {
        // (A String is two words on 64-bit platforms; elsewhere this says nothing.)
        guard MemoryLayout<String>.size == MemoryLayout<(UInt64, UInt64)>.size else { return false }
        return unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
    }

    /// -1, 0, 1: segment by segment (numeric ids first, then by UTF-8 bytes); a prefix sorts first.
    public func compare(_ other: ResourcePath) -> Int {
        segments.withUnsafeBufferPointer { pa in
            other.segments.withUnsafeBufferPointer { pb in
                if pa.baseAddress == pb.baseAddress { return 0 }
                let n = min(pa.count, pb.count)
                for i in 0..<n where !ResourcePath.sameRepresentation(pa[i], pb[i]) {
                    let c = ResourcePath.compareSegments(pa[i], pb[i])
                    if c != 0 { return c }
                }
                return pa.count < pb.count ? -1 : (pa.count > pb.count ? 1 : 0)
            }
        }
    }
}

/// The hash of the first `count` segments (by their UTF-8 bytes), as one Int.
func hashUTF8Segments(_ segments: [String], count: Int) -> Int {
    var h = Hasher()
    hashUTF8Segments(segments[..<count], into: &h)
    return h.finalize()
}

/// Splits `s` at every "/" byte, as Firestore's clients and the Realtime Database split paths
/// (splitting by Swift characters would keep a "/" followed by a combining mark inside an id).
/// `omittingEmpty` drops empty segments (the tree's paths); otherwise they are kept.
public func splitAtSlashes<S: StringProtocol>(_ s: S, omittingEmpty: Bool = false) -> [String] {
    var out: [String] = []
    let u = s.utf8
    var start = u.startIndex, i = start
    while i != u.endIndex {
        if u[i] == 0x2F {
            if !(omittingEmpty && start == i) { out.append(String(decoding: u[start..<i], as: UTF8.self)) }
            start = u.index(after: i)
        }
        i = u.index(after: i)
    }
    if !(omittingEmpty && start == u.endIndex) { out.append(String(decoding: u[start..<u.endIndex], as: UTF8.self)) }
    return out
}

/// Hashes segments by their UTF-8 bytes (consistent with comparing them with `compareUTF8`).
func hashUTF8Segments<S: Collection>(_ segments: S, into hasher: inout Hasher) where S.Element == String {
    hasher.combine(segments.count)
    for segment in segments {
        var s = segment
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)   // never a UTF-8 byte: keeps segment boundaries
    }
}

/// Responsible for: the key of a document, a resource path with an even number of segments.
///
///     let key = try DocumentKey(parsing: "cities/SF")
///     key.collectionPath.canonical == "cities"; key.id == "SF"
public struct DocumentKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let path: ResourcePath
    /// Computed once: the collection's 32-bit hash in the high half, the id's in the low half.
    /// A key is hashed many times on its way through the stores, overlays and views (hashing its
    /// bytes each time dominated bulk writes), and `ParentKey(of:)` takes the collection's hash
    /// from the high half without building the parent path. (16 bytes a key: keys fill the
    /// dictionaries a listener costs.)
    private let hashCode: Int
    var parentHash: Int { Int(UInt64(bitPattern: Int64(hashCode)) >> 32) }
    /// The precomputed hash (stable within a process, not across processes), for tables that
    /// place keys themselves.
    public var precomputedHash: Int { hashCode }

    public init(path: ResourcePath) throws {
        guard path.isDocumentPath else {
            throw EmberError.invalidArgument("Invalid document path '\(path.canonical)': a document path needs an even number of segments, this one has \(path.count)")
        }
        self.init(unchecked: path)
    }

    public init(parsing string: String) throws {
        try self.init(path: ResourcePath(parsing: string))
    }

    /// For keys known valid (built from a valid collection path and id).
    public init(unchecked path: ResourcePath) {
        self.init(unchecked: path, parentHash: hashUTF8Segments(path.segments, count: path.count - 1))
    }

    /// `init(unchecked:)` given `DocumentKey.parentHash(of:)` of the key's collection: a reader of
    /// many documents of one collection hashes its path once.
    public init(unchecked path: ResourcePath, parentHash: Int) {
        self.path = path
        let parent = UInt64(bitPattern: Int64(parentHash)) >> 32
        var h = Hasher()
        var last = path.segments[path.count - 1]
        last.withUTF8 { h.combine(bytes: UnsafeRawBufferPointer($0)) }
        let id = UInt64(bitPattern: Int64(h.finalize())) & 0xFFFF_FFFF
        hashCode = Int(Int64(bitPattern: parent << 32 | id))
    }

    /// The hash of a collection's path that `init(unchecked:parentHash:)` takes.
    public static func parentHash(of collection: ResourcePath) -> Int {
        hashUTF8Segments(collection.segments, count: collection.count)
    }

    public static func == (a: DocumentKey, b: DocumentKey) -> Bool {
        a.hashCode == b.hashCode && a.path == b.path
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }
    /// What Set and Dictionary call: the cached hash mixed with the table's seed, without running
    /// a Hasher per probe (SipHash finalization was a fifth of a bulk write's time).
    public func _rawHashValue(seed: Int) -> Int { mixHash(hashCode, seed) }

    public var id: String { path.last }
    public var collectionPath: ResourcePath { path.parent! }
    public var collectionGroup: String { path.segments[path.count - 2] }
    public var description: String { path.canonical }

    public static func < (a: DocumentKey, b: DocumentKey) -> Bool { a.path.compare(b.path) < 0 }
}

/// Responsible for: naming a collection as a dictionary key, built from a collection path or
/// straight from a document key without allocating the key's parent path (stores, overlays and
/// target indexes look up a written key's collection on every write).
///
///     byCollection[ParentKey(query.path)] = ...; byCollection[ParentKey(of: key)]
public struct ParentKey: Hashable, Sendable {
    private let segments: [String]
    private let count: Int
    private let hashCode: Int

    public init(_ collection: ResourcePath) {
        segments = collection.segments
        count = collection.count
        hashCode = Int(UInt64(bitPattern: Int64(hashUTF8Segments(segments, count: count))) >> 32)   // as DocumentKey.parentHash
    }

    public init(of key: DocumentKey) {
        segments = key.path.segments
        count = segments.count - 1
        hashCode = key.parentHash
    }

    public var path: ResourcePath { ResourcePath(segments: Array(segments[..<count])) }

    public static func == (a: ParentKey, b: ParentKey) -> Bool {
        guard a.hashCode == b.hashCode, a.count == b.count else { return false }
        var i = a.count
        while i > 0 {
            i -= 1
            let x = a.segments[i], y = b.segments[i]
            if !equalUTF8(x, y) { return false }
        }
        return true
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }
    public func _rawHashValue(seed: Int) -> Int { mixHash(hashCode, seed) }
}

/// A cached hash combined with a hash table's per-instance seed: the 64-bit finalizer of
/// MurmurHash3 (full avalanche, so every bit of the cached hash reaches the bucket index).
@inline(__always)
func mixHash(_ code: Int, _ seed: Int) -> Int {
    var x = UInt64(bitPattern: Int64(code)) ^ UInt64(bitPattern: Int64(seed)) &* 0x9E37_79B9_7F4A_7C15
    x ^= x >> 33
    x &*= 0xFF51_AFD7_ED55_8CCD
    x ^= x >> 33
    x &*= 0xC4CE_B9FE_1A85_EC53
    x ^= x >> 33
    return Int(Int64(bitPattern: x))
}
