import XCTest
import Foundation
import Ember

/// The Swift samples of seed 000 ("Get realtime updates with Cloud Firestore"), pasted as they
/// are (only `db` is obtained differently). A local `print` shadows Swift's so each test can
/// assert what its sample prints; samples whose body is `// ...` get a twin listener with the
/// same options that records what the sample's listener observes.
final class SeedSamplesTests: XCTestCase {

    // Sample 1: listen to a document.
    func testSample1ListenToADocumentPrintsItsData() throws {
        let out = Recorder<String>()
        @Sendable func print(_ items: Any...) { out.append(items.map { "\($0)" }.joined(separator: " ")) }
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }

        db.collection("cities").document("SF")
          .addSnapshotListener { documentSnapshot, error in
            guard let document = documentSnapshot else {
              print("Error fetching document: \(error!)")
              return
            }
            guard let data = document.data() else {
              print("Document data was empty.")
              return
            }
            print("Current data: \(data)")
          }

        XCTAssertEqual(out.wait(for: 1), ["Document data was empty."])
        db.collection("cities").document("SF").setData(["name": "San Francisco"])
        XCTAssertEqual(out.wait(for: 2), ["Document data was empty.", "Current data: [\"name\": \"San Francisco\"]"])
        set(db.collection("cities").document("SF"), ["population": 860000])
        XCTAssertEqual(out.wait(for: 3).last, "Current data: [\"population\": 860000]")
        db.collection("cities").document("SF").delete()
        XCTAssertEqual(out.wait(for: 4).last, "Document data was empty.")
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        // The acknowledgements are metadata-only changes: nothing else is printed.
        set(db.collection("cities").document("SF"), ["name": "SF"])
        XCTAssertEqual(out.wait(for: 5), ["Document data was empty.", "Current data: [\"name\": \"San Francisco\"]",
                                          "Current data: [\"population\": 860000]", "Document data was empty.",
                                          "Current data: [\"name\": \"SF\"]"])
    }

    // Sample 1 on a terminated database: the error reaches the listener and is printed.
    func testSample1ListenerGetsTheErrorOfATerminatedDatabase() throws {
        let out = Recorder<String>()
        @Sendable func print(_ items: Any...) { out.append(items.map { "\($0)" }.joined(separator: " ")) }
        let db = try Firestore.open(settings: FirestoreSettings())
        db.terminate()

        db.collection("cities").document("SF")
          .addSnapshotListener { documentSnapshot, error in
            guard let document = documentSnapshot else {
              print("Error fetching document: \(error!)")
              return
            }
            guard let data = document.data() else {
              print("Document data was empty.")
              return
            }
            print("Current data: \(data)")
          }

        XCTAssertEqual(out.wait(for: 1), ["Error fetching document: FAILED_PRECONDITION: The database is closed."])
    }

    // Sample 2: events for local changes.
    func testSample2LocalChangesPrintLocalThenServerState() throws {
        let out = Recorder<String>()
        @Sendable func print(_ items: Any...) { out.append(items.map { "\($0)" }.joined(separator: " ")) }
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }

        db.collection("cities").document("SF")
          .addSnapshotListener { documentSnapshot, error in
            guard let document = documentSnapshot else {
              print("Error fetching document: \(error!)")
              return
            }
            let source = document.metadata.hasPendingWrites ? "Local" : "Server"
            print("\(source) data: \(document.data() ?? [:])")
          }

        XCTAssertEqual(out.wait(for: 1), ["Server data: [:]"])
        db.collection("cities").document("SF").setData(["name": "San Francisco"])
        XCTAssertEqual(out.wait(for: 2).last, "Local data: [\"name\": \"San Francisco\"]")
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        // Without includeMetadataChanges the acknowledgement is not raised; the next write is.
        db.collection("cities").document("SF").setData(["name": "SF"])
        XCTAssertEqual(out.wait(for: 3), ["Server data: [:]", "Local data: [\"name\": \"San Francisco\"]", "Local data: [\"name\": \"SF\"]"])
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        db.collection("cities").document("SF").delete()
        XCTAssertEqual(out.wait(for: 4).last, "Server data: [:]")
    }

    // Sample 3: listen to document metadata.
    func testSample3MetadataListenerSeesTheAcknowledgement() throws {
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }
        let seen = Recorder<String>()

        // Listen to document metadata.
        db.collection("cities").document("SF")
          .addSnapshotListener(includeMetadataChanges: true) { documentSnapshot, error in
            // ...
          }

        // What that listener observes, recorded by a twin with the same options.
        let twin = db.collection("cities").document("SF")
          .addSnapshotListener(includeMetadataChanges: true) { documentSnapshot, error in
            guard let d = documentSnapshot else { return seen.append("error \(error!)") }
            seen.append("exists=\(d.exists) pending=\(d.metadata.hasPendingWrites) cache=\(d.metadata.isFromCache) name=\(d.get("name") ?? "-")")
          }
        defer { twin.remove() }
        XCTAssertEqual(seen.wait(for: 1), ["exists=false pending=false cache=false name=-"])
        db.collection("cities").document("SF").setData(["name": "San Francisco"])
        XCTAssertEqual(seen.wait(for: 3), ["exists=false pending=false cache=false name=-",
                                           "exists=true pending=true cache=false name=San Francisco",
                                           "exists=true pending=false cache=false name=San Francisco"])
    }

    // Sample 4: listen options (cache only, with metadata changes).
    func testSample4CacheOnlyListenerRaisesAtOnceFromCache() throws {
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }
        let seen = Recorder<String>()

        // Set up listener options
        let options = SnapshotListenOptions()
            .withSource(ListenSource.cache)
            .withIncludeMetadataChanges(true)
        db.collection("cities").document("SF")
          .addSnapshotListener(options: options) { documentSnapshot, error in
            // ...
          }

        XCTAssertEqual(options.source, .cache)
        XCTAssertTrue(options.includeMetadataChanges)
        let twin = db.collection("cities").document("SF").addSnapshotListener(options: options) { documentSnapshot, error in
            guard let d = documentSnapshot else { return seen.append("error \(error!)") }
            seen.append("exists=\(d.exists) pending=\(d.metadata.hasPendingWrites) cache=\(d.metadata.isFromCache)")
        }
        defer { twin.remove() }
        // Cache-only: the first event comes at once, from the (empty) cache.
        XCTAssertEqual(seen.wait(for: 1), ["exists=false pending=false cache=true"])
        db.collection("cities").document("SF").setData(["name": "San Francisco"])
        // The local write, then its acknowledgement (a metadata change), always from the cache.
        XCTAssertEqual(seen.wait(for: 3), ["exists=false pending=false cache=true",
                                           "exists=true pending=true cache=true",
                                           "exists=true pending=false cache=true"])
    }

    // Sample 5: listen to multiple documents in a collection.
    func testSample5QueryListenerPrintsCurrentCitiesInCA() throws {
        let out = Recorder<String>()
        @Sendable func print(_ items: Any...) { out.append(items.map { "\($0)" }.joined(separator: " ")) }
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }

        db.collection("cities").whereField("state", isEqualTo: "CA")
          .addSnapshotListener { querySnapshot, error in
            guard let documents = querySnapshot?.documents else {
              print("Error fetching documents: \(error!)")
              return
            }
            let cities = documents.compactMap { $0["name"] }
            print("Current cities in CA: \(cities)")
          }

        XCTAssertEqual(out.wait(for: 1), ["Current cities in CA: []"])
        db.collection("cities").document("SF").setData(["name": "San Francisco", "state": "CA"])
        XCTAssertEqual(out.wait(for: 2).last, "Current cities in CA: [\"San Francisco\"]")
        db.collection("cities").document("LA").setData(["name": "Los Angeles", "state": "CA"])
        XCTAssertEqual(out.wait(for: 3).last, "Current cities in CA: [\"Los Angeles\", \"San Francisco\"]")
        db.collection("cities").document("TOK").setData(["name": "Tokyo", "state": NSNull()])
        db.collection("cities").document("SF").updateData(["state": "NV"])
        XCTAssertEqual(out.wait(for: 4).last, "Current cities in CA: [\"Los Angeles\"]")
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        db.collection("cities").document("LA").delete()
        XCTAssertEqual(out.wait(for: 5), ["Current cities in CA: []", "Current cities in CA: [\"San Francisco\"]",
                                          "Current cities in CA: [\"Los Angeles\", \"San Francisco\"]",
                                          "Current cities in CA: [\"Los Angeles\"]", "Current cities in CA: []"])
    }

    // Sample 6: view changes between snapshots.
    func testSample6DocumentChangesPrintNewModifiedRemoved() throws {
        let out = Recorder<String>()
        @Sendable func print(_ items: Any...) { out.append(items.map { "\($0)" }.joined(separator: " ")) }
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }
        seed(db, ["cities/LA": ["state": "CA"]])

        db.collection("cities").whereField("state", isEqualTo: "CA")
          .addSnapshotListener { querySnapshot, error in
            guard let snapshot = querySnapshot else {
              print("Error fetching snapshots: \(error!)")
              return
            }
            snapshot.documentChanges.forEach { diff in
              if (diff.type == .added) {
                print("New city: \(diff.document.data())")
              }
              if (diff.type == .modified) {
                print("Modified city: \(diff.document.data())")
              }
              if (diff.type == .removed) {
                print("Removed city: \(diff.document.data())")
              }
            }
          }

        XCTAssertEqual(out.wait(for: 1), ["New city: [\"state\": \"CA\"]"])
        db.collection("cities").document("SF").setData(["state": "CA"])
        XCTAssertEqual(out.wait(for: 2).last, "New city: [\"state\": \"CA\"]")
        db.collection("cities").document("SF").updateData(["population": 860000])
        let modified = out.wait(for: 3).last ?? ""
        XCTAssertTrue(printed("Modified city: ", ["\"state\": \"CA\"", "\"population\": 860000"]).contains(modified), modified)
        db.collection("cities").document("LA").delete()
        XCTAssertEqual(out.wait(for: 4).last, "Removed city: [\"state\": \"CA\"]")
        // Leaving the query by a change of the filtered field is a removal too, with the old data.
        db.collection("cities").document("SF").setData(["state": "NV"])
        let removed = out.wait(for: 5).last ?? ""
        XCTAssertTrue(printed("Removed city: ", ["\"state\": \"CA\"", "\"population\": 860000"]).contains(removed), removed)
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        XCTAssertEqual(out.count, 5, "\(out.all)")
    }

    // Sample 7: detach a listener.
    func testSample7DetachedListenerGetsNoMoreEvents() throws {
        let db = try Firestore.open(settings: FirestoreSettings())
        defer { db.terminate() }

        let listener = db.collection("cities").addSnapshotListener { querySnapshot, error in
          // ...
        }

        // ...

        // Stop listening to changes
        listener.remove()

        listener.remove()   // idempotent
        // The same steps with a recording listener: nothing arrives after remove().
        let seen = Recorder<Int>()
        let twin = db.collection("cities").addSnapshotListener { querySnapshot, error in
            seen.append(querySnapshot?.count ?? -1)
        }
        XCTAssertEqual(seen.wait(for: 1), [0])
        twin.remove()
        let barrier = Recorder<Int>()
        let other = db.collection("cities").addSnapshotListener { s, _ in barrier.append(s?.count ?? -1) }
        defer { other.remove() }
        barrier.wait(for: 1)
        set(db.collection("cities").document("SF"), ["name": "San Francisco"])
        XCTAssertEqual(barrier.wait(for: 2), [0, 1])
        XCTAssertEqual(seen.all, [0])
    }

    // Sample 8: handle listen errors.
    func testSample8ListenErrorIsPrintedOnlyOnError() throws {
        let out = Recorder<String>()
        @Sendable func print(_ items: Any...) { out.append(items.map { "\($0)" }.joined(separator: " ")) }
        let db = try Firestore.open(settings: FirestoreSettings())

        db.collection("cities")
          .addSnapshotListener { querySnapshot, error in
            if let error = error {
              print("Error retreiving collection: \(error)")
            }
          }

        let barrier = Recorder<Int>()
        let other = db.collection("cities").addSnapshotListener { s, _ in barrier.append(s?.count ?? -1) }
        barrier.wait(for: 1)
        set(db.collection("cities").document("SF"), ["name": "San Francisco"])
        XCTAssertEqual(barrier.wait(for: 2), [0, 1])
        XCTAssertEqual(out.all, [])
        other.remove()

        db.terminate()
        db.collection("cities")
          .addSnapshotListener { querySnapshot, error in
            if let error = error {
              print("Error retreiving collection: \(error)")
            }
          }
        XCTAssertEqual(out.wait(for: 1), ["Error retreiving collection: FAILED_PRECONDITION: The database is closed."])
    }
}
