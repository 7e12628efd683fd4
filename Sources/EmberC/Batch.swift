import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: ember_batch, writes collected (each checked at once) and committed atomically.

final class CBatch: Counted {
    let db: DBHandle
    private let lock = Lock()
    private var mutations: [Mutation] = []
    private var committed = false

    init(db: DBHandle) { self.db = db }

    func add(_ make: () throws -> Mutation) throws -> Bool {
        let m = try make()
        try lock.withLock {
            if committed { throw EmberError(.failedPrecondition, "The batch has already been committed.") }
            if mutations.count >= MutationBatch.maxOperations {
                throw invalid("A batch holds at most \(MutationBatch.maxOperations) operations.")
            }
            mutations.append(m)
        }
        return true
    }

    func take() throws -> [Mutation] {
        try lock.withLock {
            if committed { throw EmberError(.failedPrecondition, "The batch has already been committed.") }
            committed = true
            return mutations
        }
    }
}

@_cdecl("ember_batch_new")
public func ember_batch_new(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let handle = try object(db, DBHandle.self, "db")
        _ = try handle.open()
        return retained(CBatch(db: handle))
    }
}

@_cdecl("ember_batch_release")
public func ember_batch_release(_ b: OpaquePointer?) {
    guard let b else { return }
    Unmanaged<CBatch>.fromOpaque(UnsafeRawPointer(b)).release()
}

@_cdecl("ember_batch_set")
public func ember_batch_set(_ b: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                            _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                            _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(b, CBatch.self, "batch").add {
            try makeMutation(path: path, kind: .set, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_batch_create")
public func ember_batch_create(_ b: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                               _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                               _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(b, CBatch.self, "batch").add {
            try makeMutation(path: path, kind: .create, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_batch_merge")
public func ember_batch_merge(_ b: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                              _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                              _ fields: UnsafePointer<UnsafePointer<CChar>?>?, _ nFields: Int,
                              _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(b, CBatch.self, "batch").add {
            try makeMutation(path: path, kind: .merge(fields: try mergeFields(fields, nFields)), format: format,
                             data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_batch_update")
public func ember_batch_update(_ b: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                               _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                               _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(b, CBatch.self, "batch").add {
            try makeMutation(path: path, kind: .update, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_batch_delete")
public func ember_batch_delete(_ b: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try object(b, CBatch.self, "batch").add { try deleteMutation(path) } }
}

@_cdecl("ember_batch_commit")
public func ember_batch_commit(_ b: OpaquePointer?, _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?,
                               _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let batch = try object(b, CBatch.self, "batch")
        let client = try batch.db.open()
        let ms = try batch.take()
        try client.write(ms, completion: writeCompletion(cb, ctx))
        return true
    }
}

/// ember_batch_verify: the batch commits only if the document is still as a transaction read it.
@_cdecl("ember_batch_verify")
public func ember_batch_verify(_ b: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ updateTime: Int64,
                               _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(b, CBatch.self, "batch").add {
            Mutation(key: try documentKey(path), kind: .verify,
                     precondition: updateTime > 0 ? .updateTime(updateTime) : .exists(false))
        }
    }
}
