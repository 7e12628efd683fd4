/// Responsible for: a value under a lock with a condition, for a thread that waits until the value
/// is ready (a semaphore's count, a gate's state). Waiters are woken by `update`.
public final class ConditionBox<Value> {
    private let lock = Lock()
    private let cond = Condition()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Changes the value and wakes one waiter, or all of them.
    @discardableResult
    public func update<T>(wakingAll: Bool = true, _ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer {
            lock.unlock()
            if wakingAll { cond.broadcast() } else { cond.signal() }
        }
        return try body(&value)
    }

    /// Waits until `ready` holds, then runs `body` under the lock; nil when `deadline` passed first.
    public func wait<T>(until ready: (Value) -> Bool, deadline: Deadline? = nil,
                        then body: (inout Value) throws -> T) rethrows -> T? {
        lock.lock()
        defer { lock.unlock() }
        while !ready(value) {
            if let deadline {
                if !cond.wait(lock, until: deadline) && !ready(value) { return nil }
            } else {
                cond.wait(lock)
            }
        }
        return try body(&value)
    }
}

// `value` is only reached under `lock`, so the box is as Sendable as its value.
extension ConditionBox: @unchecked Sendable where Value: Sendable {} // only reached under `lock`
