import XCTest
@testable import EmberModel

/// The compound hash a resumed listen sends: ranges cut at the client's keys; the server's
/// differing ranges merged into the client's copy give the server's node, whatever changed.
final class TreeRangesTests: XCTestCase {
    private func node(_ keys: [String], _ value: (String) -> TreeValue = { .string($0) }) -> TreeValue {
        var d: [String: TreeValue] = [:]
        for k in keys { d[k] = value(k) }
        return d.isEmpty ? .null : .object(TreeObject(d))
    }

    func testSplitPointsEveryEighthKeyInKeyOrder() {
        XCTAssertEqual(TreeRanges.splitPoints(node((0..<31).map { "k\($0)" })), [], "small nodes: the whole hash only")
        let keys = (0..<40).map { String($0) }              // integer keys sort numerically
        XCTAssertEqual(TreeRanges.splitPoints(node(keys)), ["7", "15", "23", "31"])
        XCTAssertEqual(TreeRanges.splitPoints(.string("leaf")), [])
    }

    func testAppendsComeBackAsTheLastRangeOnly() {
        let cached = node((0..<10_000).map { String(format: "p%05d", $0) })
        let points = TreeRanges.splitPoints(cached)
        let hashes = TreeRanges.hashes(cached, points: points)
        var server = cached
        for i in 0..<10 { server.set([String(format: "q%05d", i)][...], .string("new")) }
        let sent = TreeRanges.differing(server, points: points, hashes: hashes)
        XCTAssertEqual(sent.count, 1)
        XCTAssertLessThanOrEqual(sent.reduce(0) { $0 + $1.data.childCount }, 20)
        XCTAssertEqual(TreeRanges.merge(cached, sent), server)
        XCTAssertEqual(TreeRanges.differing(cached, points: points, hashes: hashes), [], "unchanged: nothing")
    }

    func testRandomChangesMergeToTheServersNode() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<50 {
            let n = Int.random(in: 0..<300, using: &rng)
            let cached = node((0..<n).map { "k\($0 * 3)" }) { .int(Int64($0.count)) }
            var server = cached
            for _ in 0..<Int.random(in: 0..<12, using: &rng) {
                let k = "k\(Int.random(in: 0..<(n * 3 + 10), using: &rng))"
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: server.set([k][...], .null)
                case 1: server.set([k][...], .string("changed \(round)"))
                default: server.set([k, "deep"][...], .bool(true))
                }
            }
            let points = TreeRanges.splitPoints(cached)
            let sent = TreeRanges.differing(server, points: points, hashes: TreeRanges.hashes(cached, points: points))
            XCTAssertEqual(TreeRanges.merge(cached, sent), server, "round \(round)")
        }
    }
}
