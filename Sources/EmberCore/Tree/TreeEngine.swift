import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage
import EmberBackend

/// Responsible for: the client side of the Realtime-Database tree, run only on the worker
/// queue: local writes (applied as pending overlays over what the backend said, raised at once,
/// then sent), the backend's answers and changes, listens per observed path, the network switch,
/// and one-shot reads. Views and observers live in TreeEngine+Views.swift.
///
/// `cache` is the backend's tree as last heard for the listened paths; `local` is `cache` with
/// every pending write applied (what views show). A path is `complete` once its listen was
/// answered (or an ancestor's was), or an acknowledged write or a change from the backend
/// overwrote the listened path whole: only complete views raise events (Firebase raises nothing
/// for a location it knows nothing about).
///
/// With a durable client store (`Persistence.clientTree`), every pending write is stored before
/// `write` returns and removed with its acknowledgement, and every change of `cache` (except
/// forgetting an unlistened part) is written through to the stored cache, with the paths that
/// were complete. After a reopen the pending writes are restored (and sent when online), and an
/// observer at a stored complete path starts from the stored cache at once; the listen's answer
/// then brings the current state as ordinary changes.
///
///     engine.write([TreeWriteOp(path: p, value: v)], serverValues: false) { error in }    // on the worker
final class TreeEngine: TreeBackendClient, TreeLinkClient {
    struct PendingWrite {
        let id: Int64
        let ops: [TreeWriteOp]
        let completion: ((EmberError?) -> Void)?
        /// A transaction's attempt: the hash the server's node at its one overwrite must still
        /// have (compare-and-set), and the transaction it belongs to. Never stored durably.
        var expectedHash: String? = nil
        var transaction: TreeTransaction? = nil
        /// Left out of `local` (a transaction run without local events).
        var hidden = false
        /// What the client shows of `ops` when they hold server values (their estimate); nil:
        /// `ops` as they are.
        var localOps: [TreeWriteOp]? = nil
        var shownOps: [TreeWriteOp] { localOps ?? ops }
    }

    let worker: DispatchQueue
    let events: EventThread
    let persistence: Persistence
    /// The durable client store (nil: the client's tree lives in memory only).
    let store: ClientTreeStore?
    /// Paths whose stored cache was complete (loaded into `cache` when observed).
    private var storedComplete = PathTrie<Bool>()
    private(set) var connection: (any TreeLink)!
    private(set) var networkEnabled = true
    /// False while a remote link has lost its server (the in-process backend is never lost).
    private(set) var linkUp = true
    /// Whether the link ever reached its server (the in-process backend: from the start).
    private var linkEverUp = true
    /// Reads made while a server link makes its first connection (answered when it connects, or
    /// after `firstConnectionWait` from the cache).
    private var waitingForLink: [() -> Void] = []
    static let firstConnectionWait = 10.0
    /// onDisconnect writes registered (cancellations applied), and requests not yet sent.
    private var registeredOnDisconnect: [TreeOnDisconnect] = []
    private var unsentOnDisconnect: [(TreeOnDisconnect, (@Sendable (EmberError?) -> Void)?)] = []
    /// Whether listens and writes go out now.
    private var online: Bool { networkEnabled && linkUp }
    private(set) var closed = false

    var cache = TreeValue.null
    var local = TreeValue.null
    /// `.info/connected` and `.info/serverTimeOffset`, under the key `.info` (TreeEngine+Info.swift).
    var info = TreeValue.object(TreeObject([TreeEngine.infoKey: .object(TreeObject(["connected": .bool(false), "serverTimeOffset": .int(0)]))]))
    /// Pending writes by id, their order (from `pendingHead`), and the ids of the writes with an
    /// overwrite at each path: an acknowledgement or an overlay touches only the writes that
    /// overlap its path, never the whole queue.
    private var pending: [Int64: PendingWrite] = [:]
    private var pendingOrder: [Int64] = []
    private var pendingHead = 0
    private(set) var pendingByPath = PathTrie<[Int64]>()
    private var nextWriteId: Int64 = 1
    private var sentUpTo: Int64 = 0
    var complete = PathTrie<Bool>()
    /// Views per path; each path with views is listened to at the backend while online.
    var listenCounts = PathTrie<Int>()
    var views: [String: TreeView] = [:]
    var viewsByPath = PathTrie<[TreeView]>()
    var observers: [UInt: TreeObserver] = [:]
    var nextHandle: UInt = 1
    /// Query views served by tagged listens, by tag and by view id (TreeEngine+Windows.swift).
    var windowListens: [Int: TreeWindowListen] = [:]
    var windowTags: [String: Int] = [:]
    var nextWindowTag = 1
    /// Transactions not yet committed, aborted or failed (TreeEngine+Transactions.swift).
    var runningTransactions: [TreeTransaction] = []

    init(worker: DispatchQueue, events: EventThread, persistence: Persistence) {
        self.worker = worker
        self.events = events
        self.persistence = persistence
        self.store = persistence.clientTree
    }

    /// Connects, restores the stored pending writes (applied to `local`; sent when online) and
    /// the stored complete paths. Worker queue.
    func start(backend: Backend, networkEnabled: Bool = true) {
        worker.assertCurrent()
        start(link: backend.connectTree(client: self, queue: worker, clientPersistence: persistence), networkEnabled: networkEnabled)
    }

    /// As `start(backend:)`, with a server's link (`TreeEndpoint`): offline until it connects.
    func start(endpoint: any TreeEndpoint, networkEnabled: Bool = true) {
        worker.assertCurrent()
        linkUp = false
        linkEverUp = false
        start(link: endpoint.openTreeLink(client: self, queue: worker), networkEnabled: networkEnabled)
    }

    private func start(link: any TreeLink, networkEnabled: Bool) {
        connection = link
        self.networkEnabled = networkEnabled
        complete[TreePath(unchecked: [TreeEngine.infoKey])] = true
        updateInfo()
        guard let store else { return }
        for p in store.completePaths() { storedComplete[p] = true }
        for (id, ops) in store.pendingWrites() {
            let w = PendingWrite(id: id, ops: ops, completion: nil, localOps: estimate(ops))
            track(w)
            for op in w.shownOps { local.set(op.path.segments[...], op.value) }
        }
        nextWriteId = max(store.lastWriteId(), pendingOrder.last ?? 0) + 1
        if online { sendPending() }
    }

    var pendingWriteCount: Int { worker.assertCurrent(); return pendingOrder.count - pendingHead }
    private var pendingWrites: ArraySlice<Int64> { pendingOrder[pendingHead...] }
    /// Every pending overwrite, oldest first.
    var pendingOps: [TreeWriteOp] { pendingWrites.flatMap { pending[$0]!.ops } }

    func track(_ w: PendingWrite) {
        pending[w.id] = w
        pendingOrder.append(w.id)
        for op in w.ops { pendingByPath[op.path] = (pendingByPath[op.path] ?? []) + [w.id] }
    }

    /// Drops write `id` from the queue (nil when unknown).
    func untrack(_ id: Int64) -> PendingWrite? {
        guard let w = pending.removeValue(forKey: id) else { return nil }
        if pendingOrder[pendingHead] == id {
            pendingHead += 1
            if pendingHead > 1024 && pendingHead * 2 > pendingOrder.count {
                pendingOrder.removeFirst(pendingHead)
                pendingHead = 0
            }
        } else if let i = pendingOrder[pendingHead...].firstIndex(of: id) {
            pendingOrder.remove(at: i)
        }
        for op in w.ops {
            let rest = (pendingByPath[op.path] ?? []).filter { $0 != id }
            pendingByPath[op.path] = rest.isEmpty ? nil : rest
        }
        return w
    }

    private func sendPending() {
        for id in pendingWrites where id > sentUpTo { send(pending[id]!) }
    }

    /// Sends `w` (a compare-and-set when it is a transaction's).
    func send(_ w: PendingWrite) {
        if let hash = w.expectedHash {
            connection.write(id: w.id, w.ops, ifHash: hash)
        } else {
            connection.write(id: w.id, w.ops, serverValues: w.localOps != nil)
        }
        sentUpTo = w.id
    }

    /// A new write id. With a durable store a transaction's id (never stored as pending) is
    /// recorded as used, so no later write takes it: the in-process backend acknowledges a
    /// stored client's write id it has applied without applying it again.
    func takeWriteId(recording: Bool) throws -> Int64 {
        let id = nextWriteId
        if recording, let store {
            do {
                try persistence.runTransaction("tree write id") { store.noteWriteId(id) }
            } catch { throw EmberError.storage(error) }
        }
        nextWriteId += 1
        return id
    }

    /// Whether the link is up and the network on (writes and listens go out now).
    var isOnline: Bool { online }

    // MARK: writes

    /// Applies the overwrites locally (events are posted before this returns) and sends them
    /// when the network is on. `completion` runs on the event thread at the acknowledgement.
    /// `serverValues`: whether the ops hold server values (their validation said), shown as
    /// the client's estimate. Throws, applying nothing, when a durable store cannot keep the write.
    @discardableResult
    func write(_ ops: [TreeWriteOp], serverValues: Bool, completion: ((EmberError?) -> Void)?) throws -> Int64 {
        worker.assertCurrent()
        let id = nextWriteId
        if let store {
            do {
                try persistence.runTransaction("tree write") { store.addPendingWrite(id: id, ops) }
            } catch { throw EmberError.storage(error) }
        }
        nextWriteId += 1
        let w = PendingWrite(id: id, ops: ops, completion: completion, localOps: serverValues ? estimate(ops) : nil)
        track(w)
        changeLocal(ops.map { $0.path }, fromLocalWrite: true) {
            for op in w.shownOps { local.set(op.path.segments[...], op.value) }
        }
        if online { send(w) }
        return id
    }

    /// The client's estimate of `ops`' server values (nil when they have none): timestamps by
    /// its clock plus `.info/serverTimeOffset`, increments over what it shows now.
    func estimate(_ ops: [TreeWriteOp]) -> [TreeWriteOp]? {
        var offset: Int64 = 0
        if case .int(let ms) = info.value(at: [TreeEngine.infoKey, "serverTimeOffset"]) { offset = ms }
        return TreeServerValues.resolve(ops, read: { local.value(at: $0.segments) }, nowMillis: TreeServerValues.clockMillis() + offset)
    }

    /// The node at `path` as the backend's `base` with every pending write applied over it.
    func overlay(_ base: TreeValue, at path: TreePath) -> TreeValue {
        var ids: [Int64] = []
        pendingByPath.forEachAncestorOrSelf(of: path) { _, l in ids += l }
        pendingByPath.forEachDescendant(of: path) { _, l in ids += l }
        if ids.isEmpty { return base }
        if ids.count > 1 { ids = Array(Set(ids)).sorted() }
        var result = base
        for id in ids {
            let w = pending[id]!
            if w.hidden { continue }
            for op in w.shownOps {
                if op.path.isAncestorOrSelf(of: path) {
                    result = op.value.value(at: op.path.relative(path))
                } else if path.isAncestor(of: op.path) {
                    result.set(path.relative(op.path), op.value)
                }
            }
        }
        return result
    }

    // MARK: backend messages

    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) {
        worker.assertCurrent()
        receive(event)
    }

    func treeLink(_ link: any TreeLink, didSend event: TreeBackendEvent) {
        worker.assertCurrent()
        guard link === connection else { return }
        receive(event)
    }

    /// The server was lost: offline until it is back (writes stay pending, views keep the cache).
    func treeLinkLost(_ link: any TreeLink) {
        worker.assertCurrent()
        guard link === connection, !closed else { return }
        linkUp = false
        updateInfo()
    }

    /// The server's clock from the handshake (before `treeLinkRestored`).
    func treeLink(_ link: any TreeLink, serverTimeOffsetMillis: Double) {
        worker.assertCurrent()
        guard link === connection, !closed else { return }
        updateInfo(serverTimeOffsetMillis: serverTimeOffsetMillis)
    }

    /// The server is back: every listen and every unacknowledged write go again, in order.
    func treeLinkRestored(_ link: any TreeLink) {
        worker.assertCurrent()
        guard link === connection, !closed else { return }
        linkUp = true
        linkEverUp = true
        sentUpTo = 0
        updateInfo()
        if networkEnabled { resume() }
        runWaitingForLink()
    }

    private func runWaitingForLink() {
        let waiting = waitingForLink
        waitingForLink.removeAll()
        for w in waiting { w() }
    }

    private func receive(_ event: TreeBackendEvent) {
        guard !closed else { return }
        switch event {
        case .listenResult(let path, let value, let windows):
            guard listenCounts[path] != nil else { return }
            changeLocal([path]) {
                cache.set(path.segments[...], value)
                local.set(path.segments[...], overlay(value, at: path))
            }
            complete[path] = true
            if let store {
                // The durable cache is a copy: when it cannot be stored the path stays incomplete
                // on disk (read again from the backend after a restart).
                do {
                    try persistence.runTransaction("tree listen") {
                        store.cache.write(path, value)
                        store.markComplete(path)
                    }
                    storedComplete[path] = true
                } catch {}
            }
            if !windows.isEmpty { initializeFromWindows(at: path, windows) }
            initializeViews(at: path)
        case .change(let ops, let ack):
            var paths = ops.map { $0.path }
            var done: PendingWrite?
            // The acknowledged write's own data is the backend's state at its paths (the ack is
            // sent when the write is applied; later changes come after it): it enters the cache
            // wherever the client listens, even when the backend had no listen of this client
            // there yet (a listen sent after the write, or none sent while offline) and so the
            // ack carries no ops. Without it, `local` would fall back to a cache that never saw
            // the write until the listen's answer restores it (remove then re-add). The ack's
            // own ops are applied after it (a resent write acknowledged without being applied
            // again comes with the current values at its paths).
            var acked: [TreeWriteOp] = []
            if let a = ack, let w = untrack(a) {
                done = w
                // A set, not `paths.contains`: an update of n children is n ops on both sides.
                var seen = Set(paths)
                for op in w.ops where seen.insert(op.path).inserted { paths.append(op.path) }
                // (Not for server values: the client's estimate is not the backend's state.)
                acked = w.localOps == nil ? listenedParts(of: w.ops) : []
                if !ops.isEmpty && !acked.isEmpty {
                    // Where the backend sent an op at the same path (it listened there), that op
                    // is the state: skip the copy (the usual case; saves a second store write).
                    let sent = Set(ops.map { $0.path })
                    acked.removeAll { sent.contains($0.path) }
                }
            }
            if let store, !ops.isEmpty || done != nil {
                // The backend has the write (it is in its table of the same file); when the
                // client's copy cannot be stored, the write stays in the durable queue and is
                // acknowledged again, without being applied twice, after a restart.
                try? persistence.runTransaction("tree change") {
                    for op in acked { store.cache.write(op.path, op.value) }
                    for op in ops { store.cache.write(op.path, op.value) }
                    if let w = done { store.removePendingWrite(id: w.id) }
                }
            }
            changeLocal(paths) {
                for op in acked { cache.set(op.path.segments[...], op.value) }
                for op in ops { cache.set(op.path.segments[...], op.value) }
                for p in paths { local.set(p.segments[...], overlay(cache.value(at: p.segments), at: p)) }
            }
            completeListened(by: acked)
            completeListened(by: ops)
            if let cb = done?.completion { events.post { cb(nil) } }
            if let w = done, let t = w.transaction { transactionCommitted(t, w) }
        case .listenRevoked(let path, let error):
            revoke(path, error)
        case .window(let tag, let value):
            receiveWindow(tag, value)
        case .rejected(let id, let error):
            guard let w = untrack(id) else { return }
            if let store { try? persistence.runTransaction("tree rejected") { store.removePendingWrite(id: id) } }
            var paths: [TreePath] = []
            for op in w.ops where !paths.contains(op.path) { paths.append(op.path) }
            changeLocal(paths) {
                for p in paths { local.set(p.segments[...], overlay(cache.value(at: p.segments), at: p)) }
            }
            if let cb = w.completion { events.post { cb(error) } }
            if let t = w.transaction { transactionRejected(t, error) }
        }
    }

    /// The listened paths `ops` overwrite whole become complete: the cache there is the
    /// backend's state as of the op, as after a listen's answer (which, when it comes, brings
    /// what changed since as ordinary changes). Without it, between a set's acknowledgement and
    /// the listen's answer, the set was no longer pending and the path not complete: a view
    /// started there (a second query beside an observer already showing the set) started
    /// empty, and the next write raised child_added instead of child_moved/changed.
    private func completeListened(by ops: [TreeWriteOp]) {
        for op in ops where complete[op.path] == nil && listenCounts[op.path] != nil {
            complete[op.path] = true
            initializeViews(at: op.path)
        }
    }

    /// The parts of `ops` under the paths the client listens to: an op at or below a listened
    /// path whole, else cut to each listened path below it (as the backend cuts its changes).
    private func listenedParts(of ops: [TreeWriteOp]) -> [TreeWriteOp] {
        var out: [TreeWriteOp] = []
        for op in ops {
            if listenCounts.hasAncestorOrSelf(of: op.path) { out.append(op); continue }
            listenCounts.forEachDescendant(of: op.path) { p, _ in
                out.append(TreeWriteOp(path: p, value: op.value.value(at: op.path.relative(p))))
            }
        }
        return out
    }

    // MARK: listens

    /// Counts a listen at `path`; the first one is sent (asking for `window`'s first window when
    /// given: a limited query whose view waits for this answer).
    func addListen(_ path: TreePath, window: TreeQuery? = nil) {
        let n = listenCounts[path] ?? 0
        listenCounts[path] = n + 1
        if n == 0 && online && !TreeEngine.isInfo(path) { connection.listen(path, windows: window.map { [$0] } ?? [], cached: known(path)) }
    }

    /// The backend's node at `path` as this client last heard it, when it has heard it whole
    /// (a listen resumed with it need not bring it again); nil otherwise.
    func known(_ path: TreePath) -> TreeValue? {
        complete.hasAncestorOrSelf(of: path) ? cache.value(at: path.segments) : nil
    }

    /// Before an observer starts at `path`: when the client knows nothing live there but its
    /// stored cache was complete, that node becomes the cache (complete until the listen's
    /// answer replaces it), so observers start from it at once.
    func loadStored(_ path: TreePath) {
        guard let store, !complete.hasAncestorOrSelf(of: path), storedComplete.hasAncestorOrSelf(of: path) else { return }
        let v = store.cache.read(path)
        changeLocal([path]) {
            cache.set(path.segments[...], v)
            local.set(path.segments[...], overlay(v, at: path))
        }
        complete[path] = true
        initializeViews(at: path)
    }

    func removeListen(_ path: TreePath) {
        guard let n = listenCounts[path] else { return }
        if n > 1 { listenCounts[path] = n - 1; return }
        listenCounts[path] = nil
        if TreeEngine.isInfo(path) { return }
        if online { connection.unlisten(path) }
        complete[path] = nil
        // Nothing keeps this part of the cache up to date any more: forget it (unless an
        // ancestor's or a descendant's listen still covers it).
        if !complete.hasAncestorOrSelf(of: path) && !listenCounts.hasDescendant(of: path) && !listenCounts.hasAncestorOrSelf(of: path) {
            // (What tagged query listens hold there stays: their windows keep it current.)
            let kept = windowedNode(at: path)
            changeLocal([path]) {
                cache.set(path.segments[...], kept)
                local.set(path.segments[...], overlay(kept, at: path))
            }
        }
    }

    /// The paths listened to at the backend (never `.info`).
    private var listenedPaths: [TreePath] {
        var out: [TreePath] = []
        if listenCounts[.root] != nil { out.append(.root) }
        listenCounts.forEachDescendant(of: .root) { p, _ in if !TreeEngine.isInfo(p) { out.append(p) } }
        return out
    }

    // MARK: network

    func disableNetwork() {
        worker.assertCurrent()
        guard networkEnabled else { return }
        networkEnabled = false
        if linkUp {
            for p in listenedPaths { connection.unlisten(p) }
            suspendWindows()
        }
        updateInfo()
    }

    func enableNetwork() {
        worker.assertCurrent()
        guard !networkEnabled else { return }
        networkEnabled = true
        updateInfo()
        if linkUp { resume() }
    }

    // MARK: onDisconnect

    /// Registers (or cancels) writes the server applies when the connection ends. Sent now when
    /// online, else when the link is back; `completion` (event thread) once the server holds them.
    func onDisconnect(_ op: TreeOnDisconnect, completion: (@Sendable (EmberError?) -> Void)?) {
        worker.assertCurrent()
        switch op {
        case .write: registeredOnDisconnect.append(op)
        case .cancel(let path):
            registeredOnDisconnect.removeAll {
                if case .write(let p, _, _) = $0 { return path.isAncestorOrSelf(of: p) }
                return false
            }
        }
        let entry = (op, completion)
        unsentOnDisconnect.append(entry)
        if online { sendOnDisconnect() }
    }

    private func sendOnDisconnect() {
        let all = unsentOnDisconnect
        unsentOnDisconnect.removeAll()
        for (op, completion) in all {
            connection.onDisconnect(op, completion: worker.confined { [self] error in
                if error?.code == .unavailable, !closed { unsentOnDisconnect.append((op, completion)); return }
                if let completion { events.post { completion(error) } }
            })
        }
    }

    /// The registered onDisconnect writes, as one write (later ones win where they overlap).
    private func onDisconnectOps() -> [TreeWriteOp] {
        var merged = TreeValue.null
        var paths: [TreePath] = []
        for case .write(_, let ops, _) in registeredOnDisconnect {
            for op in ops {
                paths.removeAll { op.path.isAncestorOrSelf(of: $0) }
                if !paths.contains(where: { $0.isAncestorOrSelf(of: op.path) }) { paths.append(op.path) }
                merged.set(op.path.segments[...], op.value)
            }
        }
        return paths.map { TreeWriteOp(path: $0, value: merged.value(at: $0.segments)) }
    }

    /// Listens again at every listened path, and sends the writes not yet sent.
    private func resume() {
        for p in listenedPaths {
            let windows = (viewsByPath[p] ?? []).filter { !$0.initialized && $0.query.isLimited }.map { $0.query }
            connection.listen(p, windows: windows, cached: known(p))
        }
        resumeWindows()
        sendPending()
        sendOnDisconnect()
    }

    // MARK: reads

    /// The node at `path` (through `query`): from the backend when online (with pending writes
    /// applied), else from a complete cache, else an `unavailable` error. Completion on the event thread.
    func get(_ path: TreePath, query: TreeQuery, completion: @escaping @Sendable (Result<TreeSnapshot, EmberError>) -> Void) {
        worker.assertCurrent()
        if TreeEngine.isInfo(path) {
            let snap = TreeSnapshot(path: path, value: infoSnapshot(path), index: query.index)
            events.post { completion(.success(snap)) }
            return
        }
        // A server link still making its first connection: the read waits for it, a while.
        if networkEnabled && !linkUp && !linkEverUp {
            waitingForLink.append { [self] in get(path, query: query, completion: completion) }
            if waitingForLink.count == 1 {
                worker.asyncAfterConfined(deadline: .now() + TreeEngine.firstConnectionWait) { [self] in
                    linkEverUp = true          // from now on, offline reads answer at once
                    runWaitingForLink()
                }
            }
            return
        }
        let events = self.events
        @Sendable func answer(_ node: TreeValue) {
            let snap: TreeSnapshot
            if query.isDefault {
                snap = TreeSnapshot(path: path, value: node, index: query.index)
            } else {
                let v = TreeView(path: path, query: query)
                v.initialize(node)
                snap = TreeSnapshot(path: path, value: v.valueSnapshot(node), index: query.index)
            }
            events.post { completion(.success(snap)) }
        }
        if online {
            connection.get(path, completion: worker.confined { [self] value in
                if closed {
                    events.post { completion(.failure(EmberError(.cancelled, "The database was closed."))) }
                    return
                }
                answer(overlay(value, at: path))
            })
        } else if complete.hasAncestorOrSelf(of: path) {
            answer(local.value(at: path.segments))
        } else if let store, storedComplete.hasAncestorOrSelf(of: path) {
            answer(overlay(store.cache.read(path), at: path))
        } else {
            events.post { completion(.failure(EmberError(.unavailable, "Failed to get '\(path)': the client is offline and the location is not in the cache."))) }
        }
    }

    // MARK: shutdown

    func close() {
        worker.assertCurrent()
        guard !closed else { return }
        // The in-process backend's "connection" ends here: its onDisconnect writes go now.
        if connection is TreeConnection, networkEnabled {
            let ops = onDisconnectOps()
            if !ops.isEmpty, let id = try? takeWriteId(recording: true) {
                connection.write(id: id, ops, serverValues: ops.contains { TreeServerValues.contains($0.value) })
            }
        }
        closed = true
        linkEverUp = true
        runWaitingForLink()
        connection?.disconnect()
        let err = EmberError(.cancelled, "The database was closed before the write was acknowledged.")
        for id in pendingWrites { if let cb = pending[id]?.completion { events.post { cb(err) } } }
        cancelTransactions()
        pending.removeAll()
        pendingOrder.removeAll()
        pendingHead = 0
        pendingByPath = PathTrie()
        views.removeAll()
        viewsByPath = PathTrie()
        windowListens.removeAll()
        windowTags.removeAll()
        observers.removeAll()
    }
}
