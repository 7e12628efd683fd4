import EmberModel
import EmberBackend
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: an optimistic transaction: reads go to the backend and remember each
/// document's version; writes are buffered; the commit sends them with preconditions that the
/// read versions still hold. Reads must come before writes. Used by `EmberClient.runTransaction`.
///
///     try client.runTransaction { tx in
///         let doc = try tx.get(key); tx.set(key, fields) }
public final class TransactionContext {
    let client: EmberClient
    private var readVersions: [DocumentKey: Int64] = [:]   // 0: did not exist
    private var writes: [Mutation] = []
    private var written = Set<DocumentKey>()
    /// A write the transaction can never commit (an update of a document read as missing). As in
    /// the Firebase SDKs it fails the whole transaction once the body returns, without a retry.
    private(set) var permanentError: EmberError?

    init(client: EmberClient) { self.client = client }

    /// Reads a document at the backend (nil when it does not exist).
    public func get(_ key: DocumentKey) throws -> Document? {
        if !writes.isEmpty {
            throw EmberError.invalidArgument("Firestore transactions require all reads to be executed before all writes.")
        }
        let doc: Document = try client.wait(30) { done in
            client.engine.connection.fetchDocuments([key]) { r in done(r.map { $0.documents[0] }) }
        }
        let version = doc.exists ? doc.updateTime : 0
        if let earlier = readVersions[key], earlier != version {
            throw EmberError(.aborted, "Document \(key) changed between two reads of the same transaction.")
        }
        readVersions[key] = version
        return doc.exists ? doc : nil
    }

    /// Buffers a write. A document read earlier gets a precondition on the version read.
    public func write(_ m: Mutation) {
        written.insert(m.key)
        var precondition = m.precondition
        if let v = readVersions[m.key] {
            precondition = v == 0 ? .exists(false) : .updateTime(v)
            if case .patch = m.kind, v == 0, permanentError == nil {
                permanentError = EmberError.invalidArgument("Can't update a document that doesn't exist: \(m.key) was read as missing in this transaction.")
            }
        }
        writes.append(Mutation(key: m.key, kind: m.kind, transforms: m.transforms, precondition: precondition))
    }

    /// The mutations to commit: the writes, plus a verify for each document only read.
    func mutations() -> [Mutation] {
        var out = writes
        for (key, v) in readVersions where !written.contains(key) {
            out.append(Mutation(key: key, kind: .verify, precondition: v == 0 ? .exists(false) : .updateTime(v)))
        }
        return out
    }
}

extension EmberClient {
    /// Runs `body` until its commit succeeds, at most `maxAttempts` times (contention retries).
    /// Refused with `unavailable` while the network is disabled and with `failedPrecondition` once
    /// closed. Blocks the calling thread; do not call from the worker.
    public func runTransaction<T>(maxAttempts: Int = 5, _ body: (TransactionContext) throws -> T) throws -> T {
        if maxAttempts < 1 { throw EmberError.invalidArgument("maxAttempts must be at least 1, got \(maxAttempts).") }
        var lastError = EmberError(.aborted, "The transaction was not attempted.")
        var lastAttemptMicros: Int64 = 0
        for attempt in 0..<maxAttempts {
            if attempt > 0 { TransactionBackoff.pause(beforeRetry: attempt, lastAttemptMicros: lastAttemptMicros) }
            let started = SyncEngine.now()
            if closed { throw EmberError(.failedPrecondition, "The database is closed.") }
            guard isNetworkEnabled else {
                throw EmberError(.unavailable, "Transactions need the backend and the network is disabled.")
            }
            let tx = TransactionContext(client: self)
            let result = try body(tx)
            if let e = tx.permanentError { throw e }
            let ms = tx.mutations()
            if ms.isEmpty { return result }
            if ms.count > MutationBatch.maxOperations {
                throw EmberError.invalidArgument("A transaction writes at most \(MutationBatch.maxOperations) documents, this one writes \(ms.count).")
            }
            let outcome: Result<Int64, EmberError> = try wait(30) { done in
                engine.connection.commitTransaction(ms) { done(.success($0)) }
            }
            switch outcome {
            case .success: return result
            case .failure(let e) where [.aborted, .failedPrecondition, .alreadyExists].contains(e.code):
                lastError = e
                lastAttemptMicros = SyncEngine.now() - started
                continue
            case .failure(let e):
                throw e
            }
        }
        throw EmberError(.aborted, "Transaction failed after \(maxAttempts) attempts because of contention: \(lastError.message)")
    }
}

/// Responsible for: the pause before a transaction retries after losing to contention, growing
/// and jittered as in Firebase JS's `ExponentialBackoff` (factor 1.5, +/-50 %), so clients that
/// collide stop retrying in lockstep and the loser is not beaten again at once. Firebase waits
/// about 1 s, hundreds of round trips; Ember scales the pause to the attempt that just lost: ten
/// times its duration (at least 1 ms), growing with each retry, at most 1 s.
enum TransactionBackoff {
    /// Seconds to wait before retry number `retry` (1 for the first retry).
    static func delay(beforeRetry retry: Int, lastAttemptMicros: Int64) -> Double {
        let base = max(0.001, 10 * Double(lastAttemptMicros) / 1e6) * pow(1.5, Double(retry - 1))
        return min(base * Double.random(in: 0.5...1.5), 1.0)
    }

    static func pause(beforeRetry retry: Int, lastAttemptMicros: Int64) {
        usleep(UInt32(delay(beforeRetry: retry, lastAttemptMicros: lastAttemptMicros) * 1e6))
    }
}
