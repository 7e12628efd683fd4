import EmberModel

/// Responsible for: the log every commit must reach before a backend applies it, when several
/// servers share one store (`EmberPostgres`). `append` places a commit among every server's,
/// after checking that the documents it was computed from are still the stored ones, and before
/// it returns applies (through `Backend.applyLogged`) every other server's commit that came
/// before it, so the backend applies commits in the log's order. `catchUp` applies every commit
/// logged so far. Both are called on the backend's queue and block it.
///
///     backend.commitLog = log          // before the first connection
///     // applyCommit -> log.append(version, entries) -> .success: applied here, announced
public protocol CommitLog: AnyObject {
    /// Logs a commit whose documents were computed at `version` (their update time). ABORTED:
    /// another commit came first (a document changed, or a later time was logged); the backend
    /// catches up and computes the commit again. Other errors refuse it.
    func append(version: Int64, entries: [CommitLogEntry]) -> Result<Void, EmberError>
    /// Applies every commit logged so far that this backend has not applied.
    func catchUp()
    /// The commit time of the newest commit trimmed from the log: a listen resumed from an
    /// older time is answered with a reset (0: nothing trimmed). Any thread.
    var resumeFloor: Int64 { get }
}

/// Responsible for: one document of a logged commit: its new state (nil: only checked, for a
/// document the commit read or left unchanged) and the update time the commit expects it to
/// have now (0: missing).
public struct CommitLogEntry: Sendable {
    public let key: DocumentKey
    public let document: Document?
    public let expectedUpdateTime: Int64
    public init(key: DocumentKey, document: Document?, expectedUpdateTime: Int64) {
        self.key = key
        self.document = document
        self.expectedUpdateTime = expectedUpdateTime
    }
}
