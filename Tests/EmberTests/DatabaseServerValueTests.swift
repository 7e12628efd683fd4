import XCTest
import Foundation
import Ember

/// `ServerValue.timestamp()` and `ServerValue.increment(_:)` in tree writes: the in-process
/// backend fills them in; the writer's observers see its estimate at once; a bad placeholder is
/// refused.
final class DatabaseServerValueTests: TreeTestCase {
    func testTimestampAndIncrementAreFilledIn() {
        let before = Int(Date().timeIntervalSince1970 * 1000)
        let post = ref.child("posts/p1")
        let seen = Recorder<Int>()
        post.child("at").observe(.value) { s in if let v = s.value as? Int { seen.append(v) } }
        XCTAssertNil(awaitWrite { post.setValue(["at": ServerValue.timestamp(), "likes": ServerValue.increment(2)], withCompletionBlock: $0) })
        let after = Int(Date().timeIntervalSince1970 * 1000)
        let at = read(post.child("at"))?.value as? Int
        XCTAssertNotNil(at)
        XCTAssertTrue((before...after).contains(at ?? 0), "\(String(describing: at)) in \(before)...\(after)")
        XCTAssertEqual(read(post.child("likes"))?.value as? Int, 2, "no number there: the delta")
        XCTAssertNil(awaitWrite { post.child("likes").setValue(ServerValue.increment(3), withCompletionBlock: $0) })
        XCTAssertEqual(read(post.child("likes"))?.value as? Int, 5)
        XCTAssertNil(awaitWrite { post.updateChildValues(["likes": ServerValue.increment(0.5)], withCompletionBlock: $0) })
        XCTAssertEqual(read(post.child("likes"))?.value as? Double, 5.5)
        // The observer saw a number at once (the estimate), never the placeholder.
        XCTAssertFalse(seen.wait(for: 1).isEmpty)
    }

    func testAMalformedPlaceholderIsRefused() {
        let error = awaitWrite { ref.child("x").setValue([".sv": "tomorrow"], withCompletionBlock: $0) }
        XCTAssertEqual((error as NSError?)?.code, 3)
        XCTAssertTrue("\(error!)".contains("Invalid server value"), "\(error!)")
        let mixed = awaitWrite { ref.child("x").setValue([".sv": "timestamp", "other": 1], withCompletionBlock: $0) }
        XCTAssertEqual((mixed as NSError?)?.code, 3)
    }
}
