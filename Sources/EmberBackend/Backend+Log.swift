import EmberModel

/// Another server's commits, as the shared log (`CommitLog`) hands them over: stored here as
/// they are and announced to the connections whose targets they change, in the log's order.
extension Backend {
    /// Applies a commit another server logged at `version` (tombstones for deletes). On the
    /// backend's queue, from the `CommitLog` only. A document this store cannot take is left out
    /// (memory stores take every one).
    public func applyLogged(version: Int64, documents: [Document]) {
        queue.assertCurrent()
        noteVersion(version)
        var changes: [(key: DocumentKey, old: Document?, new: Document, unchanged: Bool)] = []
        _ = try? persistence.runTransaction("logged commit") {
            changes.removeAll()
            for d in documents {
                let old = store.get(d.key)
                if d.exists { store.put(d) } else { store.remove(d.key) }
                changes.append((d.key, old.flatMap { $0.exists ? $0 : nil }, d, false))
            }
        }
        counters.update { $0.loggedCommits += 1 }
        announce(changes, version: version, origin: nil)
    }

    /// Replaces every document with `documents`, current at `version`, announced as one logged
    /// commit of the differences (a server that fell behind the log's floor starts again from a
    /// snapshot). On the backend's queue, from the `CommitLog` only.
    public func replaceLogged(version: Int64, documents: [Document]) {
        queue.assertCurrent()
        let incoming = Dictionary(documents.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        var changed: [Document] = []
        for key in storedKeys() where incoming[key] == nil { changed.append(Document.missing(key, version: version)) }
        for d in documents {
            if let old = store.get(d.key), old.exists, old.updateTime == d.updateTime { continue }
            changed.append(d)
        }
        applyLogged(version: version, documents: changed)
    }

    /// The keys of every existing document, walked collection by collection.
    func storedKeys() -> [DocumentKey] {
        var keys: [DocumentKey] = []
        var visited = Set<ResourcePath>()
        func walk(_ parent: ResourcePath) {
            for id in store.collectionIds(under: parent) {
                let collection = parent.appending(id)
                var below: [ResourcePath] = []
                for d in store.documents(in: collection) where d.exists {
                    keys.append(d.key)
                    below.append(d.key.path)
                }
                for docId in store.collectionIds(under: collection) { below.append(collection.appending(docId)) }
                for p in below where visited.insert(p).inserted { walk(p) }
            }
        }
        walk(ResourcePath(segments: []))
        return keys
    }

    /// The shared log's floor (see `CommitLog.resumeFloor`); 0 without a log.
    public var resumeFloor: Int64 { commitLog?.resumeFloor ?? 0 }

    /// Loads documents that are current at `version` without announcing them (a server starting
    /// from the shared store's snapshot, before any connection listens).
    public func loadLogged(version: Int64, documents: [Document]) throws {
        queue.assertCurrent()
        noteVersion(version)
        try persistence.runTransaction("load") {
            for d in documents where d.exists { store.put(d) }
        }
    }

    /// With a shared log, applies every commit logged so far before a read (a listen, a lookup, a
    /// query), so a read sees every commit acknowledged before it began, on any server.
    func readBarrier() {
        queue.assertCurrent()
        commitLog?.catchUp()
    }

    /// Runs `body` on the backend's queue and waits for it (not from the queue itself).
    public func onQueue<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync { try body() }
    }

    /// Runs `body` on the backend's queue, later.
    public func onQueueAsync(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
