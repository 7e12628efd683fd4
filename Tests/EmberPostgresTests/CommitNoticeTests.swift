import Foundation
import EmberModel
@testable import EmberPostgres
import XCTest

/// A commit carried in its NOTIFY's payload decodes to the rows the log holds; a large one is
/// announced by id only; anything else is no notice.
final class CommitNoticeTests: XCTestCase {
    func testACommitRoundTripsThroughItsPayload() throws {
        let changes = [
            LoggedChange(seq: 42, index: 1, key: try DocumentKey(parsing: "rooms/r1"), fields: [0x81, 0xA1, 0x6E, 0x01],
                         createTime: 1_000, commitTime: 2_000),
            LoggedChange(seq: 42, index: 3, key: try DocumentKey(parsing: "rooms/r1/messages/m é"), fields: nil,
                         createTime: 0, commitTime: 2_000),
        ]
        let text = try XCTUnwrap(CommitNotice.encode(changes))
        let back = try XCTUnwrap(CommitNotice.decode(Substring(text)))
        XCTAssertEqual(back.map { $0.key }, changes.map { $0.key })
        XCTAssertEqual(back.map { $0.fields }, changes.map { $0.fields })
        XCTAssertEqual(back.map { $0.createTime }, [1_000, 0])
        XCTAssertEqual(Set(back.map { $0.seq }), [42])
        XCTAssertEqual(Set(back.map { $0.commitTime }), [2_000])
    }

    func testALargeCommitIsAnnouncedByIdOnlyAndGarbageIsNoNotice() throws {
        let big = LoggedChange(seq: 1, index: 1, key: try DocumentKey(parsing: "c/d"), fields: Array(repeating: 7, count: 9_000),
                               createTime: 1, commitTime: 1)
        XCTAssertNil(CommitNotice.encode([big]))
        XCTAssertNil(CommitNotice.encode([]))
        XCTAssertNil(CommitNotice.decode("not base64!"))
        XCTAssertNil(CommitNotice.decode(Substring(Data([1, 2, 3]).base64EncodedString())))
    }
}
