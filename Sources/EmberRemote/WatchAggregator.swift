import EmberFirestoreProto
import EmberModel
import EmberWire
import Foundation

typealias ListenResponse = Google_Firestore_V1_ListenResponse

/// Responsible for: the Listen stream's meaning, without the stream (Firebase's
/// `WatchChangeAggregator`): per target, the documents received before it is CURRENT, the keys
/// the server says are in it, and its last resume token; between two consistent points, the
/// changes to documents of targets already delivered. At each global NO_CHANGE with a read time
/// (every target consistent at it) it hands over a `WatchSnapshot`: each newly current target's
/// result, and what changed elsewhere. RESET and an existence filter whose count differs from
/// the keys held send a target back to its initial phase; a REMOVE with a cause ends it.
///
///     agg.add(1, query: q, knownKeys: [])
///     if let s = try agg.handle(response) { /* deliver s */ }
final class WatchAggregator {
    /// What one target has been told.
    final class TargetState {
        let query: Query
        /// Keys the client's view held (or that were in the target before a reset): those not in
        /// the first result must be looked up, they may have left the target while unwatched.
        var knownKeys: Set<DocumentKey>
        var current = false
        var delivered = false
        /// Delivered, then resumed on a new stream with its token: when it is current again the
        /// client hears it (its listeners stop being fromCache), with no result resent.
        var resumed = false
        var initial: [DocumentKey: Document] = [:]
        var keys = Set<DocumentKey>()
        var resumeToken: Data?
        /// The token last handed to the client (it stores it with its cache).
        var reportedToken: Data?

        init(query: Query, knownKeys: Set<DocumentKey>) {
            self.query = query
            self.knownKeys = knownKeys
        }

        /// Back to the initial phase: what it held is known, not current.
        func reset() {
            knownKeys.formUnion(keys)
            knownKeys.formUnion(initial.keys)
            keys = []
            initial = [:]
            current = false
            delivered = false
            resumed = false
        }
    }

    private(set) var targets: [Int32: TargetState] = [:]
    /// Changes to documents of delivered targets since the last consistent point (nil: deleted).
    private var changed: [DocumentKey: Document?] = [:]
    private var changedOrder: [DocumentKey] = []
    /// Documents that left a delivered target without their new state (DocumentRemove).
    private var refetch = Set<DocumentKey>()
    /// Targets to listen to again from scratch (existence filter mismatch), and targets the
    /// server removed with an error, since the last call to `takeRequests`.
    private(set) var relisten: [Int32] = []
    private(set) var rejected: [(Int32, EmberError)] = []

    /// Documents the server sent (DocumentChange messages), for the resume figures.
    private(set) var documentsReceived = 0

    let codec: WireCodec
    init(codec: WireCodec) { self.codec = codec }

    /// With a `resumeToken` the client stored along with the documents `knownKeys` names, the
    /// target starts as one resumed on a new stream: delivered, holding those keys.
    func add(_ id: Int32, query: Query, knownKeys: [DocumentKey], resumeToken: Data? = nil) {
        let t = TargetState(query: query, knownKeys: Set(knownKeys))
        if let resumeToken {
            t.keys = t.knownKeys
            t.knownKeys = []
            t.delivered = true
            t.resumed = true
            t.resumeToken = resumeToken
            t.reportedToken = resumeToken
        }
        targets[id] = t
    }

    func remove(_ id: Int32) { targets[id] = nil }

    /// The stream restarted. A delivered target with a resume token is resumed: it stays
    /// delivered with the keys it holds, and what the server sends for it (the documents changed
    /// since the token, then an existence filter with its size) arrives as ordinary changes; a
    /// count that differs (a delete missed while away) restarts it from scratch. Any other target
    /// starts again (its keys become known keys to resolve).
    func resetAll() {
        for t in targets.values {
            if t.delivered && t.resumeToken != nil {
                t.current = false
                t.resumed = true
            } else {
                t.reset()
            }
        }
        changed = [:]
        changedOrder = []
        refetch = []
    }

    func takeRelisten() -> [Int32] { defer { relisten = [] }; return relisten }
    func takeRejected() -> [(Int32, EmberError)] { defer { rejected = [] }; return rejected }

    // MARK: messages

    /// Takes one message; returns a snapshot at each global consistent point that has news.
    func handle(_ r: ListenResponse) throws -> WatchSnapshot? {
        switch r.responseType {
        case .targetChange(let tc)?:
            return try targetChange(tc)
        case .documentChange(let dc)?:
            documentsReceived += 1
            let doc = try codec.document(dc.document)
            var forDelivered = false
            for id in dc.targetIds {
                guard let t = targets[id] else { continue }
                t.keys.insert(doc.key)
                if t.delivered { forDelivered = true } else { t.initial[doc.key] = doc }
            }
            for id in dc.removedTargetIds {
                guard let t = targets[id] else { continue }
                t.keys.remove(doc.key)
                if t.delivered { forDelivered = true } else { t.initial[doc.key] = nil }
            }
            if forDelivered { note(doc.key, doc) }
        case .documentDelete(let dd)?:
            let key = try codec.key(dd.document)
            if left(key, dd.removedTargetIds) { note(key, nil) }
        case .documentRemove(let dr)?:
            let key = try codec.key(dr.document)
            if left(key, dr.removedTargetIds) { refetch.insert(key) }
        case .filter(let f)?:
            // A count that differs from the documents held means a removal was missed (a resume
            // after a delete): the target starts again from scratch. (A target not delivered was
            // added without a token: the documents it holds are those received.)
            if let t = targets[f.targetID], Int(f.count) != (t.delivered ? t.keys.count : t.initial.count) {
                t.reset()
                t.resumeToken = nil
                relisten.append(f.targetID)
            }
        case nil:
            break
        }
        return nil
    }

    /// A document left the targets `ids`; true when one of them was delivered.
    private func left(_ key: DocumentKey, _ ids: [Int32]) -> Bool {
        var forDelivered = false
        for id in ids {
            guard let t = targets[id] else { continue }
            t.keys.remove(key)
            if t.delivered { forDelivered = true } else { t.initial[key] = nil }
        }
        return forDelivered
    }

    private func note(_ key: DocumentKey, _ doc: Document?) {
        if changed.updateValue(doc, forKey: key) == nil { changedOrder.append(key) }
    }

    private func targetChange(_ tc: Google_Firestore_V1_TargetChange) throws -> WatchSnapshot? {
        let ids = tc.targetIds
        switch tc.targetChangeType {
        case .noChange:
            if !tc.resumeToken.isEmpty {
                for t in (ids.isEmpty ? Array(targets.values) : ids.compactMap { targets[$0] }) where t.current {
                    t.resumeToken = tc.resumeToken
                }
            }
            if ids.isEmpty && tc.hasReadTime { return consistentPoint(WireCodec.micros(tc.readTime)) }
        case .current:
            for id in ids {
                guard let t = targets[id] else { continue }
                t.current = true
                if !tc.resumeToken.isEmpty { t.resumeToken = tc.resumeToken }
            }
        case .reset:
            for id in ids { targets[id]?.reset() }
        case .remove:
            if tc.hasCause && tc.cause.code != 0 {
                let code = ErrorCode(rawValue: tc.cause.code) ?? .unknown
                for id in ids where targets.removeValue(forKey: id) != nil {
                    rejected.append((id, EmberError(code, tc.cause.message)))
                }
            }
        case .add, .UNRECOGNIZED:
            break
        }
        return nil
    }

    /// Everything up to here is consistent at `version`: the newly current targets' results and
    /// the changes to delivered ones.
    private func consistentPoint(_ version: Int64) -> WatchSnapshot? {
        var results: [WatchSnapshot.TargetResult] = []
        for (id, t) in targets where t.current && !t.delivered {
            var docs = Array(t.initial.values)
            var resolve: [DocumentKey] = []
            if let key = t.query.documentKey {
                // A documents target's result is authoritative for its one key: missing is a tombstone.
                if docs.isEmpty { docs = [Document.missing(key, version: version)] }
            } else {
                resolve = t.knownKeys.filter { t.initial[$0] == nil }
            }
            t.keys = Set(t.initial.keys)
            t.initial = [:]
            t.knownKeys = []
            t.delivered = true
            results.append(.init(targetId: Int(id), documents: docs, resolve: resolve))
        }
        var recovered: [Int] = []
        for (id, t) in targets where t.current && t.resumed {
            t.resumed = false
            recovered.append(Int(id))
        }
        let docs = changedOrder.map { key in changed[key]! ?? Document.missing(key, version: version) }
        let again = Array(refetch)
        changed = [:]
        changedOrder = []
        refetch = []
        // New tokens go with the news; a quiet consistent point carries only a target's first
        // token (a server may send it after the consistent point that delivered the result:
        // the emulator does, at times), not newer ones (they need no storing).
        let fresh = targets.filter { _, t in t.current && t.delivered && t.resumeToken != nil && t.resumeToken != t.reportedToken }
        let quiet = results.isEmpty && docs.isEmpty && again.isEmpty && recovered.isEmpty
        if quiet && !fresh.values.contains(where: { $0.reportedToken == nil }) { return nil }
        var tokens: [(Int, Data)] = []
        for (id, t) in fresh {
            t.reportedToken = t.resumeToken
            tokens.append((Int(id), t.resumeToken!))
        }
        return WatchSnapshot(version: version, changed: docs, refetch: again, results: results, recovered: recovered.sorted(),
                             tokens: tokens.sorted { $0.0 < $1.0 })
    }
}

/// Responsible for: what the Listen stream says at one consistent point: each newly current
/// target's result (with the known keys to look up because they are not in it), the documents
/// that changed in targets already delivered, those that left one without their new state, and
/// the resumed targets current again.
struct WatchSnapshot {
    struct TargetResult {
        let targetId: Int
        let documents: [Document]
        let resolve: [DocumentKey]
    }
    let version: Int64
    let changed: [Document]
    let refetch: [DocumentKey]
    let results: [TargetResult]
    /// Targets resumed with their token after a new stream that are current again.
    var recovered: [Int] = []
    /// Current targets' resume tokens that changed since the last snapshot.
    var tokens: [(Int, Data)] = []

    /// Every key whose current state must be fetched before the snapshot can be delivered.
    var keysToFetch: [DocumentKey] {
        var seen = Set<DocumentKey>()
        return (refetch + results.flatMap { $0.resolve }).filter { seen.insert($0).inserted }
    }
}
