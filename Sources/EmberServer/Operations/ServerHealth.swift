import Dispatch
import EmberConcurrency
import EmberPostgres

/// Responsible for: whether this instance should take traffic, as the gRPC health service and
/// the tree port's `/healthz` tell load balancers: SERVING while it runs and its store answers;
/// NOT_SERVING once it is stopping, or, on PostgreSQL, from a failed read of the shared log until
/// one succeeds, or when none has answered for `staleAfter` seconds (a hung connection); calls
/// fail with UNAVAILABLE meanwhile (`StoreGate`). Any thread.
///
///     let health = ServerHealth(log: postgresLog)
///     if health.status == .serving { ... }
final class ServerHealth: Sendable {
    enum Status: String, Sendable {
        case serving = "SERVING"
        case notServing = "NOT_SERVING"
    }

    private let stopping = LockedValueBox(false)
    private let log: PostgresCommitLog?
    /// Seconds the shared log may go without answering before the instance stops serving.
    let staleAfter: Double

    init(log: PostgresCommitLog?, staleAfter: Double = 3) {
        self.log = log
        self.staleAfter = staleAfter
    }

    /// From now on NOT_SERVING (the server is stopping).
    func shutDown() { stopping.withLockedValue { $0 = true } }

    var isStopping: Bool { stopping.current }

    var status: Status { reason == nil ? .serving : .notServing }

    /// Why the instance is not serving; nil when it is.
    var reason: String? {
        if stopping.current { return "the server is stopping" }
        if let log, !log.isReachable || log.secondsSinceAnswer > staleAfter {
            return "PostgreSQL is out of reach (last answer \(Int(log.secondsSinceAnswer)) s ago)"
        }
        return nil
    }
}
