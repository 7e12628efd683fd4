import EmberBackend
import EmberModel
import EmberWire
import EmberRules
import Foundation

/// Responsible for: deciding every request of `ember serve` by the rules file, for its caller:
/// reads (`get`, per document), queries and listings (`list`, for every document the query
/// could return: see `RulesQuery`), and each document a commit writes (`create`, `update`,
/// `delete`, decided inside the commit on the state it applies to). The admin passes; without a
/// rules file everyone does (a loopback server for development, as the emulator). A token
/// whose audience or issuer is not the request's project is UNAUTHENTICATED; a refusal is
/// PERMISSION_DENIED with Firestore's wording. Listing collection ids and queries across
/// collections of every id (kind-less) are the admin's only.
final class AccessControl: Sendable {
    static let denied = "Missing or insufficient permissions."

    let rules: Rules?
    let backend: Backend
    /// The issuer a project's ID tokens must name; `{project}` is replaced by the project id.
    let issuerTemplate: String

    init(rules: Rules?, backend: Backend, issuerTemplate: String = "https://securetoken.google.com/{project}") {
        self.rules = rules
        self.backend = backend
        self.issuerTemplate = issuerTemplate
    }

    /// The request's `request.auth` (nil: anonymous), once the token is known to be for `db`.
    func auth(_ caller: Caller, _ db: DatabaseName) throws -> RulesAuth? {
        switch caller {
        case .admin, .anonymous: return nil
        case .user(let t):
            guard t.audience.contains(db.project) else {
                throw EmberError(.unauthenticated, "Invalid ID token: its audience is not the project '\(db.project)'")
            }
            let issuer = issuerTemplate.replacingOccurrences(of: "{project}", with: db.project)
            guard t.issuer == issuer else {
                throw EmberError(.unauthenticated, "Invalid ID token: its issuer is not '\(issuer)'")
            }
            return t.auth
        }
    }

    /// `get` of each document (a missing one as `resource == null`).
    func checkGet(_ caller: Caller, _ db: DatabaseName, _ documents: [Document]) throws {
        guard let rules, !caller.isAdmin else { return }
        let auth = try self.auth(caller, db)
        for d in documents {
            let request = RulesRequest(method: .get, path: db.clientPath(d.key.path).segments, database: db.database, auth: auth,
                                       existing: d.exists ? d.data : nil, time: AccessControl.now())
            try refuse(unless: rules.evaluate(request, lookup: lookup(db)))
        }
    }

    /// `get` of documents as they are now (a listen's documents target).
    func checkGet(_ caller: Caller, _ db: DatabaseName, keys: [DocumentKey]) throws {
        guard rules != nil, !caller.isAdmin else { return }
        try checkGet(caller, db, keys.map { backend.document(at: $0) ?? Document.missing($0, version: 0) })
    }

    /// `list` of the collection at `collection` (a client path), by `query` (nil: no filter);
    /// `group`: every collection of that id below the rest of the path.
    func checkList(_ caller: Caller, _ db: DatabaseName, collection: ResourcePath, query: RulesQuery?, group: Bool = false) throws {
        guard let rules, !caller.isAdmin else { return }
        var request = RulesRequest(method: .list, path: collection.segments, database: db.database, auth: try auth(caller, db),
                                   time: AccessControl.now(), query: query)
        request.collectionGroup = group
        try refuse(unless: rules.evaluate(request, lookup: lookup(db)))
    }

    /// What no rule grants: only the admin (or a server without rules) may. A token for another
    /// project is UNAUTHENTICATED first, as everywhere.
    func checkAdmin(_ caller: Caller, _ db: DatabaseName) throws {
        guard rules != nil, !caller.isAdmin else { return }
        _ = try auth(caller, db)
        throw EmberError(.permissionDenied, AccessControl.denied)
    }

    /// The check a commit makes of each document it writes, or nil when nothing is checked.
    /// `request.time` is the commit's time (that of its server timestamps); the documents a
    /// batch's rules read are bounded together (20).
    func commitAuthorizer(_ caller: Caller, _ db: DatabaseName) throws -> CommitAuthorizer? {
        guard let rules, !caller.isAdmin else { return nil }
        let auth = try self.auth(caller, db)
        nonisolated(unsafe) let budget = RulesReadBudget(limit: RulesReadBudget.batch)
        return { key, before, after, time, read in
            let method: RuleMethod = !after.exists ? .delete : before == nil ? .create : .update
            let request = RulesRequest(method: method, path: db.clientPath(key.path).segments, database: db.database, auth: auth,
                                       newData: after.exists ? after.data : nil, existing: before?.data, time: Timestamp(micros: time))
            // `read` is called during this evaluation only, on the backend's queue (as is the
            // budget: one commit's documents are decided one after the other there).
            let allowed = withoutActuallyEscaping(read) { read in
                nonisolated(unsafe) let read = read
                return rules.evaluate(request, lookup: { segments in read(db.key(ResourcePath(segments: segments)))?.data },
                                      budget: budget).allowed
            }
            return allowed ? nil : EmberError(.permissionDenied, AccessControl.denied)
        }
    }

    private func refuse(unless decision: RulesDecision) throws {
        if !decision.allowed { throw EmberError(.permissionDenied, AccessControl.denied) }
    }

    /// `get()` / `exists()` of another document of `db`, as stored now (off the backend's queue).
    private func lookup(_ db: DatabaseName) -> RulesDocumentLookup {
        { [backend] segments in backend.document(at: db.key(ResourcePath(segments: segments)))?.data }
    }

    static func now() -> Timestamp { Timestamp(micros: Int64(Date().timeIntervalSince1970 * 1_000_000)) }
}

extension Caller {
    var isAdmin: Bool { if case .admin = self { return true } else { return false } }
}

extension AccessControl {
    /// A structured query (RunQuery, RunAggregationQuery, a listen target): `list` of its
    /// collection with its filters, limit, offset and order. A collection-group query is
    /// matched by rules with `{x=**}` before its collection id; a kind-less query (every
    /// collection) is the admin's only.
    func checkQuery(_ caller: Caller, _ db: DatabaseName, parentPath: ResourcePath, structured sq: StructuredQuery, query: Query) throws {
        guard rules != nil, !caller.isAdmin else { return }
        guard let from = sq.from.first, !from.collectionID.isEmpty else { return try checkAdmin(caller, db) }
        let orders = sq.orderBy.map { (field: $0.field.fieldPath, descending: $0.direction == .descending) }
        let rq = RulesQuery(filters: query.filters, limit: sq.hasLimit ? Int(sq.limit.value) : nil, offset: Int(sq.offset), orderBy: orders)
        try checkList(caller, db, collection: parentPath.appending(from.collectionID), query: rq, group: from.allDescendants)
    }
}
