import EmberConcurrency
import NIOCore
import NIOPosix

/// Responsible for: running the server's Swift tasks on its NIO event loops. A call's handler then
/// runs on the loop that read its request and writes its response there, instead of crossing to
/// Swift's cooperative pool and back (two thread hand-offs per call, the largest part of a unary
/// call's time on a small machine: docs/performance.md). The start line says whether it is on
/// (`executor=event-loops`).
public enum EventLoopExecutor {
    private static let adopted = LockedValueBox(false)

    /// Makes NIO's singleton event loop group Swift's global executor. Call it first thing on the
    /// main thread of a process that serves, before any task starts; only `ember serve` does
    /// (a library must not take over its host's executor). Returns whether it took over.
    @discardableResult
    public static func adopt() -> Bool {
        let took = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        if took { adopted.withLockedValue { $0 = true } }
        return took
    }

    /// Whether `adopt()` took over in this process.
    public static var isAdopted: Bool { adopted.current }
}
