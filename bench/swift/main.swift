// EmberBench: the core's latency, memory and throughput figures against their targets.
// Build: swift build -c release --scratch-path .build-bench --product ember-bench
// Run:   .build-bench/release/ember-bench        (QUICK=1: 10x smaller sizes, a smoke test)
import EmberCore

let quick = getenvString("QUICK") == "1"
let cfg = Config(quick: quick)
print("EmberBench\(quick ? " (QUICK=1: sizes 10x smaller, figures not comparable)" : "")")
var figures: [Figure] = []
var extras: [(String, Double)] = []
var errors: [String] = []

func run(_ name: String, _ body: () throws -> Void) {
    do { try body() } catch {
        print("  \(name) FAILED: \(error)")
        errors.append("\(name): \(error)")
    }
}

// 3 first: the process is still small, so freed memory of earlier runs does not hide growth.
print("\n3. resident memory per document listener (\(cfg.listeners) listeners on distinct existing documents)")
run("listener memory") {
    let m = try measureListenerMemory(cfg)
    let f = Figure(id: "listener_bytes", label: "3. memory per listener", unit: "bytes", value: m.perListener,
                   target: 2048, lowerIsBetter: true, decimals: 0)
    printFigure(f); figures.append(f)
    print("     RSS \(grouped(Double(m.bytesBefore))) -> \(grouped(Double(m.bytesAfter))) bytes")
    let c = try measureListenerMemory(cfg, source: .cache)
    print("     variant, source: .cache (no backend target): \(fmt(c.perListener, 0)) bytes per listener")
    extras.append(("listener_bytes_cache_only", c.perListener))
}

print("\n1. write -> document listener callback (\(cfg.docIterations) iterations after \(cfg.docWarmup) warm-up)")
run("doc listener") {
    let l = try measureDocListener(cfg)
    let p50 = Figure(id: "doc_p50_us", label: "1. doc listener p50", unit: "µs", value: l.p50, target: 5, lowerIsBetter: true, decimals: 1)
    let p99 = Figure(id: "doc_p99_us", label: "1. doc listener p99", unit: "µs", value: l.p99, target: 20, lowerIsBetter: true, decimals: 1)
    printFigure(p50); printFigure(p99); figures += [p50, p99]
    if l.timeouts > 0 { print("     \(l.timeouts) callbacks timed out (5 s)") }
    let q = try measureDocListener(cfg, waitAck: true)
    print("     variant, each ack awaited (untimed) before the next write: p50 \(fmt(q.p50)) µs, p99 \(fmt(q.p99)) µs")
    extras += [("doc_quiet_p50_us", q.p50), ("doc_quiet_p99_us", q.p99)]
}

print("\n2. write -> query listener callback (state == \"CA\": \(cfg.queryDocs / 10) of \(cfg.queryDocs) documents; \(cfg.queryIterations) iterations after \(cfg.queryWarmup) warm-up)")
run("query listener") {
    let l = try measureQueryListener(cfg)
    let p50 = Figure(id: "query_p50_us", label: "2. query listener p50", unit: "µs", value: l.p50, target: 10, lowerIsBetter: true, decimals: 1)
    let p99 = Figure(id: "query_p99_us", label: "2. query listener p99", unit: "µs", value: l.p99, target: nil, lowerIsBetter: true, decimals: 1)
    printFigure(p50); printFigure(p99); figures += [p50, p99]
    if l.timeouts > 0 { print("     \(l.timeouts) callbacks timed out (5 s)") }
    let q = try measureQueryListener(cfg, waitAck: true)
    print("     variant, each ack awaited (untimed) before the next write: p50 \(fmt(q.p50)) µs, p99 \(fmt(q.p99)) µs")
    extras += [("query_quiet_p50_us", q.p50), ("query_quiet_p99_us", q.p99)]
}

print("\n4. bulk insert, \(grouped(Double(cfg.bulkDocs))) documents in batches of \(cfg.bulkBatch) via write([Mutation])")
run("bulk insert") {
    let b = try measureBulk(cfg)
    let total = Figure(id: "bulk_docs_per_s", label: "4. bulk insert, until acknowledged", unit: "docs/s", value: b.totalRate, target: 500_000, lowerIsBetter: false, decimals: 0)
    let local = Figure(id: "bulk_local_docs_per_s", label: "4. bulk insert, local part (last write returned)", unit: "docs/s", value: b.localRate, target: nil, lowerIsBetter: false, decimals: 0)
    printFigure(total); printFigure(local); figures += [total, local]
    print("     total \(fmt(b.totalSeconds * 1000)) ms, local part \(fmt(b.localSeconds * 1000)) ms; building the mutations alone: \(grouped(b.buildRate)) docs/s")
    extras.append(("bulk_build_docs_per_s", b.buildRate))
}

print("\nPeers (peer, Python level, from peers/README.md; ours above are Swift-level):")
if let (path, rows) = loadPeerRows() {
    print("  source: \(path)")
    for r in rows { print("  - \(r.peer): (a) \(r.docListener) µs | (b) \(r.queryListener) µs | (c) \(r.bulk)") }
} else {
    print("  peers/README.md not found (set PEERS_README)")
}

print("\n" + markdownTable(figures))
if !errors.isEmpty { print("errors: \(errors.joined(separator: "; "))") }
var json = "{\"quick\":\(quick)"
for f in figures { json += ",\(jsonString(f.id)):\(jsonNumber(f.value))" }
for (k, v) in extras { json += ",\(jsonString(k)):\(jsonNumber(v))" }
json += ",\"targets_met\":\(figures.allSatisfy { $0.met != false })"
json += ",\"errors\":[\(errors.map(jsonString).joined(separator: ","))]}"
print("RESULT \(json)")
