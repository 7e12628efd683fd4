import Dispatch
import EmberConcurrency
import EmberFirestoreProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf

public typealias ListenResponse = Google_Firestore_V1_ListenResponse
public typealias ListenRequest = Google_Firestore_V1_ListenRequest
public typealias WriteRequest = Google_Firestore_V1_WriteRequest

/// Responsible for: a Firestore v1 server whose Listen and Write streams a test plays by hand,
/// as the Firebase SDKs' spec scenarios script a watch backend: the test reads what the client
/// sent (`nextListen`, `nextWrite`), answers with the watch messages it chooses (`send`), ends a
/// stream with an error (`failListen`, `failWrite`) and acknowledges writes (`ack`). Nothing
/// is answered unless the test says so, apart from the Write stream's handshake. Every other
/// call fails with UNIMPLEMENTED and is counted (`unaryCalls`): the SDKs make none while
/// listening. Listens on 127.0.0.1 on a free port; `stop()` ends it.
///
///     let server = try ScriptedFirestore()
///     let add = try server.nextListen()                 // .add(target 2, query c)
///     server.send(.added(2), .doc("c/a", version: 1000, ["v": 1], in: [2]), .current(2, token: "t1"), .global(1000))
public final class ScriptedFirestore: @unchecked Sendable {
    public let port: Int
    let state = ScriptState()
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    private let serving: Task<Void, Error>
    /// `projects/demo-ember/databases/(default)`.
    public static let database = "projects/demo-ember/databases/(default)"

    public init() throws {
        let transport = HTTP2ServerTransport.Posix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext)
        let server = GRPCServer(transport: transport, services: [ScriptedService(state: state)])
        self.server = server
        serving = Task { try await server.serve() }
        let box = LockedValueBox<Result<Int, Error>?>(nil)
        let sem = DispatchSemaphore(value: 0)
        Task {
            do {
                let address = try await transport.listeningAddress
                box.withLockedValue { $0 = .success(address.ipv4?.port ?? 0) }
            } catch {
                box.withLockedValue { $0 = .failure(error) }
            }
            sem.signal()
        }
        guard sem.wait(timeout: .now() + 10) == .success, let r = box.withLockedValue({ $0 }) else {
            throw ScriptError("the scripted server did not start in 10 s")
        }
        port = try r.get()
    }

    /// Stops serving (streams still open end).
    public func stop() {
        state.endAll()
        server.beginGracefulShutdown()
        serving.cancel()
    }

    // MARK: the Listen stream

    /// The next request the client sent on a Listen stream (waits `timeout` s at most).
    public func nextListen(timeout: Double = 10) throws -> ListenSeen {
        guard let r = state.listenRequests.take(timeout: timeout) else {
            throw ScriptError("no Listen request in \(timeout) s (streams opened: \(listenStreams))")
        }
        return r
    }

    /// Requests the client sent on Listen streams and the test has not taken (it does not wait).
    public func pendingListens() -> [ListenSeen] { state.listenRequests.drain() }

    /// Sends these messages, in order, on the newest Listen stream.
    public func send(_ messages: ListenResponse...) { send(messages) }
    public func send(_ messages: [ListenResponse]) {
        for m in messages { state.listenOut.withLockedValue { _ = $0?.yield(.message(m)) } }
    }

    /// Ends the newest Listen stream with `code` (UNAVAILABLE: a transient failure).
    public func failListen(_ code: RPCError.Code = .unavailable) {
        state.listenOut.withLockedValue { _ = $0?.yield(.fail(RPCError(code: code, message: "scripted failure"))) }
    }

    /// How many Listen streams the client has opened.
    public var listenStreams: Int { state.counters.withLockedValue { $0.listenStreams } }
    /// The expected count (`Target.expected_count`) a target was last added with, if any.
    public func expectedCount(of target: Int32) -> Int32? { state.counters.withLockedValue { $0.expectedCounts[target] } }
    /// Whether the newest Listen stream is still open.
    public var listenOpen: Bool { state.counters.withLockedValue { $0.listenOpen } }

    // MARK: the Write stream

    /// The next request the client sent on a Write stream after its handshake.
    public func nextWrite(timeout: Double = 10) throws -> WriteSeen {
        guard let r = state.writeRequests.take(timeout: timeout) else { throw ScriptError("no Write request in \(timeout) s") }
        return r
    }

    public func pendingWrites() -> [WriteSeen] { state.writeRequests.drain() }

    /// Acknowledges the oldest unacknowledged write request at `version` (µs): one result per write.
    public func ack(version: Int64) throws {
        guard let n = state.unacked.withLockedValue({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            throw ScriptError("no write to acknowledge")
        }
        var r = Google_Firestore_V1_WriteResponse()
        r.streamToken = Data("w\(version)".utf8)
        r.commitTime = timestamp(version)
        r.writeResults = (0..<n).map { _ in
            var w = Google_Firestore_V1_WriteResult()
            w.updateTime = timestamp(version)
            return w
        }
        state.writeOut.withLockedValue { _ = $0?.yield(.message(r)) }
    }

    /// Ends the newest Write stream with `code` (a permanent code rejects the oldest write).
    public func failWrite(_ code: RPCError.Code) {
        state.unacked.withLockedValue { $0.removeAll() }
        state.writeOut.withLockedValue { _ = $0?.yield(.fail(RPCError(code: code, message: "scripted refusal"))) }
    }

    public var writeStreams: Int { state.counters.withLockedValue { $0.writeStreams } }

    /// Calls other than Listen and Write (all refused with UNIMPLEMENTED).
    public var unaryCalls: [String] { state.counters.withLockedValue { $0.unary } }
}

/// What the client sent on a Listen stream.
public enum ListenSeen: Equatable, CustomStringConvertible, Sendable {
    /// A target added: its id, the collection (or document) path it watches, the resume token.
    case add(targetId: Int32, path: String, resumeToken: String?, limit: Int32?)
    case remove(targetId: Int32)
    /// The client closed its side of the stream.
    case closed

    public var description: String {
        switch self {
        case .add(let id, let p, let t, let l): return "add(\(id), \(p)\(t.map { ", token \($0)" } ?? "")\(l.map { ", limit \($0)" } ?? ""))"
        case .remove(let id): return "remove(\(id))"
        case .closed: return "closed"
        }
    }

    public var targetId: Int32? {
        switch self {
        case .add(let id, _, _, _), .remove(let id): return id
        case .closed: return nil
        }
    }
}

/// What the client sent on a Write stream after its handshake.
public enum WriteSeen: Equatable, Sendable, CustomStringConvertible {
    /// A request with writes: the documents written (paths below the database's documents).
    case writes([String])
    /// A request without writes (the SDKs end a stream with one).
    case empty
    case closed
    public var description: String {
        switch self {
        case .writes(let p): return "writes(\(p))"
        case .empty: return "empty"
        case .closed: return "closed"
        }
    }
}

public struct ScriptError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
