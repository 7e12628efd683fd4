import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import Foundation

typealias ListenResponse = Google_Firestore_V1_ListenResponse

/// Responsible for: the Listen stream's meaning, without the stream (the Firebase SDKs'
/// `WatchChangeAggregator`): per target, the keys the server holds in it as of the last event
/// handed over (its remote keys, kept across streams), the requests it has not acknowledged
/// (messages for a target are ignored until it has acknowledged them all), whether it is current,
/// its resume token, and what changed since the last event; and the documents received. At each
/// global NO_CHANGE with a read time it hands over a `WatchEvent`: every document received, and
/// per target its added and removed keys and sync state. A current document target that does
/// not hold its document gets a tombstone (the document does not exist). An existence filter
/// that disagrees with a query target's keys takes out the keys its bloom filter lacks; if that
/// does not account for the count (or it has none), it resets the target (its keys leave it, it
/// is not current, its token is dropped) and asks for it to be listened to again after the event
/// (`takeRelisten`); a document target counted 0 gets a tombstone. A REMOVE with a cause ends a
/// target (`takeRejected`).
///
///     agg.add(1, query: q, knownKeys: [])
///     agg.sent(1)                                   // the add request went out
///     if let e = try agg.handle(response) { /* deliver e */ }
final class WatchAggregator {
    /// What one target has been told.
    final class TargetState {
        let query: Query
        /// The keys the server holds in the target, as of the last event handed over.
        var remoteKeys: Set<DocumentKey>
        /// Add and remove requests sent and not acknowledged (ADD, REMOVE) by the server.
        var pending = 0
        var current = false
        /// The newest token received, and the one of the last event handed over (what a new
        /// stream resumes from: a newer one may cover changes that were never handed over).
        var resumeToken: Data?
        var deliveredToken: Data?
        var added = Set<DocumentKey>()
        var removed = Set<DocumentKey>()
        var hasChanges = false
        var tokenChanged = false
        /// Reset by an existence filter mismatch since the last event.
        var mismatched = false

        init(query: Query, remoteKeys: Set<DocumentKey>, resumeToken: Data?) {
            self.query = query
            self.remoteKeys = remoteKeys
            self.resumeToken = resumeToken
            self.deliveredToken = resumeToken
        }

        func clearChanges() {
            added = []
            removed = []
            hasChanges = false
            tokenChanged = false
            mismatched = false
        }

        /// The server answered one of its add or remove requests.
        func acknowledged() { pending = max(0, pending - 1) }

        func updateToken(_ token: Data) {
            guard !token.isEmpty else { return }
            resumeToken = token
            tokenChanged = true
            hasChanges = true
        }
    }

    private(set) var targets: [Int32: TargetState] = [:]
    /// Documents received since the last event (tombstones of version 0 take the event's).
    private var documents: [DocumentKey: Document] = [:]
    private var documentOrder: [DocumentKey] = []
    /// Targets reset by a mismatch, listened to again once the event that reset them is out.
    private var resets: [Int32] = []
    private(set) var relisten: [Int32] = []
    private(set) var rejected: [(Int32, EmberError)] = []

    /// Documents the server sent (DocumentChange messages), for the resume figures.
    private(set) var documentsReceived = 0

    let codec: WireCodec
    init(codec: WireCodec) { self.codec = codec }

    /// `knownKeys`: the keys the server held in the target when the client last heard of it (none
    /// for a target new to the server); `resumeToken`: the token that goes with them.
    func add(_ id: Int32, query: Query, knownKeys: [DocumentKey], resumeToken: Data? = nil) {
        targets[id] = TargetState(query: query, remoteKeys: Set(knownKeys), resumeToken: resumeToken)
    }

    func remove(_ id: Int32) { targets[id] = nil }

    /// An add or remove request for `id` went out: the target is inactive until it is acknowledged.
    func sent(_ id: Int32) { targets[id]?.pending += 1 }

    /// The stream restarted: no request is outstanding, no target current, nothing received
    /// kept. Remote keys and the tokens of events handed over stay (a target resumes from them).
    func resetAll() {
        for t in targets.values {
            t.pending = 0
            t.current = false
            t.resumeToken = t.deliveredToken
            t.clearChanges()
        }
        documents = [:]
        documentOrder = []
        resets = []
    }

    func takeRelisten() -> [Int32] { defer { relisten = [] }; return relisten }
    func takeRejected() -> [(Int32, EmberError)] { defer { rejected = [] }; return rejected }

    private func active(_ id: Int32) -> TargetState? {
        guard let t = targets[id], t.pending == 0 else { return nil }
        return t
    }

    // MARK: messages

    /// Takes one message; returns an event at each global consistent point.
    func handle(_ r: ListenResponse) throws -> WatchEvent? {
        switch r.responseType {
        case .targetChange(let tc)?:
            return try targetChange(tc)
        case .documentChange(let dc)?:
            documentsReceived += 1
            let doc = try codec.document(dc.document)
            var touched = false
            for id in dc.targetIds where active(id) != nil {
                addKey(doc.key, to: id)
                touched = true
            }
            for id in dc.removedTargetIds where active(id) != nil {
                removeKey(doc.key, from: id)
                touched = true
            }
            if touched { note(doc) }
        case .documentDelete(let dd)?:
            let key = try codec.key(dd.document)
            let version = dd.hasReadTime ? WireCodec.micros(dd.readTime) : 0
            var touched = false
            for id in dd.removedTargetIds where active(id) != nil {
                removeKey(key, from: id)
                touched = true
            }
            if touched { note(Document.missing(key, version: version)) }
        case .documentRemove(let dr)?:
            let key = try codec.key(dr.document)
            for id in dr.removedTargetIds where active(id) != nil { removeKey(key, from: id) }
        case .filter(let f)?:
            filter(f)
        case nil:
            break
        }
        return nil
    }

    private func addKey(_ key: DocumentKey, to id: Int32) {
        let t = targets[id]!
        t.removed.remove(key)
        if !t.remoteKeys.contains(key) { t.added.insert(key) }
        t.hasChanges = true
    }

    private func removeKey(_ key: DocumentKey, from id: Int32) {
        let t = targets[id]!
        t.added.remove(key)
        if t.remoteKeys.contains(key) { t.removed.insert(key) }
        t.hasChanges = true
    }

    private func note(_ doc: Document) {
        if documents.updateValue(doc, forKey: doc.key) == nil { documentOrder.append(doc.key) }
    }

    private func filter(_ f: Google_Firestore_V1_ExistenceFilter) {
        guard let t = active(f.targetID) else { return }
        if let key = t.query.documentKey {
            // A document target counted 0: the document does not exist.
            if f.count == 0 {
                removeKey(key, from: f.targetID)
                note(Document.missing(key, version: 0))
            }
            return
        }
        let count = t.remoteKeys.count + t.added.count - t.removed.count
        guard Int(f.count) != count else { return }
        if f.hasUnchangedNames, let bloom = BloomFilter(bitmap: [UInt8](f.unchangedNames.bits.bitmap),
                                                        padding: Int(f.unchangedNames.bits.padding),
                                                        hashCount: Int(f.unchangedNames.hashCount)) {
            // The names still in the target: those not in it left it (they go to limbo). When
            // that accounts for the count, the target goes on; else (a false positive) it resets.
            var left = 0
            for key in t.remoteKeys where !bloom.mightContain(codec.name(of: key)) {
                removeKey(key, from: f.targetID)
                left += 1
            }
            if Int(f.count) == count - left { return }
        }
        // A removal was missed (a delete while away, a document that left the query): the
        // target starts again, and what it held is in limbo until the new result settles it.
        restart(f.targetID)
        t.resumeToken = nil
        t.deliveredToken = nil
        t.mismatched = true
        resets.append(f.targetID)
    }

    /// Target `id` is not current and every key it held leaves it (RESET, a filter mismatch):
    /// the server sends again what is still in it.
    private func restart(_ id: Int32) {
        let t = targets[id]!
        t.current = false
        t.clearChanges()
        for key in t.remoteKeys { removeKey(key, from: id) }
        t.hasChanges = true
    }

    private func targetChange(_ tc: Google_Firestore_V1_TargetChange) throws -> WatchEvent? {
        let ids = tc.targetIds
        switch tc.targetChangeType {
        case .noChange:
            for id in ids.isEmpty ? Array(targets.keys) : ids {
                active(id)?.updateToken(tc.resumeToken)
            }
            if ids.isEmpty && tc.hasReadTime { return event(WireCodec.micros(tc.readTime)) }
        case .add:
            for id in ids {
                guard let t = targets[id] else { continue }
                t.acknowledged()
                if t.pending == 0 { t.clearChanges() }
                t.updateToken(tc.resumeToken)
            }
        case .current:
            for id in ids {
                guard let t = active(id) else { continue }
                t.current = true
                t.hasChanges = true
                t.updateToken(tc.resumeToken)
            }
        case .reset:
            for id in ids {
                guard let t = active(id) else { continue }
                restart(id)
                t.updateToken(tc.resumeToken)
            }
        case .remove:
            if tc.hasCause && tc.cause.code != 0 {
                let code = ErrorCode(rawValue: tc.cause.code) ?? .unknown
                for id in ids where targets.removeValue(forKey: id) != nil {
                    rejected.append((id, EmberError(code, tc.cause.message)))
                }
            } else {
                for id in ids { targets[id]?.acknowledged() }
            }
        case .UNRECOGNIZED:
            break
        }
        return nil
    }

    /// Everything up to here is consistent at `version`.
    private func event(_ version: Int64) -> WatchEvent? {
        var changes: [WatchEvent.TargetChange] = []
        for (id, t) in targets.sorted(by: { $0.key < $1.key }) where t.pending == 0 {
            if t.current, let key = t.query.documentKey, !t.remoteKeys.contains(key), !t.added.contains(key),
               documents[key] == nil {
                // A document target's result is authoritative for its one key: not sent is missing.
                removeKey(key, from: id)
                note(Document.missing(key, version: version))
            }
            guard t.hasChanges else { continue }
            if t.mismatched {
                // Listened to again from scratch: no token it received since counts.
                t.resumeToken = nil
                t.tokenChanged = false
            }
            changes.append(WatchEvent.TargetChange(
                targetId: Int(id), current: t.current && !t.mismatched, added: Array(t.added), removed: Array(t.removed),
                resumeToken: t.tokenChanged ? t.resumeToken.map { [UInt8]($0) } : nil, reset: t.mismatched))
            t.remoteKeys.formUnion(t.added)
            t.remoteKeys.subtract(t.removed)
            t.deliveredToken = t.resumeToken
            t.clearChanges()
        }
        let docs = documentOrder.map { key -> Document in
            let d = documents[key]!
            return !d.exists && d.version == 0 ? Document.missing(key, version: version) : d
        }
        documents = [:]
        documentOrder = []
        relisten += resets
        resets = []
        if changes.isEmpty && docs.isEmpty { return nil }
        return WatchEvent(version: version, documents: docs, targets: changes)
    }
}
