import XCTest
import Foundation
import Ember

/// `runTransactionBlock` through the public tree API, with Firebase's star-toggling sample:
/// MutableData reads and writes (child data writing through), abort, the completion's
/// arguments, local events off, and a value that is not tree data failing the transaction.
final class DatabaseTransactionTests: TreeTestCase {
    /// Runs `block` and waits for the completion's (error, committed, value).
    func transact(_ r: DatabaseReference, localEvents: Bool = true, _ block: @escaping @Sendable (MutableData) -> TransactionResult) -> (Error?, Bool, Any?) {
        let e = expectation(description: "transaction")
        let box = Box<(Error?, Bool, Any?)>()
        r.runTransactionBlock(block, andCompletionBlock: { error, committed, snapshot in
            box.set((error, committed, snapshot?.value))
            e.fulfill()
        }, withLocalEvents: localEvents)
        wait(for: [e], timeout: 10)
        return box.value ?? (nil, false, nil)
    }

    /// Firebase's "save data as transactions" sample (Apple): toggle a user's star on a post.
    func testTheStarTogglingSample() throws {
        let postRef = ref.child("posts").child("p1")
        postRef.setValue(["title": "Hi", "starCount": 0])
        let uid = "alice"
        let toggle: @Sendable (MutableData) -> TransactionResult = { currentData in
            if var post = currentData.value as? [String: Any] {
                var stars = post["stars"] as? [String: Bool] ?? [:]
                var starCount = post["starCount"] as? Int ?? 0
                if stars[uid] != nil {
                    starCount -= 1
                    stars.removeValue(forKey: uid)
                } else {
                    starCount += 1
                    stars[uid] = true
                }
                post["starCount"] = starCount
                post["stars"] = stars
                currentData.value = post
                return TransactionResult.success(withValue: currentData)
            }
            return TransactionResult.success(withValue: currentData)
        }
        let (error, committed, value) = transact(postRef, toggle)
        XCTAssertNil(error)
        XCTAssertTrue(committed)
        let post = try XCTUnwrap(value as? [String: Any])
        XCTAssertEqual(post["starCount"] as? Int, 1)
        XCTAssertEqual(post["stars"] as? [String: Bool], ["alice": true])
        let again = transact(postRef, toggle)
        XCTAssertEqual((again.2 as? [String: Any])?["starCount"] as? Int, 0)
        XCTAssertNil((again.2 as? [String: Any])?["stars"], "an emptied map is removed")
    }

    func testChildDataWritesThroughAndAbortWritesNothing() {
        let counter = ref.child("stats")
        let (error, committed, value) = transact(counter) { data in
            XCTAssertNil(data.value, "nothing there yet")
            XCTAssertEqual(data.key, "stats")
            data.childData(byAppendingPath: "views/today").value = 3
            data.childData(byAppendingPath: "likes").value = 1
            XCTAssertEqual(data.childrenCount, 2)
            XCTAssertTrue(data.hasChild(atPath: "views/today"))
            XCTAssertEqual((data.children.allObjects as? [MutableData])?.compactMap(\.key), ["likes", "views"])
            return TransactionResult.success(withValue: data)
        }
        XCTAssertNil(error)
        XCTAssertTrue(committed)
        XCTAssertEqual(value as? NSDictionary, ["likes": 1, "views": ["today": 3]] as NSDictionary)

        // Observed, so the value is known when the update aborts (unobserved, the snapshot may
        // still be null, as the update's first call is: Firebase's contract).
        let seen = Recorder<Bool>()
        counter.observe(.value) { _ in seen.append(true) }
        _ = seen.wait(for: 1)
        let aborted = transact(counter) { _ in TransactionResult.abort() }
        XCTAssertNil(aborted.0)
        XCTAssertFalse(aborted.1)
        XCTAssertEqual(aborted.2 as? NSDictionary, ["likes": 1, "views": ["today": 3]] as NSDictionary, "the value as it is")
    }

    func testAValueThatIsNotTreeDataFailsTheTransaction() {
        let (error, committed, value) = transact(ref.child("bad")) { data in
            data.value = Date()
            return TransactionResult.success(withValue: data)
        }
        XCTAssertEqual((error as NSError?)?.code, 3, "invalid argument")
        XCTAssertFalse(committed)
        XCTAssertNil(value)
    }

    func testWithoutLocalEventsObserversHearOnlyTheCommittedValue() {
        let n = ref.child("n")
        n.setValue(1)
        let seen = Recorder<Int>()
        n.observe(.value) { s in if let v = s.value as? Int { seen.append(v) } }
        XCTAssertEqual(seen.wait(for: 1), [1])
        let (_, committed, _) = transact(n, localEvents: false) { data in
            data.value = (data.value as? Int ?? 0) + 1
            return TransactionResult.success(withValue: data)
        }
        XCTAssertTrue(committed)
        XCTAssertEqual(seen.wait(for: 2), [1, 2])
    }

    func testTheAsyncForm() async throws {
        let (committed, snapshot) = try await ref.child("a").runTransactionBlock { data in
            data.value = "x"
            return TransactionResult.success(withValue: data)
        }
        XCTAssertTrue(committed)
        XCTAssertEqual(snapshot.value as? String, "x")
    }
}
