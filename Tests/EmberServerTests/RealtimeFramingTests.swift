import EmberModel
@testable import EmberServer
import XCTest

/// The realtime protocol's framing and its query objects, on their own.
final class RealtimeFramingTests: XCTestCase {
    func testShortMessagesAreOneFrameAndLongOnesAreCounted() throws {
        XCTAssertEqual(RealtimeFraming.frames(#"{"t":"d"}"#), [#"{"t":"d"}"#])
        let long = String(repeating: "é", count: 16384 * 2 + 5)
        let frames = RealtimeFraming.frames(long)
        XCTAssertEqual(frames.first, "3")
        XCTAssertEqual(frames.dropFirst().map { $0.unicodeScalars.count }, [16384, 16384, 5])
        XCTAssertEqual(frames.dropFirst().joined(), long)
        // Exactly the limit: one frame, no count.
        XCTAssertEqual(RealtimeFraming.frames(String(repeating: "a", count: 16384)).count, 1)
    }

    func testReassemblyCountsAndKeepAlives() throws {
        var f = RealtimeFraming(maxMessageBytes: 1 << 20)
        XCTAssertNil(try f.feed("0"))                           // the client's keep-alive
        XCTAssertEqual(try f.feed(#"{"a":1}"#), #"{"a":1}"#)
        XCTAssertNil(try f.feed("2"))
        XCTAssertNil(try f.feed(#"{"a":"#))
        XCTAssertEqual(try f.feed("2}"), #"{"a":2}"#)
        // A number up to 6 characters is a count; a longer one is a message.
        XCTAssertEqual(try f.feed("1234567"), "1234567")
    }

    func testOversizedMessagesAreRefused() {
        var f = RealtimeFraming(maxMessageBytes: 100)
        XCTAssertThrowsError(try f.feed("999999"))
        XCTAssertNil(try f.feed("2"))
        XCTAssertNil(try f.feed(String(repeating: "x", count: 60)))
        XCTAssertThrowsError(try f.feed(String(repeating: "x", count: 60)))
        var g = RealtimeFraming(maxMessageBytes: 10)
        XCTAssertThrowsError(try g.feed(String(repeating: "y", count: 11)))
    }

    func testWireQueryObjects() throws {
        func q(_ json: String) throws -> TreeRESTQuery? {
            guard case .map(let m) = try ValueJSON.parse(json, plain: true) else { fatalError() }
            return try TreeRESTQuery.wire(m)
        }
        XCTAssertNil(try q("{}"))                                   // the whole location
        let node = TreeValue.object(TreeObject(["a": .int(3), "b": .int(1), "c": .int(2)]))
        XCTAssertEqual(try q(#"{"i": ".key", "l": 2, "vf": "r"}"#)?.apply(to: node).object.map { Set($0.keys) }, ["b", "c"])
        XCTAssertEqual(try q(#"{"i": ".value", "sp": 2, "sin": true}"#)?.apply(to: node).object.map { Set($0.keys) }, ["a", "c"])
        XCTAssertEqual(try q(#"{"i": ".value", "sp": 2, "sin": false}"#)?.apply(to: node).object.map { Set($0.keys) }, ["a"])
        XCTAssertEqual(try q(#"{"i": ".value", "ep": 2, "ein": false}"#)?.apply(to: node).object.map { Set($0.keys) }, ["b"])
        XCTAssertEqual(try q(#"{"i": ".value", "sp": 1, "ep": 2, "l": 1, "vf": "l"}"#)?.apply(to: node).object.map { Set($0.keys) }, ["b"])
        let child = try XCTUnwrap(try q(#"{"i": "x/y", "l": 1}"#))
        XCTAssertEqual(child.indexName, "x/y")
        XCTAssertTrue(try XCTUnwrap(try q(#"{"l": 1}"#)).byPriority)
        XCTAssertThrowsError(try q(#"{"i": 3}"#))
        XCTAssertThrowsError(try q(#"{"i": ".key", "sp": {"o": 1}}"#))
    }
}
