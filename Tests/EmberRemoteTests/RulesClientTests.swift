import Ember
import EmberServer
import Foundation
import JWTKit
import XCTest

/// Ember's own clients of a server with security rules (issue 14): a listen the rules refuse
/// ends in the listener's error callback with PERMISSION_DENIED (the server removes the target,
/// the stream stays open and the client's other listeners go on); a write they refuse fails its
/// completion with PERMISSION_DENIED; the same client with an owner's ID token
/// (`FirestoreSettings.authToken`) reads and writes what the rules give that user.
final class RulesClientTests: XCTestCase {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} {
              allow read: if request.auth != null && resource.data.owner == request.auth.uid;
              allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
            }
            match /public/{id} { allow read; }
          }
        }
        """
    static let secret = Array("a-test-secret-of-32-bytes-000000".utf8)
    static let admin = "admin-token-0123456789"

    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var aud: AudienceClaim
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    static func token(uid: String) throws -> String {
        try blocking {
            let keys = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            let now = Date()
            return try await keys.sign(Claims(sub: .init(value: uid), aud: .init(value: "demo-ember"),
                                              iss: .init(value: "https://securetoken.google.com/demo-ember"),
                                              iat: .init(value: now), exp: .init(value: now.addingTimeInterval(3600))))
        }
    }

    func open(_ port: Int, token: String?) throws -> Firestore {
        let s = FirestoreSettings()
        s.host = "127.0.0.1:\(port)"
        s.isSSLEnabled = false
        s.authToken = token
        return try Firestore.open(settings: s)
    }

    func testListenersAndWritesTheRulesRefuseFailWithPermissionDenied() throws {
        let server = try TestServer { c in
            c.rules = RulesClientTests.rules
            c.tokenSecret = RulesClientTests.secret
            c.adminToken = RulesClientTests.admin
        }
        defer { server.stop() }
        let admin = try open(server.port, token: RulesClientTests.admin)
        let anonymous = try open(server.port, token: nil)
        let alice = try open(server.port, token: try RulesClientTests.token(uid: "alice"))
        defer { admin.terminate(); anonymous.terminate(); alice.terminate() }
        let seeded = expectation(description: "seeded by the admin")
        let batch = admin.batch()
        batch.setData(["owner": "alice", "text": "secret"], forDocument: admin.document("notes/a"))
        batch.setData(["title": "hello"], forDocument: admin.document("public/p"))
        batch.commit { e in XCTAssertNil(e); seeded.fulfill() }
        wait(for: [seeded], timeout: 10)

        // Anonymous: the public document arrives, the note's listener ends with the error, on
        // the same stream.
        let publicDocs = Recorder<Bool>()
        let pub = anonymous.document("public/p").addSnapshotListener { s, _ in if let s { publicDocs.append(s.exists) } }
        defer { pub.remove() }
        publicDocs.wait(until: { $0 }, timeout: 10)
        let refused = Recorder<FirestoreErrorCode?>()
        let note = anonymous.document("notes/a").addSnapshotListener { s, e in
            XCTAssertNil(s?.data(), "no data of a refused document")
            if let e { refused.append((e as? FirestoreError)?.code) }
        }
        defer { note.remove() }
        XCTAssertEqual(refused.wait(until: { _ in true }, timeout: 10).first, .permissionDenied)
        let query = Recorder<FirestoreErrorCode?>()
        let q = anonymous.collection("notes").whereField("owner", isEqualTo: "alice").addSnapshotListener { _, e in
            if let e { query.append((e as? FirestoreError)?.code) }
        }
        defer { q.remove() }
        XCTAssertEqual(query.wait(until: { _ in true }, timeout: 10).first, .permissionDenied)
        let write = expectation(description: "an anonymous create is refused")
        anonymous.document("notes/b").setData(["owner": "alice"]) { e in
            XCTAssertEqual((e as? FirestoreError)?.code, .permissionDenied, "\(String(describing: e))")
            write.fulfill()
        }
        wait(for: [write], timeout: 10)

        // Alice, with her token: her note and her query, her own create; not bob's.
        let own = Recorder<String?>()
        let mine = alice.collection("notes").whereField("owner", isEqualTo: "alice").addSnapshotListener { s, e in
            XCTAssertNil(e)
            if let s { own.append(s.documents.map(\.documentID).sorted().joined(separator: ",")) }
        }
        defer { mine.remove() }
        own.wait(until: { $0 == "a" }, timeout: 10)
        let created = expectation(description: "alice creates her note")
        alice.document("notes/c").setData(["owner": "alice"]) { e in XCTAssertNil(e); created.fulfill() }
        wait(for: [created], timeout: 10)
        own.wait(until: { $0 == "a,c" }, timeout: 10)
        let forBob = expectation(description: "alice cannot create bob's note")
        alice.document("notes/d").setData(["owner": "bob"]) { e in
            XCTAssertEqual((e as? FirestoreError)?.code, .permissionDenied, "\(String(describing: e))")
            forBob.fulfill()
        }
        wait(for: [forBob], timeout: 10)
    }
}
