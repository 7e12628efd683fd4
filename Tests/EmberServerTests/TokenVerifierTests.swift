import EmberBackend
import EmberModel
import EmberWire
import EmberStorage
@testable import EmberServer
import Foundation
import GRPCCore
import JWTKit
import XCTest

/// ID tokens (issue 14): an HS256 token signed with the secret, and RS256/ES256 tokens signed
/// by a key of the JWKS, verify into their claims (`request.auth.uid` is `sub`); the admin token
/// is the admin; no header is anonymous. Everything else is UNAUTHENTICATED: another secret or
/// key, `alg: none`, an algorithm the server has no key for, an expired token or one issued in
/// the future (past the 30 s leeway), no `sub`, and text that is no JWT. Audience and issuer are
/// checked per project.
final class TokenVerifierTests: XCTestCase {
    static let secret = Array("the-hs256-secret-of-the-tests-01".utf8)
    static let admin = "an-admin-token-0123456789"

    struct Claims: JWTPayload {
        var sub: SubjectClaim?
        var aud: AudienceClaim
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var nbf: NotBeforeClaim?
        var admin: Bool?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    static func claims(sub: String? = "alice", iat: Double = 0, exp: Double = 3600, nbf: Double? = nil, admin: Bool? = nil) -> Claims {
        let now = Date()
        return Claims(sub: sub.map { SubjectClaim(value: $0) }, aud: .init(value: "demo-ember"),
                      iss: .init(value: "https://securetoken.google.com/demo-ember"),
                      iat: .init(value: now.addingTimeInterval(iat)), exp: .init(value: now.addingTimeInterval(exp)),
                      nbf: nbf.map { .init(value: now.addingTimeInterval($0)) }, admin: admin)
    }

    static func hs256(_ c: Claims, secret: [UInt8] = secret) async throws -> String {
        try await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256).sign(c)
    }

    func verifier(jwks: String? = nil) async throws -> TokenVerifier {
        try await TokenVerifier(secret: TokenVerifierTests.secret, jwks: jwks, adminToken: TokenVerifierTests.admin)
    }

    func assertUnauthenticated(_ v: TokenVerifier, _ header: String, _ why: String, file: StaticString = #filePath, line: UInt = #line) async {
        do {
            let c = try await v.caller(authorization: header)
            XCTFail("\(why): accepted as \(c)", file: file, line: line)
        } catch let e as RPCError {
            XCTAssertEqual(e.code, .unauthenticated, why, file: file, line: line)
        } catch {
            XCTFail("\(why): \(error)", file: file, line: line)
        }
    }

    func testHS256TokensVerifyIntoTheirClaims() async throws {
        let v = try await verifier()
        let token = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(admin: true))
        guard case .user(let t) = try await v.caller(authorization: "Bearer " + token) else { return XCTFail("not a user") }
        XCTAssertEqual(t.auth.uid, "alice")
        XCTAssertEqual(t.auth.token["admin"], .bool(true))
        XCTAssertEqual(t.auth.token["sub"], .string("alice"))
        XCTAssertEqual(t.audience, ["demo-ember"])
        guard case .admin = try await v.caller(authorization: "Bearer " + TokenVerifierTests.admin) else { return XCTFail("not the admin") }
        guard case .anonymous = try await v.caller(authorization: nil) else { return XCTFail("not anonymous") }
        // Within the leeway: just expired, just issued ahead.
        let edge = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(iat: 10, exp: -10))
        guard case .user = try await v.caller(authorization: "bearer " + edge) else { return XCTFail("leeway") }
    }

    func testAVerifiedTokenIsRememberedUntilItExpires() async throws {
        var v = try await verifier()
        let clock = Clock()
        v.now = { clock.value }
        let token = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(exp: 60))
        guard case .user = try await v.caller(authorization: "Bearer " + token) else { return XCTFail("not a user") }
        guard case .user = try await v.caller(authorization: "Bearer " + token) else { return XCTFail("the remembered token") }
        // 60 s + the 30 s leeway later, the remembered token has expired too.
        clock.value += 95
        await assertUnauthenticated(v, "Bearer " + token, "a remembered token past its exp")
        // One byte of the signature changed is another text: checked, and refused.
        clock.value -= 95
        var bytes = Array(token.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        await assertUnauthenticated(v, "Bearer " + String(decoding: bytes, as: UTF8.self), "a forged signature")
    }

    final class Clock: @unchecked Sendable { var value = Date().timeIntervalSince1970 }

    func testBadTokensAreUnauthenticated() async throws {
        let v = try await verifier()
        let claims = TokenVerifierTests.claims()
        let other = try await TokenVerifierTests.hs256(claims, secret: Array("another-secret-of-32-bytes-00000".utf8))
        await assertUnauthenticated(v, "Bearer " + other, "another secret")
        let expired = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(exp: -120))
        await assertUnauthenticated(v, "Bearer " + expired, "expired")
        let future = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(iat: 600))
        await assertUnauthenticated(v, "Bearer " + future, "issued in the future")
        let notYet = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(nbf: 600))
        await assertUnauthenticated(v, "Bearer " + notYet, "nbf in the future")
        let nbfEdge = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(nbf: 10))
        guard case .user = try await v.caller(authorization: "Bearer " + nbfEdge) else { return XCTFail("nbf within the leeway") }
        let noSub = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(sub: nil))
        await assertUnauthenticated(v, "Bearer " + noSub, "no sub")
        let emptySub = try await TokenVerifierTests.hs256(TokenVerifierTests.claims(sub: ""))
        await assertUnauthenticated(v, "Bearer " + emptySub, "empty sub")
        // alg none: the valid token's payload with an unsigned header.
        let payload = try await TokenVerifierTests.hs256(claims).split(separator: ".")[1]
        let none = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        await assertUnauthenticated(v, "Bearer \(none).\(payload).", "alg none")
        let rs = Data(#"{"alg":"RS256","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        await assertUnauthenticated(v, "Bearer \(rs).\(payload).c2ln", "RS256 without a JWKS")
        for junk in ["Bearer", "Bearer ", "Basic abc", "Bearer a.b", "Bearer a.b.c", "Bearer ...", "Bearer owner",
                     "Bearer " + String(repeating: "a", count: 20_000)] {
            await assertUnauthenticated(v, junk, "'\(junk.prefix(20))'")
        }
    }

    func testAudienceAndIssuerArePerProject() async throws {
        let v = try await verifier()
        let token = try await TokenVerifierTests.hs256(TokenVerifierTests.claims())
        let caller = try await v.caller(authorization: "Bearer " + token)
        let access = AccessControl(rules: nil, backend: Backend(persistence: MemoryPersistence()))
        XCTAssertEqual(try access.auth(caller, DatabaseName(project: "demo-ember", database: "(default)"))?.uid, "alice")
        XCTAssertThrowsError(try access.auth(caller, DatabaseName(project: "other", database: "(default)"))) {
            XCTAssertEqual(($0 as? EmberError)?.code, .unauthenticated)
        }
        let custom = AccessControl(rules: nil, backend: Backend(persistence: MemoryPersistence()), issuerTemplate: "https://auth.example/{project}")
        XCTAssertThrowsError(try custom.auth(caller, DatabaseName(project: "demo-ember", database: "(default)"))) {
            XCTAssertEqual(($0 as? EmberError)?.code, .unauthenticated)
        }
    }

    func testES256AndRS256TokensVerifyByTheirKeyInTheJWKS() async throws {
        let ec = ES256PrivateKey()
        let (x, y) = try XCTUnwrap(ec.publicKey.parameters)
        let rsaPEM = try TokenVerifierTests.openssl(["genrsa", "2048"])
        let rsa = try Insecure.RSA.PrivateKey(pem: rsaPEM)
        let (n, e) = try rsa.publicKey.getKeyPrimitives()
        let jwks = """
            {"keys": [
              {"kty": "EC", "crv": "P-256", "x": "\(x)", "y": "\(y)", "kid": "ec1", "alg": "ES256"},
              {"kty": "RSA", "n": "\(n.base64URL)", "e": "\(e.base64URL)", "kid": "rsa1", "alg": "RS256"}
            ]}
            """
        let v = try await verifier(jwks: jwks)
        let claims = TokenVerifierTests.claims(sub: "bob")
        let es = try await JWTKeyCollection().add(ecdsa: ec, kid: "ec1").sign(claims, kid: "ec1")
        let rs = try await JWTKeyCollection().add(rsa: rsa, digestAlgorithm: .sha256, kid: "rsa1").sign(claims, kid: "rsa1")
        for token in [es, rs] {
            guard case .user(let t) = try await v.caller(authorization: "Bearer " + token) else { return XCTFail("not a user") }
            XCTAssertEqual(t.auth.uid, "bob")
        }
        // Not valid yet (nbf ten minutes ahead), whichever key signed it.
        let later = TokenVerifierTests.claims(sub: "bob", nbf: 600)
        let esLater = try await JWTKeyCollection().add(ecdsa: ec, kid: "ec1").sign(later, kid: "ec1")
        let rsLater = try await JWTKeyCollection().add(rsa: rsa, digestAlgorithm: .sha256, kid: "rsa1").sign(later, kid: "rsa1")
        await assertUnauthenticated(v, "Bearer " + esLater, "ES256 with nbf in the future")
        await assertUnauthenticated(v, "Bearer " + rsLater, "RS256 with nbf in the future")
        // Another EC key under the same kid does not verify.
        let forged = try await JWTKeyCollection().add(ecdsa: ES256PrivateKey(), kid: "ec1").sign(claims, kid: "ec1")
        await assertUnauthenticated(v, "Bearer " + forged, "another EC key")
        // An HS256 token signed with the RSA modulus as the secret (key confusion) does not verify.
        let confused = try await TokenVerifierTests.hs256(claims, secret: Array(n))
        await assertUnauthenticated(v, "Bearer " + confused, "HS256 with the public key as secret")
    }

    func testBadConfigurationIsRefused() async {
        for (secret, jwks, admin) in [(Array("short".utf8), nil, nil), (nil, "{not json", nil), (nil, nil, "short")] as [([UInt8]?, String?, String?)] {
            do {
                _ = try await TokenVerifier(secret: secret, jwks: jwks, adminToken: admin)
                XCTFail("accepted \(String(describing: secret)) \(String(describing: jwks)) \(String(describing: admin))")
            } catch {
                XCTAssertEqual((error as? EmberError)?.code, .invalidArgument, "\(error)")
            }
        }
    }

    /// The token parser never traps: 3,000 mutants of a valid token (bytes changed, cut,
    /// segments swapped, deep JSON) each verify or are UNAUTHENTICATED.
    func testMutatedTokensVerifyOrAreUnauthenticated() async throws {
        let v = try await verifier()
        let valid = try await TokenVerifierTests.hs256(TokenVerifierTests.claims())
        // Deterministic choices (the same mutants on every run): a multiplicative hash of (i, j).
        func pick(_ i: Int, _ j: Int, below n: Int) -> Int { Int(UInt64(truncatingIfNeeded: (i &* 31 &+ j) &* 2_654_435_761) % UInt64(n)) }
        let parts = valid.split(separator: ".").map(String.init)
        let alphabet = Array("ABCxyz019-_.=+/ {}\"\\:,[]\u{0}é".utf8)
        let deep = String(repeating: "[", count: 10_000)
        let deepSegment = Data(("{\"sub\":" + deep).utf8).base64EncodedString()
        var accepted = 0
        for i in 0..<3_000 {
            var bytes = Array(valid.utf8)
            switch i % 4 {
            case 0:
                for j in 0...pick(i, 0, below: 5) {
                    bytes[pick(i, 2 * j + 1, below: bytes.count)] = alphabet[pick(i, 2 * j + 2, below: alphabet.count)]
                }
            case 1: bytes = Array(bytes.prefix(pick(i, 0, below: bytes.count)))
            case 2: bytes = Array((parts[1] + "." + parts[0] + "." + parts[2]).utf8)
            default: bytes = Array((parts[0] + "." + deepSegment + "." + parts[2]).utf8)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                if case .user = try await v.caller(authorization: "Bearer " + text) { accepted += 1 }
            } catch let e as RPCError {
                XCTAssertEqual(e.code, .unauthenticated)
            }
        }
        XCTAssertLessThan(accepted, 3_000)
    }

    static func openssl(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw EmberError(.internal, "openssl \(args) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}

extension Data {
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
