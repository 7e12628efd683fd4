// Responsible for: measurement 3, resident memory per document listener.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import EmberModel
import EmberCore

struct MemoryResult {
    let listeners: Int
    let bytesBefore: Int, bytesAfter: Int
    var perListener: Double { Double(bytesAfter - bytesBefore) / Double(listeners) }
}

/// 3. `cfg.listeners` listeners, each on its own existing document. Resident memory is read
/// before attaching and after every initial event arrived and the backend answered every listen.
/// `source` .cache attaches client-side listeners only (no backend target), to split the cost.
func measureListenerMemory(_ cfg: Config, source: ListenOptions.Source = .default) throws -> MemoryResult {
    let client = EmberClient()
    defer { client.close() }
    let n = cfg.listeners
    let collection = "watched"
    try populate(client, collection, count: n)
    let keys = (0..<n).map { benchKey(collection, $0) }
    let queries = keys.map { Query(document: $0) }
    var tokens: [ListenerToken] = []
    tokens.reserveCapacity(n)
    let initial = Atomic<Int>(0)
    let options = ListenOptions(source: source)
    malloc_trim(0)
    let before = residentBytes()
    for q in queries {
        tokens.append(try client.listen(q, options: options) { _ in initial.add(1, ordering: .relaxed) })
    }
    guard waitUntil(seconds: 60, { initial.load(ordering: .relaxed) >= n }) else {
        throw BenchFailure(description: "only \(initial.load(ordering: .relaxed)) of \(n) initial events")
    }
    try syncWithBackend(client, keys[0])
    let after = residentBytes()
    for t in tokens { t.remove() }
    return MemoryResult(listeners: n, bytesBefore: before, bytesAfter: after)
}
