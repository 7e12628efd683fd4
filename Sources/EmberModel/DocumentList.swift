/// Responsible for: an ordered list of documents that snapshots can share with the view that
/// keeps changing it. The documents live in chunks of at most `2 * chunkSize`; a copy of the list
/// shares every chunk, and a change copies only the chunk it touches (plus the small array of
/// chunk references). So handing a 1,000-document result to a listener and then changing one
/// document costs one chunk, not the whole result (Firestore's SortedSet is a persistent tree for
/// the same reason).
///
///     var list = DocumentList(docs); let snapshot = list; list.insert(d, at: 3)   // snapshot unchanged
public struct DocumentList: RandomAccessCollection, @unchecked Sendable {
    /// A chunk is changed only while this list holds the only reference to it, so a chunk that
    /// two lists share is never written: that is what makes sharing across threads safe.
    final class Chunk {
        var docs: [Document]
        init(_ docs: [Document]) { self.docs = docs }
    }

    static let chunkSize = 64
    private var chunks: [Chunk] = []
    /// `starts[c]`: the list index of chunk c's first document.
    private var starts: [Int] = []
    public private(set) var count = 0

    public init() {}

    public init<S: Sequence>(_ docs: S) where S.Element == Document {
        let all = Array(docs)
        var i = 0
        while i < all.count {
            let n = Swift.min(DocumentList.chunkSize, all.count - i)
            starts.append(i)
            chunks.append(Chunk(Array(all[i..<(i + n)])))
            i += n
        }
        count = all.count
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(i: Int) -> Document {
        let c = chunkIndex(of: i)
        return chunks[c].docs[i - starts[c]]
    }

    /// The chunk holding list index `i` (0 <= i < count).
    @inline(__always)
    private func chunkIndex(of i: Int) -> Int {
        var lo = 0, hi = chunks.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if starts[mid] <= i { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The first index whose document is not `before` (`before` must be true for a prefix of the
    /// list and false after it): a binary search over chunks, then inside one chunk.
    public func partitionIndex(_ before: (Document) -> Bool) -> Int {
        var lo = 0, hi = chunks.count
        while lo < hi {   // first chunk whose last document is not before
            let mid = (lo + hi) >> 1
            if before(chunks[mid].docs[chunks[mid].docs.count - 1]) { lo = mid + 1 } else { hi = mid }
        }
        if lo == chunks.count { return count }
        let docs = chunks[lo].docs
        var a = 0, b = docs.count
        while a < b {
            let mid = (a + b) >> 1
            if before(docs[mid]) { a = mid + 1 } else { b = mid }
        }
        return starts[lo] + a
    }

    // MARK: changes (each copies at most the chunk it touches)

    private mutating func uniqueChunk(_ c: Int) {
        if !isKnownUniquelyReferenced(&chunks[c]) { chunks[c] = Chunk(chunks[c].docs) }
    }

    private mutating func shiftStarts(after c: Int, by delta: Int) {
        var k = c + 1
        while k < starts.count { starts[k] += delta; k += 1 }
    }

    public mutating func replace(at i: Int, with doc: Document) {
        let c = chunkIndex(of: i)
        uniqueChunk(c)
        chunks[c].docs[i - starts[c]] = doc
    }

    public mutating func insert(_ doc: Document, at i: Int) {
        precondition(i >= 0 && i <= count, "DocumentList index out of range")
        if chunks.isEmpty {
            chunks = [Chunk([doc])]
            starts = [0]
            count = 1
            return
        }
        let c = i == count ? chunks.count - 1 : chunkIndex(of: i)
        uniqueChunk(c)
        chunks[c].docs.insert(doc, at: i - starts[c])
        count += 1
        shiftStarts(after: c, by: 1)
        if chunks[c].docs.count > 2 * DocumentList.chunkSize {
            let docs = chunks[c].docs
            let half = docs.count / 2
            chunks[c] = Chunk(Array(docs[..<half]))
            chunks.insert(Chunk(Array(docs[half...])), at: c + 1)
            starts.insert(starts[c] + half, at: c + 1)
        }
    }

    @discardableResult
    public mutating func remove(at i: Int) -> Document {
        precondition(i >= 0 && i < count, "DocumentList index out of range")
        let c = chunkIndex(of: i)
        uniqueChunk(c)
        let doc = chunks[c].docs.remove(at: i - starts[c])
        count -= 1
        shiftStarts(after: c, by: -1)
        if chunks[c].docs.isEmpty {
            chunks.remove(at: c)
            starts.remove(at: c)
        }
        return doc
    }

    /// The first `n` or last `n` documents as a list of their own (shares whole chunks).
    public func prefix(count n: Int) -> DocumentList { n >= count ? self : DocumentList(self[..<n]) }
    public func suffix(count n: Int) -> DocumentList { n >= count ? self : DocumentList(self[(count - n)...]) }
}
