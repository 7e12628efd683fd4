import Foundation

/// Responsible for: waking one waiting task early: `wait(upTo:)` returns when `ring()` is called
/// or the time is up, whichever comes first; a ring while nobody waits is kept for the next
/// wait (never lost, at most one kept). Any thread. The log's tailer waits on it between polls;
/// a NOTIFY from another instance rings it.
final class Doorbell: @unchecked Sendable { // state under `lock`
    private let lock = NSLock()
    private var rung = false
    private var waiter: CheckedContinuation<Void, Never>?

    func ring() {
        lock.lock()
        if let w = waiter {
            waiter = nil
            lock.unlock()
            w.resume()
        } else {
            rung = true
            lock.unlock()
        }
    }

    /// Returns at the next ring (or at once for one kept), or after `seconds`.
    func wait(upTo seconds: Double) async {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            if !Task.isCancelled { self?.ring() }
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if rung {
                rung = false
                lock.unlock()
                c.resume()
            } else {
                waiter = c
                lock.unlock()
            }
        }
        timer.cancel()
    }
}
