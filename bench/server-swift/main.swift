// ember-server-bench: a gRPC client (grpc-swift 2) that measures a Firestore server (ember serve
// or the emulator) without the Python client's own costs in the way:
//   fanout HOST:PORT N     N Listen streams (one document target each); the time from a commit to
//                          the last stream receiving it (ms), median of 5 rounds
//   latency HOST:PORT N    one stream; commit -> the change on the stream (µs), p50 / p99 of N
//   commit HOST:PORT N     a commit's round trip (µs), p50 / p99 of N
//   get HOST:PORT N        a GetDocument's round trip (µs), p50 / p99 of N (an existing document)
//   refused HOST:PORT N    the same call refused before the backend (INVALID_ARGUMENT): the floor
// Build: swift build -c release --scratch-path .build-bench --product ember-server-bench
import EmberFirestoreProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

typealias Client = Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>
let database = "projects/demo-ember/databases/(default)"
let root = database + "/documents"

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func setDoc(_ fs: Client, _ path: String, _ v: Int64) async throws {
    var w = Google_Firestore_V1_Write()
    w.update.name = root + "/" + path
    var value = Google_Firestore_V1_Value()
    value.integerValue = v
    w.update.fields = [.init(key: "v", value: value)]
    var req = Google_Firestore_V1_CommitRequest()
    req.database = database
    req.writes = [w]
    _ = try await fs.commit(req)
}

/// Per-stream bookkeeping shared with the streams' tasks.
final class Board: @unchecked Sendable {
    let lock = NSLock()
    var current = 0
    var marker: Int64 = -1
    var arrivals: [Int: Double] = [:]
    func noteCurrent() { lock.lock(); current += 1; lock.unlock() }
    func note(stream: Int, value: Int64) {
        let t = now()
        lock.lock(); if value == marker && arrivals[stream] == nil { arrivals[stream] = t }; lock.unlock()
    }
    var counts: (Int, Int) { lock.lock(); defer { lock.unlock() }; return (current, arrivals.count) }
    func start(_ m: Int64) { lock.lock(); marker = m; arrivals = [:]; lock.unlock() }
    var last: Double? { lock.lock(); defer { lock.unlock() }; return arrivals.values.max() }
}

func listen(_ fs: Client, doc: String, stream: Int, board: Board, done: AsyncStream<Void>) async throws {
    var target = Google_Firestore_V1_Target()
    target.targetID = 1
    target.documents.documents = [root + "/" + doc]
    var add = Google_Firestore_V1_ListenRequest()
    add.database = database
    add.addTarget = target
    let request = add
    try await fs.listen(requestProducer: { w in
        try await w.write(request)
        for await _ in done {}
    }, onResponse: { response in
        for try await m in response.messages {
            switch m.responseType {
            case .targetChange(let tc)? where tc.targetChangeType == .current: board.noteCurrent()
            case .documentChange(let dc)?: board.note(stream: stream, value: dc.document.fields.last(where: { $0.key == "v" })?.value.integerValue ?? -1)
            default: break
            }
        }
    })
}

func run(host: String, port: Int, _ body: @escaping @Sendable (Client) async throws -> Void) async throws {
    try await withGRPCClient(transport: .http2NIOPosix(target: .ipv4(host: host, port: port), transportSecurity: .plaintext)) { client in
        try await body(Client(wrapping: client))
    }
}

let args = CommandLine.arguments
guard args.count == 4, let colon = args[2].lastIndex(of: ":"), let port = Int(args[2][args[2].index(after: colon)...]), let n = Int(args[3]) else {
    print("usage: ember-server-bench fanout|latency|commit|get|refused HOST:PORT N"); exit(2)
}
let host = String(args[2][..<colon])
let mode = args[1]

try await run(host: host, port: port) { fs in
    if mode == "get" || mode == "refused" {
        try await setDoc(fs, "bench-swift/get", 1)
        var req = Google_Firestore_V1_GetDocumentRequest()
        // `refused`: a name the service refuses before it reaches the backend (the call's floor).
        req.name = mode == "get" ? root + "/bench-swift/get" : "not-a-name"
        var samples: [Double] = []
        for i in 1...(n + 50) {
            let t0 = now()
            if mode == "get" { _ = try await fs.getDocument(req) } else { _ = try? await fs.getDocument(req) }
            if i > 50 { samples.append((now() - t0) * 1e6) }
        }
        samples.sort()
        print(String(format: "get_us p50 %.0f p99 %.0f", samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)]))
        return
    }
    if mode == "commit" {
        var samples: [Double] = []
        for i in 1...(n + 50) {
            let t0 = now()
            try await setDoc(fs, "bench-swift/commit", Int64(i))
            if i > 50 { samples.append((now() - t0) * 1e6) }
        }
        samples.sort()
        print(String(format: "commit_us p50 %.0f p99 %.0f", samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)]))
        return
    }
    let board = Board()
    let (done, finish) = AsyncStream.makeStream(of: Void.self)
    let doc = "bench-swift/\(mode)-\(UUID().uuidString.prefix(8))"
    try await setDoc(fs, doc, 0)
    let streams = mode == "fanout" ? n : 1
    try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<streams { group.addTask { try await listen(fs, doc: doc, stream: i, board: board, done: done) } }
        let deadline = now() + 120
        while board.counts.0 < streams && now() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        guard board.counts.0 == streams else { print("error: only \(board.counts.0) of \(streams) streams current"); exit(1) }
        if mode == "fanout" {
            var results: [Double] = []
            for round in 1...5 {
                board.start(Int64(round))
                let t0 = now()
                try await setDoc(fs, doc, Int64(round))
                let until = now() + 30
                while board.counts.1 < streams && now() < until { try await Task.sleep(nanoseconds: 200_000) }
                if board.counts.1 == streams, let last = board.last { results.append((last - t0) * 1e3) }
                try await Task.sleep(nanoseconds: 200_000_000)
            }
            results.sort()
            print(results.isEmpty ? "fanout_ms n/a" : String(format: "fanout_ms %.2f", results[results.count / 2]))
        } else {
            var samples: [Double] = []
            for i in 1...(n + 50) {
                board.start(Int64(i))
                let t0 = now()
                try await setDoc(fs, doc, Int64(i))
                while board.counts.1 < 1 && now() < t0 + 10 { await Task.yield() }
                if i > 50, let t = board.last { samples.append((t - t0) * 1e6) }
            }
            samples.sort()
            print(String(format: "latency_us p50 %.0f p99 %.0f", samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)]))
        }
        finish.finish()
        try await group.waitForAll()
    }
}
