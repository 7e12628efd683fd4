// Responsible for: what every measurement shares: the sizes (full or QUICK=1), the probe a
// listener callback stamps, loading a collection, and waiting for acknowledgements.
import EmberConcurrency
import Synchronization
import EmberModel
import EmberCore

struct Config {
    let quick: Bool
    let docIterations: Int, docWarmup: Int
    let queryDocs: Int, queryIterations: Int, queryWarmup: Int
    let listeners: Int
    let bulkDocs: Int, bulkBatch: Int

    init(quick: Bool) {
        self.quick = quick
        let d = quick ? 10 : 1
        docIterations = 2_000 / d; docWarmup = 50 / d
        queryDocs = 10_000 / d; queryIterations = 500 / d; queryWarmup = 50 / d
        listeners = 10_000 / d
        bulkDocs = 100_000 / d; bulkBatch = 500
    }
}

/// Written by a listener callback on the event thread, read by the bench thread: the last
/// sequence number the callback saw and the monotonic time at which it saw it.
final class Probe: @unchecked Sendable {
    let seen = Atomic<Int>(-1)
    let at = Atomic<Int64>(0)

    @inline(__always)
    func note(_ seq: Int) {
        at.store(monoNs(), ordering: .relaxed)
        seen.store(seq, ordering: .releasing)
    }

    /// Waits (at most `seconds`, `sleeping` or yielding: see `waitUntil`) for the callback to
    /// see `seq`; returns its time, or nil.
    func waitFor(_ seq: Int, seconds: Double = 5, sleeping: Bool = false) -> Int64? {
        guard waitUntil(seconds: seconds, sleeping: sleeping, { seen.load(ordering: .acquiring) == seq }) else { return nil }
        return at.load(ordering: .relaxed)
    }
}

struct BenchFailure: Error, CustomStringConvertible { let description: String }

/// Blocks until every write made so far is acknowledged (at most `seconds`).
func waitForAcks(_ client: EmberClient, seconds: Double = 120) throws {
    let sem = Semaphore()
    try client.waitForPendingWrites { _ in sem.signal() }
    guard sem.wait(seconds: seconds) else { throw BenchFailure(description: "writes not acknowledged within \(seconds) s") }
}

/// Writes documents 0..<count of `collection` in batches of 500 and waits for the acknowledgements.
func populate(_ client: EmberClient, _ collection: String, count: Int) throws {
    var i = 0
    while i < count {
        let end = min(count, i + 500)
        try client.write((i..<end).map { Mutation(key: benchKey(collection, $0), kind: .set(benchDoc($0, seq: 0))) })
        i = end
    }
    try waitForAcks(client)
}

/// One backend round trip: when it returns, every backend message sent before has been applied.
func syncWithBackend(_ client: EmberClient, _ key: DocumentKey) throws {
    _ = try client.getDocument(key, timeout: 30)
}

/// Closes the client, then waits for the backend queue to drain, so no backend work of one
/// measurement overlaps the next. (It also kept close-then-free safe before BackendConnection's
/// queued blocks held their backend: they used to trap on `unowned let backend`.)
func shutDown(_ client: EmberClient) {
    client.close()
    client.backend.flush()
}
