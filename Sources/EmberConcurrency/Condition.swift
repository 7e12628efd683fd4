#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Responsible for: a pthread condition variable waited on with a given `Lock` held.
public final class Condition: @unchecked Sendable { // pthread_cond_t is thread-safe by contract
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        cond = .allocate(capacity: 1)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
    }

    /// Waits, `lock` held by the caller (released while waiting, held again on return).
    @inline(__always) public func wait(_ lock: Lock) { pthread_cond_wait(cond, lock.raw) }

    /// Waits until `deadline` at most, `lock` held by the caller; false when the deadline passed.
    public func wait(_ lock: Lock, until deadline: Deadline) -> Bool {
        var ts = deadline.value
        return pthread_cond_timedwait(cond, lock.raw, &ts) != ETIMEDOUT
    }

    @inline(__always) public func signal() { pthread_cond_signal(cond) }
    @inline(__always) public func broadcast() { pthread_cond_broadcast(cond) }
}

/// Responsible for: a point in wall-clock time for `Condition`'s timed waits.
public struct Deadline: Sendable {
    fileprivate let value: timespec

    /// `seconds` from now.
    public init(secondsFromNow seconds: Double) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let ns = Int(ts.tv_nsec) + Int(seconds.truncatingRemainder(dividingBy: 1) * 1e9)
        ts.tv_sec += Int(seconds) + ns / 1_000_000_000
        ts.tv_nsec = ns % 1_000_000_000
        value = ts
    }
}
