// Responsible for: each figure's target and direction, read from bench/targets.json (the file
// every benchmark of bench/ is judged by; this one's entries are "swift.<figure id>").
// The file is $EMBER_BENCH_TARGETS, else bench/targets.json under the current directory (`make
// bench` runs from the repository's root). A missing file or entry prints an error line and
// leaves the figure's verdict "n/a"; the run goes on.
import Foundation

/// A figure's target: the value to reach and whether the measured value must be at most it.
struct Target: Sendable {
    let value: Double
    let lowerIsBetter: Bool
}

/// The "swift.*" entries of bench/targets.json, read once.
struct BenchTargets: Sendable {
    let path: String
    /// By figure id (without "swift."); nil when the file could not be read.
    let entries: [String: Target]?
    let problem: String?

    static let shared = BenchTargets.load()

    static func load() -> BenchTargets {
        let path = getenvString("EMBER_BENCH_TARGETS") ?? "bench/targets.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            return BenchTargets(path: path, entries: nil, problem: "cannot read \(path) (run from the repository's root or set EMBER_BENCH_TARGETS)")
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["targets"] as? [[String: Any]] else {
            return BenchTargets(path: path, entries: nil, problem: "\(path) is not JSON with a \"targets\" list")
        }
        var entries: [String: Target] = [:]
        for e in list {
            guard let id = e["id"] as? String, id.hasPrefix("swift.") else { continue }
            let value = (e["value"] as? NSNumber)?.doubleValue
            let comparison = e["comparison"] as? String
            guard let value, comparison == "≤" || comparison == "≥" else {
                return BenchTargets(path: path, entries: nil, problem: "\(path): \(id) needs a numeric value and a comparison ≤ or ≥")
            }
            entries[String(id.dropFirst("swift.".count))] = Target(value: value, lowerIsBetter: comparison == "≤")
        }
        return BenchTargets(path: path, entries: entries, problem: nil)
    }

    /// The target of figure `id`, or nil after printing why there is none.
    func target(_ id: String) -> Target? {
        guard let entries else { return nil }   // the file's error was printed at the start
        guard let t = entries[id] else {
            print("  error: no target \"swift.\(id)\" in \(path): verdict n/a")
            return nil
        }
        return t
    }

    /// The line printed at the start of a run.
    var summary: String {
        if let problem { return "error: \(problem): every verdict is n/a" }
        return "targets: \(path) (\(entries?.count ?? 0) swift.* entries)"
    }
}
