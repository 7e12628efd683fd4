import EmberModel

/// Responsible for: what a rule sees of one request: the method, the document (or collection,
/// for `list`) path, who asks (`request.auth`), the document as it would be after a write
/// (`request.resource`), the document as it is (`resource`) and the time.
///
///     RulesRequest(method: .get, path: ["users", "alice"], auth: RulesAuth(uid: "alice"),
///                  existing: MapValue(["name": .string("Alice")]))
public struct RulesRequest: Sendable {
    public var method: RuleMethod
    /// Document path segments under `/databases/{database}/documents` (for `list`, the
    /// collection's path followed by no id: rules match it as `<collection>/{anything}`).
    public var path: [String]
    public var database: String
    public var auth: RulesAuth?
    /// The document's data after the write (create, update), nil otherwise.
    public var newData: MapValue?
    /// The stored document's data, nil when it does not exist (or for `list`).
    public var existing: MapValue?
    public var time: Timestamp
    /// For `list`: the query (`request.query`, and the values its filters pin, which the rule
    /// sees as `resource.data`). Nil: a listing with no filter.
    public var query: RulesQuery?
    /// For `list`: a collection-group query of the collection id `path.last`, below `path`'s
    /// other segments at any depth. Only `match` paths with `{x=**}` before the id match it.
    public var collectionGroup = false

    public init(method: RuleMethod, path: [String], database: String = "(default)", auth: RulesAuth? = nil,
                newData: MapValue? = nil, existing: MapValue? = nil, time: Timestamp = Timestamp(micros: 0),
                query: RulesQuery? = nil) {
        self.method = method
        self.path = path
        self.database = database
        self.auth = auth
        self.newData = newData
        self.existing = existing
        self.time = time
        self.query = query
    }

    /// The full path a `match` is tried against: `databases/<db>/documents/<path...>`.
    var matchPath: [String] { ["databases", database, "documents"] + path }

    /// The segments a `match` is tried against: a `list`'s open document last, and for a
    /// collection group, any depth before the collection id.
    var matchSegments: [MatchResolver.Segment] {
        var out = (["databases", database, "documents"] + path).map(MatchResolver.Segment.id)
        if collectionGroup, !out.isEmpty { out.insert(.anyDepth, at: out.count - 1) }
        if method == .list { out.append(.open) }
        return out
    }
}

/// Responsible for: `request.auth`: the signed-in user's uid and the token's claims.
public struct RulesAuth: Sendable {
    public var uid: String
    /// All claims of the ID token (`request.auth.token.*`), e.g. `email`, `admin`.
    public var token: MapValue

    public init(uid: String, token: MapValue = MapValue()) {
        self.uid = uid
        self.token = token
    }
}

/// Responsible for: the answer to one request: allowed or not, and why (for logs and errors).
public struct RulesDecision: Sendable, Equatable {
    public var allowed: Bool
    /// The allow statement that granted it (line:column), or why it was denied.
    public var reason: String
}

/// Reads another document for `get()` / `exists()`: its data, or nil when it does not exist.
/// The path is the document's segments under `/databases/{database}/documents`.
public typealias RulesDocumentLookup = @Sendable ([String]) -> MapValue?
