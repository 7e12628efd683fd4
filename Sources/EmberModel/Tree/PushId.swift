#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EmberConcurrency

/// Responsible for: childByAutoId's keys (docs/semantics.md 17, Firebase JS
/// `core/util/NextPushId.ts`): 20 characters of `-0-9A-Z_a-z` (ASCII order), 8 for the millisecond
/// time, most significant first, then 12 random. Within one millisecond (or when the clock steps
/// back) the random part of the previous id is incremented, so ids from one process are strictly
/// increasing.
/// Thread-safe.
///
///     let id = PushId.next()     // "-NxYz...": sorts after every id made before it
public enum PushId {
    public static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    /// The last id's time and random part.
    private struct Last { var time: Int64 = -1; var random = [Int](repeating: 0, count: 12) }
    private static let last = LockedValueBox(Last())

    static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// A new id for the current time.
    public static func next() -> String { next(now: nowMillis()) }

    /// A new id for `now` (ms since 1970); used by tests to pin the time.
    public static func next(now: Int64) -> String {
        let (time, random) = last.withLockedValue { last -> (Int64, [Int]) in
            var time = now
            if time <= last.time {
                time = last.time
                var i = 11
                while i >= 0 && last.random[i] == 63 { last.random[i] = 0; i -= 1 }
                if i >= 0 { last.random[i] += 1 } else { time += 1 }   // 64^12 ids in one ms: borrow the next ms
            } else {
                for i in 0..<12 { last.random[i] = Int.random(in: 0..<64) }
            }
            last.time = time
            return (time, last.random)
        }
        var bytes = [UInt8](repeating: 0, count: 20)
        var t = time
        for i in stride(from: 7, through: 0, by: -1) {
            bytes[i] = alphabet[Int(t % 64)]
            t /= 64
        }
        for i in 0..<12 { bytes[8 + i] = alphabet[random[i]] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The millisecond time encoded in an id's first 8 characters (nil when it is not a push id).
    public static func timestamp(of id: String) -> Int64? {
        let u = Array(id.utf8)
        guard u.count == 20 else { return nil }
        var t: Int64 = 0
        for c in u[0..<8] {
            guard let d = alphabet.firstIndex(of: c) else { return nil }
            t = t * 64 + Int64(d)
        }
        return t
    }
}
