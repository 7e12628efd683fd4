import XCTest
import EmberModel
import EmberCore

/// `.info/connected` and `.info/serverTimeOffset` with the in-process backend: values follow the
/// network switch, reads answer at once, the root's observers never see `.info`, and writes
/// there are refused.
final class TreeInfoTests: XCTestCase {
    func testConnectedFollowsTheNetworkSwitch() throws {
        let c = EmberClient()
        defer { c.close() }
        let log = TreeLog()
        try c.watch(".info/connected", TreeQuery(), [.value], into: log)
        XCTAssertEqual(log.wait(for: 1), ["value true"])
        try c.disableNetwork()
        XCTAssertEqual(log.wait(for: 2), ["value true", "value false"])
        XCTAssertEqual(try c.treeGet(tp(".info/connected")).value, .bool(false), "read offline, at once")
        try c.enableNetwork()
        XCTAssertEqual(log.wait(for: 3), ["value true", "value false", "value true"])
        XCTAssertEqual(try c.treeGet(tp(".info/serverTimeOffset")).value, .int(0))
        XCTAssertEqual(try c.treeGet(tp(".info")).value.childCount, 2)
    }

    func testTheRootNeverShowsInfoAndInfoIsReadOnly() throws {
        let c = EmberClient()
        defer { c.close() }
        let log = TreeLog()
        try c.watch("", TreeQuery(), [.childAdded, .value], into: log)
        try c.treeWrite([setOp("a", 1)])
        try c.disableNetwork()
        try c.enableNetwork()
        try c.settle()
        c.events.drain()
        XCTAssertFalse(log.all.contains { $0.contains(".info") }, "\(log.all)")
        XCTAssertEqual(try c.treeGet(.root).value, tv(["a": 1]))
        XCTAssertThrowsError(try c.treeWrite([setOp(".info/connected", false)])) {
            XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument)
            XCTAssertTrue("\($0)".contains(".info is read-only"), "\($0)")
        }
        XCTAssertThrowsError(try TreePath(parsing: "a/.info"), "only the first segment may be .info")
    }
}
