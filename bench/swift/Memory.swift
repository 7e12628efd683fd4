// Responsible for: measurement 3, resident memory per document listener.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import EmberModel
import EmberCore

/// glibc's malloc_trim (not exported by the Glibc module): returns free heap pages to the system.
@_silgen_name("malloc_trim") func mallocTrim(_ pad: Int) -> Int32

@_silgen_name("malloc_stats") func mallocStats()

/// Bytes the allocator has handed out and not got back (glibc `malloc_stats`' total "in use
/// bytes", read by sending its stderr report to a temporary file); nil if it cannot be read.
func heapInUseBytes() -> Int? {
    var template = Array("/tmp/ember-bench-heap-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard fd >= 0 else { return nil }
    let path = String(cString: template)
    defer { close(fd); unlink(path) }
    fflush(nil)
    let saved = dup(2)
    dup2(fd, 2)
    mallocStats()
    fflush(nil)
    dup2(saved, 2)
    close(saved)
    guard let text = readTextFile(path) else { return nil }
    let lines = text.split(separator: "\n").filter { $0.contains("in use bytes") }
    guard let last = lines.last, let n = last.split(separator: "=").last.flatMap({ Int($0.trimmingSpaces()) }) else { return nil }
    return n
}

struct MemoryResult {
    let listeners: Int
    let bytesBefore: Int, bytesAfter: Int
    let heapBefore: Int?, heapAfter: Int?
    var perListener: Double { Double(bytesAfter - bytesBefore) / Double(listeners) }
    /// Allocator bytes in use per listener (no page rounding or free-list slack), for diagnosis.
    var heapPerListener: Double? {
        guard let b = heapBefore, let a = heapAfter else { return nil }
        return Double(a - b) / Double(listeners)
    }
}

/// 3. `cfg.listeners` listeners, each on its own existing document. Resident memory is read
/// before attaching and after every initial event arrived and the backend answered every listen.
/// `source` .cache attaches client-side listeners only (no backend target), to split the cost.
func measureListenerMemory(_ cfg: Config, source: ListenOptions.Source = .default) throws -> MemoryResult {
    let client = EmberClient()
    defer { shutDown(client) }
    let n = cfg.listeners
    let collection = "watched"
    try populate(client, collection, count: n)
    let keys = (0..<n).map { benchKey(collection, $0) }
    let queries = keys.map { Query(document: $0) }
    var tokens: [ListenerToken] = []
    tokens.reserveCapacity(n)
    let initial = Atomic<Int>(0)
    let options = ListenOptions(source: source)
    _ = mallocTrim(0)
    let heapBefore = heapInUseBytes()
    let before = residentBytes()
    for q in queries {
        tokens.append(try client.listen(q, options: options) { _ in initial.add(1, ordering: .relaxed) })
    }
    guard waitUntil(seconds: 60, { initial.load(ordering: .relaxed) >= n }) else {
        throw BenchFailure(description: "only \(initial.load(ordering: .relaxed)) of \(n) initial events")
    }
    try syncWithBackend(client, keys[0])
    let after = residentBytes()
    let heapAfter = heapInUseBytes()
    for t in tokens { t.remove() }
    return MemoryResult(listeners: n, bytesBefore: before, bytesAfter: after, heapBefore: heapBefore, heapAfter: heapAfter)
}
