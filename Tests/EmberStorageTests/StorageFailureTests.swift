import EmberConcurrency
import XCTest
import Foundation
import Dispatch
import EmberModel
@testable import EmberStorage
import EmberBackend
import EmberCore

/// Storage failures (issue 10, item 1): a transaction that cannot be stored throws its error and
/// leaves nothing behind (in the file or in what the stores cache of it), the connection works
/// again once the cause is gone, and through a client every write either fails visibly or is in
/// the file. The full disk is SQLite's own limit (`PRAGMA max_page_count`: statements past it fail
/// with SQLITE_FULL), so the test needs no privileges; the Python suite adds a real 2 MiB tmpfs and
/// an LD_PRELOAD shim failing write/fsync (bindings/python/tests/test_storage_faults.py).
final class StorageFailureTests: XCTestCase {
    /// Caps the file at its current size plus `extraPages` pages (nil: no cap).
    func limit(_ p: SQLitePersistence, extraPages: Int64?) throws {
        try p.lock.withLock {
            let count = try p.db.scalarInt("PRAGMA page_count") ?? 0
            try p.db.exec("PRAGMA max_page_count=\(extraPages.map { count + $0 } ?? 4_294_967_294)")
        }
    }

    func big(_ i: Int) -> [String: Value] { ["i": .int(Int64(i)), "pad": .string(String(repeating: "x", count: 8000))] }

    func testFailedTransactionThrowsRollsBackAndRecovers() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        try p.runTransaction("first") { p.remoteDocuments.put(sdoc("kept/a", ["v": .int(1)])) }
        try limit(p, extraPages: 4)
        // A new collection's first document, then more than the disk holds: nothing of it stays.
        XCTAssertThrowsError(try p.runTransaction("too big") {
            p.remoteDocuments.put(sdoc("x/1/items/a", ["v": .int(1)]))
            for i in 0..<20 { p.remoteDocuments.put(sdoc("big/\(i)", big(i))) }
        }) { XCTAssertEqual(errorCode($0), .resourceExhausted, "\($0)") }
        XCTAssertNil(p.remoteDocuments.get(skey("x/1/items/a")))
        XCTAssertNil(p.remoteDocuments.get(skey("big/0")))
        XCTAssertEqual(p.remoteDocuments.get(skey("kept/a"))?.data["v"], .int(1))
        // Later transactions keep failing while the disk is full...
        XCTAssertThrowsError(try p.runTransaction("still full") {
            for i in 0..<20 { p.remoteDocuments.put(sdoc("big/\(i)", big(i))) }
        }) { XCTAssertEqual(errorCode($0), .resourceExhausted, "\($0)") }
        // ...and succeed once space returns, on the same connection.
        try limit(p, extraPages: nil)
        try p.runTransaction("room again") {
            p.remoteDocuments.put(sdoc("x/1/items/b", ["v": .int(2)]))
            for i in 0..<20 { p.remoteDocuments.put(sdoc("big/\(i)", big(i))) }
        }
        // The rolled-back transaction's collection row is not assumed present: a group scan finds it.
        XCTAssertEqual(p.remoteDocuments.documents(inGroup: "items").map { $0.key.path.canonical }, ["x/1/items/b"])
        XCTAssertEqual(p.remoteDocuments.get(skey("big/19"))?.data["i"], .int(19))
    }

    func testRemovedFileRefusesTransactions() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        try p.runTransaction("first") { p.remoteDocuments.put(sdoc("c/a", ["v": .int(1)])) }
        XCTAssertEqual(unlink(dir.file()), 0)
        XCTAssertThrowsError(try p.runTransaction("after removal") { p.remoteDocuments.put(sdoc("c/b", ["v": .int(1)])) }) {
            XCTAssertEqual(errorCode($0), .dataLoss, "\($0)")
        }
    }

    /// Through a client on a durable file: a write the queue cannot store is refused by the call
    /// (nothing applied, no event); acknowledged writes stay; writes work again once space returns;
    /// after reopening, exactly the acknowledged writes are there.
    func testClientWritesFailVisiblyAndAcknowledgedOnesSurvive() throws {
        try clientWritesFailVisibly(sharedDocuments: false)
    }

    /// The same for the embedded default (the cache is the backend's table; each write is
    /// committed by the call, and one the file cannot store is refused by it; a listener may have
    /// seen it as a pending write, then sees it removed).
    func testEmbeddedDefaultWritesFailVisiblyAndAcknowledgedOnesSurvive() throws {
        try clientWritesFailVisibly(sharedDocuments: true)
    }

    private func clientWritesFailVisibly(sharedDocuments: Bool) throws {
        let dir = TempDir()
        let path = dir.file()
        var outcomes: [Int: ErrorCode?] = [:]
        do {
            let p = try SQLitePersistence(path: path, sharedDocuments: sharedDocuments)
            let client = EmberClient(persistence: p, backend: Backend(persistence: p))
            let events = EventLog()
            let token = try client.listen(try Query(collection: spath("docs"))) { e in
                if case .snapshot(let s) = e { events.add(s.changes.map { "\($0.kind) \($0.document.key.id)" }) }
            }
            func write(_ i: Int) -> ErrorCode? {
                let done = DispatchSemaphore(value: 0)
                var result: ErrorCode?? = nil
                do {
                    try client.write([Mutation(key: skey("docs/d\(i)"), kind: .set(MapValue(big(i))))]) { e in
                        result = .some(e?.code); done.signal()
                    }
                } catch { return errorCode(error) ?? .unknown }
                XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
                return result ?? .unknown
            }
            for i in 0..<5 { outcomes[i] = write(i) }
            try limit(p, extraPages: 3)
            for i in 5..<15 { outcomes[i] = write(i) }
            try limit(p, extraPages: nil)
            for i in 15..<20 { outcomes[i] = write(i) }
            let seen = events.all.joined(separator: ",")
            token.remove()
            client.close()
            p.close()   // the client does not own a persistence it was given
            let refused = (5..<15).filter { outcomes[$0]! != nil }
            XCTAssertGreaterThan(refused.count, 5, "10 writes of 8 KB cannot fit in 3 more pages")
            for i in 0..<20 {
                guard let code = outcomes[i]! else { continue }
                XCTAssertTrue(i >= 5 && i < 15, "write \(i) failed with \(code) after space returned")
                XCTAssertEqual(code, .resourceExhausted, "write \(i)")
                let lines = seen.split(separator: ",").map(String.init)
                if sharedDocuments {
                    // Raised first (a listener watches it), then rolled back: the last word is its removal.
                    XCTAssertEqual(lines.last { $0.hasSuffix(" d\(i)") }.map { $0.hasPrefix("removed") } ?? true, true,
                                   "the refused write \(i) was not rolled back: \(seen)")
                } else {
                    XCTAssertFalse(lines.contains("added d\(i)"), "the refused write \(i) raised an event: \(seen)")
                }
            }
        }
        let p = try SQLitePersistence(path: path)
        defer { p.close() }
        for i in 0..<20 {
            let stored = p.backendDocuments.get(skey("docs/d\(i)"))
            if outcomes[i]! == nil { XCTAssertEqual(stored?.data["i"], .int(Int64(i)), "acknowledged write \(i) lost") }
            else { XCTAssertNil(stored, "refused write \(i) stored") }
        }
        XCTAssertTrue(p.mutationQueue.isEmpty)
    }

    /// The embedded default: a batch queued offline that the file cannot take when it is sent is
    /// kept queued, not refused (its completion waits, the batch stays in the queue); once space
    /// returns the scheduled retry sends it, and after reopening every write is in the file.
    func testQueuedBatchTheFileCannotTakeStaysQueued() throws {
        let dir = TempDir()
        let path = dir.file()
        let p = try SQLitePersistence(path: path, sharedDocuments: true)
        let client = EmberClient(persistence: p, backend: Backend(persistence: p))
        try client.disableNetwork()
        let lock = NSLock()
        var results: [Int: ErrorCode?] = [:]
        let answered = DispatchSemaphore(value: 0)
        for i in 0..<3 {
            try client.write([Mutation(key: skey("q/d\(i)"), kind: .set(MapValue(big(i))))]) { e in
                lock.lock(); results[i] = .some(e?.code); lock.unlock()
                answered.signal()
            }
        }
        try limit(p, extraPages: 1)
        try client.enableNetwork()
        XCTAssertEqual(answered.wait(timeout: .now() + 0.5), .timedOut,
                       "a queued batch was answered while the file was full: \(lock.withLock { results })")
        XCTAssertFalse(p.mutationQueue.isEmpty, "the batches stay queued")
        try limit(p, extraPages: nil)
        for _ in 0..<3 { XCTAssertEqual(answered.wait(timeout: .now() + 10), .success, "sent again once space returned") }
        let got = lock.withLock { results }
        for i in 0..<3 { XCTAssertEqual(got[i], .some(nil), "write \(i): \(String(describing: got[i]))") }
        client.close()
        p.close()
        let q = try SQLitePersistence(path: path)
        defer { q.close() }
        for i in 0..<3 { XCTAssertEqual(q.backendDocuments.get(skey("q/d\(i)"))?.data["i"], .int(Int64(i)), "write \(i) lost") }
        XCTAssertTrue(q.mutationQueue.isEmpty)
    }

    /// A queued batch the file will never take (here the file was removed: data loss) is not
    /// retried for ever: its write fails with the cause.
    func testQueuedBatchAFileThatIsGoneRefusesFails() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { p.close() }
        let client = EmberClient(persistence: p, backend: Backend(persistence: p))
        defer { client.close() }
        try client.disableNetwork()
        let lock = NSLock()
        var result: ErrorCode?? = nil
        let answered = DispatchSemaphore(value: 0)
        try client.write([Mutation(key: skey("q/a"), kind: .set(MapValue(["v": .int(1)])))]) { e in
            lock.lock(); result = .some(e?.code); lock.unlock()
            answered.signal()
        }
        XCTAssertEqual(unlink(dir.file()), 0)
        try client.enableNetwork()
        XCTAssertEqual(answered.wait(timeout: .now() + 10), .success, "the write was left waiting")
        XCTAssertEqual(lock.withLock { result }, .some(.dataLoss))
    }

    /// A memory cache over a durable backend applies a write locally first: when the backend
    /// cannot store it, the write is rolled back with the events of a rejected write (added,
    /// then removed) and its completion gets the error.
    func testBackendStorageFailureRollsBackLocalWrite() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        let client = EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: p))
        defer { client.close(); p.close() }
        let events = EventLog()
        let token = try client.listen(try Query(collection: spath("docs"))) { e in
            if case .snapshot(let s) = e { events.add(s.changes.map { "\($0.kind) \($0.document.key.id)" }) }
        }
        defer { token.remove() }
        try limit(p, extraPages: 1)
        let done = DispatchSemaphore(value: 0)
        var code: ErrorCode?
        try client.write([Mutation(key: skey("docs/big"), kind: .set(MapValue(big(1))))]) { e in code = e?.code; done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(code, .resourceExhausted)
        let deadline = Date().addingTimeInterval(10)
        while events.all.count < 2 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(events.all, ["added big", "removed big"])
        XCTAssertNil(p.backendDocuments.get(skey("docs/big")))
    }
}

/// Collects listener event lines from the event thread.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ l: [String]) { lock.lock(); lines += l; lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
