import EmberModel
import Foundation

/// Responsible for: the parts of a REST request's URL: the location (`/a/b.json`, segments
/// percent-decoded and checked as tree keys) and the query parameters (percent-decoded; `+` kept,
/// as the Firebase SDKs send it literally). A parameter named twice is refused, as is any the
/// Realtime Database does not know.
struct TreeRequestLine {
    /// The location, relative to the namespace's root.
    let path: TreePath
    /// `/.settings/rules.json` and the like: the first segment starts with '.'.
    let special: [String]?
    /// `/<path>/.priority.json`: the priority of the node at `path`.
    let priority: Bool
    let params: [String: String]

    static let known: Set<String> = [
        "ns", "print", "shallow", "format", "orderBy", "limitToFirst", "limitToLast", "startAt", "startAfter",
        "endAt", "endBefore", "equalTo", "auth", "access_token", "auth_variable_override", "timeout",
        "writeSizeLimit", "download", "x-http-method-override", "disableTriggers",
    ]

    init(uri: String) throws {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = String(parts[0])
        guard rawPath.hasSuffix(".json") else {
            throw TreeRESTError(404, "Not Found: a location is addressed as /<path>.json")
        }
        let trimmed = String(rawPath.dropLast(5))
        var segments: [String] = []
        for raw in trimmed.split(separator: "/", omittingEmptySubsequences: true) {
            guard let s = String(raw).removingPercentEncoding else { throw TreeRESTError(400, "Invalid path: bad percent-encoding in '\(raw)'") }
            segments.append(s)
        }
        priority = segments.count > 1 && segments.last == ".priority"
        if priority { segments.removeLast() }
        if let first = segments.first, first.hasPrefix(".") {
            special = segments
            path = .root
        } else {
            special = nil
            do { path = try TreePath(parsing: "/" + segments.map { $0 }.joined(separator: "/"), context: "path") } catch let e as EmberError {
                throw TreeRESTError(400, e.message)
            }
            if path.count != segments.count { throw TreeRESTError(400, "Invalid path '\(trimmed)': keys must not contain '/'") }
        }
        var params: [String: String] = [:]
        if parts.count == 2 {
            for item in parts[1].split(separator: "&", omittingEmptySubsequences: true) {
                let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = String(kv[0]).removingPercentEncoding,
                      let value = (kv.count == 2 ? String(kv[1]) : "").removingPercentEncoding else {
                    throw TreeRESTError(400, "Invalid query parameter '\(item)': bad percent-encoding")
                }
                guard TreeRequestLine.known.contains(name) else { throw TreeRESTError(400, "Invalid query parameter: '\(name)' is not supported") }
                guard params[name] == nil else { throw TreeRESTError(400, "Invalid query parameter: '\(name)' is given more than once") }
                params[name] = value
            }
        }
        self.params = params
    }
}

/// Responsible for: a REST refusal: its HTTP status and the text of `{"error": ...}`.
struct TreeRESTError: Error {
    let status: Int
    let message: String
    /// For 412: the current value and its priorities (for its ETag).
    var current: TreeValue?
    var priorities: TreeValue = .null
    init(_ status: Int, _ message: String, current: TreeValue? = nil, priorities: TreeValue = .null) {
        self.status = status
        self.message = message
        self.current = current
        self.priorities = priorities
    }
}
