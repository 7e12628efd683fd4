#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: where storage errors are told (a failed SQLite statement, stored fields that
/// do not decode). By default one line `ember: storage error: <message>` on stderr, as the
/// embedded library always printed; a program with its own log (`ember serve`'s key=value lines)
/// installs a handler before it opens any store. Thread-safe; the handler runs on the thread
/// that met the error, inside the store's lock (often on the backend's queue): it must return
/// quickly and never call back into the store.
///
///     StorageErrorLog.setHandler { message in logger.error("storage error", metadata: ["error": "\(message)"]) }
public enum StorageErrorLog {
    public typealias Handler = @Sendable (String) -> Void

    private static var handler: Handler?
    private static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()

    /// Installs `handler` (nil: back to the stderr line).
    public static func setHandler(_ handler: Handler?) {
        pthread_mutex_lock(mutex)
        self.handler = handler
        pthread_mutex_unlock(mutex)
    }

    /// Tells one storage error (`message` has no prefix and no newline).
    public static func report(_ message: String) {
        pthread_mutex_lock(mutex)
        let h = handler
        pthread_mutex_unlock(mutex)
        if let h { return h(message) }
        var line = "ember: storage error: \(message)\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
