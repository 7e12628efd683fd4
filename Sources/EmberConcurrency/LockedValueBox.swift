/// Responsible for: a value reached only under its own `Lock`, so a type whose mutable state
/// lives in one is `Sendable` as checked by the compiler, not by a promise.
///
///     let count = LockedValueBox(0)
///     count.withLockedValue { $0 += 1 }
public final class LockedValueBox<Value> {
    private let lock = Lock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    @inline(__always)
    public func withLockedValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    public var current: Value { withLockedValue { $0 } }
}

// `value` is only reached under `lock`, so the box is as Sendable as its value.
extension LockedValueBox: @unchecked Sendable where Value: Sendable {} // only reached under `lock`
