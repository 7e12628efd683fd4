import EmberModel

/// Responsible for: one HTTP request and response of the tree's port, as the REST layer sees
/// them (header names lower-cased; the body whole, within the listener's limit).
struct TreeHTTPRequest: Sendable {
    let method: String
    let uri: String
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

struct TreeHTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: String = ""
    /// A streaming GET: the handler answers with an event stream.
    var stream: TreeStreamRequest?

    static func json(_ status: Int, _ body: String, headers: [(String, String)] = []) -> TreeHTTPResponse {
        TreeHTTPResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: body)
    }

    /// `{"error": message}` with `status`.
    static func error(_ status: Int, _ message: String) -> TreeHTTPResponse {
        var out = "{\"error\":"
        TreeJSON.quote(message, into: &out)
        return json(status, out + "}")
    }
}

/// Responsible for: what an allowed streaming GET listens to: its stored location, its query,
/// and who keeps being checked against the rules.
struct TreeStreamRequest: Sendable {
    let location: TreePath
    let query: TreeRESTQuery?
    /// The location's priorities in the stored tree (a `$priority` query listens to them too).
    let priorities: TreePath
    let `guard`: TreeStreamGuard
}
