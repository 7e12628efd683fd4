import Dispatch

extension DispatchQueue {
    /// Traps unless the caller runs on this queue: the first line of every entry point that is
    /// only correct on a serial worker (Firestore's `VerifyIsCurrentQueue`).
    @inline(__always)
    public func assertCurrent() {
        dispatchPrecondition(condition: .onQueue(self))
    }
}
