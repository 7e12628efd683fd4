import Foundation
import EmberConcurrency

/// Responsible for: remembering the tokens that verified, so a client's next call with the same
/// ID token (Firebase's last an hour) skips the signature check and the JSON: keyed by the whole
/// token text (signature included, so no other text can hit an entry), each entry kept until its
/// `exp` (plus the leeway) and checked against the clock at every use. At most `capacity`
/// entries; the oldest goes first. Thread-safe.
final class TokenCache: Sendable {
    static let capacity = 4096

    private struct Entry {
        let token: VerifiedToken
        let expires: Double
    }
    /// The entries, and the order they came in (from `head` on).
    private struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
        var head = 0
    }
    private let state = LockedValueBox(State())

    /// The verified token for `text`, if it verified before and has not expired at `now`.
    func token(_ text: String, now: Double) -> VerifiedToken? {
        state.withLockedValue { s in
            guard let e = s.entries[text] else { return nil }
            guard e.expires > now else {
                s.entries[text] = nil
                return nil
            }
            return e.token
        }
    }

    func remember(_ text: String, _ token: VerifiedToken, expires: Double) {
        state.withLockedValue { s in
            if s.entries[text] == nil {
                if s.entries.count >= TokenCache.capacity {
                    // Evict the oldest still present (entries removed on expiry leave stale names).
                    while s.head < s.order.count, s.entries.removeValue(forKey: s.order[s.head]) == nil { s.head += 1 }
                    s.head += 1
                    if s.head > TokenCache.capacity { s.order.removeFirst(s.head); s.head = 0 }
                }
                s.order.append(text)
            }
            s.entries[text] = Entry(token: token, expires: expires)
        }
    }
}
