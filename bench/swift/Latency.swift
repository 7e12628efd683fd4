// Responsible for: measurements 1 and 2, write -> listener callback latency on one document
// and on a 1,000-match query over 10,000 documents.
import EmberModel
import EmberCore

/// How the write loop runs: as specified; awaiting each acknowledgement (untimed) before the
/// next write; or with the network disabled, so no backend traffic runs at all (the local
/// path plus the hand-off to the event thread, for profiling).
enum LatencyMode { case standard, awaitAcks, offline }

struct Latency {
    var samplesUs: [Double] = []
    /// How long the `write` call itself took (the callback may run before it returns).
    var writeCallUs: [Double] = []
    var timeouts = 0
    var p50: Double { percentile(samplesUs, 50) }
    var p99: Double { percentile(samplesUs, 99) }
}

/// Times `iterations` writes (after `warmup`), each from just before `write` until `probe`
/// reports the callback saw its sequence number (`mode` .awaitAcks also awaits each write's
/// acknowledgement, untimed, before the next one, so no backend traffic overlaps the next write).
@inline(never)
func timeWrites(_ client: EmberClient, probe: Probe, iterations: Int, warmup: Int, mode: LatencyMode,
                mutation: (_ iteration: Int, _ seq: Int) -> Mutation) throws -> Latency {
    var result = Latency()
    result.samplesUs.reserveCapacity(iterations)
    var seq = probe.seen.load(ordering: .acquiring)
    for it in 0..<(warmup + iterations) {
        seq += 1
        let m = [mutation(it, seq)]
        let t0 = monoNs()
        try client.write(m)
        let tReturn = monoNs()
        guard let t1 = probe.waitFor(seq) else {
            result.timeouts += 1
            if result.timeouts > 3 { throw BenchFailure(description: "callbacks stopped arriving") }
            continue
        }
        if it >= warmup {
            result.samplesUs.append(Double(t1 - t0) / 1000)
            result.writeCallUs.append(Double(tReturn - t0) / 1000)
        }
        if mode == .awaitAcks { try waitForAcks(client, seconds: 5) }
    }
    return result
}

/// 1. A listener on one document; each write sets its 5 fields with `age` = sequence number.
func measureDocListener(_ cfg: Config, mode: LatencyMode = .standard) throws -> Latency {
    let client = EmberClient()
    defer { shutDown(client) }
    let key = benchKey("single", 0)
    try client.write([Mutation(key: key, kind: .set(benchDoc(0, seq: 0)))])
    try waitForAcks(client)
    let probe = Probe()
    let token = try client.listen(Query(document: key)) { event in
        guard case .snapshot(let snap) = event, let doc = snap.documents.first, let seq = seqOf(doc) else { return }
        probe.note(seq)
    }
    defer { token.remove() }
    guard probe.waitFor(0) != nil else { throw BenchFailure(description: "no initial snapshot") }
    try syncWithBackend(client, key)
    if mode == .offline { try client.disableNetwork() }
    return try timeWrites(client, probe: probe, iterations: cfg.docIterations, warmup: cfg.docWarmup, mode: mode) { _, seq in
        Mutation(key: key, kind: .set(benchDoc(0, seq: seq)))
    }
}

/// 2. `state == "CA"` over `cfg.queryDocs` documents (a tenth match); each write updates one
/// matching document (it stays "CA"), cycling through them; the callback looks for its change.
func measureQueryListener(_ cfg: Config, mode: LatencyMode = .standard) throws -> Latency {
    let client = EmberClient()
    defer { shutDown(client) }
    let collection = "people"
    try populate(client, collection, count: cfg.queryDocs)
    let stateField = try FieldPath(parsing: "state")
    let query = try Query(collection: ResourcePath(segments: [collection]))
        .filter(.field(FieldFilter(field: stateField, op: .equal, value: .string("CA"))))
    let probe = Probe(), initial = Probe()
    var first = true   // event thread only
    let token = try client.listen(query) { event in
        guard case .snapshot(let snap) = event else { return }
        if first { first = false; initial.note(snap.documents.count) }
        for c in snap.changes where c.kind == .modified {
            if let seq = seqOf(c.document) { probe.note(seq) }
        }
    }
    defer { token.remove() }
    guard initial.waitFor(cfg.queryDocs / 10) != nil else {
        throw BenchFailure(description: "initial snapshot missing or not \(cfg.queryDocs / 10) documents")
    }
    try syncWithBackend(client, benchKey(collection, 0))
    if mode == .offline { try client.disableNetwork() }
    probe.seen.store(0, ordering: .releasing)
    let matching = stride(from: 1, to: cfg.queryDocs, by: 10).map { $0 }   // i % 10 == 1 -> "CA"
    return try timeWrites(client, probe: probe, iterations: cfg.queryIterations, warmup: cfg.queryWarmup, mode: mode) { it, seq in
        let i = matching[it % matching.count]
        return Mutation(key: benchKey(collection, i), kind: .set(benchDoc(i, seq: seq, state: "CA")))
    }
}
