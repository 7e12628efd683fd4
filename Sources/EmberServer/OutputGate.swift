import EmberFirestoreProto
import EmberModel
import Foundation
import EmberConcurrency
import GRPCCore

/// Responsible for: the output of one response stream (Listen, RunQuery) that its client has
/// not taken yet: the bytes queued for the stream's writer, counted when queued and taken off
/// when a write completes (gRPC's writes wait while the client does not read: HTTP/2 flow
/// control), and when a write last completed. A stream whose queued output stays over
/// `Limits.bound` for `Limits.grace` without a write completing, or over four times the bound
/// for half of that, is ended with RESOURCE_EXHAUSTED: a client that stopped reading cannot make the
/// server hold an unbounded backlog. The count is also kept server-wide (`OutputLedger`); no
/// server-wide budget acts on it yet. A stream ended this way keeps one part of its output
/// inside gRPC's transport, and its status waits behind it, until its client reads or its
/// connection closes.
/// Thread-safe: a stream's queue adds, its writer task takes off.
///
///     try await gate.run { for r in answers { gate.queued(n); try await writer.write(r); gate.written(n) } }
final class OutputGate: Sendable {
    struct Limits: Sendable {
        /// Queued bytes a stream may keep while its client does not read.
        var bound: Int
        /// How long it may stay over `bound` with no write completing.
        var grace: Duration
    }

    let limits: Limits
    private let ledger: OutputLedger
    /// Bytes queued and not written, when a write last completed, where going over the bound is
    /// signalled, and whether the watch ended.
    private struct Gate {
        var pending = 0
        var lastProgress = ContinuousClock.now
        var over: AsyncStream<Void>.Continuation?
        var closed = false
    }
    private let gate: LockedValueBox<Gate>
    private let overSignals: AsyncStream<Void>

    init(limits: Limits, ledger: OutputLedger) {
        self.limits = limits
        self.ledger = ledger
        let (signals, over) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        overSignals = signals
        gate = LockedValueBox(Gate(over: over))
    }

    /// `bytes` more are queued for the writer.
    func queued(_ bytes: Int) {
        let (counted, signal): (Bool, AsyncStream<Void>.Continuation?) = gate.withLockedValue { g in
            // Once closed nothing more is written or counted (the server-wide total stays exact).
            guard !g.closed else { return (false, nil) }
            let wasOver = g.pending > limits.bound
            if g.pending == 0 { g.lastProgress = .now }
            g.pending += bytes
            let isOver = g.pending > limits.bound
            return (true, isOver && !wasOver ? g.over : nil)
        }
        guard counted else { return }
        ledger.add(bytes)
        signal?.yield()
    }

    /// A write of `bytes` completed.
    func written(_ bytes: Int) {
        let taken = gate.withLockedValue { g in
            let taken = min(bytes, g.pending)
            g.pending -= taken
            g.lastProgress = .now
            return taken
        }
        ledger.add(-taken)
    }

    /// Queued bytes not yet written.
    var queuedBytes: Int { gate.withLockedValue { $0.pending } }

    /// Ends the watch; what is still counted leaves the server-wide total.
    func close() {
        let (left, o) = gate.withLockedValue { g in
            defer { g.pending = 0; g.closed = true; g.over = nil }
            return (g.pending, g.over)
        }
        ledger.add(-left)
        o?.finish()
    }

    /// Runs `body` (the stream's writing) beside the watch: returns what `body` returns; throws
    /// RESOURCE_EXHAUSTED (cancelling `body`) when the output stalls over its bound.
    func run(_ body: @escaping @Sendable () async throws -> Void) async throws {
        defer { close() }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await body(); return true }
            group.addTask { try await self.watch(); return false }
            while let bodyEnded = try await group.next() {
                if bodyEnded { close() }
            }
        }
    }

    private func state() -> (closed: Bool, pending: Int, sinceProgress: Duration) {
        gate.withLockedValue { g in (g.closed, g.pending, ContinuousClock.now - g.lastProgress) }
    }

    /// Waits until the output goes over its bound, then checks it every tick until it is back
    /// under (or the gate closes); throws when it stalled too long.
    private func watch() async throws {
        let tick = min(limits.grace / 4, .seconds(1))
        for await _ in overSignals {
            while true {
                let (isClosed, n, since) = state()
                if isClosed { return }
                if n <= limits.bound { break }
                if since >= limits.grace || (n > 4 * limits.bound && since >= limits.grace / 2) {
                    throw RPCError(code: .resourceExhausted, message: "The client is not reading this stream: \(n) bytes of responses are waiting (the bound is \(limits.bound)); the stream is ended")
                }
                try await Task.sleep(for: tick)
            }
        }
    }

    /// The bytes a document's response takes, about: its stored bytes when it was read from a
    /// file, else the size of its values.
    static func estimate(_ d: Document) -> Int {
        64 + DocumentLimits.nameSize(d.key.path) + (d.storedFields?.count ?? estimate(d.data))
    }

    static func estimate(_ m: MapValue) -> Int {
        m.entries.reduce(0) { $0 + $1.key.utf8.count + 2 + estimate($1.value) }
    }

    static func estimate(_ v: Value) -> Int {
        switch v {
        case .string(let s): return s.utf8.count + 2
        case .bytes(let b): return b.count + 2
        case .reference(let k): return DocumentLimits.nameSize(k.path)
        case .array(let a): return a.reduce(2) { $0 + estimate($1) }
        case .map(let m): return 2 + estimate(m)
        default: return 10
        }
    }

    /// The bytes a Listen response takes, about (its documents' sizes plus a small frame).
    static func estimate(_ r: Google_Firestore_V1_ListenResponse) -> Int {
        if case .documentChange(let dc)? = r.responseType { return 64 + dc.document.name.utf8.count + wireEstimate(dc.document.fields) }
        return 64
    }

    static func wireEstimate(_ fields: [Google_Firestore_V1_MapField]) -> Int {
        fields.reduce(0) { $0 + $1.key.utf8.count + 2 + wireEstimate($1.value) }
    }

    static func wireEstimate(_ v: Google_Firestore_V1_Value) -> Int {
        switch v.valueType {
        case .stringValue(let s)?: return s.utf8.count + 2
        case .bytesValue(let b)?: return b.count + 2
        case .referenceValue(let s)?: return s.utf8.count + 2
        case .arrayValue(let a)?: return a.values.reduce(2) { $0 + wireEstimate($1) }
        case .mapValue(let m)?: return 2 + wireEstimate(m.fields)
        default: return 10
        }
    }
}

/// Responsible for: the server-wide total of queued response bytes (every `OutputGate`), for
/// the log and the tests. Thread-safe.
final class OutputLedger: Sendable {
    private let total = LockedValueBox(0)

    func add(_ n: Int) { total.withLockedValue { $0 += n } }
    var queuedBytes: Int { total.current }
}
