import CEmberABI
import EmberModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Responsible for: ember_document, one document snapshot (reference counted): existence, id,
// path, metadata, and its data or one field in either format.

final class CDocument: Counted {
    let key: DocumentKey
    /// nil: the document does not exist.
    let document: Document?
    let fromCache: Bool
    /// The id's offset in the path (one word), then "cities/SF" with a NUL: made on first use,
    /// since most readers of a large result never ask for a path (building it was a third of
    /// `ember_snapshot_document`). Any thread may be first: the loser of the exchange frees its copy.
    private let pathBuffer = Atomic<UnsafeMutableRawPointer?>(nil)

    init(key: DocumentKey, document: Document?, fromCache: Bool) {
        self.key = key
        self.document = document?.exists == true ? document : nil
        self.fromCache = fromCache
    }

    deinit { free(pathBuffer.load(ordering: .acquiring)) }

    /// "cities/SF" with a NUL, owned by this object.
    var pathC: UnsafeMutablePointer<CChar> { text(buffer()) }

    /// The id: the path's tail after its last separator.
    var idC: UnsafeMutablePointer<CChar> {
        let b = buffer()
        return text(b) + b.load(as: Int.self)
    }

    private func text(_ b: UnsafeMutableRawPointer) -> UnsafeMutablePointer<CChar> {
        (b + MemoryLayout<Int>.stride).assumingMemoryBound(to: CChar.self)
    }

    private func buffer() -> UnsafeMutableRawPointer {
        if let b = pathBuffer.load(ordering: .acquiring) { return b }
        var path = key.path.canonical
        let made = path.withUTF8 { u -> UnsafeMutableRawPointer in
            let b = malloc(MemoryLayout<Int>.stride + u.count + 1)!
            b.storeBytes(of: u.count - key.id.utf8.count, as: Int.self)
            let t = b + MemoryLayout<Int>.stride
            if u.count > 0 { memcpy(t, u.baseAddress!, u.count) }
            t.storeBytes(of: 0, toByteOffset: u.count, as: UInt8.self)
            return b
        }
        let (won, current) = pathBuffer.compareExchange(expected: nil, desired: made,
                                                        successOrdering: .acquiringAndReleasing,
                                                        failureOrdering: .acquiring)
        if won { return made }
        free(made)
        return current!
    }
}

@_cdecl("ember_document_retain")
public func ember_document_retain(_ d: OpaquePointer?) -> OpaquePointer? {
    guard let d else { return nil }
    _ = Unmanaged<CDocument>.fromOpaque(UnsafeRawPointer(d)).retain()
    return d
}

@_cdecl("ember_document_release")
public func ember_document_release(_ d: OpaquePointer?) {
    guard let d else { return }
    Unmanaged<CDocument>.fromOpaque(UnsafeRawPointer(d)).release()
}

@inline(__always)
func doc(_ d: OpaquePointer?) -> CDocument? {
    d.map { Unmanaged<CDocument>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("ember_document_exists")
public func ember_document_exists(_ d: OpaquePointer?) -> Bool { doc(d)?.document != nil }

@_cdecl("ember_document_id")
public func ember_document_id(_ d: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let o = doc(d) else { return nil }
    return UnsafePointer(o.idC)
}

@_cdecl("ember_document_path")
public func ember_document_path(_ d: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let o = doc(d) else { return nil }
    return UnsafePointer(o.pathC)
}

@_cdecl("ember_document_has_pending_writes")
public func ember_document_has_pending_writes(_ d: OpaquePointer?) -> Bool { doc(d)?.document?.hasLocalMutations ?? false }

@_cdecl("ember_document_create_time")
public func ember_document_create_time(_ d: OpaquePointer?) -> Int64 { doc(d)?.document?.createTime ?? 0 }

@_cdecl("ember_document_update_time")
public func ember_document_update_time(_ d: OpaquePointer?) -> Int64 { doc(d)?.document?.updateTime ?? 0 }

@_cdecl("ember_document_is_from_cache")
public func ember_document_is_from_cache(_ d: OpaquePointer?) -> Bool { doc(d)?.fromCache ?? false }

@_cdecl("ember_document_data")
public func ember_document_data(_ d: OpaquePointer?, _ format: Int32, _ outLen: UnsafeMutablePointer<Int>?,
                                _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let o = try object(d, CDocument.self, "doc")
        guard let document = o.document else { throw EmberError(.notFound, "Document '\(o.key)' does not exist") }
        // A document read from the file hands on its stored bytes: the same encoding (unless a
        // decode found them damaged: then data-loss, as in JSON).
        if format == Int32(EMBER_FORMAT_MSGPACK), let stored = document.storedFields, !document.storedFieldsKnownDamaged {
            return try output(stored, outLen)
        }
        return try encode(.map(try document.decodedData()), format, outLen)
    }
}

@_cdecl("ember_document_get")
public func ember_document_get(_ d: OpaquePointer?, _ field: UnsafePointer<CChar>?, _ format: Int32,
                               _ outLen: UnsafeMutablePointer<Int>?, _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let o = try object(d, CDocument.self, "doc")
        let path = try parseFieldPath(field)
        guard let document = o.document else { throw EmberError(.notFound, "Document '\(o.key)' does not exist") }
        guard let v = document.field(path) else { throw EmberError(.notFound, "Field '\(path)' is not in document '\(o.key)'") }
        return try encode(v, format, outLen)
    }
}
