import EmberConcurrency

/// Responsible for: the backend's running counts for an operator (Prometheus metrics): commits
/// it took from its own connections, commits it applied from a shared log, and the listen
/// targets open now. Written on the backend's queue, read from any thread.
public final class BackendCounters: Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// Commits this backend computed and applied for its connections.
        public var commits: Int64 = 0
        /// Commits another server logged that this one applied (`applyLogged`).
        public var loggedCommits: Int64 = 0
        /// Listen targets open on this backend.
        public var targets: Int = 0
    }

    private let box = LockedValueBox(Snapshot())

    public var current: Snapshot { box.current }

    func update(_ body: (inout Snapshot) -> Void) {
        box.withLockedValue { body(&$0) }
    }
}
