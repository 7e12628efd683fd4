/// Responsible for: deciding a query's simple field filters (`==`, `<`, `<=`, `>`, `>=` on a
/// top-level field against an integer, an ASCII string or a boolean) from a document's encoded
/// fields, without building a `Value`, allocating or retaining anything: what a collection scan
/// runs on every row (SQLite's `ember_admits`), where building and comparing `Value`s cost a
/// quarter of the query's time in reference counting alone.
///
/// It decides each filter exactly as `ValueMessagePack.field` followed by
/// `FieldFilter.matches(fieldValue:)`, in the filters' order, and answers nil (undecided: run
/// those) wherever that pair would look further: a double against an integer, a container, an
/// extension value or a non-ASCII string in the field (decoded and validated in full there), an
/// unsigned integer past Int64, keys out of order, malformed bytes.
///
///     let m = RawFieldMatcher([FieldFilter(field: FieldPath(unchecked: ["group"]), op: .equal, value: .int(42))])
///     m?.decide(bytes)   // true, false, or nil when a value needs the full check
///
/// A value type over memory it allocates: `deallocate()` once, by its owner.
public struct RawFieldMatcher {
    private enum Kind: UInt8 { case int, string, bool }

    private struct Check {
        var key: UnsafeBufferPointer<UInt8>
        var op: FilterOperator
        var kind: Kind
        var int: Int64
        var string: UnsafeBufferPointer<UInt8>
    }

    private let checks: UnsafeMutableBufferPointer<Check>
    private let bytes: UnsafeMutableBufferPointer<UInt8>

    /// Nil unless every filter is one it decides (a top-level field other than the document id;
    /// `==`, `<`, `<=`, `>`, `>=`; an integer, ASCII string or boolean operand).
    public init?(_ filters: [FieldFilter]) {
        guard !filters.isEmpty else { return nil }
        var total = 0
        for f in filters {
            guard f.field.segments.count == 1, !f.field.isDocumentId else { return nil }
            switch f.op {
            case .equal, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: break
            default: return nil
            }
            switch f.value {
            case .int, .bool: break
            case .string(let s): guard s.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }; total += s.utf8.count
            default: return nil
            }
            total += f.field.segments[0].utf8.count
        }
        bytes = .allocate(capacity: max(total, 1))
        checks = .allocate(capacity: filters.count)
        var at = 0
        func store(_ s: String) -> UnsafeBufferPointer<UInt8> {
            let start = at
            for b in s.utf8 { bytes[at] = b; at += 1 }
            return UnsafeBufferPointer(start: bytes.baseAddress! + start, count: at - start)
        }
        for (i, f) in filters.enumerated() {
            let key = store(f.field.segments[0])
            var c = Check(key: key, op: f.op, kind: .int, int: 0, string: UnsafeBufferPointer(start: nil, count: 0))
            switch f.value {
            case .int(let v): c.int = v
            case .bool(let v): c.kind = .bool; c.int = v ? 1 : 0
            case .string(let s): c.kind = .string; c.string = store(s)
            default: break
            }
            (checks.baseAddress! + i).initialize(to: c)
        }
    }

    /// Frees the matcher's memory; it must not be used afterwards.
    public func deallocate() {
        checks.deallocate()
        bytes.deallocate()
    }

    /// Whether a document with these encoded fields passes every filter; nil when a filter meets
    /// a value (or bytes) it leaves to the full check.
    public func decide(_ fields: UnsafeBufferPointer<UInt8>) -> Bool? {
        for i in 0..<checks.count {
            switch decide(checks[i], fields) {
            case .some(true): continue
            case .some(false): return false
            case .none: return nil
            }
        }
        return true
    }

    /// One filter, walking the map from its start as `ValueMessagePack.field` does.
    @inline(__always)
    private func decide(_ c: Check, _ fields: UnsafeBufferPointer<UInt8>) -> Bool? {
        var r = MPReader(buf: fields)
        guard let n = try? r.mapHeader() else { return nil }
        var previous = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        for k in 0..<n {
            guard let key = try? r.keyBytes() else { return nil }
            if k > 0 && RawFieldMatcher.compare(previous, key) >= 0 { return nil }
            previous = key
            if RawFieldMatcher.compare(key, c.key) == 0 { return value(&r, c) }
            guard (try? r.skip(depth: 1)) != nil else { return nil }
        }
        return false   // no such field: no filter of these matches a missing field
    }

    /// A stored value as the matcher sees it.
    private enum Stored {
        case int(Int64), bool(Int64), ascii(UnsafeBufferPointer<UInt8>), double
        /// A null or bytes: decodes, and matches no operand these filters take.
        case other
    }

    /// The value at the reader, read with every length checked; nil for what the full decode
    /// must see (containers and extension values, which it validates deeply; non-ASCII strings,
    /// which it validates as UTF-8; an unsigned integer past Int64; malformed bytes).
    @inline(__always)
    private static func stored(_ r: inout MPReader) -> Stored? {
        guard let b = try? r.byte() else { return nil }
        switch b {
        case 0x00...0x7F, 0xCC...0xD3, 0xE0...0xFF:
            guard let v = try? r.integer(after: b) else { return nil }
            return .int(v)
        case 0xC2, 0xC3: return .bool(b == 0xC3 ? 1 : 0)
        case 0xC0: return .other
        case 0xCA: return (try? r.take(4)) == nil ? nil : .double
        case 0xCB: return (try? r.take(8)) == nil ? nil : .double
        case 0xC4, 0xC5, 0xC6:
            guard let n = try? r.uint(1 << Int(b - 0xC4)), (try? r.take(Int(n))) != nil else { return nil }
            return .other
        case 0xA0...0xBF, 0xD9...0xDB:
            guard let s = try? r.stringBytes(after: b) else { return nil }
            for x in s where x >= 0x80 { return nil }
            return .ascii(s)
        default: return nil
        }
    }

    /// The filter on the value at the reader.
    @inline(__always)
    private func value(_ r: inout MPReader, _ c: Check) -> Bool? {
        guard let v = RawFieldMatcher.stored(&r) else { return nil }
        switch (c.kind, v) {
        case (.int, .int(let x)), (.bool, .bool(let x)):
            return RawFieldMatcher.holds(c.op, x < c.int ? -1 : (x > c.int ? 1 : 0))
        case (.int, .double): return nil   // numbers compare across int and double
        case (.string, .ascii(let s)): return RawFieldMatcher.holds(c.op, RawFieldMatcher.compare(s, c.string))
        default: return false              // another type: these filters match none
        }
    }

    @inline(__always)
    private static func holds(_ op: FilterOperator, _ c: Int) -> Bool {
        switch op {
        case .equal: return c == 0
        case .lessThan: return c < 0
        case .lessThanOrEqual: return c <= 0
        case .greaterThan: return c > 0
        case .greaterThanOrEqual: return c >= 0
        default: return false
        }
    }

    /// Byte order, then the shorter first, as `compareUTF8(_:_:)` on buffers but in an inline
    /// loop: for the few bytes of a key or a short string, that function's `memcmp` call cost
    /// more than the comparison (on the 20,000-row scan measured, its calls alone added 1.3M
    /// instructions a query).
    @inline(__always)
    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(a.count, b.count)
        var k = 0
        while k < n {
            let x = a[k], y = b[k]
            if x != y { return x < y ? -1 : 1 }
            k += 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}
