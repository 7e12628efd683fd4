import EmberModel
import EmberStorage

/// Responsible for: the backend's authoritative Realtime-Database tree (in the same database as
/// the documents): applies each write atomically in arrival order on the backend's queue, and
/// tells each connection about the overwrites under the paths it listens to. Listens are
/// indexed by path, so a write costs what it changes plus the listens above or below it, not
/// the size of the tree. Backend queue only.
///
///     backend.tree.apply([TreeWriteOp(path: p, value: v)], from: conn, writeId: 1)
final class BackendTree {
    let store: TreeStore
    unowned let persistence: Persistence
    /// Per listened path: connection id -> number of listens it holds there.
    private var listens = PathTrie<[Int: Int]>()
    var connections: [Int: TreeConnection] = [:]
    private var nextConnectionId = 1

    init(persistence: Persistence) {
        self.persistence = persistence
        self.store = persistence.backendTree ?? MemoryTreeStore()
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
    func apply(_ ops: [TreeWriteOp], from origin: TreeConnection, writeId: Int64) {
        persistence.runTransaction("tree write") {
            for op in ops { store.write(op.path, op.value) }
        }
        var outgoing: [Int: [TreeWriteOp]] = [origin.id: []]
        for op in ops {
            var full: Set<Int> = []
            listens.forEachAncestorOrSelf(of: op.path) { _, conns in
                for c in conns.keys where full.insert(c).inserted { outgoing[c, default: []].append(op) }
            }
            listens.forEachDescendant(of: op.path) { path, conns in
                for c in conns.keys where !full.contains(c) {
                    outgoing[c, default: []].append(TreeWriteOp(path: path, value: op.value.value(at: op.path.relative(path))))
                }
            }
        }
        for (id, list) in outgoing {
            guard let conn = connections[id] else { continue }
            let ack: Int64? = id == origin.id ? writeId : nil
            if list.isEmpty && ack == nil { continue }
            conn.send(.change(ops: list, ack: ack))
        }
    }
}
