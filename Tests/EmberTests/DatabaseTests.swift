import XCTest
import Foundation
import Ember

/// The public tree API: the seed's (002) Swift samples, writes and reads, observer handles,
/// removeAllObservers not recursive, errors reaching completions and cancel blocks.
final class DatabaseTests: TreeTestCase {
    func testSeedSamplesCompileAndRun() throws {
        // Append to a list; get the generated key.
        let postRef = ref.child("posts").childByAutoId()
        XCTAssertEqual(postRef.key?.count, 20)
        postRef.setValue(["title": "Hi", "metrics": ["views": 3]])
        XCTAssertNil(awaitWrite { ref.updateChildValues(["/posts/\(postRef.key!)/starCount": 1], withCompletionBlock: $0) })

        let commentsRef = ref.child("post-comments").child(postRef.key!)
        let added = Recorder<String>(), removed = Recorder<String>()
        let h1 = commentsRef.observe(.childAdded, with: { snapshot -> Void in added.append(snapshot.key) })
        let h2 = commentsRef.observe(.childRemoved, with: { snapshot -> Void in removed.append(snapshot.key) })
        commentsRef.child("c1").setValue(["text": "first"])
        commentsRef.child("c1").removeValue()
        XCTAssertEqual(added.wait(for: 1), ["c1"])
        XCTAssertEqual(removed.wait(for: 1), ["c1"])

        let values = Recorder<[String]>()
        ref.child("posts").observe(.value) { snapshot in
            var keys: [String] = []
            for child in snapshot.children { keys.append((child as! DataSnapshot).key) }
            values.append(keys)
        }
        XCTAssertEqual(values.wait(for: 1).last, [postRef.key!])

        let myTopPostsQuery = ref.child("user-posts").child("uid").queryOrdered(byChild: "starCount")
        let postsByMostPopular = ref.child("posts").queryOrdered(byChild: "metrics/views")
        let recentPostsQuery = (ref?.child("posts").queryLimited(toFirst: 100))!
        XCTAssertNoThrow(try myTopPostsQuery.validate())
        XCTAssertNoThrow(try postsByMostPopular.validate())
        XCTAssertNoThrow(try recentPostsQuery.validate())
        commentsRef.removeObserver(withHandle: h1)
        commentsRef.removeObserver(withHandle: h2)
        ref.child("posts").removeAllObservers()
        let snap = read(ref.child("posts").child(postRef.key!))
        XCTAssertEqual(snap?.childSnapshot(forPath: "metrics/views").value as? Int, 3)
        XCTAssertEqual(snap?.childSnapshot(forPath: "starCount").value as? Int, 1)
    }

    func testChildEventsWithPreviousSiblingKey() throws {
        let list = ref.child("list")
        XCTAssertNil(awaitWrite { list.setValue(["a": 3, "b": 1, "c": 2], withCompletionBlock: $0) })
        let events = Recorder<String>()
        let q = list.queryOrderedByValue()
        for t in [DataEventType.childAdded, .childMoved, .childChanged, .childRemoved] {
            q.observe(t, andPreviousSiblingKeyWith: { s, prev in events.append("\(t.rawValue) \(s.key) \(prev ?? "-")") })
        }
        XCTAssertEqual(events.wait(for: 3), ["0 b -", "0 c b", "0 a c"])
        list.child("b").setValue(10)
        XCTAssertEqual(Array(events.wait(for: 5)[3...]), ["3 b a", "2 b a"])
        list.child("c").removeValue()
        XCTAssertEqual(Array(events.wait(for: 6)[5...]), ["1 c -"])
    }

    func testRemoveAllObserversIsNotRecursive() throws {
        let parent = ref.child("p"), child = ref.child("p/c")
        let parentEvents = Recorder<String>(), childEvents = Recorder<String>()
        parent.observe(.value) { s in parentEvents.append("parent \(s.childrenCount)") }
        parent.queryOrderedByKey().observe(.value) { s in parentEvents.append("parentq \(s.childrenCount)") }
        child.observe(.value) { s in childEvents.append("child \(s.exists())") }
        parentEvents.wait(for: 2)
        childEvents.wait(for: 1)
        parent.removeAllObservers()
        XCTAssertNil(awaitWrite { child.setValue(1, withCompletionBlock: $0) })
        XCTAssertEqual(childEvents.wait(for: 2), ["child false", "child true"])
        XCTAssertEqual(parentEvents.all.count, 2)
    }

    func testRemoveObserverWithHandleOnlyAtItsLocation() throws {
        let a = ref.child("a")
        let events = Recorder<String>()
        let h = a.observe(.value) { s in events.append("v \(s.value as? Int ?? -1)") }
        events.wait(for: 1)
        ref.child("b").removeObserver(withHandle: h)     // another location: nothing happens
        XCTAssertNil(awaitWrite { a.setValue(1, withCompletionBlock: $0) })
        events.wait(for: 2)
        a.removeObserver(withHandle: h)
        XCTAssertNil(awaitWrite { a.setValue(2, withCompletionBlock: $0) })
        XCTAssertEqual(events.all, ["v -1", "v 1"])
    }

    func testArraysComeBackAsListsWhenDense() throws {
        XCTAssertNil(awaitWrite { ref.child("arr").setValue(["x", "y", "z"], withCompletionBlock: $0) })
        XCTAssertEqual(read(ref.child("arr"))?.value as? [String], ["x", "y", "z"])
        XCTAssertNil(awaitWrite { ref.child("arr/1").removeValue(completionBlock: $0) })
        let v = read(ref.child("arr"))?.value as? [Any]
        XCTAssertEqual(v?.count, 3)
        XCTAssertTrue(v?[1] is NSNull)
        XCTAssertNil(awaitWrite { ref.child("sparse").setValue(["0": "a", "7": "b"], withCompletionBlock: $0) })
        XCTAssertEqual((read(ref.child("sparse"))?.value as? [String: Any])?.count, 2)
    }

    func testInvalidPathsAndValuesReachTheCompletion() throws {
        for bad in ["a.b", "a$", "a#b", "a[0]", "x]", "a\u{1}"] {
            let err = awaitWrite { ref.child(bad).setValue(1, withCompletionBlock: $0) }
            XCTAssertEqual(code(err), .invalidArgument, bad)
        }
        XCTAssertEqual(code(awaitWrite { ref.child("ok").setValue(["bad.key": 1], withCompletionBlock: $0) }), .invalidArgument)
        XCTAssertEqual(code(awaitWrite { ref.child("ok").setValue(Double.nan, withCompletionBlock: $0) }), .invalidArgument)
        XCTAssertEqual(code(awaitWrite { ref.child(String(repeating: "k", count: 769)).setValue(1, withCompletionBlock: $0) }), .invalidArgument)
        var deep: Any = 1
        for _ in 0..<32 { deep = ["d": deep] }
        XCTAssertEqual(code(awaitWrite { ref.child("deep").setValue(deep, withCompletionBlock: $0) }), .invalidArgument)
        XCTAssertEqual(code(awaitWrite { ref.updateChildValues(["a": 1, "a/b": 2], withCompletionBlock: $0) }), .invalidArgument)
    }

    func testQueryErrorsReachTheCancelBlock() throws {
        let list = ref.child("list")
        let bad: [DatabaseQuery] = [
            list.queryOrderedByKey().queryOrderedByValue(),
            list.queryOrdered(byChild: "$key"),
            list.queryOrdered(byChild: ""),
            list.queryLimited(toFirst: 0),
            list.queryLimited(toFirst: 1).queryLimited(toLast: 1),
            list.queryStarting(atValue: 1).queryStarting(afterValue: 2),
            list.queryEnding(atValue: 1).queryEqual(toValue: 1),
            list.queryOrderedByKey().queryStarting(atValue: 1),
            list.queryOrderedByKey().queryStarting(atValue: "a", childKey: "b"),
            list.queryOrderedByValue().queryEqual(toValue: ["x": 1]),
            list.queryStarting(atValue: true),         // no order-by: bounds are priorities (null, number, string)
        ]
        for q in bad {
            XCTAssertThrowsError(try q.validate())
            let got = Recorder<Error>()
            q.observe(.value, with: { _ in XCTFail("no event expected") }, withCancel: { got.append($0) })
            XCTAssertEqual(code(got.wait(for: 1).first), .invalidArgument)
        }
    }

    func testSingleEventAndAsyncForms() async throws {
        let r = ref.child("async")
        _ = try await r.setValue(["n": 1])
        _ = try await r.updateChildValues(["m": 2])
        let snap = try await r.getData()
        XCTAssertEqual(snap.childrenCount, 2)
        let once = Recorder<Int>()
        r.child("n").observeSingleEvent(of: .value) { s in once.append(s.value as? Int ?? -1) }
        XCTAssertEqual(once.wait(for: 1), [1])
        _ = try await r.child("n").setValue(5)
        _ = try await r.removeValue()
        let gone = try await r.getData()
        XCTAssertFalse(gone.exists())
        XCTAssertEqual(once.all, [1])
    }

    func testOfflineWritesRaiseEventsAndSyncLater() throws {
        let list = ref.child("offline")
        let events = Recorder<String>()
        list.observe(.childAdded) { s in events.append(s.key) }
        list.observe(.value) { s in events.append("value \(s.childrenCount)") }
        XCTAssertEqual(events.wait(for: 1), ["value 0"])
        db.database().goOffline()
        let done = Recorder<Error?>()
        list.childByAutoId().setValue(1) { e, _ in done.append(e) }
        XCTAssertEqual(events.wait(for: 3).count, 3)
        XCTAssertEqual(done.count, 0)
        db.database().goOnline()
        XCTAssertNil(done.wait(for: 1)[0])
        XCTAssertEqual(read(list)?.childrenCount, 1)
    }

    func testEveryQueryOperatorThroughTheAPI() throws {
        let scores = ref.child("scores")
        XCTAssertNil(awaitWrite { scores.setValue(["a": ["s": 1], "b": ["s": 2], "c": ["s": 2], "d": ["s": 3], "e": ["s": "x"], "f": ["t": 1]], withCompletionBlock: $0) })
        func keys(_ q: DatabaseQuery) -> [String] { read(q)?.childSnapshots.map { $0.key } ?? ["<error>"] }
        let byS = scores.queryOrdered(byChild: "s")
        XCTAssertEqual(keys(byS), ["f", "a", "b", "c", "d", "e"])
        XCTAssertEqual(keys(byS.queryLimited(toFirst: 2)), ["f", "a"])
        XCTAssertEqual(keys(byS.queryLimited(toLast: 2)), ["d", "e"])
        XCTAssertEqual(keys(byS.queryStarting(atValue: 2)), ["b", "c", "d", "e"])
        XCTAssertEqual(keys(byS.queryStarting(atValue: 2, childKey: "c")), ["c", "d", "e"])
        XCTAssertEqual(keys(byS.queryStarting(afterValue: 2)), ["d", "e"])
        XCTAssertEqual(keys(byS.queryStarting(afterValue: 2, childKey: "b")), ["c", "d", "e"])
        XCTAssertEqual(keys(byS.queryEnding(atValue: 2)), ["f", "a", "b", "c"])
        XCTAssertEqual(keys(byS.queryEnding(atValue: 2, childKey: "b")), ["f", "a", "b"])
        XCTAssertEqual(keys(byS.queryEnding(beforeValue: 2)), ["f", "a"])
        XCTAssertEqual(keys(byS.queryEnding(beforeValue: 2, childKey: "c")), ["f", "a", "b"])
        XCTAssertEqual(keys(byS.queryEqual(toValue: 2)), ["b", "c"])
        XCTAssertEqual(keys(byS.queryEqual(toValue: 2, childKey: "c")), ["c"])
        XCTAssertEqual(keys(byS.queryEqual(toValue: nil)), ["f"])
        XCTAssertEqual(keys(scores.queryOrderedByKey().queryStarting(afterValue: "b").queryEnding(atValue: "d")), ["c", "d"])
        XCTAssertEqual(keys(scores.queryOrderedByKey().queryEnding(beforeValue: "c")), ["a", "b"])
        XCTAssertEqual(keys(scores.child("a").parent!.queryOrderedByKey().queryLimited(toLast: 1)), ["f"])
        let values = ref.child("values")
        XCTAssertNil(awaitWrite { values.setValue(["x": true, "y": false, "z": 5, "w": "s", "v": ["o": 1]], withCompletionBlock: $0) })
        XCTAssertEqual(keys(values.queryOrderedByValue()), ["y", "x", "z", "w", "v"])
        XCTAssertEqual(keys(values.queryOrderedByValue().queryStarting(atValue: true).queryEnding(atValue: 5)), ["x", "z"])
    }

    /// On a durable database the tree survives terminate and reopen (docs/tree.md, "The
    /// durable tree"): written data and offline writes still pending.
    func testTreeOnADurableDatabaseSurvivesReopen() async throws {
        let dir = NSTemporaryDirectory() + "ember-tree-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = FirestoreSettings()
        s.path = dir + "/app.ember"
        let durable = try Firestore.open(settings: s)
        let list = durable.database().reference(withPath: "list")
        _ = try await list.childByAutoId().setValue(["n": 1])
        let snap = try await list.getData()
        XCTAssertEqual(snap.childrenCount, 1)
        durable.database().goOffline()
        list.childByAutoId().setValue(["n": 2], withCompletionBlock: nil)   // pending at terminate
        try await durable.terminate()
        let again = try Firestore.open(settings: s)
        let snap2 = try await again.database().reference(withPath: "list").getData()
        XCTAssertEqual(snap2.childrenCount, 2, "the stored tree and the pending write, sent on reopening")
        let ns = (snap2.value as? [String: Any])?.values.compactMap { ($0 as? [String: Any])?["n"] as? Int }.sorted()
        XCTAssertEqual(ns, [1, 2])
        try await again.terminate()
    }
}
