import Synchronization

/// Responsible for: counting what a server sent the links of one `RemoteBackend`, readable from
/// any thread: the documents its Listen streams received (issue 12's resume figure: after a
/// reconnect only what changed is sent again).
///
///     let before = remote.stats.documentsReceived   // ... reconnect ...
public final class RemoteStats: Sendable {
    private let documents = Atomic<Int>(0)

    /// Documents (DocumentChange messages) received on the Listen streams so far.
    public var documentsReceived: Int { documents.load(ordering: .relaxed) }

    func addDocumentsReceived(_ n: Int) {
        if n > 0 { documents.add(n, ordering: .relaxed) }
    }
}
