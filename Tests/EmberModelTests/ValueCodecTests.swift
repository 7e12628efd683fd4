import XCTest
@testable import EmberModel

/// Round trips and error cases of ValueJSON, ValueMessagePack, Base64 and RFC3339.
final class ValueCodecTests: XCTestCase {
    let samples: [Value] = [
        .null, .bool(true), .bool(false), .int(0), .int(1), .int(-1), .int(127), .int(128), .int(-33),
        .int(Int64.max), .int(Int64.min), .double(1.0), .double(-0.0), .double(.nan), .double(.infinity),
        .double(-.infinity), .double(1e300), .double(5e-324), .double(0.1),
        .timestamp(Timestamp(micros: 1_714_564_800_000_001)), .timestamp(Timestamp(micros: -1)),
        .timestamp(Timestamp(micros: Timestamp.minMicros)), .timestamp(Timestamp(micros: Timestamp.maxMicros)),
        .string(""), .string("héllo \"q\" \\ \n\t\u{1}"), .string("😀"), .string(String(repeating: "x", count: 70_000)),
        .bytes([]), .bytes([0, 1, 255]), .bytes(Array(repeating: 7, count: 300)),
        .reference(try! DocumentKey(parsing: "cities/SF")),
        .geoPoint(GeoPoint(latitude: 37.77, longitude: -122.42)),
        .array([]), .array([.int(1), .double(1.0), .string("a")]),
        .map(MapValue()), .map(MapValue(["a": .int(1), "$x": .string("y")])), .map(MapValue(["$x": .int(1)])),
        .map(MapValue(["$map": .map(MapValue(["$ref": .int(1)]))])),
        .map(MapValue(["nested": .map(MapValue(["deep": .array([.map(MapValue(["k": .null]))])]))])),
    ]

    /// Strict equality that also treats NaN == NaN (Value == already does).
    func assertSame(_ a: Value, _ b: Value, _ msg: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(a == b, "\(msg): \(a) != \(b)", file: file, line: line)
    }

    func testJSONRoundTripIsExact() throws {
        for v in samples {
            let text = ValueJSON.render(v)
            assertSame(try ValueJSON.parse(text), v, text.prefix(80).description)
        }
    }

    func testJSONKeepsIntAndDoubleApart() throws {
        XCTAssertTrue(try ValueJSON.parse("1") == .int(1))
        XCTAssertTrue(try ValueJSON.parse("1.0") == .double(1.0))
        XCTAssertTrue(try ValueJSON.parse("1e2") == .double(100))
        XCTAssertEqual(ValueJSON.render(.double(1.0)), "1.0")
        XCTAssertEqual(ValueJSON.render(.int(1)), "1")
    }

    func testJSONErrorsAreInvalidArgument() {
        let bad = ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"\u{1}\"", "nul", "{\"a\":1 \"b\":2}",
                   "99999999999999999999", "{\"$double\":\"nan\"}", "{\"$timestamp\":\"2024-13-01T00:00:00Z\"}",
                   "{\"$bytes\":\"abc\"}", "{\"$ref\":\"cities\"}", "{\"$geo\":[91,0]}", "{\"$nope\":1}", "[1] x",
                   "\"\\ud800\"", "{\"a\":1,\"a\":2}", String(repeating: "[", count: 100) + String(repeating: "]", count: 100)]
        for text in bad {
            XCTAssertThrowsError(try ValueJSON.parse(text), text) { e in
                XCTAssertEqual((e as? EmberError)?.code, .invalidArgument, text)
            }
        }
    }

    func testMessagePackRoundTripIsExact() throws {
        for v in samples {
            let bytes = ValueMessagePack.encode(v)
            assertSame(try ValueMessagePack.decode(bytes), v, "\(v)".prefix(80).description)
        }
    }

    /// The encoder writes the bytes MessagePack prescribes (the stored format): headers, big-endian
    /// numbers, keys in order.
    func testMessagePackEncodingIsTheStoredFormat() {
        XCTAssertEqual(ValueMessagePack.encode(.int(300)), [0xD3, 0, 0, 0, 0, 0, 0, 1, 0x2C])
        XCTAssertEqual(ValueMessagePack.encode(.double(1.0)), [0xCB, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(ValueMessagePack.encode(.string(String(repeating: "a", count: 40))), [0xD9, 40] + Array(repeating: 0x61, count: 40))
        XCTAssertEqual(ValueMessagePack.encode(.bytes(Array(repeating: 1, count: 300))), [0xC5, 1, 0x2C] + Array(repeating: 1, count: 300))
        XCTAssertEqual(ValueMessagePack.encode(.map(MapValue(["b": .int(1), "a": .null]))), [0x82, 0xA1, 0x61, 0xC0, 0xA1, 0x62, 0x01])
        XCTAssertEqual(ValueMessagePack.encode(.timestamp(Timestamp(seconds: 1, nanoseconds: 2000))), [0xC7, 12, 0xFF, 0, 0, 0x07, 0xD0, 0, 0, 0, 0, 0, 0, 0, 1])
    }

    /// `field` finds a value inside an encoded document without decoding the rest, equal to what
    /// the full decode holds there, for every kind of value before and after it.
    func testMessagePackFieldLookupAgreesWithTheFullDecode() throws {
        var entries: [String: Value] = [:]
        for (i, v) in samples.enumerated() { entries["f\(i)"] = v }
        entries["m"] = .map(MapValue(["x": .int(1), "y": .map(MapValue(["z": .string("deep")]))]))
        let doc = MapValue(entries)
        let bytes = ValueMessagePack.encode(.map(doc))
        func field(_ path: [String]) throws -> Value? {
            try bytes.withUnsafeBufferPointer { try ValueMessagePack.field(path.map { Array($0.utf8) }, in: $0) }
        }
        for (k, v) in doc.entries { assertSame(try XCTUnwrap(field([k])), v, k) }
        XCTAssertTrue(try field(["m", "y", "z"]) == .string("deep"))
        XCTAssertTrue(try field(["m", "x"]) == .int(1))
        XCTAssertNil(try field(["m", "x", "no"]), "an intermediate that is not a map")
        XCTAssertNil(try field(["nope"]))
        XCTAssertNil(try field(["m", "nope"]))
        // Malformed or out-of-order input throws (callers then decode the whole document).
        let unordered: [UInt8] = [0x82, 0xA1, 0x62, 0x01, 0xA1, 0x61, 0x02]
        XCTAssertThrowsError(try unordered.withUnsafeBufferPointer { try ValueMessagePack.field([[0x61]], in: $0) })
        let truncated = Array(bytes.prefix(bytes.count / 2))
        XCTAssertThrowsError(try truncated.withUnsafeBufferPointer { try ValueMessagePack.field([Array("zz".utf8)], in: $0) })
        XCTAssertThrowsError(try [UInt8]([0x91, 0x01]).withUnsafeBufferPointer { try ValueMessagePack.field([[0x61]], in: $0) }, "not a map")
    }

    func testMessagePackReadsEveryIntFamilyAndFloat32() throws {
        XCTAssertTrue(try ValueMessagePack.decode([0xCC, 200]) == .int(200))
        XCTAssertTrue(try ValueMessagePack.decode([0xCD, 1, 0]) == .int(256))
        XCTAssertTrue(try ValueMessagePack.decode([0xD0, 0xFF]) == .int(-1))
        XCTAssertTrue(try ValueMessagePack.decode([0xCA, 0x3F, 0x80, 0, 0]) == .double(1.0))
        XCTAssertTrue(try ValueMessagePack.decode([0xD6, 0xFF, 0, 0, 0, 10]) == .timestamp(Timestamp(micros: 10_000_000)))
    }

    func testMessagePackErrorsAreInvalidArgument() {
        let bad: [[UInt8]] = [[], [0xC1], [0xA3, 0x61], [0xC4, 5, 1], [0x81, 0x01, 0x02], [0xCF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
                              [0xDD, 0xFF, 0xFF, 0xFF, 0xFF], [0xA1, 0xFF], [0xD4, 9, 0], [0xC0, 0xC0],
                              Array(repeating: 0x91, count: 100) + [0xC0]]
        for b in bad {
            XCTAssertThrowsError(try ValueMessagePack.decode(b), "\(b.prefix(8))") { e in
                XCTAssertEqual((e as? EmberError)?.code, .invalidArgument)
            }
        }
    }

    /// Callers' maps come in any key order: they are sorted once; a repeated key (the same UTF-8
    /// bytes: canonically equivalent keys are two fields) is an error that names the key, and a
    /// bad value after out-of-order keys reports the same error as before.
    func testMessagePackUnsortedMaps() throws {
        func str(_ s: String) -> [UInt8] { [0xA0 | UInt8(s.utf8.count)] + Array(s.utf8) }
        let unsorted = [0x83] + str("b") + [1] + str("c") + [2] + str("a") + [3]
        guard case .map(let m) = try ValueMessagePack.decode(unsorted) else { return XCTFail("not a map") }
        XCTAssertEqual(m.entries.map { $0.key }, ["a", "b", "c"])
        XCTAssertTrue(m["a"]! == .int(3) && m["b"]! == .int(1) && m["c"]! == .int(2))
        var many: [UInt8] = [0xDE, 0, 20]
        for j in (0..<20).reversed() { many += str("k\(j)") + [UInt8(j)] }
        guard case .map(let big) = try ValueMessagePack.decode(many) else { return XCTFail("not a map") }
        XCTAssertEqual(big.entries.map { $0.key }, (0..<20).map { "k\($0)" }.sorted { compareUTF8($0, $1) < 0 })
        let dup = [0x83] + str("b") + [1] + str("a") + [2] + str("b") + [3]
        XCTAssertThrowsError(try ValueMessagePack.decode(dup)) { e in
            XCTAssertEqual((e as? EmberError)?.message, "Invalid MessagePack at byte 10: duplicate key 'b'.")
        }
        // Canonically equivalent keys with different bytes are two fields, in either order (as in
        // Firestore); a key repeated byte for byte among non-ASCII keys is still an error.
        for equivalent in [[0x82] + str("\u{E9}") + [1] + str("e\u{301}") + [2], [0x82] + str("e\u{301}") + [2] + str("\u{E9}") + [1]] {
            guard case .map(let two) = try ValueMessagePack.decode(equivalent) else { return XCTFail("not a map") }
            XCTAssertEqual(two.entries.map { Array($0.key.utf8) }, [Array("e\u{301}".utf8), Array("\u{E9}".utf8)])
            XCTAssertEqual(two.entries.map { $0.value }, [.int(2), .int(1)])
        }
        let repeated = [0x83] + str("\u{E9}") + [1] + str("e\u{301}") + [2] + str("\u{E9}") + [3]
        XCTAssertThrowsError(try ValueMessagePack.decode(repeated)) { e in
            XCTAssertEqual((e as? EmberError)?.message, "Invalid MessagePack at byte 14: duplicate key '\u{E9}'.")
        }
        // JSON the same.
        guard case .map(let j) = try ValueJSON.parse("{\"\u{E9}\": 1, \"e\u{301}\": 2}") else { return XCTFail("not a map") }
        XCTAssertEqual(j.entries.map { Array($0.key.utf8) }, [Array("e\u{301}".utf8), Array("\u{E9}".utf8)])
        XCTAssertThrowsError(try ValueJSON.parse("{\"\u{E9}\": 1, \"e\u{301}\": 2, \"\u{E9}\": 3}")) { e in
            XCTAssertTrue((e as? EmberError)?.message.contains("duplicate key '\u{E9}'") == true, "\(e)")
        }
        // Small maps in random orders (the sorted-in-place path) equal the dictionary's result.
        let pool = ["", "a", "ab", "abc", "b", "B", "a b", "~", "0", "zz", "aa", "a\u{7F}"]
        for _ in 0..<300 {
            let keys = Array(pool.shuffled().prefix(Int.random(in: 0...pool.count)))
            var bytes: [UInt8] = [0x80 | UInt8(keys.count)]
            var dict: [String: Value] = [:]
            for (j, k) in keys.enumerated() {
                bytes += str(k)
                if j % 3 == 2 { bytes += [0x81] + str("n") + [UInt8(j)]; dict[k] = .map(MapValue(["n": .int(Int64(j))])) } else { bytes += [UInt8(j)]; dict[k] = .int(Int64(j)) }
            }
            guard case .map(let m) = try ValueMessagePack.decode(bytes) else { return XCTFail("not a map") }
            XCTAssertEqual(m.entries.map { $0.key }, dict.keys.sorted { compareUTF8($0, $1) < 0 })
            XCTAssertTrue(Value.map(m) == .map(MapValue(dict)), "\(keys)")
        }
        // Each value is decoded once, however the keys come: nested maps whose keys are not ASCII
        // or not sorted, valid or failing at the bottom, cost one pass (not one per level).
        func nested(_ levels: Int, keys: (String, String), bottom: [UInt8]) -> [UInt8] {
            var b = bottom
            for _ in 0..<levels { b = [0x82] + str(keys.0) + (keys.0 == "a" ? b : [0]) + str(keys.1) + (keys.1 == "a" ? b : [0]) }
            return b
        }
        for keys in [("a", "\u{E9}"), ("\u{E9}", "a"), ("b", "a"), ("a", "b")] {
            let good = nested(12, keys: keys, bottom: [1])
            try good.withUnsafeBufferPointer { b in
                var r = MPReader(buf: b)
                XCTAssertNoThrow(try r.value(depth: 0), "\(keys)")
                XCTAssertEqual(r.valuesDecoded, 12 * 2 + 1, "\(keys): each map and each value once (keys are read directly)")
            }
            var linear = true   // else the 70-level case would run for 2^64 decodes: skip it
            for (levels, bottom, message) in [(12, [UInt8(0xC1)], "unused type byte"), (70, [UInt8(1)], "nested more than")] where linear {
                let bad = nested(levels, keys: keys, bottom: bottom)
                try bad.withUnsafeBufferPointer { b in
                    var r = MPReader(buf: b)
                    XCTAssertThrowsError(try r.value(depth: 0)) { e in
                        XCTAssertTrue((e as? EmberError)?.message.contains(message) == true, "\(e)")
                    }
                    linear = r.valuesDecoded <= levels * 2 + 1
                    XCTAssertTrue(linear, "\(keys): the failing decode is repeated per level (\(r.valuesDecoded) decodes)")
                }
            }
        }
        let badLater = [0x82] + str("b") + [1] + str("a") + [0xC1]
        XCTAssertThrowsError(try ValueMessagePack.decode(badLater)) { e in
            XCTAssertEqual((e as? EmberError)?.message, "Invalid MessagePack at byte 7: unused type byte 0xc1.")
        }
    }

    func testBase64AndRFC3339() {
        XCTAssertEqual(Base64.encode(Array("hello".utf8)), "aGVsbG8=")
        XCTAssertEqual(Base64.decode("aGVsbG8="), Array("hello".utf8))
        XCTAssertNil(Base64.decode("aGVsbG8"))
        XCTAssertEqual(RFC3339.format(Timestamp(micros: 0)), "1970-01-01T00:00:00.000000Z")
        XCTAssertEqual(RFC3339.parse("2024-05-01T12:00:00.000001Z")?.micros, 1_714_564_800_000_001)
        XCTAssertEqual(RFC3339.parse("2024-05-01T14:00:00+02:00")?.micros, 1_714_564_800_000_000)
        // More than six fraction digits (all zeros beyond the sixth) parse; this trapped before (fuzz_values).
        XCTAssertEqual(RFC3339.parse("2024-05-01T12:00:00.000001000Z")?.micros, 1_714_564_800_000_001)
        XCTAssertNil(RFC3339.parse("2024-05-01T12:00:00.0000000000000X"))
        XCTAssertEqual(RFC3339.format(RFC3339.parse("0001-01-01T00:00:00Z")!), "0001-01-01T00:00:00.000000Z")
        XCTAssertNil(RFC3339.parse("2024-05-01T12:00:00.0000001Z"))
    }
}
