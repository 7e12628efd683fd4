import Foundation
import EmberModel
import EmberCore
import EmberConcurrency

/// Responsible for: the Firebase-shaped transaction handed to `runTransaction`'s block: reads
/// (before any write) and buffered writes, committed together if nothing read has changed.
public final class Transaction {
    let firestore: Firestore
    let context: TransactionContext
    init(firestore: Firestore, context: TransactionContext) {
        self.firestore = firestore
        self.context = context
    }

    public func getDocument(_ document: DocumentReference) throws -> DocumentSnapshot {
        let key = try document.validKey()
        let doc = try context.get(key)
        return DocumentSnapshot(firestore: firestore, key: key, document: doc, fromCache: false)
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference) -> Transaction {
        record { try DocumentReference.setMutation(document.validKey(), data, merge: false, mergeFields: nil) }
    }
    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool) -> Transaction {
        record { try DocumentReference.setMutation(document.validKey(), data, merge: merge, mergeFields: nil) }
    }
    @discardableResult
    public func updateData(_ fields: [AnyHashable: Any], forDocument document: DocumentReference) -> Transaction {
        record { try DocumentReference.updateMutation(document.validKey(), fields) }
    }
    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> Transaction {
        record { Mutation(key: try document.validKey(), kind: .delete) }
    }

    var error: Error?
    private func record(_ make: () throws -> Mutation) -> Transaction {
        do { context.write(try make()) } catch { if self.error == nil { self.error = error } }
        return self
    }
}

#if !canImport(ObjectiveC)
/// Where a transaction block reports its error (`errorPointer?.pointee = error`), as on Apple platforms.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?
#endif

extension Firestore {
    /// Runs `updateBlock` (on a background thread) until its commit succeeds, retrying on
    /// contention up to 5 attempts; the block reports failure through `errorPointer`.
    public func runTransaction(_ updateBlock: @escaping @Sendable (Transaction, NSErrorPointer) -> Any?,
                               completion: @escaping @Sendable (Any?, Error?) -> Void) {
        Thread.detachNewThread { [self] in
            do {
                // The block's result goes to the completion only.
                let value = HandedOver(try runTransactionBlocking(updateBlock))
                post { completion(value.value, nil) }
            } catch {
                post { completion(nil, error) }
            }
        }
    }

    public func runTransaction(_ updateBlock: @escaping @Sendable (Transaction, NSErrorPointer) -> Any?) async throws -> Any? {
        let result: HandedOver<Any?> = try await withCheckedThrowingContinuation { c in
            runTransaction(updateBlock) { v, e in if let e { c.resume(throwing: e) } else { c.resume(returning: HandedOver(v)) } }
        }
        return result.value
    }

    func runTransactionBlocking(_ updateBlock: (Transaction, NSErrorPointer) -> Any?) throws -> Any? {
        try client.runTransaction { ctx in
            let tx = Transaction(firestore: self, context: ctx)
            var nsError: NSError?
            let value = withUnsafeMutablePointer(to: &nsError) { p in updateBlock(tx, p) }
            // On Linux a bridged NSError cannot be cast back to the Swift error: rebuild it.
            if let e = nsError { throw EmberError(bridged: e) ?? e }
            if let e = tx.error { throw e }
            return value
        }
    }
}
