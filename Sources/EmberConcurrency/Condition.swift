#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Responsible for: a pthread condition variable waited on with a given `Lock` held. Timed
/// waits run on the monotonic clock, so a change of the wall clock neither stretches nor cuts
/// them. Its users (`ConditionBox`, the event thread) are the synchronization; it claims no
/// `Sendable` of its own.
public final class Condition {
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        cond = .allocate(capacity: 1)
        Condition.initializeMonotonic(cond)
    }

    /// Initializes `cond` for timed waits on the monotonic clock (`Deadline`'s).
    static func initializeMonotonic(_ cond: UnsafeMutablePointer<pthread_cond_t>) {
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
    }

    /// Waits, `lock` held by the caller (released while waiting, held again on return).
    @inline(__always) public func wait(_ lock: Lock) { pthread_cond_wait(cond, lock.raw) }

    /// Waits until `deadline` at most, `lock` held by the caller. True when woken (the caller
    /// checks its condition again: wake-ups may be spurious); false when the deadline passed
    /// (or the wait failed), after which the caller checks once more and gives up.
    public func wait(_ lock: Lock, until deadline: Deadline) -> Bool {
        var ts = deadline.value
        return pthread_cond_timedwait(cond, lock.raw, &ts) == 0
    }

    @inline(__always) public func signal() { pthread_cond_signal(cond) }
    @inline(__always) public func broadcast() { pthread_cond_broadcast(cond) }
}

/// Responsible for: a point in monotonic time for `Condition`'s timed waits.
public struct Deadline: Sendable {
    let value: timespec

    /// `seconds` from now: NaN and negative values are now; at most about 30 years.
    public init(secondsFromNow seconds: Double) {
        let s = seconds.isNaN ? 0 : min(max(seconds, 0), 1e9)
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let whole = Int(s)
        let ns = Int(ts.tv_nsec) + Int((s - Double(whole)) * 1e9)
        ts.tv_sec += whole + ns / 1_000_000_000
        ts.tv_nsec = ns % 1_000_000_000
        value = ts
    }
}
