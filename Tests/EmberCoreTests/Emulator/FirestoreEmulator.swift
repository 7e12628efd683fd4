// Support for EmulatorDifferentialTests (not a test of its own): runs the Cloud Firestore emulator
// that `gcloud` installs, on a free 127.0.0.1 port, talks to it over its REST API, and converts
// Ember `Value`s to and from Firestore's typed JSON ({"integerValue": "1"}, {"doubleValue": "NaN"}...).
import EmberConcurrency
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import EmberModel

/// Responsible for: one emulator process group (gcloud -> bash -> java) from start to stop, and
/// the REST calls the tests make (commit, runQuery, clear). The process group and a small watchdog
/// (which stops the group if the test process dies without stopping it) are stopped by PID.
///
///     let emu = try FirestoreEmulator.start()        // bounded wait until it answers
///     try emu.commit([("items/a", fields)]); let r = try emu.runQuery(parent: "", query)
///     emu.stop()                                      // SIGTERM, then SIGKILL after a bound
final class FirestoreEmulator: @unchecked Sendable {
    static let project = "demo-ember"
    static let documentsRoot = "projects/demo-ember/databases/(default)/documents"

    let port: Int
    /// gcloud, the leader of its own process group (bash and java inherit the group).
    let pid: pid_t
    let watchdogPid: pid_t
    /// The write end of the watchdog's pipe: closing it (or dying) tells the watchdog to stop the group.
    private let watchdogPipe: Int32
    let logPath: String
    private let lock = NSLock()
    private var stopped = false
    private let session: URLSession

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, pid: pid_t, watchdogPid: pid_t, watchdogPipe: Int32, logPath: String) {
        self.port = port
        self.pid = pid
        self.watchdogPid = watchdogPid
        self.watchdogPipe = watchdogPipe
        self.logPath = logPath
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = 30
        config.timeoutIntervalForResource = 60
        session = URLSession(configuration: config)
    }

    deinit { stop() }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// The emulator exited because its port was bound by another process.
        let portWasTaken: Bool
        init(_ d: String, portWasTaken: Bool = false) {
            description = d
            self.portWasTaken = portWasTaken
        }
    }

    // MARK: finding and starting

    /// The path of `gcloud` when it is on PATH and its Firestore emulator component is installed,
    /// or why not.
    static func locate() -> Result<String, Failure> {
        let pathVar = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let candidates: [String] = pathVar.split(separator: ":").map { String($0) + "/gcloud" }
        guard let gcloud = candidates.first(where: { (c: String) in access(c, X_OK) == 0 }) else {
            return .failure(Failure("`gcloud` is not on PATH"))
        }
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let real = realpath(gcloud, &buf) != nil ? String(cString: buf) : gcloud
        let sdkRoot = ((real as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let component = sdkRoot + "/platform/cloud-firestore-emulator"
        if FileManager.default.fileExists(atPath: component) { return .success(gcloud) }
        return .failure(Failure("gcloud is at \(real) but \(component) does not exist: run `gcloud components install cloud-firestore-emulator`"))
    }

    /// Starts the emulator and waits (at most `timeout` s) until it answers. `freePort()` releases
    /// its port before the emulator binds it, and another process (an outgoing connection among
    /// them) may take it in between: an emulator that exits with "Address already in use" is
    /// started again on another port, three attempts in all. Other failures are thrown at once.
    static func start(timeout: Double = 60) throws -> FirestoreEmulator {
        let gcloud = try locate().get()
        var attempt = 1
        while true {
            do {
                return try start(gcloud: gcloud, port: try freePort(), timeout: timeout)
            } catch let failure as Failure where attempt < 3 && failure.portWasTaken {
                attempt += 1
            }
        }
    }

    /// Starts the emulator on `port` (one attempt); `start(timeout:)` is what tests call.
    static func start(gcloud: String, port: Int, timeout: Double) throws -> FirestoreEmulator {
        let logPath = NSTemporaryDirectory() + "ember-firestore-emulator-\(getpid())-\(port).log"
        var env = ProcessInfo.processInfo.environment
        env["CLOUDSDK_CORE_DISABLE_PROMPTS"] = "1"
        env["CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK"] = "1"
        // The watchdog starts first and holds the read end of a pipe whose only write end this
        // process keeps (close-on-exec, so no child inherits it). It reads the emulator's process
        // group, then waits for end of file: that comes when this process closes the pipe in stop()
        // or dies in any way (normal exit, failed assertion, trap, SIGKILL). It then stops the group.
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure("pipe() failed: errno \(errno)") }
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        let script = "read pg || exit 0; case $pg in ''|*[!0-9]*) exit 0;; esac; "
            + "while read line; do :; done; kill -TERM -$pg 2>/dev/null; "
            + "for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 -$pg 2>/dev/null || exit 0; sleep 1; done; kill -KILL -$pg 2>/dev/null"
        let watchdog: pid_t
        do {
            watchdog = try spawn("/bin/sh", ["sh", "-c", script], env: env, logPath: "/dev/null", stdinFD: fds[0])
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[0])
        let pid: pid_t
        do {
            pid = try spawn(gcloud, ["gcloud", "beta", "emulators", "firestore", "start",
                                     "--host-port=127.0.0.1:\(port)", "--project=\(project)"],
                            env: env, logPath: logPath)
        } catch {
            close(fds[1])
            terminateGroup(watchdog, grace: 2)
            throw error
        }
        let line = "\(pid)\n"
        _ = line.withCString { write(fds[1], $0, strlen($0)) }
        let emu = FirestoreEmulator(port: port, pid: pid, watchdogPid: watchdog, watchdogPipe: fds[1], logPath: logPath)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let (status, body) = try? emu.http("GET", "/", body: nil, timeout: 2), status == 200, body.hasPrefix("Ok") {
                return emu
            }
            var st: Int32 = 0
            if waitpid(pid, &st, WNOHANG) == pid {
                emu.stop()
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw Failure("the emulator exited during start-up (status \(st)); log \(logPath):\n\(emu.logTail())",
                              portWasTaken: log.contains("Address already in use"))
            }
            usleep(250_000)
        }
        emu.stop()
        throw Failure("the emulator did not answer on port \(port) within \(timeout) s; log \(logPath):\n\(emu.logTail())")
    }

    func logTail(_ n: Int = 3000) -> String {
        guard let s = try? String(contentsOfFile: logPath, encoding: .utf8) else { return "(no log)" }
        return String(s.suffix(n))
    }

    private static func freePort() throws -> Int {
        let bound = try boundSocket()
        close(bound.fd)
        return bound.port
    }

    /// A TCP socket bound (not listening) to a port the kernel picks on 127.0.0.1; the caller
    /// closes `fd`. While it is open, no other socket can bind that port.
    static func boundSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket() failed: errno \(errno)") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sp in
                bind(fd, sp, len) == 0 && getsockname(fd, sp, &len) == 0
            }
        }
        guard ok else {
            let e = errno
            close(fd)
            throw Failure("could not bind a free port: errno \(e)")
        }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// posix_spawn in a new process group (pgid == pid), stdin from `stdinFD` or /dev/null, stdout
    /// and stderr to `logPath`.
    private static func spawn(_ path: String, _ args: [String], env: [String: String], logPath: String,
                              stdinFD: Int32? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let fd = stdinFD {
            posix_spawn_file_actions_adddup2(&actions, fd, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setpgroup(&attr, 0)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attr, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        guard rc == 0 else { throw Failure("posix_spawn \(path) failed: \(String(cString: strerror(rc)))") }
        return pid
    }

    // MARK: stopping

    /// Stops the emulator's process group (SIGTERM, then SIGKILL after 10 s) and the watchdog. Idempotent.
    func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        guard first else { return }
        session.invalidateAndCancel()
        close(watchdogPipe)
        FirestoreEmulator.terminateGroup(pid, grace: 10)
        FirestoreEmulator.terminateGroup(watchdogPid, grace: 2)
    }

    static func terminateGroup(_ pgid: pid_t, grace: Double) {
        kill(-pgid, SIGTERM)
        if waitUntilGone(pgid, seconds: grace) { return }
        kill(-pgid, SIGKILL)
        _ = waitUntilGone(pgid, seconds: 5)
    }

    /// Reaps the leader (our child) and waits until no live (non-zombie) process is in the group.
    private static func waitUntilGone(_ pgid: pid_t, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            var st: Int32 = 0
            _ = waitpid(pgid, &st, WNOHANG)
            if liveMembers(ofGroup: pgid).isEmpty { return true }
            usleep(100_000)
        } while Date() < deadline
        return false
    }

    /// The processes of group `pgid` that are not zombies (from /proc/<pid>/stat).
    static func liveMembers(ofGroup pgid: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
            return kill(-pgid, 0) == 0 ? [pgid] : []
        }
        var out: [pid_t] = []
        for e in entries {
            guard let p = pid_t(e), let stat = try? String(contentsOfFile: "/proc/\(e)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 3, let group = pid_t(fields[2]) else { continue }
            if group == pgid && fields[0] != "Z" && fields[0] != "X" { out.append(p) }
        }
        return out
    }

    // MARK: REST

    /// One HTTP exchange, bounded by `timeout` (+5 s); returns the status and the body.
    func http(_ method: String, _ path: String, body: String?, timeout: Double = 30) throws -> (Int, String) {
        guard let url = URL(string: baseURL + path) else { throw Failure("bad URL \(path)") }
        var req = URLRequest(url: url)
        req.httpMethod = method
        req.timeoutInterval = timeout
        if let body {
            req.httpBody = Data(body.utf8)
            req.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        final class Box: @unchecked Sendable { var result: Result<(Int, String), Error>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: req) { data, response, error in
            if let error { box.result = .failure(error) } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                box.result = .success((status, String(decoding: data ?? Data(), as: UTF8.self)))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 5) == .timedOut {
            task.cancel()
            throw Failure("\(method) \(path): no answer within \(timeout + 5) s")
        }
        return try box.result!.get()
    }

    private var documentsURLPath: String { "/v1/" + FirestoreEmulator.documentsRoot }

    /// Deletes every document (between rounds).
    func clear() throws {
        let (status, body) = try http("DELETE", "/emulator/v1/projects/\(FirestoreEmulator.project)/databases/(default)/documents", body: nil)
        guard status == 200 else { throw Failure("clear: HTTP \(status): \(body)") }
    }

    /// Writes whole documents (a set each) in one commit; `path` is relative, as "items/a".
    func commit(_ docs: [(path: String, fields: MapValue)]) throws {
        let writes = docs.map { d in
            JSON.object([("update", .object([("name", .string(FirestoreEmulator.documentsRoot + "/" + d.path)),
                                              ("fields", FirestoreEmulator.encodeFields(d.fields))]))])
        }
        let (status, body) = try http("POST", documentsURLPath + ":commit", body: JSON.object([("writes", .array(writes))]).serialized())
        guard status == 200 else { throw Failure("commit: HTTP \(status): \(body)") }
    }

    enum QueryResult {
        /// Documents in the order the emulator returned them: relative path and fields.
        case documents([(path: String, fields: MapValue)])
        /// The emulator refused the query as invalid (HTTP 400 / INVALID_ARGUMENT): its message.
        case rejected(String)
    }

    /// Runs a structured query under `parent` ("" for the root, or a document path like "other/o1").
    func runQuery(parent: String, _ structuredQuery: JSON) throws -> QueryResult {
        let body = JSON.object([("structuredQuery", structuredQuery)]).serialized()
        let (status, text) = try http("POST", documentsURLPath + (parent.isEmpty ? "" : "/" + parent) + ":runQuery", body: body)
        let json = try JSON.parse(text)
        func errorMessage(_ j: JSON) -> (String, String)? {
            guard let e = j["error"] else { return nil }
            return (e["status"]?.string ?? "", e["message"]?.string ?? text)
        }
        if status == 400, let (_, message) = errorMessage(json) ?? errorMessage(json.array?.first ?? .null) {
            return .rejected(message)
        }
        guard status == 200, let items = json.array else { throw Failure("runQuery: HTTP \(status): \(text)") }
        var docs: [(path: String, fields: MapValue)] = []
        for item in items {
            if let (code, message) = errorMessage(item) {
                if code == "INVALID_ARGUMENT" { return .rejected(message) }
                throw Failure("runQuery: \(code): \(message)")
            }
            guard let d = item["document"], let name = d["name"]?.string else { continue }
            docs.append((try FirestoreEmulator.relativePath(name), try FirestoreEmulator.decodeFields(d["fields"] ?? .object([]))))
        }
        return .documents(docs)
    }

    static func relativePath(_ name: String) throws -> String {
        let prefix = documentsRoot + "/"
        guard name.hasPrefix(prefix) else { throw Failure("unexpected document name \(name)") }
        return String(name.dropFirst(prefix.count))
    }

    // MARK: Value <-> typed JSON

    static func encodeFields(_ m: MapValue) -> JSON {
        .object(m.entries.map { ($0.key, encode($0.value)) })
    }

    static func encode(_ v: Value) -> JSON {
        switch v {
        case .null: return .object([("nullValue", .null)])
        case .bool(let b): return .object([("booleanValue", .bool(b))])
        case .int(let i): return .object([("integerValue", .string(String(i)))])
        case .double(let d): return .object([("doubleValue", encodeDouble(d))])
        case .timestamp(let t): return .object([("timestampValue", .string(formatTimestamp(t)))])
        case .string(let s): return .object([("stringValue", .string(s))])
        case .bytes(let b): return .object([("bytesValue", .string(Data(b).base64EncodedString()))])
        case .reference(let k): return .object([("referenceValue", .string(documentsRoot + "/" + k.path.canonical))])
        case .geoPoint(let g):
            return .object([("geoPointValue", .object([("latitude", encodeDouble(g.latitude)), ("longitude", encodeDouble(g.longitude))]))])
        case .array(let a): return .object([("arrayValue", .object([("values", .array(a.map(encode)))]))])
        case .map(let m): return .object([("mapValue", .object([("fields", encodeFields(m))]))])
        }
    }

    static func encodeDouble(_ d: Double) -> JSON {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d > 0 ? "Infinity" : "-Infinity") }
        return .number("\(d)")   // shortest round-trip form, e.g. 1.0, -0.0, 1e+300, 5e-324
    }

    static func decodeFields(_ j: JSON) throws -> MapValue {
        guard case .object(let pairs) = j else { throw Failure("fields: expected an object, got \(j.serialized())") }
        var m = MapValue()
        for (k, v) in pairs { m[k] = try decode(v) }
        return m
    }

    static func decode(_ j: JSON) throws -> Value {
        guard case .object(let pairs) = j, pairs.count == 1 else { throw Failure("value: expected one typed key, got \(j.serialized())") }
        let (type, body) = pairs[0]
        switch type {
        case "nullValue": return .null
        case "booleanValue":
            guard case .bool(let b) = body else { break }
            return .bool(b)
        case "integerValue":
            guard let s = body.string ?? body.numberText, let i = Int64(s) else { break }
            return .int(i)
        case "doubleValue": return .double(try decodeDouble(body))
        case "timestampValue":
            guard let s = body.string else { break }
            return .timestamp(try parseTimestamp(s))
        case "stringValue":
            guard let s = body.string else { break }
            return .string(s)
        case "bytesValue":
            guard let s = body.string, let d = Data(base64Encoded: s) else { break }
            return .bytes([UInt8](d))
        case "referenceValue":
            guard let s = body.string else { break }
            return .reference(try DocumentKey(parsing: try relativePath(s)))
        case "geoPointValue":
            // proto3 JSON may omit a zero coordinate.
            return .geoPoint(GeoPoint(latitude: try body["latitude"].map(decodeDouble) ?? 0,
                                      longitude: try body["longitude"].map(decodeDouble) ?? 0))
        case "arrayValue":
            return .array(try (body["values"]?.array ?? []).map(decode))
        case "mapValue":
            return .map(try decodeFields(body["fields"] ?? .object([])))
        default: break
        }
        throw Failure("cannot decode value \(j.serialized())")
    }

    static func decodeDouble(_ j: JSON) throws -> Double {
        switch j {
        case .number(let s): if let d = Double(s) { return d }
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let s): if let d = Double(s) { return d }
        default: break
        }
        throw Failure("bad double \(j.serialized())")
    }

    /// RFC 3339 in UTC with microseconds, e.g. 0001-01-01T00:00:00.000000Z.
    static func formatTimestamp(_ t: Timestamp) -> String {
        let secs = t.micros >= 0 ? t.micros / 1_000_000 : (t.micros - 999_999) / 1_000_000
        let micros = t.micros - secs * 1_000_000
        let days = secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400
        let sod = secs - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        func pad(_ v: Int64, _ n: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, n - s.count)) + s }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2)).\(pad(micros, 6))Z"
    }

    static func parseTimestamp(_ s: String) throws -> Timestamp {
        let u = Array(s.utf8)
        func num(_ from: Int, _ len: Int) throws -> Int64 {
            guard from + len <= u.count else { throw Failure("bad timestamp \(s)") }
            var v: Int64 = 0
            for c in u[from..<from + len] {
                guard c >= 48 && c <= 57 else { throw Failure("bad timestamp \(s)") }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard u.count >= 20, u.last == UInt8(ascii: "Z") else { throw Failure("bad timestamp \(s)") }
        let days = days(fromCivil: try num(0, 4), try num(5, 2), try num(8, 2))
        let secs = days * 86_400 + (try num(11, 2)) * 3600 + (try num(14, 2)) * 60 + (try num(17, 2))
        var micros: Int64 = 0
        if u[19] == UInt8(ascii: ".") {
            let digits = u.count - 1 - 20
            let frac = try num(20, digits)
            micros = digits <= 6 ? frac * Int64(pow(10.0, Double(6 - digits))) : frac / Int64(pow(10.0, Double(digits - 6)))
        }
        return Timestamp(micros: secs * 1_000_000 + micros)
    }

    /// Howard Hinnant's civil_from_days / days_from_civil (proleptic Gregorian).
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// Responsible for: a minimal JSON tree that keeps numbers as their exact text and objects in
/// order, with a parser and a serializer (JSONSerialization rounds doubles and rejects NaN).
///
///     let j = try JSON.parse(#"{"a": [1, "x"]}"#); j["a"]?.array?.count == 2
indirect enum JSON {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    subscript(key: String) -> JSON? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }
    var string: String? { if case .string(let s) = self { return s }; return nil }
    var numberText: String? { if case .number(let s) = self { return s }; return nil }
    var array: [JSON]? { if case .array(let a) = self { return a }; return nil }

    func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let s): out += s
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let a):
            out += "["
            for (i, e) in a.enumerated() { if i > 0 { out += "," }; e.write(to: &out) }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, (k, v)) in pairs.enumerated() {
                if i > 0 { out += "," }
                JSON.writeString(k, to: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    static func parse(_ text: String) throws -> JSON {
        var p = Parser(bytes: Array(text.utf8))
        let v = try p.value()
        p.skipSpace()
        guard p.i == p.bytes.count else { throw p.fail("trailing characters") }
        return v
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        func fail(_ what: String) -> FirestoreEmulator.Failure {
            FirestoreEmulator.Failure("JSON: \(what) at byte \(i): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }

        mutating func skipSpace() {
            while i < bytes.count, [9, 10, 13, 32].contains(bytes[i]) { i += 1 }
        }

        mutating func literal(_ word: String, _ v: JSON) throws -> JSON {
            let w = Array(word.utf8)
            guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw fail("expected \(word)") }
            i += w.count
            return v
        }

        mutating func value() throws -> JSON {
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var pairs: [(String, JSON)] = []
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
                while true {
                    skipSpace()
                    let k = try string()
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                    i += 1
                    pairs.append((k, try value()))
                    skipSpace()
                    guard i < bytes.count else { throw fail("unterminated object") }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
                    throw fail("expected ',' or '}'")
                }
            case UInt8(ascii: "["):
                i += 1
                var items: [JSON] = []
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                while true {
                    items.append(try value())
                    skipSpace()
                    guard i < bytes.count else { throw fail("unterminated array") }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                    throw fail("expected ',' or ']'")
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default:
                let start = i
                while i < bytes.count, "+-0123456789.eE".utf8.contains(bytes[i]) { i += 1 }
                guard i > start else { throw fail("unexpected character") }
                return .number(String(decoding: bytes[start..<i], as: UTF8.self))
            }
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else { throw fail("bad \\u escape") }
            i += 4
            return v
        }

        mutating func string() throws -> String {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string") }
            i += 1
            var raw: [UInt8] = []
            while i < bytes.count {
                let c = bytes[i]
                i += 1
                if c == UInt8(ascii: "\"") { return String(decoding: raw, as: UTF8.self) }
                guard c == UInt8(ascii: "\\") else { raw.append(c); continue }
                guard i < bytes.count else { break }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "n"): raw.append(10)
                case UInt8(ascii: "t"): raw.append(9)
                case UInt8(ascii: "r"): raw.append(13)
                case UInt8(ascii: "b"): raw.append(8)
                case UInt8(ascii: "f"): raw.append(12)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if code >= 0xD800 && code < 0xDC00, i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        i += 2
                        let low = try hex4()
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    raw += Array(String(Unicode.Scalar(code).map(Character.init) ?? "\u{FFFD}").utf8)
                default: raw.append(e)
                }
            }
            throw fail("unterminated string")
        }
    }
}
