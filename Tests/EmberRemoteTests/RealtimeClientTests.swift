import EmberConcurrency
import EmberModel
@testable import EmberRemote
import EmberServer
import Foundation
import XCTest

/// `RealtimeClient` against an in-process `ember serve`'s tree port: the hello, requests and
/// their answers, pushes in order (a listen's data before its `ok`), long messages, requests
/// without a connection, and reconnecting after the server went away and came back.
final class RealtimeClientTests: XCTestCase {
    private func treeServer(port: Int = 0, path: String? = nil) throws -> (TestServer, Int) {
        let s = try TestServer(path: path) { $0.databasePort = port }
        return (s, try s.treePort())
    }

    private func client(_ port: Int, _ recorder: RealtimeRecorder, ns: String = "rt") -> RealtimeClient {
        var settings = RealtimeClient.Settings(host: "127.0.0.1", port: port, namespace: ns)
        settings.initialBackoff = 0.05
        return RealtimeClient(settings: settings, delegate: recorder, queue: recorder.queue)
    }

    func testRequestsAnswersAndPushesInOrder() throws {
        let (server, port) = try treeServer()
        defer { server.stop() }
        let r = RealtimeRecorder()
        let c = client(port, r)
        r.queue.sync { c.start() }
        defer { r.queue.sync { c.stop() } }
        try r.wait { $0.connects == 1 }
        XCTAssertLessThan(abs(r.offset), 5_000)
        let listen = r.ask(c, "q", #"{"p": "/list", "h": ""}"#)
        try r.wait { $0.answers[listen] != nil }
        XCTAssertEqual(r.answers[listen]?.0, "ok")
        // The data came first.
        XCTAssertEqual(r.log.first, "push d {\"d\":null,\"p\":\"/list\"}")
        XCTAssertEqual(r.log.dropFirst().first, "answer \(listen) ok")
        for i in 0..<20 { _ = r.ask(c, "p", #"{"p": "/list/k\#(i)", "d": \#(i)}"#) }
        try r.wait { $0.pushes.count == 21 }
        XCTAssertEqual(r.pushes.dropFirst().map { $0 }, (0..<20).map { "d {\"d\":\($0),\"p\":\"/list/k\($0)\"}" })
        // A long message goes in counted frames both ways.
        let big = "{" + (0..<300).map { #""k\#($0)": "\#(String(repeating: "x", count: 300))""# }.joined(separator: ",") + "}"
        let put = r.ask(c, "p", #"{"p": "/big", "d": \#(big)}"#)
        let get = r.ask(c, "g", #"{"p": "/big", "q": {}}"#)
        try r.wait { $0.answers[get] != nil }
        XCTAssertEqual(r.answers[put]?.0, "ok")
        XCTAssertEqual(r.answers[get]?.0, "ok")
        guard case .map(let m)? = r.answers[get]?.1 else { return XCTFail("\(String(describing: r.answers[get]))") }
        XCTAssertEqual(m.count, 300)
    }

    func testRequestsWithoutAConnectionAreAnsweredDisconnected() throws {
        let r = RealtimeRecorder()
        let c = client(9, r)      // nothing listens on port 9
        r.queue.sync { c.start() }
        defer { r.queue.sync { c.stop() } }
        let id = r.ask(c, "g", #"{"p": "/x", "q": {}}"#)
        try r.wait { $0.answers[id] != nil }
        XCTAssertEqual(r.answers[id]?.0, "disconnected")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertNotNil(r.queue.sync { c.lastError })
        XCTAssertEqual(r.connects, 0)
    }

    func testReconnectsWhenTheServerComesBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("data.ember").path
        var (server, port) = try treeServer(path: path)
        let r = RealtimeRecorder()
        let c = client(port, r)
        r.queue.sync { c.start() }
        defer { r.queue.sync { c.stop() } }
        do { try r.wait { $0.connects == 1 } } catch { XCTFail("\(error); last error: \(r.queue.sync { c.lastError } ?? "none")"); return }
        let put = r.ask(c, "p", #"{"p": "/kept", "d": 1}"#)
        try r.wait { $0.answers[put]?.0 == "ok" }
        server.stop()
        try r.wait { $0.disconnects == 1 }
        (server, _) = try treeServer(port: port, path: path)
        defer { server.stop() }
        try r.wait(seconds: 20) { $0.connects == 2 }
        let get = r.ask(c, "g", #"{"p": "/kept", "q": {}}"#)
        try r.wait { $0.answers[get] != nil }
        XCTAssertEqual(r.answers[get]?.0, "ok")
        XCTAssertEqual(r.answers[get]?.1, .int(1))
    }
}

/// Records a client's delegate calls (on its queue) and waits, bounded, for a condition.
final class RealtimeRecorder: RealtimeClientDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "test.realtime")
    private let lock = NSLock()
    private var _log: [String] = []
    private var _answers: [Int: (String, Value)] = [:]
    private var _connects = 0, _disconnects = 0
    private var _offset = 0.0
    private var nextAsk = 0

    var log: [String] { lock.withLock { _log } }
    var pushes: [String] { log.filter { $0.hasPrefix("push ") }.map { String($0.dropFirst(5)) } }
    var answers: [Int: (String, Value)] { lock.withLock { _answers } }
    var connects: Int { lock.withLock { _connects } }
    var disconnects: Int { lock.withLock { _disconnects } }
    var offset: Double { lock.withLock { _offset } }

    func realtimeConnected(_ client: RealtimeClient, serverTimeOffsetMillis: Double) {
        lock.withLock { _connects += 1; _offset = serverTimeOffsetMillis }
    }
    func realtimeDisconnected(_ client: RealtimeClient) { lock.withLock { _disconnects += 1 } }
    func realtime(_ client: RealtimeClient, push action: String, body: Value) {
        let text = "push \(action) \(ValueJSON.render(body, plain: true))"
        lock.withLock { _log.append(text) }
    }

    /// Sends a request; its answer is recorded under the returned number.
    func ask(_ c: RealtimeClient, _ action: String, _ body: String) -> Int {
        let id = lock.withLock { nextAsk += 1; return nextAsk }
        let value = try! ValueJSON.parse(body, plain: true)
        queue.asyncConfined {
            c.request(action, value) { [self] status, data in
                lock.withLock { _answers[id] = (status, data); _log.append("answer \(id) \(status)") }
            }
        }
        return id
    }

    func wait(seconds: Double = 10, _ condition: (RealtimeRecorder) -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(self) {
            guard Date() < deadline else { throw EmberError(.deadlineExceeded, "condition not met in \(seconds) s; connects \(connects), disconnects \(disconnects); log: \(log.suffix(5))") }
            usleep(5_000)
        }
    }
}
