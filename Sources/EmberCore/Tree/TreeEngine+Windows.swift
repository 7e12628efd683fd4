import EmberModel
import EmberBackend

/// Responsible for: one query served by a tagged listen: its tag, location, query, view, and the
/// keys of the children its window holds now.
final class TreeWindowListen {
    let tag: Int
    let path: TreePath
    let query: TreeQuery
    unowned let view: TreeView
    var members: Set<UTF8String> = []

    init(tag: Int, path: TreePath, query: TreeQuery, view: TreeView) {
        self.tag = tag
        self.path = path
        self.query = query
        self.view = view
    }
}

/// Limited and ranged queries served from the server's window, as the Firebase SDKs do it: a
/// query view at a location the client does not hold whole listens with a tag (when its link's
/// server can answer the query, `TreeLink.servesWindow`) and gets only the children the query
/// selects. The windows' children go into `cache` beside each other: the union of several
/// windows holds every window whole, and each view applies its own query, so every view shows
/// its window exactly. A child leaving a window leaves the cache unless another window, or a
/// listen of the whole location, still holds it. The location stays incomplete (other views
/// there listen to it whole). Worker queue.
extension TreeEngine {
    /// Whether a new view of `query` at `path` should be served by a tagged listen.
    func wantsWindow(_ path: TreePath, _ query: TreeQuery) -> Bool {
        !query.isDefault && !TreeEngine.isInfo(path) && !listenCounts.hasAncestorOrSelf(of: path)
            && connection.servesWindow(of: query)
    }

    func startWindowListen(_ view: TreeView) {
        let tag = nextWindowTag
        nextWindowTag += 1
        let w = TreeWindowListen(tag: tag, path: view.path, query: view.query, view: view)
        windowListens[tag] = w
        windowTags[view.id] = tag
        if isOnline { connection.listen(view.path, query: view.query, tag: tag) }
    }

    /// Ends the tagged listen of `view` (false when it had none).
    func stopWindowListen(_ view: TreeView) -> Bool {
        guard let tag = windowTags.removeValue(forKey: view.id), let w = windowListens.removeValue(forKey: tag) else { return false }
        if isOnline { connection.unlisten(w.path, query: w.query, tag: tag) }
        let gone = w.members.filter { !heldElsewhere($0, at: w.path, by: tag) }
        let paths = gone.map { w.path.child($0.s) }
        if !paths.isEmpty {
            changeLocal(paths) {
                for p in paths {
                    cache.set(p.segments[...], .null)
                    local.set(p.segments[...], overlay(.null, at: p))
                }
            }
        }
        return true
    }

    /// Whether the child `key` of `path` stays known without window `tag`: another window there
    /// holds it, or a listen covers the location whole.
    private func heldElsewhere(_ key: UTF8String, at path: TreePath, by tag: Int) -> Bool {
        if complete.hasAncestorOrSelf(of: path) || listenCounts.hasAncestorOrSelf(of: path) { return true }
        return windowListens.values.contains { $0.tag != tag && $0.path == path && $0.members.contains(key) }
    }

    /// The server's window for `tag` now: its children into the cache, those that left out of
    /// it, events raised; a view still waiting takes its first state.
    func receiveWindow(_ tag: Int, _ value: TreeValue) {
        guard let w = windowListens[tag] else { return }
        let children = value.object?.children ?? [:]
        var changed: [TreePath] = []
        for (k, v) in children where cache.value(at: w.path.segments + [k.s]) != v { changed.append(w.path.child(k.s)) }
        for k in w.members where children[k] == nil && !heldElsewhere(k, at: w.path, by: tag) { changed.append(w.path.child(k.s)) }
        w.members = Set(children.keys)
        if !changed.isEmpty {
            changeLocal(changed) {
                for p in changed {
                    cache.set(p.segments[...], children[UTF8String(p.last!)] ?? .null)
                    local.set(p.segments[...], overlay(cache.value(at: p.segments), at: p))
                }
            }
        }
        if !w.view.initialized { completeView(w.view) }
    }

    /// The children of `path` that tagged listens there hold (null when none).
    func windowedNode(at path: TreePath) -> TreeValue {
        var kept: [UTF8String: TreeValue] = [:]
        let node = cache.value(at: path.segments)
        for w in windowListens.values where w.path == path {
            for k in w.members { kept[k] = node.object?.children[k] }
        }
        return kept.isEmpty ? .null : .object(TreeObject(kept))
    }

    /// Every tagged listen again (the server answers each with its whole window).
    func resumeWindows() {
        for w in windowListens.values.sorted(by: { $0.tag < $1.tag }) { connection.listen(w.path, query: w.query, tag: w.tag) }
    }

    func suspendWindows() {
        for w in windowListens.values.sorted(by: { $0.tag < $1.tag }) { connection.unlisten(w.path, query: w.query, tag: w.tag) }
    }
}
