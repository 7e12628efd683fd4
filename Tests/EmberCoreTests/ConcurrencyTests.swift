// Tests of EmberClient under concurrent use: many writers and many listeners, listeners coming
// and going while writes flow, reads racing writes. Each listener's events must replay exactly and
// end on the final state.
import EmberConcurrency
import XCTest
import Foundation
import EmberModel
import EmberCore

final class ConcurrencyTests: XCTestCase {

    /// The queries the listeners use: plain, ordered both ways, filtered, limit windows, single documents.
    private func queries() -> [Query] {
        let lt = Filter.field(FieldFilter(field: fp("v"), op: .lessThan, value: .int(50)))
        var qs: [Query] = [
            collection("conc"),
            ordered("conc", by: "v"),
            ordered("conc", by: "v", descending: true),
            try! ordered("conc", by: "v").filter(lt),
        ]
        for n in [1, 3, 7] {
            qs.append(try! ordered("conc", by: "v").limit(n))
            qs.append(try! ordered("conc", by: "v").limit(n, type: .last))
        }
        for k in 0..<4 { qs.append(Query(document: key("conc/t\(k)-\(k)"))) }
        return qs
    }

    func testEightWritersWithOneHundredListeners() throws {
        let (client, observer) = twoClients()
        defer { client.close(); observer.close() }
        try eightWriters(client, observer: observer, listeners: 100, writes: 120)
    }

    /// The same on the embedded default (a database file): each write committed on the writer's
    /// thread through the backend's queue, listeners raised before the commit.
    func testEightWritersOnTheEmbeddedDefault() throws {
        let dir = makeTemporaryDirectory("conc")
        defer { removeTemporaryDirectory(dir) }
        let client = try EmberClient(options: EmberOptions(path: dir + "/db.ember"))
        defer { client.close() }
        try eightWriters(client, observer: client, listeners: 40, writes: 60)
    }

    /// 8 threads write (sets, updates, deletes on their own keys) while `listeners` listeners of
    /// `client` watch; every listener's events replay exactly and end on the backend's state,
    /// which is what the writers meant (read through `observer`).
    private func eightWriters(_ client: EmberClient, observer: EmberClient, listeners: Int, writes: Int) throws {
        let qs = queries()
        var logs: [(EventLog, Bool, Query)] = []
        var tokens: [ListenerToken] = []
        for i in 0..<listeners {
            let log = EventLog(), metadata = i % 2 == 0, q = qs[i % qs.count]
            tokens.append(try client.record(q, log, metadata: metadata))
            logs.append((log, metadata, q))
        }
        settle(client)

        // 8 threads, each on its own keys, with sets, updates and deletes.
        let expected = Box<[String: Int64]>([:])
        let failures = Box(0)
        concurrently(8) { t in
            var mine: [String: Int64] = [:]
            for j in 0..<writes {
                let id = "t\(t)-\(j % 6)"
                let v = Int64((j * 37 + t * 11) % 100)
                let m: Mutation
                switch j % 5 {
                case 3: m = deleteM("conc/\(id)"); mine[id] = nil
                case 4 where mine[id] != nil: m = updateM("conc/\(id)", ["v": .int(v)]); mine[id] = v
                default: m = setM("conc/\(id)", ["v": .int(v), "t": .int(Int64(t))]); mine[id] = v
                }
                do { try client.write([m]) } catch { failures.value += 1 }
            }
            expected.mutate { for (k, v) in mine { $0[k] = v } }
        }
        XCTAssertEqual(failures.value, 0)
        waitForPendingWrites(client)
        settle(client)

        // The backend holds exactly what the writers meant.
        let truth = try observer.getDocuments(collection("conc"), source: .server)
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: truth.documents.map { ($0.key.id, $0.data["v"]!) }),
                       expected.value.mapValues { Value.int($0) })

        for (i, (log, metadata, q)) in logs.enumerated() {
            let events = log.all
            XCTAssertGreaterThan(events.count, 0, "listener \(i)")
            assertReplays(events, includeMetadata: metadata)
            guard let last = log.last else { continue }
            let want = try observer.getDocuments(q, source: .server)
            XCTAssertEqual(ids(last), ids(want), "listener \(i) on \(q)")
            XCTAssertEqual(last.documents.map { $0.data }, want.documents.map { $0.data }, "listener \(i) on \(q)")
            XCTAssertFalse(last.isFromCache)
            if metadata { XCTAssertFalse(last.hasPendingWrites, "listener \(i) saw the acknowledgements") }
        }
        for t in tokens { t.remove() }
    }

    /// Listeners attach and detach on several threads while writes flow; each one's events replay
    /// exactly and none arrives after its removal.
    func testListenersComingAndGoingWhileWriting() throws {
        let client = EmberClient()
        defer { client.close() }
        let stop = Box(false)
        let writerDone = Semaphore()
        Thread.detachNewThread {
            var i: Int64 = 0
            while !stop.value {
                _ = try? client.write([i % 4 == 3 ? deleteM("conc/\(i % 9)") : setM("conc/\(i % 9)", ["v": .int(i % 13)])])
                i += 1
            }
            writerDone.signal()
        }
        let qs = queries()
        let late = Box(0)
        let problems = Box<[String]>([])
        concurrently(4) { t in
            for round in 0..<25 {
                let log = EventLog()
                let removed = Box(false)
                let q = qs[(t * 25 + round) % qs.count]
                let metadata = round % 2 == 0
                guard let token = try? client.listen(q, options: ListenOptions(includeMetadataChanges: metadata), { e in
                    if removed.value { late.value += 1 }
                    log.append(e)
                }) else { problems.mutate { $0.append("listen failed") }; continue }
                log.wait(for: 1)
                token.remove()
                removed.value = true
                assertReplays(log.all, includeMetadata: metadata)
            }
        }
        stop.value = true
        XCTAssertTrue(writerDone.wait(seconds: 30))
        settle(client)
        XCTAssertEqual(late.value, 0)
        XCTAssertEqual(problems.value, [])
    }

    /// Reads race writes: every read answers, counts never go down while documents are only added.
    func testReadsRacingWrites() throws {
        let client = EmberClient()
        defer { client.close() }
        let problems = Box<[String]>([])
        concurrently(4) { t in
            if t == 0 {
                for i in 0..<200 { _ = try? client.write([setM("conc/\(i)", ["v": .int(Int64(i))])]) }
                return
            }
            var lastCount = 0
            for _ in 0..<50 {
                do {
                    let c = try client.count(collection("conc"))
                    if c < lastCount { problems.mutate { $0.append("count went down \(lastCount) -> \(c)") } }
                    lastCount = c
                    let s = try client.getDocuments(ordered("conc", by: "v"), source: t == 1 ? .cache : .default)
                    let vs = s.documents.map { $0.data["v"]! }
                    if vs != vs.sorted(by: { Value.compare($0, $1) < 0 }) { problems.mutate { $0.append("unordered result") } }
                    _ = try? client.getDocument(key("conc/0"), source: .cache)
                } catch {
                    problems.mutate { $0.append("\(error)") }
                }
            }
        }
        waitForPendingWrites(client)
        XCTAssertEqual(problems.value, [])
        XCTAssertEqual(try client.count(collection("conc")), 200)
        XCTAssertEqual(try client.getDocuments(collection("conc"), source: .cache).documents.count, 200)
    }
}
