import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: ember_snapshot, one query result as a listener or a get sees it (reference
// counted): its documents in order, the changes since the previous one, and the metadata.
// Document handles are made on first access and live as long as the snapshot.

final class CSnapshot: Counted {
    let view: ViewSnapshot
    private let lock = Lock()
    /// Handles made so far: a few in `sparse` (a listener usually reads only the changed documents
    /// of a large result), all in `dense` once more than `sparseMax` were asked for. (A dense
    /// array per event cost an allocation as large as the result.)
    private var sparse: [Int: CDocument] = [:]
    private var dense: [CDocument?]? = nil
    private static let sparseMax = 8
    /// Handles of changed documents that are not the result's document at their new index.
    private var removed: [Int: CDocument] = [:]

    init(_ view: ViewSnapshot) {
        self.view = view
    }

    /// The handle of document i (made once).
    func document(_ i: Int) -> CDocument {
        lock.withLock {
            if dense != nil {
                if let d = dense![i] { return d }
            } else if let d = sparse[i] {
                return d
            }
            let doc = view.documents[i]
            let d = CDocument(key: doc.key, document: doc, fromCache: view.isFromCache)
            if dense != nil {
                dense![i] = d
            } else if sparse.count < CSnapshot.sparseMax {
                sparse[i] = d
            } else {
                var all = [CDocument?](repeating: nil, count: view.documents.count)
                for (k, v) in sparse { all[k] = v }
                all[i] = d
                dense = all
                sparse = [:]
            }
            return d
        }
    }

    /// The handle of change i's document: the changed document itself. `newIndex` is its position
    /// when the changes are replayed one by one on the previous list (docs/semantics.md 8), not
    /// always its position in the final list (a later addition before it moves it down), so the
    /// result's handle at that index is shared only when it is this very document.
    func changeDocument(_ i: Int) -> CDocument {
        let c = view.changes[i]
        if c.kind != .removed, c.newIndex >= 0, c.newIndex < view.documents.count,
           view.documents[c.newIndex].key == c.document.key {
            return document(c.newIndex)
        }
        return lock.withLock {
            if let d = removed[i] { return d }
            let d = CDocument(key: c.document.key, document: c.document, fromCache: view.isFromCache)
            removed[i] = d
            return d
        }
    }
}

@inline(__always)
func snap(_ s: OpaquePointer?) -> CSnapshot? {
    s.map { Unmanaged<CSnapshot>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("ember_snapshot_retain")
public func ember_snapshot_retain(_ s: OpaquePointer?) -> OpaquePointer? {
    guard let s else { return nil }
    _ = Unmanaged<CSnapshot>.fromOpaque(UnsafeRawPointer(s)).retain()
    return s
}

@_cdecl("ember_snapshot_release")
public func ember_snapshot_release(_ s: OpaquePointer?) {
    guard let s else { return }
    Unmanaged<CSnapshot>.fromOpaque(UnsafeRawPointer(s)).release()
}

@_cdecl("ember_snapshot_size")
public func ember_snapshot_size(_ s: OpaquePointer?) -> Int { snap(s)?.view.documents.count ?? 0 }

@_cdecl("ember_snapshot_document")
public func ember_snapshot_document(_ s: OpaquePointer?, _ i: Int) -> OpaquePointer? {
    guard let o = snap(s), i >= 0, i < o.view.documents.count else { return nil }
    return unretained(o.document(i))
}

@_cdecl("ember_snapshot_change_count")
public func ember_snapshot_change_count(_ s: OpaquePointer?) -> Int { snap(s)?.view.changes.count ?? 0 }

@_cdecl("ember_snapshot_change")
public func ember_snapshot_change(_ s: OpaquePointer?, _ i: Int, _ out: UnsafeMutablePointer<ember_document_change>?,
                                  _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(s, CSnapshot.self, "snapshot")
        guard let out else { throw invalid("out is NULL") }
        guard i >= 0, i < o.view.changes.count else {
            throw EmberError(.outOfRange, "Change \(UInt(bitPattern: i)) is past the end (the snapshot has \(o.view.changes.count))")
        }
        let c = o.view.changes[i]
        let type: Int32
        switch c.kind {
        case .added: type = Int32(EMBER_CHANGE_ADDED)
        case .removed: type = Int32(EMBER_CHANGE_REMOVED)
        case .modified, .metadata: type = Int32(EMBER_CHANGE_MODIFIED)
        }
        let npos = Int(bitPattern: UInt.max)
        out.pointee = ember_document_change(type: type, document: unretained(o.changeDocument(i)),
                                            old_index: c.oldIndex < 0 ? npos : c.oldIndex,
                                            new_index: c.newIndex < 0 ? npos : c.newIndex)
        return true
    }
}

@_cdecl("ember_snapshot_is_from_cache")
public func ember_snapshot_is_from_cache(_ s: OpaquePointer?) -> Bool { snap(s)?.view.isFromCache ?? false }

@_cdecl("ember_snapshot_has_pending_writes")
public func ember_snapshot_has_pending_writes(_ s: OpaquePointer?) -> Bool { snap(s)?.view.hasPendingWrites ?? false }
