import Foundation
import EmberModel
import EmberCore

/// Responsible for: a document's location and every operation on it: set, merge, update,
/// delete, get (with a source) and snapshot listeners. An invalid path is reported by the
/// operation that uses it (to its completion or listener), never by a crash.
///
///     let sf = db.collection("cities").document("SF")
///     sf.setData(["name": "San Francisco"]) { error in }
///     let reg = sf.addSnapshotListener { snapshot, error in }
public final class DocumentReference: Sendable {
    public let firestore: Firestore
    public let path: String
    let key: DocumentKey?
    let error: EmberError?

    init(firestore: Firestore, path: String) {
        self.firestore = firestore
        var parsed: DocumentKey?
        do { parsed = try DocumentKey(parsing: path); error = nil } catch { parsed = nil; self.error = error as? EmberError }
        key = parsed
        // Canonical once valid: "/cities/SF/" reads back as "cities/SF", as in the Apple SDK.
        self.path = parsed?.path.canonical ?? path
    }

    init(firestore: Firestore, key: DocumentKey) {
        self.firestore = firestore
        self.path = key.path.canonical
        self.key = key
        self.error = nil
    }

    func validKey() throws -> DocumentKey {
        if let e = error { throw e }
        return key!
    }

    public var documentID: String { key?.id ?? (splitAtSlashes(path, omittingEmpty: true).last ?? "") }
    public var parent: CollectionReference {
        CollectionReference(firestore: firestore, path: key?.collectionPath.canonical ?? "")
    }

    public func collection(_ collectionPath: String) -> CollectionReference {
        CollectionReference(firestore: firestore, path: path + "/" + collectionPath)
    }

    // MARK: writes

    func write(_ make: () throws -> Mutation, _ completion: (@Sendable (Error?) -> Void)?) {
        do {
            let m = try make()
            try firestore.client.write([m], completion: completion.map { c in { c($0) } })
        } catch {
            firestore.deliver(.failure(error), completion)
        }
    }

    static func setMutation(_ key: DocumentKey, _ data: [String: Any], merge: Bool, mergeFields: [Any]?) throws -> Mutation {
        var parsed = try UserData.parseSet(data, merge: merge || mergeFields != nil)
        if let fields = mergeFields {
            let paths = try fields.map(UserData.fieldPath)
            try MergeFieldDeletes.check(parsed.deletes, selectedBy: paths)
            for p in paths where parsed.data.value(at: p) == nil && !parsed.mask.contains(p) && !parsed.transforms.contains(where: { $0.path == p }) {
                throw EmberError.invalidArgument("Field '\(p)' is specified in your field mask but missing from your input data.")
            }
            parsed.mask = parsed.mask.filter { m in paths.contains { $0.isPrefix(of: m) } } + paths.filter { parsed.data.value(at: $0) != nil }
            parsed.transforms = parsed.transforms.filter { t in paths.contains { $0.isPrefix(of: t.path) } }
        }
        try DocumentLimits.validate(key: key, data: parsed.data)
        if merge || mergeFields != nil {
            return Mutation(key: key, kind: .patch(parsed.data, mask: parsed.mask), transforms: parsed.transforms)
        }
        return Mutation(key: key, kind: .set(parsed.data), transforms: parsed.transforms)
    }

    static func updateMutation(_ key: DocumentKey, _ fields: [AnyHashable: Any]) throws -> Mutation {
        let parsed = try UserData.parseUpdate(fields)
        try DocumentLimits.validate(key: key, data: parsed.data)
        return Mutation(key: key, kind: .patch(parsed.data, mask: parsed.mask), transforms: parsed.transforms, precondition: .exists(true))
    }

    public func setData(_ documentData: [String: Any]) { setData(documentData, completion: nil) }
    public func setData(_ documentData: [String: Any], completion: (@Sendable (Error?) -> Void)?) {
        write({ try DocumentReference.setMutation(validKey(), documentData, merge: false, mergeFields: nil) }, completion)
    }
    public func setData(_ documentData: [String: Any], merge: Bool, completion: (@Sendable (Error?) -> Void)? = nil) {
        write({ try DocumentReference.setMutation(validKey(), documentData, merge: merge, mergeFields: nil) }, completion)
    }
    public func setData(_ documentData: [String: Any], mergeFields: [Any], completion: (@Sendable (Error?) -> Void)? = nil) {
        write({ try DocumentReference.setMutation(validKey(), documentData, merge: false, mergeFields: mergeFields) }, completion)
    }
    public func updateData(_ fields: [AnyHashable: Any]) { updateData(fields, completion: nil) }
    public func updateData(_ fields: [AnyHashable: Any], completion: (@Sendable (Error?) -> Void)?) {
        write({ try DocumentReference.updateMutation(validKey(), fields) }, completion)
    }
    public func delete() { delete(completion: nil) }
    public func delete(completion: (@Sendable (Error?) -> Void)?) {
        write({ Mutation(key: try validKey(), kind: .delete) }, completion)
    }

    public func setData(_ documentData: [String: Any]) async throws {
        try await awaitWrite { self.setData(documentData, completion: $0) }
    }
    public func setData(_ documentData: [String: Any], merge: Bool) async throws {
        try await awaitWrite { self.setData(documentData, merge: merge, completion: $0) }
    }
    public func updateData(_ fields: [AnyHashable: Any]) async throws {
        try await awaitWrite { self.updateData(fields, completion: $0) }
    }
    public func delete() async throws {
        try await awaitWrite { self.delete(completion: $0) }
    }

    private func awaitWrite(_ start: (@escaping @Sendable (Error?) -> Void) -> Void) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            start { e in if let e { c.resume(throwing: e) } else { c.resume() } }
        }
    }

    // MARK: reads

    public func getDocument(source: FirestoreSource = .default, completion: @escaping @Sendable (DocumentSnapshot?, Error?) -> Void) {
        do {
            let key = try validKey()
            try firestore.client.getDocument(key, source: source.core) { [firestore] r in
                firestore.post {
                    switch r {
                    case .success(let read): completion(DocumentSnapshot(firestore: firestore, key: read.key, document: read.document, fromCache: read.fromCache), nil)
                    case .failure(let e): completion(nil, e)
                    }
                }
            }
        } catch {
            firestore.post { completion(nil, error) }
        }
    }

    public func getDocument(source: FirestoreSource = .default) async throws -> DocumentSnapshot {
        try await withCheckedThrowingContinuation { c in
            getDocument(source: source) { s, e in if let s { c.resume(returning: s) } else { c.resume(throwing: e!) } }
        }
    }

    // MARK: listening

    @discardableResult
    public func addSnapshotListener(_ listener: @escaping @Sendable (DocumentSnapshot?, Error?) -> Void) -> ListenerRegistration {
        addSnapshotListener(options: SnapshotListenOptions(), listener: listener)
    }

    @discardableResult
    public func addSnapshotListener(includeMetadataChanges: Bool, listener: @escaping @Sendable (DocumentSnapshot?, Error?) -> Void) -> ListenerRegistration {
        addSnapshotListener(options: SnapshotListenOptions().withIncludeMetadataChanges(includeMetadataChanges), listener: listener)
    }

    @discardableResult
    public func addSnapshotListener(options: SnapshotListenOptions, listener: @escaping @Sendable (DocumentSnapshot?, Error?) -> Void) -> ListenerRegistration {
        let fs = firestore
        do {
            let key = try validKey()
            let token = try fs.client.listen(EmberModel.Query(document: key), options: options.core) { event in
                switch event {
                case .snapshot(let s):
                    listener(DocumentSnapshot(firestore: fs, key: key, document: s.documents.first, fromCache: s.isFromCache), nil)
                case .error(let e): listener(nil, e)
                }
            }
            return ListenerRegistration(token: token)
        } catch {
            return ListenerRegistration.failed(error, firestore: fs) { listener(nil, $0) }
        }
    }
}

/// Responsible for: a collection's location: its documents, auto ids, and queries over it.
///
///     let ref = db.collection("cities").addDocument(data: ["name": "Tokyo"])
public final class CollectionReference: Query, @unchecked Sendable { // restates its base's: immutable too
    public let path: String

    init(firestore: Firestore, path: String) {
        let p = try? ResourcePath(parsing: path)
        self.path = p?.canonical ?? path
        do {
            let p = try ResourcePath(parsing: path)
            guard p.isCollectionPath else {
                throw EmberError.invalidArgument("Invalid collection reference. Collection references must have an odd number of segments, but '\(path)' has \(p.count).")
            }
            super.init(firestore: firestore, core: EmberModel.Query(collection: p))
        } catch {
            super.init(firestore: firestore, error: error as? EmberError)
        }
    }

    public var collectionID: String { splitAtSlashes(path, omittingEmpty: true).last ?? "" }
    public var parent: DocumentReference? {
        let segs = splitAtSlashes(path, omittingEmpty: true)
        return segs.count > 1 ? DocumentReference(firestore: firestore, path: segs.dropLast().joined(separator: "/")) : nil
    }

    public func document(_ documentPath: String) -> DocumentReference {
        DocumentReference(firestore: firestore, path: path + "/" + documentPath)
    }

    /// A reference with a new 20-character random id.
    public func document() -> DocumentReference { document(AutoId.make()) }

    @discardableResult
    public func addDocument(data: [String: Any], completion: (@Sendable (Error?) -> Void)? = nil) -> DocumentReference {
        let ref = document()
        ref.setData(data, completion: completion)
        return ref
    }

    public func addDocument(data: [String: Any]) async throws -> DocumentReference {
        let ref = document()
        try await ref.setData(data)
        return ref
    }
}

/// Responsible for: Firestore-style auto ids: 20 characters of [A-Za-z0-9] from the system's
/// random source.
public enum AutoId {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    public static func make() -> String {
        var g = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int(g.next(upperBound: UInt64(alphabet.count)))] })
    }
}
