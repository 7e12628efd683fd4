import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage

/// Responsible for: the backend's authoritative Realtime-Database tree (in the same database as
/// the documents): applies each write atomically in arrival order on the backend's queue, and
/// tells each connection about the overwrites under the paths it listens to. Listens are
/// indexed by path, so a write costs what it changes plus the listens above or below it, not
/// the size of the tree. Backend queue only (an index built off the queue comes back to it
/// through a `QueueBound`).
///
///     backend.tree.apply([TreeWriteOp(path: p, value: v)], from: conn, writeId: 1)
final class BackendTree {
    let store: TreeStore
    unowned let persistence: Persistence
    /// Per listened path: connection id -> number of listens it holds there.
    private var listens = PathTrie<[Int: Int]>()
    var connections: [Int: TreeConnection] = [:]
    private var nextConnectionId = 1
    /// Child indexes per node and order, built after the first limited query there.
    private var indexes = PathTrie<[TreeIndex: BackendChildIndex]>()
    /// Indexes to build (`startPendingBuilds`), with the node their window was taken from; nil
    /// once a write changed that node (then it is read again).
    private var pendingBuilds: [IndexedNode: TreeValue?] = [:]
    /// Indexes being built off the queue, with the children written under their node since the
    /// build took it (applied when it is installed); nil once a write reached the node itself or
    /// above it (the build is then dropped). Keys by their bytes: two keys Swift finds equal
    /// ("\u{E9}", "e\u{301}") are two children.
    private var building: [IndexedNode: Set<UTF8String>?] = [:]
    private struct IndexedNode: Hashable { let path: TreePath; let index: TreeIndex }
    /// Runs an index's build off the backend's queue, and its installation back on `queue`
    /// (tests may hold builds).
    var runBuild: @Sendable (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.global(qos: .utility).async(execute: $0) }
    var runOnQueue: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// The backend's queue.
    private let queue: DispatchQueue
    /// Entered for each build until it is installed or dropped (`Backend.flush` waits for it).
    let builds = DispatchGroup()
    /// Limited queries' first windows answered, and those answered by a pass (tests).
    private(set) var windowCount = 0
    private(set) var windowsFromPasses = 0
    /// The highest write of a client sharing this durable store that was applied (see
    /// `PersistenceKey.backendAppliedTreeWrite`).
    private var appliedWrite: Int64 = 0
    /// The shared log each write reaches first (several servers on one store); nil: none.
    var log: TreeCommitLog?

    /// `queue`: the backend's queue, the only one this tree's state is used on.
    init(persistence: Persistence, queue: DispatchQueue) {
        self.persistence = persistence
        self.queue = queue
        runOnQueue = { [queue] in queue.async(execute: $0) }
        self.store = persistence.backendTree ?? MemoryTreeStore()
        if persistence.isDurable { appliedWrite = persistence.metadata(PersistenceKey.backendAppliedTreeWrite) ?? 0 }
    }

    func makeConnection(_ make: (Int) -> TreeConnection) -> TreeConnection {
        let c = make(nextConnectionId)
        nextConnectionId += 1
        connections[c.id] = c
        return c
    }

    func listen(_ conn: TreeConnection, _ path: TreePath) -> TreeValue {
        var m = listens[path] ?? [:]
        m[conn.id, default: 0] += 1
        listens[path] = m
        return store.read(path)
    }

    /// The first window of a limited query at `path` (whose node is `node`), from the child
    /// index of its order. Without one, the window comes from a pass over the children
    /// (`ChildSelection`: a fraction of a sort's cost) and the index is queued for
    /// `buildPendingIndexes`, which the caller runs after answering. Nil for a query without a
    /// limit.
    func window(_ path: TreePath, _ query: TreeQuery, node: TreeValue) -> TreeWindow? {
        guard query.isLimited else { return nil }
        windowCount += 1
        if let i = indexes[path]?[query.index] { return i.window(query) }
        let key = IndexedNode(path: path, index: query.index)
        if pendingBuilds[key] == nil && building[key] == nil { pendingBuilds[key] = node }
        windowsFromPasses += 1
        return ChildSelection.window(query, node: node)
    }

    /// Whether indexes wait to be built (see `window`).
    var hasPendingBuilds: Bool { !pendingBuilds.isEmpty }

    /// Starts building the indexes the last windows were answered without, each from its node
    /// as the window saw it, or as the store has it now when a write changed it since. A build
    /// runs off the backend's queue (writes do not wait for it: 100,000 children take tens of
    /// milliseconds) on an immutable copy of the node (copy on write: a later write copies the
    /// store's node instead of changing the one being read); back on the queue, the children
    /// written meanwhile are read again and the index is installed (`install`).
    func startPendingBuilds() {
        let starts = pendingBuilds
        pendingBuilds.removeAll()
        // (`window` queues no build for a node and order being built.)
        for (key, node) in starts where indexes[key.path]?[key.index] == nil {
            let v = node ?? store.read(key.path)
            guard v.object != nil else { continue }
            building[key] = .some([])
            builds.enter()
            let me = QueueBound(self, on: queue), runOnQueue = self.runOnQueue, builds = self.builds
            runBuild {
                // Built here, used only once it is back on the queue.
                let index = HandedOver(BackendChildIndex(index: key.index, node: v))
                runOnQueue {
                    me.value.install(index.value, for: key)
                    builds.leave()
                }
            }
        }
    }

    /// Installs an index built off the queue, after re-reading the children written under its
    /// node since its build took the node; drops it when a write replaced the node meanwhile.
    private func install(_ index: BackendChildIndex, for key: IndexedNode) {
        guard let entry = building.removeValue(forKey: key), let written = entry,
              indexes[key.path]?[key.index] == nil else { return }
        for child in written { index.update(key: child.s, at: key.path, store: store) }
        var m = indexes[key.path] ?? [:]
        m[key.index] = index
        indexes[key.path] = m
    }

    /// Number of child indexes (tests).
    var indexCount: Int {
        var n = indexes[.root]?.count ?? 0
        indexes.forEachDescendant(of: .root) { _, m in n += m.count }
        return n
    }

    /// Keeps the child indexes in step with a write: an index above the write updates the one
    /// child the write is under; one at or below it is dropped (rebuilt by the next query).
    private func updateIndexes(_ ops: [TreeWriteOp]) {
        if !pendingBuilds.isEmpty {
            // A write under, at or above a node waiting for its index: read the node again.
            for key in pendingBuilds.keys where ops.contains(where: { $0.path.overlaps(key.path) }) {
                pendingBuilds[key] = .some(nil)
            }
        }
        if !building.isEmpty {
            // A write under a node being indexed: the child it is under is read again at the
            // installation; at or above the node: the build is dropped.
            for (key, entry) in building {
                guard var written = entry else { continue }
                var replaced = false
                for op in ops where op.path.overlaps(key.path) {
                    if key.path.isAncestor(of: op.path) { written.insert(UTF8String(op.path.segments[key.path.count])) } else { replaced = true }
                }
                building[key] = replaced ? .some(nil) : .some(written)
            }
        }
        guard indexes.count > 0 else { return }
        for op in ops {
            var drop: [TreePath] = []
            indexes.forEachAncestorOrSelf(of: op.path) { depth, m in
                if depth == op.path.count { drop.append(op.path); return }
                let at = TreePath(unchecked: Array(op.path.segments[..<depth]))
                for (_, i) in m { i.update(key: op.path.segments[depth], at: at, store: store) }
            }
            indexes.forEachDescendant(of: op.path) { p, _ in drop.append(p) }
            for p in drop { indexes[p] = nil }
        }
    }

    func unlisten(_ conn: TreeConnection, _ path: TreePath) {
        guard var m = listens[path], let n = m[conn.id] else { return }
        m[conn.id] = n > 1 ? n - 1 : nil
        listens[path] = m.isEmpty ? nil : m
    }

    func disconnect(_ conn: TreeConnection, paths: [TreePath]) {
        for p in paths {
            guard var m = listens[p] else { continue }
            m[conn.id] = nil
            listens[p] = m.isEmpty ? nil : m
        }
        connections[conn.id] = nil
    }

    /// Applies the overwrites in order as one unit and notifies the connections listening under
    /// or above them (the writer always hears its acknowledgement).
    /// `checked`: computed from the tree as it is now (see `TreeCommitLog`); false when `false`
    /// is returned: another server's write came first (nothing was applied or told), the
    /// caller catches up and computes it again.
    @discardableResult
    func apply(_ ops: [TreeWriteOp], from origin: TreeConnection, writeId: Int64, checked: Bool = false, lastAttempt: Bool = true) -> Bool {
        if origin.sharesPersistence && writeId <= appliedWrite {
            // Applied before the client restarted, its acknowledgement lost: acknowledge it now,
            // with the current values at its paths under the writer's listens (the client takes
            // an acknowledged write's data as the backend's state; a later write by another
            // connection may have replaced it since).
            let current = ops.map { TreeWriteOp(path: $0.path, value: store.read($0.path)) }
            origin.send(.change(ops: notifications(current, only: origin.id)[origin.id] ?? [], ack: writeId))
            return true
        }
        if let log, !ops.isEmpty {
            switch log.append(ops, checked: checked) {
            case .success:
                break
            case .failure(let e) where e.code == .aborted && checked && !lastAttempt:
                return false
            case .failure(let e):
                origin.send(.rejected(writeId: writeId, error: e))
                return true
            }
        }
        // Applied only when its transaction is in the file: a storage error refuses the write.
        do {
            try persistence.runTransaction("tree write") {
                for op in ops { store.write(op.path, op.value) }
                if origin.sharesPersistence {
                    persistence.setMetadata(PersistenceKey.backendAppliedTreeWrite, writeId)
                }
            }
        } catch {
            origin.send(.rejected(writeId: writeId, error: EmberError.storage(error)))
            return true
        }
        if origin.sharesPersistence { appliedWrite = writeId }
        updateIndexes(ops)
        var outgoing = notifications(ops)
        if outgoing[origin.id] == nil { outgoing[origin.id] = [] }
        for (id, list) in outgoing {
            guard let conn = connections[id] else { continue }
            let ack: Int64? = id == origin.id ? writeId : nil
            if list.isEmpty && ack == nil { continue }
            conn.send(.change(ops: list, ack: ack))
        }
        return true
    }

    /// Another server's write, in the log's order: stored and told to every connection
    /// listening under or above it (nobody's acknowledgement).
    func applyLogged(_ ops: [TreeWriteOp]) {
        _ = try? persistence.runTransaction("logged tree write") {
            for op in ops { store.write(op.path, op.value) }
        }
        updateIndexes(ops)
        for (id, list) in notifications(ops) where !list.isEmpty {
            connections[id]?.send(.change(ops: list, ack: nil))
        }
    }

    /// The overwrites each connection listening above or below `ops` hears (of connection
    /// `only`, when given): an op at or below a listened path whole, else cut to that path.
    private func notifications(_ ops: [TreeWriteOp], only: Int? = nil) -> [Int: [TreeWriteOp]] {
        var outgoing: [Int: [TreeWriteOp]] = [:]
        for op in ops {
            var full: Set<Int> = []
            listens.forEachAncestorOrSelf(of: op.path) { _, conns in
                for c in conns.keys where (only == nil || c == only) && full.insert(c).inserted { outgoing[c, default: []].append(op) }
            }
            listens.forEachDescendant(of: op.path) { path, conns in
                for c in conns.keys where (only == nil || c == only) && !full.contains(c) {
                    outgoing[c, default: []].append(TreeWriteOp(path: path, value: op.value.value(at: op.path.relative(path))))
                }
            }
        }
        return outgoing
    }
}
