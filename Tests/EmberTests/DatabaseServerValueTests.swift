import XCTest
import Foundation
import Ember

/// `ServerValue.timestamp()` and `ServerValue.increment(_:)` in tree writes: the in-process
/// backend fills them in; the writer's observers see its estimate at once; a bad placeholder is
/// refused.
final class DatabaseServerValueTests: XCTestCase {
    var db: Firestore!
    var ref: DatabaseReference!

    override func setUp() {
        db = try! openDB()
        ref = db.database().reference()
    }

    override func tearDown() { db.terminate() }

    func write(_ body: (@escaping (Error?, DatabaseReference) -> Void) -> Void) -> Error? {
        let e = expectation(description: "write")
        let box = Box<Error?>()
        body { err, _ in box.set(err); e.fulfill() }
        wait(for: [e], timeout: 5)
        return box.value ?? nil
    }

    func read(_ r: DatabaseReference) -> Any? {
        let e = expectation(description: "read")
        let box = Box<Any>()
        r.getData { _, s in if let v = s?.value { box.set(v) }; e.fulfill() }
        wait(for: [e], timeout: 5)
        return box.value
    }

    func testTimestampAndIncrementAreFilledIn() {
        let before = Int(Date().timeIntervalSince1970 * 1000)
        let post = ref.child("posts/p1")
        let seen = Recorder<Int>()
        post.child("at").observe(.value) { s in if let v = s.value as? Int { seen.append(v) } }
        XCTAssertNil(write { post.setValue(["at": ServerValue.timestamp(), "likes": ServerValue.increment(2)], withCompletionBlock: $0) })
        let after = Int(Date().timeIntervalSince1970 * 1000)
        let at = read(post.child("at")) as? Int
        XCTAssertNotNil(at)
        XCTAssertTrue((before...after).contains(at ?? 0), "\(String(describing: at)) in \(before)...\(after)")
        XCTAssertEqual(read(post.child("likes")) as? Int, 2, "no number there: the delta")
        XCTAssertNil(write { post.child("likes").setValue(ServerValue.increment(3), withCompletionBlock: $0) })
        XCTAssertEqual(read(post.child("likes")) as? Int, 5)
        XCTAssertNil(write { post.updateChildValues(["likes": ServerValue.increment(0.5)], withCompletionBlock: $0) })
        XCTAssertEqual(read(post.child("likes")) as? Double, 5.5)
        // The observer saw a number at once (the estimate), never the placeholder.
        XCTAssertFalse(seen.wait(for: 1).isEmpty)
    }

    func testAMalformedPlaceholderIsRefused() {
        let error = write { ref.child("x").setValue([".sv": "tomorrow"], withCompletionBlock: $0) }
        XCTAssertEqual((error as NSError?)?.code, 3)
        XCTAssertTrue("\(error!)".contains("Invalid server value"), "\(error!)")
        let mixed = write { ref.child("x").setValue([".sv": "timestamp", "other": 1], withCompletionBlock: $0) }
        XCTAssertEqual((mixed as NSError?)?.code, 3)
    }
}
