// Responsible for: the bench's small utilities: a monotonic clock, percentiles, resident
// memory, bounded waits, number formatting and reading a text file (no Foundation).
#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds from CLOCK_MONOTONIC (comparable across threads).
@inline(__always)
func monoNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
}

/// Nearest-rank percentile (p in 0...100) of unsorted samples.
func percentile(_ xs: [Double], _ p: Double) -> Double {
    guard !xs.isEmpty else { return .nan }
    let s = xs.sorted()
    let rank = Int((p / 100 * Double(s.count)).rounded(.up))
    return s[max(0, min(s.count - 1, rank - 1))]
}

/// Resident set size in bytes, from /proc/self/statm (second field, pages).
func residentBytes() -> Int {
    guard let text = readTextFile("/proc/self/statm") else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func readTextFile(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        bytes.append(contentsOf: buf[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Polls `done` until it holds or `seconds` pass: yielding the CPU between polls (the waiter
/// stays runnable: a wake-up is not measured into microsecond figures), or with `sleeping`,
/// sleeping 20 µs between them, for waits of milliseconds on work that needs every CPU (a
/// yielding waiter takes its turns on a CPU the work could use). A `Probe` times its event
/// itself, so neither way adds to the figure.
@discardableResult
func waitUntil(seconds: Double = 5, sleeping: Bool = false, _ done: () -> Bool) -> Bool {
    let deadline = monoNs() + Int64(seconds * 1e9)
    var polls = 0
    var pause = timespec(tv_sec: 0, tv_nsec: 20_000)
    while !done() {
        polls += 1
        if (sleeping || polls & 255 == 0) && monoNs() > deadline { return done() }
        if sleeping { nanosleep(&pause, nil) } else { sched_yield() }
    }
    return true
}

/// `x` with `decimals` digits after the point (no Foundation).
func fmt(_ x: Double, _ decimals: Int = 1) -> String {
    if x.isNaN { return "n/a" }
    if x.isInfinite { return x > 0 ? "inf" : "-inf" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let r = (abs(x) * scale).rounded()
    let whole = Int(r / scale)
    var s = (x < 0 && r != 0 ? "-" : "") + "\(whole)"
    if decimals > 0 {
        let frac = String(Int(r - Double(whole) * scale))
        s += "." + String(repeating: "0", count: decimals - frac.count) + frac
    }
    return s
}

/// An integer with thousands separators: 512340 -> "512,340".
func grouped(_ x: Double) -> String {
    if x.isNaN { return "n/a" }
    let digits = String(Int(x.rounded()))
    var out = ""
    for (i, ch) in digits.reversed().enumerated() {
        if i > 0 && i % 3 == 0 && ch != "-" { out.append(",") }
        out.append(ch)
    }
    return String(out.reversed())
}
