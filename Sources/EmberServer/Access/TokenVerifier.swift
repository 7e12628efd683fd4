import EmberModel
import EmberRules
import Foundation
import GRPCCore
import JWTKit

/// Responsible for: turning an `authorization` header into a `Caller`. `Bearer <admin token>` is
/// the admin; any other bearer value must be a JWT signed with HS256 by the shared secret or with
/// RS256/ES256 by the key of the JWKS its `kid` names (the header's `alg` picks which, so one
/// kind of key is never used as another), with `exp` in the future and `iat`, `nbf` and `auth_time` not in it, each within
/// `leeway`, and a non-empty `sub` (the uid). No header is the anonymous caller; anything else
/// is UNAUTHENTICATED. `request.auth.token` gets every claim. A token that verified is
/// remembered until it expires (`TokenCache`), so a client's later calls skip the check.
///
///     let v = try await TokenVerifier(secret: Array("s3cret".utf8), jwks: nil, adminToken: "owner-token")
///     try await v.caller(authorization: "Bearer eyJ...")   // .user(...)
struct TokenVerifier: Sendable {
    static let leeway: Double = 30
    /// The largest token accepted, in bytes (Firebase ID tokens are about 1 KB).
    static let maxTokenBytes = 16 << 10

    private let hmac: JWTKeyCollection?
    private let jwks: JWTKeyCollection?
    /// The key ids of the JWKS: an RS256/ES256 token must name one (`kid`).
    private let jwksKids: Set<String>
    private let adminToken: [UInt8]?
    /// The clock, in seconds since 1970 (tests move it).
    var now: @Sendable () -> Double = { Date().timeIntervalSince1970 }
    /// Tokens that verified, until they expire.
    let cache = TokenCache()

    /// `secret`: the HS256 key; `jwks`: a JSON Web Key Set (RSA or EC public keys, each with a
    /// `kid`); `adminToken`: the admin's bearer value. Any of them may be absent.
    init(secret: [UInt8]?, jwks: String?, adminToken: String?) async throws {
        if let secret {
            guard secret.count >= 16 else { throw EmberError.invalidArgument("The HS256 secret must be at least 16 bytes") }
            hmac = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        } else {
            hmac = nil
        }
        if let jwks {
            do {
                self.jwks = try await JWTKeyCollection().add(jwksJSON: jwks)
            } catch {
                throw EmberError.invalidArgument("Invalid JWKS: \(error)")
            }
            let keys = (try? JSONSerialization.jsonObject(with: Data(jwks.utf8)) as? [String: Any])?["keys"] as? [[String: Any]] ?? []
            jwksKids = Set(keys.compactMap { $0["kid"] as? String })
            guard !jwksKids.isEmpty else { throw EmberError.invalidArgument("Invalid JWKS: no key with a 'kid'") }
        } else {
            self.jwks = nil
            jwksKids = []
        }
        if let adminToken {
            guard adminToken.utf8.count >= 16 else { throw EmberError.invalidArgument("The admin token must be at least 16 bytes") }
        }
        self.adminToken = adminToken.map { Array($0.utf8) }
    }

    func caller(authorization: String?) async throws -> Caller {
        guard let authorization else { return .anonymous }
        guard authorization.utf8.count <= Self.maxTokenBytes + 7 else { throw unauthenticated("the token is too large") }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw unauthenticated("expected 'Bearer <token>'") }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        if let adminToken, TokenVerifier.constantTimeEqual(Array(token.utf8), adminToken) { return .admin }
        let t = now()
        if let known = cache.token(token, now: t) { return .user(known) }
        let claims = try await verify(token)
        let verified = VerifiedToken(auth: RulesAuth(uid: claims.string("sub")!, token: claims.claims),
                                     audience: claims.audience, issuer: claims.string("iss"))
        cache.remember(token, verified, expires: claims.seconds("exp")! + Self.leeway)
        return .user(verified)
    }

    private func verify(_ token: String) async throws -> TokenClaims {
        let keys: JWTKeyCollection?
        let header = try TokenVerifier.header(of: token)
        switch header["alg"] as? String {
        case "HS256": keys = hmac
        case "RS256", "ES256":
            // The key the token names, never a default one.
            guard let kid = header["kid"] as? String, jwksKids.contains(kid) else {
                throw unauthenticated("the token's 'kid' names no key of the JWKS")
            }
            keys = jwks
        case let alg: throw unauthenticated("tokens signed with '\(alg ?? "?")' are not accepted (HS256, RS256 or ES256)")
        }
        guard let keys else { throw unauthenticated("this server has no key for the token's algorithm") }
        let claims: TokenClaims
        do {
            claims = try await keys.verify(token, as: TokenClaims.self)
        } catch {
            throw unauthenticated("the token does not verify (\(error))")
        }
        let t = now()
        guard let exp = claims.seconds("exp") else { throw unauthenticated("the token has no 'exp'") }
        guard exp + Self.leeway > t else { throw unauthenticated("the token has expired") }
        guard let iat = claims.seconds("iat") else { throw unauthenticated("the token has no 'iat'") }
        guard iat - Self.leeway <= t else { throw unauthenticated("the token was issued in the future") }
        if claims.claims["nbf"] != nil {
            guard let nbf = claims.seconds("nbf") else { throw unauthenticated("the token's 'nbf' is not a number") }
            guard nbf - Self.leeway <= t else { throw unauthenticated("the token is not valid yet ('nbf' is in the future)") }
        }
        if let authTime = claims.seconds("auth_time"), authTime - Self.leeway > t {
            throw unauthenticated("the token's auth_time is in the future")
        }
        guard let sub = claims.string("sub"), !sub.isEmpty, sub.utf8.count <= 128 else {
            throw unauthenticated("the token's 'sub' (the user id) must be a non-empty string of at most 128 bytes")
        }
        return claims
    }

    /// The header of a compact JWT (its `alg` a string).
    static func header(of token: String) throws -> [String: Any] {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let header = base64URLDecode(segments[0]),
              let object = try? JSONSerialization.jsonObject(with: Data(header)) as? [String: Any],
              object["alg"] is String
        else { throw unauthenticated("the token is not a JWT") }
        return object
    }

    static func base64URLDecode(_ s: Substring) -> [UInt8]? {
        var b64 = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        return Data(base64Encoded: b64).map { Array($0) }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}

func unauthenticated(_ why: String) -> RPCError {
    RPCError(code: .unauthenticated, message: "Invalid ID token: \(why)")
}
