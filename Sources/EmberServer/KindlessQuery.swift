import EmberModel
import EmberWire

/// Responsible for: kind-less queries, a query over every collection below a parent
/// (`all_descendants` with an empty `collection_id`, what the Python client's
/// `recursive_delete` sends). The collection ids present below the parent are found by walking
/// the backend's parents; the query runs as a collection-group query for each, and the results
/// are merged in the query's order, its limit applied to the whole.
struct KindlessQuery {
    let door: BackendDoor
    let db: DatabaseName
    let parentPath: ResourcePath
    let structured: StructuredQuery

    static func isKindless(_ sq: StructuredQuery) -> Bool {
        sq.from.count == 1 && sq.from[0].allDescendants && sq.from[0].collectionID.isEmpty
    }

    /// The query's documents and the read version, limit applied (the offset is the caller's).
    func run(_ template: WireQuery) async throws -> (documents: [Document], version: Int64) {
        var set = DocumentSet(orderBy: template.query.normalizedOrderBy)
        var version: Int64 = 0
        for id in await collectionIds() {
            var sq = structured
            sq.from[0].collectionID = id
            let q = try WireQuery(db: db, parentPath: parentPath, structured: sq)
            let (docs, v) = await door.run(q.query)
            version = max(version, v)
            for d in docs { _ = set.insert(d) }
        }
        if version == 0 { version = await door.lookup([]).version }
        return (Array(set.window(limit: template.query.limit, type: template.query.limitType)), version)
    }

    /// Every collection id at any depth below the parent.
    private func collectionIds() async -> [String] {
        var found: [String] = []
        var parents = [db.internalPath(parentPath)]
        while let parent = parents.popLast() {
            for id in await door.collectionIds(under: parent) {
                found.append(id)
                let collection = parent.appending(id)
                // The documents of the collection that have something below them.
                for doc in await door.collectionIds(under: collection) { parents.append(collection.appending(doc)) }
            }
        }
        return sortedDistinctUTF8(found)
    }
}
