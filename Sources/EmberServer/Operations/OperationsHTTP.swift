/// Responsible for: the operator's two paths on the tree port, answered before the Realtime
/// Database REST API sees the request (no tree path can name them: REST paths end in `.json`):
/// `GET /healthz` (200 `SERVING`, or 503 `NOT_SERVING` and why, for load balancers) and
/// `GET /metrics` (Prometheus text). Neither needs a token.
struct OperationsHTTP: Sendable {
    let health: ServerHealth
    let metrics: ServerMetrics

    /// The answer to `request`, or nil when it is not one of these paths.
    func answer(_ request: TreeHTTPRequest) -> TreeHTTPResponse? {
        let path = request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard path == "/healthz" || path == "/metrics" else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            return TreeHTTPResponse(status: 405, headers: [("Allow", "GET, HEAD"), ("Content-Type", "text/plain; charset=utf-8")],
                                    body: "\(path) answers GET only\n")
        }
        if path == "/metrics" {
            return TreeHTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: metrics.render())
        }
        let reason = health.reason
        return TreeHTTPResponse(status: reason == nil ? 200 : 503, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                body: reason.map { "NOT_SERVING: \($0)\n" } ?? "SERVING\n")
    }
}
