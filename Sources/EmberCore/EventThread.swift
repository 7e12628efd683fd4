import Synchronization
import CEmberThreads
import EmberConcurrency
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: the one thread on which Ember runs user callbacks, one at a time, in the
/// order they were posted. After running out of work it spins before parking, so an event
/// posted soon after another is picked up in well under a microsecond instead of after a
/// futex wake-up (15-50 µs on a small VM). The spin adapts to the stream of events
/// (`nextLevel`, `spin(forLevel:)`): twice the stream's level, the longest recent gap between
/// running out of work and the next post, between 30 and 200 µs. The level follows a longer gap
/// at once and forgets it slowly (1/256 a gap), so a writer that writes again once its previous
/// write is stored still finds the thread awake after the occasional slower write, not only
/// after one as slow as the last; a gap past 200 µs (no stream) halves it, so a few isolated
/// events bring the spin back to 30 µs. (The previous rule, twice the last gap and 30 µs after a
/// longer one, parked after two thirds of the slow writes of a durable query listener's stream;
/// its p99 in `make bench`, 10 runs each: 12.6-58.5 µs, median 14.2, against 14.6-112.7, median
/// 42.5.)
///
/// A writer that raises its local events and then stores the batch in the file (15-30 µs) posts
/// with `posterStaysBusy`. Linux places a woken thread near its waker (the event thread near the
/// writer that woke it, a Python writer waiting for the GIL near the callback that released it),
/// and an event thread on the busy writer's CPU runs only once the writer stops: the event is
/// late by the commit, and the spin, taking that CPU from the writer, lengthens the gap to the
/// next post until the thread parks and is woken onto the same CPU again. Measured (durable query
/// listener, Python, 2 CPUs): a fifth of the events 20 µs late, in bursts of hundreds, while the
/// other CPU stood idle. So such a post first moves a thread that last spun on the poster's CPU
/// to another CPU it may run on (`ember_move_off_cpu`: three system calls, the thread's affinity
/// left as it was). Other posts do not: a poster that blocks soon after (an in-memory write, whose
/// caller then waits for its callback) hands its CPU over sooner than an idle CPU wakes up in a
/// VM, and moving there made the in-memory tails longer.
///
///     let events = EventThread(name: "ember.events")
///     events.post { print("runs on the event thread") }
public final class EventThread: @unchecked Sendable { // items and flags are only reached under `lock`
    private let lock = Lock()
    private let cond = Condition()
    private var items: [() -> Void] = []
    private var sleeping = false
    private var stopping = false
    /// The thread has run its last callback and left its loop (under `lock`; `exitCond` tells).
    private var exited = false
    private let exitCond = Condition()
    private let posted = Atomic<Int>(0)
    /// The CPU the thread last spun on (where it parks and, by default, wakes), -1 before that.
    private let spinCPU = Atomic<Int32>(-1)
    /// The thread's kernel id, for moving it (0 until it runs).
    private let threadId = Atomic<Int32>(0)
    private let moves = Atomic<Int>(0)
    private var thread: pthread_t?
    private let idleDone = Lock()
    /// The spin (ns) before parking after a gap it did not cover, and the longest. (Timed, not a
    /// count of polls: 2,000 polls lasted only ~1.6 µs, so the thread parked between back-to-back
    /// events and each post paid a futex wake.)
    static let baseSpinNanos: Int64 = 30_000, maxSpinNanos: Int64 = 200_000

    /// The stream's level (ns) after an idle gap of `gap` ns (from running out of work to the
    /// next post): the gap when it is longer, else the level less 1/256; a gap longer than the
    /// longest spin means no stream and halves it.
    static func nextLevel(_ level: Int64, afterGap gap: Int64) -> Int64 {
        gap > maxSpinNanos ? level >> 1 : max(gap, level &- level >> 8)
    }

    /// The spin for a stream's level: twice the level, within the bounds.
    static func spin(forLevel level: Int64) -> Int64 { min(maxSpinNanos, max(baseSpinNanos, 2 &* level)) }

    public init(name: String) {
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        pthread_create(&t, nil, { arg in
            let me = Unmanaged<EventThread>.fromOpaque(arg!).takeRetainedValue()
            me.run()
            return nil
        }, box.toOpaque())
        thread = t
    }

    /// Queues `work` to run on the event thread after everything posted before it. Returns false
    /// (and drops `work`) once the thread is stopping. `posterStaysBusy`: the caller goes on
    /// working right after this post (a durable write storing its batch), so the event thread
    /// should not run on the caller's CPU (see the type's comment).
    @discardableResult
    public func post(posterStaysBusy: Bool = false, _ work: @escaping () -> Void) -> Bool {
        if posterStaysBusy { moveOffPosterCPU() }
        lock.lock()
        if stopping { lock.unlock(); return false }
        items.append(work)
        posted.add(1, ordering: .releasing)
        let wake = sleeping
        lock.unlock()
        if wake { cond.signal() }
        return true
    }

    /// How many times a `posterStaysBusy` post found the thread on the poster's CPU and moved it.
    public var movesOffPosterCPU: Int { moves.load(ordering: .relaxed) }

    /// When the thread last spun on the calling thread's CPU (so it is parked there, or waits
    /// there for the caller to yield it), moves it to another CPU it may run on.
    @inline(__always)
    private func moveOffPosterCPU() {
        let spinning = spinCPU.load(ordering: .relaxed)
        guard spinning >= 0, ember_current_cpu() == spinning else { return }
        let tid = threadId.load(ordering: .relaxed)
        if tid > 0 && ember_move_off_cpu(tid, spinning) != 0 { moves.add(1, ordering: .relaxed) }
    }

    /// True when called from the event thread itself (that is, from inside a callback).
    public var isCurrent: Bool {
        guard let t = thread else { return false }
        return pthread_equal(pthread_self(), t) != 0
    }

    /// Runs everything already posted, then stops the thread and waits for it (unless called from
    /// the event thread itself, in which case the thread stops after the current callback). A
    /// second caller, while or after another stops it, waits the same way for the thread to end.
    public func stop() {
        lock.lock()
        if stopping {
            lock.unlock()
            waitUntilExited()
            return
        }
        stopping = true
        lock.unlock()
        cond.signal()
        if !isCurrent, let t = thread { pthread_join(t, nil) } else if let t = thread { pthread_detach(t) }
    }

    /// Once stopping: waits until the thread has run its last callback and left (at once from the
    /// event thread itself, which would otherwise wait for its own end).
    private func waitUntilExited() {
        if isCurrent { return }
        lock.lock()
        while !exited { exitCond.wait(lock) }
        lock.unlock()
    }

    /// Blocks until every callback posted before this call has run (at once from the event
    /// thread). Once the thread is stopping, what was posted before still runs: this waits for
    /// the thread's end.
    public func drain() {
        if isCurrent { return }
        let sem = Semaphore()
        guard post({ sem.signal() }) else { return waitUntilExited() }
        sem.wait()
    }

    /// CLOCK_MONOTONIC in nanoseconds (also the sync engine's clock for storing resume tokens).
    @inline(__always)
    static func monotonicNanos() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }

    private func run() {
        threadId.store(ember_thread_id(), ordering: .relaxed)
        var seen = 0
        var level: Int64 = 0   // the stream's; the spin is `spin(forLevel:)`
        while true {
            lock.lock()
            if items.isEmpty {
                if stopping {
                    exited = true
                    exitCond.broadcast()
                    lock.unlock()
                    return
                }
                lock.unlock()
                var polls = 0
                spinCPU.store(ember_current_cpu(), ordering: .relaxed)
                let idleSince = EventThread.monotonicNanos()
                let spinUntil = idleSince &+ EventThread.spin(forLevel: level)
                while posted.load(ordering: .acquiring) == seen {
                    polls &+= 1
                    if polls & 63 == 0 && EventThread.monotonicNanos() >= spinUntil { break }
                }
                lock.lock()
                while items.isEmpty && !stopping {
                    sleeping = true
                    cond.wait(lock)
                    sleeping = false
                }
                level = EventThread.nextLevel(level, afterGap: EventThread.monotonicNanos() &- idleSince)
            }
            let batch = items
            items.removeAll(keepingCapacity: true)
            seen = posted.load(ordering: .acquiring)
            lock.unlock()
            for work in batch { work() }
        }
    }
}
