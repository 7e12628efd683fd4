import Dispatch
import EmberModel

/// Responsible for: what a tree client (EmberCore's `TreeEngine`) asks of whatever holds the
/// authoritative tree: the in-process backend (`TreeConnection`) or a server (EmberRemote's
/// `RemoteTreeLink`). Events come back as `TreeBackendEvent`s, in order, on the client's queue.
public protocol TreeLink: AnyObject {
    /// Starts listening at `path`: a `.listenResult` for it, then `.change` events. `cached`:
    /// the node the client holds there from before (a resume), which a server need not send
    /// again (`TreeRanges`); nil when the client knows nothing there.
    func listen(_ path: TreePath, windows: [TreeQuery], cached: TreeValue?)
    func unlisten(_ path: TreePath)
    /// Whether the server can answer `query` at a location with just its window (a tagged
    /// listen) instead of every child.
    func servesWindow(of query: TreeQuery) -> Bool
    /// Starts a tagged listen of `query` at `path`: `.window(tag:value:)` events.
    func listen(_ path: TreePath, query: TreeQuery, tag: Int)
    func unlisten(_ path: TreePath, query: TreeQuery, tag: Int)
    /// Sends a write; its `.change` with `ack: id`, or `.rejected`, follows. `serverValues`:
    /// whether the ops hold server values' placeholders (`TreeServerValues`), which whoever
    /// applies the write fills in (the caller knows from its validation pass).
    func write(id: Int64, _ ops: [TreeWriteOp], serverValues: Bool)
    /// Sends a compare-and-set of one overwrite (a transaction's attempt): applied only if the
    /// node at its path hashes to `hash` (`TreeHash`, "" for null); else `.rejected` with
    /// `TreeLinkError.dataStale` (code aborted).
    func write(id: Int64, _ ops: [TreeWriteOp], ifHash hash: String)
    /// The node at `path` now.
    func get(_ path: TreePath, completion: @escaping @Sendable (TreeValue) -> Void)
    /// Nothing reaches the client after it.
    func disconnect()
    /// Registers (or cancels) writes the server applies when this client's connection ends
    /// (Firebase's onDisconnect); `completion` once the server holds them, on the client's queue.
    func onDisconnect(_ op: TreeOnDisconnect, completion: @escaping @Sendable (EmberError?) -> Void)
}

/// Responsible for: the errors a link reports that its client acts on.
public enum TreeLinkError {
    /// A compare-and-set found the node changed (the protocol's `datastale`).
    public static let dataStale = EmberError(.aborted, "The transaction needs to be run again with current data (datastale).")
}

extension TreeConnection: TreeLink {
    /// Server values are filled in by the backend when it applies the write.
    public func write(id: Int64, _ ops: [TreeWriteOp], serverValues: Bool) {
        guard serverValues else { return write(id: id, ops) }
        write(id: id) { read in TreeServerValues.resolve(ops, read: read, nowMillis: TreeServerValues.clockMillis()) ?? ops }
    }

    /// The in-process backend answers a limited query's first window with the listen of its
    /// location (`windows`), from its child indexes: no tagged listens.
    public func servesWindow(of query: TreeQuery) -> Bool { false }
    public func listen(_ path: TreePath, query: TreeQuery, tag: Int) { listen(path, windows: [query]) }
    public func unlisten(_ path: TreePath, query: TreeQuery, tag: Int) { unlisten(path) }

    /// The in-process backend answers with its node (nothing to save on a function call).
    public func listen(_ path: TreePath, windows: [TreeQuery], cached: TreeValue?) { listen(path, windows: windows) }

    public func write(id: Int64, _ ops: [TreeWriteOp], ifHash hash: String) {
        guard let path = ops.first?.path else { return write(id: id, ops) }
        write(id: id) { read in
            guard TreeHash.of(read(path)) == hash else { throw TreeLinkError.dataStale }
            return TreeServerValues.resolve(ops, read: read, nowMillis: TreeServerValues.clockMillis()) ?? ops
        }
    }

    /// The in-process backend has no connection to lose: the client applies its onDisconnect
    /// writes itself when it closes (TreeEngine.close).
    public func onDisconnect(_ op: TreeOnDisconnect, completion: @escaping @Sendable (EmberError?) -> Void) {
        deliveryQueue.async { completion(nil) }
    }
}

/// Responsible for: a tree client of a link that can lose its server (a remote one): the events,
/// and when the server is lost and found again. After `treeLinkRestored` the client sends its
/// listens and its unacknowledged writes again, in order. On the client's queue.
public protocol TreeLinkClient: AnyObject {
    func treeLink(_ link: any TreeLink, didSend event: TreeBackendEvent)
    func treeLinkLost(_ link: any TreeLink)
    func treeLinkRestored(_ link: any TreeLink)
    /// The server's clock minus the client's, in milliseconds (at each connection, before
    /// `treeLinkRestored`).
    func treeLink(_ link: any TreeLink, serverTimeOffsetMillis: Double)
}

extension TreeLinkClient {
    public func treeLink(_ link: any TreeLink, serverTimeOffsetMillis: Double) {}
}

/// Responsible for: opening a tree client's link to a server.
public protocol TreeEndpoint: AnyObject {
    func openTreeLink(client: any TreeLinkClient, queue: DispatchQueue) -> any TreeLink
}
