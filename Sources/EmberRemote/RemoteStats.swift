import Synchronization

/// Responsible for: counting what a server sent the links of one `RemoteBackend`, readable from
/// any thread: the documents its Listen streams received (the resume benchmark's figure: after a
/// reconnect only what changed is sent again) and the resume tokens they passed on.
///
///     let before = remote.stats.documentsReceived   // ... reconnect ...
public final class RemoteStats: Sendable {
    private let documents = Atomic<Int>(0)
    private let tokens = Atomic<Int>(0)

    /// Resume tokens passed on to the client so far.
    public var resumeTokensDelivered: Int { tokens.load(ordering: .relaxed) }

    func addResumeTokenDelivered() { tokens.add(1, ordering: .relaxed) }

    /// Documents (DocumentChange messages) received on the Listen streams so far.
    public var documentsReceived: Int { documents.load(ordering: .relaxed) }

    func addDocumentsReceived(_ n: Int) {
        if n > 0 { documents.add(n, ordering: .relaxed) }
    }
}
