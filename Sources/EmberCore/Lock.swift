#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: a plain pthread mutex (ThreadSanitizer understands it; see DEVELOPERS notes on
/// `Synchronization.Mutex` false positives). Never held while user code runs, except by
/// `ListenerToken`, whose lock exists exactly to wait for a running callback.
///
///     let lock = Lock(); lock.withLock { counter += 1 }
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) public func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) public func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }
}
