/// Responsible for: the pause before a stream is opened again after it failed, as the Firebase
/// SDKs' `ExponentialBackoff`: none the first time after a success, then 1 s growing by 1.5x per
/// failure up to 60 s, each jittered by +/-50 % so clients do not retry in lockstep.
///
///     let seconds = backoff.next()     // after a failure
///     backoff.reset()                  // after a stream opened
struct Backoff {
    var initial = 1.0
    var factor = 1.5
    var maximum = 60.0
    private var base = 0.0

    /// Seconds to wait before the next attempt.
    mutating func next() -> Double {
        let delay = base * Double.random(in: 0.5...1.5)
        base = base == 0 ? initial : min(base * factor, maximum)
        return delay
    }

    mutating func reset() { base = 0 }
}
