import XCTest
import Foundation
import EmberModel
@testable import EmberStorage

/// SQLiteDocumentStore's recent rows: a read answered from them is always what the table holds,
/// through puts, conditional puts, inserts where absent, removes and rolled-back transactions,
/// small rows and large.
final class SQLiteDocumentStoreTests: XCTestCase {
    func testARolledBackWriteIsNotReadBack() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { p.close() }
        let store = p.backendDocuments
        store.put(sdoc("c/a", ["v": .int(1)], version: 1))
        XCTAssertEqual(store.get(skey("c/a"))?.version, 1)   // known now
        XCTAssertNil(store.get(skey("c/new")))               // known absent now
        struct Boom: Error {}
        XCTAssertThrowsError(try p.runTransaction("t") {
            store.put(sdoc("c/a", ["v": .int(2)], version: 2))
            store.put(sdoc("c/new", ["v": .int(2)], version: 2))
            XCTAssertEqual(store.get(skey("c/a"))?.version, 2)   // inside: the transaction's rows
            throw Boom()
        })
        XCTAssertEqual(store.get(skey("c/a"))?.version, 1)
        XCTAssertEqual(store.get(skey("c/a"))?.data["v"], .int(1))
        XCTAssertNil(store.get(skey("c/new")))
    }

    func testReadsMatchTheTableThroughRandomWrites() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        let store = p.backendDocuments
        var model: [String: Document] = [:]   // what the table holds
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0..<UInt64.max, using: &rng)
        var g = SplitMix(seed: seed)
        let keys = (0..<300).map { "c/d\($0)" }   // more keys than the store remembers
        struct Boom: Error {}
        for step in 0..<4000 {
            let k = keys[Int(g.next() % UInt64(keys.count))]
            let v = Int64(g.next() % 50)
            switch g.next() % 8 {
            case 0, 1:   // some over the size the store keeps in memory
                var fields: [String: Value] = ["v": .int(v), "s": .int(Int64(step))]
                if v % 5 == 0 { fields["big"] = .string(String(repeating: "x", count: 5000)) }
                let d = sdoc(k, fields, version: v)
                store.put(d)
                model[k] = d
            case 2:
                let d = sdoc(k, ["v": .int(v)], version: v)
                if store.putIfNewer(d) { model[k] = d }
                else { XCTAssertGreaterThan(model[k]?.version ?? Int64.max, v, "seed \(seed)") }
            case 3:
                store.remove(skey(k))
                model[k] = nil
            case 4:
                let d = Document.missing(skey(k), version: v)
                store.put(d)
                model[k] = d
            case 5:   // a pending local state is stored as a plain backend row
                let d = Document(key: skey(k), data: MapValue(["l": .int(v)]), version: v, createTime: v, updateTime: v,
                                 hasLocalMutations: true)
                store.put(d)
                model[k] = Document(key: skey(k), data: d.data, version: v, createTime: v, updateTime: v)
            case 6:   // stored only where the table holds nothing for the key, not even a tombstone
                let d = sdoc(k, ["i": .int(v)], version: v)
                XCTAssertEqual(store.insertIfAbsent(d), model[k] == nil, "step \(step), seed \(seed)")
                if model[k] == nil { model[k] = d }
            default:
                XCTAssertThrowsError(try p.runTransaction("rolled back") {
                    store.put(sdoc(k, ["never": .bool(true)], version: 99))
                    _ = store.get(skey(k))
                    store.remove(skey(keys[Int(g.next() % UInt64(keys.count))]))
                    throw Boom()
                })
            }
            let probe = keys[Int(g.next() % UInt64(keys.count))]
            for key in [k, probe] { assertSame(store.get(skey(key)), model[key], "step \(step), seed \(seed)") }
        }
        p.close()
        let q = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { q.close() }
        for k in keys { assertSame(q.backendDocuments.get(skey(k)), model[k], "after reopening, seed \(seed)") }
    }

    private func assertSame(_ got: Document?, _ want: Document?, _ what: String, line: UInt = #line) {
        guard let want else { return XCTAssertNil(got, what, line: line) }
        guard let got else { return XCTFail("missing: \(what)", line: line) }
        XCTAssertEqual(got.exists, want.exists, what, line: line)
        XCTAssertEqual(got.version, want.version, what, line: line)
        XCTAssertEqual(got.data, want.data, what, line: line)
        XCTAssertFalse(got.hasLocalMutations, what, line: line)
        if want.exists {
            XCTAssertEqual(got.createTime, want.createTime, what, line: line)
            XCTAssertEqual(got.updateTime, want.updateTime, what, line: line)
        }
    }
}

/// Documents read from the file carry their stored bytes and decode them on first use: what
/// they read as, field by field and whole, is what was written, and a read that only filters
/// on a field decodes nothing.
final class SQLiteStoredFieldsTests: XCTestCase {
    func testDocumentsReadBackAreWhatWasWritten() throws {
        let dir = TempDir()
        var rng = SystemRandomNumberGenerator()
        var written: [String: MapValue] = [:]
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        try p.runTransaction("fill") {
            for i in 0..<200 {
                var fields: [String: Value] = [:]
                for k in ["a", "b", "c"] where Bool.random(using: &rng) { fields[k] = RandomValues.value(depth: 0, &rng) }
                written["c/d\(i)"] = MapValue(fields)
                p.backendDocuments.put(sdoc("c/d\(i)", fields))
            }
        }
        p.close()
        let again = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { again.close() }
        let paths = try ["a", "b", "c", "a.a", "a.b", "b.c", "c.a.b", "d"].map { try FieldPath(parsing: $0) }
        for (k, fields) in written {
            let built = sdoc(k, [:]).key
            let d = try XCTUnwrap(again.backendDocuments.get(built))
            XCTAssertEqual(d.storedFields, ValueMessagePack.encode(.map(fields)))
            for path in paths {
                // Bytes, not Values: NaN is not equal to itself.
                XCTAssertEqual(d.field(path).map { ValueMessagePack.encode($0) },
                               Document(key: built, data: fields, version: 1, createTime: 1, updateTime: 1).field(path).map { ValueMessagePack.encode($0) },
                               "\(k) \(path)")
            }
            XCTAssertEqual(ValueMessagePack.encode(.map(d.data)), ValueMessagePack.encode(.map(fields)))
        }
    }

    func testAQueryThatOnlyFiltersDecodesNothing() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        try p.runTransaction("fill") {
            for i in 0..<100 { p.backendDocuments.put(sdoc("c/d\(i)", ["g": .int(Int64(i % 10)), "name": .string("n\(i)")])) }
        }
        p.close()
        let again = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { again.close() }
        let q = try Query(collection: spath("c")).filter(.field(FieldFilter(field: try FieldPath(parsing: "g"), op: .equal, value: .int(3))))
        for indexed in [false, true] {
            if indexed {
                try again.indexManager!.setConfiguration([IndexDefinition(collectionGroup: "c", fields: [.init(path: try FieldPath(parsing: "g"), kind: .ascending)])])
            }
            let found = again.backendDocuments.documents(matching: q) { q.matchesListed($0) }
            XCTAssertEqual(found.count, 10)
            XCTAssertEqual(again.indexManager?.lastRead.usedIndex != nil, indexed)
            for d in found {
                XCTAssertFalse(d.fieldsDecoded, "\(d.key) was decoded (indexed: \(indexed))")
                XCTAssertEqual(d.field(try FieldPath(parsing: "g")), .int(3))
                XCTAssertEqual(d.data["name"], .string("n\(d.key.id.dropFirst())"))
            }
        }
    }

    func testAPointReadOfADamagedRowFailsSoNoWriteBuildsOnIt() throws {
        let dir = TempDir()
        var p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        p.backendDocuments.put(sdoc("c/bad", ["keep": .int(1)]))
        damageStoredFields(ofId: "bad", in: p)
        p.close()
        p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)   // (no recent rows)
        defer { p.close() }
        XCTAssertThrowsError(try p.runTransaction("update") {
            _ = p.backendDocuments.get(skey("c/bad"))
        }) { XCTAssertEqual(($0 as? EmberError)?.code, .dataLoss) }
        // A query lists the row; its fields read as none and say why.
        let listed = p.backendDocuments.documents(matching: Query(collection: spath("c")))
        XCTAssertEqual(listed.map { $0.key.id }, ["bad"])
        XCTAssertEqual(listed.first?.storedFieldsError?.code, .dataLoss)
    }

    // "é" and "e\u{301}" are canonically equivalent Swift strings but different collections: a
    // group query through an index (rows whose parent is read from the row) keeps them apart.
    func testCanonicallyEquivalentCollectionsStayApartInAGroupRead() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { p.close() }
        p.backendDocuments.put(sdoc("rooms/\u{E9}/msgs/a", ["n": .int(1)]))
        p.backendDocuments.put(sdoc("rooms/e\u{301}/msgs/b", ["n": .int(2)]))
        try p.indexManager!.setConfiguration([IndexDefinition(collectionGroup: "msgs", scope: .collectionGroup,
                                                              fields: [.init(path: try FieldPath(parsing: "n"), kind: .ascending)])])
        let q = try Query(collectionGroup: "msgs").filter(.field(FieldFilter(field: try FieldPath(parsing: "n"), op: .greaterThan, value: .int(0))))
        let found = p.backendDocuments.documents(matching: q)
        XCTAssertNotNil(p.indexManager?.lastRead.usedIndex)
        let paths = found.map { Array($0.key.path.canonical.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        XCTAssertEqual(paths, [Array("rooms/e\u{301}/msgs/b".utf8), Array("rooms/\u{E9}/msgs/a".utf8)])
        for d in found { XCTAssertEqual(d.field(try FieldPath(parsing: "n")), d.key.id == "a" ? .int(1) : .int(2)) }
    }
}

