/// Responsible for: a set of documents kept sorted in a query's order, with lookup by key and
/// position by binary search. Inserting or removing is O(log n) comparisons plus a move inside
/// one chunk of the `DocumentList`, which snapshots share with the set.
///
///     var set = DocumentSet(orderBy: query.normalizedOrderBy)
///     set.insert(doc); set.index(of: doc.key)
public struct DocumentSet: Sendable {
    public let orderBy: [OrderBy]
    public private(set) var sorted = DocumentList()
    private var byKey: [DocumentKey: Document] = [:]

    public init(orderBy: [OrderBy]) { self.orderBy = orderBy }

    public var count: Int { sorted.count }
    public var isEmpty: Bool { sorted.isEmpty }
    public subscript(key: DocumentKey) -> Document? { byKey[key] }
    public func contains(_ key: DocumentKey) -> Bool { byKey[key] != nil }

    @inline(__always)
    func compare(_ a: Document, _ b: Document) -> Int {
        Query.compare(a, b, orderBy: orderBy)
    }

    /// Position where `doc` is or would be.
    public func insertionIndex(of doc: Document) -> Int {
        sorted.partitionIndex { compare($0, doc) < 0 }
    }

    public func index(of key: DocumentKey) -> Int? {
        guard let doc = byKey[key] else { return nil }
        let i = insertionIndex(of: doc)
        return i < sorted.count && sorted[i].key == key ? i : nil
    }

    /// Inserts or replaces the document with the same key. Returns the previous version.
    @discardableResult
    public mutating func insert(_ doc: Document) -> Document? {
        // A new version that sorts where the old one was (the usual update) replaces it in place:
        // the same array as removing and re-inserting, without two shifts and a second search.
        if let old = byKey[doc.key] {
            let i = insertionIndex(of: old)
            if i < sorted.count && sorted[i].key == doc.key && sorted.fitsBetweenNeighbours(of: i, doc, orderBy: orderBy) {
                sorted.replace(at: i, with: doc)
                byKey[doc.key] = doc
                return old
            }
        }
        let old = remove(doc.key)
        let i = insertionIndex(of: doc)
        sorted.insert(doc, at: i)
        byKey[doc.key] = doc
        return old
    }

    @discardableResult
    public mutating func remove(_ key: DocumentKey) -> Document? {
        guard let i = index(of: key) else { return nil }
        byKey[key] = nil
        return sorted.remove(at: i)
    }

    /// Builds from unsorted documents in one sort.
    public mutating func replaceAll(_ docs: [Document]) {
        sorted = DocumentList(docs.sorted { compare($0, $1) < 0 })
        byKey = Dictionary(docs.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
    }

    /// The first or last `limit` documents (all of them without a limit), sharing storage.
    public func window(limit: Int?, type: Query.LimitType) -> DocumentList {
        guard let n = limit, n < sorted.count else { return sorted }
        return type == .first ? sorted.prefix(count: n) : sorted.suffix(count: n)
    }
}
