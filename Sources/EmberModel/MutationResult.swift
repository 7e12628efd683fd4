/// Responsible for: what a backend that does not send documents back (a server's WriteResult)
/// says about one committed write: the document's version after it (its update time; the commit
/// time for a delete) and the values its transforms produced, and applying a committed write to
/// the client's cached document with them, as the Firebase SDKs do (`applyToRemoteDocument`), so
/// the cache holds the committed state when the write leaves the queue.
///
///     let committed = m.applyCommitted(to: cached, result: MutationResult(version: t, transformResults: []))
public struct MutationResult: Sendable, Equatable {
    public let version: Int64
    /// One per transform of the write, in order; empty when the backend sent none.
    public let transformResults: [Value]

    public init(version: Int64, transformResults: [Value] = []) {
        self.version = version
        self.transformResults = transformResults
    }
}

extension Mutation {
    /// The document after this write committed, from the cached `doc` (nil: not cached) and the
    /// backend's `result`. Nil when it cannot be known here: a patch (or a transform) of a
    /// document the cache does not hold, or whose precondition the cached state contradicts (the
    /// cache is stale; the listen stream brings the real document), and for a verify.
    public func applyCommitted(to doc: Document?, result: MutationResult) -> Document? {
        switch kind {
        case .verify:
            return nil
        case .delete:
            return Document.missing(key, version: result.version)
        case .set(let d):
            return committed(d, base: doc, result: result)
        case .patch(let d, let mask):
            guard let doc, preconditionHolds(doc) else { return nil }
            var data = doc.exists ? doc.data : MapValue()
            for path in mask { data.setValue(d.value(at: path), at: path) }
            return committed(data, base: doc, result: result)
        }
    }

    private func committed(_ data: MapValue, base doc: Document?, result: MutationResult) -> Document {
        var data = data
        let useResults = result.transformResults.count == transforms.count
        for (i, t) in transforms.enumerated() {
            let v = useResults ? result.transformResults[i] : t.op.applyAtBackend(to: data.value(at: t.path), commitTime: result.version)
            data.setValue(v, at: t.path)
        }
        let existed = doc?.exists == true
        return Document(key: key, data: data, version: result.version,
                        createTime: existed ? doc!.createTime : result.version, updateTime: result.version)
    }
}
