// Tests for the callbacks of the public API (Listening.swift and every completion): a callback
// written in main-actor code (an app's UI code, a top-level script such as the demo) runs on
// Ember's event thread. Its parameter type is @Sendable, so Swift 6 does not take the closure
// for a main-actor one: a closure inside it would check for the main actor and trap when Ember
// runs the callback on its own thread. Each callback here holds such a closure (`map`).
import XCTest
import Foundation
import Ember

final class ListeningTests: XCTestCase {
    /// Registers from main-actor code; each callback records where it ran.
    @MainActor
    static func startFromMainActor(_ db: Firestore, _ ran: Recorder<String>) -> [ListenerRegistration] {
        let doc = db.collection("cities").document("SF")
        let a = doc.addSnapshotListener { snapshot, _ in
            // A closure inside the callback, as the demo's `data().map { ... }`.
            ran.append("document \(snapshot?.data().map { _ in true } ?? false)")
        }
        let b = db.collection("cities").addSnapshotListener { snapshot, _ in
            ran.append("query \(snapshot.map { s in s.count } ?? -1)")
        }
        doc.setData(["name": "San Francisco"]) { error in ran.append("write \(error.map { _ in false } ?? true)") }
        let tree = db.database().reference().child("posts")
        _ = tree.observe(.childAdded) { snap in ran.append("tree \([snap.key].map { k in k }[0])") }
        tree.child("p1").setValue(["title": "Hi"]) { error, _ in ran.append("tree write \(error.map { _ in false } ?? true)") }
        return [a, b]
    }

    func testCallbacksWrittenInMainActorCodeRunOnTheEventThread() throws {
        let db = try openDB()
        defer { db.terminate() }
        let ran = Recorder<String>()
        // XCTest runs tests on the main thread, the main actor's.
        let registrations = MainActor.assumeIsolated { Self.startFromMainActor(db, ran) }
        defer { registrations.forEach { $0.remove() } }
        let seen = Set(ran.wait(until: { _ in
            let all = Set(ran.all)
            return all.contains("document true") && all.contains("query 1") && all.contains("write true")
                && all.contains("tree p1") && all.contains("tree write true")
        }))
        XCTAssertTrue(seen.isSuperset(of: ["document true", "query 1", "write true", "tree p1", "tree write true"]), "\(seen)")
    }
}
