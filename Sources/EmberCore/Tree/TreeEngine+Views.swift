import EmberConcurrency
import EmberModel
import EmberBackend

/// Responsible for: the engine's views and observers: registering and removing observers
/// (one view per path and query, shared), raising initial events, and turning every change of
/// `local` into the events of the views above or below it, in Firebase's order (deeper views
/// first; per view: removed, added, moved, changed, then value; each type in index order).
extension TreeEngine {
    /// Registers an observer; returns its handle. An invalid query ends it with the error.
    func observe(_ path: TreePath, query: TreeQuery, type: TreeEventType, token: ListenerToken,
                 callback: @escaping (TreeListenEvent) -> Void) -> UInt {
        worker.assertCurrent()
        let handle = nextHandle
        nextHandle += 1
        do { try query.validate() } catch {
            let e = error as? EmberError ?? EmberError(.internal, "\(error)")
            events.post { token.deliverFinal { callback(.cancelled(e)) } }
            return handle
        }
        let id = TreeView.id(path, query)
        let view: TreeView
        if let v = views[id] { view = v } else {
            loadStored(path)
            view = TreeView(path: path, query: query)
            views[id] = view
            viewsByPath[path] = (viewsByPath[path] ?? []) + [view]
            let known = complete.hasAncestorOrSelf(of: path)
            if !known && wantsWindow(path, query) {
                startWindowListen(view)
            } else {
                addListen(path, window: !known && query.isLimited ? query : nil)
            }
            if known {
                complete[path] = true
                view.initialize(viewNode(at: path))
            } else {
                startPartial(view)
            }
        }
        let o = TreeObserver(handle: handle, type: type, token: token, view: view, callback: callback)
        view.observers.append(o)
        if type == .value { view.valueObservers += 1 }
        observers[handle] = o
        raiseInitial(o)
        return handle
    }

    func removeObserver(_ handle: UInt) {
        worker.assertCurrent()
        guard let o = observers.removeValue(forKey: handle) else { return }
        let v = o.view
        v.observers.removeAll { $0 === o }
        if o.type == .value { v.valueObservers -= 1 }
        guard v.observers.isEmpty else { return }
        views[v.id] = nil
        let rest = (viewsByPath[v.path] ?? []).filter { $0 !== v }
        viewsByPath[v.path] = rest.isEmpty ? nil : rest
        if !stopWindowListen(v) { removeListen(v.path) }
    }

    /// The server refused the listen at `path`: every observer of it ends with `error`.
    func revoke(_ path: TreePath, _ error: EmberError) {
        for v in viewsByPath[path] ?? [] {
            for o in v.observers {
                let callback = o.callback
                let token = o.token
                events.post { token.deliverFinal { callback(.cancelled(error)) } }
                removeObserver(o.handle)
            }
        }
    }

    /// The tokens of the observers at `path` (of `query` only, when given).
    func tokens(at path: TreePath, query: TreeQuery?) -> [ListenerToken] {
        worker.assertCurrent()
        return (viewsByPath[path] ?? []).filter { query == nil || $0.query == query! }.flatMap { $0.observers.map { $0.token } }
    }

    /// The token of observer `handle` when it observes `path`.
    func token(handle: UInt, at path: TreePath) -> ListenerToken? {
        worker.assertCurrent()
        guard let o = observers[handle], o.view.path == path else { return nil }
        return o.token
    }

    /// Limited views at `path` still waiting for data start from the windows the backend sent
    /// with the listen's answer (no pass over every child), when no pending write touches the
    /// node (the windows describe the backend's state, not the local one).
    func initializeFromWindows(at path: TreePath, _ windows: [TreeWindow]) {
        if pendingByPath.hasAncestorOrSelf(of: path) || pendingByPath.hasDescendant(of: path) { return }
        let node = viewNode(at: path)
        for w in windows {
            guard let v = views[TreeView.id(path, w.query)], !v.initialized, v.known.isEmpty else { continue }
            v.initialize(node, window: w)
            for o in v.observers { raiseInitial(o) }
        }
    }

    /// Views at or below `path` that were waiting for data take their first state now.
    func initializeViews(at path: TreePath) {
        var waiting: [TreeView] = []
        for v in viewsByPath[path] ?? [] where !v.initialized { waiting.append(v) }
        viewsByPath.forEachDescendant(of: path) { _, vs in for v in vs where !v.initialized { waiting.append(v) } }
        for v in waiting { completeView(v) }
    }

    /// Gives a waiting view its complete state: initial events when it raised nothing yet, else
    /// the changes from what it knew from local writes, then the value.
    func completeView(_ v: TreeView) {
        let node = viewNode(at: v.path)
        if v.known.isEmpty {
            v.initialize(node)
            for o in v.observers { raiseInitial(o) }
            return
        }
        let changes = v.completeFromPartial(node)
        let (evs, _) = v.apply(changes, node: node)
        dispatch(v, evs, value: true, node: node)
    }

    /// A new view the client has no data for: it knows the children whole pending writes set
    /// (or everything, when a pending write covers its path).
    private func startPartial(_ v: TreeView) {
        var keys: [String] = []
        for op in pendingOps {
            if op.path.isAncestorOrSelf(of: v.path) { v.initialize(viewNode(at: v.path)); return }
            if op.path.count == v.path.count + 1 && v.path.isAncestor(of: op.path), let k = op.path.last, !keys.contains(where: { equalUTF8($0, k) }) { keys.append(k) }
        }
        guard !keys.isEmpty else { return }
        let node = viewNode(at: v.path)
        let changes = keys.map { TreeView.ChildChange(key: $0, old: .null, new: node.child($0)) }
        for k in keys { v.known[UTF8String(k)] = node.child(k) }
        _ = v.apply(changes.filter { $0.new.exists }, node: node)
    }

    /// Whether a pending write sets `path` (or an ancestor) whole.
    private func pendingCovers(_ path: TreePath) -> Bool {
        pendingOps.contains { $0.path.isAncestorOrSelf(of: path) }
    }

    /// child_added for each child in the window, or the value, for an observer that just started
    /// (a view still waiting for data: its children known from local writes, no value).
    private func raiseInitial(_ o: TreeObserver) {
        let v = o.view
        let node = viewNode(at: v.path)
        switch o.type {
        case .childAdded:
            for (k, prev) in v.windowKeys() {
                post(o, .event(.childAdded, TreeSnapshot(path: v.path.child(k), value: node.child(k)), previousKey: prev))
            }
        case .value where v.initialized:
            post(o, .event(.value, TreeSnapshot(path: v.path, value: v.valueSnapshot(node), index: v.index), previousKey: nil))
        default: break
        }
    }

    @inline(__always)
    private func post(_ o: TreeObserver, _ e: TreeListenEvent) {
        let token = o.token, cb = o.callback
        events.post { token.deliver { cb(e) } }
    }

    private struct Affected {
        let view: TreeView
        var all = false
        var keys: [String] = []
        var olds: [TreeValue] = []
        var oldNode: TreeValue = .null
    }

    /// Runs `body` (which changes `local` at or under `paths` only) and raises the events of
    /// every initialized view it changed.
    func changeLocal(_ paths: [TreePath], fromLocalWrite: Bool = false, _ body: () -> Void) {
        guard !views.isEmpty else { body(); return }
        var affected: [Affected] = []
        var slot: [ObjectIdentifier: Int] = [:]
        func note(_ v: TreeView, _ key: String?) {
            let id = ObjectIdentifier(v)
            let i: Int
            if let s = slot[id] { i = s } else {
                i = affected.count
                slot[id] = i
                affected.append(Affected(view: v))
            }
            if let k = key {
                // By bytes: "\u{E9}" and "e\u{301}" are two children, each with its events.
                if !affected[i].all && !affected[i].keys.contains(where: { equalUTF8($0, k) }) { affected[i].keys.append(k) }
            } else {
                affected[i].all = true
            }
        }
        for p in paths {
            viewsByPath.forEachAncestorOrSelf(of: p) { depth, vs in
                for v in vs { note(v, depth < p.count ? p.segments[depth] : nil) }
            }
            viewsByPath.forEachDescendant(of: p) { _, vs in for v in vs { note(v, nil) } }
        }
        if affected.isEmpty { body(); return }
        for i in affected.indices {
            let node = viewNode(at: affected[i].view.path)
            if affected[i].all { affected[i].oldNode = node } else { affected[i].olds = affected[i].keys.map { node.child($0) } }
        }
        body()
        if affected.count > 1 { affected.sort { $0.view.path.count > $1.view.path.count } }
        for a in affected {
            let v = a.view
            let node = viewNode(at: v.path)
            if !v.initialized {
                changePartial(a.view, all: a.all, keys: a.keys, node: node, fromLocalWrite: fromLocalWrite)
                continue
            }
            var changes: [TreeView.ChildChange] = []
            if a.all {
                if a.oldNode.isIdentical(to: node) { continue }
                TreeEngine.diff(a.oldNode, node, into: &changes)
            } else {
                for (k, old) in zip(a.keys, a.olds) {
                    let new = node.child(k)
                    if !old.isIdentical(to: new) && old != new { changes.append(.init(key: k, old: old, new: new)) }
                }
                if changes.isEmpty { continue }
            }
            let (evs, value) = v.apply(changes, node: node)
            dispatch(v, evs, value: value, node: node)
        }
    }

    /// A change under a view still waiting for its data: events only for children known whole.
    private func changePartial(_ v: TreeView, all: Bool, keys: [String], node: TreeValue, fromLocalWrite: Bool) {
        if all {
            if fromLocalWrite { completeView(v) }
            return
        }
        var changes: [TreeView.ChildChange] = []
        for k in keys {
            let bytes = UTF8String(k)
            guard v.known[bytes] != nil || pendingCovers(v.path.child(k)) else { continue }
            let old = v.known[bytes] ?? .null
            let new = node.child(k)
            v.known[bytes] = new
            if old != new { changes.append(.init(key: k, old: old, new: new)) }
        }
        guard !changes.isEmpty else { return }
        let (evs, _) = v.apply(changes, node: node)
        dispatch(v, evs, value: false, node: node)
    }

    /// The children that differ between two states of a node.
    static func diff(_ old: TreeValue, _ new: TreeValue, into changes: inout [TreeView.ChildChange]) {
        let o = old.object, n = new.object
        if let o {
            for (k, ov) in o.children {
                let nv = new.child(k.s)
                if !ov.isIdentical(to: nv) && ov != nv { changes.append(.init(key: k.s, old: ov, new: nv)) }
            }
        }
        if let n {
            for (k, nv) in n.children where old.child(k.s).isNull { changes.append(.init(key: k.s, old: .null, new: nv)) }
        }
    }

    private func dispatch(_ v: TreeView, _ evs: [TreeViewEvent], value: Bool, node: TreeValue) {
        for e in evs {
            for o in v.observers where o.type == e.type {
                post(o, .event(e.type, TreeSnapshot(path: v.path.child(e.key), value: e.value), previousKey: e.prevKey))
            }
        }
        if value && v.valueObservers > 0 {
            let snap = TreeSnapshot(path: v.path, value: v.valueSnapshot(node), index: v.index)
            for o in v.observers where o.type == .value { post(o, .event(.value, snap, previousKey: nil)) }
        }
    }
}
