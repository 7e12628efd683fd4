#if canImport(Glibc)
import Glibc
#endif
import EmberConcurrency

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

    private static let handler = LockedValueBox<Handler?>(nil)

    /// Installs `handler` (nil: back to the stderr line).
    public static func setHandler(_ handler: Handler?) {
        self.handler.withLockedValue { $0 = handler }
    }

    /// Tells one storage error (`message` has no prefix and no newline).
    public static func report(_ message: String) {
        if let h = handler.current { return h(message) }
        var line = "ember: storage error: \(message)\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
