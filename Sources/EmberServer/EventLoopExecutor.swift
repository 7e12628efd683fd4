import NIOCore
import NIOPosix

/// Responsible for: running the server's Swift tasks on its NIO event loops. A call's handler then
/// runs on the loop that read its request and writes its response there, instead of crossing to
/// Swift's cooperative pool and back (two thread hand-offs per call, the largest part of a unary
/// call's time on a small machine: docs/performance.md).
public enum EventLoopExecutor {
    /// Makes NIO's singleton event loop group Swift's global executor. Call it first thing on the
    /// main thread of a process that serves, before any task starts; only `ember serve` does
    /// (a library must not take over its host's executor). Returns whether it took over.
    @discardableResult
    public static func adopt() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
