import Foundation
import EmberModel
import EmberCore
import EmberConcurrency

/// Responsible for: an atomic group of up to 500 writes, applied locally at once on commit and
/// acknowledged together. An invalid write is reported by `commit`.
///
///     let b = db.batch(); b.setData(["a": 1], forDocument: ref); b.deleteDocument(other); b.commit()
public final class WriteBatch: Sendable {
    let firestore: Firestore
    /// The writes so far, the first invalid write's error, and whether `commit` ran.
    private struct State { var mutations: [Mutation] = []; var error: Error?; var committed = false }
    private let state = LockedValueBox(State())

    init(firestore: Firestore) { self.firestore = firestore }

    private func add(_ make: () throws -> Mutation) -> WriteBatch {
        state.withLockedValue { s in
            if s.error == nil {
                do { s.mutations.append(try make()) } catch { s.error = error }
            }
        }
        return self
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference) -> WriteBatch {
        add { try DocumentReference.setMutation(document.validKey(), data, merge: false, mergeFields: nil) }
    }
    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool) -> WriteBatch {
        add { try DocumentReference.setMutation(document.validKey(), data, merge: merge, mergeFields: nil) }
    }
    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, mergeFields: [Any]) -> WriteBatch {
        add { try DocumentReference.setMutation(document.validKey(), data, merge: false, mergeFields: mergeFields) }
    }
    @discardableResult
    public func updateData(_ fields: [AnyHashable: Any], forDocument document: DocumentReference) -> WriteBatch {
        add { try DocumentReference.updateMutation(document.validKey(), fields) }
    }
    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> WriteBatch {
        add { Mutation(key: try document.validKey(), kind: .delete) }
    }

    public func commit() { commit(completion: nil) }

    public func commit(completion: (@Sendable (Error?) -> Void)?) {
        let (wasCommitted, error, mutations) = state.withLockedValue { s in
            defer { s.committed = true }
            return (s.committed, s.error, s.mutations)
        }
        if wasCommitted {
            return firestore.deliver(.failure(EmberError(.failedPrecondition, "A write batch cannot be used after commit().")), completion)
        }
        if let e = error { return firestore.deliver(.failure(e), completion) }
        if mutations.isEmpty { return firestore.deliver(.success(()), completion) }
        do {
            try firestore.client.write(mutations, completion: completion.map { c in { c($0) } })
        } catch {
            firestore.deliver(.failure(error), completion)
        }
    }

    public func commit() async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            commit { e in if let e { c.resume(throwing: e) } else { c.resume() } }
        }
    }
}
