import XCTest
import Foundation
import Ember

/// Firestore: opening, the shared instance, the network switch, waitForPendingWrites, terminate.
final class FirestoreTests: XCTestCase {
    var db: Firestore!

    override func setUpWithError() throws { db = try openDB() }
    override func tearDown() { db.terminate(); db = nil }


    func testCacheSettingsAreKept() throws {
        let s = FirestoreSettings()
        s.cacheSettings = PersistentCacheSettings(sizeBytes: 100 * 1024 * 1024 as NSNumber)
        let d = try Firestore.open(settings: s)
        defer { d.terminate() }
        XCTAssertEqual((d.settings.cacheSettings as? PersistentCacheSettings)?.sizeBytes, 104_857_600)
        s.cacheSettings = MemoryCacheSettings(garbageCollectorSettings: MemoryLRUGCSettings())
        XCTAssertTrue(s.cacheSettings is MemoryCacheSettings)
    }

    func testSharedInstanceIsOneDatabaseUntilTerminated() {
        let a = Firestore.firestore()
        XCTAssertTrue(a === Firestore.firestore())
        set(a.document("shared/x"), ["v": 1])
        XCTAssertEqual(get(Firestore.firestore().document("shared/x"))?.get("v") as? Int, 1)
        a.terminate()
        let b = Firestore.firestore()
        XCTAssertFalse(a === b)
        XCTAssertEqual(get(b.document("shared/x"))?.exists, false)
        b.terminate()
    }

    func testSeparateDatabasesDoNotShareData() throws {
        let other = try openDB()
        defer { other.terminate() }
        set(db.document("c/d"), ["v": 1])
        XCTAssertEqual(get(other.document("c/d"))?.exists, false)
    }

    // MARK: network

    func testOfflineWritesAreAppliedLocallyAndAcknowledgedWhenBackOnline() {
        let ref = db.document("cities/SF")
        let seen = Recorder<String>()
        let reg = ref.addSnapshotListener(includeMetadataChanges: true) { s, e in
            guard let s else { return seen.append("error") }
            seen.append("\(s.get("v") ?? "-") pending=\(s.metadata.hasPendingWrites) cache=\(s.metadata.isFromCache)")
        }
        defer { reg.remove() }
        XCTAssertEqual(seen.wait(for: 1), ["- pending=false cache=false"])

        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        XCTAssertEqual(seen.wait(for: 2).last, "- pending=false cache=true")
        let acked = Recorder<Error?>()
        ref.setData(["v": 1]) { acked.append($0) }
        XCTAssertEqual(seen.wait(for: 3).last, "1 pending=true cache=true")
        // Offline: the cache answers, the server cannot.
        XCTAssertEqual(get(ref)?.metadata.isFromCache, true)
        XCTAssertEqual(get(ref)?.get("v") as? Int, 1)
        let (s, e) = waitResult { ref.getDocument(source: .server, completion: $0) }
        XCTAssertNil(s)
        XCTAssertEqual(code(e), .unavailable)
        XCTAssertEqual(acked.count, 0, "no acknowledgement while offline")

        XCTAssertNil(waitError { db.enableNetwork(completion: $0) })
        XCTAssertEqual(acked.wait(for: 1).count, 1)
        XCTAssertNil(acked.all[0])
        XCTAssertEqual(seen.wait(for: 5).suffix(2), ["1 pending=true cache=false", "1 pending=false cache=false"])
        XCTAssertEqual(get(ref, source: .server)?.get("v") as? Int, 1)
    }

    func testOfflineQueryReturnsWhatTheCacheHas() {
        set(db.document("cities/SF"), ["v": 1])
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) }, "disabling twice is fine")
        let s = get(db.collection("cities"))
        XCTAssertEqual(s?.metadata.isFromCache, true)
        XCTAssertEqual(s?.documents.map { $0.documentID }, ["SF"])
        XCTAssertEqual(get(db.collection("empty"))?.isEmpty, true)
        let (_, e) = waitResult { self.db.collection("cities").getDocuments(source: .server, completion: $0) }
        XCTAssertEqual(code(e), .unavailable)
        let (_, ce) = waitResult { self.db.collection("cities").count.getAggregation(source: .server, completion: $0) }
        XCTAssertEqual(code(ce), .unavailable)
        // An offline listener raises from the cache at once.
        let seen = Recorder<Bool>()
        let reg = db.collection("empty").addSnapshotListener { s, _ in seen.append(s?.metadata.isFromCache ?? false) }
        defer { reg.remove() }
        XCTAssertEqual(seen.wait(for: 1), [true])
    }

    func testAsyncNetworkSwitch() throws {
        let ref = db.document("cities/LA")
        try runAsync { [db] in try await db.disableNetwork() }.get()
        ref.setData(["v": 2])
        XCTAssertEqual(get(ref)?.metadata.hasPendingWrites, true)
        try runAsync { [db] in try await db.enableNetwork() }.get()
        try runAsync { [db] in try await db.waitForPendingWrites() }.get()
        XCTAssertEqual(get(ref)?.metadata.hasPendingWrites, false)
        XCTAssertEqual(get(ref)?.metadata.isFromCache, false)
    }

    // MARK: waitForPendingWrites

    func testWaitForPendingWritesWithNothingPendingCompletesAtOnce() throws {
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        try runAsync { [db] in try await db.waitForPendingWrites() }.get()
    }

    func testWaitForPendingWritesWaitsForTheWritesMadeSoFar() {
        let order = Recorder<String>()
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        db.document("c/a").setData(["v": 1]) { e in order.append("write1 \(e == nil)") }
        db.document("c/b").setData(["v": 2]) { e in order.append("write2 \(e == nil)") }
        db.waitForPendingWrites { e in order.append("waited \(e == nil)") }
        db.document("c/c").setData(["v": 3]) { e in order.append("write3 \(e == nil)") }
        // A round trip through the event thread: nothing was acknowledged while offline.
        _ = get(db.document("c/a"), source: .cache)
        XCTAssertEqual(order.all, [])
        XCTAssertNil(waitError { db.enableNetwork(completion: $0) })
        let all = order.wait(for: 4)
        XCTAssertEqual(Array(all.prefix(3)), ["write1 true", "write2 true", "waited true"])
        XCTAssertEqual(Set(all), ["write1 true", "write2 true", "write3 true", "waited true"])
    }

    func testAsyncWaitForPendingWritesReturnsAfterTheAcknowledgement() throws {
        let acked = Recorder<Bool>()
        db.document("c/a").setData(["v": 1]) { acked.append($0 == nil) }
        try runAsync { [db] in try await db.waitForPendingWrites() }.get()
        XCTAssertEqual(acked.all, [true], "the write's completion runs before waitForPendingWrites returns")
    }

    func testTerminateFailsPendingWaitersAndWrites() {
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        let outcome = Recorder<FirestoreErrorCode?>()
        db.document("c/a").setData(["v": 1]) { outcome.append(code($0)) }
        db.waitForPendingWrites { outcome.append(code($0)) }
        db.terminate()
        XCTAssertEqual(outcome.wait(for: 2), [.cancelled, .cancelled])
    }

    // MARK: terminate

    func testEveryCallAfterTerminateFailsWithFailedPrecondition() throws {
        let ref = db.document("cities/SF")
        set(ref, ["v": 1])
        XCTAssertNil(waitError { db.terminate(completion: $0) })
        XCTAssertNil(waitError { db.terminate(completion: $0) }, "terminate is idempotent")

        XCTAssertEqual(code(waitError { ref.setData(["v": 2], completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitError { ref.setData(["v": 2], merge: true, completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitError { ref.updateData(["v": 2], completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitError { ref.delete(completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitError { db.collection("c").addDocument(data: ["v": 1], completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitResult { ref.getDocument(completion: $0) }.1), .failedPrecondition)
        XCTAssertEqual(code(waitResult { ref.getDocument(source: .cache, completion: $0) }.1), .failedPrecondition)
        XCTAssertEqual(code(waitResult { self.db.collection("cities").getDocuments(completion: $0) }.1), .failedPrecondition)
        XCTAssertEqual(code(waitResult { self.db.collection("cities").count.getAggregation(source: .server, completion: $0) }.1), .failedPrecondition)
        XCTAssertEqual(code(waitError { db.disableNetwork(completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitError { db.enableNetwork(completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitError { db.waitForPendingWrites(completion: $0) }), .failedPrecondition)
        let b = db.batch()
        b.setData(["v": 1], forDocument: ref)
        XCTAssertEqual(code(waitError { b.commit(completion: $0) }), .failedPrecondition)
        XCTAssertEqual(code(waitResult { self.db.runTransaction({ _, _ in nil }, completion: $0) }.1), .failedPrecondition)

        let listened = Recorder<FirestoreErrorCode?>()
        let r1 = ref.addSnapshotListener { s, e in listened.append(s == nil ? code(e) : nil) }
        let r2 = db.collection("cities").addSnapshotListener { s, e in listened.append(s == nil ? code(e) : nil) }
        XCTAssertEqual(listened.wait(for: 2), [.failedPrecondition, .failedPrecondition])
        r1.remove(); r2.remove()

        XCTAssertThrowsError(try runAsync { try await ref.getDocument() }.get()) { XCTAssertEqual(code($0), .failedPrecondition) }
        XCTAssertThrowsError(try runAsync { try await ref.setData(["v": 3]) }.get()) { XCTAssertEqual(code($0), .failedPrecondition) }
    }

    func testTerminateStopsListeners() {
        let seen = Recorder<String>()
        let reg = db.collection("cities").addSnapshotListener { s, e in seen.append(s != nil ? "snapshot" : "error") }
        XCTAssertEqual(seen.wait(for: 1), ["snapshot"])
        db.terminate()
        reg.remove()
        XCTAssertEqual(seen.all, ["snapshot"])
    }

    func testAsyncTerminate() throws {
        try runAsync { [db] in try await db.terminate() }.get()
        XCTAssertEqual(code(waitError { self.db.document("a/b").setData([:], completion: $0) }), .failedPrecondition)
    }

    func testErrorsBridgeToNSErrorAsInTheFirebaseSDK() {
        let e = waitError { db.document("c/missing").updateData(["v": 1], completion: $0) }
        let ns = e as NSError?
        XCTAssertEqual(ns?.domain, FirestoreErrorDomain)
        XCTAssertEqual(ns?.domain, "FIRFirestoreErrorDomain")
        XCTAssertEqual(ns?.code, Int(FirestoreErrorCode.notFound.rawValue))
        XCTAssertEqual(ns?.code, 5)
        XCTAssertEqual(ns?.localizedDescription, (e as? FirestoreError)?.message)
        XCTAssertTrue(ns?.localizedDescription.contains("c/missing") ?? false)
    }

    // MARK: collection groups

    func testCollectionGroupQueriesEveryCollectionWithThatId() {
        seed(db, ["cities/SF/landmarks/gg": ["name": "Golden Gate", "type": "bridge"],
                  "cities/SF/landmarks/lh": ["name": "Legion of Honor", "type": "museum"],
                  "cities/TOK/landmarks/nm": ["name": "National Museum", "type": "museum"],
                  "landmarks/top": ["name": "Top", "type": "museum"],
                  "cities/SF/landmarksX/no": ["name": "No", "type": "museum"],
                  "cities/SF/landmarks/gg/landmarks2/no": ["name": "No", "type": "museum"]])
        let group = db.collectionGroup("landmarks")
        XCTAssertEqual(get(group)?.documents.map { $0.reference.path },
                       ["cities/SF/landmarks/gg", "cities/SF/landmarks/lh", "cities/TOK/landmarks/nm", "landmarks/top"])
        XCTAssertEqual(ids(group.whereField("type", isEqualTo: "museum")), ["lh", "nm", "top"])
        XCTAssertEqual(ids(group.order(by: "name", descending: true).limit(to: 2)), ["top", "nm"])
        // documentID() in a group takes a full path.
        XCTAssertEqual(ids(group.order(by: FieldPath.documentID()).start(after: ["cities/SF/landmarks/lh"])), ["nm", "top"])
        XCTAssertEqual(ids(group.whereField(FieldPath.documentID(), isEqualTo: "cities/TOK/landmarks/nm")), ["nm"])
        let count = waitResult { group.count.getAggregation(source: .server, completion: $0) }.0
        XCTAssertEqual(count?.count, 4)

        let live = Recorder<[String]>()
        let reg = group.whereField("type", isEqualTo: "museum").addSnapshotListener { s, _ in live.append(s?.documents.map { $0.documentID } ?? []) }
        defer { reg.remove() }
        XCTAssertEqual(live.wait(for: 1).last, ["lh", "nm", "top"])
        db.document("countries/JP/landmarks/fuji").setData(["name": "Fuji", "type": "museum"])
        XCTAssertEqual(live.wait(for: 2).last, ["lh", "nm", "fuji", "top"], "by full path: cities/... < countries/... < landmarks/...")
    }

    func testInvalidCollectionGroupIdReportsAnError() {
        for id in ["a/b", ""] {
            let q = db.collectionGroup(id)
            XCTAssertThrowsError(try q.validate()) { XCTAssertEqual(code($0), .invalidArgument) }
            XCTAssertEqual(code(waitResult { q.getDocuments(completion: $0) }.1), .invalidArgument)
        }
    }
}
