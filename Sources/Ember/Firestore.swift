import EmberConcurrency
import Foundation
import EmberModel
import EmberCore

/// Firestore's `FirestoreCacheSizeUnlimited`: a persistent cache that is never cleaned up.
public let FirestoreCacheSizeUnlimited: Int64 = EmberOptions.cacheSizeUnlimited

/// Responsible for: settings of an Ember database, shaped like the Firebase SDK's.
///
///     let s = FirestoreSettings(); s.path = "app.ember"; s.cacheSettings = MemoryCacheSettings()
public final class FirestoreSettings: @unchecked Sendable { // filled in before `Firestore.open`, which copies what it needs
    /// Where the embedded database lives (Ember's addition). nil: in memory.
    public var path: String?
    /// Persistent by default (Firestore's default on Apple platforms); with a path the cache,
    /// pending writes and targets are then durable. `MemoryCacheSettings` keeps them in memory.
    public var cacheSettings: any LocalCacheSettings = PersistentCacheSettings()
    /// The server the documents sync with, as `host:port` (`"127.0.0.1:8080"`, `"[::1]:8080"`):
    /// `ember serve` or the Firestore emulator. nil (Ember's default): the in-process backend.
    /// With a host, `path` still holds the durable cache and pending writes, and the
    /// Realtime-Database tree stays local (in-process). Clients use the database
    /// `projects/demo-ember/databases/(default)` of the server.
    public var host: String?
    /// Whether the connection to `host` uses TLS: true by default (as Firebase), for `ember serve
    /// --tls-cert ...`. Set it to false for a plaintext server (the emulator, an `ember serve`
    /// without `--tls-cert`):
    ///
    ///     settings.host = "127.0.0.1:8080"; settings.isSSLEnabled = false
    ///
    /// A client that cannot reach its server (TLS against a plaintext server, nothing listening)
    /// does not fail: writes stay pending and listeners serve the cache, and each failed attempt
    /// is one stderr line, `ember: could not reach the server at HOST (TLS on|off): ...`, with the
    /// cause, the next retry and, for TLS against a plaintext server, this setting.
    public var isSSLEnabled: Bool = true
    /// With TLS: a PEM file of the certificates the server's is verified against (a private CA,
    /// a self-signed server); nil: the system's roots.
    public var trustedCertificatesFile: String?
    /// With `host`: the ID token (a JWT) the client's calls carry as `authorization: Bearer`, for
    /// a server whose security rules decide by `request.auth`; nil: anonymous. Given at open:
    /// a refreshed token needs a new `Firestore`.
    public var authToken: String?
    /// The server the tree (`database().reference()`) syncs with, as `host:port`: `ember serve`'s
    /// tree port (`--database-port`, 9000 by default) over the Realtime Database's realtime
    /// protocol, namespace `demo-ember`; `isSSLEnabled` and `authToken` apply to it as to `host`.
    /// Offline first: writes show at once and wait for the server. nil: the tree stays in this
    /// process. (Firebase's Apple SDK names the same choice `useEmulator(withHost:port:)`.)
    public var databaseHost: String?
    public init() {}

    /// The older switch (`isPersistenceEnabled`), kept in step with `cacheSettings`.
    public var isPersistenceEnabled: Bool {
        get { cacheSettings is PersistentCacheSettings }
        set { cacheSettings = newValue ? PersistentCacheSettings(sizeBytes: NSNumber(value: cacheSizeBytes)) : MemoryCacheSettings() }
    }

    /// The older size setting (`cacheSizeBytes`), kept in step with `cacheSettings`.
    public var cacheSizeBytes: Int64 {
        get { (cacheSettings as? PersistentCacheSettings)?.sizeBytes.int64Value ?? EmberOptions.defaultCacheSizeBytes }
        set { if isPersistenceEnabled { cacheSettings = PersistentCacheSettings(sizeBytes: NSNumber(value: newValue)) } }
    }

    var options: EmberOptions {
        var o = EmberOptions(path: path)
        if let p = cacheSettings as? PersistentCacheSettings {
            o.persistence = true
            o.cacheSizeBytes = p.sizeBytes.int64Value
        } else {
            o.persistence = false
        }
        return o
    }
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
public final class Firestore: Sendable {
    let client: EmberClient
    public let settings: FirestoreSettings
    /// With a host: the documents the server's Listen streams sent so far (`RemoteBackend.stats`).
    private let documentsReceived: (@Sendable () -> Int)?

    private static let sharedLock = Lock()
    nonisolated(unsafe) private static var shared: Firestore?

    init(client: EmberClient, settings: FirestoreSettings, documentsReceived: (@Sendable () -> Int)? = nil) {
        self.client = client
        self.settings = settings
        self.documentsReceived = documentsReceived
    }

    /// The documents the server has sent this instance's listeners so far (nil without a host):
    /// the process tests' figure for a listener resumed after a server restart (Tests/remote).
    /// Not part of the API: `@_spi(EmberTesting) import Ember`.
    @_spi(EmberTesting) public var documentsReceivedFromServer: Int? { documentsReceived?() }

    /// The process-wide in-memory instance (Firebase's `Firestore.firestore()`).
    public static func firestore() -> Firestore {
        sharedLock.withLock {
            if let s = shared, !s.client.closed { return s }
            let s = Firestore(client: EmberClient(), settings: FirestoreSettings())
            shared = s
            return s
        }
    }

    /// Opens a database: in memory without `settings.path`; with one, durable in that SQLite
    /// file (the cache too unless `cacheSettings` is `MemoryCacheSettings`). With `settings.host`
    /// the documents sync with that server (see `FirestoreSettings.host`). Throws
    /// invalidArgument (cache size under 1 MB, a host that is not `host:port`, an unreadable
    /// trusted certificates file, an auth token that is no header value), unimplemented (a build
    /// without remote support), failedPrecondition (the
    /// path is open elsewhere), dataLoss (damaged file), unavailable or permissionDenied
    /// (missing or read-only directory).
    public static func open(settings: FirestoreSettings = FirestoreSettings()) throws -> Firestore {
        guard settings.host != nil || settings.databaseHost != nil else {
            return Firestore(client: try EmberClient(options: settings.options), settings: settings)
        }
        let (client, received) = try FirestoreHost.client(host: settings.host, databaseHost: settings.databaseHost,
                                                           ssl: settings.isSSLEnabled, authToken: settings.authToken,
                                                           trustedCertificatesFile: settings.trustedCertificatesFile,
                                                           options: settings.options)
        return Firestore(client: client, settings: settings, documentsReceived: settings.host == nil ? nil : received)
    }

    public func collection(_ collectionPath: String) -> CollectionReference {
        CollectionReference(firestore: self, path: collectionPath)
    }

    public func document(_ documentPath: String) -> DocumentReference {
        DocumentReference(firestore: self, path: documentPath)
    }

    public func collectionGroup(_ collectionID: String) -> Query {
        if collectionID.utf8.contains(0x2F) || collectionID.isEmpty {   // bytes: "/" before a combining mark too
            return Query(firestore: self, error: EmberError.invalidArgument("Invalid collection ID '\(collectionID)' passed to collectionGroup(): it must not be empty nor contain '/'."))
        }
        return Query(firestore: self, core: EmberModel.Query(collectionGroup: collectionID))
    }

    public func batch() -> WriteBatch { WriteBatch(firestore: self) }

    // MARK: network

    public func disableNetwork(completion: (@Sendable (Error?) -> Void)? = nil) {
        deliver(Result { try client.disableNetwork() }, completion)
    }

    public func enableNetwork(completion: (@Sendable (Error?) -> Void)? = nil) {
        deliver(Result { try client.enableNetwork() }, completion)
    }

    public func disableNetwork() async throws { try client.disableNetwork() }
    public func enableNetwork() async throws { try client.enableNetwork() }

    /// Calls `completion` once every write made so far is acknowledged (or failed). With a host,
    /// as in Firebase, it keeps waiting while the server is unreachable (the writes stay queued
    /// and are sent once it answers; the reason is on stderr, see `isSSLEnabled`).
    public func waitForPendingWrites(completion: @escaping @Sendable (Error?) -> Void) {
        do { try client.waitForPendingWrites { completion($0) } } catch { post { completion(error) } }
    }

    public func waitForPendingWrites() async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            waitForPendingWrites { e in if let e { c.resume(throwing: e) } else { c.resume() } }
        }
    }

    // MARK: persistence

    /// The offline index manager of a persistent cache; nil for a memory cache.
    public var persistentCacheIndexManager: PersistentCacheIndexManager? {
        client.hasIndexManager ? PersistentCacheIndexManager(client: client) : nil
    }

    /// Configures offline query indexes from Firestore's index JSON (`indexes`, `fieldOverrides`).
    public func setIndexConfiguration(fromJSON json: String) throws {
        try client.setIndexConfiguration(json: json)
    }

    public func setIndexConfiguration(_ json: String, completion: (@Sendable (Error?) -> Void)? = nil) {
        deliver(Result { try client.setIndexConfiguration(json: json) }, completion)
    }

    public func setIndexConfiguration(_ json: String) async throws {
        try client.setIndexConfiguration(json: json)
    }

    /// Deletes the database files. Only while the instance is terminated (or was never used):
    /// failedPrecondition otherwise.
    public func clearPersistence(completion: (@Sendable (Error?) -> Void)? = nil) {
        let r = Result<Void, Error> {
            if !client.closed { throw EmberError(.failedPrecondition, "clearPersistence() requires the instance to be terminated first.") }
            if let p = settings.path { try EmberClient.clearPersistence(path: p) }
        }
        if let completion { let e: Error? = { if case .failure(let e) = r { return e }; return nil }(); completion(e) }
    }

    public func clearPersistence() async throws {
        if !client.closed { throw EmberError(.failedPrecondition, "clearPersistence() requires the instance to be terminated first.") }
        if let p = settings.path { try EmberClient.clearPersistence(path: p) }
    }

    /// Deletes the database files at `path` while no instance has it open.
    public static func clearPersistence(path: String) throws { try EmberClient.clearPersistence(path: path) }

    /// Runs the cache's least-recently-used clean-up now (it also runs periodically).
    @discardableResult
    public func collectGarbage() throws -> Int { try client.collectGarbage() }

    /// Closes the database: listeners stop, later calls fail with failedPrecondition.
    public func terminate(completion: (@Sendable (Error?) -> Void)? = nil) {
        client.close()
        completion?(nil)
    }

    public func terminate() async throws { client.close() }

    // MARK: helpers

    /// Runs `work` on the event thread, or here once the database is closed (also when it
    /// closes between the check and the post: a completion is never dropped).
    func post(_ work: @escaping @Sendable () -> Void) {
        if client.closed || !client.events.post(work) { work() }
    }

    func deliver(_ r: Result<Void, Error>, _ completion: (@Sendable (Error?) -> Void)?) {
        guard let completion else { return }
        let err: Error? = { if case .failure(let e) = r { return e }; return nil }()
        post { completion(err) }
    }
}

/// Responsible for: the offline query indexes of a persistent cache (Firestore's
/// `PersistentCacheIndexManager`). Auto-creation is off until enabled, each time the app starts.
///
///     db.persistentCacheIndexManager?.enableIndexAutoCreation()
public final class PersistentCacheIndexManager: Sendable {
    let client: EmberClient
    init(client: EmberClient) { self.client = client }

    public func enableIndexAutoCreation() { try? client.setIndexAutoCreation(true) }
    public func disableIndexAutoCreation() { try? client.setIndexAutoCreation(false) }
    public func deleteAllIndexes() { try? client.deleteAllIndexes() }
}
