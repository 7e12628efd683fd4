// Tests of RawFieldMatcher: its decisions equal ValueMessagePack.field + FieldFilter.matches
// (what RawPrefilter runs) on random documents and filters, and it leaves to them what it must.
import XCTest
@testable import EmberModel

final class RawFieldMatcherTests: XCTestCase {

    /// What RawPrefilter decides for the same filters (a field that does not decode passes).
    private func reference(_ filters: [FieldFilter], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for f in filters {
            let v: Value?
            do { v = try ValueMessagePack.field(f.field.segments.map { Array($0.utf8) }, in: bytes) } catch { return true }
            if !f.matches(fieldValue: v) { return false }
        }
        return true
    }

    private func decide(_ filters: [FieldFilter], _ bytes: [UInt8]) -> (Bool?, Bool) {
        guard let m = RawFieldMatcher(filters) else { XCTFail("no matcher for \(filters)"); return (nil, false) }
        defer { m.deallocate() }
        return bytes.withUnsafeBufferPointer { (m.decide($0), reference(filters, $0)) }
    }

    private func f(_ field: String, _ op: FilterOperator, _ v: Value) -> FieldFilter {
        FieldFilter(field: FieldPath(unchecked: [field]), op: op, value: v)
    }

    func testRandomDocumentsAndFiltersDecideAsTheFullCheck() {
        var rng = SystemRandomNumberGenerator()
        let keys = ["a", "age", "b", "group", "name", "é", "z"]
        let ints: [Int64] = [0, 1, -1, 42, 127, 128, -32, -33, 255, 256, 65_535, 65_536, Int64(Int32.max), Int64(Int32.max) + 1,
                             Int64(Int32.min), Int64(Int32.min) - 1, .max, .min]
        let strings = ["", "a", "CA", "NY", "ab", "abc", "ca", "\u{E9}", String(repeating: "x", count: 40)]
        func scalar() -> Value {
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2, 3: return .int(ints.randomElement(using: &rng)!)
            case 4: return .double([0, -0.0, 1.0, 42.0, 1.5, .nan, .infinity, 9.3e18].randomElement(using: &rng)!)
            case 5, 6: return .string(strings.randomElement(using: &rng)!)
            case 7: return .bytes([1, 2, 3])
            case 8: return .timestamp(Timestamp(micros: 5))
            case 9: return .array([.int(1)])
            case 10: return .map(MapValue(["k": .int(42)]))
            default: return .geoPoint(GeoPoint(latitude: 1, longitude: 2))
            }
        }
        func operand() -> Value {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return .int(ints.randomElement(using: &rng)!)
            case 1: return .bool(Bool.random(using: &rng))
            default: return .string(strings.filter { $0.utf8.allSatisfy { $0 < 0x80 } }.randomElement(using: &rng)!)
            }
        }
        let ops: [FilterOperator] = [.equal, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        var decided = 0, passed = 0
        for _ in 0..<20_000 {
            var fields: [String: Value] = [:]
            for k in keys where Int.random(in: 0..<3, using: &rng) > 0 { fields[k] = scalar() }
            let bytes = ValueMessagePack.encode(.map(MapValue(fields)))
            let filters = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                f(keys.filter { $0 != "é" }.randomElement(using: &rng)!, ops.randomElement(using: &rng)!, operand())
            }
            let (fast, full) = decide(filters, bytes)
            if let fast {
                decided += 1
                if fast { passed += 1 }
                XCTAssertEqual(fast, full, "\(filters) on \(fields)")
            }
        }
        // Most documents are decided from the bytes, both ways.
        XCTAssertGreaterThan(decided, 12_000)
        XCTAssertGreaterThan(passed, 100)
    }

    func testTheCommonCasesAreDecided() {
        let doc = ValueMessagePack.encode(map(["age": .int(30), "group": .int(42), "name": str("user1"), "ok": .bool(true), "state": str("CA")]))
        XCTAssertEqual(decide([f("group", .equal, .int(42))], doc).0, true)
        XCTAssertEqual(decide([f("group", .equal, .int(41))], doc).0, false)
        XCTAssertEqual(decide([f("state", .equal, str("CA"))], doc).0, true)
        XCTAssertEqual(decide([f("state", .greaterThan, str("CA"))], doc).0, false)
        XCTAssertEqual(decide([f("age", .greaterThanOrEqual, .int(30)), f("age", .lessThan, .int(40))], doc).0, true)
        XCTAssertEqual(decide([f("ok", .equal, .bool(true))], doc).0, true)
        XCTAssertEqual(decide([f("missing", .equal, .int(1))], doc).0, false)
        XCTAssertEqual(decide([f("name", .equal, .int(1))], doc).0, false)      // another type
        XCTAssertEqual(decide([f("group", .equal, str("42"))], doc).0, false)
    }

    func testWhatTheFullCheckMustSeeIsLeftToIt() {
        // An integer operand against a double (1 == 1.0), containers and extension values (decoded
        // and validated in full), a non-ASCII string, an unsigned integer past Int64.
        for v: Value in [.double(42), .array([.int(42)]), map(["x": .int(1)]), ts(1), str("\u{E9}")] {
            XCTAssertNil(decide([f("g", .equal, .int(42))], ValueMessagePack.encode(map(["g": v]))).0, "\(v)")
        }
        XCTAssertNil(decide([f("g", .greaterThan, str("a"))], ValueMessagePack.encode(map(["g": str("\u{E9}")]))).0)
        // {"g": uint64 2^63} and keys out of order, written by hand.
        let big: [UInt8] = [0x81, 0xA1, 0x67, 0xCF, 0x80, 0, 0, 0, 0, 0, 0, 0]
        XCTAssertNil(decide([f("g", .equal, .int(1))], big).0)
        let unordered: [UInt8] = [0x82, 0xA1, 0x7A, 0x01, 0xA1, 0x67, 0x02]
        XCTAssertNil(decide([f("g", .equal, .int(2))], unordered).0)
        // Truncated or not a map.
        XCTAssertNil(decide([f("g", .equal, .int(2))], [0x81, 0xA1, 0x67, 0xCD, 0x01]).0)
        XCTAssertNil(decide([f("g", .equal, .int(2))], [0x91, 0x01]).0)
        XCTAssertNil(decide([f("g", .equal, .int(2))], []).0)
    }

    func testFiltersItDoesNotDecideGetNoMatcher() {
        let unsupported: [FieldFilter] = [
            f("g", .notEqual, .int(1)), f("g", .in, .array([.int(1)])), f("g", .arrayContains, .int(1)),
            f("g", .equal, .double(1)), f("g", .equal, .null), f("g", .equal, str("\u{E9}")),
            FieldFilter(field: FieldPath(unchecked: ["a", "b"]), op: .equal, value: .int(1)),
            FieldFilter(field: FieldPath(unchecked: ["__name__"]), op: .equal, value: ref("c/d")),
        ]
        for u in unsupported {
            XCTAssertNil(RawFieldMatcher([f("x", .equal, .int(1)), u]), "\(u)")
        }
        XCTAssertNil(RawFieldMatcher([]))
    }
}
