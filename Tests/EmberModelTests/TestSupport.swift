// Shared builders and assertions for the EmberModel tests (not a test of its own).
import XCTest
@testable import EmberModel

func key(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> DocumentKey {
    do { return try DocumentKey(parsing: path) } catch {
        XCTFail("bad test key '\(path)': \(error)", file: file, line: line)
        return DocumentKey(unchecked: ResourcePath(segments: ["bad", "key"]))
    }
}

func path(_ s: String) -> ResourcePath { try! ResourcePath(parsing: s) }
func fp(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
func ref(_ s: String) -> Value { .reference(key(s)) }
func map(_ d: [String: Value]) -> Value { .map(MapValue(d)) }
func ts(_ micros: Int64) -> Value { .timestamp(Timestamp(micros: micros)) }
func geo(_ lat: Double, _ lng: Double) -> Value { .geoPoint(GeoPoint(latitude: lat, longitude: lng)) }
func str(_ s: String) -> Value { .string(s) }
func arr(_ a: Value...) -> Value { .array(a) }
/// A vector value (Firestore's `Vector`), as the wire carries it.
func vec(_ e: Double...) -> Value { map(["__type__": str("__vector__"), "value": .array(e.map { .double($0) })]) }

func doc(_ p: String, _ fields: [String: Value] = [:], version: Int64 = 1, updateTime: Int64? = nil) -> Document {
    Document(key: key(p), data: MapValue(fields), version: version, createTime: version, updateTime: updateTime ?? version)
}

/// Asserts that `body` throws an `EmberError` with `code` whose message contains every fragment.
func assertEmberError<T>(_ code: ErrorCode, _ fragments: [String] = [], file: StaticString = #filePath, line: UInt = #line,
                         _ body: () throws -> T) {
    do {
        let result = try body()
        XCTFail("expected \(code.name) but got \(result)", file: file, line: line)
    } catch let e as EmberError {
        XCTAssertEqual(e.code, code, "message: \(e.message)", file: file, line: line)
        XCTAssertFalse(e.message.isEmpty, file: file, line: line)
        for f in fragments {
            XCTAssertTrue(e.message.contains(f), "'\(e.message)' should mention '\(f)'", file: file, line: line)
        }
    } catch {
        XCTFail("expected EmberError(\(code.name)) but got \(error)", file: file, line: line)
    }
}

func assertInvalid<T>(_ fragments: String..., file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) {
    assertEmberError(.invalidArgument, fragments, file: file, line: line, body)
}

/// Asserts the sign of `Value.compare(a, b)` and that the reverse comparison is its negation.
func assertOrder(_ a: Value, _ b: Value, _ expected: Int, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(Value.compare(a, b), expected, "compare(\(a), \(b))", file: file, line: line)
    XCTAssertEqual(Value.compare(b, a), -expected, "compare(\(b), \(a))", file: file, line: line)
}
