import Foundation
import EmberModel
import EmberCore

/// Responsible for: building queries the Firebase way (`whereField`, `order(by:)`, `limit`,
/// cursors) and running or listening to them. A query that breaks a rule of docs/semantics.md 7
/// carries the error and reports it where it is used (get: the completion's error; listen: the
/// listener's error, which ends it); `validate()` raises it at once.
///
///     db.collection("cities").whereField("state", isEqualTo: "CA").order(by: "name").limit(to: 3)
public class Query: @unchecked Sendable { // immutable; open to subclasses, which the compiler cannot check
    public let firestore: Firestore
    let core: EmberModel.Query?
    let error: EmberError?

    init(firestore: Firestore, core: EmberModel.Query) {
        self.firestore = firestore
        self.core = core
        self.error = nil
    }

    init(firestore: Firestore, error: EmberError?) {
        self.firestore = firestore
        self.core = nil
        self.error = error ?? EmberError(.internal, "invalid query")
    }

    /// Throws the error this query carries, if any (including checks Firestore defers to run time).
    public func validate() throws {
        let q = try valid()
        try q.validateForExecution()
    }

    func valid() throws -> EmberModel.Query {
        if let e = error { throw e }
        return core!
    }

    func derive(_ step: (EmberModel.Query) throws -> EmberModel.Query) -> Query {
        do { return Query(firestore: firestore, core: try step(try valid())) } catch {
            return Query(firestore: firestore, error: error as? EmberError ?? EmberError(.internal, "\(error)"))
        }
    }

    // MARK: filters

    func whereField(_ field: Any, _ op: FilterOperator, _ value: Any) -> Query {
        derive { q in try q.filter(.field(try Filter.fieldFilter(field, op, value, query: q))) }
    }

    public func whereField(_ field: String, isEqualTo value: Any) -> Query { whereField(field, .equal, value) }
    public func whereField(_ field: String, isNotEqualTo value: Any) -> Query { whereField(field, .notEqual, value) }
    public func whereField(_ field: String, isLessThan value: Any) -> Query { whereField(field, .lessThan, value) }
    public func whereField(_ field: String, isLessThanOrEqualTo value: Any) -> Query { whereField(field, .lessThanOrEqual, value) }
    public func whereField(_ field: String, isGreaterThan value: Any) -> Query { whereField(field, .greaterThan, value) }
    public func whereField(_ field: String, isGreaterThanOrEqualTo value: Any) -> Query { whereField(field, .greaterThanOrEqual, value) }
    public func whereField(_ field: String, arrayContains value: Any) -> Query { whereField(field, .arrayContains, value) }
    public func whereField(_ field: String, arrayContainsAny values: [Any]) -> Query { whereField(field, .arrayContainsAny, values) }
    public func whereField(_ field: String, in values: [Any]) -> Query { whereField(field, .in, values) }
    public func whereField(_ field: String, notIn values: [Any]) -> Query { whereField(field, .notIn, values) }
    public func whereField(_ path: FieldPath, isEqualTo value: Any) -> Query { whereField(path, .equal, value) }
    public func whereField(_ path: FieldPath, isNotEqualTo value: Any) -> Query { whereField(path, .notEqual, value) }
    public func whereField(_ path: FieldPath, isLessThan value: Any) -> Query { whereField(path, .lessThan, value) }
    public func whereField(_ path: FieldPath, isLessThanOrEqualTo value: Any) -> Query { whereField(path, .lessThanOrEqual, value) }
    public func whereField(_ path: FieldPath, isGreaterThan value: Any) -> Query { whereField(path, .greaterThan, value) }
    public func whereField(_ path: FieldPath, isGreaterThanOrEqualTo value: Any) -> Query { whereField(path, .greaterThanOrEqual, value) }
    public func whereField(_ path: FieldPath, arrayContains value: Any) -> Query { whereField(path, .arrayContains, value) }
    public func whereField(_ path: FieldPath, arrayContainsAny values: [Any]) -> Query { whereField(path, .arrayContainsAny, values) }
    public func whereField(_ path: FieldPath, in values: [Any]) -> Query { whereField(path, .in, values) }
    public func whereField(_ path: FieldPath, notIn values: [Any]) -> Query { whereField(path, .notIn, values) }

    public func whereFilter(_ filter: Filter) -> Query {
        derive { q in try q.filter(try filter.build(for: q)) }
    }

    // MARK: order, limit, cursors

    public func order(by field: String, descending: Bool = false) -> Query {
        derive { try $0.order(by: try EmberModel.FieldPath(parsing: field), descending: descending) }
    }
    public func order(by path: FieldPath, descending: Bool = false) -> Query {
        derive { try $0.order(by: try UserData.modelPath(path), descending: descending) }
    }
    public func limit(to limit: Int) -> Query { derive { try $0.limit(limit, type: .first) } }
    public func limit(toLast limit: Int) -> Query { derive { try $0.limit(limit, type: .last) } }

    public func start(at fieldValues: [Any]) -> Query { cursor(fieldValues, start: true, inclusive: true) }
    public func start(after fieldValues: [Any]) -> Query { cursor(fieldValues, start: true, inclusive: false) }
    public func end(at fieldValues: [Any]) -> Query { cursor(fieldValues, start: false, inclusive: true) }
    public func end(before fieldValues: [Any]) -> Query { cursor(fieldValues, start: false, inclusive: false) }
    public func start(atDocument document: DocumentSnapshot) -> Query { cursor(document, start: true, inclusive: true) }
    public func start(afterDocument document: DocumentSnapshot) -> Query { cursor(document, start: true, inclusive: false) }
    public func end(atDocument document: DocumentSnapshot) -> Query { cursor(document, start: false, inclusive: true) }
    public func end(beforeDocument document: DocumentSnapshot) -> Query { cursor(document, start: false, inclusive: false) }

    private func cursor(_ values: [Any], start: Bool, inclusive: Bool) -> Query {
        derive { q in
            let vs = try values.map { try UserData.plainValue($0 is DocumentReference ? ($0 as! DocumentReference) : $0, path: "cursor") }
            return start ? try q.start(vs, inclusive: inclusive) : try q.end(vs, inclusive: inclusive)
        }
    }

    private func cursor(_ snapshot: DocumentSnapshot, start: Bool, inclusive: Bool) -> Query {
        derive { q in
            guard let doc = snapshot.document else {
                throw EmberError.invalidArgument("Invalid query. You are trying to start or end a query using a document that doesn't exist.")
            }
            let vs = try q.cursorValues(for: doc)
            return start ? try q.start(vs, inclusive: inclusive, fromDocument: true) : try q.end(vs, inclusive: inclusive, fromDocument: true)
        }
    }

    // MARK: running

    public func getDocuments(source: FirestoreSource = .default, completion: @escaping @Sendable (QuerySnapshot?, Error?) -> Void) {
        let fs = firestore
        do {
            try firestore.client.getDocuments(try valid(), source: source.core) { r in
                fs.post {
                    switch r {
                    case .success(let s): completion(QuerySnapshot(firestore: fs, view: s, query: self), nil)
                    case .failure(let e): completion(nil, e)
                    }
                }
            }
        } catch {
            fs.post { completion(nil, error) }
        }
    }

    public func getDocuments(source: FirestoreSource = .default) async throws -> QuerySnapshot {
        try await withCheckedThrowingContinuation { c in
            getDocuments(source: source) { s, e in if let s { c.resume(returning: s) } else { c.resume(throwing: e!) } }
        }
    }

    public var count: AggregateQuery { AggregateQuery(query: self) }

    @discardableResult
    public func addSnapshotListener(_ listener: @escaping @Sendable (QuerySnapshot?, Error?) -> Void) -> ListenerRegistration {
        addSnapshotListener(options: SnapshotListenOptions(), listener: listener)
    }

    @discardableResult
    public func addSnapshotListener(includeMetadataChanges: Bool, listener: @escaping @Sendable (QuerySnapshot?, Error?) -> Void) -> ListenerRegistration {
        addSnapshotListener(options: SnapshotListenOptions().withIncludeMetadataChanges(includeMetadataChanges), listener: listener)
    }

    @discardableResult
    public func addSnapshotListener(options: SnapshotListenOptions, listener: @escaping @Sendable (QuerySnapshot?, Error?) -> Void) -> ListenerRegistration {
        let fs = firestore
        do {
            let token = try fs.client.listen(try valid(), options: options.core) { [self] event in
                switch event {
                case .snapshot(let s): listener(QuerySnapshot(firestore: fs, view: s, query: self), nil)
                case .error(let e): listener(nil, e)
                }
            }
            return ListenerRegistration(token: token)
        } catch {
            return ListenerRegistration.failed(error, firestore: fs) { listener(nil, $0) }
        }
    }
}

/// Responsible for: composable filters (`Filter.whereField`, `Filter.orFilter`, `Filter.andFilter`).
///
///     db.collection("cities").whereFilter(Filter.orFilter([
///         Filter.whereField("capital", isEqualTo: true), Filter.whereField("population", isGreaterThan: 1_000_000)]))
public final class Filter: @unchecked Sendable { // immutable; holds the caller's values (`Any`), only read
    enum Kind {
        case field(Any, FilterOperator, Any)
        case composite(CompositeFilter.Op, [Filter])
    }
    let kind: Kind
    init(_ kind: Kind) { self.kind = kind }

    public static func whereField(_ field: String, isEqualTo value: Any) -> Filter { Filter(.field(field, .equal, value)) }
    public static func whereField(_ field: String, isNotEqualTo value: Any) -> Filter { Filter(.field(field, .notEqual, value)) }
    public static func whereField(_ field: String, isLessThan value: Any) -> Filter { Filter(.field(field, .lessThan, value)) }
    public static func whereField(_ field: String, isLessThanOrEqualTo value: Any) -> Filter { Filter(.field(field, .lessThanOrEqual, value)) }
    public static func whereField(_ field: String, isGreaterThan value: Any) -> Filter { Filter(.field(field, .greaterThan, value)) }
    public static func whereField(_ field: String, isGreaterThanOrEqualTo value: Any) -> Filter { Filter(.field(field, .greaterThanOrEqual, value)) }
    public static func whereField(_ field: String, arrayContains value: Any) -> Filter { Filter(.field(field, .arrayContains, value)) }
    public static func whereField(_ field: String, arrayContainsAny values: [Any]) -> Filter { Filter(.field(field, .arrayContainsAny, values)) }
    public static func whereField(_ field: String, in values: [Any]) -> Filter { Filter(.field(field, .in, values)) }
    public static func whereField(_ field: String, notIn values: [Any]) -> Filter { Filter(.field(field, .notIn, values)) }
    public static func whereField(_ path: FieldPath, isEqualTo value: Any) -> Filter { Filter(.field(path, .equal, value)) }
    public static func orFilter(_ filters: [Filter]) -> Filter { Filter(.composite(.or, filters)) }
    public static func andFilter(_ filters: [Filter]) -> Filter { Filter(.composite(.and, filters)) }

    func build(for q: EmberModel.Query) throws -> EmberModel.Filter {
        switch kind {
        case .field(let f, let op, let v): return .field(try Filter.fieldFilter(f, op, v, query: q))
        case .composite(let op, let fs):
            return .composite(CompositeFilter(op: op, filters: try fs.map { try $0.build(for: q) }))
        }
    }

    /// Converts a field, operator and Swift value into a model filter (document ids become references).
    static func fieldFilter(_ field: Any, _ op: FilterOperator, _ value: Any, query q: EmberModel.Query) throws -> FieldFilter {
        let path = try UserData.fieldPath(field)
        func operand(_ v: Any) throws -> Value {
            if path.isDocumentId, let s = v as? String {
                if q.isCollectionGroupQuery {
                    guard let p = try? ResourcePath(parsing: s), p.isDocumentPath else {
                        throw EmberError.invalidArgument("Invalid query. When querying a collection group by documentId(), the value provided must result in a valid document path, but '\(s)' is not because it has an odd number of segments.")
                    }
                    return .reference(DocumentKey(unchecked: p))
                }
                if s.isEmpty || s.utf8.contains(0x2F) {   // bytes: "/" before a combining mark too
                    throw EmberError.invalidArgument("Invalid query. When querying a collection by documentId(), you must provide a plain document ID, but '\(s)' contains a '/' character or is empty.")
                }
                return .reference(DocumentKey(unchecked: q.path.appending(s)))
            }
            return try UserData.plainValue(v, path: path.canonical)
        }
        let v: Value
        if op.takesArray {
            guard let arr = value as? [Any] else {
                throw EmberError.invalidArgument("Invalid query. A non-empty array is required for '\(op.rawValue)' filters.")
            }
            v = .array(try arr.map(operand))
        } else {
            v = try operand(value)
        }
        // in / not-in / array-contains-any list values, each of which may be an array.
        if op.takesArray, case .array(let elements) = v {
            for e in elements { try DocumentLimits.validate(value: e) }
        } else {
            try DocumentLimits.validate(value: v)
        }
        return FieldFilter(field: path, op: op, value: v)
    }
}

/// Responsible for: a count over a query, computed by the backend.
public final class AggregateQuery: Sendable {
    public let query: Query
    init(query: Query) { self.query = query }

    public func getAggregation(source: AggregateSource, completion: @escaping @Sendable (AggregateQuerySnapshot?, Error?) -> Void) {
        let fs = query.firestore
        do {
            try fs.client.count(try query.valid()) { r in
                fs.post {
                    switch r {
                    case .success(let n): completion(AggregateQuerySnapshot(count: NSNumber(value: n), query: self), nil)
                    case .failure(let e): completion(nil, e)
                    }
                }
            }
        } catch {
            fs.post { completion(nil, error) }
        }
    }

    public func getAggregation(source: AggregateSource) async throws -> AggregateQuerySnapshot {
        try await withCheckedThrowingContinuation { c in
            getAggregation(source: source) { s, e in if let s { c.resume(returning: s) } else { c.resume(throwing: e!) } }
        }
    }
}

public enum AggregateSource: Sendable { case server }

public final class AggregateQuerySnapshot: Sendable {
    public let count: NSNumber
    public let query: AggregateQuery
    init(count: NSNumber, query: AggregateQuery) { self.count = count; self.query = query }
}
