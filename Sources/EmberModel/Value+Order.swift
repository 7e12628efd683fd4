/// Responsible for: the total order of Firestore values (docs/semantics.md 1-3; vectors, maps whose
/// `__type__` is `"__vector__"`, rank between arrays and maps, as in Firebase JS) and the two
/// equalities Ember uses: strict equality (`==`, JS `valueEquals`: int 1 is not double 1.0,
/// NaN equals NaN, -0.0 is not 0.0) and order-equality (`compare == 0`: numbers compare numerically).
///
///     Value.compare(.int(1), .double(1.0)) == 0   // true
///     Value.int(1) == Value.double(1.0)           // false
extension Value: Equatable {
    /// Rank of the value's type in Firestore's cross-type order.
    public var typeOrder: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 2
        case .timestamp: return 3
        case .string: return 4
        case .bytes: return 5
        case .reference: return 6
        case .geoPoint: return 7
        case .array: return 8
        case .map(let m): return m.isVector ? 9 : 10
        }
    }

    public var isNaN: Bool { if case .double(let d) = self { return d.isNaN }; return false }
    public var isNull: Bool { if case .null = self { return true }; return false }
    public var isNumber: Bool { typeOrder == 2 }

    /// Returns -1, 0 or 1.
    public static func compare(_ a: Value, _ b: Value) -> Int {
        let ta = a.typeOrder, tb = b.typeOrder
        if ta != tb { return ta < tb ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.int(let x), .int(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.double(let x), .double(let y)): return compareDoubles(x, y)
        case (.int(let x), .double(let y)): return compareMixed(x, y)
        case (.double(let x), .int(let y)): return -compareMixed(y, x)
        case (.timestamp(let x), .timestamp(let y)): return x.micros < y.micros ? -1 : (x.micros > y.micros ? 1 : 0)
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.bytes(let x), .bytes(let y)): return compareBytes(x, y)
        case (.reference(let x), .reference(let y)): return x.path.compare(y.path)
        case (.geoPoint(let x), .geoPoint(let y)):
            let c = compareDoubles(x.latitude, y.latitude)
            return c != 0 ? c : compareDoubles(x.longitude, y.longitude)
        case (.array(let x), .array(let y)):
            for i in 0..<min(x.count, y.count) {
                let c = compare(x[i], y[i])
                if c != 0 { return c }
            }
            return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
        case (.map(let x), .map(let y)):
            if ta == 9 { return compareVectors(x, y) }
            for i in 0..<min(x.count, y.count) {
                let kc = compareUTF8(x.entries[i].key, y.entries[i].key)
                if kc != 0 { return kc }
                let vc = compare(x.entries[i].value, y.entries[i].value)
                if vc != 0 { return vc }
            }
            return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
        default: return 0
        }
    }

    /// Vectors order by their length, then element by element (JS `compareVectors`).
    static func compareVectors(_ x: MapValue, _ y: MapValue) -> Int {
        let a = x.vectorElements, b = y.vectorElements
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for i in 0..<a.count {
            let c = compare(a[i], b[i])
            if c != 0 { return c }
        }
        return 0
    }

    /// NaN first and equal to itself; -0.0 equals 0.0.
    @inlinable
    public static func compareDoubles(_ x: Double, _ y: Double) -> Int {
        if x < y { return -1 }
        if x > y { return 1 }
        if x == y { return 0 }
        if x.isNaN { return y.isNaN ? 0 : -1 }
        return 1
    }

    /// Exact comparison of an int64 with a double (no rounding through Double).
    public static func compareMixed(_ i: Int64, _ d: Double) -> Int {
        if d.isNaN { return 1 }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }   // 2^63: above every Int64
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let t = Int64(d.rounded(.towardZero))
        if i < t { return -1 }
        if i > t { return 1 }
        let frac = d - Double(t)
        return frac > 0 ? -1 : (frac < 0 ? 1 : 0)
    }

    static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        for i in 0..<min(x.count, y.count) where x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
        return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
    }

    /// Strict structural equality (Firebase JS `valueEquals`).
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)):
            if x.isNaN && y.isNaN { return true }
            return x == y && x.sign == y.sign
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.string(let x), .string(let y)): return compareUTF8(x, y) == 0
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.reference(let x), .reference(let y)): return x == y
        case (.geoPoint(let x), .geoPoint(let y)): return compareDoubles(x.latitude, y.latitude) == 0 && compareDoubles(x.longitude, y.longitude) == 0
        case (.array(let x), .array(let y)): return x == y
        case (.map(let x), .map(let y)): return x == y
        default: return false
        }
    }
}
