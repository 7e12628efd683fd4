import EmberModel

/// Responsible for: the names on the wire. A request names a database as
/// `projects/P/databases/D` and a document as `projects/P/databases/D/documents/PATH`; every
/// database is its own namespace, kept in the one backend under a two-segment prefix that no
/// client path can reach (`.p:P/.d:D`), so collection-group queries and collection listings of
/// one database never see another's documents.
public struct DatabaseName: Hashable, Sendable {
    public let project: String
    public let database: String

    /// `projects/P/databases/D`.
    public var name: String { "projects/\(project)/databases/\(database)" }
    /// `projects/P/databases/D/documents`, the parent of root collections.
    public var documentsRoot: String { name + "/documents" }
    /// Where this database's documents live in the backend.
    public var prefix: ResourcePath { ResourcePath(segments: [".p:" + project, ".d:" + database]) }

    public init(project: String, database: String) throws {
        for (what, id) in [("project", project), ("database", database)] {
            guard !id.isEmpty, id.utf8.count <= 100,
                  id.utf8.allSatisfy({ c in (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F || c == 0x28 || c == 0x29 || c == 0x2E })
            else { throw EmberError.invalidArgument("Invalid \(what) id '\(id)'") }
        }
        self.project = project
        self.database = database
    }

    /// Parses `projects/P/databases/D`.
    public init(parsing s: String) throws {
        let parts = splitAtSlashes(s)
        guard parts.count == 4, parts[0] == "projects", parts[2] == "databases" else {
            throw EmberError.invalidArgument("Invalid database name '\(s)': expected projects/{project_id}/databases/{database_id}")
        }
        try self.init(project: parts[1], database: parts[3])
    }

    /// Parses `projects/P/databases/D/documents[/PATH]` into the database and the path under it
    /// (the empty path for the documents root).
    public static func parse(resource s: String) throws -> (DatabaseName, ResourcePath) {
        let parts = splitAtSlashes(s)
        guard parts.count >= 5, parts[0] == "projects", parts[2] == "databases", parts[4] == "documents" else {
            throw EmberError.invalidArgument("Invalid resource name '\(s)': expected projects/{project_id}/databases/{database_id}/documents/...")
        }
        let db = try DatabaseName(project: parts[1], database: parts[3])
        let segments = Array(parts.dropFirst(5))
        try WireDataRules.check(ids: segments)
        for seg in segments { try ResourcePath.validateSegment(seg, in: s) }
        let path = ResourcePath(segments: segments)
        if path.canonical.utf8.count > ResourcePath.maxNameBytes {
            throw EmberError.invalidArgument("Document name '\(s.prefix(80))...' is longer than \(ResourcePath.maxNameBytes) bytes")
        }
        return (db, path)
    }

    /// The backend key of the document named `s`.
    public static func parse(document s: String) throws -> (DatabaseName, DocumentKey) {
        let (db, path) = try parse(resource: s)
        guard path.isDocumentPath else {
            throw EmberError.invalidArgument("Document name \"\(s)\" has odd number of segments")
        }
        return (db, db.key(path))
    }

    public func key(_ path: ResourcePath) -> DocumentKey { DocumentKey(unchecked: internalPath(path)) }
    public func internalPath(_ path: ResourcePath) -> ResourcePath { ResourcePath(segments: prefix.segments + path.segments) }

    /// The client's path of a backend path of this database.
    public func clientPath(_ path: ResourcePath) -> ResourcePath { ResourcePath(segments: Array(path.segments.dropFirst(2))) }

    /// The wire name of a backend key (of this database).
    public func name(of key: DocumentKey) -> String { documentsRoot + "/" + clientPath(key.path).canonical }

    /// `message` with every backend path (`.p:P/.d:D/rest`) written as its wire name
    /// (`projects/P/databases/D/documents/rest`): the backend's errors name documents by key.
    public static func externalize(_ message: String) -> String {
        guard message.contains(".p:") else { return message }
        var out = ""
        var rest = Substring(message)
        while let r = rest.range(of: ".p:") {
            out += rest[..<r.lowerBound]
            let after = rest[r.upperBound...]
            guard let slash = after.firstIndex(of: "/"), after[slash...].hasPrefix("/.d:") else {
                out += ".p:"
                rest = after
                continue
            }
            let project = after[..<slash]
            let dbStart = after.index(slash, offsetBy: 4)
            let dbEnd = after[dbStart...].firstIndex(where: { $0 == "/" || $0 == " " || $0 == "'" || $0 == "\"" }) ?? after.endIndex
            out += "projects/\(project)/databases/\(after[dbStart..<dbEnd])/documents"
            rest = after[dbEnd...]
        }
        return out + rest
    }

    /// The database of a backend key, from its prefix.
    public static func of(_ key: DocumentKey) -> DatabaseName? {
        let s = key.path.segments
        guard s.count >= 4, s[0].hasPrefix(".p:"), s[1].hasPrefix(".d:") else { return nil }
        return try? DatabaseName(project: String(s[0].dropFirst(3)), database: String(s[1].dropFirst(3)))
    }
}
