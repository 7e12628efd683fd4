import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: ember_db_run_transaction and the ember_transaction handed to its function:
// reads at the backend, buffered writes, retries by the core (TransactionContext).

final class CTransaction: Counted {
    private let context: TransactionContext
    /// The first write refused while buffering: it fails the commit even if the function ignores it.
    var firstError: EmberError?
    var valid = true
    /// Serializes the function's calls on this handle (the header lets them come from any
    /// thread; the context's read set and buffered writes are not thread-safe).
    let lock = Lock()

    init(_ context: TransactionContext) { self.context = context }

    /// Runs `body` with the context, one call at a time.
    func use<T>(_ body: (TransactionContext) throws -> T) throws -> T {
        try lock.withLock {
            guard valid else { throw EmberError(.failedPrecondition, "The transaction is over: use it only inside its function.") }
            return try body(context)
        }
    }

    func write(_ make: () throws -> Mutation) throws -> Bool {
        try use { ctx in
            do { ctx.write(try make()) } catch {
                let e = error as? EmberError ?? EmberError(.internal, "\(error)")
                if firstError == nil { firstError = e }
                throw e
            }
            return true
        }
    }
}

@_cdecl("ember_db_run_transaction")
public func ember_db_run_transaction(_ db: OpaquePointer?, _ maxAttempts: Int32, _ fn: ember_transaction_fn?,
                                     _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let client = try object(db, DBHandle.self, "db").open()
        guard let fn else { throw invalid("fn is NULL") }
        if maxAttempts < 0 { throw invalid("max_attempts must be 0 (default 5) or positive, got \(maxAttempts)") }
        try client.runTransaction(maxAttempts: maxAttempts == 0 ? 5 : Int(maxAttempts)) { context in
            let tx = CTransaction(context)
            defer { tx.lock.withLock { tx.valid = false } }
            var reason = errorValue(nil)
            let ok = withExtendedLifetime(tx) { fn(unretained(tx), ctx, &reason) }
            if let e = tx.firstError { throw e }
            if !ok {
                if reason.code == 0 { throw EmberError(.aborted, "The transaction function returned false.") }
                throw readError(reason)
            }
        }
        return true
    }
}

@_cdecl("ember_transaction_get")
public func ember_transaction_get(_ t: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let tx = try object(t, CTransaction.self, "tx")
        let key = try DocumentKey(parsing: try text(path, "path"))
        let d = try tx.use { try $0.get(key) }
        return retained(CDocument(key: key, document: d, fromCache: false))
    }
}

@_cdecl("ember_transaction_set")
public func ember_transaction_set(_ t: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                                  _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                                  _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(t, CTransaction.self, "tx").write {
            try makeMutation(path: path, kind: .set, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_transaction_merge")
public func ember_transaction_merge(_ t: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                                    _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                                    _ fields: UnsafePointer<UnsafePointer<CChar>?>?, _ nFields: Int,
                                    _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(t, CTransaction.self, "tx").write {
            try makeMutation(path: path, kind: .merge(fields: try mergeFields(fields, nFields)), format: format,
                             data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_transaction_update")
public func ember_transaction_update(_ t: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                                     _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                                     _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(t, CTransaction.self, "tx").write {
            try makeMutation(path: path, kind: .update, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_transaction_delete")
public func ember_transaction_delete(_ t: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try object(t, CTransaction.self, "tx").write { try deleteMutation(path) } }
}
