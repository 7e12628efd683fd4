import EmberFirestoreProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import XCTest

/// The `ember` command as a process: start line, flags, refusal of a non-loopback host, the
/// graceful stop on SIGTERM, and no acknowledged commit lost to kill -9.
final class ServerProcessTests: XCTestCase {
    /// The `ember` binary beside the test bundle (swift build --build-tests builds it).
    static var binary: URL {
        var dir = Bundle(for: ServerProcessTests.self).bundleURL
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("ember")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/ember")
    }

    final class Running: @unchecked Sendable {
        let process = Process()
        let stderr = Pipe()
        private let lock = NSLock()
        private var text = ""
        var log: String { lock.lock(); defer { lock.unlock() }; return text }

        init(_ args: [String]) throws {
            process.executableURL = ServerProcessTests.binary
            process.arguments = args
            process.standardError = stderr
            process.standardOutput = FileHandle.nullDevice
            stderr.fileHandleForReading.readabilityHandler = { [weak self] h in
                let d = h.availableData
                guard let self, !d.isEmpty else { return }
                self.lock.lock(); self.text += String(decoding: d, as: UTF8.self); self.lock.unlock()
            }
            try process.run()
        }

        /// The port from the start line (bounded wait).
        func port() throws -> Int {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let r = log.range(of: " port=") {
                    let digits = log[r.upperBound...].prefix { $0.isNumber }
                    if let p = Int(digits) { return p }
                }
                if !process.isRunning { break }
                usleep(20_000)
            }
            throw NSError(domain: "ember serve did not start: \(log)", code: 1)
        }

        func waitForExit(seconds: Double = 20) -> Int32? {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.interrupt(); kill(process.processIdentifier, SIGKILL); return nil }
            return process.terminationStatus
        }
    }

    func testHelpDocumentsEveryFlag() throws {
        let p = Process()
        let out = Pipe()
        p.executableURL = ServerProcessTests.binary
        p.arguments = ["serve", "--help"]
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        for flag in ["--path", "--memory", "--host", "--port", "--max-request-bytes", "--max-concurrent-streams", "--log-level"] {
            XCTAssertTrue(text.contains(flag), "\(flag) missing from: \(text)")
        }
    }

    func testANonLoopbackHostIsRefusedWithAMessage() throws {
        let r = try Running(["serve", "--memory", "--host", "0.0.0.0", "--port", "0", "--database-port", "0"])
        XCTAssertEqual(r.waitForExit(), 2)
        XCTAssertTrue(r.log.contains("loopback"), r.log)
    }

    func testSigtermStopsGracefullyWithLogLines() throws {
        let r = try Running(["serve", "--memory", "--port", "0", "--database-port", "0"])
        _ = try r.port()
        kill(r.process.processIdentifier, SIGTERM)
        XCTAssertEqual(r.waitForExit(), 0)
        XCTAssertTrue(r.log.contains("event=start"), r.log)
        XCTAssertTrue(r.log.contains("event=stop"), r.log)
    }

    /// 300 commits acknowledged one by one, then SIGKILL: all of them are there after a restart.
    func testKill9LosesNoAcknowledgedCommit() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ember-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("data.ember").path
        let first = try Running(["serve", "--path", path, "--port", "0", "--database-port", "0"])
        let port = try first.port()
        let acknowledged = try await withGRPCClient(transport: ServerTests.transport(port: port)) { client in
            let fs = FirestoreClient(wrapping: client)
            var n = 0
            for i in 0..<300 {
                _ = try await ServerTests.commit(fs, [ServerTests.set("k/d\(i)", ["i": ServerTests.value(Int64(i))])])
                n += 1
            }
            return n
        }
        kill(first.process.processIdentifier, SIGKILL)
        _ = first.waitForExit()
        let second = try Running(["serve", "--path", path, "--port", "0", "--database-port", "0"])
        defer { kill(second.process.processIdentifier, SIGKILL); _ = second.waitForExit() }
        let port2 = try second.port()
        let found = try await withGRPCClient(transport: ServerTests.transport(port: port2)) { client in
            let fs = FirestoreClient(wrapping: client)
            var req = Google_Firestore_V1_BatchGetDocumentsRequest()
            req.database = ServerTests.database
            req.documents = (0..<300).map { "\(ServerTests.root)/k/d\($0)" }
            return try await fs.batchGetDocuments(req) { response in
                var n = 0
                for try await m in response.messages { if case .found? = m.result { n += 1 } }
                return n
            }
        }
        XCTAssertEqual(found, acknowledged)
    }
}
