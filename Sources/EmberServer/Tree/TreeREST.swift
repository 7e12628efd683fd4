import EmberModel
import Foundation

/// Responsible for: the Realtime Database REST API over the backend's tree (firebase_admin.db and
/// curl unchanged): `GET/PUT/PATCH/POST/DELETE /<path>.json`, each namespace (`ns`, else the
/// Host's first label, else `defaultNamespace`) its own tree under a reserved key of the stored
/// tree; `print=silent|pretty`, `shallow`, `format=export`, queries (TreeRESTQuery), server
/// values (TreeJSON), ETags (TreeHash: `X-Firebase-ETag`, `if-match` → 412 with the current value
/// and its ETag, `if-none-match` → 304), push ids, `X-HTTP-Method-Override`. Errors are
/// `{"error": ...}` with the Realtime Database's statuses; a write is answered only once it is in
/// the file, and a refused one changes nothing.
///
/// Callers: `Bearer <admin token>` (or `owner` on a server without rules, as the emulator) is the
/// admin. Tree security rules are not implemented yet: on a server with (Firestore) rules only the
/// admin may use the tree, anyone else gets 401 "Permission denied"; without rules (loopback
/// only) everyone may do everything, as on the gRPC port.
struct TreeREST: Sendable {
    /// The stored tree's key under which namespaces live ('.' cannot start a user's key).
    static let namespacesKey = ".ns"

    let door: TreeDoor
    let defaultNamespace: String
    /// Whether callers other than the admin are refused (a server with rules).
    let adminOnly: Bool
    let adminToken: String?
    let maxBodyBytes: Int

    func handle(_ request: TreeHTTPRequest) async -> TreeHTTPResponse {
        do {
            return try await serve(request)
        } catch let e as TreeRESTError {
            if e.status == 412, let current = e.current {
                return .json(412, TreeJSON.render(current), headers: [("ETag", TreeHash.etag(current))])
            }
            return .error(e.status, e.message)
        } catch let e as EmberError {
            return .error(e.code == .invalidArgument ? 400 : (e.code == .permissionDenied ? 401 : 500), e.message)
        } catch {
            return .error(500, "\(error)")
        }
    }

    private func serve(_ request: TreeHTTPRequest) async throws -> TreeHTTPResponse {
        let line = try TreeRequestLine(uri: request.uri)
        var method = request.method.uppercased()
        if method == "POST", let o = request.header("x-http-method-override") ?? line.params["x-http-method-override"] {
            method = o.uppercased()
        }
        try authorize(request, line)
        let ns = try namespace(line, host: request.header("host"))
        if line.special != nil {
            throw TreeRESTError(404, "Not Found: '\(request.uri.split(separator: "?")[0])' (tree security rules and settings are not supported yet)")
        }
        let base = TreePath(unchecked: [TreeREST.namespacesKey, ns])
        let location = base.appending(line.path)
        let pretty = line.params["print"] == "pretty"
        let silent = line.params["print"] == "silent"
        if let p = line.params["print"], !["pretty", "silent"].contains(p) { throw TreeRESTError(400, "print must be 'pretty' or 'silent', got '\(p)'") }
        let wantsETag = request.header("x-firebase-etag")?.lowercased() == "true"
        switch method {
        case "GET":
            return try await get(line, location, request, pretty: pretty, silent: silent, wantsETag: wantsETag)
        case "PUT", "POST", "PATCH", "DELETE":
            if line.params.keys.contains(where: { TreeRESTQuery.parameters.contains($0) || $0 == "shallow" }) {
                throw TreeRESTError(400, "Query parameters and shallow are only for GET")
            }
            guard request.body.count <= maxBodyBytes else {
                throw TreeRESTError(400, "WRITE_TOO_BIG: Data to write exceeds the maximum size that can be modified with a single request.")
            }
            return try await write(method, line, location, request, pretty: pretty, silent: silent, wantsETag: wantsETag)
        default:
            throw TreeRESTError(405, "Method \(request.method) is not supported")
        }
    }

    /// The admin, or anyone on a server without rules; else 401.
    private func authorize(_ request: TreeHTTPRequest, _ line: TreeRequestLine) throws {
        var token: String?
        if let h = request.header("authorization") {
            let parts = h.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { token = String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        token = token ?? line.params["auth"] ?? line.params["access_token"]
        let isAdmin: Bool
        if let token, let adminToken {
            isAdmin = TokenVerifier.constantTimeEqual(Array(token.utf8), Array(adminToken.utf8))
        } else {
            isAdmin = !adminOnly && token == "owner"
        }
        if adminOnly && !isAdmin { throw TreeRESTError(401, "Permission denied") }
    }

    /// The request's namespace: `ns`, else the Host's first label (not for an address or
    /// localhost), else the default.
    private func namespace(_ line: TreeRequestLine, host: String?) throws -> String {
        var ns = line.params["ns"]
        if ns == nil, let host {
            let name = host.split(separator: ":")[0]
            let labels = name.split(separator: ".")
            if labels.count > 1, let first = labels.first, first.first?.isLetter == true, name != "localhost" { ns = String(first) }
        }
        let chosen = ns ?? defaultNamespace
        guard TreeREST.isValidNamespace(chosen) else {
            throw TreeRESTError(400, "Invalid namespace '\(chosen)': 1 to 63 letters, digits, '-' or '_'")
        }
        return chosen
    }

    static func isValidNamespace(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 63 && s.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
        }
    }

    private func get(_ line: TreeRequestLine, _ location: TreePath, _ request: TreeHTTPRequest,
                     pretty: Bool, silent: Bool, wantsETag: Bool) async throws -> TreeHTTPResponse {
        if request.header("if-match") != nil { throw TreeRESTError(400, "if-match is not supported on GET") }
        let query = try TreeRESTQuery.parse(line.params)
        let shallow = line.params["shallow"]
        if let shallow, shallow != "true" && shallow != "false" { throw TreeRESTError(400, "shallow must be 'true' or 'false'") }
        if shallow == "true" {
            if query != nil || line.params["format"] != nil {
                throw TreeRESTError(400, "Mixing 'shallow' and other query parameters is not allowed")
            }
        }
        if let f = line.params["format"], f != "export" { throw TreeRESTError(400, "format must be 'export', got '\(f)'") }
        if request.header("accept")?.lowercased().contains("text/event-stream") == true {
            if shallow == "true" { throw TreeRESTError(400, "shallow cannot be streamed") }
            return TreeHTTPResponse(status: 200, stream: (location, query))
        }
        var value = await door.read(location)
        if let query { value = query.apply(to: value) }
        if shallow == "true", case .object(let o) = value {
            var out: [String: TreeValue] = [:]
            for (k, c) in o.children { out[k.s] = c.isLeaf ? c : .bool(true) }
            value = .object(TreeObject(out))
        }
        let etag = TreeHash.etag(value)
        if let none = request.header("if-none-match"), none == etag {
            return TreeHTTPResponse(status: 304, headers: [("ETag", etag)])
        }
        // Asked for (X-Firebase-ETag), or the answer to a conditional GET (get_if_changed).
        let headers = wantsETag || request.header("if-none-match") != nil ? [("ETag", etag)] : []
        if silent { return TreeHTTPResponse(status: 204, headers: headers) }
        return .json(200, TreeJSON.render(value, pretty: pretty), headers: headers)
    }

    private func write(_ method: String, _ line: TreeRequestLine, _ location: TreePath, _ request: TreeHTTPRequest,
                       pretty: Bool, silent: Bool, wantsETag: Bool) async throws -> TreeHTTPResponse {
        guard let text = String(validating: request.body, as: UTF8.self) else {
            throw TreeRESTError(400, "Invalid data; couldn't parse JSON object, array, or value: the body is not UTF-8")
        }
        let ifMatch = request.header("if-match")
        if ifMatch != nil && (method == "PATCH" || method == "POST") { throw TreeRESTError(400, "if-match is only for PUT and DELETE") }
        // What to write, relative to the location, as (path, input) pairs.
        var inputs: [(TreePath, TreeInput)] = []
        var pushed: String?
        switch method {
        case "PUT", "POST":
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw TreeRESTError(400, "Invalid data; couldn't parse JSON object, array, or value.")
            }
            var target = location
            if method == "POST" {
                let id = PushId.next()
                pushed = id
                target = location.child(id)
            }
            let input = try parse(text, at: target)
            inputs = [(target, input)]
        case "PATCH":
            let v: Value
            do { v = try ValueJSON.parse(text, plain: true) } catch { throw TreeRESTError(400, "Invalid data; couldn't parse JSON object, array, or value.") }
            guard case .map(let m) = v else { throw TreeRESTError(400, "Invalid data; a PATCH needs a JSON object of paths and values.") }
            for (k, c) in m.entries {
                let sub: TreePath
                do { sub = try TreePath(parsing: k, context: "path in PATCH") } catch let e as EmberError { throw TreeRESTError(400, e.message) }
                guard !sub.isRoot else { throw TreeRESTError(400, "Invalid data; a PATCH key must name a child path, got '\(k)'") }
                inputs.append((location.appending(sub), try parse(ValueJSON.render(c, plain: true), at: location.appending(sub))))
            }
            do { try TreeLimits.validate(inputs.map { TreeWriteOp(path: TreeREST.inNamespace($0.0), value: $0.1.value) }) } catch let e as EmberError {
                throw TreeRESTError(400, e.message)
            }
        default: // DELETE
            inputs = [(location, TreeInput())]
        }
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let written = WrittenValues()
        let expected = ifMatch
        let toWrite = inputs
        do {
            try await door.write { read in
                if let expected {
                    let current = read(location)
                    if TreeHash.etag(current) != expected {
                        written.current = current
                        throw EmberError(.failedPrecondition, "The ETag does not match the location's")
                    }
                }
                let ops = toWrite.map { TreeWriteOp(path: $0.0, value: $0.1.resolved(at: $0.0, read: read, nowMillis: now)) }
                written.set(ops)
                return ops
            }
        } catch let e as EmberError where e.code == .failedPrecondition {
            throw TreeRESTError(412, e.message, current: written.current ?? .null)
        }
        var headers: [(String, String)] = []
        let ops = written.get()
        if wantsETag {
            // The ETag of the location after the write (of what a POST pushed, the new child).
            headers.append(("ETag", TreeHash.etag(ops.count == 1 ? ops[0].value : await door.read(location))))
        }
        if silent { return TreeHTTPResponse(status: 204, headers: headers) }
        switch method {
        case "POST":
            var body = "{\"name\":"
            TreeJSON.quote(pushed!, into: &body)
            return .json(200, body + "}", headers: headers)
        case "DELETE":
            return .json(200, "null", headers: headers)
        case "PATCH":
            var out = TreeValue.object(TreeObject())
            for op in ops { out.set(location.relative(op.path), op.value) }
            return .json(200, TreeJSON.render(out.childCount == 0 ? .null : out, pretty: pretty), headers: headers)
        default:
            return .json(200, TreeJSON.render(ops.first?.value ?? .null, pretty: pretty), headers: headers)
        }
    }

    private func parse(_ text: String, at path: TreePath) throws -> TreeInput {
        do { return try TreeJSON.input(text, at: TreeREST.inNamespace(path)) } catch let e as EmberError { throw TreeRESTError(400, e.message) }
    }

    /// A stored path as its namespace's clients name it (without the namespace's two keys).
    static func inNamespace(_ path: TreePath) -> TreePath {
        TreePath(unchecked: Array(path.segments.dropFirst(2)))
    }
}

/// Responsible for: handing the overwrites a computed write made (on the backend's queue) back to
/// the request that asked for it. Thread-safe.
final class WrittenValues: @unchecked Sendable {
    private let lock = NSLock()
    private var ops: [TreeWriteOp] = []
    private var mismatched: TreeValue?
    /// The value an `if-match` found instead.
    var current: TreeValue? {
        get { lock.lock(); defer { lock.unlock() }; return mismatched }
        set { lock.lock(); mismatched = newValue; lock.unlock() }
    }
    func set(_ o: [TreeWriteOp]) { lock.lock(); ops = o; lock.unlock() }
    func get() -> [TreeWriteOp] { lock.lock(); defer { lock.unlock() }; return ops }
}
