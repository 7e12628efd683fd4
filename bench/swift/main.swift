// EmberBench: the core's latency, memory and throughput figures against their targets.
// Build: swift build -c release --scratch-path .build-bench --product ember-bench
// Run:   .build-bench/release/ember-bench        (from the repository's root: targets from
//        bench/targets.json, or EMBER_BENCH_TARGETS=<file>; QUICK=1: 10x smaller sizes, a smoke test;
//        ONLY=mem,doc,query,bulk,tree,window: a subset; VARIANTS=0: skip the diagnostic variants; for profiling)
import EmberCore

if CommandLine.arguments.count >= 3 && CommandLine.arguments[1] == "open-probe" { openProbe(CommandLine.arguments[2]) }

let quick = getenvString("QUICK") == "1"
let cfg = Config(quick: quick)
print("EmberBench\(quick ? " (QUICK=1: sizes 10x smaller, figures not comparable)" : "")")
print(BenchTargets.shared.summary)   // each judged figure's target comes from bench/targets.json
var figures: [Figure] = []
var extras: [(String, Double)] = []
var errors: [String] = []

/// VARIANTS=0 skips the diagnostic variants.
let variants = getenvString("VARIANTS") != "0"
/// MODE=awaitAcks|offline runs measurements 1 and 2 in that mode only (for profiling).
let mode: LatencyMode = getenvString("MODE") == "awaitAcks" ? .awaitAcks : (getenvString("MODE") == "offline" ? .offline : .standard)
/// ONLY=mem,doc,query,bulk runs a subset (for profiling); default all.
let only = getenvString("ONLY").map { Set($0.split(separator: ",").map(String.init)) }

@MainActor func run(_ name: String, _ body: () throws -> Void) {
    if let o = only, !o.contains(name) { print("  (skipped: ONLY)"); return }
    do { try body() } catch {
        print("  \(name) FAILED: \(error)")
        errors.append("\(name): \(error)")
    }
}

// 3 first: the process is still small, so freed memory of earlier runs does not hide growth.
print("\n3. resident memory per document listener (\(cfg.listeners) listeners on distinct existing documents)")
run("mem") {
    let m = try measureListenerMemory(cfg)
    let f = Figure(id: "listener_bytes", label: "3. memory per listener", unit: "bytes", value: m.perListener, decimals: 0)
    printFigure(f); figures.append(f)
    print("     RSS \(grouped(Double(m.bytesBefore))) -> \(grouped(Double(m.bytesAfter))) bytes")
    if let h = m.heapPerListener {
        print("     malloc in-use bytes per listener (diagnostic, no page/free-list slack): \(fmt(h, 0))")
        extras.append(("listener_heap_bytes", h))
    }
    guard variants else { return }
    let c = try measureListenerMemory(cfg, source: .cache)
    print("     variant, source: .cache (no backend target): \(fmt(c.perListener, 0)) bytes per listener (RSS), \(c.heapPerListener.map { fmt($0, 0) } ?? "n/a") (malloc in use)")
    extras.append(("listener_bytes_cache_only", c.perListener))
}

print("\n1. write -> document listener callback (\(cfg.docIterations) iterations after \(cfg.docWarmup) warm-up)")
run("doc") {
    let l = try measureDocListener(cfg, mode: mode)
    let p50 = Figure(id: "doc_p50_us", label: "1. doc listener p50", unit: "µs", value: l.p50, decimals: 1)
    let p99 = Figure(id: "doc_p99_us", label: "1. doc listener p99", unit: "µs", value: l.p99, decimals: 1)
    printFigure(p50); printFigure(p99); figures += [p50, p99]
    if l.timeouts > 0 { print("     \(l.timeouts) callbacks timed out (5 s)") }
    print("     the write() call alone: p50 \(fmt(percentile(l.writeCallUs, 50))) µs, p99 \(fmt(percentile(l.writeCallUs, 99))) µs")
    extras += [("doc_write_call_p50_us", percentile(l.writeCallUs, 50))]
    guard variants else { return }
    let q = try measureDocListener(cfg, mode: .awaitAcks)
    print("     variant, each ack awaited (untimed) before the next write: p50 \(fmt(q.p50)) µs, p99 \(fmt(q.p99)) µs")
    let o = try measureDocListener(cfg, mode: .offline)
    print("     variant, network disabled (no backend traffic): p50 \(fmt(o.p50)) µs, p99 \(fmt(o.p99)) µs; write() call p50 \(fmt(percentile(o.writeCallUs, 50))) µs")
    extras += [("doc_quiet_p50_us", q.p50), ("doc_quiet_p99_us", q.p99), ("doc_offline_p50_us", o.p50), ("doc_offline_p99_us", o.p99)]
}

print("\n2. write -> query listener callback (state == \"CA\": \(cfg.queryDocs / 10) of \(cfg.queryDocs) documents; \(cfg.queryIterations) iterations after \(cfg.queryWarmup) warm-up)")
run("query") {
    let l = try measureQueryListener(cfg, mode: mode)
    let p50 = Figure(id: "query_p50_us", label: "2. query listener p50", unit: "µs", value: l.p50, decimals: 1)
    let p99 = Figure(id: "query_p99_us", label: "2. query listener p99", unit: "µs", value: l.p99, lowerIsBetter: true, decimals: 1)
    printFigure(p50); printFigure(p99); figures += [p50, p99]
    if l.timeouts > 0 { print("     \(l.timeouts) callbacks timed out (5 s)") }
    print("     the write() call alone: p50 \(fmt(percentile(l.writeCallUs, 50))) µs, p99 \(fmt(percentile(l.writeCallUs, 99))) µs")
    extras += [("query_write_call_p50_us", percentile(l.writeCallUs, 50))]
    guard variants else { return }
    let q = try measureQueryListener(cfg, mode: .awaitAcks)
    print("     variant, each ack awaited (untimed) before the next write: p50 \(fmt(q.p50)) µs, p99 \(fmt(q.p99)) µs")
    let o = try measureQueryListener(cfg, mode: .offline)
    print("     variant, network disabled (no backend traffic): p50 \(fmt(o.p50)) µs, p99 \(fmt(o.p99)) µs; write() call p50 \(fmt(percentile(o.writeCallUs, 50))) µs")
    extras += [("query_quiet_p50_us", q.p50), ("query_quiet_p99_us", q.p99), ("query_offline_p50_us", o.p50), ("query_offline_p99_us", o.p99)]
}

print("\n4. bulk insert, \(grouped(Double(cfg.bulkDocs))) documents in batches of \(cfg.bulkBatch) via write([Mutation])")
run("bulk") {
    let b = try measureBulk(cfg)
    let total = Figure(id: "bulk_docs_per_s", label: "4. bulk insert, until acknowledged", unit: "docs/s", value: b.totalRate, decimals: 0)
    let local = Figure(id: "bulk_local_docs_per_s", label: "4. bulk insert, local part (last write returned)", unit: "docs/s", value: b.localRate, lowerIsBetter: false, decimals: 0)
    printFigure(total); printFigure(local); figures += [total, local]
    print("     total \(fmt(b.totalSeconds * 1000)) ms, local part \(fmt(b.localSeconds * 1000)) ms; building the mutations alone: \(grouped(b.buildRate)) docs/s")
    extras.append(("bulk_build_docs_per_s", b.buildRate))
}

// 5-8: durable storage. The insert and query targets are the Python-level ones (bench/python);
// these are the Swift-level figures beside them.
let pcfg = PersistenceConfig(quick: quick)
print("\n5. open a \(grouped(Double(pcfg.openDocs)))-document database (fresh process; median of 5)")
run("open") {
    let o = try measureOpen(pcfg.openDocs)
    let t = Figure(id: "open_ms", label: "5. open, time", unit: "ms", value: o.ms, decimals: 1)
    let m = Figure(id: "open_rss_mb", label: "5. open, resident", unit: "MB", value: Double(o.rss) / 1_048_576, decimals: 1)
    printFigure(t); printFigure(m); figures += [t, m]
    print("     process before opening: \(fmt(Double(o.baseRss) / 1_048_576)) MB; first document read from cache after opening: \(fmt(o.firstReadMs, 2)) ms")
}

print("\n6. persistent bulk insert, \(grouped(Double(pcfg.bulkDocs))) documents in batches of 500 (durable file, until acknowledged)")
run("pbulk") {
    let b = try measurePersistentBulk(pcfg.bulkDocs)
    let f = Figure(id: "persistent_bulk_docs_per_s", label: "6. persistent bulk insert", unit: "docs/s", value: b.rate, decimals: 0)
    printFigure(f); figures.append(f)
    print("     local part (queued durably, last write returned): \(grouped(b.localRate)) docs/s; peers: SQLite 128-173k/s, PostgreSQL COPY 163-205k/s")
    extras.append(("persistent_bulk_local_docs_per_s", b.localRate))
}

print("\n7. equality query over \(grouped(Double(pcfg.queryDocs))) cached documents returning \(pcfg.queryDocs / 100) (source: cache, median of \(pcfg.queryRuns))")
run("pquery") {
    let r = try measureCachedQuery(pcfg.queryDocs, runs: pcfg.queryRuns)
    let i = Figure(id: "cache_query_indexed_ms", label: "7. cached equality query, with index", unit: "ms", value: r.indexedMs, decimals: 2)
    let s = Figure(id: "cache_query_scan_ms", label: "7. cached equality query, without index", unit: "ms", value: r.scanMs, decimals: 2)
    printFigure(i); printFigure(s); figures += [i, s]
    print("     \(r.returned) documents returned; index used: \(r.indexUsed); peers: SQLite 4.6-5.1 ms indexed, 46-57 ms unindexed")
}

print("\n8. one write durably acknowledged (write -> backend commit in the file -> ack callback; \(pcfg.ackIterations) iterations)")
run("ack") {
    let n = try measureDurableAck(pcfg.ackIterations, synchronous: .normal)
    let p50 = Figure(id: "durable_ack_p50_us", label: "8. durable ack p50 (synchronous=NORMAL)", unit: "µs", value: n.p50, lowerIsBetter: true, decimals: 1)
    let p99 = Figure(id: "durable_ack_p99_us", label: "8. durable ack p99 (synchronous=NORMAL)", unit: "µs", value: n.p99, lowerIsBetter: true, decimals: 1)
    printFigure(p50); printFigure(p99); figures += [p50, p99]
    let f = try measureDurableAck(pcfg.ackIterations / 4, synchronous: .full)
    print("     variant synchronous=FULL (fsync per commit, survives power loss): p50 \(fmt(f.p50)) µs, p99 \(fmt(f.p99)) µs")
    extras += [("durable_ack_full_p50_us", f.p50), ("durable_ack_full_p99_us", f.p99)]
}

let treeCfg = TreeConfig(quick: quick)
print("\n9. tree: push -> childAdded callback (\(treeCfg.pushIterations) pushes after \(treeCfg.pushWarmup) warm-up)")
run("tree") {
    let l = try measurePushChildAdded(treeCfg)
    let p50 = Figure(id: "tree_push_p50_us", label: "9. tree push -> childAdded p50", unit: "µs", value: l.p50, decimals: 1)
    let p99 = Figure(id: "tree_push_p99_us", label: "9. tree push -> childAdded p99", unit: "µs", value: l.p99, lowerIsBetter: true, decimals: 1)
    printFigure(p50); printFigure(p99); figures += [p50, p99]
    print("     the treeWrite() call alone: p50 \(fmt(percentile(l.writeCallUs, 50))) µs, p99 \(fmt(percentile(l.writeCallUs, 99))) µs")
    extras.append(("tree_push_write_call_p50_us", percentile(l.writeCallUs, 50)))
}

print("\n10. tree: orderByChild(score).limitToLast(\(treeCfg.windowLimit)) over \(grouped(Double(treeCfg.windowChildren))) children")
run("window") {
    let w = try measureWindow(treeCfg)
    // The first run is the first limited query ever at the node (a pass over its children); the
    // later ones find the index that pass left (see docs/tree.md, "Limited queries start from a
    // backend index").
    let cold = Figure(id: "tree_window_first_cold_ms", label: "10. window first result, first query at the node", unit: "ms", value: w.firstMs[0], decimals: 2)
    let first = Figure(id: "tree_window_first_ms", label: "10. window first result (value event, median)", unit: "ms", value: percentile(w.firstMs, 50), decimals: 2)
    let live = Figure(id: "tree_window_write_us", label: "10. live window update per write (p50)", unit: "µs", value: percentile(w.writeUs, 50), decimals: 1)
    printFigure(cold); printFigure(first); printFigure(live); figures += [cold, first, live]
    print("     first result runs (ms): \(w.firstMs.map { fmt($0, 2) }.joined(separator: " ")); all \(treeCfg.windowLimit) childAdded delivered: median \(fmt(percentile(w.firstChildAddedMs, 50), 2)) ms")
    if let a = w.writeAfterFirstMs {
        print("     a write right after the first query, until acknowledged (the index is built meanwhile, off the backend's queue): \(fmt(a, 2)) ms")
        extras.append(("tree_window_write_after_first_ms", a))
    }
    print("     diagnostic: a plain loop reading every child's score (a hash lookup per child, no prefetch) takes \(fmt(percentile(w.scanMs, 50), 2)) ms (median of 5)")
    extras.append(("tree_window_scan_ms", percentile(w.scanMs, 50)))
    print("     per write (random child, random score; the window update and its events happen inside the call): p50 \(fmt(percentile(w.writeUs, 50))) µs, p99 \(fmt(percentile(w.writeUs, 99))) µs; \(w.windowEvents) window events in all")
    print("     writes entering the window, write -> childAdded callback: p50 \(fmt(percentile(w.enterUs, 50))) µs, p99 \(fmt(percentile(w.enterUs, 99))) µs")
    extras += [("tree_window_write_p99_us", percentile(w.writeUs, 99)), ("tree_window_enter_p50_us", percentile(w.enterUs, 50)),
               ("tree_window_first_childadded_ms", percentile(w.firstChildAddedMs, 50))]
}

print("\n" + markdownTable(figures))
print(peerTable(figures, loadPeerRows()))
if !errors.isEmpty { print("errors: \(errors.joined(separator: "; "))") }
var json = "{\"quick\":\(quick)"
for f in figures { json += ",\(jsonString(f.id)):\(jsonNumber(f.value))" }
for (k, v) in extras { json += ",\(jsonString(k)):\(jsonNumber(v))" }
json += ",\"targets_met\":\(figures.allSatisfy { $0.met != false })"
json += ",\"errors\":[\(errors.map(jsonString).joined(separator: ","))]}"
print("RESULT \(json)")
