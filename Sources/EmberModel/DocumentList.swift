/// Responsible for: an ordered list of documents that snapshots can share with the view that
/// keeps changing it. A large list lives in chunks of at most `2 * chunkSize` documents; a copy
/// of the list shares every chunk, and a change copies only the chunk it touches (plus the small
/// array of chunk references). So handing a 1,000-document result to a listener and then changing
/// one document costs one chunk, not the whole result (Firestore's SortedSet is a persistent tree
/// for the same reason). A list of up to `2 * chunkSize` documents is one plain array: copying
/// that is cheap, and the list then costs what an array costs (a document listener's view holds a
/// few such lists, and listeners are counted in the thousands).
///
///     var list = DocumentList(docs); let snapshot = list; list.insert(d, at: 3)   // snapshot unchanged
public struct DocumentList: RandomAccessCollection, @unchecked Sendable { // shared chunks are never written (copy on write)
    /// A chunk (and the chunk index) is changed only while this list holds the only reference to
    /// it, so what two lists share is never written: that is what makes sharing across threads safe.
    /// For the same reason no access to them can overlap a write, so their properties skip Swift's
    /// dynamic exclusivity checks (a check per read was a tenth of a query view's update).
    final class Chunk {
        @exclusivity(unchecked) var docs: [Document]
        init(_ docs: [Document]) { self.docs = docs }
    }

    final class Chunks {
        @exclusivity(unchecked) var chunks: [Chunk]
        /// `starts[c]`: the list index of chunk c's first document.
        @exclusivity(unchecked) var starts: [Int]
        @exclusivity(unchecked) var count: Int
        init(chunks: [Chunk], starts: [Int], count: Int) { self.chunks = chunks; self.starts = starts; self.count = count }
        func copy() -> Chunks { Chunks(chunks: chunks, starts: starts, count: count) }
    }

    static let chunkSize = 64
    /// The documents while the list is small (`big` is nil).
    private var flat: [Document] = []
    private var big: Chunks?

    public init() {}

    /// One array when `docs` is small, else chunks of `chunkSize`.
    public init<S: Sequence>(_ docs: S) where S.Element == Document {
        let all = Array(docs)
        if all.count <= 2 * DocumentList.chunkSize { flat = all; return }
        var chunks: [Chunk] = [], starts: [Int] = []
        var i = 0
        while i < all.count {
            let n = Swift.min(DocumentList.chunkSize, all.count - i)
            starts.append(i)
            chunks.append(Chunk(Array(all[i..<(i + n)])))
            i += n
        }
        big = Chunks(chunks: chunks, starts: starts, count: all.count)
    }

    public var count: Int { big?.count ?? flat.count }
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(i: Int) -> Document {
        guard let b = big else { return flat[i] }
        // Each read of a class's stored array is an exclusivity check: the starts are read once.
        let starts = b.starts
        let c = DocumentList.chunkIndex(of: i, in: starts)
        return b.chunks[c].docs[i - starts[c]]
    }

    /// The chunk holding list index `i` (0 <= i < count), found in the chunks' `starts`.
    @inline(__always)
    private static func chunkIndex(of i: Int, in starts: [Int]) -> Int {
        var lo = 0, hi = starts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if starts[mid] <= i { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Whether `doc` sorts strictly between the neighbours of index `i` in `orderBy`: put in place
    /// of the document at `i`, it keeps the list sorted.
    public func fitsBetweenNeighbours(of i: Int, _ doc: Document, orderBy: [OrderBy]) -> Bool {
        (i == 0 || Query.compare(self[i - 1], doc, orderBy: orderBy) < 0)
            && (i == count - 1 || Query.compare(doc, self[i + 1], orderBy: orderBy) < 0)
    }

    /// The first index whose document is not `before` (`before` must be true for a prefix of the
    /// list and false after it): a binary search over chunks, then inside one chunk.
    public func partitionIndex(_ before: (Document) -> Bool) -> Int {
        guard let b = big else { return DocumentList.partition(flat, before) }
        var lo = 0, hi = b.chunks.count
        while lo < hi {   // first chunk whose last document is not before
            let mid = (lo + hi) >> 1
            if before(b.chunks[mid].docs[b.chunks[mid].docs.count - 1]) { lo = mid + 1 } else { hi = mid }
        }
        if lo == b.chunks.count { return b.count }
        return b.starts[lo] + DocumentList.partition(b.chunks[lo].docs, before)
    }

    private static func partition(_ docs: [Document], _ before: (Document) -> Bool) -> Int {
        var a = 0, b = docs.count
        while a < b {
            let mid = (a + b) >> 1
            if before(docs[mid]) { a = mid + 1 } else { b = mid }
        }
        return a
    }

    // MARK: changes (each copies at most the chunk it touches)

    /// The chunk index, made unique to this list, and chunk `c` in it made unique too.
    private mutating func uniqueChunk(_ c: Int) -> Chunks {
        if !isKnownUniquelyReferenced(&big!) { big = big!.copy() }
        let b = big!
        if !isKnownUniquelyReferenced(&b.chunks[c]) { b.chunks[c] = Chunk(b.chunks[c].docs) }
        return b
    }

    public mutating func replace(at i: Int, with doc: Document) {
        if big == nil { flat[i] = doc; return }
        let c = DocumentList.chunkIndex(of: i, in: big!.starts)   // (no binding: it would make the index look shared)
        let b = uniqueChunk(c)
        b.chunks[c].docs[i - b.starts[c]] = doc
    }

    public mutating func insert(_ doc: Document, at i: Int) {
        precondition(i >= 0 && i <= count, "DocumentList index out of range")
        if big == nil {
            flat.insert(doc, at: i)
            if flat.count > 2 * DocumentList.chunkSize { self = DocumentList(flat) }   // now chunks
            return
        }
        let c = i == big!.count ? big!.chunks.count - 1 : DocumentList.chunkIndex(of: i, in: big!.starts)
        let b = uniqueChunk(c)
        b.chunks[c].docs.insert(doc, at: i - b.starts[c])
        b.count += 1
        for k in (c + 1)..<b.starts.count { b.starts[k] += 1 }
        if b.chunks[c].docs.count > 2 * DocumentList.chunkSize {
            let docs = b.chunks[c].docs
            let half = docs.count / 2
            b.chunks[c] = Chunk(Array(docs[..<half]))
            b.chunks.insert(Chunk(Array(docs[half...])), at: c + 1)
            b.starts.insert(b.starts[c] + half, at: c + 1)
        }
    }

    @discardableResult
    public mutating func remove(at i: Int) -> Document {
        precondition(i >= 0 && i < count, "DocumentList index out of range")
        if big == nil { return flat.remove(at: i) }
        let c = DocumentList.chunkIndex(of: i, in: big!.starts)
        let b = uniqueChunk(c)
        let doc = b.chunks[c].docs.remove(at: i - b.starts[c])
        b.count -= 1
        for k in (c + 1)..<b.starts.count { b.starts[k] -= 1 }
        if b.chunks[c].docs.isEmpty {
            b.chunks.remove(at: c)
            b.starts.remove(at: c)
        }
        if b.count <= DocumentList.chunkSize { self = DocumentList(Array(self)) }   // back to one array
        return doc
    }

    /// The first `n` or last `n` documents as a list of their own.
    public func prefix(count n: Int) -> DocumentList { n >= count ? self : DocumentList(self[..<n]) }
    public func suffix(count n: Int) -> DocumentList { n >= count ? self : DocumentList(self[(count - n)...]) }
}
