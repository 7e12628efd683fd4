import Foundation
import EmberConcurrency
import NIOCore

/// Responsible for: how much a connection's writer has given its channel that is not written
/// yet. A peer that stops reading would make the server hold all it is sent; past `limit`
/// bytes unread the channel is closed instead (a REST stream, a realtime connection). Any
/// thread: the writer counts, the channel's completions uncount.
///
///     guard unread.admit(n, closing: channel) else { return }
///     channel.writeAndFlush(data).whenComplete { _ in unread.written(n) }
final class UnreadBound: Sendable {
    static let defaultLimit = 16 << 20

    let limit: Int
    private let pending = LockedValueBox(0)

    init(limit: Int = UnreadBound.defaultLimit) { self.limit = limit }

    /// Counts `n` bytes about to be written; false, with the channel closed and nothing counted,
    /// when they would pass the limit.
    func admit(_ n: Int, closing channel: Channel) -> Bool {
        let over: Bool = pending.withLockedValue { pending in
            if pending + n > limit { return true }
            pending += n
            return false
        }
        if over { channel.close(promise: nil) }
        return !over
    }

    /// `n` admitted bytes were written (or dropped with the channel).
    func written(_ n: Int) { pending.withLockedValue { $0 -= n } }
}
