import EmberConcurrency
import XCTest
import Foundation
import EmberModel
import EmberStorage
import EmberCore

/// kill -9: a writer process (EmberCrashWriter) is killed at random points, many times; after each
/// kill the file must hold every acknowledged batch, every queued batch (applied or still queued),
/// no half-applied batch, and no batch applied twice (the counter equals the applied batches).
final class CrashDurabilityTests: XCTestCase {
    func testKill9AtRandomPointsLosesNothing() throws {
        let writer = buildProductsDirectory().appendingPathComponent("EmberCrashWriter")
        guard FileManager.default.isExecutableFile(atPath: writer.path) else {
            return XCTFail("EmberCrashWriter is not built at \(writer.path): run `swift build --build-tests` first")
        }
        let dir = TempDir("ember-crash")
        let path = dir.file()
        var queued = Set<Int64>(), acked = Set<Int64>()
        var next: Int64 = 1
        let rounds = Int(ProcessInfo.processInfo.environment["EMBER_CRASH_ROUNDS"] ?? "") ?? 15
        for round in 0..<rounds {
            let (q, a, sawOpen) = try runAndKill(writer, path: path, from: next, afterMs: Int.random(in: 30...400))
            XCTAssertTrue(sawOpen, "round \(round): the writer did not open the database")
            queued.formUnion(q)
            acked.formUnion(a)
            next = (queued.max() ?? next) + 1000   // fresh numbers for the next writer
            try check(path, queued: queued, acked: acked, round: round)
            if round == rounds - 1 { print("crash test: \(rounds) kills, \(queued.count) batches queued, \(acked.count) acknowledged") }
        }
        XCTAssertGreaterThan(acked.count, 0, "some batches were acknowledged before the kills")
        // Reopen as a client: queued batches are sent and applied exactly once.
        let client = try EmberClient(options: EmberOptions(path: path))
        let sem = DispatchSemaphore(value: 0)
        try client.waitForPendingWrites { _ in sem.signal() }
        XCTAssertEqual(sem.wait(timeout: .now() + 30), .success)
        client.close()
        let p = try SQLitePersistence(path: path)
        defer { p.close() }
        let (complete, total) = applied(p)
        XCTAssertTrue(queued.isSubset(of: complete), "every queued batch is applied after reopening: missing \(queued.subtracting(complete).sorted().prefix(10))")
        XCTAssertEqual(total, Int64(complete.count), "no batch applied twice")
        XCTAssertTrue(p.mutationQueue.isEmpty)
    }

    /// The same with tree writes (multi-path updates of three children): every acknowledged write
    /// is in the backend's tree, every queued one is there or still in the stored queue, none
    /// is half-applied; after reopening, the queue drains into the tree.
    func testKill9AtRandomPointsLosesNoTreeWrite() throws {
        let writer = buildProductsDirectory().appendingPathComponent("EmberCrashWriter")
        guard FileManager.default.isExecutableFile(atPath: writer.path) else {
            return XCTFail("EmberCrashWriter is not built at \(writer.path): run `swift build --build-tests` first")
        }
        let dir = TempDir("ember-crash-tree")
        let path = dir.file()
        var queued = Set<Int64>(), acked = Set<Int64>()
        var next: Int64 = 1
        let rounds = Int(ProcessInfo.processInfo.environment["EMBER_CRASH_ROUNDS"] ?? "") ?? 12
        for round in 0..<rounds {
            let (q, a, sawOpen) = try runAndKill(writer, path: path, from: next, afterMs: Int.random(in: 30...400), tree: true)
            XCTAssertTrue(sawOpen, "round \(round): the writer did not open the database")
            queued.formUnion(q)
            acked.formUnion(a)
            next = (queued.max() ?? next) + 1000
            let p = try SQLitePersistence(path: path)
            let complete = appliedTree(p)
            var pending = Set<Int64>()
            for (_, ops) in p.clientTree!.pendingWrites() {
                XCTAssertEqual(ops.count, 3, "round \(round): a queued write is whole")
                if case .int(let n) = ops[0].value.child("n") { pending.insert(n) }
            }
            p.close()
            XCTAssertTrue(acked.isSubset(of: complete), "round \(round): acknowledged tree writes lost: \(acked.subtracting(complete).sorted().prefix(10))")
            let lost = queued.subtracting(complete).subtracting(pending)
            XCTAssertTrue(lost.isEmpty, "round \(round): queued tree writes lost: \(lost.sorted().prefix(10))")
            if round == rounds - 1 { print("tree crash test: \(rounds) kills, \(queued.count) writes queued, \(acked.count) acknowledged") }
        }
        XCTAssertGreaterThan(acked.count, 0)
        let client = try EmberClient(options: EmberOptions(path: path))
        for _ in 0..<3000 where client.treePendingWriteCount > 0 { usleep(10_000) }
        XCTAssertEqual(client.treePendingWriteCount, 0)
        client.close()
        let p = try SQLitePersistence(path: path)
        defer { p.close() }
        let complete = appliedTree(p)
        XCTAssertTrue(queued.isSubset(of: complete), "every queued tree write is applied after reopening: missing \(queued.subtracting(complete).sorted().prefix(10))")
        XCTAssertTrue(p.clientTree!.pendingWrites().isEmpty)
    }

    /// Tree writes whose three children the backend holds (fails on a half-applied one).
    private func appliedTree(_ p: SQLitePersistence, file: StaticString = #filePath, line: UInt = #line) -> Set<Int64> {
        var parts: [Int64: Int] = [:]
        for (_, v) in p.backendTree!.read(TreePath(unchecked: ["items"])).object?.children ?? [:] {
            guard case .int(let n) = v.child("n") else { XCTFail("bad item \(v)", file: file, line: line); continue }
            parts[n, default: 0] += 1
        }
        for (n, c) in parts where c != 3 { XCTFail("tree write \(n) is half-applied (\(c) of 3 children)", file: file, line: line) }
        return Set(parts.keys)
    }

    /// Batches whose three documents the backend holds, and the counter (throws on a half batch).
    private func applied(_ p: SQLitePersistence, file: StaticString = #filePath, line: UInt = #line) -> (Set<Int64>, Int64) {
        var parts: [Int64: Int] = [:]
        for d in p.backendDocuments.documents(in: spath("items")) where d.exists {
            guard case .int(let n)? = d.data["n"] else { XCTFail("bad item \(d)", file: file, line: line); continue }
            parts[n, default: 0] += 1
        }
        for (n, c) in parts where c != 3 { XCTFail("batch \(n) is half-applied (\(c) of 3 documents)", file: file, line: line) }
        var total: Int64 = 0
        if let c = p.backendDocuments.get(skey("counters/c")), case .int(let t)? = c.data["total"] { total = t }
        return (Set(parts.keys), total)
    }

    private func check(_ path: String, queued: Set<Int64>, acked: Set<Int64>, round: Int) throws {
        let p = try SQLitePersistence(path: path)
        defer { p.close() }
        let (complete, total) = applied(p)
        var pending = Set<Int64>()
        for b in p.mutationQueue.allBatches() {
            XCTAssertEqual(b.mutations.count, 4, "round \(round): a queued batch is whole")
            if case .set(let d) = b.mutations[0].kind, case .int(let n)? = d["n"] { pending.insert(n) }
        }
        XCTAssertTrue(acked.isSubset(of: complete), "round \(round): acknowledged batches lost: \(acked.subtracting(complete).sorted().prefix(10))")
        let lost = queued.subtracting(complete).subtracting(pending)
        XCTAssertTrue(lost.isEmpty, "round \(round): queued batches lost: \(lost.sorted().prefix(10))")
        XCTAssertEqual(total, Int64(complete.count), "round \(round): the counter counts each applied batch once")
    }

    /// Runs the writer, kills it with SIGKILL `afterMs` after it opened, returns what it reported.
    private func runAndKill(_ exe: URL, path: String, from: Int64, afterMs: Int, tree: Bool = false) throws -> (Set<Int64>, Set<Int64>, Bool) {
        let proc = Process()
        proc.executableURL = exe
        proc.arguments = [path, String(from)] + (tree ? ["tree"] : [])
        let out = Pipe()
        proc.standardOutput = out
        try proc.run()
        let reader = LineCollector(out.fileHandleForReading)
        let deadline = Date().addingTimeInterval(20)
        while !reader.contains("OPEN") && !reader.contains("E ") && Date() < deadline { usleep(2000) }
        usleep(useconds_t(afterMs * 1000))
        kill(proc.processIdentifier, SIGKILL)
        proc.waitUntilExit()
        let lines = reader.finish()
        var q = Set<Int64>(), a = Set<Int64>()
        for l in lines {
            let parts = l.split(separator: " ")
            guard parts.count >= 2, let n = Int64(parts[1]) else { continue }
            if parts[0] == "Q" { q.insert(n) } else if parts[0] == "A" { a.insert(n) }
            else if parts[0] == "R" { XCTFail("a batch was rejected: \(l)") }
        }
        if let e = lines.first(where: { $0.hasPrefix("E ") }) { XCTFail("writer failed: \(e)") }
        return (q, a, lines.contains("OPEN"))
    }
}

/// Reads a pipe's lines on a background thread.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ h: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let d = h.availableData
                if d.isEmpty { break }
                lock.lock(); buffer.append(d); lock.unlock()
            }
            done.signal()
        }
    }

    func contains(_ s: String) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: buffer, as: UTF8.self).contains(s)
    }

    /// Waits for end of file and returns the complete lines.
    func finish() -> [String] {
        done.wait()
        lock.lock(); defer { lock.unlock() }
        var lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()   // the last piece is incomplete (or empty after a final newline)
        return lines
    }
}
