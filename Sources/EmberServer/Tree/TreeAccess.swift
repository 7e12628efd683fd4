import EmberModel
import EmberTreeRules
import Foundation
import EmberConcurrency
import GRPCCore

/// Responsible for: who calls the tree's port, and which rules decide for them.
///
/// Callers: the admin's token (`--admin-token-file`, else `owner` on a loopback server, as the
/// emulator) passes every rule, unless `auth_variable_override` narrows it (then the rules run
/// with that `auth`, `null` being signed out); an ID token (`Authorization: Bearer`, `auth=` or
/// `access_token=`) verified as on the gRPC port, whose audience is the namespace's project
/// (the namespace, less a `-default-rtdb` suffix), is `auth = {uid, provider, token}`; no token
/// is signed out. A bad token is 401 with the reason.
///
/// Rules: a namespace's own (set by `PUT /.settings/rules.json`, kept in the store under a
/// reserved key, so they survive a restart), else the server's default: `--database-rules`, else
/// locked (a server with Firestore rules), else open (a loopback development server). Rules
/// from a file or a PUT also require `.indexOn` for child and value orders, as the Realtime
/// Database does; the built-in defaults do not. Thread-safe (a lock over the cache).
final class TreeAccess: Sendable {
    /// The stored tree's key under which namespaces' own rules live.
    static let rulesKey = ".rules"

    struct Caller: Sendable {
        /// The admin without an override: no rule applies.
        let bypassesRules: Bool
        let auth: TreeRulesAuth
        /// When the ID token expires (seconds since 1970); nil for the admin and the signed out.
        let expires: Double?
        static let admin = Caller(bypassesRules: true, auth: .signedOut, expires: nil)
    }

    /// The rules deciding a namespace, and whether they require indexes.
    struct Decider: Sendable {
        let rules: TreeRules
        let requiresIndexes: Bool
    }

    private let door: TreeDoor
    private let verifier: TokenVerifier
    private let adminToken: [UInt8]?
    private let issuerTemplate: String
    private let defaultDecider: Decider
    /// Namespaces' own rules as loaded (nil inside: none of its own), and per namespace what to
    /// tell when its rules change (the event streams re-check).
    private struct Cache {
        var own: [String: TreeRules?] = [:]
        var watchers: [String: [ObjectIdentifier: @Sendable () -> Void]] = [:]
    }
    private let cache = LockedValueBox(Cache())
    /// Whether other instances share the tree (`followSharedRules`).
    private let shared = LockedValueBox(false)

    init(door: TreeDoor, verifier: TokenVerifier, adminToken: String?, issuerTemplate: String, defaultDecider: Decider) {
        self.door = door
        self.verifier = verifier
        self.adminToken = adminToken.map { Array($0.utf8) }
        self.issuerTemplate = issuerTemplate
        self.defaultDecider = defaultDecider
    }

    /// The caller of a request with this `Authorization` header and these parameters.
    func caller(authorization: String?, params: [String: String], namespace: String) async throws -> Caller {
        var token: String?
        if let h = authorization {
            let parts = h.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw TreeRESTError(401, "Invalid authorization header: expected 'Bearer <token>'")
            }
            token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
        token = token ?? params["auth"] ?? params["access_token"]
        let override = params["auth_variable_override"]
        guard let token, !token.isEmpty else {
            if override != nil { throw TreeRESTError(401, "auth_variable_override is only for the admin") }
            return Caller(bypassesRules: false, auth: .signedOut, expires: nil)
        }
        if let adminToken, TokenVerifier.constantTimeEqual(Array(token.utf8), adminToken) {
            guard let override else { return .admin }
            do {
                return Caller(bypassesRules: false, auth: try TreeRulesAuth(override: try ValueJSON.parse(override, plain: true)), expires: nil)
            } catch {
                throw TreeRESTError(400, "Invalid auth_variable_override: a JSON object or null")
            }
        }
        if override != nil { throw TreeRESTError(401, "auth_variable_override is only for the admin") }
        let verified: VerifiedToken
        do {
            guard case .user(let v) = try await verifier.caller(authorization: "Bearer " + token) else {
                return .admin
            }
            verified = v
        } catch {
            throw TreeRESTError(401, TreeAccess.reason(error))
        }
        let project = namespace.hasSuffix("-default-rtdb") ? String(namespace.dropLast("-default-rtdb".count)) : namespace
        guard verified.audience.contains(project) else {
            throw TreeRESTError(401, "Invalid ID token: its audience is not the project '\(project)'")
        }
        let issuer = issuerTemplate.replacingOccurrences(of: "{project}", with: project)
        guard verified.issuer == issuer else { throw TreeRESTError(401, "Invalid ID token: its issuer is not '\(issuer)'") }
        var expires: Double?
        if let e = verified.auth.token.entries.first(where: { $0.key == "exp" })?.value {
            switch e {
            case .int(let i): expires = Double(i)
            case .double(let d): expires = d
            default: break
            }
        }
        return Caller(bypassesRules: false, auth: TreeRulesAuth(uid: verified.auth.uid, claims: verified.auth.token), expires: expires)
    }

    private static func reason(_ error: any Error) -> String {
        if let e = error as? RPCError { return e.message }
        let text = "\(error)"
        if let r = text.range(of: "Invalid ID token") { return String(text[r.lowerBound...]) }
        return "Invalid ID token: \(text)"
    }

    /// The rules deciding `namespace` now (its own are read from the store once).
    func decider(_ namespace: String) async -> Decider {
        // Shared with other instances, the rules are read at every request (after the log's
        // read barrier), parsed again only when their text changed.
        if !shared.current, cache.withLockedValue({ $0.own[namespace] != nil }) { return currentDecider(namespace) }
        let stored = await door.read(TreePath(unchecked: [TreeAccess.rulesKey, namespace]))
        var source: String?
        if case .string(let s) = stored { source = s }
        let unchanged = cache.withLockedValue { c -> Bool in
            guard let own = c.own[namespace] else { return false }
            return own?.source == source
        }
        if unchanged { return currentDecider(namespace) }
        let rules = source.flatMap { try? TreeRules(source: $0) }
        cache.withLockedValue { c in
            if shared.current || c.own[namespace] == nil { c.own[namespace] = .some(rules) }
        }
        return currentDecider(namespace)
    }

    /// Stores `rules` as the namespace's own (once in the file, they decide).
    func setRules(_ rules: TreeRules, for namespace: String) async throws {
        try await door.write { _ in [TreeWriteOp(path: TreePath(unchecked: [TreeAccess.rulesKey, namespace]), value: .string(rules.source))] }
        let tell = cache.withLockedValue { c in
            c.own[namespace] = .some(rules)
            return Array((c.watchers[namespace] ?? [:]).values)
        }
        for t in tell { t() }
    }

    /// The rules deciding `namespace`, as last loaded (`decider(_:)` loads them).
    func currentDecider(_ namespace: String) -> Decider {
        guard let cached = cache.withLockedValue({ $0.own[namespace] }) else { return defaultDecider }
        return cached.map { Decider(rules: $0, requiresIndexes: true) } ?? defaultDecider
    }

    /// Follows rules set through other instances sharing the tree (`--postgres`): a change
    /// under the rules key drops that namespace's cached rules (read again at the next request)
    /// and tells its watchers.
    func followSharedRules() {
        shared.withLockedValue { $0 = true }
        door.watch(TreePath(unchecked: [TreeAccess.rulesKey])) { [weak self] path in
            guard let self else { return }
            let tell: [@Sendable () -> Void] = cache.withLockedValue { c in
                let namespaces = path.count >= 2 ? [path.segments[1]] : Array(c.own.keys)
                var out: [@Sendable () -> Void] = []
                for ns in namespaces {
                    c.own[ns] = nil
                    out += Array((c.watchers[ns] ?? [:]).values)
                }
                return out
            }
            for t in tell { t() }
        }
    }

    /// Calls `changed` (on any thread) whenever `namespace`'s rules change, until `unwatch`.
    func watch(_ namespace: String, _ id: ObjectIdentifier, _ changed: @escaping @Sendable () -> Void) {
        cache.withLockedValue { $0.watchers[namespace, default: [:]][id] = changed }
    }

    func unwatch(_ namespace: String, _ id: ObjectIdentifier) {
        cache.withLockedValue { $0.watchers[namespace]?[id] = nil }
    }

}
