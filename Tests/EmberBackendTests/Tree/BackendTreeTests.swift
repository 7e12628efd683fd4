import XCTest
import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage
@testable import EmberBackend

/// The backend tree: atomic multi-path writes, acknowledgements, and notifications only to
/// connections listening above or below what changed (cut to the listened path).
final class BackendTreeTests: XCTestCase {
    final class Client: TreeBackendClient {
        var events: [TreeBackendEvent] = []
        func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) { events.append(event) }
    }

    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }
    let queue = DispatchQueue(label: "test.client")

    func drain(_ backend: Backend) { backend.flush(); queue.sync {} }

    func describe(_ e: TreeBackendEvent) -> String {
        switch e {
        case .listenResult(let path, let v, _): return "result \(path) \(v)"
        case .change(let ops, let ack): return "change [" + ops.map { "\($0.path)=\($0.value)" }.joined(separator: ", ") + "] ack=\(ack.map(String.init) ?? "-")"
        case .rejected(let id, let error): return "rejected \(id) \(error.code.name)"
        case .listenRevoked(let path, let error): return "revoked \(path) \(error.code.name)"
        case .window(let tag, let v): return "window \(tag) \(v)"
        }
    }

    func testWritesNotifyOnlyListenersAboveOrBelow() {
        let backend = Backend(persistence: MemoryPersistence())
        let writer = Client(), above = Client(), below = Client(), elsewhere = Client()
        let cw = backend.connectTree(client: writer, queue: queue)
        let ca = backend.connectTree(client: above, queue: queue)
        let cb = backend.connectTree(client: below, queue: queue)
        let ce = backend.connectTree(client: elsewhere, queue: queue)
        ca.listen(p("posts"))
        cb.listen(p("posts/a/metrics"))
        ce.listen(p("users"))
        cw.write(id: 1, [TreeWriteOp(path: p("posts/a"), value: .object(TreeObject(["metrics": .object(TreeObject(["views": .int(3)])), "title": .string("t")]))),
                         TreeWriteOp(path: p("posts/b"), value: .int(1))])
        drain(backend)
        XCTAssertEqual(writer.events.map(describe), ["change [] ack=1"])
        XCTAssertEqual(above.events.map(describe), ["result /posts null", "change [/posts/a={metrics: {views: 3}, title: \"t\"}, /posts/b=1] ack=-"])
        XCTAssertEqual(below.events.map(describe), ["result /posts/a/metrics null", "change [/posts/a/metrics={views: 3}] ack=-"])
        XCTAssertEqual(elsewhere.events.map(describe), ["result /users null"])
        XCTAssertEqual(backend.readTree(p("posts/a/metrics/views")), .int(3))
    }

    func testUnlistenAndDisconnectStopNotifications() {
        let backend = Backend(persistence: MemoryPersistence())
        let a = Client(), w = Client()
        let ca = backend.connectTree(client: a, queue: queue)
        let cw = backend.connectTree(client: w, queue: queue)
        ca.listen(p("x"))
        ca.listen(p("x"))
        ca.unlisten(p("x"))
        cw.write(id: 1, [TreeWriteOp(path: p("x/y"), value: .int(1))])
        drain(backend)
        XCTAssertEqual(a.events.count, 3)           // two results and the change: one listen remains
        ca.disconnect()
        cw.write(id: 2, [TreeWriteOp(path: p("x/y"), value: .int(2))])
        drain(backend)
        XCTAssertEqual(a.events.count, 3)
    }

    func testGetReadsTheCurrentNode() {
        let backend = Backend(persistence: MemoryPersistence())
        let c = Client()
        let conn = backend.connectTree(client: c, queue: queue)
        conn.write(id: 1, [TreeWriteOp(path: p("a/b"), value: .string("v"))])
        let got = DispatchSemaphore(value: 0)
        let value = LockedValueBox(TreeValue.null)
        conn.get(p("a")) { v in value.withLockedValue { $0 = v }; got.signal() }
        got.wait()
        XCTAssertEqual(value.current.value(at: ["b"]), .string("v"))
    }
}
