#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
/// Responsible for: the Firestore value model. Every document field is a `Value`; maps keep their
/// entries sorted by UTF-8 key so equality, order and iteration are deterministic.
///
///     let v: Value = .map(MapValue(["name": .string("SF"), "pop": .int(860000)]))
public enum Value: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case timestamp(Timestamp)
    case string(String)
    case bytes([UInt8])
    case reference(DocumentKey)
    case geoPoint(GeoPoint)
    case array([Value])
    case map(MapValue)
}

/// Responsible for: a point in time with microsecond precision (Firestore keeps µs).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public let micros: Int64

    public init(micros: Int64) { self.micros = micros }

    /// Truncates nanoseconds to microseconds.
    public init(seconds: Int64, nanoseconds: Int32) {
        self.micros = seconds &* 1_000_000 &+ Int64(nanoseconds / 1000)
    }

    public var seconds: Int64 { micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000 }
    public var nanoseconds: Int32 { Int32((micros - seconds * 1_000_000) * 1000) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.micros < b.micros }
    public var description: String { "Timestamp(seconds=\(seconds), nanoseconds=\(nanoseconds))" }

    /// Firestore's range: 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59.999999Z.
    public static let minMicros: Int64 = -62_135_596_800 * 1_000_000
    public static let maxMicros: Int64 = 253_402_300_799 * 1_000_000 + 999_999
}

/// Responsible for: a latitude/longitude pair ordered by latitude, then longitude.
public struct GeoPoint: Hashable, Sendable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
    public var description: String { "GeoPoint(\(latitude), \(longitude))" }
}

/// Responsible for: a map value as entries sorted by the UTF-8 bytes of their keys, with
/// binary-search lookup and nested field-path access.
public struct MapValue: Sendable, Equatable {
    public private(set) var entries: [(key: String, value: Value)]

    public init() { entries = [] }

    public init(_ dict: [String: Value]) {
        entries = dict.map { (key: $0.key, value: $0.value) }
        entries.sort { compareUTF8($0.key, $1.key) < 0 }
    }

    /// Entries must already be sorted by UTF-8 key with no duplicates.
    public init(sortedEntries: [(key: String, value: Value)]) { entries = sortedEntries }

    /// `entries` in any order, sorted here; nil when two keys have the same UTF-8 bytes. (Keys
    /// Swift finds equal but whose bytes differ, "\u{E9}" and "e\u{301}", are two fields, which
    /// a `[String: Value]` would merge.)
    public init?(uniqueEntries: [(key: String, value: Value)]) {
        entries = uniqueEntries.sorted { compareUTF8($0.key, $1.key) < 0 }
        if zip(entries, entries.dropFirst()).contains(where: { equalUTF8($0.key, $1.key) }) { return nil }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    @inlinable
    func index(of key: String) -> (found: Bool, index: Int) {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            let c = compareUTF8(entries[mid].key, key)
            if c == 0 { return (true, mid) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (false, lo)
    }

    public subscript(key: String) -> Value? {
        get {
            let (found, i) = index(of: key)
            return found ? entries[i].value : nil
        }
        set {
            let (found, i) = index(of: key)
            if let v = newValue {
                if found { entries[i].value = v } else { entries.insert((key: key, value: v), at: i) }
            } else if found {
                entries.remove(at: i)
            }
        }
    }

    /// The value at a nested field path, or nil when any segment is missing or not a map.
    public func value(at path: FieldPath) -> Value? {
        var current = self
        let segs = path.segments
        for (n, seg) in segs.enumerated() {
            guard let v = current[seg] else { return nil }
            if n == segs.count - 1 { return v }
            guard case .map(let m) = v else { return nil }
            current = m
        }
        return nil
    }

    /// Sets (or, with nil, deletes) the value at a nested path, creating intermediate maps.
    public mutating func setValue(_ value: Value?, at path: FieldPath) {
        setValue(value, segments: path.segments[...])
    }

    private mutating func setValue(_ value: Value?, segments: ArraySlice<String>) {
        let head = segments.first!
        if segments.count == 1 { self[head] = value; return }
        var child: MapValue
        if case .map(let m)? = self[head] { child = m } else {
            if value == nil { return }
            child = MapValue()
        }
        child.setValue(value, segments: segments.dropFirst())
        self[head] = .map(child)
    }

    /// A vector value (Firestore's `Vector`): a map whose `__type__` is the string `"__vector__"`,
    /// its elements in the array under `value`.
    public var isVector: Bool {
        if case .string(let t)? = self["__type__"] { return t == "__vector__" }
        return false
    }

    /// The elements of a vector (empty when `value` is missing or not an array).
    public var vectorElements: [Value] {
        if case .array(let a)? = self["value"] { return a }
        return []
    }

    public static func == (a: MapValue, b: MapValue) -> Bool {
        guard a.entries.count == b.entries.count else { return false }
        for i in 0..<a.entries.count {
            if compareUTF8(a.entries[i].key, b.entries[i].key) != 0 || a.entries[i].value != b.entries[i].value { return false }
        }
        return true
    }
}

/// Compares two strings by their UTF-8 bytes (Firestore's string order), returning -1, 0 or 1.
@inlinable
/// Byte-wise equality of two strings' UTF-8 (not canonical equivalence), about twice as fast as
/// `compareUTF8(a, b) == 0` for the short ids and collection names keys are made of.
@inline(__always)
public func equalUTF8(_ a: String, _ b: String) -> Bool {
    let n = a.utf8.count
    if n != b.utf8.count { return false }
    if let r = a.utf8.withContiguousStorageIfAvailable({ pa in
        b.utf8.withContiguousStorageIfAvailable { pb in n == 0 || memcmp(pa.baseAddress!, pb.baseAddress!, n) == 0 }
    }), let eq = r { return eq }
    return compareUTF8(a, b) == 0
}

public func compareUTF8(_ a: String, _ b: String) -> Int {
    // Byte-wise, not Swift's canonical-equivalence `==`: "é" and "e\u{301}" are different keys.
    // memcmp over the strings' own UTF-8 storage when they have it (native strings do).
    if let r = a.utf8.withContiguousStorageIfAvailable({ pa in
        b.utf8.withContiguousStorageIfAvailable { pb in compareUTF8(pa, pb) }
    }), let v = r { return v }
    var a = a, b = b
    return a.withUTF8 { pa in b.withUTF8 { pb in compareUTF8(pa, pb) } }
}

/// The byte-wise order of two UTF-8 buffers (then the shorter first).
@inline(__always)
public func compareUTF8(_ pa: UnsafeBufferPointer<UInt8>, _ pb: UnsafeBufferPointer<UInt8>) -> Int {
    let n = Swift.min(pa.count, pb.count)
    let c = n == 0 ? 0 : memcmp(pa.baseAddress!, pb.baseAddress!, n)
    if c != 0 { return c < 0 ? -1 : 1 }
    return pa.count < pb.count ? -1 : (pa.count > pb.count ? 1 : 0)
}
