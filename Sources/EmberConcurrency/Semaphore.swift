/// Responsible for: a counting semaphore over pthread primitives (ThreadSanitizer understands it).
public final class Semaphore: Sendable {
    private let count = ConditionBox(0)

    public init() {}

    public func signal() { count.update(wakingAll: false) { $0 += 1 } }

    public func wait() { _ = count.wait(until: { $0 > 0 }) { $0 -= 1 } }

    /// Waits at most `seconds`; returns false on timeout.
    public func wait(seconds: Double) -> Bool {
        count.wait(until: { $0 > 0 }, deadline: Deadline(secondsFromNow: seconds)) { $0 -= 1 } != nil
    }
}
