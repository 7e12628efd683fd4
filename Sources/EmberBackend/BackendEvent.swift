import EmberModel

/// Responsible for: the messages a backend sends a connected client, in order, on the client's
/// queue: what a listen found, what a commit changed, and the fate of the client's queued writes.
public enum BackendEvent: Sendable {
    /// The current result of a target just listened to (for a limit query: its window), and the
    /// current state (document or tombstone) of each `knownKeys` document that is not in it.
    case listenResult(targetId: Int, documents: [Document], resolved: [Document], version: Int64)
    /// A commit at `version` changed these documents (tombstones for deletes), restricted to what
    /// this client watches or wrote; `ack` is set when the commit was one of its queued batches.
    case commit(version: Int64, documents: [Document], ack: Int64?)
    /// A queued batch was committed at `version`, acknowledged with the result of each of its
    /// writes (in order) instead of the documents: a server's Write stream. The client applies the
    /// writes to its cached documents with these results (`Mutation.applyCommitted`).
    case acknowledged(batchId: Int64, version: Int64, results: [MutationResult])
    /// A queued batch was refused; nothing of it was applied.
    case writeRejected(batchId: Int64, error: EmberError)
    /// The backend refused or dropped a target (a server's REMOVE with a status): it sends no
    /// more for it. The listeners of that target end with `error`.
    case targetRejected(targetId: Int, error: EmberError)
    /// The link lost its connection (a server out of reach): no target is current until the link
    /// listens again and sends each one's `.listenResult`; queued writes wait and are sent again.
    case connectionLost
    /// A server's resume token for a target, valid for what the client has received so far:
    /// listening again with it (`BackendLink.listen(resumeToken:)`) sends only what changed since.
    case resumeToken(targetId: Int, token: [UInt8])
    /// A server's watch at one consistent point (the Firebase SDKs' `RemoteEvent`): documents
    /// and which targets hold them, each target's sync state and token. Only a link whose
    /// `reportsTargetMembership` is true sends it (instead of `.listenResult`, `.commit` without
    /// acknowledgement and `.resumeToken`); the client applies it as one change.
    case watch(WatchEvent)
    /// The server answered the link's watch again (the SDKs' online state turns online).
    case reached
}

/// Responsible for: what one consistent point of a server's watch says: the read version,
/// the new state of every document it sent (tombstones for deletes), and per target what
/// changed in its membership and sync state.
public struct WatchEvent: Sendable {
    /// One target's change since the previous event.
    public struct TargetChange: Sendable {
        public let targetId: Int
        /// The server has sent everything the target holds at `version`.
        public let current: Bool
        /// Keys the server put in the target, and took out of it (not necessarily deleted).
        public let added: [DocumentKey]
        public let removed: [DocumentKey]
        /// The target's newest resume token, if it changed.
        public let resumeToken: [UInt8]?
        /// The server's count disagreed with the target's keys: the target is listened to again
        /// from scratch and is not in sync until it is current again.
        public let reset: Bool
        public init(targetId: Int, current: Bool, added: [DocumentKey], removed: [DocumentKey], resumeToken: [UInt8]?, reset: Bool) {
            self.targetId = targetId
            self.current = current
            self.added = added
            self.removed = removed
            self.resumeToken = resumeToken
            self.reset = reset
        }
    }
    public let version: Int64
    public let documents: [Document]
    public let targets: [TargetChange]
    public init(version: Int64, documents: [Document], targets: [TargetChange]) {
        self.version = version
        self.documents = documents
        self.targets = targets
    }
}

/// Responsible for: receiving a link's events. Called on the queue given to `connect` / `openLink`.
public protocol BackendClient: AnyObject {
    func backend(_ link: any BackendLink, didSend event: BackendEvent)
}
