import EmberBackend
import EmberPostgres

/// Responsible for: the instance's metrics in the Prometheus text format (version 0.0.4), served
/// at the tree port's `/metrics`: commits (its own and applied from the shared log), listen
/// targets and streams, connections, queued response bytes, health, and on PostgreSQL the log
/// position, fan-out lag, log read failures and the connection pool's use. Any thread.
struct ServerMetrics: Sendable {
    let backend: Backend
    let streams: StreamRegistry
    let connections: ConnectionGuard
    let ledger: OutputLedger
    let health: ServerHealth
    let postgres: (store: PostgresStore, log: PostgresCommitLog)?

    func render() -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: String, labels: String = "") {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name)\(labels) \(value)\n"
        }
        let c = backend.counters.current
        metric("ember_commits_total", "counter", "Commits this instance took from its clients.", "\(c.commits)")
        metric("ember_logged_commits_total", "counter", "Commits of other instances applied from the shared log.", "\(c.loggedCommits)")
        metric("ember_listen_targets", "gauge", "Listen targets open on this instance.", "\(c.targets)")
        metric("ember_streams", "gauge", "Open Listen and Write streams.", "\(streams.count)")
        metric("ember_connections", "gauge", "Open connections (both ports).", "\(connections.openConnections)")
        metric("ember_connections_limit", "gauge", "The most connections open at once.", "\(connections.limit)")
        metric("ember_queued_output_bytes", "gauge", "Response bytes queued on streams, not yet written.", "\(ledger.queuedBytes)")
        metric("ember_serving", "gauge", "1 while the instance takes traffic (its health is SERVING).", health.status == .serving ? "1" : "0")
        if let (store, log) = postgres {
            let s = log.status
            let u = store.usage
            metric("ember_log_applied_position", "gauge", "The last shared log position applied here.", "\(log.appliedPosition)")
            metric("ember_fanout_lag_seconds", "gauge", "From another instance's commit to its application here (the last one).",
                   String(Double(s.lagMicros) / 1e6))
            metric("ember_log_read_failures_total", "counter", "Reads of the shared log that failed.", "\(s.readFailures)")
            metric("ember_log_seconds_since_answer", "gauge", "Seconds since PostgreSQL last answered a read of the log.",
                   String(log.secondsSinceAnswer))
            metric("ember_pool_connections_max", "gauge", "The PostgreSQL connection pool's bound.", "\(store.maxConnections)")
            metric("ember_pool_operations_in_flight", "gauge", "PostgreSQL operations running or waiting for a connection.", "\(u.inFlight)")
            metric("ember_pool_operations_total", "counter", "PostgreSQL operations done.", "\(u.total)")
            metric("ember_pool_operation_failures_total", "counter", "PostgreSQL operations that failed (ABORTED included).", "\(u.failed)")
        }
        return out
    }
}
