import EmberConcurrency
import Foundation
import EmberModel
import EmberCore

/// Responsible for: a location with ordering, range and limit (Firebase's `DatabaseQuery`):
/// building (one order-by; start, end and limit once each; errors per docs/semantics.md 19), and
/// observing and reading through it. A mistake never traps: it is kept and reported to the
/// observer's cancel block or the read's completion; `validate()` throws it at once.
///
///     ref.child("posts").queryOrdered(byChild: "metrics/views").queryLimited(toLast: 100)
///         .observe(.childAdded) { snapshot in print(snapshot.key) }
public class DatabaseQuery: @unchecked Sendable { // immutable; open to subclasses, which the compiler cannot check
    public let database: Database
    let path: TreePath
    let params: TreeQuery
    let error: EmberError?

    init(database: Database, path: TreePath, params: TreeQuery = TreeQuery(), error: EmberError? = nil) {
        self.database = database
        self.path = path
        self.params = params
        self.error = error
    }

    /// The location this query reads.
    public var ref: DatabaseReference { DatabaseReference(database: database, path: path, error: error) }

    /// Throws the first mistake made while building this query (or its location), if any.
    public func validate() throws {
        if let e = error { throw e }
        try params.validate()
    }

    func derive(_ step: (TreeQuery) throws -> TreeQuery) -> DatabaseQuery {
        if error != nil { return DatabaseQuery(database: database, path: path, params: params, error: error) }
        do { return DatabaseQuery(database: database, path: path, params: try step(params)) } catch {
            return DatabaseQuery(database: database, path: path, params: params, error: error as? EmberError ?? EmberError(.internal, "\(error)"))
        }
    }

    func bound(_ v: Any?) throws -> TreeValue { try TreeUserData.parse(v, at: "query bound") }

    // MARK: ordering

    public func queryOrderedByKey() -> DatabaseQuery { derive { try $0.orderBy(.key) } }
    public func queryOrderedByValue() -> DatabaseQuery { derive { try $0.orderBy(.value) } }
    public func queryOrdered(byChild key: String) -> DatabaseQuery {
        derive { q in
            if q.orderBy != nil { return try q.orderBy(.key, method: "queryOrdered(byChild:)") }
            return try q.orderBy(try TreeQuery.childIndex(key), method: "queryOrdered(byChild:)")
        }
    }

    // MARK: limits and ranges

    public func queryLimited(toFirst limit: UInt) -> DatabaseQuery { derive { try $0.limit(Int(clamping: limit), .first) } }
    public func queryLimited(toLast limit: UInt) -> DatabaseQuery { derive { try $0.limit(Int(clamping: limit), .last) } }

    public func queryStarting(atValue startValue: Any?) -> DatabaseQuery { derive { try $0.start(.at, try bound(startValue), key: nil) } }
    public func queryStarting(atValue startValue: Any?, childKey: String?) -> DatabaseQuery { derive { try $0.start(.at, try bound(startValue), key: childKey) } }
    public func queryStarting(afterValue startAfterValue: Any?) -> DatabaseQuery { derive { try $0.start(.exclusive, try bound(startAfterValue), key: nil) } }
    public func queryStarting(afterValue startAfterValue: Any?, childKey: String?) -> DatabaseQuery { derive { try $0.start(.exclusive, try bound(startAfterValue), key: childKey) } }
    public func queryEnding(atValue endValue: Any?) -> DatabaseQuery { derive { try $0.end(.at, try bound(endValue), key: nil) } }
    public func queryEnding(atValue endValue: Any?, childKey: String?) -> DatabaseQuery { derive { try $0.end(.at, try bound(endValue), key: childKey) } }
    public func queryEnding(beforeValue endValue: Any?) -> DatabaseQuery { derive { try $0.end(.exclusive, try bound(endValue), key: nil) } }
    public func queryEnding(beforeValue endValue: Any?, childKey: String?) -> DatabaseQuery { derive { try $0.end(.exclusive, try bound(endValue), key: childKey) } }
    public func queryEqual(toValue value: Any?) -> DatabaseQuery { derive { try $0.equal(try bound(value), key: nil) } }
    public func queryEqual(toValue value: Any?, childKey: String?) -> DatabaseQuery { derive { try $0.equal(try bound(value), key: childKey) } }

    // MARK: observing

    /// Starts an observer; returns its handle. Callbacks run on Ember's event thread, in order.
    @discardableResult
    public func observe(_ eventType: DataEventType, with block: @escaping @Sendable (DataSnapshot) -> Void) -> DatabaseHandle {
        start(eventType, cancel: nil) { s, _ in block(s) }
    }

    @discardableResult
    public func observe(_ eventType: DataEventType, with block: @escaping @Sendable (DataSnapshot) -> Void,
                        withCancel cancelBlock: (@Sendable (Error) -> Void)?) -> DatabaseHandle {
        start(eventType, cancel: cancelBlock) { s, _ in block(s) }
    }

    /// As `observe(_:with:)`, with the key of the previous sibling in the query's order (nil
    /// for the first child, and for childRemoved and value events).
    @discardableResult
    public func observe(_ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping @Sendable (DataSnapshot, String?) -> Void) -> DatabaseHandle {
        start(eventType, cancel: nil, block)
    }

    @discardableResult
    public func observe(_ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping @Sendable (DataSnapshot, String?) -> Void,
                        withCancel cancelBlock: (@Sendable (Error) -> Void)?) -> DatabaseHandle {
        start(eventType, cancel: cancelBlock, block)
    }

    /// Delivers the first event of `eventType`, then stops.
    public func observeSingleEvent(of eventType: DataEventType, with block: @escaping @Sendable (DataSnapshot) -> Void) {
        single(eventType, cancel: nil) { s, _ in block(s) }
    }

    public func observeSingleEvent(of eventType: DataEventType, with block: @escaping @Sendable (DataSnapshot) -> Void,
                                   withCancel cancelBlock: (@Sendable (Error) -> Void)?) {
        single(eventType, cancel: cancelBlock) { s, _ in block(s) }
    }

    public func observeSingleEvent(of eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping @Sendable (DataSnapshot, String?) -> Void) {
        single(eventType, cancel: nil, block)
    }

    func start(_ type: DataEventType, cancel: (@Sendable (Error) -> Void)?, _ block: @escaping @Sendable (DataSnapshot, String?) -> Void) -> DatabaseHandle {
        startObserver(type, cancel: cancel, block).handle
    }

    func startObserver(_ type: DataEventType, cancel: (@Sendable (Error) -> Void)?, _ block: @escaping @Sendable (DataSnapshot, String?) -> Void) -> (handle: DatabaseHandle, token: ListenerToken?) {
        if let e = error {
            database.post { cancel?(e) }
            return (0, nil)
        }
        let db = database
        do {
            let r = try database.client.treeObserve(path, query: params, type: type.core) { event in
                switch event {
                case .event(_, let snap, let prev): block(DataSnapshot(database: db, snap: snap), prev)
                case .cancelled(let e): cancel?(e)
                }
            }
            return (r.handle, r.token)
        } catch {
            database.post { cancel?(error) }
            return (0, nil)
        }
    }

    private func single(_ type: DataEventType, cancel: (@Sendable (Error) -> Void)?, _ block: @escaping @Sendable (DataSnapshot, String?) -> Void) {
        let once = Once()
        let r = startObserver(type, cancel: cancel) { s, prev in
            guard once.fire() else { return }
            block(s, prev)
        }
        once.attach(r.token)
    }

    /// Removes the observer `handle` if it observes this location.
    public func removeObserver(withHandle handle: DatabaseHandle) {
        guard error == nil, let t = try? database.client.treeToken(handle: handle, at: path) else { return }
        t.remove()
    }

    /// Removes every observer of this query (for a plain location: every observer at it, of any
    /// query), but not those on child locations.
    public func removeAllObservers() {
        guard error == nil else { return }
        let q: TreeQuery? = (self is DatabaseReference || params.isDefault) ? nil : params
        for t in (try? database.client.treeTokens(at: path, query: q)) ?? [] { t.remove() }
    }

    // MARK: reading

    /// Reads the location (through this query) once: from the backend when online, else from
    /// what the client has, else an `unavailable` error. Completion on the event thread.
    public func getData(completion: @escaping @Sendable (Error?, DataSnapshot?) -> Void) {
        do {
            try validate()
            let db = database
            try database.client.treeGet(path, query: params) { r in
                switch r {
                case .success(let s): completion(nil, DataSnapshot(database: db, snap: s))
                case .failure(let e): completion(e, nil)
                }
            }
        } catch {
            database.post { completion(error, nil) }
        }
    }

    public func getData() async throws -> DataSnapshot {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<DataSnapshot, Error>) in
            getData { e, s in if let s { c.resume(returning: s) } else { c.resume(throwing: e!) } }
        }
    }
}

/// Responsible for: letting a single-event observer fire once and then remove itself, whether
/// its first event comes before or after its token is known.
final class Once: Sendable {
    private let state = LockedValueBox<(fired: Bool, token: ListenerToken?)>((false, nil))

    func fire() -> Bool {
        let (first, t): (Bool, ListenerToken?) = state.withLockedValue { s in
            if s.fired { return (false, nil) }
            s.fired = true
            return (true, s.token)
        }
        t?.remove()
        return first
    }

    func attach(_ t: ListenerToken?) {
        let removeNow: Bool = state.withLockedValue { s in
            s.token = t
            return s.fired
        }
        if removeNow { t?.remove() }
    }
}
