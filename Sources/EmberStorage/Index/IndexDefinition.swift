import EmberModel

/// Responsible for: one offline query index (Firestore's index JSON entry): the collection group
/// it covers, its scope and its ordered fields, and parsing Firestore's index configuration.
///
///     let defs = try IndexDefinition.parse(json: #"{"indexes":[{"collectionGroup":"cities",
///         "queryScope":"COLLECTION","fields":[{"fieldPath":"state","order":"ASCENDING"}]}]}"#)
public struct IndexDefinition: Sendable, Equatable, CustomStringConvertible {
    public enum Scope: String, Sendable { case collection = "COLLECTION", collectionGroup = "COLLECTION_GROUP" }
    public enum Kind: String, Sendable { case ascending = "ASCENDING", descending = "DESCENDING", contains = "CONTAINS" }

    public struct Field: Sendable, Equatable {
        public let path: FieldPath
        public let kind: Kind
        public init(path: FieldPath, kind: Kind) { self.path = path; self.kind = kind }
    }

    public let collectionGroup: String
    public let scope: Scope
    public let fields: [Field]

    public init(collectionGroup: String, scope: Scope = .collection, fields: [Field]) {
        self.collectionGroup = collectionGroup
        self.scope = scope
        self.fields = fields
    }

    /// Equal when the group ids have the same UTF-8 bytes ("\u{E9}" and "e\u{301}" are two groups),
    /// and scope and fields are equal.
    public static func == (a: IndexDefinition, b: IndexDefinition) -> Bool {
        equalUTF8(a.collectionGroup, b.collectionGroup) && a.scope == b.scope && a.fields == b.fields
    }

    public var description: String {
        "\(collectionGroup)[\(scope.rawValue)](" + fields.map { "\($0.path.canonical) \($0.kind.rawValue)" }.joined(separator: ", ") + ")"
    }

    /// Parses Firestore's index configuration: `indexes` (collectionGroup, queryScope, fields of
    /// fieldPath with order or arrayConfig) and `fieldOverrides` (each of its `indexes` becomes a
    /// single-field index). `__name__` fields are implicit and dropped. Throws invalidArgument.
    public static func parse(json: String) throws -> [IndexDefinition] {
        let root: Value
        do { root = try ValueJSON.parse(json) } catch {
            throw EmberError.invalidArgument("Failed to parse index configuration JSON: \(error)")
        }
        guard case .map(let top) = root else { throw bad("the top level must be an object") }
        var out: [IndexDefinition] = []
        if let v = top["indexes"] {
            guard case .array(let list) = v else { throw bad("'indexes' must be an array") }
            for (i, item) in list.enumerated() {
                guard case .map(let m) = item else { throw bad("indexes[\(i)] must be an object") }
                let group = try string(m, "collectionGroup", "indexes[\(i)]")
                let scope = try parseScope(m["queryScope"], "indexes[\(i)]")
                guard case .array(let fs)? = m["fields"] else { throw bad("indexes[\(i)].fields must be an array") }
                var fields: [Field] = []
                for (j, f) in fs.enumerated() {
                    guard case .map(let fm) = f else { throw bad("indexes[\(i)].fields[\(j)] must be an object") }
                    let where_ = "indexes[\(i)].fields[\(j)]"
                    let path = try fieldPath(try string(fm, "fieldPath", where_), where_)
                    if path.isDocumentId { continue }
                    fields.append(Field(path: path, kind: try parseKind(fm, where_)))
                }
                if fields.isEmpty { throw bad("indexes[\(i)] has no fields") }
                out.append(IndexDefinition(collectionGroup: group, scope: scope, fields: fields))
            }
        }
        if let v = top["fieldOverrides"] {
            guard case .array(let list) = v else { throw bad("'fieldOverrides' must be an array") }
            for (i, item) in list.enumerated() {
                guard case .map(let m) = item else { throw bad("fieldOverrides[\(i)] must be an object") }
                let group = try string(m, "collectionGroup", "fieldOverrides[\(i)]")
                let path = try fieldPath(try string(m, "fieldPath", "fieldOverrides[\(i)]"), "fieldOverrides[\(i)]")
                guard let iv = m["indexes"] else { continue }
                guard case .array(let idx) = iv else { throw bad("fieldOverrides[\(i)].indexes must be an array") }
                for (j, e) in idx.enumerated() {
                    guard case .map(let em) = e else { throw bad("fieldOverrides[\(i)].indexes[\(j)] must be an object") }
                    let where_ = "fieldOverrides[\(i)].indexes[\(j)]"
                    if path.isDocumentId { continue }
                    out.append(IndexDefinition(collectionGroup: group, scope: try parseScope(em["queryScope"], where_),
                                               fields: [Field(path: path, kind: try parseKind(em, where_))]))
                }
            }
        }
        return out
    }

    static func bad(_ why: String) -> EmberError { EmberError.invalidArgument("Invalid index configuration: \(why).") }

    static func string(_ m: MapValue, _ k: String, _ where_: String) throws -> String {
        guard case .string(let s)? = m[k], !s.isEmpty else { throw bad("\(where_).\(k) must be a non-empty string") }
        return s
    }

    static func fieldPath(_ s: String, _ where_: String) throws -> FieldPath {
        do { return try FieldPath(parsing: s) } catch { throw bad("\(where_).fieldPath '\(s)' is not a valid field path") }
    }

    static func parseScope(_ v: Value?, _ where_: String) throws -> Scope {
        guard let v else { return .collection }
        guard case .string(let s) = v, let scope = Scope(rawValue: s) else { throw bad("\(where_).queryScope must be COLLECTION or COLLECTION_GROUP") }
        return scope
    }

    static func parseKind(_ m: MapValue, _ where_: String) throws -> Kind {
        switch (m["order"], m["arrayConfig"]) {
        case (.string(let o)?, nil):
            guard o == "ASCENDING" || o == "DESCENDING" else { throw bad("\(where_).order must be ASCENDING or DESCENDING") }
            return Kind(rawValue: o)!
        case (nil, .string(let a)?):
            guard a == "CONTAINS" else { throw bad("\(where_).arrayConfig must be CONTAINS") }
            return .contains
        default:
            throw bad("\(where_) needs exactly one of order or arrayConfig")
        }
    }

    // MARK: storage form

    /// The definition as a value (stored in the index_config table).
    var value: Value {
        .array([.string(collectionGroup), .string(scope.rawValue),
                .array(fields.map { .array([.array($0.path.segments.map { .string($0) }), .string($0.kind.rawValue)]) })])
    }

    init(value: Value) throws {
        guard case .array(let a) = value, a.count == 3, case .string(let g) = a[0], case .string(let s) = a[1],
              let scope = Scope(rawValue: s), case .array(let fs) = a[2] else { throw EmberError(.dataLoss, "A stored index definition is malformed.") }
        var fields: [Field] = []
        for f in fs {
            guard case .array(let x) = f, x.count == 2, case .array(let segs) = x[0], case .string(let k) = x[1], let kind = Kind(rawValue: k)
            else { throw EmberError(.dataLoss, "A stored index field is malformed.") }
            fields.append(Field(path: FieldPath(unchecked: segs.map { if case .string(let s) = $0 { return s }; return "" }), kind: kind))
        }
        self.init(collectionGroup: g, scope: scope, fields: fields)
    }
}

/// Responsible for: managing the offline query indexes of a persistent cache (Firestore's
/// `PersistentCacheIndexManager` plus `setIndexConfiguration`). Thread-safe.
public protocol IndexManager: AnyObject {
    /// Replaces the configured indexes (auto-created ones stay) and builds the new ones.
    func setConfiguration(_ indexes: [IndexDefinition]) throws
    /// Builds an index when a query scans many more documents than it returns (off by default).
    var autoCreationEnabled: Bool { get set }
    /// Drops every index, configured and auto-created.
    func deleteAllIndexes()
    /// The indexes present, configured and auto-created.
    func indexes() -> [IndexDefinition]
    /// What the last cache read did (tests and benchmarks).
    var lastRead: IndexReadStats { get }
}

/// How one read of the cache found its candidates.
public struct IndexReadStats: Sendable, Equatable {
    public var usedIndex: IndexDefinition?
    public var documentsRead: Int
    public init(usedIndex: IndexDefinition? = nil, documentsRead: Int = 0) {
        self.usedIndex = usedIndex
        self.documentsRead = documentsRead
    }
}
