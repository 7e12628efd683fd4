import EmberConcurrency
import EmberFirestoreProto
import Foundation
import GRPCCore

/// Responsible for: what the scripted server's streams share with the test's thread: the
/// requests received (queues the test waits on), the newest stream of each kind (where the
/// test's messages go), the write requests not acknowledged, and counts. Every field is behind
/// its own lock.
final class ScriptState: @unchecked Sendable {
    /// A message for a stream, or the error that ends it.
    enum Outgoing<M: Sendable>: Sendable {
        case message(M)
        case fail(RPCError)
        case end
    }

    struct Counters {
        /// The expected count each target was last added with (a resume's).
        var expectedCounts: [Int32: Int32] = [:]
        var listenStreams = 0
        var listenOpen = false
        var writeStreams = 0
        var unary: [String] = []
    }

    let listenRequests = WaitQueue<ListenSeen>()
    let writeRequests = WaitQueue<WriteSeen>()
    let listenOut = LockedValueBox<AsyncStream<Outgoing<ListenResponse>>.Continuation?>(nil)
    let writeOut = LockedValueBox<AsyncStream<Outgoing<Google_Firestore_V1_WriteResponse>>.Continuation?>(nil)
    /// Per write request not acknowledged yet: its number of writes.
    let unacked = LockedValueBox<[Int]>([])
    let counters = LockedValueBox(Counters())

    func endAll() {
        listenOut.withLockedValue { _ = $0?.yield(.end) }
        writeOut.withLockedValue { _ = $0?.yield(.end) }
    }
}

/// Responsible for: a queue one thread fills and another waits on, bounded by a timeout.
final class WaitQueue<T: Sendable>: @unchecked Sendable {
    private let box = ConditionBox<[T]>([])

    func put(_ t: T) { box.update { $0.append(t) } }

    func take(timeout: Double) -> T? {
        box.wait(until: { !$0.isEmpty }, deadline: Deadline(secondsFromNow: timeout)) { $0.removeFirst() }
    }

    func drain() -> [T] { box.update { q in defer { q = [] }; return q } }
}
