import XCTest
import Foundation
import EmberModel
@testable import EmberStorage

/// The fast paths of the SQLite stores: conditional puts, group scans through the `collections`
/// table, the collector's size bound, and the upgrade of a schema-1 file.
final class SQLiteStorePathsTests: XCTestCase {
    func testPutIfNewerKeepsNewerVersions() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        for store in [p.backendDocuments, p.remoteDocuments, MemoryDocumentStore()] as [DocumentStore] {
            XCTAssertTrue(store.putIfNewer(sdoc("c/a", ["v": .int(1)], version: 5)))
            XCTAssertFalse(store.putIfNewer(sdoc("c/a", ["v": .int(0)], version: 4)), "older version refused")
            XCTAssertEqual(store.get(skey("c/a"))?.data["v"], .int(1))
            XCTAssertTrue(store.putIfNewer(sdoc("c/a", ["v": .int(2)], version: 5)), "same version replaces")
            XCTAssertTrue(store.putIfNewer(Document.missing(skey("c/a"), version: 7)))
            XCTAssertEqual(store.get(skey("c/a"))?.exists, false)
            XCTAssertEqual(store.get(skey("c/a"))?.version, 7)
            XCTAssertFalse(store.putIfNewer(sdoc("c/a", ["v": .int(3)], version: 6)))
            XCTAssertEqual(store.count, 1)
        }
    }

    func testPutIfNewerKeepsIndexesCurrent() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        try p.indexManager!.setConfiguration(IndexDefinition.parse(json: #"{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"v","order":"ASCENDING"}]}]}"#))
        let q = try Query(collection: spath("c")).filter(.field(FieldFilter(field: FieldPath(unchecked: ["v"]), op: .equal, value: .int(1))))
        XCTAssertTrue(p.remoteDocuments.putIfNewer(sdoc("c/a", ["v": .int(1)], version: 5)))
        XCTAssertEqual(p.remoteDocuments.documents(matching: q).map { $0.key }, [skey("c/a")])
        XCTAssertFalse(p.remoteDocuments.putIfNewer(sdoc("c/a", ["v": .int(2)], version: 4)))
        XCTAssertEqual(p.remoteDocuments.documents(matching: q).map { $0.key }, [skey("c/a")], "a refused put leaves the index")
        XCTAssertTrue(p.remoteDocuments.putIfNewer(sdoc("c/a", ["v": .int(2)], version: 6)))
        XCTAssertEqual(p.remoteDocuments.documents(matching: q).count, 0)
        XCTAssertNotNil(p.indexManager!.lastRead.usedIndex)
    }

    /// "é" precomposed and decomposed are two collections: both are listed, in UTF-8 byte order
    /// ("e\u{301}" starts with 0x65, "\u{E9}" with 0xC3), and a document path that differs from
    /// another only so does not lend it its subcollections.
    func testCollectionIdsAreDistinctAndSortedByUTF8Bytes() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        for store in [p.backendDocuments, p.remoteDocuments, MemoryDocumentStore()] as [DocumentStore] {
            store.put(sdoc("\u{E9}/a", [:]))
            store.put(sdoc("e\u{301}/b", [:]))
            store.put(sdoc("z/1", [:]))
            store.put(sdoc("r/\u{E9}/s1/x", [:]))
            store.put(sdoc("r/e\u{301}/s2/y", [:]))
            XCTAssertEqual(store.collectionIds(under: ResourcePath(segments: [])).map { Array($0.utf8) },
                           [Array("e\u{301}".utf8), Array("r".utf8), Array("z".utf8), Array("\u{E9}".utf8)], "\(store)")
            XCTAssertEqual(store.collectionIds(under: spath("r/\u{E9}")).map { Array($0.utf8) }, [Array("s1".utf8)], "\(store)")
            XCTAssertEqual(store.collectionIds(under: spath("r/e\u{301}")).map { Array($0.utf8) }, [Array("s2".utf8)], "\(store)")
        }
    }

    func testGroupScansSeeEveryCollectionOfTheGroupExactly() throws {
        let dir = TempDir()
        var p: SQLitePersistence? = try SQLitePersistence(path: dir.file())
        // "é" precomposed and decomposed are two collections (and two groups), not one.
        for store in [p!.backendDocuments, p!.remoteDocuments] {
            store.put(sdoc("\u{E9}/a", [:]))
            store.put(sdoc("e\u{301}/b", [:]))
            store.put(sdoc("x/1/\u{E9}/c", [:]))
            store.put(sdoc("x/2/\u{E9}/d", [:]))
            store.put(sdoc("x/2/\u{E9}/e", [:]))
            store.put(sdoc("x/2/other/f", [:]))
        }
        for _ in 0..<2 {
            for store in [p!.backendDocuments, p!.remoteDocuments] {
                XCTAssertEqual(Set(store.documents(inGroup: "\u{E9}").map { $0.key.path.canonical }),
                               ["\u{E9}/a", "x/1/\u{E9}/c", "x/2/\u{E9}/d", "x/2/\u{E9}/e"])
                XCTAssertEqual(store.documents(inGroup: "e\u{301}").map { $0.key.id }, ["b"])
                XCTAssertEqual(store.documents(inGroup: "nothing").count, 0)
            }
            p!.close()
            p = try SQLitePersistence(path: dir.file())   // and again after reopening
        }
        p!.close()
    }

    /// An unindexed scan checks the filters on the encoded fields first: its matches are those of
    /// decoding everything (nested paths, missing fields, mixed types, tombstones, ORs, `__name__`).
    func testPrefilteredScanAgreesWithDecodingEverything() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        let mem = MemoryDocumentStore()
        var rng = SystemRandomNumberGenerator()
        let values: [Value] = [.int(1), .int(2), .double(2.0), .string("a"), .null, .array([.int(1), .string("a")]), .map(MapValue(["n": .int(1)]))]
        for i in 0..<300 {
            var f: [String: Value] = [:]
            if Bool.random(using: &rng) { f["a"] = values.randomElement(using: &rng)! }
            if Bool.random(using: &rng) { f["b"] = .map(MapValue(["c": values.randomElement(using: &rng)!])) }
            if Bool.random(using: &rng) { f["z"] = .string(String(repeating: "p", count: Int.random(in: 0...40))) }
            let d = i % 17 == 0 ? Document.missing(skey("c/d\(i)"), version: 2) : sdoc("c/d\(i)", f)
            for s in [p.remoteDocuments, mem] as [DocumentStore] { s.put(d) }
        }
        p.remoteDocuments.put(sdoc("x/1/c/sub", ["a": .int(1)]))
        mem.put(sdoc("x/1/c/sub", ["a": .int(1)]))
        func ff(_ path: [String], _ op: FilterOperator, _ v: Value) -> Filter { .field(FieldFilter(field: FieldPath(unchecked: path), op: op, value: v)) }
        let filters: [[Filter]] = [
            [ff(["a"], .equal, .int(1))], [ff(["a"], .equal, .double(2))], [ff(["b", "c"], .greaterThan, .int(1))],
            [ff(["a"], .notEqual, .int(1))], [ff(["a"], .arrayContains, .string("a"))], [ff(["a"], .in, .array([.int(2), .null]))],
            [ff(["a"], .notIn, .array([.int(1)]))], [ff(["b", "c", "n"], .equal, .int(1))], [ff(["a"], .equal, .int(1)), ff(["b", "c"], .lessThan, .int(5))],
            [.composite(CompositeFilter(op: .or, filters: [ff(["a"], .equal, .int(1)), ff(["b", "c"], .equal, .int(2))]))],
            [ff(["__name__"], .greaterThan, .reference(skey("c/d5")))], [ff(["zz"], .equal, .int(1))],
        ]
        for fs in filters {
            for group in [false, true] {
                var q = group ? Query(collectionGroup: "c") : try Query(collection: spath("c"))
                for f in fs { q = try q.filter(f) }
                let got = Set(p.remoteDocuments.documents(matching: q).filter { q.matches($0) }.map { $0.key })
                let want = Set(mem.documents(matching: q).filter { q.matches($0) }.map { $0.key })
                XCTAssertEqual(got, want, "\(fs) group \(group)")
            }
        }
    }

    func testCollectorSkipsSummingUnderTheBoundAndStillCollects() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        let store = p.remoteDocuments
        let big = MapValue(["pad": .string(String(repeating: "x", count: 1000))])
        for i in 0..<100 { try! p.runTransaction("fill") { store.put(Document(key: skey("c/d\(i)"), data: big, version: 1, createTime: 1, updateTime: 1)) } }
        let total = store.byteSize
        XCTAssertEqual(store.collectGarbage(thresholdBytes: total) { _ in false }, 0)
        // Replacing documents keeps the bound an upper bound; collecting still gets under it.
        for i in 0..<50 { store.put(Document(key: skey("c/d\(i)"), data: big, version: 2, createTime: 1, updateTime: 2)) }
        XCTAssertEqual(store.byteSize, total)
        let removed = store.collectGarbage(thresholdBytes: total / 2) { _ in false }
        XCTAssertGreaterThan(removed, 0)
        XCTAssertLessThanOrEqual(store.byteSize, total / 2)
        XCTAssertEqual(store.count, 100 - removed)
    }

    /// A file written with schema 1 (a group index per document table, no `collections` table)
    /// is upgraded on open: every document and group scan still there.
    func testSchemaOneFileIsUpgraded() throws {
        let dir = TempDir()
        let db = try SQLiteDatabase(path: dir.file())
        let docs = { (t: String) in """
            CREATE TABLE \(t)(parent TEXT NOT NULL, id TEXT NOT NULL, grp TEXT NOT NULL,
              present INTEGER NOT NULL, version INTEGER NOT NULL, create_time INTEGER NOT NULL,
              update_time INTEGER NOT NULL, data BLOB, size INTEGER NOT NULL, seq INTEGER NOT NULL,
              PRIMARY KEY(parent, id)) WITHOUT ROWID;
            CREATE INDEX \(t)_grp ON \(t)(grp);
            """ }
        try db.exec("""
            PRAGMA journal_mode=WAL;
            BEGIN;
            CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            \(docs("backend_docs"))
            \(docs("remote_docs"))
            CREATE INDEX remote_docs_seq ON remote_docs(seq);
            CREATE TABLE mutations(batch_id INTEGER PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE targets(target_id TEXT PRIMARY KEY, read_time INTEGER NOT NULL, last_used INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE index_config(index_id INTEGER PRIMARY KEY, grp TEXT NOT NULL, definition BLOB NOT NULL, auto INTEGER NOT NULL);
            CREATE TABLE index_entries(index_id INTEGER NOT NULL, key BLOB NOT NULL, parent TEXT NOT NULL, id TEXT NOT NULL,
              PRIMARY KEY(index_id, key, parent, id)) WITHOUT ROWID;
            CREATE INDEX index_entries_doc ON index_entries(parent, id);
            INSERT INTO targets VALUES('q', 5, 1);
            PRAGMA user_version=1;
            COMMIT;
            """)
        let blob = ValueMessagePack.encode(.map(MapValue(["v": .int(7)])))
        for t in ["backend_docs", "remote_docs"] {
            for (parent, id) in [("c", "a"), ("x/1/c", "b"), ("other", "z")] {
                try db.run("INSERT INTO \(t) VALUES(?, ?, ?, 1, 3, 3, 3, ?, 10, 1)", [.text(parent), .text(id), .text(String(parent.split(separator: "/").last!)), .blob(blob)])
            }
        }
        db.close()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        XCTAssertEqual(try p.db.scalarInt("PRAGMA user_version"), SQLitePersistence.schemaVersion)
        XCTAssertEqual(try p.db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_grp'"), 0)
        // Schema 3: targets keep a resume token (none for those written before).
        XCTAssertEqual(p.targetCache.get("q"), TargetData(targetId: "q", readTime: 5, lastUsed: 1))
        p.targetCache.put(TargetData(targetId: "q", readTime: 6, lastUsed: 0, resumeToken: [9]))
        XCTAssertEqual(p.targetCache.get("q")?.resumeToken, [9])
        for store in [p.backendDocuments, p.remoteDocuments] {
            XCTAssertEqual(store.get(skey("c/a"))?.data["v"], .int(7))
            XCTAssertEqual(Set(store.documents(inGroup: "c").map { $0.key.path.canonical }), ["c/a", "x/1/c/b"])
            store.put(sdoc("y/2/c/n", ["v": .int(1)]))
            XCTAssertEqual(store.documents(inGroup: "c").count, 3)
        }
    }
}
