#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Responsible for: a value under a lock with a condition, for a thread that waits until the value
/// is ready (a semaphore's count, a listener's start gate). Waiters are woken by `update`. One
/// object and its two pthread primitives (a listener token holds one: it is kept small).
///
///     let open = ConditionBox(false)
///     open.update { $0 = true }                                          // another thread
///     _ = open.wait(until: { $0 }, deadline: Deadline(secondsFromNow: 5)) { _ in }
public final class ConditionBox<Value> {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        Condition.initializeMonotonic(cond)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Changes the value and wakes one waiter, or all of them.
    @discardableResult
    public func update<T>(wakingAll: Bool = true, _ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer {
            pthread_mutex_unlock(mutex)
            if wakingAll { pthread_cond_broadcast(cond) } else { pthread_cond_signal(cond) }
        }
        return try body(&value)
    }

    /// Waits until `ready` holds, then runs `body` under the lock; nil when `deadline` passed first.
    public func wait<T>(until ready: (Value) -> Bool, deadline: Deadline? = nil,
                        then body: (inout Value) throws -> T) rethrows -> T? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) {
            if let deadline {
                var ts = deadline.value
                // Woken (perhaps spuriously): check again; timed out (or failed): a last check.
                if pthread_cond_timedwait(cond, mutex, &ts) != 0 && !ready(value) { return nil }
            } else {
                pthread_cond_wait(cond, mutex)
            }
        }
        return try body(&value)
    }
}

// `value` is only reached under the mutex, so the box is as Sendable as its value.
extension ConditionBox: @unchecked Sendable where Value: Sendable {} // only reached under the mutex
