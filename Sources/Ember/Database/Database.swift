import Foundation
import EmberModel
import EmberCore

/// The handle `observe` returns (Firebase's `DatabaseHandle`).
public typealias DatabaseHandle = UInt

/// The kinds of events an observer can ask for (raw values as Firebase's `FIRDataEventType`).
public enum DataEventType: Int, Sendable {
    case childAdded = 0, childRemoved = 1, childChanged = 2, childMoved = 3, value = 4

    var core: TreeEventType { TreeEventType(rawValue: rawValue)! }
}

/// Responsible for: the Realtime-Database-style tree of an Ember database, shaped like the
/// Firebase Apple SDK's `Database`: references, and the network switch (shared with the
/// documents: the tree lives in the same database). Callbacks run on Ember's event thread.
///
///     let ref = db.database().reference()
///     ref.child("posts").childByAutoId().setValue(["title": "Hi"])
public final class Database: Sendable {
    public let firestore: Firestore
    var client: EmberClient { firestore.client }

    init(firestore: Firestore) { self.firestore = firestore }

    /// The tree of the process-wide in-memory database (`Firestore.firestore()`).
    public static func database() -> Database { Firestore.firestore().database() }

    /// A reference to the root.
    public func reference() -> DatabaseReference { DatabaseReference(database: self, path: .root) }

    /// A reference to `path` ("posts/abc"); an invalid path is reported by the operations on it.
    public func reference(withPath path: String) -> DatabaseReference { reference().child(path) }

    /// Stops talking to the backend (for the documents too): writes queue, observers keep
    /// working on what the client has.
    public func goOffline() { try? client.disableNetwork() }

    /// Reconnects: queued writes are sent, observed locations are fetched again.
    public func goOnline() { try? client.enableNetwork() }

    func post(_ work: @escaping @Sendable () -> Void) { firestore.post(work) }
}

extension Firestore {
    /// The Realtime-Database-style tree living in this database.
    public func database() -> Database { Database(firestore: self) }
}
