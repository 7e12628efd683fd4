import EmberModel
import EmberBackend

/// The client's `.info` locations, as the Firebase SDKs keep them: `.info/connected` (true while
/// the link to the backend or server is up and the network on) and `.info/serverTimeOffset`
/// (the server's clock minus the client's, in milliseconds, from the realtime handshake; 0 for
/// the in-process backend). They live in `info`, apart from the tree: nothing is listened to or
/// sent for them, observers of the root never see them, and writes there are refused
/// (`TreeLimits`). Worker queue.
///
///     engine.observe(TreePath(parsing: ".info/connected"), ...)   // value events: false, true, ...
extension TreeEngine {
    static let infoKey = TreePath.infoKey

    static func isInfo(_ path: TreePath) -> Bool { path.segments.first == infoKey }

    /// What views at `path` show: `local`, or `info` under `.info`.
    func viewNode(at path: TreePath) -> TreeValue {
        TreeEngine.isInfo(path) ? info.value(at: path.segments) : local.value(at: path.segments)
    }

    /// Sets the `.info` values that changed, raising their observers' events.
    func updateInfo(serverTimeOffsetMillis: Double? = nil) {
        var changes: [(TreePath, TreeValue)] = [(TreePath(unchecked: [TreeEngine.infoKey, "connected"]), .bool(isOnline))]
        if let ms = serverTimeOffsetMillis {
            let rounded = ms.rounded()
            changes.append((TreePath(unchecked: [TreeEngine.infoKey, "serverTimeOffset"]),
                            Double(Int64(rounded)) == rounded ? .int(Int64(rounded)) : .double(ms)))
        }
        changes.removeAll { info.value(at: $0.0.segments) == $0.1 }
        guard !changes.isEmpty else { return }
        changeLocal(changes.map { $0.0 }) {
            for (p, v) in changes { info.set(p.segments[...], v) }
        }
    }

    /// The answer of a read under `.info`.
    func infoSnapshot(_ path: TreePath) -> TreeValue { info.value(at: path.segments) }
}
