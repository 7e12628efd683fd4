import Dispatch
import EmberBackend
import EmberConcurrency
import EmberModel

/// Responsible for: one key in some view's limbo: the document target resolving it (nil while
/// it waits for a slot) and the targets holding it in limbo.
struct LimboResolution {
    var backendId: Int?
    var holders: Set<ObjectIdentifier>
}

/// A server's watch as the Firebase SDKs apply it (`sync_engine_impl.ts`, `view.ts`,
/// `online_state_tracker.ts`), for a link that reports its targets' membership: each consistent
/// event is applied as one change (one snapshot per view), views know which keys the server holds
/// and resolve the others with document targets (limbo), and the online state goes unknown on a
/// first stream failure, offline on a second or after `onlineStateTimeout`. Worker queue only.
extension SyncEngine {
    /// Documents resolved at once at most (the SDKs' `maxConcurrentLimboResolutions`).
    static let maxLimboResolutions = 100
    /// Seconds the online state may stay unknown before it is offline (the SDKs' 10 s; tests
    /// shorten it).
    static let onlineStateTimeout = LockedValueBox<Double>(10)

    // MARK: events

    /// Applies one consistent point of the watch: its documents, then each target's keys, sync
    /// state and token; the views raise once.
    func applyWatch(_ e: WatchEvent) {
        refresh(local.applyRemote(e.documents), readTime: e.version)
        noteRemoteDocuments(e.documents.count)
        for c in e.targets where limboByBackendId[c.targetId] == nil {
            for t in targetsByBackendId[c.targetId] ?? [] {
                t.syncedKeys.formUnion(c.added)
                t.syncedKeys.subtract(c.removed)
                t.view.isCurrent = c.current
                t.view.readTime = max(t.view.readTime, e.version)
                if c.reset {
                    // Listened to again from scratch (the link does it): the stored token is stale.
                    t.resumeToken = nil
                } else if let token = c.resumeToken {
                    noteResumeToken(t, token)
                }
                markDirty(t)
            }
        }
        emit()
    }

    /// A watch stream failed: from online the state turns unknown and nothing is raised (the
    /// stream resumes); otherwise (a second failure, or one before the server ever answered) it
    /// turns offline. A link without the watch's membership (no `.reached` to come back online
    /// with) is offline at once.
    func streamFailed() {
        guard networkEnabled else { return }
        if tracksMembership && onlineState == .online {
            setOnlineState(.unknown)
            armOnlineTimer()
        } else {
            goOffline()
        }
    }

    /// Offline: every view is from the cache until its target is current again.
    func goOffline() {
        setOnlineState(.offline)
        markTargetsNotCurrent()
        emit()
    }

    func armOnlineTimerIfUnknown() {
        if onlineState == .unknown && !onlineTimerArmed { armOnlineTimer() }
    }

    private func armOnlineTimer() {
        onlineTimerGeneration += 1
        onlineTimerArmed = true
        let generation = onlineTimerGeneration
        worker.asyncAfterConfined(deadline: .now() + SyncEngine.onlineStateTimeout.current) { [weak self] in
            guard let self, !self.closed, self.onlineTimerGeneration == generation else { return }
            self.onlineTimerArmed = false
            if self.networkEnabled && self.onlineState == .unknown { self.goOffline() }
        }
    }

    func disarmOnlineTimer() {
        guard onlineTimerArmed else { return }
        onlineTimerGeneration += 1
        onlineTimerArmed = false
    }

    // MARK: limbo

    /// Recomputes `t`'s limbo documents (only while its target is current, as the SDKs): the
    /// documents of its view the server does not hold and no local write explains.
    func updateLimbo(_ t: Target) {
        guard t.view.isCurrent, networkEnabled else { return }
        var now = Set<DocumentKey>()
        for d in t.view.window where !d.hasLocalMutations && !t.syncedKeys.contains(d.key) { now.insert(d.key) }
        guard now != t.limbo else { return }
        let id = ObjectIdentifier(t)
        for k in t.limbo where !now.contains(k) { release(k, holder: id) }
        for k in now where !t.limbo.contains(k) {
            if limboResolutions[k] != nil {
                limboResolutions[k]!.holders.insert(id)
            } else {
                limboResolutions[k] = LimboResolution(backendId: nil, holders: [id])
                limboQueue.append(k)
            }
        }
        t.limbo = now
        pumpLimboResolutions()
    }

    /// `t` leaves: its limbo documents are no longer its to resolve.
    func releaseLimbo(of t: Target) {
        let id = ObjectIdentifier(t)
        for k in t.limbo { release(k, holder: id) }
        t.limbo = []
    }

    private func release(_ key: DocumentKey, holder: ObjectIdentifier) {
        guard var r = limboResolutions[key] else { return }
        r.holders.remove(holder)
        guard r.holders.isEmpty else { limboResolutions[key] = r; return }
        limboResolutions[key] = nil
        if let id = r.backendId {
            limboByBackendId[id] = nil
            connection.unlisten(targetId: id)
        }
        pumpLimboResolutions()
    }

    /// Starts document targets for waiting limbo keys while fewer than the maximum run.
    func pumpLimboResolutions() {
        guard networkEnabled else { return }
        while limboByBackendId.count < SyncEngine.maxLimboResolutions, !limboQueue.isEmpty {
            let key = limboQueue.removeFirst()
            guard limboResolutions[key]?.backendId == nil else { continue }
            let id = nextBackendTargetId
            nextBackendTargetId += 1
            limboResolutions[key]!.backendId = id
            limboByBackendId[id] = key
            connection.listen(targetId: id, query: Query(document: key), knownKeys: [], resumeToken: nil)
        }
    }

    /// The network is off: the limbo targets stop, their keys wait to be resolved again.
    func suspendLimboResolutions() {
        for (id, key) in limboByBackendId.sorted(by: { $0.key < $1.key }) {
            connection.unlisten(targetId: id)
            limboResolutions[key]?.backendId = nil
            limboQueue.append(key)
        }
        limboByBackendId = [:]
    }

    /// The server refused a limbo target: as the SDKs, the document is taken as deleted.
    /// False when `targetId` is not a limbo target.
    func limboTargetRejected(_ targetId: Int) -> Bool {
        guard let key = limboByBackendId.removeValue(forKey: targetId) else { return false }
        limboResolutions[key]?.backendId = nil
        let version = (local.remote.get(key)?.version ?? 0) + 1
        refresh(local.applyRemote([Document.missing(key, version: version)]))
        emit()
        return true
    }
}
