#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Responsible for: a plain pthread mutex. ThreadSanitizer understands it, where
/// `Synchronization.Mutex` gives false positives. Never held while user code runs, except by a
/// listener token's lock, which exists exactly to wait for a running callback.
///
///     let lock = Lock(); lock.withLock { counter += 1 }
public final class Lock: @unchecked Sendable { // the mutex is the synchronization
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

    /// The mutex, for a `Condition` waiting on it.
    var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }
}
