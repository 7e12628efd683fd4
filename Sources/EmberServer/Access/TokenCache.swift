import Foundation

/// Responsible for: remembering the tokens that verified, so a client's next call with the same
/// ID token (Firebase's last an hour) skips the signature check and the JSON: keyed by the whole
/// token text (signature included, so no other text can hit an entry), each entry kept until its
/// `exp` (plus the leeway) and checked against the clock at every use. At most `capacity`
/// entries; the oldest goes first. Thread-safe.
final class TokenCache: @unchecked Sendable {
    static let capacity = 4096

    private struct Entry {
        let token: VerifiedToken
        let expires: Double
    }
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var head = 0

    /// The verified token for `text`, if it verified before and has not expired at `now`.
    func token(_ text: String, now: Double) -> VerifiedToken? {
        lock.lock()
        defer { lock.unlock() }
        guard let e = entries[text] else { return nil }
        guard e.expires > now else {
            entries[text] = nil
            return nil
        }
        return e.token
    }

    func remember(_ text: String, _ token: VerifiedToken, expires: Double) {
        lock.lock()
        defer { lock.unlock() }
        if entries[text] == nil {
            if entries.count >= TokenCache.capacity {
                // Evict the oldest still present (entries removed on expiry leave stale names).
                while head < order.count, entries.removeValue(forKey: order[head]) == nil { head += 1 }
                head += 1
                if head > TokenCache.capacity { order.removeFirst(head); head = 0 }
            }
            order.append(text)
        }
        entries[text] = Entry(token: token, expires: expires)
    }
}
