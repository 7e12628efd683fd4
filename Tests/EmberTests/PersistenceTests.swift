import XCTest
import Foundation
import Ember

/// Firestore on a durable path: opening and reopening, cache settings, index configuration and
/// the index manager, clearPersistence and terminate, the settings' errors.
final class PersistenceTests: XCTestCase {
    var dir: String!

    override func setUp() {
        dir = NSTemporaryDirectory() + "ember-api-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func settings(_ cache: LocalCacheSettings = PersistentCacheSettings()) -> FirestoreSettings {
        let s = FirestoreSettings()
        s.path = dir + "/app.ember"
        s.cacheSettings = cache
        return s
    }

    func testOpenWritesReopenReads() async throws {
        let db = try Firestore.open(settings: settings())
        XCTAssertTrue(db.settings.isPersistenceEnabled, "persistence is on by default")
        try await db.collection("cities").document("SF").setData(["name": "San Francisco", "state": "CA"])
        try await db.terminate()
        let again = try Firestore.open(settings: settings())
        try await again.disableNetwork()
        let snap = try await again.collection("cities").document("SF").getDocument(source: .cache)
        XCTAssertEqual(snap.data()?["name"] as? String, "San Francisco")
        XCTAssertTrue(snap.metadata.isFromCache)
        do {
            _ = try await again.collection("cities").document("NOPE").getDocument()
            XCTFail("an uncached document offline is an error")
        } catch { XCTAssertEqual(code(error), .unavailable) }
        let q = try await again.collection("cities").whereField("state", isEqualTo: "CA").getDocuments()
        XCTAssertEqual(q.documents.count, 1)
        try await again.terminate()
    }

    func testIndexConfigurationAndManager() async throws {
        let db = try Firestore.open(settings: settings())
        let manager = try XCTUnwrap(db.persistentCacheIndexManager)
        manager.enableIndexAutoCreation()
        manager.disableIndexAutoCreation()
        try db.setIndexConfiguration(fromJSON: """
            {"indexes": [{"collectionGroup": "cities", "queryScope": "COLLECTION",
                          "fields": [{"fieldPath": "state", "order": "ASCENDING"}]}], "fieldOverrides": []}
            """)
        XCTAssertThrowsError(try db.setIndexConfiguration(fromJSON: "{\"indexes\": 3}")) { XCTAssertEqual(code($0), .invalidArgument) }
        let done = expectation(description: "completion")
        db.setIndexConfiguration("{bad") { e in XCTAssertEqual(code(e), .invalidArgument); done.fulfill() }
        await fulfillment(of: [done], timeout: 5)
        for i in 0..<20 { db.collection("cities").document("c\(i)").setData(["state": i % 2 == 0 ? "CA" : "NY"]) { _ in } }
        try await db.waitForPendingWrites()
        let cached = try await db.collection("cities").whereField("state", isEqualTo: "CA").getDocuments(source: .cache)
        XCTAssertEqual(cached.documents.count, 10)
        manager.deleteAllIndexes()
        let again = try await db.collection("cities").whereField("state", isEqualTo: "CA").getDocuments(source: .cache)
        XCTAssertEqual(again.documents.count, 10)
        try await db.terminate()

        let memory = try Firestore.open(settings: settings(MemoryCacheSettings()))
        XCTAssertNil(memory.persistentCacheIndexManager, "no index manager for a memory cache")
        XCTAssertNoThrow(try memory.setIndexConfiguration(fromJSON: "{}"))
        try await memory.terminate()
    }

    func testClearPersistenceOnlyAfterTerminate() async throws {
        let db = try Firestore.open(settings: settings())
        try await db.collection("c").document("a").setData(["v": 1])
        do { try await db.clearPersistence(); XCTFail("must fail while running") } catch { XCTAssertEqual(code(error), .failedPrecondition) }
        XCTAssertThrowsError(try Firestore.open(settings: settings())) { XCTAssertEqual(code($0), .failedPrecondition, "the path is locked") }
        try await db.terminate()
        try await db.clearPersistence()
        let fresh = try Firestore.open(settings: settings())
        let snap = try await fresh.collection("c").document("a").getDocument()
        XCTAssertFalse(snap.exists)
        try await fresh.terminate()
    }

    func testCacheSizeSettings() throws {
        XCTAssertThrowsError(try Firestore.open(settings: settings(PersistentCacheSettings(sizeBytes: 1000)))) { XCTAssertEqual(code($0), .invalidArgument) }
        let unlimited = try Firestore.open(settings: settings(PersistentCacheSettings(sizeBytes: NSNumber(value: FirestoreCacheSizeUnlimited))))
        XCTAssertEqual(try unlimited.collectGarbage(), 0)
        unlimited.terminate()
        let s = settings()
        s.isPersistenceEnabled = false
        XCTAssertTrue(s.cacheSettings is MemoryCacheSettings)
        s.isPersistenceEnabled = true
        s.cacheSizeBytes = 5 * 1024 * 1024
        XCTAssertEqual((s.cacheSettings as? PersistentCacheSettings)?.sizeBytes, 5_242_880)
    }

    func testBadPathsGiveClearErrors() {
        let s = FirestoreSettings()
        s.path = "/nonexistent-ember/app.ember"
        XCTAssertThrowsError(try Firestore.open(settings: s)) { XCTAssertEqual(code($0), .unavailable) }
        let garbage = dir + "/garbage.ember"
        FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 7, count: 4096))
        s.path = garbage
        XCTAssertThrowsError(try Firestore.open(settings: s)) { XCTAssertEqual(code($0), .dataLoss) }
    }

    // Ids that begin with a combining mark: "/" before one still separates (Firestore's clients
    // split at the code unit). Before, "a/\u{301}b" was one segment with a "/" inside.
    func testIdsThatBeginWithACombiningMarkRoundTrip() async throws {
        let db = try Firestore.open(settings: settings())
        try await db.document("rooms/\u{301}r/messages/\u{301}m").setData(["n": 1])
        try await db.collection("rooms").document("\u{301}r").collection("messages").document("\u{301}n").setData(["n": 2])
        try await db.terminate()
        let again = try Firestore.open(settings: settings())
        try await again.disableNetwork()
        let ref = again.document("rooms/\u{301}r/messages/\u{301}m")
        XCTAssertEqual(ref.documentID, "\u{301}m")
        XCTAssertEqual(ref.parent.collectionID, "messages")
        XCTAssertEqual(ref.parent.parent?.documentID, "\u{301}r")
        let m = try await ref.getDocument(source: .cache)
        XCTAssertEqual(m.data()?["n"] as? Int, 1)
        let q = try await again.collection("rooms/\u{301}r/messages").getDocuments(source: .cache)
        XCTAssertEqual(q.documents.map { $0.documentID }, ["\u{301}m", "\u{301}n"])
        XCTAssertEqual(q.documents.map { $0.reference.path }, ["rooms/\u{301}r/messages/\u{301}m", "rooms/\u{301}r/messages/\u{301}n"])
        let g = try await again.collectionGroup("messages").getDocuments(source: .cache)
        XCTAssertEqual(g.documents.count, 2)
        try await again.terminate()
    }
}
