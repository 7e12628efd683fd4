import EmberModel

/// Responsible for: one immutable state of a query's result as a listener sees it: the documents
/// in order, the changes since the previous state (with old/new indexes, docs/semantics.md 8), and
/// the metadata (from cache, pending writes).
public final class ViewSnapshot: Sendable {
    public let query: Query
    /// Shares its chunks with the view: a snapshot costs O(changes), not O(result size).
    public let documents: DocumentList
    public let changes: [DocumentChange]
    public let isFromCache: Bool
    public let hasPendingWrites: Bool
    public let syncStateChanged: Bool
    /// Backend version the result reflects (µs), the snapshot's read time.
    public let readTime: Int64

    init(query: Query, documents: DocumentList, changes: [DocumentChange], isFromCache: Bool,
         hasPendingWrites: Bool, syncStateChanged: Bool, readTime: Int64) {
        self.query = query
        self.documents = documents
        self.changes = changes
        self.isFromCache = isFromCache
        self.hasPendingWrites = hasPendingWrites
        self.syncStateChanged = syncStateChanged
        self.readTime = readTime
    }

    /// The same state with metadata-only changes dropped (listeners without includeMetadataChanges).
    func withoutMetadataChanges() -> ViewSnapshot {
        guard changes.contains(where: { $0.kind == .metadata }) else { return self }
        return ViewSnapshot(query: query, documents: documents, changes: changes.filter { $0.kind != .metadata },
                            isFromCache: isFromCache, hasPendingWrites: hasPendingWrites,
                            syncStateChanged: syncStateChanged, readTime: readTime)
    }

    /// The same documents as a first snapshot: every document added, indexes 0..n-1.
    func asInitial() -> ViewSnapshot {
        let changes = documents.enumerated().map { DocumentChange(kind: .added, document: $0.element, oldIndex: -1, newIndex: $0.offset) }
        return ViewSnapshot(query: query, documents: documents, changes: changes, isFromCache: isFromCache,
                            hasPendingWrites: hasPendingWrites, syncStateChanged: true, readTime: readTime)
    }
}

/// Responsible for: one document's change between two snapshots; indexes are -1 where none.
public struct DocumentChange: Sendable {
    public enum Kind: Int, Sendable {
        case added = 0, removed = 1, modified = 2
        /// Only `hasLocalMutations` changed; reported as `modified` to listeners that ask for metadata.
        case metadata = 3
    }
    public let kind: Kind
    public let document: Document
    public let oldIndex: Int
    public let newIndex: Int

    /// Order of kinds within a snapshot: removed, added, then modified (metadata with modified).
    var rank: Int {
        switch kind {
        case .removed: return 0
        case .added: return 1
        case .modified, .metadata: return 2
        }
    }
}
