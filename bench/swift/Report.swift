// Responsible for: printing figures beside their targets, the markdown table and the RESULT line.

/// One reported figure: its value, its target, and whether lower or higher is better.
struct Figure {
    let id: String          // JSON key
    let label: String
    let unit: String
    let value: Double
    let target: Double?
    let lowerIsBetter: Bool
    let decimals: Int

    var met: Bool? {
        guard let t = target, !value.isNaN else { return nil }
        return lowerIsBetter ? value <= t : value >= t
    }
    var valueText: String { unit == "docs/s" ? grouped(value) : fmt(value, decimals) }
    var targetText: String {
        guard let t = target else { return "-" }
        return (lowerIsBetter ? "<= " : ">= ") + (unit == "docs/s" ? grouped(t) : fmt(t, decimals))
    }
    var verdict: String { met.map { $0 ? "met" : "MISSED" } ?? "-" }
}

func printFigure(_ f: Figure) {
    print("  \(f.label): \(f.valueText) \(f.unit)   target \(f.targetText) \(f.unit)   [\(f.verdict)]")
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
