// Responsible for: measurement 4, bulk insert throughput through write([Mutation]).
import EmberModel
import EmberCore

struct BulkResult {
    let docs: Int
    let localSeconds: Double, totalSeconds: Double, buildSeconds: Double
    var localRate: Double { Double(docs) / localSeconds }
    var totalRate: Double { Double(docs) / totalSeconds }
    var buildRate: Double { Double(docs) / buildSeconds }
}

/// Builds batch `b` (documents b*size ..< (b+1)*size) of the bulk collection.
func bulkBatch(_ b: Int, size: Int, total: Int) -> [Mutation] {
    let lo = b * size, hi = min(total, lo + size)
    var ms: [Mutation] = []
    ms.reserveCapacity(hi - lo)
    for i in lo..<hi { ms.append(Mutation(key: benchKey("bulk", i), kind: .set(benchDoc(i, seq: i)))) }
    return ms
}

/// 4. `cfg.bulkDocs` new documents in batches of `cfg.bulkBatch`, building each batch inside the
/// timed loop (as the peers include serialization): local part until the last `write` returns,
/// total until `waitForPendingWrites` reports every batch acknowledged.
func measureBulk(_ cfg: Config) throws -> BulkResult {
    let n = cfg.bulkDocs, size = cfg.bulkBatch
    let batches = (n + size - 1) / size
    // The cost of building the mutations alone, for reference.
    let b0 = monoNs()
    var built = 0
    for b in 0..<batches { built += bulkBatch(b, size: size, total: n).count }
    let buildSeconds = Double(monoNs() - b0) / 1e9
    precondition(built == n)

    let client = EmberClient()
    defer { shutDown(client) }
    let t0 = monoNs()
    for b in 0..<batches { try client.write(bulkBatch(b, size: size, total: n)) }
    let t1 = monoNs()
    try waitForAcks(client, seconds: 300)
    let t2 = monoNs()
    let stored = try client.count(Query(collection: ResourcePath(segments: ["bulk"])), timeout: 60)
    guard stored == n else { throw BenchFailure(description: "backend holds \(stored) documents, expected \(n)") }
    return BulkResult(docs: n, localSeconds: Double(t1 - t0) / 1e9, totalSeconds: Double(t2 - t0) / 1e9, buildSeconds: buildSeconds)
}
