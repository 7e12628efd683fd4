import Foundation
import EmberModel
import EmberCore

/// Responsible for: snapshot metadata: whether local writes are pending and whether the data
/// came from the cache.
public struct SnapshotMetadata: Sendable, Equatable {
    public let hasPendingWrites: Bool
    public let isFromCache: Bool
}

/// Responsible for: one document as read or heard: its data (converted to Swift values on
/// access), id, reference and metadata.
///
///     if let data = snapshot.data() { print(data["name"] ?? "") }
public class DocumentSnapshot: @unchecked Sendable { // immutable; open to subclasses, which the compiler cannot check
    let firestore: Firestore
    let key: DocumentKey
    let document: Document?
    public let metadata: SnapshotMetadata

    init(firestore: Firestore, key: DocumentKey, document: Document?, fromCache: Bool) {
        self.firestore = firestore
        self.key = key
        self.document = document?.exists == true ? document : nil
        self.metadata = SnapshotMetadata(hasPendingWrites: document?.hasLocalMutations ?? false, isFromCache: fromCache)
    }

    public var exists: Bool { document != nil }
    public var documentID: String { key.id }
    public var reference: DocumentReference { DocumentReference(firestore: firestore, key: key) }

    public func data() -> [String: Any]? {
        document.map { UserData.toSwift($0.data, firestore: firestore) }
    }

    /// The value at a field (a dotted String or a FieldPath), or nil.
    public func get(_ field: Any) -> Any? {
        guard let doc = document, let path = try? UserData.fieldPath(field), let v = doc.field(path) else { return nil }
        return UserData.toSwift(v, firestore: firestore)
    }

    public subscript(key: Any) -> Any? { self.get(key) }
}

/// Responsible for: a document known to exist, as found in a query result.
public final class QueryDocumentSnapshot: DocumentSnapshot, @unchecked Sendable { // restates its base's: immutable too
    public override func data() -> [String: Any] { super.data() ?? [:] }
}

/// Responsible for: the result of a query: documents in order, the changes since the previous
/// snapshot, and metadata.
public final class QuerySnapshot: Sendable {
    let firestore: Firestore
    let view: ViewSnapshot
    public let query: Query
    public let metadata: SnapshotMetadata

    init(firestore: Firestore, view: ViewSnapshot, query: Query) {
        self.firestore = firestore
        self.view = view
        self.query = query
        self.metadata = SnapshotMetadata(hasPendingWrites: view.hasPendingWrites, isFromCache: view.isFromCache)
    }

    public var documents: [QueryDocumentSnapshot] {
        view.documents.map { QueryDocumentSnapshot(firestore: firestore, key: $0.key, document: $0, fromCache: view.isFromCache) }
    }
    public var count: Int { view.documents.count }
    public var isEmpty: Bool { view.documents.isEmpty }

    /// The changes since the previous snapshot of the same listener (all added for the first).
    public var documentChanges: [DocumentChange] {
        view.changes.map { DocumentChange(change: $0, firestore: firestore, fromCache: view.isFromCache) }
    }

    public func documentChanges(includeMetadataChanges: Bool) -> [DocumentChange] {
        includeMetadataChanges ? documentChanges : view.changes.filter { $0.kind != .metadata }.map { DocumentChange(change: $0, firestore: firestore, fromCache: view.isFromCache) }
    }
}

public enum DocumentChangeType: Sendable { case added, modified, removed }

/// Responsible for: one document's change between two snapshots; `oldIndex`/`newIndex` are
/// `UInt(NSNotFound)` where there is none, as in the Firebase SDK.
public struct DocumentChange: Sendable {
    public let type: DocumentChangeType
    public let document: QueryDocumentSnapshot
    public let oldIndex: UInt
    public let newIndex: UInt

    init(change c: EmberCore.DocumentChange, firestore: Firestore, fromCache: Bool) {
        switch c.kind {
        case .added: type = .added
        case .removed: type = .removed
        case .modified, .metadata: type = .modified
        }
        document = QueryDocumentSnapshot(firestore: firestore, key: c.document.key, document: c.document, fromCache: fromCache)
        oldIndex = c.oldIndex < 0 ? UInt(NSNotFound) : UInt(c.oldIndex)
        newIndex = c.newIndex < 0 ? UInt(NSNotFound) : UInt(c.newIndex)
    }
}
