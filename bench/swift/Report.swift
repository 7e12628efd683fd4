// Responsible for: printing figures beside their targets (bench/targets.json), the markdown table
// and the RESULT line.

/// One reported figure: its value, its target, and whether lower or higher is better.
struct Figure {
    let id: String          // JSON key
    let label: String
    let unit: String
    let value: Double
    let target: Double?
    let lowerIsBetter: Bool
    let decimals: Int
    /// Judged by bench/targets.json, which has no target for it (or could not be read).
    let targetMissing: Bool

    /// A figure judged by its target in bench/targets.json ("swift.<id>"), which also says
    /// whether lower or higher is better.
    init(id: String, label: String, unit: String, value: Double, decimals: Int) {
        let t = BenchTargets.shared.target(id)
        self.id = id; self.label = label; self.unit = unit; self.value = value; self.decimals = decimals
        target = t?.value
        lowerIsBetter = t?.lowerIsBetter ?? true
        targetMissing = t == nil
    }

    /// A figure without a target (a diagnostic printed beside the judged ones).
    init(id: String, label: String, unit: String, value: Double, lowerIsBetter: Bool, decimals: Int) {
        self.id = id; self.label = label; self.unit = unit; self.value = value; self.decimals = decimals
        target = nil
        self.lowerIsBetter = lowerIsBetter
        targetMissing = false
    }

    var met: Bool? {
        guard let t = target, !value.isNaN else { return nil }
        return lowerIsBetter ? value <= t : value >= t
    }
    var valueText: String { unit == "docs/s" ? grouped(value) : fmt(value, decimals) }
    var targetText: String {
        guard let t = target else { return targetMissing ? "n/a" : "-" }
        return (lowerIsBetter ? "<= " : ">= ") + (unit == "docs/s" ? grouped(t) : fmt(t, decimals))
    }
    /// "met" or "MISSED" as bench/benchlib.py says them; "n/a" when the target or the value is
    /// missing; "-" for a figure without a target.
    var verdict: String {
        if let m = met { return m ? "met" : "MISSED" }
        return targetMissing || (target != nil && value.isNaN) ? "n/a" : "-"
    }
}

func printFigure(_ f: Figure) {
    let target = f.target == nil ? f.targetText : "\(f.targetText) \(f.unit)"
    print("  \(f.label): \(f.valueText) \(f.unit)   target \(target)   [\(f.verdict)]")
}

func markdownTable(_ figures: [Figure]) -> String {
    var s = "| measurement | ours | target | verdict |\n|---|---|---|---|\n"
    for f in figures { s += "| \(f.label) | \(f.valueText) \(f.unit) | \(f.targetText) | \(f.verdict) |\n" }
    return s
}

func jsonNumber(_ x: Double) -> String { x.isNaN || x.isInfinite ? "null" : fmt(x, 3) }

func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default:
            if u.value < 0x20 { out += "\\u00" + (u.value < 16 ? "0" : "") + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}

/// Ours beside the peers' (a)/(b)/(c) cells, copied from peers/README.md's results table.
func peerTable(_ figures: [Figure], _ peers: (path: String, rows: [PeerRow])?) -> String {
    func v(_ id: String) -> String { figures.first { $0.id == id }?.valueText ?? "n/a" }
    var s = "| | (a) doc listener p50 / p99 µs | (b) query listener p50 / p99 µs | (c) bulk insert docs/s |\n|---|---|---|---|\n"
    s += "| Ember core (Swift level, this run) | \(v("doc_p50_us")) / \(v("doc_p99_us")) | \(v("query_p50_us")) / \(v("query_p99_us")) | \(v("bulk_docs_per_s")) |\n"
    guard let peers else { return s + "\n(peers/README.md not found: set PEERS_README)\n" }
    for r in peers.rows {
        s += "| \(r.peer) (peer, Python level, from peers/README.md) | \(r.docListener) | \(r.queryListener) | \(r.bulk) |\n"
    }
    return s + "\nPeer cells are copied from \(peers.path); they are measured from Python, ours from Swift.\n"
}
