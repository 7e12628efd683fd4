import XCTest
import EmberModel
import EmberCore

final class SmokeTests: XCTestCase {
    func testDocumentListenerPendingThenAcknowledged() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = EventLog()
        let token = try client.listen(Query(document: key("cities/SF")), options: ListenOptions(includeMetadataChanges: true)) { log.append($0) }
        log.wait(for: 1)
        try client.write([setM("cities/SF", ["name": .string("San Francisco")])])
        let evs = log.wait(for: 3)
        let snaps = log.snapshots
        print(snaps.map { "\($0.documents.count) pending=\($0.hasPendingWrites) cache=\($0.isFromCache) \(summary($0))" })
        XCTAssertEqual(evs.count, 3)
        XCTAssertEqual(snaps[0].documents.count, 0)
        XCTAssertFalse(snaps[0].isFromCache)
        XCTAssertTrue(snaps[1].hasPendingWrites)
        XCTAssertFalse(snaps[2].hasPendingWrites)
        token.remove()
    }
}
