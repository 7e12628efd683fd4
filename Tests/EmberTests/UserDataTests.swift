import XCTest
import Foundation
import Ember

/// UserData: every Swift value a document may hold comes back from setData/getDocument as it
/// went in (Int stays Int, Double stays Double, Date becomes Timestamp), locally and from the
/// backend; unsupported values are refused with invalidArgument.
final class UserDataTests: XCTestCase {
    var db: Firestore!

    override func setUpWithError() throws { db = try openDB() }
    override func tearDown() { db.terminate(); db = nil }

    /// Writes `value` as field "v" and reads it back from the backend, from the cache, and as the
    /// local pending write (offline), asserting each equals `expected`.
    func assertRoundTrip(_ value: Any, _ expected: Any? = nil, _ what: String = "", file: StaticString = #filePath, line: UInt = #line) {
        let want = expected ?? value
        let ref = db.collection("values").document()
        set(ref, ["v": value], file: file, line: line)
        XCTAssertSame(get(ref, source: .server, file: file, line: line)?.get("v"), want, "server \(what)", file: file, line: line)
        XCTAssertSame(get(ref, source: .cache, file: file, line: line)?.data()?["v"], want, "cache \(what)", file: file, line: line)
        // In a map and in an array too.
        set(ref, ["m": ["v": value], "a": [value, value]], file: file, line: line)
        XCTAssertSame(get(ref, file: file, line: line)?.get("m.v"), want, "in a map \(what)", file: file, line: line)
        XCTAssertSame(get(ref, file: file, line: line)?.get("a"), [want, want], "in an array \(what)", file: file, line: line)
        // A pending local write reads the same.
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) }, file: file, line: line)
        ref.setData(["local": value])
        XCTAssertSame(get(ref, source: .cache, file: file, line: line)?.get("local"), want, "local \(what)", file: file, line: line)
        XCTAssertNil(waitError { db.enableNetwork(completion: $0) }, file: file, line: line)
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) }, file: file, line: line)
    }

    func testIntegersStayIntegers() {
        assertRoundTrip(0)
        assertRoundTrip(42)
        assertRoundTrip(-7)
        assertRoundTrip(Int.max)
        assertRoundTrip(Int.min)
        assertRoundTrip(Int64(5), 5)
        assertRoundTrip(Int32(-5), -5)
        assertRoundTrip(Int8(3), 3)
        assertRoundTrip(UInt8(200), 200)
        assertRoundTrip(UInt32.max, Int(UInt32.max))
        assertRoundTrip(UInt64(Int64.max), Int.max)
        assertRoundTrip(NSNumber(value: 12), 12)
        let ref = db.document("values/int")
        set(ref, ["i": 1])
        XCTAssertTrue(get(ref)?.get("i") is Int)
        XCTAssertFalse(get(ref)?.get("i") is Double)
    }

    func testDoublesStayDoubles() {
        assertRoundTrip(1.0)
        assertRoundTrip(-2.5)
        assertRoundTrip(0.1 + 0.2)
        assertRoundTrip(Double.greatestFiniteMagnitude)
        assertRoundTrip(Double.leastNonzeroMagnitude)
        assertRoundTrip(Double.infinity)
        assertRoundTrip(-Double.infinity)
        assertRoundTrip(Double.nan)
        assertRoundTrip(-0.0)
        assertRoundTrip(0.0)
        assertRoundTrip(Float(1.5), 1.5)
        assertRoundTrip(NSNumber(value: 2.25), 2.25)
        let ref = db.document("values/neg")
        set(ref, ["z": -0.0, "n": Double.nan])
        let z = get(ref)?.get("z") as? Double
        XCTAssertEqual(z?.sign, .minus, "-0.0 keeps its sign")
        XCTAssertEqual((get(ref)?.get("n") as? Double)?.isNaN, true)
    }

    func testBooleansStringsNullBytes() {
        assertRoundTrip(true)
        assertRoundTrip(false)
        assertRoundTrip(NSNumber(value: true), true)
        assertRoundTrip("")
        assertRoundTrip("San Francisco")
        assertRoundTrip("unicode: é e\u{301} 東京 🔥")
        assertRoundTrip(NSNull())
        assertRoundTrip(Data())
        assertRoundTrip(Data([0, 1, 2, 255, 0]))
        let ref = db.document("values/b")
        set(ref, ["t": true, "one": 1])
        XCTAssertTrue(get(ref)?.get("t") is Bool)
        XCTAssertNil(get(ref)?.get("one") as? Bool, "an Int is not read back as a Bool")
    }

    func testOptionalValues() {
        let some: Int? = 5
        let none: String? = nil
        assertRoundTrip(some as Any, 5)
        assertRoundTrip(none as Any, NSNull())
    }

    func testTimestampsKeepMicroseconds() {
        assertRoundTrip(Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_000))
        assertRoundTrip(Timestamp(seconds: 0, nanoseconds: 1_000))
        assertRoundTrip(Timestamp(seconds: -1, nanoseconds: 999_999_000))
        assertRoundTrip(Timestamp(seconds: -62_135_596_800, nanoseconds: 0))
        assertRoundTrip(Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_000))
        // Nanoseconds below a microsecond are dropped (Ember keeps µs, like the Firestore backend).
        assertRoundTrip(Timestamp(seconds: 10, nanoseconds: 123_456_789), Timestamp(seconds: 10, nanoseconds: 123_456_000))
        let t = Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_000)
        XCTAssertEqual(t.seconds, 1_700_000_000)
        XCTAssertEqual(t.nanoseconds, 123_456_000)
        XCTAssertEqual(t, Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_000))
        XCTAssertNotEqual(t, Timestamp(seconds: 1_700_000_000, nanoseconds: 123_457_000))
    }

    func testDatesComeBackAsTimestamps() {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let ref = db.document("values/date")
        set(ref, ["d": date, "old": Date(timeIntervalSince1970: -86_400.5)])
        guard let ts = get(ref)?.get("d") as? Timestamp else { return XCTFail("a Date reads back as a Timestamp") }
        XCTAssertEqual(ts, Timestamp(seconds: 1_700_000_000, nanoseconds: 250_000_000))
        XCTAssertEqual(ts.dateValue(), date)
        XCTAssertEqual(get(ref)?.get("old") as? Timestamp, Timestamp(seconds: -86_401, nanoseconds: 500_000_000))
        // A Date with microseconds keeps them (to the Date's own precision).
        let micro = Date(timeIntervalSince1970: 1_234_567.654321)
        set(ref, ["d": micro])
        guard let mts = get(ref)?.get("d") as? Timestamp else { return XCTFail() }
        XCTAssertEqual(mts.seconds, 1_234_567)
        XCTAssertEqual(Double(mts.nanoseconds), 654_321_000, accuracy: 1_000)
        XCTAssertEqual(mts.dateValue().timeIntervalSince1970, micro.timeIntervalSince1970, accuracy: 1e-6)
    }

    func testGeoPointsAndReferences() {
        assertRoundTrip(GeoPoint(latitude: 37.7749, longitude: -122.4194))
        assertRoundTrip(GeoPoint(latitude: -90, longitude: 180))
        assertRoundTrip(db.document("cities/SF"))
        assertRoundTrip(db.collection("cities").document("SF").collection("landmarks").document("gg"))
        let ref = db.document("values/r")
        set(ref, ["r": db.document("cities/SF")])
        guard let back = get(ref)?.get("r") as? DocumentReference else { return XCTFail("a reference reads back as a DocumentReference") }
        XCTAssertEqual(back.path, "cities/SF")
        XCTAssertTrue(back.firestore === db)
        // The reference is usable.
        set(back, ["name": "San Francisco"])
        XCTAssertEqual(get(db.document("cities/SF"))?.get("name") as? String, "San Francisco")
    }

    func testNestedArraysOfMapsAndMapsOfArrays() {
        let value: [String: Any] = [
            "list": [["name": "a", "tags": ["x", "y"], "n": 1], ["name": "b", "inner": ["deep": [1.5, NSNull(), true]]]],
            "empty": [String: Any](),
            "emptyList": [Any](),
            "mixed": [1, 2.0, "three", false, NSNull(), Data([9]), Timestamp(seconds: 1, nanoseconds: 2_000),
                      GeoPoint(latitude: 1, longitude: 2), ["k": "v"]],
        ]
        assertRoundTrip(value)
        let ref = db.document("values/whole")
        set(ref, value)
        XCTAssertSame(get(ref)?.data(), value)
        XCTAssertEqual(get(ref)?.get("list") is [Any], true)
        XCTAssertSame(get(ref)?.get(FieldPath(["mixed"])), value["mixed"])
    }

    func testFieldNamesWithSpecialCharacters() {
        let ref = db.document("values/names")
        let data: [String: Any] = ["a.b": 1, "with space": 2, "ünï": 3, "`tick`": 4, "__name__x": 5, "m": ["x.y": 6]]
        set(ref, data)
        XCTAssertSame(get(ref)?.data(), data)
        XCTAssertEqual(get(ref)?.get(FieldPath(["a.b"])) as? Int, 1)
        XCTAssertEqual(get(ref)?.get(FieldPath(["m", "x.y"])) as? Int, 6)
        XCTAssertNil(get(ref)?.get("a.b"), "a dotted string is a path: a -> b")
    }

    func testUnsupportedValuesAreInvalidArgument() {
        struct Point { let x = 1 }
        enum E { case a }
        class K {}
        let ref = db.document("values/bad")
        for (what, v) in [("struct", Point() as Any), ("enum", E.a), ("class", K()), ("Set", Set(["a"])), ("closure", { () in } as Any),
                          ("tuple", (1, 2) as Any), ("Character", Character("c")), ("UInt64 overflow", UInt64(Int64.max) + 1),
                          ("UInt overflow", UInt.max), ("NaN latitude GeoPoint", GeoPoint(latitude: .nan, longitude: 0)),
                          ("longitude out of range", GeoPoint(latitude: 0, longitude: -180.5)), ("FieldValue in query-free array", [FieldValue.increment(Int64(1))])] {
            XCTAssertEqual(code(waitError { ref.setData(["v": v], completion: $0) }), .invalidArgument, what)
            XCTAssertEqual(code(waitError { ref.setData(["m": ["v": v]], merge: true, completion: $0) }), .invalidArgument, what)
        }
        XCTAssertEqual(get(ref)?.exists, false)
    }
}
