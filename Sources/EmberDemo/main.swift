// Ember demo: the scenario of the seed "Get realtime updates with Cloud Firestore", run on the
// embedded default: a durable database file (here in a fresh temporary directory) with its
// in-process backend. It prints every event.
import Foundation
import Ember

let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ember-demo-\(getpid())")
try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: dir) }
let settings = FirestoreSettings()
settings.path = dir.appendingPathComponent("demo.ember").path
let db = try Firestore.open(settings: settings)
print("== database: \(settings.path!) (durable, SQLite)")
let done = DispatchSemaphore(value: 0)
var step = 0

func wait(_ what: String) {
    if done.wait(timeout: .now() + 5) == .timedOut { print("timed out waiting for \(what)"); exit(1) }
}

print("== seed data: cities")
let cities = db.collection("cities")
let batch = db.batch()
batch.setData(["name": "San Francisco", "state": "CA", "country": "USA", "population": 860000], forDocument: cities.document("SF"))
batch.setData(["name": "Los Angeles", "state": "CA", "country": "USA", "population": 3900000], forDocument: cities.document("LA"))
batch.setData(["name": "Washington D.C.", "state": NSNull(), "country": "USA", "population": 680000], forDocument: cities.document("DC"))
batch.setData(["name": "Tokyo", "state": NSNull(), "country": "Japan", "population": 9000000], forDocument: cities.document("TOK"))
batch.commit { _ in done.signal() }
wait("the seed batch")

print("\n== listen to cities/SF (with metadata changes)")
let docListener = cities.document("SF").addSnapshotListener(includeMetadataChanges: true) { snapshot, error in
    guard let document = snapshot else { print("Error fetching document: \(error!)"); return }
    let source = document.metadata.hasPendingWrites ? "Local" : "Server"
    print("  [cities/SF] \(source) data: \(document.data().map { "\($0["name"]!), population \($0["population"]!)" } ?? "none"), fromCache=\(document.metadata.isFromCache)")
    done.signal()
}
wait("the first document snapshot")

print("\n== listen to cities where state == \"CA\"")
let queryListener = cities.whereField("state", isEqualTo: "CA").addSnapshotListener { snapshot, error in
    guard let snapshot else { print("Error fetching snapshots: \(error!)"); return }
    for diff in snapshot.documentChanges {
        let kind = diff.type == .added ? "New city" : diff.type == .modified ? "Modified city" : "Removed city"
        let old = diff.oldIndex == UInt(NSNotFound) ? "-" : "\(diff.oldIndex)"
        let new = diff.newIndex == UInt(NSNotFound) ? "-" : "\(diff.newIndex)"
        print("  [state == CA] \(kind): \(diff.document.documentID) (old index \(old), new index \(new))")
    }
    print("  [state == CA] now: \(snapshot.documents.map { $0.documentID }), fromCache=\(snapshot.metadata.isFromCache)")
    done.signal()
}
wait("the first query snapshot")

print("\n== a local write: raised at once as pending, then acknowledged")
cities.document("SF").updateData(["population": FieldValue.increment(Int64(1000))])
wait("the local event")
wait("the query event")
wait("the acknowledgement")

print("\n== a new city in CA, then one leaves")
cities.document("SJ").setData(["name": "San Jose", "state": "CA", "country": "USA", "population": 1000000])
wait("San Jose added")
cities.document("LA").updateData(["state": "NV"])
wait("Los Angeles removed")

print("\n== network disabled: writes queue, listeners read the cache")
db.disableNetwork { _ in done.signal() }
wait("disableNetwork")
wait("the from-cache document event")
cities.document("SF").updateData(["population": FieldValue.increment(Int64(1))])
wait("the offline local event")
wait("the offline query event")
db.waitForPendingWrites { _ in print("  all pending writes acknowledged"); done.signal() }

print("\n== network enabled: the queued write is sent and acknowledged")
db.enableNetwork { _ in done.signal() }
wait("enableNetwork")
for what in ["the server event", "the acknowledged event", "waitForPendingWrites"] { wait(what) }

docListener.remove()
queryListener.remove()
print("\n== listeners removed; done")
db.terminate()
