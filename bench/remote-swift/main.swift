import EmberConcurrency
import EmberBackend
import EmberCore
import EmberModel
import EmberRemote
import EmberStorage
import Foundation
import Ember

// Responsible for: the Swift client processes of issue 12's benchmarks (bench/remote/README.md)
// and of issue 29's tree modes (Tree.swift, bench/tree-remote),
// driven by bench/remote/bench_remote.py over stdin/stdout, one line per message:
//
//     EmberRemoteBench listen HOST COLLECTION DOC   # prints `ready`, then `cb I LATENCY_NS` per new value
//     EmberRemoteBench write HOST COLLECTION DOC    # prints `ready`; per stdin line `w I`: sets DOC
//                                                  # to {"i": I, "t": CLOCK_MONOTONIC ns just before the call}
//     EmberRemoteBench resume HOST PATH COLLECTION N CHANGES
//     EmberRemoteBench get HOST COLLECTION DOC N     # prints `get_us p50 P p99 Q`: N round trips of
//                                                  # getDocument(source: .server), each waited for
//
// `listen` and `write` use Ember's public API (`FirestoreSettings.host`); the latency is the
// listener callback's CLOCK_MONOTONIC time less the document's `t` (one clock for every process).
// `resume` needs the count of documents the server sent (`RemoteBackend.stats`), which the public
// API does not expose: it builds the same client as `Firestore.open(settings:)` with a host and
// a path does (an `EmberClient` over a `RemoteBackend`, its cache in the SQLite file PATH) from
// the internal modules, and prints `key value` lines (see `resume` below).

func monotonicNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

let outLock = NSLock()
func say(_ line: String) {
    outLock.lock()
    defer { outLock.unlock() }
    FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
}

func fail(_ why: String) -> Never {
    FileHandle.standardError.write("EmberRemoteBench: \(why)\n".data(using: .utf8)!)
    exit(2)
}

/// Waits (at most `seconds`) until `done` holds; exits with status 2 on a timeout.
func waitUntil(_ what: String, seconds: Double = 120, _ done: () -> Bool) {
    let end = Date().addingTimeInterval(seconds)
    while !done() {
        if Date() > end { fail("timed out waiting for \(what)") }
        usleep(1_000)
    }
}

final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ v: T) { stored = v }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return stored }
    func set(_ f: (inout T) -> Void) { lock.lock(); f(&stored); lock.unlock() }
}

func openPublic(_ host: String) -> Firestore {
    let settings = FirestoreSettings()
    settings.host = host
    settings.isSSLEnabled = false
    do { return try Firestore.open(settings: settings) } catch { fail("open: \(error)") }
}

// MARK: write -> listener callback

func listen(host: String, collection: String, doc: String) {
    let db = openPublic(host)
    let synced = Locked(false)
    let last = Locked<Int64>(-1)
    let reg = db.collection(collection).document(doc).addSnapshotListener(includeMetadataChanges: true) { snapshot, error in
        let now = monotonicNs()
        guard let snapshot else { fail("listener error: \(String(describing: error))") }
        if !snapshot.metadata.isFromCache { synced.set { $0 = true } }
        guard let data = snapshot.data(), let i = (data["i"] as? NSNumber)?.int64Value,
              let t = (data["t"] as? NSNumber)?.int64Value, i > last.get() else { return }
        last.set { $0 = i }
        say("cb \(i) \(now - t)")
    }
    waitUntil("the server's first answer", seconds: 60) { synced.get() }
    say("ready")
    while readLine() != nil {}
    reg.remove()
    db.terminate()
}

func write(host: String, collection: String, doc: String) {
    let db = openPublic(host)
    let ref = db.collection(collection).document(doc)
    say("ready")
    while let line = readLine() {
        let parts = line.split(separator: " ")
        guard parts.count == 2, parts[0] == "w", let i = Int64(parts[1]) else { continue }
        let t = monotonicNs()
        ref.setData(["i": i, "t": t])
    }
    db.terminate()
}

// MARK: resume after reconnect

func mkKey(_ collection: String, _ id: String) -> DocumentKey { try! DocumentKey(parsing: "\(collection)/\(id)") }

/// Writes `ms` and waits for the server's acknowledgement (60 s at most).
func written(_ client: EmberClient, _ ms: [Mutation]) {
    let sem = DispatchSemaphore(value: 0)
    let err = Locked<EmberError?>(nil)
    do { try client.write(ms) { e in err.set { $0 = e }; sem.signal() } } catch { fail("write: \(error)") }
    if sem.wait(timeout: .now() + 60) != .success { fail("no acknowledgement in 60 s") }
    if let e = err.get() { fail("write rejected: \(e)") }
}

/// The last snapshot a listener delivered.
final class Latest: @unchecked Sendable {
    let snap = Locked<ViewSnapshot?>(nil)
    func callback(_ e: ListenEvent) {
        switch e {
        case .snapshot(let s): snap.set { $0 = s }
        case .error(let err): fail("listener error: \(err)")
        }
    }
}

/// `resume HOST PATH COLLECTION N CHANGES`: a writer client (memory cache, its own connection)
/// fills COLLECTION with N documents. Client A (durable cache at PATH) listens to the whole
/// collection until its snapshot is current with N documents, then:
///  1. reopen: A is closed; the writer changes CHANGES documents; A is opened again on PATH and
///     listens again until current with the changes: the documents the server sent A's new
///     connection are printed (`reopen_docs`);
///  2. network: the same with A kept open, `disableNetwork()` / `enableNetwork()` instead of
///     closing (`network_docs`, the documents sent after enableNetwork);
///  3. restart: A kept open, the server stopped, the writer's changes queued, the server started
///     again by the driver (`restart_docs`, the documents sent after the driver's `started`).
/// Each `key value` line: first_docs, first_ms, reopen_docs, reopen_ms, network_docs, network_ms,
/// restart_docs, restart_ms (times: to the snapshot current with the changes).
func resume(host: String, path: String, collection: String, n: Int, changes: Int) {
    let address: RemoteAddress
    do { address = try RemoteAddress(parsing: host) } catch { fail("host: \(error)") }
    func remote() -> RemoteBackend {
        do { return try RemoteBackend(address: address) } catch { fail("connect: \(error)") }
    }
    let writerRemote = remote()
    let writer = EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: MemoryPersistence()),
                             documents: writerRemote)
    var i = 0
    while i < n {
        let m = min(500, n - i)
        written(writer, (i..<(i + m)).map { k in
            Mutation(key: mkKey(collection, String(format: "d%05d", k)), kind: .set(MapValue(["k": .int(Int64(k)), "v": .int(0)])))
        })
        i += m
    }
    let query = EmberModel.Query(collection: try! ResourcePath(parsing: collection))
    let options = ListenOptions(includeMetadataChanges: true)
    // The documents changed in round r (1, 2): every (n / changes)-th, shifted by r.
    func changed(_ r: Int) -> [Int] { (0..<changes).map { ($0 * (n / changes) + r) % n } }
    func mutations(round r: Int) -> [Mutation] {
        changed(r).map { k in
            Mutation(key: mkKey(collection, String(format: "d%05d", k)), kind: .set(MapValue(["k": .int(Int64(k)), "v": .int(Int64(r))])))
        }
    }
    func change(_ r: Int) { written(writer, mutations(round: r)) }
    func currentWith(_ latest: Latest, round r: Int) -> Bool {
        guard let s = latest.snap.get(), !s.isFromCache, s.documents.count == n else { return false }
        if r == 0 { return true }
        let want = Set(changed(r).map { String(format: "d%05d", $0) })
        return s.documents.filter { want.contains($0.key.id) && $0.data["v"] == .int(Int64(r)) }.count == changes
    }
    func openA() -> (EmberClient, RemoteBackend, SQLitePersistence) {
        let cache: SQLitePersistence
        do { cache = try SQLitePersistence(path: path) } catch { fail("open \(path): \(error)") }
        let r = remote()
        return (EmberClient(persistence: cache, backend: Backend(persistence: MemoryPersistence()), documents: r), r, cache)
    }
    func ms(since t: Int64) -> String { String(format: "%.1f", Double(monotonicNs() - t) / 1e6) }
    /// Listens with `a` until the result is current with round `round`; reports `<figure>_ms`
    /// and `<figure>_docs` (the documents the server sent so far).
    func listenTimed(_ a: EmberClient, _ r: RemoteBackend, round: Int, _ what: String, figure: String) -> (Latest, ListenerToken) {
        let latest = Latest()
        let t = monotonicNs()
        let token: ListenerToken
        do { token = try a.listen(query, options: options, latest.callback) } catch { fail("listen: \(error)") }
        waitUntil(what) { currentWith(latest, round: round) }
        say("\(figure)_ms \(ms(since: t))")
        say("\(figure)_docs \(r.stats.documentsReceived)")
        return (latest, token)
    }

    // First run: the whole result.
    do {
        let (a, r, cache) = openA()
        let (_, token) = listenTimed(a, r, round: 0, "the first result", figure: "first")
        token.remove()
        a.close()
        r.close()
        cache.close()
    }

    // 1. closed and opened again on the same file.
    change(1)
    do {
        let (a, r, cache) = openA()
        let (latest, token) = listenTimed(a, r, round: 1, "the result after reopening", figure: "reopen")

        // 2. kept open, network off and on.
        let before = r.stats.documentsReceived
        do { try a.disableNetwork() } catch { fail("disableNetwork: \(error)") }
        change(2)
        let t2 = monotonicNs()
        do { try a.enableNetwork() } catch { fail("enableNetwork: \(error)") }
        waitUntil("the result after enableNetwork") { currentWith(latest, round: 2) }
        say("network_ms \(ms(since: t2))")
        say("network_docs \(r.stats.documentsReceived - before)")

        // 3. kept open, the server stopped and started again on the same port and file (by the
        // driver: `restart_wait` out, `stopped` or `skip` in); the writer's changes wait in its
        // queue until the server is back.
        say("restart_wait")
        if readLine() == "stopped" {
            let before = r.stats.documentsReceived
            do { try writer.write(mutations(round: 3)) } catch { fail("write: \(error)") }
            say("changed")
            guard readLine() == "started" else { fail("the driver did not restart the server") }
            let t3 = monotonicNs()
            waitUntil("the result after the server's restart") { currentWith(latest, round: 3) }
            say("restart_ms \(ms(since: t3))")
            say("restart_docs \(r.stats.documentsReceived - before)")
        }
        token.remove()
        a.close()
        r.close()
        cache.close()
    }
    writer.close()
    writerRemote.close()
    say("done")
}

// MARK: one read's round trip

func get(host: String, collection: String, doc: String, n: Int) {
    let db = openPublic(host)
    let ref = db.collection(collection).document(doc)
    let done = Semaphore()
    let failure = LockedValueBox<String?>(nil)
    ref.setData(["v": 1]) { e in if let e { failure.withLockedValue { $0 = "\(e)" } }; done.signal() }
    guard done.wait(seconds: 60), failure.current == nil else { fail("seed: \(failure.current ?? "timed out")") }
    var samples: [Double] = []
    for i in 1...(n + 50) {
        let t0 = monotonicNs()
        ref.getDocument(source: .server) { _, e in if let e { failure.withLockedValue { $0 = "\(e)" } }; done.signal() }
        guard done.wait(seconds: 30), failure.current == nil else { fail("get: \(failure.current ?? "timed out")") }
        if i > 50 { samples.append(Double(monotonicNs() - t0) / 1e3) }
    }
    samples.sort()
    say(String(format: "get_us p50 %.0f p99 %.0f", samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)]))
    db.terminate()
}

let args = CommandLine.arguments
switch (args.count > 1 ? args[1] : "", args.count) {
case ("listen", 5): listen(host: args[2], collection: args[3], doc: args[4])
case ("write", 5): write(host: args[2], collection: args[3], doc: args[4])
case ("get", 6): get(host: args[2], collection: args[3], doc: args[4], n: Int(args[5]) ?? 1000)
case ("resume", 7):
    guard let n = Int(args[5]), let c = Int(args[6]), n > 0, c > 0, c <= n else { fail("N and CHANGES: positive integers, CHANGES <= N") }
    resume(host: args[2], path: args[3], collection: args[4], n: n, changes: c)
case ("tree-listen", 4): treeListen(host: args[2], path: args[3])
case ("tree-push", 4): treePush(host: args[2], path: args[3])
case ("tree-resume", 6):
    guard let n = Int(args[4]), let c = Int(args[5]), n > 0, c > 0 else { fail("N and CHANGES: positive integers") }
    treeResume(host: args[2], path: args[3], n: n, changes: c)
default:
    fail("usage: EmberRemoteBench listen|write HOST COLLECTION DOC | resume HOST PATH COLLECTION N CHANGES"
         + " | tree-listen|tree-push DATABASE_HOST PATH | tree-resume DATABASE_HOST PATH N CHANGES")
}
