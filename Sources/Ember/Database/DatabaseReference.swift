import Foundation
import EmberModel
import EmberCore

/// Responsible for: a location in the tree (Firebase's `DatabaseReference`): navigation,
/// writes (set, multi-path update, remove; applied locally at once, acknowledged later), push
/// ids, and everything a query does. Invalid paths and values never trap: the error reaches
/// the completion block (or the observer's cancel block).
///
///     let post = ref.child("posts").childByAutoId()
///     post.setValue(["title": "Hi"]) { error, _ in }
///     ref.updateChildValues(["/posts/\(post.key!)/starCount": 1])
public final class DatabaseReference: DatabaseQuery, @unchecked Sendable { // restates its base's: immutable too
    init(database: Database, path: TreePath, error: EmberError? = nil) {
        super.init(database: database, path: path, error: error)
    }

    /// The last segment of the path (nil at the root).
    public var key: String? { path.last }
    public var parent: DatabaseReference? { path.parent.map { DatabaseReference(database: database, path: $0, error: error) } }
    public var root: DatabaseReference { DatabaseReference(database: database, path: .root) }
    public var url: String { "ember://" + path.description }
    public var description: String { path.description }

    /// The location `pathString` ("a/b") below this one.
    public func child(_ pathString: String) -> DatabaseReference {
        if error != nil { return DatabaseReference(database: database, path: path.child(pathString), error: error) }
        do {
            if pathString.isEmpty { throw EmberError.invalidArgument("Invalid path '': child(_:) needs a non-empty path.") }
            let rel = try TreePath(parsing: pathString)
            let full = path.appending(rel)
            _ = try TreePath(parsing: full.segments.joined(separator: "/"))    // total depth and length
            return DatabaseReference(database: database, path: full)
        } catch {
            return DatabaseReference(database: database, path: path.child(pathString), error: error as? EmberError)
        }
    }

    /// A new child whose key is a push id (time-ordered, unique; docs/semantics.md 17).
    public func childByAutoId() -> DatabaseReference {
        DatabaseReference(database: database, path: path.child(PushId.next()), error: error)
    }

    // MARK: writes

    func write(_ makeOps: () throws -> [TreeWriteOp], _ completion: (@Sendable (Error?, DatabaseReference) -> Void)?) {
        do {
            if let e = error { throw e }
            let ops = try makeOps()
            let me = self
            try database.client.treeWrite(ops, completion: completion.map { c in { e in c(e, me) } })
        } catch {
            if let c = completion { database.post { c(error, self) } }
        }
    }

    private func asyncWrite(_ start: (@escaping @Sendable (Error?, DatabaseReference) -> Void) -> Void) async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<DatabaseReference, Error>) in
            start { e, r in if let e { c.resume(throwing: e) } else { c.resume(returning: r) } }
        }
    }

    /// Replaces the data here (nil or NSNull removes it).
    public func setValue(_ value: Any?) { setValue(value, withCompletionBlock: nil) }

    public func setValue(_ value: Any?, withCompletionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)?) {
        write({ [TreeWriteOp(path: path, value: try TreeUserData.parse(value, at: path.description))] }, block)
    }

    public func setValue(_ value: Any?) async throws -> DatabaseReference {
        try await asyncWrite { setValue(value, withCompletionBlock: $0) }
    }

    /// Sets each relative path ("a/b" or "/a/b") to its value, atomically (nil removes).
    public func updateChildValues(_ values: [AnyHashable: Any]) { updateChildValues(values, withCompletionBlock: nil) }

    public func updateChildValues(_ values: [AnyHashable: Any], withCompletionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)?) {
        write({
            try values.map { (k, v) in
                guard let ks = k.base as? String else { throw EmberError.invalidArgument("updateChildValues keys must be strings, got \(type(of: k.base)).") }
                let rel = try TreePath(parsing: ks, context: "update path")
                let full = path.appending(rel)
                return TreeWriteOp(path: full, value: try TreeUserData.parse(v is NSNull ? nil : v, at: full.description))
            }
        }, block)
    }

    public func updateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await asyncWrite { updateChildValues(values, withCompletionBlock: $0) }
    }

    /// Removes the data here.
    public func removeValue() { removeValue(completionBlock: nil) }

    public func removeValue(completionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)?) {
        write({ [TreeWriteOp(path: path, value: .null)] }, block)
    }

    public func removeValue() async throws -> DatabaseReference {
        try await asyncWrite { removeValue(completionBlock: $0) }
    }

    // MARK: transactions

    /// Runs `block` on the data here and writes what it returns, atomically against every
    /// other writer: `block` runs first with what this client has (nil when it has nothing yet)
    /// and again, up to 25 times, whenever the server's data had changed. Firebase's contract:
    /// the block runs on the event thread and may run several times; return
    /// `TransactionResult.abort()` to stop.
    public func runTransactionBlock(_ block: @escaping @Sendable (MutableData) -> TransactionResult) {
        runTransactionBlock(block, andCompletionBlock: nil, withLocalEvents: true)
    }

    /// `completionBlock` (event thread) gets the error (nil when committed or aborted), whether
    /// the value was committed, and the data here then (nil when the transaction failed).
    public func runTransactionBlock(_ block: @escaping @Sendable (MutableData) -> TransactionResult,
                                    andCompletionBlock completionBlock: (@Sendable (Error?, Bool, DataSnapshot?) -> Void)?) {
        runTransactionBlock(block, andCompletionBlock: completionBlock, withLocalEvents: true)
    }

    /// `localEvents` false: the attempts raise no events here before the server accepts one.
    public func runTransactionBlock(_ block: @escaping @Sendable (MutableData) -> TransactionResult,
                                    andCompletionBlock completionBlock: (@Sendable (Error?, Bool, DataSnapshot?) -> Void)?,
                                    withLocalEvents localEvents: Bool) {
        let database = self.database, path = self.path
        do {
            if let e = error { throw e }
            try database.client.treeTransaction(path, applyLocally: localEvents, update: { value in
                block(MutableData(value: value, location: path)).outcome
            }, completion: { error, committed, value in
                completionBlock?(error, committed, value.map { DataSnapshot(database: database, snap: TreeSnapshot(path: path, value: $0)) })
            })
        } catch {
            if let c = completionBlock { database.post { c(error, false, nil) } }
        }
    }

    /// The async form: whether the value was committed, and the data here then.
    public func runTransactionBlock(_ block: @escaping @Sendable (MutableData) -> TransactionResult) async throws -> (Bool, DataSnapshot) {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<(Bool, DataSnapshot), Error>) in
            runTransactionBlock(block, andCompletionBlock: { error, committed, snapshot in
                if let snapshot, error == nil { c.resume(returning: (committed, snapshot)) } else { c.resume(throwing: error ?? EmberError(.internal, "no snapshot")) }
            })
        }
    }

    // MARK: onDisconnect (written by the server when this client's connection ends)

    public func onDisconnectSetValue(_ value: Any?, withCompletionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)? = nil) {
        onDisconnect({ .write(path: path, ops: [TreeWriteOp(path: path, value: try TreeUserData.parse(value, at: path.description))], update: false) }, block)
    }

    public func onDisconnectRemoveValue(withCompletionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)? = nil) {
        onDisconnect({ .write(path: path, ops: [TreeWriteOp(path: path, value: .null)], update: false) }, block)
    }

    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any], withCompletionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)? = nil) {
        onDisconnect({
            .write(path: path, ops: try values.map { (k, v) in
                guard let ks = k.base as? String else { throw EmberError.invalidArgument("onDisconnectUpdateChildValues keys must be strings, got \(type(of: k.base)).") }
                let full = path.appending(try TreePath(parsing: ks, context: "update path"))
                return TreeWriteOp(path: full, value: try TreeUserData.parse(v is NSNull ? nil : v, at: full.description))
            }, update: true)
        }, block)
    }

    /// Cancels the onDisconnect writes registered at and below this location.
    public func cancelDisconnectOperations(withCompletionBlock block: (@Sendable (Error?, DatabaseReference) -> Void)? = nil) {
        onDisconnect({ .cancel(path) }, block)
    }

    private func onDisconnect(_ make: () throws -> TreeOnDisconnect, _ completion: (@Sendable (Error?, DatabaseReference) -> Void)?) {
        do {
            if let e = error { throw e }
            let me = self
            var done: (@Sendable (EmberError?) -> Void)?
            if let completion { done = { e in completion(e, me) } }
            try database.client.treeOnDisconnect(try make(), completion: done)
        } catch {
            if let c = completion { database.post { c(error, self) } }
        }
    }
}
