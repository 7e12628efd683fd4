import CEmberABI
import EmberCore
import EmberModel
#if canImport(Glibc)
import Glibc
#endif

// Responsible for: ember_ref_transaction, the tree's transactions through the C ABI (Firebase's
// runTransactionBlock): the update function gets the location's value in the caller's format
// and sets the new one with ember_tree_tx_set (BORROWED handle, valid during that call only);
// the completion gets the error, whether it committed, and the value then as a snapshot.

/// The handle an update function writes its new value through (ember_tree_tx).
final class CTreeTx: Counted {
    let format: Int32
    var value: TreeValue
    var error: EmberError?
    init(format: Int32, value: TreeValue) {
        self.format = format
        self.value = value
    }
}

@_cdecl("ember_ref_transaction")
public func ember_ref_transaction(_ r: OpaquePointer?, _ format: Int32, _ applyLocally: Bool, _ update: ember_tree_update_fn?,
                                  _ done: ember_tree_transaction_cb?, _ ctx: UnsafeMutableRawPointer?,
                                  _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        try checkFormat(format)
        guard let update else { throw invalid("update is NULL") }
        guard let done else { throw invalid("done is NULL") }
        let c = UncheckedContext(ctx)
        let path = o.path
        try o.db.open().treeTransaction(path, applyLocally: applyLocally, update: { current in
            let tx = CTreeTx(format: format, value: current)
            var len = 0
            guard let buffer = try? TreeValues.encode(current, format, &len) else {
                return .fail(EmberError(.internal, "The current value could not be encoded"))
            }
            defer { free(buffer) }
            let write = withExtendedLifetime(tx) { update(c.value, UnsafeRawPointer(buffer), len, unretained(tx)) }
            if !write { return .abort }
            if let e = tx.error { return .fail(e) }
            return .write(tx.value)
        }, completion: { error, committed, value in
            var ev = errorValue(error)
            if let value {
                let s = CTreeSnapshot(TreeSnapshot(path: path, value: value))
                withExtendedLifetime(s) { done(c.value, &ev, committed, unretained(s)) }
            } else {
                done(c.value, &ev, committed, nil)
            }
        })
        return true
    }
}

@_cdecl("ember_tree_tx_set")
public func ember_tree_tx_set(_ t: OpaquePointer?, _ data: UnsafeRawPointer?, _ len: Int, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let tx = try object(t, CTreeTx.self, "tx")
        do {
            let v = try TreeValues.decode(data, len, tx.format, "data")
            tx.value = v
            tx.error = nil
        } catch {
            // The transaction fails with it if the update function still returns true.
            tx.error = error as? EmberError ?? EmberError(.invalidArgument, "\(error)")
            throw error
        }
        return true
    }
}
