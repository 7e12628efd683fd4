import Foundation
import EmberModel
import EmberCore

/// Responsible for: an atomic group of up to 500 writes, applied locally at once on commit and
/// acknowledged together. An invalid write is reported by `commit`.
///
///     let b = db.batch(); b.setData(["a": 1], forDocument: ref); b.deleteDocument(other); b.commit()
public final class WriteBatch: @unchecked Sendable {
    let firestore: Firestore
    private var mutations: [Mutation] = []
    private var error: Error?
    private var committed = false

    init(firestore: Firestore) { self.firestore = firestore }

    private func add(_ make: () throws -> Mutation) -> WriteBatch {
        if error == nil {
            do { mutations.append(try make()) } catch { self.error = error }
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

    public func commit(completion: ((Error?) -> Void)?) {
        if committed {
            return firestore.deliver(.failure(EmberError(.failedPrecondition, "A write batch cannot be used after commit().")), completion)
        }
        committed = true
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
