import Dispatch

/// Responsible for: a value confined to one serial queue, carried through code that runs
/// elsewhere (a task, another queue's completion) back to that queue. Reading it anywhere else
/// traps (swift-nio's `NIOLoopBound`, for a dispatch queue).
///
///     let me = QueueBound(self, on: queue)
///     Task { let r = await call(); queue.async { me.value.finish(r) } }
public struct QueueBound<Value>: @unchecked Sendable { // the value is only read on `queue`
    public let queue: DispatchQueue
    private let bound: Value

    public init(_ value: Value, on queue: DispatchQueue) {
        self.queue = queue
        self.bound = value
    }

    /// The value; traps off `queue`.
    public var value: Value {
        queue.assertCurrent()
        return bound
    }
}

extension DispatchQueue {
    /// Runs `body` on this queue: work on state confined to it. `body` is carried there as a
    /// `QueueBound`, so it may capture that state without the state claiming to be `Sendable`.
    public func asyncConfined(_ body: @escaping () -> Void) {
        let work = QueueBound(body, on: self)
        async { work.value() }
    }

    /// `asyncConfined` after `deadline`.
    public func asyncAfterConfined(deadline: DispatchTime, _ body: @escaping () -> Void) {
        let work = QueueBound(body, on: self)
        asyncAfter(deadline: deadline) { work.value() }
    }
}

extension DispatchQueue {
    /// `body` as a `@Sendable` function for a completion that is called on this queue (it traps
    /// anywhere else): the way back of a call made from state confined to this queue.
    public func confined<T>(_ body: @escaping (T) -> Void) -> @Sendable (T) -> Void {
        let work = QueueBound(body, on: self)
        return { work.value($0) }
    }
}
