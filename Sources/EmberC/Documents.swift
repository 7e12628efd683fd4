import CEmberABI
import EmberModel
import EmberCore

// Responsible for: writes to one document (set, merge, update, delete) and reading it (get).

func write(_ db: OpaquePointer?, _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ make: () throws -> Mutation) throws -> Bool {
    let client = try object(db, DBHandle.self, "db").open()
    let m = try make()
    try client.write([m], completion: writeCompletion(cb, ctx))
    return true
}

@_cdecl("ember_doc_set")
public func ember_doc_set(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                          _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                          _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try write(db, cb, ctx) {
            try makeMutation(path: path, kind: .set, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_doc_create")
public func ember_doc_create(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                             _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                             _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try write(db, cb, ctx) {
            try makeMutation(path: path, kind: .create, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_doc_merge")
public func ember_doc_merge(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                            _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                            _ fields: UnsafePointer<UnsafePointer<CChar>?>?, _ nFields: Int,
                            _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try write(db, cb, ctx) {
            try makeMutation(path: path, kind: .merge(fields: try mergeFields(fields, nFields)), format: format,
                             data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_doc_update")
public func ember_doc_update(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: Int32,
                             _ data: UnsafeRawPointer?, _ dataLen: Int, _ transforms: UnsafeRawPointer?, _ transformsLen: Int,
                             _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try write(db, cb, ctx) {
            try makeMutation(path: path, kind: .update, format: format, data: data, dataLen: dataLen, transforms: transforms, transformsLen: transformsLen)
        }
    }
}

@_cdecl("ember_doc_delete")
public func ember_doc_delete(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ cb: ember_write_cb?,
                             _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try write(db, cb, ctx) { try deleteMutation(path) } }
}

func getSource(_ s: Int32) throws -> GetSource {
    switch s {
    case Int32(EMBER_SOURCE_DEFAULT): return .default
    case Int32(EMBER_SOURCE_SERVER): return .server
    case Int32(EMBER_SOURCE_CACHE): return .cache
    default: throw invalid("Unknown source \(s): use EMBER_SOURCE_DEFAULT, _SERVER or _CACHE")
    }
}

@_cdecl("ember_doc_get")
public func ember_doc_get(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ source: Int32,
                          _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let client = try object(db, DBHandle.self, "db").open()
        let key = try documentKey(path)
        let read = try client.getDocument(key, source: try getSource(source))
        return retained(CDocument(key: read.key, document: read.document, fromCache: read.fromCache))
    }
}
