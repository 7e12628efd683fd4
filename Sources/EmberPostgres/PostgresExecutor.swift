import Dispatch

/// Responsible for: where `PostgresStore`'s tasks run: a serial dispatch queue of its own (a
/// `TaskExecutor`), so that PostgreSQL calls never need the threads of the process's global
/// executor. `ember serve` makes its event loops that executor, and a commit blocks the backend's
/// queue while it waits for PostgreSQL: the answer must not depend on an event loop that may
/// itself be waiting for the backend (a rules lookup).
final class PostgresExecutor: TaskExecutor, @unchecked Sendable { // the queue is its only state
    private let queue = DispatchQueue(label: "ember.postgres")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
