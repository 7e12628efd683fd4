import EmberConcurrency
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: the contract of a listener's removal. Callbacks for one listener run on the
/// event thread inside `deliver`, under this token's lock; `remove()` from any other thread takes
/// that lock, so when it returns no callback is running and none will start. From inside a
/// callback (on the event thread) it only clears the flag: nothing else can be running. `onGone`
/// runs once, on the event thread, after the last callback has returned: when the listener is
/// removed, ends with an error, or its database closes (if the event thread has already stopped,
/// on the thread that removes the listener).
///
///     let token = ListenerToken(onGone: { free(ctx) }) ; token.remove()
public final class ListenerToken: @unchecked Sendable { // flags are atomics; `onGone` runs once (atomic), the detach action under `detachLock`
    private let callbackLock = Lock()
    private let active = Atomic<Bool>(true)
    private let goneOnce = Atomic<Bool>(false)
    private let events: EventThread
    private var onGone: (() -> Void)?
    private let detachLock = Lock()
    private var detachAction: (() -> Void)?
    private var finished = false
    private let held = Atomic<Bool>(false)
    /// Open unless callbacks are held until the add call returns (the event thread waits on it,
    /// bounded: the add call never waits for the event thread).
    private let gate = ConditionBox(true)

    /// Runs (once) when the token is removed, to detach the listener from the engine. The client
    /// sets it after registering the listener, when the listener may already have ended (an error
    /// posted during registration): then it runs at once.
    var detach: (() -> Void)? {
        get { detachLock.withLock { detachAction } }
        set {
            let runNow: (() -> Void)? = detachLock.withLock {
                if finished { return newValue }
                detachAction = newValue
                return nil
            }
            runNow?()
        }
    }

    public init(events: EventThread, onGone: (() -> Void)? = nil) {
        self.events = events
        self.onGone = onGone
    }

    public var isActive: Bool { active.load(ordering: .acquiring) }

    /// Holds this listener's callbacks until `started()`: the call that adds a listener (from a
    /// thread other than the event thread) returns before its first callback runs, so a callback
    /// can use the token (to remove its own listener) from the very first event.
    public func holdCallbacksUntilStarted() {
        guard !events.isCurrent else { return }
        gate.update { $0 = false }
        held.store(true, ordering: .releasing)
    }

    /// The add call is returning: callbacks held by `holdCallbacksUntilStarted` may run.
    public func started() {
        guard held.exchange(false, ordering: .acquiringAndReleasing) else { return }
        gate.update { $0 = true }
    }

    /// Runs `body` (a user callback) unless the listener was removed. Event thread only.
    func deliver(_ body: () -> Void) {
        if held.load(ordering: .acquiring) { waitForStart() }
        callbackLock.lock()
        if active.load(ordering: .acquiring) { body() }
        callbackLock.unlock()
    }

    /// Delivers a final event (an error) and ends the listener.
    func deliverFinal(_ body: () -> Void) {
        if held.load(ordering: .acquiring) { waitForStart() }
        callbackLock.lock()
        let wasActive = active.exchange(false, ordering: .acquiringAndReleasing)
        if wasActive { body() }
        callbackLock.unlock()
        if wasActive { finish() }
    }

    /// Idempotent. When it returns, the callback is not running and never runs again.
    public func remove() {
        if events.isCurrent {
            guard active.exchange(false, ordering: .acquiringAndReleasing) else { return }
        } else {
            callbackLock.lock()
            let was = active.exchange(false, ordering: .acquiringAndReleasing)
            callbackLock.unlock()
            guard was else { return }
        }
        finish()
    }

    /// Ends the listener because its database is closing (worker thread). It does not wait for a
    /// callback in progress (that callback may be waiting for the worker); `onGone` is posted
    /// behind it, so it still runs after the last callback.
    func end() {
        guard active.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finish()
    }

    /// Returns when the gate is open, or after 5 s.
    private func waitForStart() {
        _ = gate.wait(until: { $0 }, deadline: Deadline(secondsFromNow: 5)) { _ in }
    }

    private func finish() {
        let d: (() -> Void)? = detachLock.withLock {
            finished = true
            defer { detachAction = nil }
            return detachAction
        }
        d?()
        if goneOnce.exchange(true, ordering: .acquiringAndReleasing) { return }
        if let gone = onGone {
            onGone = nil
            // A stopped event thread runs nothing more: no callback of this listener can follow.
            if !events.post(gone) { gone() }
        }
    }
}
