import Foundation
import EmberModel
import EmberCore

/// Responsible for: settings of an Ember database, shaped like the Firebase SDK's.
///
///     let s = FirestoreSettings(); s.cacheSettings = MemoryCacheSettings()
public final class FirestoreSettings: @unchecked Sendable {
    /// Where the embedded database lives (Ember's addition). nil: in memory.
    public var path: String?
    public var cacheSettings: any LocalCacheSettings = MemoryCacheSettings()
    public init() {}
}

/// Marker for the cache kinds.
public protocol LocalCacheSettings {}

/// Responsible for: the in-memory cache choice (nothing survives the process).
public struct MemoryCacheSettings: LocalCacheSettings {
    public init() {}
    public init(garbageCollectorSettings: MemoryLRUGCSettings) {}
}

public struct MemoryLRUGCSettings { public init() {} }

/// Responsible for: the persistent cache choice and its size threshold.
public struct PersistentCacheSettings: LocalCacheSettings {
    public let sizeBytes: NSNumber
    public init(sizeBytes: NSNumber = NSNumber(value: 100 * 1024 * 1024)) { self.sizeBytes = sizeBytes }
}

/// Responsible for: one Ember database as the Firebase Apple SDK's `Firestore` shapes it:
/// references, batches, transactions, the network switch and shutdown. Completion handlers and
/// listener callbacks run on Ember's event thread, one at a time, in order.
///
///     let db = try Firestore.open(settings: FirestoreSettings())
///     db.collection("cities").document("SF").setData(["name": "San Francisco"])
public final class Firestore: @unchecked Sendable {
    let client: EmberClient
    public let settings: FirestoreSettings

    private static let sharedLock = Lock()
    nonisolated(unsafe) private static var shared: Firestore?

    init(client: EmberClient, settings: FirestoreSettings) {
        self.client = client
        self.settings = settings
    }

    /// The process-wide in-memory instance (Firebase's `Firestore.firestore()`).
    public static func firestore() -> Firestore {
        sharedLock.withLock {
            if let s = shared, !s.client.closed { return s }
            let s = Firestore(client: EmberClient(), settings: FirestoreSettings())
            shared = s
            return s
        }
    }

    /// Opens a database. Durable storage at `settings.path` is not available yet: giving a path
    /// fails with `unimplemented` rather than silently keeping the data in memory.
    public static func open(settings: FirestoreSettings = FirestoreSettings()) throws -> Firestore {
        if let p = settings.path {
            throw EmberError(.unimplemented, "Durable storage at '\(p)' is not available yet (it arrives with the SQLite persistence issue); open without a path for an in-memory database.")
        }
        return Firestore(client: EmberClient(), settings: settings)
    }

    public func collection(_ collectionPath: String) -> CollectionReference {
        CollectionReference(firestore: self, path: collectionPath)
    }

    public func document(_ documentPath: String) -> DocumentReference {
        DocumentReference(firestore: self, path: documentPath)
    }

    public func collectionGroup(_ collectionID: String) -> Query {
        if collectionID.contains("/") || collectionID.isEmpty {
            return Query(firestore: self, error: EmberError.invalidArgument("Invalid collection ID '\(collectionID)' passed to collectionGroup(): it must not be empty nor contain '/'."))
        }
        return Query(firestore: self, core: EmberModel.Query(collectionGroup: collectionID))
    }

    public func batch() -> WriteBatch { WriteBatch(firestore: self) }

    // MARK: network

    public func disableNetwork(completion: ((Error?) -> Void)? = nil) {
        deliver(Result { try client.disableNetwork() }, completion)
    }

    public func enableNetwork(completion: ((Error?) -> Void)? = nil) {
        deliver(Result { try client.enableNetwork() }, completion)
    }

    public func disableNetwork() async throws { try client.disableNetwork() }
    public func enableNetwork() async throws { try client.enableNetwork() }

    public func waitForPendingWrites(completion: @escaping (Error?) -> Void) {
        do { try client.waitForPendingWrites { completion($0) } } catch { post { completion(error) } }
    }

    public func waitForPendingWrites() async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            waitForPendingWrites { e in if let e { c.resume(throwing: e) } else { c.resume() } }
        }
    }

    /// Closes the database: listeners stop, later calls fail with failedPrecondition.
    public func terminate(completion: ((Error?) -> Void)? = nil) {
        client.close()
        completion?(nil)
    }

    public func terminate() async throws { client.close() }

    // MARK: helpers

    func post(_ work: @escaping () -> Void) {
        if client.closed { work() } else { client.events.post(work) }
    }

    func deliver(_ r: Result<Void, Error>, _ completion: ((Error?) -> Void)?) {
        guard let completion else { return }
        let err: Error? = { if case .failure(let e) = r { return e }; return nil }()
        post { completion(err) }
    }
}
