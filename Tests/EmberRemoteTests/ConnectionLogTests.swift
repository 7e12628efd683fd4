import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberStorage
import Foundation
import XCTest

/// Issue 27: a client that cannot reach its server says why, once per failed attempt: the
/// address, TLS on or off, the cause and the next retry, with the setting to change when TLS
/// meets a plaintext server (TLS is on by default with a host). The lines stop once the
/// server answers and when the client closes.
final class ConnectionLogTests: XCTestCase {
    private let lines = Recorder<String>()

    override func setUp() {
        let lines = self.lines
        ConnectionLog.setHandler { lines.append($0) }
    }

    override func tearDown() { ConnectionLog.setHandler(nil) }

    /// The lines about `port` so far.
    private func lines(about port: Int) -> [String] { lines.all.filter { $0.contains("127.0.0.1:\(port) ") } }

    /// Waits (at most 10 s) for a line about `port`.
    private func firstLine(about port: Int, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            if let l = lines(about: port).first { return l }
            usleep(10_000)
        }
        XCTFail("no line about port \(port) in 10 s; lines: \(lines.all)", file: file, line: line)
        return nil
    }

    /// A client of `127.0.0.1:port` with a pending write.
    private func writingClient(port: Int, tls: Bool) throws -> (EmberClient, RemoteBackend) {
        let remote = try RemoteBackend(host: "127.0.0.1", port: port, tls: tls)
        let client = EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: MemoryPersistence()), documents: remote)
        try client.write([setM("c/a", ["n": .int(1)])]) { _ in }
        return (client, remote)
    }

    func testTLSAgainstAPlaintextServerNamesTheCauseAndTheSettingToChange() throws {
        if TestServer.externalPort != nil { throw XCTSkip("needs an in-process plaintext server") }
        let server = try TestServer()
        defer { server.stop() }
        let (client, remote) = try writingClient(port: server.port, tls: true)
        defer { client.close(); remote.close() }
        let line = try XCTUnwrap(firstLine(about: server.port))
        XCTAssertTrue(line.hasPrefix("could not reach the server at 127.0.0.1:\(server.port) (TLS on): 1 failed attempt"), line)
        XCTAssertTrue(line.contains("most recent error: "), line)
        XCTAssertTrue(line.contains("retrying in "), line)
        XCTAssertTrue(line.contains("The server may not speak TLS"), line)
        XCTAssertTrue(line.contains("ssl=False"), line)
        XCTAssertTrue(line.contains("isSSLEnabled = false"), line)
        XCTAssertTrue(line.contains("ember_settings.ssl = false"), line)
        XCTAssertTrue(line.contains("set_ssl_enabled(false)"), line)
        XCTAssertFalse(line.contains("\n"))
    }

    func testARefusedConnectionNamesTheCauseWithoutATLSHint() throws {
        let port = try closedPort()
        let (client, remote) = try writingClient(port: port, tls: false)
        defer { client.close(); remote.close() }
        let line = try XCTUnwrap(firstLine(about: port))
        XCTAssertTrue(line.hasPrefix("could not reach the server at 127.0.0.1:\(port) (TLS off): 1 failed attempt"), line)
        XCTAssertTrue(line.lowercased().contains("refused"), line)
        XCTAssertFalse(line.contains("TLS:") || line.contains("expect TLS") || line.contains("not speak TLS"), line)

        // Retried with a backoff: later lines count the attempts, at most one a second.
        let end = Date().addingTimeInterval(8)
        while Date() < end, lines(about: port).count < 2 { usleep(20_000) }
        let all = lines(about: port)
        XCTAssertGreaterThanOrEqual(all.count, 2, "\(all)")
        XCTAssertTrue(all.last!.contains(" failed attempts since it last answered"), all.last!)
        XCTAssertLessThanOrEqual(all.count, 4, "\(all)")

        // Closed: nothing more.
        client.close()
        remote.close()
        let after = lines(about: port).count
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(lines(about: port).count, after)
    }

    func testAReachableServerProducesNoLine() throws {
        if TestServer.externalPort != nil { throw XCTSkip("needs an in-process plaintext server") }
        let server = try TestServer()
        defer { server.stop() }
        let (client, remote) = try writingClient(port: server.port, tls: false)
        defer { client.close(); remote.close() }
        XCTAssertNil(try written(client, [setM("c/b", ["n": .int(2)])]))
        XCTAssertEqual(lines(about: server.port), [])
    }

    func testTheHints() {
        XCTAssertNotNil(ConnectionLog.hint(cause: "handshakeFailed(BoringSSL: WRONG_VERSION_NUMBER)", tls: true))
        XCTAssertTrue(ConnectionLog.hint(cause: "CERTIFICATE_VERIFY_FAILED", tls: true)?.contains("ssl_ca_file") == true)
        let preface = "The server accepted the TCP connection but closed the connection before completing the HTTP/2 connection preface"
        XCTAssertTrue(ConnectionLog.hint(cause: preface, tls: false)?.contains("ssl=True") == true)
        XCTAssertNil(ConnectionLog.hint(cause: "connect(descriptor:addr:size:): Connection refused (errno: 111)", tls: true))
        XCTAssertNil(ConnectionLog.hint(cause: "connect(descriptor:addr:size:): Connection refused (errno: 111)", tls: false))
    }

    /// A loopback port nothing listens on (bound, then closed).
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EmberError(.internal, "socket failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Bool in
                bind(fd, p, len) == 0 && getsockname(fd, p, &len) == 0
            }
        }
        guard bound else { throw EmberError(.internal, "bind failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
