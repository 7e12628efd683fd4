import Ember
import EmberRemote
import EmberServer
import Foundation
import XCTest

/// TLS between Ember's clients and `ember serve --tls-cert --tls-key` (issue 14): a client that
/// trusts the server's certificate (`FirestoreSettings.trustedCertificatesFile`) writes and
/// reads; one that verifies against the system's roots (which do not hold this self-signed
/// certificate) and a plaintext client never reach it: their reads from the server fail and
/// their writes stay pending.
final class TLSClientTests: XCTestCase {
    /// A TLS server (the tree's port too when `tree`) with a fresh self-signed certificate,
    /// removed after the test; and the certificate's path.
    private func tlsServer(tree: Bool) throws -> (TestServer, cert: String) {
        let dir = NSTemporaryDirectory() + "ember-tls-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let (cert, key) = try selfSignedCertificate(in: dir)
        let server = try TestServer { c in
            c.tlsCertificatePath = cert
            c.tlsKeyPath = key
            if tree { c.databasePort = 0 }
        }
        return (server, cert)
    }

    func testAClientTrustingTheCertificateTalksTLSAndOthersDoNot() throws {
        let (server, cert) = try tlsServer(tree: false)
        defer { server.stop() }
        func open(ssl: Bool, ca: String?) throws -> Firestore {
            let s = FirestoreSettings()
            s.host = "127.0.0.1:\(server.port)"
            s.isSSLEnabled = ssl
            s.trustedCertificatesFile = ca
            return try Firestore.open(settings: s)
        }
        let trusting = try open(ssl: true, ca: cert)
        let systemRoots = try open(ssl: true, ca: nil)
        let plaintext = try open(ssl: false, ca: nil)
        defer { trusting.terminate(); systemRoots.terminate(); plaintext.terminate() }

        let written = expectation(description: "acknowledged over TLS")
        trusting.document("tls/a").setData(["n": 1]) { e in XCTAssertNil(e); written.fulfill() }
        wait(for: [written], timeout: 10)
        let read = try blockingAwait { try await trusting.document("tls/a").getDocument(source: .server) }
        XCTAssertEqual(read.data()?["n"] as? Int, 1)

        for (name, db) in [("system roots", systemRoots), ("plaintext", plaintext)] {
            XCTAssertThrowsError(try blockingAwait { try await db.document("tls/a").getDocument(source: .server) }, name) { e in
                XCTAssertEqual((e as? FirestoreError)?.code, .unavailable, "\(name): \(e)")
            }
            let acked = Recorder<Bool>()
            db.document("tls/\(name.prefix(5))").setData(["n": 2]) { _ in acked.append(true) }
            Thread.sleep(forTimeInterval: 1)
            XCTAssertTrue(acked.all.isEmpty, "\(name): a write was acknowledged without TLS to a trusted server")
        }
    }

    /// The tree over TLS (the database port takes the same certificate): a client trusting it
    /// writes and reads; one verifying against the system's roots and a plaintext one never
    /// reach it, their writes stay pending, and each failed attempt is a ConnectionLog line
    /// saying why (the untrusted certificate named).
    func testTreeClientsOverTLS() throws {
        let (server, cert) = try tlsServer(tree: true)
        defer { server.stop() }
        let port = try server.treePort()
        let lines = Recorder<String>()
        ConnectionLog.setHandler { lines.append($0) }
        defer { ConnectionLog.setHandler(nil) }
        func open(ssl: Bool, ca: String?) throws -> Firestore {
            let s = FirestoreSettings()
            s.databaseHost = "127.0.0.1:\(port)"
            s.isSSLEnabled = ssl
            s.trustedCertificatesFile = ca
            return try Firestore.open(settings: s)
        }
        let trusting = try open(ssl: true, ca: cert)
        defer { trusting.terminate() }
        let written = expectation(description: "acknowledged over TLS")
        trusting.database().reference(withPath: "tls/a").setValue(1) { e, _ in XCTAssertNil(e); written.fulfill() }
        if XCTWaiter().wait(for: [written], timeout: 30) != .completed {
            XCTFail("no acknowledgement over TLS; the connection log said: \(lines.all)")
        }
        let systemRoots = try open(ssl: true, ca: nil)
        let plaintext = try open(ssl: false, ca: nil)
        defer { systemRoots.terminate(); plaintext.terminate() }
        for (name, db) in [("system roots", systemRoots), ("plaintext", plaintext)] {
            let acked = Recorder<Bool>()
            db.database().reference(withPath: "tls/b").setValue(2) { _, _ in acked.append(true) }
            Thread.sleep(forTimeInterval: 1)
            XCTAssertTrue(acked.all.isEmpty, "\(name): a tree write was acknowledged without TLS to a trusted server")
        }
        let told = lines.all.filter { $0.contains("could not reach the server at 127.0.0.1:\(port)") }
        XCTAssertTrue(told.contains { $0.contains("(TLS on)") && $0.contains("certificate is not trusted") }, "\(lines.all)")
        XCTAssertTrue(told.contains { $0.contains("(TLS off)") }, "\(lines.all)")
        XCTAssertThrowsError(try open(ssl: true, ca: cert + ".missing")) {
            XCTAssertTrue("\($0)".contains("Cannot read the trusted certificates file"), "\($0)")
        }
    }

    /// A certificate for 127.0.0.1 and localhost, and its key (PEM files in `dir`).
    func selfSignedCertificate(in dir: String) throws -> (cert: String, key: String) {
        let cert = dir + "/cert.pem", key = dir + "/key.pem"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                       "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                       "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw FirestoreError(.internal, "openssl could not make a certificate") }
        return (cert, key)
    }
}
