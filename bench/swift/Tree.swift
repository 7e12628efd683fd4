// Responsible for: the Realtime-Database tree's figures (issue 6): push -> childAdded callback
// latency, and an orderByChild limitToLast(100) window over 100,000 children (first result, and
// the engine's work per write while it is live).
// (Writes entering the window are timed to their childAdded, or childChanged when the child was
// already in it.)
import Synchronization
import EmberModel
import EmberCore

struct TreeConfig {
    let pushIterations: Int, pushWarmup: Int
    let windowChildren: Int, windowLimit: Int, windowWrites: Int, firstRuns: Int
    init(quick: Bool) {
        let d = quick ? 10 : 1
        pushIterations = 2_000 / d; pushWarmup = 50 / d
        windowChildren = 100_000 / d; windowLimit = 100; windowWrites = 2_000 / d; firstRuns = quick ? 3 : 9
    }
}

func treePath(_ s: String) -> TreePath { try! TreePath(parsing: s) }

/// Waits until every tree write of `client` is acknowledged (at most `seconds`; `sleeping` or
/// yielding between polls: see `waitUntil`).
func waitForTreeAcks(_ client: EmberClient, seconds: Double = 120, sleeping: Bool = false) throws {
    guard waitUntil(seconds: seconds, sleeping: sleeping, { client.treePendingWriteCount == 0 }) else {
        throw BenchFailure(description: "tree writes not acknowledged within \(seconds) s")
    }
}

/// 5. A childAdded observer on /list; each iteration pushes {seq: n} and waits for its callback.
func measurePushChildAdded(_ cfg: TreeConfig) throws -> Latency {
    let client = EmberClient()
    defer { shutDown(client) }
    let list = treePath("list")
    let probe = Probe(), ready = Probe()
    let (_, valueToken) = try client.treeObserve(list, type: .value) { _ in ready.note(1) }
    let (_, token) = try client.treeObserve(list, type: .childAdded) { e in
        if case .event(_, let snap, _) = e, case .int(let s) = snap.value.child("seq") { probe.note(Int(s)) }
    }
    defer { token.remove(); valueToken.remove() }
    guard ready.waitFor(1) != nil else { throw BenchFailure(description: "the list's first value never came") }
    valueToken.remove()
    var result = Latency()
    for it in 0..<(cfg.pushWarmup + cfg.pushIterations) {
        let seq = it + 1
        let op = TreeWriteOp(path: list.child(PushId.next()), value: .object(TreeObject(["seq": .int(Int64(seq)), "text": .string("message \(seq)")])))
        let t0 = monoNs()
        try client.treeWrite([op])
        let tReturn = monoNs()
        guard let t1 = probe.waitFor(seq) else { result.timeouts += 1; if result.timeouts > 3 { throw BenchFailure(description: "callbacks stopped") }; continue }
        if it >= cfg.pushWarmup {
            result.samplesUs.append(Double(t1 - t0) / 1000)
            result.writeCallUs.append(Double(tReturn - t0) / 1000)
        }
    }
    return result
}

struct WindowResult {
    var firstMs: [Double] = []
    var firstChildAddedMs: [Double] = []
    /// A write's acknowledgement right after the first query at the node (ms).
    var writeAfterFirstMs: Double?
    /// Diagnostic: one pass over the children reading each one's score (the memory-bound floor).
    var scanMs: [Double] = []
    var writeUs: [Double] = []
    var enterUs: [Double] = []
    var windowEvents = 0
}

/// 6. /posts holds `windowChildren` children {score: random, title}; a value observer on
/// orderByChild("score").limitToLast(100) is attached from scratch `firstRuns` times (time to its
/// first callback); then, with child observers on the window, random children get random scores
/// (time of the write call, inside which the window is updated and its events posted), and
/// writes that enter the window are timed to their childAdded callback.
func measureWindow(_ cfg: TreeConfig) throws -> WindowResult {
    let client = EmberClient()
    defer { shutDown(client) }
    let posts = treePath("posts")
    var rng = SystemRandomNumberGenerator()
    var children: [String: TreeValue] = [:]
    children.reserveCapacity(cfg.windowChildren)
    var keys: [String] = []
    for i in 0..<cfg.windowChildren {
        let k = PushId.next()
        keys.append(k)
        children[k] = .object(TreeObject(["score": .int(Int64.random(in: 0..<1_000_000, using: &rng)), "title": .string("post \(i)")]))
    }
    try client.treeWrite([TreeWriteOp(path: posts, value: .object(TreeObject(children)))])
    try waitForTreeAcks(client)
    let query = try TreeQuery().orderBy(.child(treePath("score"))).limit(cfg.windowLimit, .last)
    var result = WindowResult()
    let stored = client.backend.readTree(posts)
    for _ in 0..<5 {
        let t0 = monoNs()
        var best: Int64 = 0
        if case .object(let o) = stored {
            for (_, v) in o.children {
                if case .object(let co) = v, case .int(let s) = co["score"], s > best { best = s }
            }
        }
        result.scanMs.append(Double(monoNs() - t0) / 1e6)
        if best < 0 { print(best) }
    }
    for _ in 0..<cfg.firstRuns {
        let first = Probe(), added = Probe()
        let addedCount = Atomic<Int>(0)
        let t0 = monoNs()
        let (_, token) = try client.treeObserve(posts, query: query, type: .value) { e in
            if case .event(_, let s, _) = e { first.note(s.value.childCount) }
        }
        let (_, addToken) = try client.treeObserve(posts, query: query, type: .childAdded) { _ in
            let n = addedCount.add(1, ordering: .relaxed).newValue
            added.note(n)
        }
        guard let t1 = first.waitFor(cfg.windowLimit, seconds: 30, sleeping: true) else { throw BenchFailure(description: "window's first value missing") }
        guard let t2 = added.waitFor(cfg.windowLimit, seconds: 30, sleeping: true) else { throw BenchFailure(description: "window's childAdded events missing") }
        result.firstMs.append(Double(t1 - t0) / 1e6)
        if result.writeAfterFirstMs == nil {
            // A write right after the first query at the node: before the index was built off
            // the backend's queue, it waited for the build.
            let tw = monoNs()
            try client.treeWrite([TreeWriteOp(path: posts.child(keys[0]).child("score"), value: .int(5))])
            try waitForTreeAcks(client, seconds: 30, sleeping: true)
            result.writeAfterFirstMs = Double(monoNs() - tw) / 1e6
        }
        result.firstChildAddedMs.append(Double(t2 - t0) / 1e6)
        token.remove(); addToken.remove()
        client.events.drain()
        client.backend.flush()
    }
    // Live window: child observers stay attached.
    let events = Atomic<Int>(0)
    let entered = Probe()
    var tokens: [ListenerToken] = []
    for t in [TreeEventType.childAdded, .childRemoved, .childChanged, .childMoved] {
        let (_, tok) = try client.treeObserve(posts, query: query, type: t) { e in
            events.add(1, ordering: .relaxed)
            // (The child may already be in the window: then it is a childChanged.)
            if t == .childAdded || t == .childChanged, case .event(_, let s, _) = e, case .int(let v) = s.value.child("score"), v >= 2_000_000 { entered.note(Int(v)) }
        }
        tokens.append(tok)
    }
    defer { for t in tokens { t.remove() } }
    guard waitUntil(seconds: 30, { events.load(ordering: .relaxed) >= cfg.windowLimit }) else { throw BenchFailure(description: "live window never filled") }
    let before = events.load(ordering: .relaxed)
    for i in 0..<cfg.windowWrites {
        let k = keys[Int.random(in: 0..<keys.count, using: &rng)]
        let op = TreeWriteOp(path: posts.child(k).child("score"), value: .int(Int64.random(in: 0..<1_000_000, using: &rng)))
        let t0 = monoNs()
        try client.treeWrite([op])
        result.writeUs.append(Double(monoNs() - t0) / 1000)
        if i % 10 == 9 {
            // A write that enters the window (the new highest score): timed to its callback.
            let score = 2_000_000 + i
            let op2 = TreeWriteOp(path: posts.child(keys[Int.random(in: 0..<keys.count, using: &rng)]).child("score"), value: .int(Int64(score)))
            let t2 = monoNs()
            try client.treeWrite([op2])
            guard let t3 = entered.waitFor(score) else { throw BenchFailure(description: "window entry callback missing") }
            result.enterUs.append(Double(t3 - t2) / 1000)
        }
    }
    try waitForTreeAcks(client)
    result.windowEvents = events.load(ordering: .relaxed) - before
    return result
}
