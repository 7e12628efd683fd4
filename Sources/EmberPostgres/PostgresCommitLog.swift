import Dispatch
import Foundation
import EmberBackend
import EmberConcurrency
import EmberModel

/// Responsible for: a backend's `CommitLog` on PostgreSQL, so several `ember serve` instances
/// share one order of commits (docs/scale-out.md). At attach it loads the database's snapshot
/// into the backend (a memory store) and remembers the position it is current at; every commit
/// of this backend is then one `PostgresStore.commit` at that commit's time, expecting every
/// document it was computed from to be unchanged; before the backend applies it, every commit
/// before it in the log (other instances') is applied through `Backend.applyLogged`. A tailer
/// applies the others' commits as they come: it polls the log, and a NOTIFY each commit sends
/// (outside its transaction) wakes it early; nothing depends on the NOTIFYs arriving.
/// Positions are applied exactly once, in order: the last one applied is the backend's.
///
///     let log = try await PostgresCommitLog.attach(to: backend, store: store, database: "ember")
public final class PostgresCommitLog: CommitLog, @unchecked Sendable { // state on the backend's queue or in boxes
    private let store: PostgresStore
    private let db: Int32
    /// On the backend's queue (which the backend runs) it is alive; tasks and NOTIFYs reach
    /// it through `live`, which may be gone.
    private unowned let backend: Backend
    private weak var live: Backend?
    /// The last position applied to the backend (written on its queue; read by the tailer).
    private let applied: LockedValueBox<Int64>
    private let tailing = LockedValueBox<Task<Void, Never>?>(nil)
    private let statusBox = LockedValueBox(Status())
    /// The log's floor time (see `resumeFloor`).
    private let floorTime: LockedValueBox<Int64>
    private let trimming = LockedValueBox<Task<Void, Never>?>(nil)
    /// The log's epoch (a resume token's), and the seconds between polls of an idle log.
    public let epoch: Int64
    /// The idle poll when NOTIFY wakes the tailer, and when it does not (an engine without
    /// LISTEN/NOTIFY, or its connection down): correctness never depends on the wake-ups.
    static let pollInterval = 0.02
    static let pollIntervalWithoutWakeUps = 0.002
    private let doorbell = Doorbell()
    private let wakeUps = LockedValueBox(false)
    /// Other logs' doorbells the NOTIFY listener rings too (the tree's), by database id.
    private let otherBells = LockedValueBox<[Int32: Doorbell]>([:])
    private let listening = LockedValueBox<Task<Void, Never>?>(nil)
    /// Whether commits NOTIFY the other instances (set once at attach; off: they poll only).
    private var sendsWakeUps = true
    /// A NOTIFY is being sent, and whether another commit came meanwhile (one more follows).
    private let notifying = LockedValueBox((inFlight: false, again: false))

    private init(store: PostgresStore, db: Int32, backend: Backend, applied: Int64, epoch: Int64, floorTime: Int64) {
        self.floorTime = LockedValueBox(floorTime)
        self.store = store
        self.db = db
        self.backend = backend
        self.live = backend
        self.applied = LockedValueBox(applied)
        self.epoch = epoch
    }

    /// Loads the snapshot of log `database` into `backend`, makes this its commit log, and starts
    /// tailing. Before the backend's first connection. With a `retention` (seconds), the instance
    /// also trims the log of commits older than that, now and then (every instance may: trimming
    /// is idempotent).
    public static func attach(to backend: Backend, store: PostgresStore, database: String,
                              retention: Double? = nil, wakeUps: Bool = true) async throws -> PostgresCommitLog {
        let head = try await store.database(named: database)
        let snapshot = try await store.snapshot(head.db)
        let docs = snapshot.documents.map {
            Document(key: $0.key, storedFields: $0.fields, version: $0.updateTime, createTime: $0.createTime, updateTime: $0.updateTime)
        }
        let log = PostgresCommitLog(store: store, db: head.db, backend: backend, applied: snapshot.head.seq, epoch: snapshot.head.epoch,
                                    floorTime: snapshot.head.floorTime)
        try backend.onQueue {
            try backend.loadLogged(version: snapshot.head.commitTime, documents: docs)
            backend.commitLog = log
        }
        log.sendsWakeUps = wakeUps
        if wakeUps { log.startListening() }
        log.startTailing()
        if let retention { log.startTrimming(retention: retention) }
        return log
    }

    /// The last position applied to the backend.
    public var appliedPosition: Int64 { applied.current }

    /// How the tailer fares (health and metrics).
    public struct Status: Sendable, Equatable {
        /// When the log last answered a read (`DispatchTime` nanoseconds; 0: never).
        public var lastAnswer: UInt64 = DispatchTime.now().uptimeNanoseconds
        /// Reads of the log that failed.
        public var readFailures: Int64 = 0
        /// Commits applied from their NOTIFY's payload, without reading the log.
        public var appliedFromNotices: Int64 = 0
        /// Whether the last read of the log failed (PostgreSQL out of reach until one answers).
        public var lastFailed = false
        /// When the read of the log now waiting began (`DispatchTime` nanoseconds); nil: none.
        public var readingSince: UInt64?
        /// Microseconds between the last commit applied from another instance and its
        /// application here (by the two clocks; the fan-out lag).
        public var lagMicros: Int64 = 0
    }

    public var status: Status { statusBox.current }

    /// False from a failed read of the log until one succeeds (the tailer keeps trying every
    /// 50 ms): commits and reads then fail at once with UNAVAILABLE instead of each waiting out
    /// the operation timeout on the backend's queue.
    /// A read still waiting after `hungAfter` seconds counts as a failure too (a server that
    /// went away without closing its connections, or a pool that cannot connect).
    public var isReachable: Bool {
        let s = statusBox.current
        if s.lastFailed { return false }
        guard let since = s.readingSince else { return true }
        return Double(DispatchTime.now().uptimeNanoseconds &- since) / 1e9 < PostgresCommitLog.hungAfter
    }

    static let hungAfter = 2.0

    static let outOfReach = EmberError(.unavailable, "PostgreSQL is out of reach: nothing was committed; try again")

    /// Seconds since the log last answered.
    public var secondsSinceAnswer: Double {
        Double(DispatchTime.now().uptimeNanoseconds &- statusBox.current.lastAnswer) / 1e9
    }
    /// The log's database id in the store.
    public var databaseId: Int32 { db }

    /// Applies every commit logged so far and returns (tests; not on the backend's queue).
    public func catchUpWaiting() {
        backend.onQueue { catchUp() }
    }

    /// Stops tailing (the store is the caller's to close).
    public func stop() {
        tailing.withLockedValue { $0?.cancel(); $0 = nil }
        trimming.withLockedValue { $0?.cancel(); $0 = nil }
        listening.withLockedValue { $0?.cancel(); $0 = nil }
        doorbell.ring()
    }

    /// The commit time of the newest commit trimmed from the log: a listen resumed from an older
    /// time gets a reset and the whole result (as Firestore answers a token it no longer honours).
    public var resumeFloor: Int64 { floorTime.current }

    // MARK: CommitLog (on the backend's queue)

    public func append(version: Int64, entries: [CommitLogEntry]) -> Result<Void, EmberError> {
        guard isReachable else { return .failure(PostgresCommitLog.outOfReach) }
        let writes = entries.map { e -> PostgresWrite in
            let expect: PostgresWrite.Expectation = e.expectedUpdateTime == 0 ? .absent : .updateTime(e.expectedUpdateTime)
            guard let d = e.document else { return .check(e.key, expect) }
            return PostgresWrite(key: e.key, fields: d.exists ? (d.storedFields ?? ValueMessagePack.encode(.map(d.data))) : nil, expect: expect)
        }
        let store = self.store, db = self.db
        switch PostgresCommitLog.blocking(on: store.executor, { try await store.commit(db, writes, at: version) }) {
        case .failure(let e):
            return .failure(e as? EmberError ?? EmberError(.internal, "\(e)"))
        case .success(let position):
            // Every commit before it first, in order. Should they not be readable now, this one
            // is not applied here either: the tailer applies them all, in order, later, and the
            // writer hears UNAVAILABLE (its commit's outcome unknown, as when a reply is lost).
            if sendsWakeUps {
                // The commit as logged, for the others to apply without reading the log.
                var logged: [LoggedChange] = []
                for (i, w) in writes.enumerated() where !w.checkOnly {
                    logged.append(LoggedChange(seq: position.seq, index: i + 1, key: w.key, fields: w.fields,
                                               createTime: w.fields == nil ? 0 : (entries[i].document?.createTime ?? position.commitTime),
                                               commitTime: position.commitTime))
                }
                notifyOthers(payload: CommitNotice.encode(logged))
            }
            // Nothing logged between this instance's last position and this commit: no read.
            guard position.seq == applied.current + 1 || apply(through: position.seq - 1) else {
                return .failure(EmberError(.unavailable, "The commit was stored, but PostgreSQL did not answer afterwards"))
            }
            // Behind the log's floor, this instance started again from a snapshot that already
            // holds this commit (and maybe later ones): it must not apply it a second time.
            guard applied.current < position.seq else {
                return .failure(EmberError(.unavailable, "The commit was stored; this server started again from a snapshot meanwhile"))
            }
            applied.withLockedValue { $0 = position.seq }
            return .success(())
        }
    }

    public func catchUp() {
        guard isReachable else { return }   // reads are refused meanwhile (the server's gate)
        _ = apply(through: nil)
    }

    /// Applies the log up to `limit` (nil: its head); false when it could not be read.
    private func apply(through limit: Int64?) -> Bool {
        let store = self.store, db = self.db
        while true {
            let from = applied.current
            if let limit, from >= limit { return true }
            noteReading()
            guard case .success(let tail) = PostgresCommitLog.blocking(on: store.executor, { try await store.tail(db, after: from, limit: 2000) }) else {
                noteAnswer(false)
                return false
            }
            noteAnswer(true)
            let changes = tail.changes
            if tail.behindFloor {
                // Trimmed past this instance's position: start again from a snapshot.
                guard resync() else { return false }
                continue
            }
            if changes.isEmpty { return limit == nil }
            applyChanges(changes, through: limit)
        }
    }

    /// Applies the commits of `changes` that come next, in order, up to `limit`. On the queue.
    private func applyChanges(_ changes: [LoggedChange], through limit: Int64?) {
        var i = 0
        while i < changes.count {
            let seq = changes[i].seq
            if let limit, seq > limit { return }
            var docs: [Document] = []
            var j = i
            while j < changes.count && changes[j].seq == seq {
                let c = changes[j]
                docs.append(c.fields.map { Document(key: c.key, storedFields: $0, version: c.commitTime, createTime: c.createTime, updateTime: c.commitTime) }
                            ?? Document.missing(c.key, version: c.commitTime))
                j += 1
            }
            if seq == applied.current + 1 {
                backend.applyLogged(version: changes[i].commitTime, documents: docs)
                applied.withLockedValue { $0 = seq }
                let lag = PostgresCommitLog.wallMicros() - changes[i].commitTime
                statusBox.withLockedValue { $0.lagMicros = max(0, lag) }
            }
            i = j
        }
    }

    /// Replaces the backend's documents with the log's snapshot, announced as one commit at the
    /// snapshot's time (listeners see every difference once): for an instance that fell behind
    /// the log's floor. On the backend's queue; false when the snapshot could not be read.
    private func resync() -> Bool {
        let store = self.store, db = self.db
        noteReading()
        guard case .success(let snapshot) = PostgresCommitLog.blocking(on: store.executor, { try await store.snapshot(db) }) else {
            noteAnswer(false)
            return false
        }
        noteAnswer(true)
        guard snapshot.head.seq > applied.current else { return true }
        let docs = snapshot.documents.map {
            Document(key: $0.key, storedFields: $0.fields, version: $0.updateTime, createTime: $0.createTime, updateTime: $0.updateTime)
        }
        backend.replaceLogged(version: snapshot.head.commitTime, documents: docs)
        applied.withLockedValue { $0 = snapshot.head.seq }
        floorTime.withLockedValue { $0 = max($0, snapshot.head.floorTime) }
        return true
    }

    // MARK: the trimmer

    private func startTrimming(retention: Double) {
        let store = self.store, db = self.db
        let every = min(60, max(0.2, retention / 4))
        let task = Task(executorPreference: PostgresExecutor()) { [weak self] in
            while !Task.isCancelled {
                let before = PostgresCommitLog.wallMicros() - Int64(retention * 1e6)
                if let floor = try? await store.trim(db, before: before) {
                    self?.floorTime.withLockedValue { $0 = max($0, floor.time) }
                }
                try? await Task.sleep(for: .milliseconds(Int64(every * 1000)))
            }
        }
        trimming.withLockedValue { $0 = task }
    }

    // MARK: wake-ups (LISTEN/NOTIFY)

    /// Listens for the other instances' NOTIFYs on a connection of its own and rings the
    /// tailer's doorbell; while it listens, the tailer polls less often. Reconnects after a
    /// second when the connection fails.
    private func startListening() {
        let store = self.store, db = self.db, doorbell = self.doorbell, wakeUps = self.wakeUps, others = self.otherBells
        let task = Task(executorPreference: PostgresExecutor()) {
            while !Task.isCancelled {
                do {
                    try await store.listenForCommits { [weak self] id, payload in
                        if id == nil { wakeUps.withLockedValue { $0 = true } }
                        if id == db, let payload, let changes = CommitNotice.decode(payload), let me = self {
                            me.applyNotice(changes)
                        } else if id == nil || id == db {
                            doorbell.ring()
                        }
                        if let id { others.current[id]?.ring() } else { others.current.values.forEach { $0.ring() } }
                    }
                } catch {}
                wakeUps.withLockedValue { $0 = false }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        listening.withLockedValue { $0 = task }
    }

    /// A commit another instance announced with its NOTIFY: applied at once when it is the
    /// next position; otherwise the tailer reads the log (which holds it too).
    private func applyNotice(_ changes: [LoggedChange]) {
        live?.onQueueAsync { [self] in
            if changes[0].seq == applied.current + 1 {
                applyChanges(changes, through: nil)
                statusBox.withLockedValue { $0.appliedFromNotices += 1 }
            } else {
                doorbell.ring()
            }
        }
    }

    /// Rings `bell` too for every NOTIFY of database `id` (another log sharing this listener).
    func alsoWake(_ id: Int32, _ bell: Doorbell) {
        otherBells.withLockedValue { $0[id] = bell }
    }

    /// The idle poll of a tailer now (longer while NOTIFYs wake it).
    var pollSeconds: Double { wakeUps.current ? PostgresCommitLog.pollInterval : PostgresCommitLog.pollIntervalWithoutWakeUps }

    /// Sends a NOTIFY for this log, off the writer's path; commits made while one is in flight
    /// share the next one.
    private func notifyOthers(payload: String?) {
        let send = notifying.withLockedValue { n -> Bool in
            if n.inFlight { n.again = true; return false }
            n.inFlight = true
            return true
        }
        guard send else { return }
        let store = self.store, db = self.db
        Task(executorPreference: store.executor) { [weak self] in
            var payload = payload
            while true {
                try? await store.notify(db, payload: payload)
                payload = nil   // the commits that came meanwhile: by id only
                let more = self?.notifying.withLockedValue { n -> Bool in
                    if n.again { n.again = false; return true }
                    n.inFlight = false
                    return false
                } ?? false
                if !more { return }
            }
        }
    }

    // MARK: the tailer

    private func startTailing() {
        let store = self.store, db = self.db
        // On a queue of its own: it must not wait for threads of the global executor, which a
        // caller may be holding (blocked on the backend's queue).
        let task = Task(executorPreference: store.executor) { [weak self] in
            while !Task.isCancelled {
                guard let from = self?.applied.current else { return }
                let tail: LogTail
                do {
                    self?.noteReading()
                    tail = try await store.tail(db, after: from, limit: 2000)
                    self?.noteAnswer(true)
                } catch {
                    // Stopped: the read's failure says nothing of PostgreSQL.
                    if Task.isCancelled { self?.noteAnswer(true); return }
                    // Out of reach: try again soon, without spinning; reads and commits fail
                    // with UNAVAILABLE meanwhile, and nothing is skipped when it answers again.
                    self?.noteAnswer(false)
                    try? await Task.sleep(for: .milliseconds(50))
                    continue
                }
                let changes = tail.changes
                if changes.isEmpty && !tail.behindFloor {
                    guard let me = self else { return }
                    await me.doorbell.wait(upTo: me.wakeUps.current ? PostgresCommitLog.pollInterval : PostgresCommitLog.pollIntervalWithoutWakeUps)
                    continue
                }
                guard let me = self else { return }
                guard let backend = me.live else { return }   // the backend is gone
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    backend.onQueueAsync {
                        if tail.behindFloor {
                            // Trimmed before this instance read it: start again from a snapshot.
                            if me.applied.current == from { _ = me.resync() }
                        } else {
                            me.applyChanges(changes, through: nil)
                        }
                        c.resume()
                    }
                }
            }
        }
        tailing.withLockedValue { $0 = task }
    }

    private func noteReading() {
        statusBox.withLockedValue { s in if s.readingSince == nil { s.readingSince = DispatchTime.now().uptimeNanoseconds } }
    }

    private func noteAnswer(_ ok: Bool) {
        statusBox.withLockedValue { s in
            s.readingSince = nil
            if ok { s.lastAnswer = DispatchTime.now().uptimeNanoseconds } else { s.readFailures += 1 }
            s.lastFailed = !ok
        }
    }

    static func wallMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// Waits for an async call from a thread that may block (the backend's queue, never an event
    /// loop): every store call is bounded by its operation timeout.
    static func blocking<T: Sendable>(on executor: PostgresExecutor, _ body: @escaping @Sendable () async throws -> T) -> Result<T, Error> {
        let box = LockedValueBox<Result<T, Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Not on the global executor: in `ember serve` its threads are the event loops, one of
        // which may be waiting for the backend's queue this call blocks.
        Task(executorPreference: executor) {
            do {
                let v = try await body()
                box.withLockedValue { $0 = .success(v) }
            } catch {
                box.withLockedValue { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return box.current!
    }
}
