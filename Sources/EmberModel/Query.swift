/// Responsible for: what a query asks for (collection or group, filters, order, limit, cursors),
/// built step by step with Firestore's client-side validation (docs/semantics.md 7).
///
///     var q = Query(collection: try ResourcePath(parsing: "cities"))
///     q = try q.filter(.field(FieldFilter(field: try FieldPath(parsing: "state"), op: .equal, value: .string("CA"))))
///     q = try q.order(by: try FieldPath(parsing: "population"), descending: true).limit(10)
public struct Query: Sendable, CustomStringConvertible {
    public enum LimitType: Sendable { case first, last }

    /// The collection queried, or the document of a single-document query.
    public let path: ResourcePath
    /// Set for collection-group queries: every collection with this id.
    public let collectionGroup: String?
    public private(set) var filters: [Filter] = []
    public private(set) var explicitOrderBy: [OrderBy] = []
    public private(set) var limit: Int?
    public private(set) var limitType: LimitType = .first
    public private(set) var startAt: Bound?
    public private(set) var endAt: Bound?

    public init(collection: ResourcePath) {
        self.path = collection
        self.collectionGroup = nil
    }

    public init(collectionGroup id: String) {
        self.path = ResourcePath(segments: [])
        self.collectionGroup = id
    }

    /// A collection-group query limited to the documents under `parent` (a document path; the
    /// empty path is the whole database), as Firestore's RunQuery with a parent document and
    /// `all_descendants`.
    public init(collectionGroup id: String, under parent: ResourcePath) {
        self.path = parent
        self.collectionGroup = id
    }

    public init(document key: DocumentKey) {
        self.path = key.path
        self.collectionGroup = nil
    }

    public var isDocumentQuery: Bool { collectionGroup == nil && path.isDocumentPath }
    public var isCollectionGroupQuery: Bool { collectionGroup != nil }
    public var documentKey: DocumentKey? { isDocumentQuery ? DocumentKey(unchecked: path) : nil }

    // MARK: building

    /// Adds a filter (ANDed with the others), checking the operator rules of docs/semantics.md 7.
    public func filter(_ f: Filter) throws -> Query {
        let fields = f.fieldFilters
        if case .composite(let c) = f, c.filters.isEmpty { return self }
        for ff in fields { try validate(ff) }
        var existing = filters.flatMap { $0.fieldFilters }
        for ff in fields {
            for other in existing {
                if Query.conflicts(ff.op, other.op) {
                    if ff.op == other.op {
                        throw EmberError.invalidArgument("Invalid query. You cannot use more than one '\(ff.op.rawValue)' filter.")
                    }
                    throw EmberError.invalidArgument("Invalid query. You cannot use '\(ff.op.rawValue)' filters with '\(other.op.rawValue)' filters.")
                }
            }
            existing.append(ff)
        }
        var q = self
        q.filters.append(f)
        if fields.contains(where: { $0.op == .notIn }) || existing.contains(where: { $0.op == .notIn }),
           q.filters.contains(where: { $0.hasOr }) {
            throw EmberError.invalidArgument("Invalid query. 'not-in' cannot be used in the same query with 'in', 'array-contains-any' or OR filters.")
        }
        let n = q.filters.reduce(1) { Query.saturatedProduct($0, $1.disjunctionCount) }
        if n > Query.maxDisjunctions {
            throw EmberError.invalidArgument("Invalid query. Too many disjunctions after normalization: the filters expand ('in', 'array-contains-any' and OR into disjunctive normal form) to \(n > 1_000_000 ? "more than 1,000,000" : String(n)) disjunctions, more than the maximum of \(Query.maxDisjunctions).")
        }
        return q
    }

    /// Firestore's limit on the disjunctions of a query's filters in disjunctive normal form.
    public static let maxDisjunctions = 30

    static func saturatedProduct(_ a: Int, _ b: Int) -> Int {
        let (p, o) = a.multipliedReportingOverflow(by: b)
        return o || p > 1_000_001 ? 1_000_001 : p
    }

    static func conflicts(_ a: FilterOperator, _ b: FilterOperator) -> Bool {
        switch a {
        case .notEqual: return b == .notEqual || b == .notIn
        case .arrayContainsAny, .in: return b == .notIn
        case .notIn: return b == .arrayContainsAny || b == .in || b == .notIn || b == .notEqual
        default: return false
        }
    }

    private func validate(_ f: FieldFilter) throws {
        if f.op.takesArray {
            guard case .array(let values) = f.value else {
                throw EmberError.invalidArgument("Invalid query. A non-empty array is required for '\(f.op.rawValue)' filters.")
            }
            if values.isEmpty {
                throw EmberError.invalidArgument("Invalid query. A non-empty array is required for '\(f.op.rawValue)' filters.")
            }
            let max = f.op == .notIn ? 10 : 30
            if values.count > max {
                throw EmberError.invalidArgument("Invalid query. '\(f.op.rawValue)' filters support a maximum of \(max) elements in the value array, got \(values.count).")
            }
        }
        if (f.value.isNull || f.value.isNaN) && f.op != .equal && f.op != .notEqual {
            let what = f.value.isNull ? "Null" : "NaN"
            throw EmberError.invalidArgument("Invalid query. \(what) only supports '==' and '!=' comparisons (field '\(f.field)', operator '\(f.op.rawValue)').")
        }
        if f.field.isDocumentId {
            if f.op == .arrayContains || f.op == .arrayContainsAny {
                throw EmberError.invalidArgument("Invalid query. You can't perform '\(f.op.rawValue)' queries on documentId().")
            }
            let values: [Value]
            if case .array(let a) = f.value, f.op.takesArray { values = a } else { values = [f.value] }
            // A reference may name a document of any collection, as the Firebase SDKs take a
            // DocumentReference (JS parseDocumentIdValue): it compares by path like any other.
            for v in values {
                guard case .reference = v else {
                    throw EmberError.invalidArgument("Invalid query. When querying with documentId(), you must provide a valid document ID, but it was of type \(v.typeName).")
                }
            }
        }
    }

    public func order(by field: FieldPath, descending: Bool = false) throws -> Query {
        if startAt != nil || endAt != nil {
            throw EmberError.invalidArgument("Invalid query. You must not call order(by:) after start(at:), start(after:), end(at:) or end(before:).")
        }
        if isDocumentQuery {
            throw EmberError.invalidArgument("Invalid query. A document query cannot be ordered.")
        }
        var q = self
        q.explicitOrderBy.append(OrderBy(field: field, descending: descending))
        return q
    }

    public func limit(_ n: Int, type: LimitType = .first) throws -> Query {
        if n <= 0 {
            throw EmberError.invalidArgument("Invalid query. The limit must be positive, got \(n).")
        }
        var q = self
        q.limit = n
        q.limitType = type
        return q
    }

    /// Sets the start cursor: `inclusive` true is startAt, false is startAfter.
    /// Sets the start cursor: `inclusive` true is startAt, false is startAfter. User-given values
    /// may not outnumber the explicit order-bys; values from a document (`cursorValues(for:)`,
    /// `fromDocument: true`) follow the normalized order, as the Firebase SDKs do.
    public func start(_ values: [Value], inclusive: Bool, fromDocument: Bool = false) throws -> Query {
        var q = self
        q.startAt = try bound(values, inclusive: inclusive, fromDocument: fromDocument, method: inclusive ? "start(at:)" : "start(after:)")
        return q
    }

    /// Sets the end cursor: `inclusive` true is endAt, false is endBefore.
    public func end(_ values: [Value], inclusive: Bool, fromDocument: Bool = false) throws -> Query {
        var q = self
        q.endAt = try bound(values, inclusive: inclusive, fromDocument: fromDocument, method: inclusive ? "end(at:)" : "end(before:)")
        return q
    }

    /// The cursor values that position a document in this query's order (cursors from snapshots).
    public func cursorValues(for doc: Document) throws -> [Value] {
        try normalizedOrderBy.map { ob in
            if ob.field.isDocumentId { return .reference(doc.key) }
            guard let v = doc.field(ob.field) else {
                throw EmberError.invalidArgument("Invalid query. You are trying to start or end a query using a document for which the field '\(ob.field)' (used as the order by) does not exist.")
            }
            return v
        }
    }

    private func bound(_ values: [Value], inclusive: Bool, fromDocument: Bool, method: String) throws -> Bound {
        let order = normalizedOrderBy
        let allowed = fromDocument ? order.count : explicitOrderBy.count
        if values.count > allowed {
            throw EmberError.invalidArgument("Invalid query. Too many arguments provided to \(method): \(values.count) values for \(allowed) order-by clauses. The number of arguments must be less than or equal to the number of order(by:) clauses.")
        }
        var out = values
        for (i, v) in values.enumerated() where order[i].field.isDocumentId {
            switch v {
            case .string(let s):
                if isCollectionGroupQuery {
                    guard let p = try? ResourcePath(parsing: s), p.isDocumentPath else {
                        throw EmberError.invalidArgument("Invalid query. When querying a collection group and ordering by documentId(), the value passed to \(method) must result in a valid document path, but '\(s)' is not because it has an odd number of segments.")
                    }
                    out[i] = .reference(DocumentKey(unchecked: p))
                } else {
                    if s.utf8.contains(0x2F) || s.isEmpty {
                        throw EmberError.invalidArgument("Invalid query. When querying a collection and ordering by documentId(), the value passed to \(method) must be a plain document ID, but '\(s)' contains a slash or is empty.")
                    }
                    try ResourcePath.validateSegment(s)
                    out[i] = .reference(DocumentKey(unchecked: path.appending(s)))
                }
            case .reference: break
            default:
                throw EmberError.invalidArgument("Invalid query. Expected a string for the document ID in \(method), but got \(v.typeName).")
            }
        }
        return Bound(values: out, inclusive: inclusive)
    }

    /// Checks run when the query is executed rather than built (limitToLast without order-by).
    public func validateForExecution() throws {
        if limitType == .last && limit != nil && explicitOrderBy.isEmpty {
            throw EmberError.invalidArgument("Invalid query. limit(toLast:) queries require specifying at least one order(by:) clause.")
        }
    }

    public var description: String {
        var s = collectionGroup.map { path.isEmpty ? "group(\($0))" : "\(path.canonical)/group(\($0))" } ?? path.canonical
        for f in filters { s += " where \(f)" }
        for o in explicitOrderBy { s += " order \(o.field)\(o.descending ? " desc" : "")" }
        if let l = limit { s += limitType == .first ? " limit \(l)" : " limitToLast \(l)" }
        return s
    }
}

/// Responsible for: one order-by clause.
public struct OrderBy: Sendable, Equatable {
    public let field: FieldPath
    public let descending: Bool
    /// `field.isDocumentId`, known once: every comparison of two documents asks it.
    public let isDocumentId: Bool
    public init(field: FieldPath, descending: Bool) {
        self.field = field
        self.descending = descending
        self.isDocumentId = field.isDocumentId
    }
}

/// Responsible for: a query cursor: values positioned against the normalized order-by.
public struct Bound: Sendable {
    public let values: [Value]
    public let inclusive: Bool
}

extension Value {
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "double"
        case .timestamp: return "timestamp"
        case .string: return "string"
        case .bytes: return "bytes"
        case .reference: return "reference"
        case .geoPoint: return "geopoint"
        case .array: return "array"
        case .map: return "map"
        }
    }
}
