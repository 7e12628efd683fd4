import Dispatch
import EmberModel

/// Responsible for: what a tree client (EmberCore's `TreeEngine`) asks of whatever holds the
/// authoritative tree: the in-process backend (`TreeConnection`) or a server (EmberRemote's
/// `RemoteTreeLink`). Events come back as `TreeBackendEvent`s, in order, on the client's queue.
public protocol TreeLink: AnyObject {
    /// Starts listening at `path`: a `.listenResult` for it, then `.change` events.
    func listen(_ path: TreePath, windows: [TreeQuery])
    func unlisten(_ path: TreePath)
    /// Sends a write; its `.change` with `ack: id`, or `.rejected`, follows.
    func write(id: Int64, _ ops: [TreeWriteOp])
    /// The node at `path` now.
    func get(_ path: TreePath, completion: @escaping (TreeValue) -> Void)
    /// Nothing reaches the client after it.
    func disconnect()
    /// Registers (or cancels) writes the server applies when this client's connection ends
    /// (Firebase's onDisconnect); `completion` once the server holds them, on the client's queue.
    func onDisconnect(_ op: TreeOnDisconnect, completion: @escaping (EmberError?) -> Void)
}

extension TreeConnection: TreeLink {
    /// The in-process backend has no connection to lose: the client applies its onDisconnect
    /// writes itself when it closes (TreeEngine.close).
    public func onDisconnect(_ op: TreeOnDisconnect, completion: @escaping (EmberError?) -> Void) {
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
}

/// Responsible for: opening a tree client's link to a server.
public protocol TreeEndpoint: AnyObject {
    func openTreeLink(client: any TreeLinkClient, queue: DispatchQueue) -> any TreeLink
}
