// Tests for Value.swift: Timestamp, GeoPoint, MapValue and compareUTF8.
import XCTest
@testable import EmberModel

final class ValueTests: XCTestCase {

    // MARK: Timestamp

    func testTimestampKeepsMicrosecondsAndTruncatesNanoseconds() {
        let t = Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_789)
        XCTAssertEqual(t.micros, 1_700_000_000_123_456)
        XCTAssertEqual(t.seconds, 1_700_000_000)
        XCTAssertEqual(t.nanoseconds, 123_456_000)
        // Below a microsecond is dropped: 999 ns is the same timestamp as 0 ns.
        XCTAssertEqual(Timestamp(seconds: 5, nanoseconds: 999), Timestamp(seconds: 5, nanoseconds: 0))
        XCTAssertLessThan(Timestamp(seconds: 5, nanoseconds: 999), Timestamp(seconds: 5, nanoseconds: 1_000))
    }

    func testTimestampBeforeEpochSplitsIntoFlooredSecondsAndPositiveNanos() {
        let t = Timestamp(micros: -1)
        XCTAssertEqual(t.seconds, -1)
        XCTAssertEqual(t.nanoseconds, 999_999_000)
        let whole = Timestamp(micros: -2_000_000)
        XCTAssertEqual(whole.seconds, -2)
        XCTAssertEqual(whole.nanoseconds, 0)
        let half = Timestamp(seconds: -3, nanoseconds: 500_000_000)
        XCTAssertEqual(half.micros, -2_500_000)
        XCTAssertEqual(half.seconds, -3)
        XCTAssertEqual(half.nanoseconds, 500_000_000)
    }

    func testTimestampRangeAndDescription() {
        XCTAssertEqual(Timestamp(micros: Timestamp.minMicros).seconds, -62_135_596_800)
        XCTAssertEqual(Timestamp(micros: Timestamp.maxMicros).seconds, 253_402_300_799)
        XCTAssertEqual(Timestamp(micros: Timestamp.maxMicros).nanoseconds, 999_999_000)
        XCTAssertEqual(Timestamp(micros: 1_500_000).description, "Timestamp(seconds=1, nanoseconds=500000000)")
    }

    func testTimestampOrderIsByMicroseconds() {
        XCTAssertLessThan(Timestamp(micros: 1), Timestamp(micros: 2))
        XCTAssertLessThan(Timestamp(micros: -5), Timestamp(micros: 0))
        XCTAssertFalse(Timestamp(micros: 7) < Timestamp(micros: 7))
    }

    // MARK: GeoPoint

    func testGeoPointStoresLatitudeAndLongitude() {
        let g = GeoPoint(latitude: 37.77, longitude: -122.42)
        XCTAssertEqual(g.latitude, 37.77)
        XCTAssertEqual(g.longitude, -122.42)
        XCTAssertEqual(g.description, "GeoPoint(37.77, -122.42)")
    }

    // MARK: compareUTF8

    func testCompareUTF8UsesBytesNotUTF16() {
        // U+FF61 is one UTF-16 unit (0xFF61) but 3 UTF-8 bytes starting 0xEF; U+1F600 is a surrogate
        // pair (0xD83D...) in UTF-16 but 4 UTF-8 bytes starting 0xF0. UTF-16 says 😀 < ｡, UTF-8 the reverse.
        XCTAssertEqual(compareUTF8("\u{FF61}", "\u{1F600}"), -1)
        XCTAssertEqual(compareUTF8("\u{1F600}", "\u{FF61}"), 1)
        XCTAssertTrue("\u{1F600}".utf16.lexicographicallyPrecedes("\u{FF61}".utf16), "the UTF-16 order really differs")
    }

    func testCompareUTF8DoesNotUseCanonicalEquivalence() {
        let precomposed = "\u{E9}", decomposed = "e\u{301}"
        XCTAssertTrue(precomposed == decomposed, "Swift's == treats them as equal")
        XCTAssertNotEqual(compareUTF8(precomposed, decomposed), 0)
        XCTAssertEqual(compareUTF8(decomposed, precomposed), -1)   // 0x65 < 0xC3
    }

    func testCompareUTF8PrefixAndEquality() {
        XCTAssertEqual(compareUTF8("", ""), 0)
        XCTAssertEqual(compareUTF8("", "a"), -1)
        XCTAssertEqual(compareUTF8("ab", "a"), 1)
        XCTAssertEqual(compareUTF8("abc", "abc"), 0)
        XCTAssertEqual(compareUTF8("B", "a"), -1)
        XCTAssertEqual(compareUTF8("z", "\u{E9}"), -1)
    }

    // MARK: MapValue

    func testMapValueSortsKeysByUTF8Bytes() {
        let m = MapValue(["b": .int(2), "a": .int(1), "\u{1F600}": .int(4), "\u{FF61}": .int(3), "B": .int(0)])
        XCTAssertEqual(m.entries.map { $0.key }, ["B", "a", "b", "\u{FF61}", "\u{1F600}"])
        XCTAssertEqual(m.count, 5)
        XCTAssertFalse(m.isEmpty)
        XCTAssertTrue(MapValue().isEmpty)
    }

    func testMapValueKeysAreByteDistinct() {
        var m = MapValue()
        m["\u{E9}"] = .int(1)
        m["e\u{301}"] = .int(2)
        XCTAssertEqual(m.count, 2)
        XCTAssertEqual(m["\u{E9}"], .int(1))
        XCTAssertEqual(m["e\u{301}"], .int(2))
    }

    func testMapValueSubscriptInsertsReplacesAndDeletes() {
        var m = MapValue()
        m["b"] = .int(2)
        m["a"] = .int(1)
        m["c"] = .int(3)
        XCTAssertEqual(m.entries.map { $0.key }, ["a", "b", "c"])
        m["b"] = .string("two")
        XCTAssertEqual(m["b"], .string("two"))
        m["b"] = nil
        XCTAssertNil(m["b"])
        XCTAssertEqual(m.entries.map { $0.key }, ["a", "c"])
        m["missing"] = nil
        XCTAssertEqual(m.count, 2)
    }

    func testMapValueNestedAccess() {
        let m = MapValue(["address": map(["city": str("SF"), "geo": map(["lat": .double(1)])]), "n": .int(1)])
        XCTAssertEqual(m.value(at: fp("address.city")), str("SF"))
        XCTAssertEqual(m.value(at: fp("address.geo.lat")), .double(1))
        XCTAssertEqual(m.value(at: fp("n")), .int(1))
        XCTAssertNil(m.value(at: fp("address.zip")))
        XCTAssertNil(m.value(at: fp("n.x")), "a scalar has no children")
        XCTAssertNil(m.value(at: fp("nope.x")))
    }

    func testMapValueSetValueCreatesIntermediateMapsAndDeletes() {
        var m = MapValue()
        m.setValue(.int(1), at: fp("a.b.c"))
        XCTAssertEqual(m.value(at: fp("a.b.c")), .int(1))
        XCTAssertEqual(m["a"], map(["b": map(["c": .int(1)])]))

        // Writing below a scalar replaces the scalar with a map.
        m.setValue(.int(5), at: fp("x"))
        m.setValue(.int(6), at: fp("x.y"))
        XCTAssertEqual(m["x"], map(["y": .int(6)]))

        // Deleting a leaf keeps the (now empty) parent map, as Firestore does.
        m.setValue(nil, at: fp("x.y"))
        XCTAssertEqual(m["x"], map([:]))

        // Deleting below a missing parent creates nothing.
        m.setValue(nil, at: fp("q.r"))
        XCTAssertNil(m["q"])
        m.setValue(nil, at: fp("a"))
        XCTAssertNil(m["a"])
    }

    func testMapValueEqualityIsOrderedAndStrict() {
        XCTAssertEqual(MapValue(["a": .int(1), "b": .int(2)]), MapValue(sortedEntries: [(key: "a", value: .int(1)), (key: "b", value: .int(2))]))
        XCTAssertNotEqual(MapValue(["a": .int(1)]), MapValue(["a": .double(1)]))
        XCTAssertNotEqual(MapValue(["a": .int(1)]), MapValue(["a": .int(1), "b": .null]))
        var x = MapValue(), y = MapValue()
        x["\u{E9}"] = .int(1)
        y["e\u{301}"] = .int(1)
        XCTAssertNotEqual(x, y)
    }
}
