import EmberConcurrency
import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import Ember
import EmberServer
import EmberStorage
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Ember's tree clients sharing one tree through `ember serve`'s realtime protocol
/// (`RemoteTreeEndpoint`): pushes from several clients reach every observer once, in push-id
/// order, with previous keys; a client's writes made while the server is away are sent once it
/// is back, exactly once; a write the rules refuse is rolled back with an error.
final class RemoteTreeTests: XCTestCase {
    private func treeServer(port: Int = 0, path: String? = nil, rules: String? = nil) throws -> (TestServer, Int) {
        let s = try TestServer(path: path) { c in
            c.databasePort = port
            c.databaseRules = rules
        }
        return (s, try s.treePort())
    }

    private func treeClient(_ port: Int, ns: String) -> EmberClient { countedTreeClient(port, ns: ns).0 }

    /// A tree client and its endpoint, whose `childrenReceived` says what its listens brought.
    private func countedTreeClient(_ port: Int, ns: String) -> (EmberClient, RemoteTreeEndpoint) {
        var settings = RealtimeClient.Settings(host: "127.0.0.1", port: port, namespace: ns)
        settings.initialBackoff = 0.05
        let endpoint = RemoteTreeEndpoint(settings: settings)
        return (EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: MemoryPersistence()), tree: endpoint), endpoint)
    }

    func testPushesFromEveryClientReachEveryObserverOnceInOrder() throws {
        let (server, port) = try treeServer()
        defer { server.stop() }
        let ns = "list" + UUID().uuidString.prefix(6).lowercased()
        let clients = (0..<3).map { _ in treeClient(port, ns: ns) }
        defer { for c in clients { c.close() } }
        let posts = try TreePath(parsing: "posts")
        let seen = (0..<3).map { _ in ChildLog() }
        for (c, log) in zip(clients, seen) {
            _ = try c.treeObserve(posts, type: .childAdded) { e in
                if case .event(_, let snap, let prev) = e { log.add(snap.key!, prev) }
            }
        }
        for round in 0..<10 {
            for (i, c) in clients.enumerated() {
                try c.treeWrite([TreeWriteOp(path: posts.child(PushId.next()), value: .string("c\(i) r\(round)"))])
            }
        }
        for log in seen { try log.wait { $0.count == 30 } }
        let final = seen[0].keys.sorted()
        for log in seen {
            XCTAssertEqual(Set(log.keys).count, 30, "every child once")
            // Replaying the previous keys gives the server's list, in push-id order.
            XCTAssertEqual(log.replayed(), final)
        }
    }

    func testWritesMadeWhileTheServerIsAwayAreSentOnceItIsBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rtree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("data.ember").path
        var (server, port) = try treeServer(path: path)
        let ns = "off" + UUID().uuidString.prefix(6).lowercased()
        let writer = treeClient(port, ns: ns)
        defer { writer.close() }
        let list = try TreePath(parsing: "l")
        try writer.treeWrite([TreeWriteOp(path: list.child("a"), value: .int(1))])
        XCTAssertEqual(try writer.treeGet(list, timeout: 10).value, .object(TreeObject(["a": .int(1)])))
        server.stop()
        let acked = ChildLog()
        for k in ["b", "c"] {
            try writer.treeWrite([TreeWriteOp(path: list.child(k), value: .int(2))]) { error in acked.add(k, error.map { "\($0)" }) }
        }
        (server, _) = try treeServer(port: port, path: path)
        defer { server.stop() }
        try acked.wait(seconds: 20) { $0.count == 2 }
        XCTAssertEqual(acked.previous, [nil, nil], "acknowledged without an error")
        let reader = treeClient(port, ns: ns)
        defer { reader.close() }
        XCTAssertEqual(try reader.treeGet(list, timeout: 10).value, .object(TreeObject(["a": .int(1), "b": .int(2), "c": .int(2)])))
    }

    func testARefusedOrRevokedListenEndsItsObserversWithAnError() throws {
        let (server, port) = try treeServer(rules: #"{"rules": {"open": {".read": true}}}"#)
        defer { server.stop() }
        let ns = "revoke" + UUID().uuidString.prefix(6).lowercased()
        let c = treeClient(port, ns: ns)
        defer { c.close() }
        let closed = ChildLog(), open = ChildLog()
        for (path, log) in [("closed", closed), ("open", open)] {
            _ = try c.treeObserve(try TreePath(parsing: path), type: .value) { e in
                switch e {
                case .event(_, let snap, _): log.add(snap.exists ? "value" : "null", nil)
                case .cancelled(let error): log.add("cancelled \(error.code)", nil)
                }
            }
        }
        try closed.wait { $0.count == 1 }
        XCTAssertEqual(closed.keys, ["cancelled permissionDenied"])
        // A limited query there (a tagged listen) is refused the same way.
        let closedWindow = ChildLog()
        _ = try c.treeObserve(try TreePath(parsing: "closed"), query: try TreeQuery().limit(2, .last), type: .value) { e in
            if case .cancelled(let error) = e { closedWindow.add("cancelled \(error.code)", nil) } else { closedWindow.add("value", nil) }
        }
        try closedWindow.wait { $0.count == 1 }
        XCTAssertEqual(closedWindow.keys, ["cancelled permissionDenied"])
        try open.wait { $0.count == 1 }
        XCTAssertEqual(open.keys, ["null"])
        // The rules change: the open listen is revoked too.
        let url = URL(string: "http://127.0.0.1:\(port)/.settings/rules.json?ns=\(ns)")!
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.setValue("Bearer owner", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(#"{"rules": {}}"#.utf8)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { _, _, _ in done.signal() }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        try open.wait { $0.count == 2 }
        XCTAssertEqual(open.keys, ["null", "cancelled permissionDenied"])
    }

    func testARefusedWriteIsRolledBackWithAnError() throws {
        let (server, port) = try treeServer(rules: #"{"rules": {".read": true, "open": {".write": true}}}"#)
        defer { server.stop() }
        let c = treeClient(port, ns: "rules" + UUID().uuidString.prefix(6).lowercased())
        defer { c.close() }
        let values = ChildLog()
        _ = try c.treeObserve(try TreePath(parsing: "closed"), type: .value) { e in
            if case .event(_, let snap, _) = e { values.add(snap.exists ? "exists" : "null", nil) }
        }
        try values.wait { $0.count == 1 }
        let outcome = ChildLog()
        try c.treeWrite([TreeWriteOp(path: try TreePath(parsing: "closed/x"), value: .int(1))]) { error in
            outcome.add(error.map { "\($0.code)" } ?? "ok", nil)
        }
        try outcome.wait { $0.count == 1 }
        XCTAssertEqual(outcome.keys, ["permissionDenied"])
        try values.wait { $0.count == 3 }
        XCTAssertEqual(values.keys, ["null", "exists", "null"], "shown at once, then rolled back")
    }

    func testTransactionsFromSeveralClientsAddUpThroughTheServer() throws {
        let (server, port) = try treeServer()
        defer { server.stop() }
        let ns = "tx" + UUID().uuidString.prefix(6).lowercased()
        let clients = (0..<3).map { _ in treeClient(port, ns: ns) }
        defer { for c in clients { c.close() } }
        let counter = try TreePath(parsing: "counter")
        let errors = ChildLog()
        let calls = ChildLog()
        let group = DispatchGroup()
        for (i, c) in clients.enumerated() {
            for _ in 0..<10 {
                group.enter()
                try c.treeTransaction(counter, update: { v in
                    calls.add("\(i)", nil)
                    if case .int(let n) = v { return .write(.int(n + 1)) }
                    return .write(.int(1))
                }, completion: { e, committed, _ in
                    if e != nil || !committed { errors.add("\(String(describing: e))", nil) }
                    group.leave()
                })
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(errors.keys, [])
        XCTAssertEqual(try clients[0].treeGet(counter, timeout: 10).value, .int(30))
        XCTAssertGreaterThan(calls.keys.count, 30, "contention made some attempts run again")
    }

    func testInfoConnectedFollowsTheServer() throws {
        var (server, port) = try treeServer()
        server.stop()
        let c = treeClient(port, ns: "info" + UUID().uuidString.prefix(6).lowercased())
        defer { c.close() }
        let seen = ChildLog()
        _ = try c.treeObserve(try TreePath(parsing: ".info/connected"), type: .value) { e in
            if case .event(_, let snap, _) = e { seen.add("\(snap.value)", nil) }
        }
        try seen.wait { $0.count == 1 }
        XCTAssertEqual(seen.keys, ["false"], "no server yet")
        (server, _) = try treeServer(port: port)
        try seen.wait(seconds: 20) { $0.count == 2 }
        XCTAssertEqual(seen.keys, ["false", "true"])
        guard case .int(let offset) = try c.treeGet(try TreePath(parsing: ".info/serverTimeOffset")).value else {
            return XCTFail("serverTimeOffset is a number of milliseconds")
        }
        XCTAssertLessThan(abs(offset), 5_000, "the server runs on this machine's clock")
        server.stop()
        try seen.wait(seconds: 20) { $0.count == 3 }
        XCTAssertEqual(seen.keys, ["false", "true", "false"])
        (server, _) = try treeServer(port: port)
        defer { server.stop() }
        try seen.wait(seconds: 20) { $0.count == 4 }
        XCTAssertEqual(seen.keys, ["false", "true", "false", "true"])
    }

    func testServerValuesAreFilledInByTheServer() throws {
        let (server, port) = try treeServer()
        defer { server.stop() }
        let ns = "sv" + UUID().uuidString.prefix(6).lowercased()
        let writer = treeClient(port, ns: ns), reader = treeClient(port, ns: ns)
        defer { writer.close(); reader.close() }
        let post = try TreePath(parsing: "posts/p")
        let acked = ChildLog()
        let before = TreeServerValues.clockMillis()
        for _ in 0..<3 {
            try writer.treeWrite([TreeWriteOp(path: post.child("likes"), value: TreeServerValues.increment(.int(1))),
                                  TreeWriteOp(path: post.child("at"), value: TreeServerValues.timestamp)]) { e in acked.add("\(String(describing: e))", nil) }
        }
        try acked.wait(seconds: 20) { $0.count == 3 }
        XCTAssertEqual(acked.keys, ["nil", "nil", "nil"])
        let after = TreeServerValues.clockMillis()
        let value = try reader.treeGet(post, timeout: 10).value
        XCTAssertEqual(value.child("likes"), .int(3), "each increment added on the server")
        guard case .int(let at) = value.child("at") else { return XCTFail("a timestamp: \(value)") }
        XCTAssertTrue((before...after).contains(at), "\(at) in \(before)...\(after)")
    }

    func testAResumedListenBringsOnlyWhatChanged() throws {
        let (server, port) = try treeServer()
        defer { server.stop() }
        let ns = "resume" + UUID().uuidString.prefix(6).lowercased()
        let writer = treeClient(port, ns: ns)
        defer { writer.close() }
        let (reader, endpoint) = countedTreeClient(port, ns: ns)
        defer { reader.close() }
        let list = try TreePath(parsing: "list")
        var children: [String: TreeValue] = [:]
        for i in 0..<10_000 { children[PushId.next()] = .object(TreeObject(["i": .int(Int64(i))])) }
        let acked = ChildLog()
        try writer.treeWrite([TreeWriteOp(path: list, value: .object(TreeObject(children)))]) { _ in acked.add("set", nil) }
        try acked.wait(seconds: 30) { $0.count == 1 }
        let added = ChildLog()
        _ = try reader.treeObserve(list, type: .childAdded) { e in if case .event(_, let s, _) = e { added.add(s.key!, nil) } }
        try added.wait(seconds: 60) { $0.count == 10_000 }
        let first = endpoint.childrenReceived
        XCTAssertGreaterThanOrEqual(first, 10_000, "the first listen brings the list")

        // Away and back with nothing changed: the hash matches, nothing is sent. (A write's
        // acknowledgement follows the listen's answer on the connection.)
        try reader.disableNetwork()
        try reader.enableNetwork()
        try reader.treeWrite([TreeWriteOp(path: try TreePath(parsing: "elsewhere"), value: .int(1))]) { _ in acked.add("mark", nil) }
        try acked.wait(seconds: 30) { $0.count == 2 }
        XCTAssertEqual(endpoint.childrenReceived, first, "an unchanged list is not sent again")

        // Away while 10 children are pushed: only the last range and the new children come.
        try reader.disableNetwork()
        for i in 0..<10 {
            let key = PushId.next()
            children[key] = .object(TreeObject(["new": .int(Int64(i))]))
            try writer.treeWrite([TreeWriteOp(path: list.child(key), value: children[key]!)]) { _ in acked.add("push", nil) }
        }
        try acked.wait(seconds: 30) { $0.count == 12 }
        try reader.enableNetwork()
        try added.wait(seconds: 30) { $0.count == 10_010 }
        XCTAssertLessThanOrEqual(endpoint.childrenReceived - first, 20, "children sent to resume")
        XCTAssertEqual(Set(added.keys).count, 10_010, "every child once")
        // The client's copy (read offline) is the server's list.
        try reader.disableNetwork()
        XCTAssertEqual(try reader.treeGet(list, timeout: 10).value, .object(TreeObject(children)))
    }

    /// Events of one observer as compact strings ("+key prev", "-key", "=key", "value a,b").
    private func watch(_ c: EmberClient, _ path: TreePath, _ query: TreeQuery, _ types: [TreeEventType], into log: ChildLog) throws -> [ListenerToken] {
        try types.map { type in
            try c.treeObserve(path, query: query, type: type) { e in
                guard case .event(let t, let s, let prev) = e else { return log.add("cancelled", nil) }
                switch t {
                case .childAdded: log.add("+\(s.key!) \(prev ?? "-")", nil)
                case .childRemoved: log.add("-\(s.key!)", nil)
                case .childChanged: log.add("=\(s.key!)", nil)
                case .childMoved: log.add(">\(s.key!) \(prev ?? "-")", nil)
                case .value: log.add("value " + s.children.map { $0.key! }.joined(separator: ","), nil)
                }
            }.token
        }
    }

    func testALimitedQueryBringsOnlyItsWindow() throws {
        let (server, port) = try treeServer()
        defer { server.stop() }
        let ns = "win" + UUID().uuidString.prefix(6).lowercased()
        let writer = treeClient(port, ns: ns)
        defer { writer.close() }
        let (reader, endpoint) = countedTreeClient(port, ns: ns)
        defer { reader.close() }
        let list = try TreePath(parsing: "list")
        var children: [String: TreeValue] = [:]
        for i in 0..<1_000 { children[String(format: "k%04d", i)] = .object(TreeObject(["score": .int(Int64(i % 100))])) }
        let acked = ChildLog()
        try writer.treeWrite([TreeWriteOp(path: list, value: .object(TreeObject(children)))]) { _ in acked.add("set", nil) }
        try acked.wait(seconds: 30) { $0.count == 1 }

        let last = ChildLog()
        let tokens = try watch(reader, list, try TreeQuery().limit(3, .last), [.childAdded, .childRemoved, .value], into: last)
        try last.wait { $0.count == 4 }
        XCTAssertEqual(last.keys, ["+k0997 -", "+k0998 k0997", "+k0999 k0998", "value k0997,k0998,k0999"])
        XCTAssertLessThanOrEqual(endpoint.childrenReceived, 3, "only the window came")

        // A push from elsewhere: the oldest leaves the window, the new child joins it.
        try writer.treeWrite([TreeWriteOp(path: list.child("k1000"), value: .object(TreeObject(["score": .int(5)])))])
        try last.wait { $0.count == 7 }
        XCTAssertEqual(Array(last.keys.suffix(3)), ["-k0997", "+k1000 k0999", "value k0998,k0999,k1000"])
        // The reader's own write shows at once, in its window.
        try reader.treeWrite([TreeWriteOp(path: list.child("k1001"), value: .object(TreeObject(["score": .int(1)])))])
        try last.wait { $0.count == 10 }
        XCTAssertEqual(Array(last.keys.suffix(3)), ["-k0998", "+k1001 k1000", "value k0999,k1000,k1001"])

        // A ranged query by child beside it; then a whole-location observer; then it goes.
        let ranged = ChildLog()
        let query = try TreeQuery().orderBy(.child(try TreePath(parsing: "score"))).start(.at, .int(98), key: nil).limit(4, .first)
        _ = try watch(reader, list, query, [.value], into: ranged)
        try ranged.wait { $0.count == 1 }
        XCTAssertEqual(ranged.keys, ["value k0098,k0198,k0298,k0398"])
        let whole = ChildLog()
        let wholeTokens = try watch(reader, list, TreeQuery(), [.value], into: whole)
        try whole.wait(seconds: 20) { $0.count == 1 }
        XCTAssertEqual(whole.keys.first?.split(separator: ",").count, 1_002)
        wholeTokens.forEach { $0.remove() }
        try writer.treeWrite([TreeWriteOp(path: list.child("k0098"), value: .null)])
        // Until the server's next window comes, the view may fill the gap with a child another
        // window brought (k0999); the server's window then replaces it.
        try ranged.wait { $0.keys.last == "value k0198,k0298,k0398,k0498" }
        XCTAssertEqual(ranged.keys.last, "value k0198,k0298,k0398,k0498")
        XCTAssertLessThanOrEqual(ranged.keys.count, 3)
        try last.wait { $0.count == 10 }
        XCTAssertEqual(last.keys.count, 10, "the window of the last three did not change")
        tokens.forEach { $0.remove() }
        XCTAssertEqual(try reader.treeGet(list, query: try TreeQuery().limit(2, .last), timeout: 10).value,
                       .object(TreeObject(["k1000": .object(TreeObject(["score": .int(5)])), "k1001": .object(TreeObject(["score": .int(1)]))])))
    }

    func testATransactionTheRulesRefuseFailsWithPermissionDenied() throws {
        let (server, port) = try treeServer(rules: #"{"rules": {".read": true, "locked": {".write": false}}}"#)
        defer { server.stop() }
        let c = treeClient(port, ns: "txrules" + UUID().uuidString.prefix(6).lowercased())
        defer { c.close() }
        let done = DispatchSemaphore(value: 0)
        let box = ChildLog()
        try c.treeTransaction(try TreePath(parsing: "locked"), update: { _ in .write(.int(1)) }, completion: { e, committed, v in
            box.add("\(e?.code.name ?? "none") \(committed) \(v == nil ? "nil" : "value")", nil)
            done.signal()
        })
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(box.keys, ["PERMISSION_DENIED false nil"])
    }

}

/// Child keys and previous keys as an observer saw them (any thread), with a bounded wait.
final class ChildLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(String, String?)] = []
    func add(_ key: String, _ prev: String?) { lock.withLock { entries.append((key, prev)) } }
    var count: Int { lock.withLock { entries.count } }
    var keys: [String] { lock.withLock { entries.map(\.0) } }
    var previous: [String?] { lock.withLock { entries.map(\.1) } }

    /// The list the events build when each child goes after its previous key.
    func replayed() -> [String] {
        var list: [String] = []
        for (k, prev) in lock.withLock({ entries }) {
            list.removeAll { $0 == k }
            if let prev, let i = list.firstIndex(of: prev) { list.insert(k, at: i + 1) } else { list.insert(k, at: 0) }
        }
        return list
    }

    func wait(seconds: Double = 10, _ condition: (ChildLog) -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(self) {
            guard Date() < deadline else { throw EmberError(.deadlineExceeded, "condition not met in \(seconds) s: \(keys.suffix(5))") }
            usleep(5_000)
        }
    }
}

/// A database (the public API) whose tree syncs with the plaintext tree port `port`.
func openTreeDatabase(port: Int) throws -> Firestore {
    let settings = FirestoreSettings()
    settings.databaseHost = "127.0.0.1:\(port)"
    settings.isSSLEnabled = false
    return try Firestore.open(settings: settings)
}

/// The public Swift API with `FirestoreSettings.databaseHost`: two databases share one list.
final class DatabaseHostTests: XCTestCase {
    func testTwoDatabasesShareOneListThroughTheTreePort() throws {
        let s = try TestServer { $0.databasePort = 0 }
        defer { s.stop() }
        let port = try s.treePort()
        func open() throws -> Firestore { try openTreeDatabase(port: port) }
        let a = try open(), b = try open()
        defer { a.terminate(completion: nil); b.terminate(completion: nil) }
        let seen = ChildLog()
        _ = b.database().reference(withPath: "chat").observe(.childAdded, andPreviousSiblingKeyWith: { snap, prev in
            seen.add(snap.key, prev)
        })
        let refs = (0..<5).map { i -> DatabaseReference in
            let r = a.database().reference(withPath: "chat").childByAutoId()
            r.setValue(["text": "m\(i)"])
            return r
        }
        try seen.wait { $0.count == 5 }
        XCTAssertEqual(seen.keys, refs.map(\.key))
        XCTAssertEqual(seen.previous, [nil] + refs.dropLast().map(\.key))
    }
}

/// onDisconnect writes: through a server (applied when the client's connection ends) and with
/// the in-process backend (applied when the client closes).
final class OnDisconnectTests: XCTestCase {
    func testTheServerAppliesThemWhenTheClientGoes() throws {
        let s = try TestServer { $0.databasePort = 0 }
        defer { s.stop() }
        let port = try s.treePort()
        func open() throws -> Firestore { try openTreeDatabase(port: port) }
        let leaving = try open(), staying = try open()
        defer { staying.terminate(completion: nil) }
        let me = leaving.database().reference(withPath: "status/me")
        let held = ChildLog()
        me.onDisconnectSetValue("offline") { error, _ in held.add(error.map { "\($0)" } ?? "ok", nil) }
        leaving.database().reference(withPath: "status/other").onDisconnectUpdateChildValues(["a": 1]) { error, _ in held.add(error.map { "\($0)" } ?? "ok", nil) }
        leaving.database().reference(withPath: "status/other").cancelDisconnectOperations { error, _ in held.add(error.map { "\($0)" } ?? "ok", nil) }
        me.setValue("online")
        try held.wait { $0.count == 3 }
        XCTAssertEqual(held.keys, ["ok", "ok", "ok"])
        let seen = ChildLog()
        _ = staying.database().reference(withPath: "status/me").observe(.value) { snap in seen.add("\(snap.value ?? "nil")", nil) }
        try seen.wait { $0.keys.last == "online" }
        leaving.terminate(completion: nil)
        try seen.wait { $0.keys.last == "offline" }
        let other = ChildLog()
        _ = staying.database().reference(withPath: "status/other").observe(.value) { snap in other.add(snap.exists() ? "exists" : "null", nil) }
        try other.wait { $0.count == 1 }
        XCTAssertEqual(other.keys, ["null"], "cancelled")
    }

    func testTheInProcessBackendAppliesThemWhenTheClientCloses() throws {
        let backend = Backend(persistence: MemoryPersistence())
        let a = EmberClient(persistence: MemoryPersistence(), backend: backend)
        let b = EmberClient(persistence: MemoryPersistence(), backend: backend)
        defer { b.close() }
        let path = try TreePath(parsing: "presence/a")
        try a.treeWrite([TreeWriteOp(path: path, value: .bool(true))])
        try a.treeOnDisconnect(.write(path: path, ops: [TreeWriteOp(path: path, value: .null)], update: false))
        XCTAssertEqual(try b.treeGet(path, timeout: 10).value, .bool(true))
        a.close()
        let deadline = Date().addingTimeInterval(10)
        while (try b.treeGet(path, timeout: 10).value) != .null && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(try b.treeGet(path, timeout: 10).value, .null)
    }
}
