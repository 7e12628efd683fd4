import Dispatch
import EmberModel
import EmberTreeRules
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
/// Callers and their rules are `TreeAccess`'s: a read is decided (with its query) on the state
/// it reads, a write inside the backend's commit on the state it applies to; a refusal is 401
/// "Permission denied". `GET/PUT /.settings/rules.json` (the admin's) read and set a namespace's
/// rules. A child or value order the rules index nowhere is 400 "Index not defined".
struct TreeREST: Sendable {
    /// The stored tree's key under which namespaces live ('.' cannot start a user's key).
    static let namespacesKey = ".ns"

    let door: TreeDoor
    let access: TreeAccess
    let defaultNamespace: String
    let maxBodyBytes: Int
    /// Which namespaces may hold priorities (shared by every door's writes).
    let priorityFlags = TreePriorityFlags()

    func handle(_ request: TreeHTTPRequest) async -> TreeHTTPResponse {
        do {
            return try await serve(request)
        } catch let e as TreeRESTError {
            if e.status == 412, let current = e.current {
                return .json(412, TreeJSON.render(current), headers: [("ETag", TreeHash.etag(current, priorities: e.priorities))])
            }
            return .error(e.status, e.message)
        } catch let e as EmberError {
            // Rules refusals and if-match mismatches are TreeRESTErrors by now: an EmberError is
            // bad input, or the store refusing (full, read-only, failing): nothing was applied.
            return .error(e.code == .invalidArgument ? 400 : 500, e.message)
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
        let ns = try namespace(line, host: request.header("host"))
        let caller = try await access.caller(authorization: request.header("authorization"), params: line.params, namespace: ns)
        if let special = line.special { return try await settings(special, method, line, ns, caller, request) }
        let decider = await access.decider(ns)
        let who = Who(caller: caller, rules: decider.rules, namespace: ns)
        let location = who.base.appending(line.path)
        let pretty = line.params["print"] == "pretty"
        let silent = line.params["print"] == "silent"
        if let p = line.params["print"], !["pretty", "silent"].contains(p) { throw TreeRESTError(400, "print must be 'pretty' or 'silent', got '\(p)'") }
        if let w = line.params["writeSizeLimit"], !TreeREST.writeSizeLimits.contains(w) {
            throw TreeRESTError(400, "writeSizeLimit must be tiny, small, medium, large or unlimited, got '\(w)'")
        }
        let timeout = try line.params["timeout"].map(TreeREST.timeout)
        let wantsETag = request.header("x-firebase-etag")?.lowercased() == "true"
        switch method {
        case "GET":
            let started = DispatchTime.now().uptimeNanoseconds
            let response = try await get(line, location, request, who, decider, pretty: pretty, silent: silent, wantsETag: wantsETag)
            if let timeout, response.stream == nil, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 > timeout {
                throw TreeRESTError(400, "The read took longer than timeout=\(line.params["timeout"]!)")
            }
            return response
        case "PUT", "POST", "PATCH", "DELETE":
            if line.params.keys.contains(where: { TreeRESTQuery.parameters.contains($0) || $0 == "shallow" }) {
                throw TreeRESTError(400, "Query parameters and shallow are only for GET")
            }
            guard request.body.count <= maxBodyBytes else {
                throw TreeRESTError(400, "WRITE_TOO_BIG: Data to write exceeds the maximum size that can be modified with a single request.")
            }
            return try await write(method, line, location, request, who, pretty: pretty, silent: silent, wantsETag: wantsETag)
        default:
            throw TreeRESTError(405, "Method \(request.method) is not supported")
        }
    }

    /// The request's namespace: `ns`, else the Host's first label (not for an address or
    /// localhost), else the default.
    func namespace(_ line: TreeRequestLine, host: String?) throws -> String {
        try namespace(param: line.params["ns"], host: host)
    }

    func namespace(param: String?, host: String?) throws -> String {
        var ns = param
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

    private func get(_ line: TreeRequestLine, _ location: TreePath, _ request: TreeHTTPRequest, _ who: Who, _ decider: TreeAccess.Decider,
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
        let streaming = request.header("accept")?.lowercased().contains("text/event-stream") == true
        if streaming && shallow == "true" { throw TreeRESTError(400, "shallow cannot be streamed") }
        let now = TreeREST.nowMillis()
        let rulesQuery = query?.rulesQuery
        let export = line.params["format"] == "export"
        // Priorities are read only where they show: the export format, ETags, a priority order,
        // `/.priority`.
        let needsPriorities = export || wantsETag || request.header("if-none-match") != nil || query?.byPriority == true || line.priority
        let priorityPath = TreePriorities.base(who.namespace).appending(line.path)
        let (allowed, read, priorities) = await door.inspect { [who] read in
            guard who.mayRead(line.path, query: rulesQuery, nowMillis: now, read) else { return (false, TreeValue.null, TreeValue.null) }
            if streaming { return (true, .null, .null) }
            return (true, line.priority ? .null : read(location), needsPriorities ? read(priorityPath) : .null)
        }
        guard allowed else { throw TreeRESTError(401, "Permission denied") }
        if line.priority {
            if query != nil || shallow != nil || streaming { throw TreeRESTError(400, "A priority is read alone: no query, shallow or stream") }
            return .json(200, TreeJSON.render(TreePriorities.own(priorities), pretty: pretty))
        }
        if let index = query?.indexName, decider.requiresIndexes, !decider.rules.hasIndex(index, at: line.path) {
            throw TreeRESTError(400, "Index not defined, add \".indexOn\": \"\(index)\", for path \"\(line.path)\", to the rules")
        }
        if streaming {
            return TreeHTTPResponse(status: 200, stream: TreeStreamRequest(location: location, query: query, priorities: priorityPath,
                                                                           guard: TreeStreamGuard(access: access, who: who, location: line.path, query: rulesQuery)))
        }
        var value = read
        if let query { value = query.apply(to: value, priorities: priorities) }
        if shallow == "true", case .object(let o) = value {
            var out: [String: TreeValue] = [:]
            for (k, c) in o.children { out[k.s] = c.isLeaf ? c : .bool(true) }
            value = .object(TreeObject(out))
        }
        let etag = TreeHash.etag(value, priorities: priorities)
        if export { value = TreePriorities.export(value, priorities) }
        if let none = request.header("if-none-match"), none == etag {
            return TreeHTTPResponse(status: 304, headers: [("ETag", etag)])
        }
        // Asked for (X-Firebase-ETag), or the answer to a conditional GET (get_if_changed).
        var headers = wantsETag || request.header("if-none-match") != nil ? [("ETag", etag)] : []
        if let name = line.params["download"] {
            var quoted = ""
            TreeJSON.quote(name.filter { $0 != "\r" && $0 != "\n" }, into: &quoted)
            headers.append(("Content-Disposition", "attachment; filename=\(quoted)"))
        }
        if silent { return TreeHTTPResponse(status: 204, headers: headers) }
        return .json(200, TreeJSON.render(value, pretty: pretty), headers: headers)
    }

    private func write(_ method: String, _ line: TreeRequestLine, _ location: TreePath, _ request: TreeHTTPRequest, _ who: Who,
                       pretty: Bool, silent: Bool, wantsETag: Bool) async throws -> TreeHTTPResponse {
        guard let text = String(validating: request.body, as: UTF8.self) else {
            throw TreeRESTError(400, "Invalid data; couldn't parse JSON object, array, or value: the body is not UTF-8")
        }
        let ifMatch = request.header("if-match")
        if ifMatch != nil && (method == "PATCH" || method == "POST") { throw TreeRESTError(400, "if-match is only for PUT and DELETE") }
        // What to write, relative to the location, as (path, input) pairs.
        var inputs: [(TreePath, TreeInput)] = []
        var pushed: String?
        if line.priority { return try await writePriority(method, line, location, request, who, text: text, silent: silent) }
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
        let priorityBase = TreePriorities.base(who.namespace)
        let expectation = ifMatch.map { expected in
            TreeWrites.Expectation(location: location) { value, priorities in TreeHash.etag(value, priorities: priorities) == expected }
        }
        let ops = try await TreeWrites(door: door, priorityFlags: priorityFlags).apply(who, inputs, expecting: expectation)
        var headers: [(String, String)] = []
        if wantsETag {
            // The ETag of the location after the write (of what a POST pushed, the new child).
            let target = ops.count == 1 ? ops[0].path : location
            let priorityPath = priorityBase.appending(TreeREST.inNamespace(target))
            let (value, priorities) = await door.inspect { read in (read(target), read(priorityPath)) }
            headers.append(("ETag", TreeHash.etag(value, priorities: priorities)))
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

    /// `PUT|DELETE /<path>/.priority.json`: sets or removes the priority of the node at `path`
    /// (nothing where there is no node), judged by the rules as a write of the node's value.
    private func writePriority(_ method: String, _ line: TreeRequestLine, _ location: TreePath, _ request: TreeHTTPRequest, _ who: Who,
                               text: String, silent: Bool) async throws -> TreeHTTPResponse {
        guard method == "PUT" || method == "DELETE" else { throw TreeRESTError(400, "A priority is set with PUT or removed with DELETE") }
        guard request.header("if-match") == nil else { throw TreeRESTError(400, "if-match is not supported on a priority") }
        let priority: TreeValue
        do { priority = method == "DELETE" ? .null : try TreeJSON.priority(text, at: line.path) } catch let e as EmberError {
            throw TreeRESTError(400, e.message)
        }
        let path = TreePriorities.base(who.namespace).appending(line.path).child(TreePriorities.key)
        let flags = priorityFlags
        let now = TreeREST.nowMillis()
        let written = WrittenValues()
        do {
            try await door.write { [who] read in
                let value = read(location)
                guard value.exists else { return [] }
                let op = TreeWriteOp(path: path, value: priority)
                if priority.exists { flags.mark(who.namespace) }
                guard who.mayWrite([TreeWriteOp(path: location, value: value)], priorityOps: [op], nowMillis: now, read) else {
                    written.refusal = TreeRESTError(401, "Permission denied")
                    throw EmberError(.permissionDenied, "Permission denied")
                }
                return [op]
            }
        } catch {
            throw written.refusal ?? error
        }
        if silent { return TreeHTTPResponse(status: 204) }
        return .json(200, TreeJSON.render(priority))
    }

    private func parse(_ text: String, at path: TreePath) throws -> TreeInput {
        do { return try TreeJSON.input(text, at: TreeREST.inNamespace(path)) } catch let e as EmberError { throw TreeRESTError(400, e.message) }
    }

    /// `writeSizeLimit`'s values. Ember applies a write of up to the request limit in one commit
    /// well within the smallest target (tiny, 1 s), so none is refused for it.
    static let writeSizeLimits: Set<String> = ["tiny", "small", "medium", "large", "unlimited"]

    /// `timeout` (`<n>ms`, `<n>s` or `<n>min`, at most 15 min) in seconds.
    static func timeout(_ text: String) throws -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1)]
        for (unit, scale) in units where text.hasSuffix(unit) {
            let digits = text.dropLast(unit.count)
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let n = Double(digits), n > 0 else { break }
            let seconds = n * scale
            guard seconds <= 900 else { throw TreeRESTError(400, "timeout is at most 15min, got '\(text)'") }
            return seconds
        }
        throw TreeRESTError(400, "timeout must be a positive number of ms, s or min (e.g. 3s), got '\(text)'")
    }

    static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// `GET|PUT /.settings/rules.json` (the admin's): the namespace's rules as given (comments
    /// and all), or with `format=strict` as plain JSON; a PUT checks and stores them, answering
    /// `{"status":"ok"}`, and they decide from then on (streams are checked again).
    private func settings(_ special: [String], _ method: String, _ line: TreeRequestLine, _ ns: String,
                          _ caller: TreeAccess.Caller, _ request: TreeHTTPRequest) async throws -> TreeHTTPResponse {
        guard special == [".settings", "rules"] else {
            throw TreeRESTError(404, "Not Found: '/\(special.joined(separator: "/")).json' (settings: /.settings/rules.json)")
        }
        guard caller.bypassesRules else { throw TreeRESTError(401, "Permission denied") }
        switch method {
        case "GET":
            if let f = line.params["format"], f != "strict" { throw TreeRESTError(400, "format must be 'strict', got '\(f)'") }
            let rules = await access.decider(ns).rules
            if line.params["format"] == "strict" { return .json(200, rules.strict) }
            return .json(200, rules.source)
        case "PUT":
            guard let text = String(validating: request.body, as: UTF8.self) else { throw TreeRESTError(400, "Error saving rules - the body is not UTF-8") }
            let rules: TreeRules
            do { rules = try TreeRules(source: text) } catch let e as TreeRulesError { throw TreeRESTError(400, "Error saving rules - \(e.message)") }
            try await access.setRules(rules, for: ns)
            return .json(200, "{\"status\":\"ok\"}")
        default:
            throw TreeRESTError(405, "Method \(method) is not supported on /.settings/rules.json (GET or PUT)")
        }
    }

    /// A stored path as its namespace's clients name it (without the namespace's two keys).
    static func inNamespace(_ path: TreePath) -> TreePath {
        TreePath(unchecked: Array(path.segments.dropFirst(2)))
    }
}

/// Responsible for: one request's caller and the rules deciding it, over the namespace's
/// stored tree: whether it may read a location (with its query) or apply overwrites. The admin
/// may do everything. Runs where the reads are consistent (the backend's queue).
struct Who: Sendable {
    let caller: TreeAccess.Caller
    let rules: TreeRules
    let namespace: String

    /// The namespace's root in the stored tree.
    var base: TreePath { TreePath(unchecked: [TreeREST.namespacesKey, namespace]) }

    /// `path` is the namespace's; `read` reads the stored tree.
    func mayRead(_ path: TreePath, query: TreeRulesQuery?, nowMillis: Int64, _ read: (TreePath) -> TreeValue) -> Bool {
        if caller.bypassesRules { return true }
        return withoutActuallyEscaping(read) { read in
            let base = self.base
            let priorities = TreePriorities.base(namespace)
            return rules.canRead(path, auth: caller.auth, query: query, nowMillis: nowMillis, read: { read(base.appending($0)) },
                                 priorities: { read(priorities.appending($0)) })
        }
    }

    /// `ops` and `priorityOps` (TreePriorities' layout) are stored paths.
    func mayWrite(_ ops: [TreeWriteOp], priorityOps: [TreeWriteOp] = [], nowMillis: Int64, _ read: (TreePath) -> TreeValue) -> Bool {
        if caller.bypassesRules { return true }
        let own = ops.map { TreeWriteOp(path: TreeREST.inNamespace($0.path), value: $0.value) }
        let priorities = TreePriorities.base(namespace)
        let ownPriorities = priorityOps.map { TreeWriteOp(path: TreePath(unchecked: Array($0.path.segments.dropFirst(2))), value: $0.value) }
        return withoutActuallyEscaping(read) { read in
            let base = self.base
            return rules.canWrite(own, auth: caller.auth, nowMillis: nowMillis, read: { read(base.appending($0)) },
                                  priorities: { read(priorities.appending($0)) }, priorityOps: ownPriorities)
        }
    }
}
