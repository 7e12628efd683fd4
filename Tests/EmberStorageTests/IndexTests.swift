import XCTest
import Foundation
import EmberModel
import EmberStorage

/// Offline indexes: the order-preserving encoding, parsing Firestore's index JSON, index and
/// scan paths agreeing on randomized data and queries, maintenance, auto-creation, deletion.
final class IndexValueEncoderTests: XCTestCase {
    func testEncodingFollowsValueOrder() {
        var rng = SystemRandomNumberGenerator()
        let values = (0..<400).map { _ in RandomValues.value(depth: 0, &rng) } + RandomValues.edgeCases
        for a in values {
            for b in values {
                let c = Value.compare(a, b)
                let ea = IndexValueEncoder.encode(a), eb = IndexValueEncoder.encode(b)
                if c == 0 { XCTAssertEqual(ea, eb, "\(a) == \(b) in order, so equal keys") }
                if c < 0 { XCTAssertFalse(eb.lexicographicallyPrecedes(ea), "\(a) < \(b) but its key is greater") }
            }
        }
    }

    func testPrefixSuccessor() {
        XCTAssertEqual(IndexValueEncoder.prefixSuccessor([1, 2]), [1, 3])
        XCTAssertEqual(IndexValueEncoder.prefixSuccessor([1, 0xFF]), [2])
        XCTAssertNil(IndexValueEncoder.prefixSuccessor([0xFF, 0xFF]))
    }
}

enum RandomValues {
    static let edgeCases: [Value] = [.null, .bool(false), .bool(true), .double(.nan), .double(-.infinity), .double(.infinity),
                                     .double(-0.0), .int(0), .int(Int64.max), .int(Int64.min), .double(9_007_199_254_740_993),
                                     .int(9_007_199_254_740_993), .string(""), .string("a\u{0}"), .string("a"), .string("\u{0}"),
                                     .bytes([]), .bytes([0]), .array([]), .array([.null]), .map(MapValue()),
                                     .reference(skey("a/b")), .reference(skey("a/b/c/d")), .reference(skey("a\u{0}/b")),
                                     .reference(skey("a/__id-3__")), .reference(skey("a/__id9__")), .reference(skey("a/__id9__/c/\u{0}")),
                                     .reference(skey("a/__id-9223372036854775808__")), .reference(skey("a/\u{0}x")),
                                     vector([1.0]), vector([-1.0, 2.0]), vector([0.0, 0.0, 0.0]),
                                     .map(MapValue(["__type__": .string("__vector__"), "value": .array([.double(3)])])),
                                     .timestamp(Timestamp(micros: -5)), .timestamp(Timestamp(micros: 5))]

    static func vector(_ e: [Double]) -> Value {
        .map(MapValue(["__type__": .string("__vector__"), "value": .array(e.map { .double($0) })]))
    }

    static func value<R: RandomNumberGenerator>(depth: Int, _ rng: inout R) -> Value {
        switch Int.random(in: 0..<(depth > 1 ? 9 : 11), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int64.random(in: -5...5, using: &rng))
        case 3: return .double([-1.5, 0.5, 2.0, 3.0, .nan, -0.0][Int.random(in: 0..<6, using: &rng)])
        case 4: return .string(["", "a", "b", "ab", "é", "a\u{0}b"][Int.random(in: 0..<6, using: &rng)])
        case 5: return .timestamp(Timestamp(micros: Int64.random(in: -3...3, using: &rng)))
        case 6: return .bytes((0..<Int.random(in: 0...2, using: &rng)).map { _ in UInt8.random(in: 0...2, using: &rng) })
        case 7: return .reference(skey(["a/b", "a/c", "a/b/c/d"][Int.random(in: 0..<3, using: &rng)]))
        case 8: return .geoPoint(GeoPoint(latitude: Double(Int.random(in: -1...1, using: &rng)), longitude: 0))
        case 9: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth: depth + 1, &rng) })
        default:
            var m: [String: Value] = [:]
            for _ in 0..<Int.random(in: 0...2, using: &rng) { m[["a", "b", "c"][Int.random(in: 0..<3, using: &rng)]] = value(depth: depth + 1, &rng) }
            return .map(MapValue(m))
        }
    }
}

final class IndexConfigurationTests: XCTestCase {
    func testParsesFirestoreIndexJSON() throws {
        let json = """
        {
          "indexes": [
            {"collectionGroup": "posts", "queryScope": "COLLECTION",
             "fields": [{"fieldPath": "author", "arrayConfig": "CONTAINS"}, {"fieldPath": "timestamp", "order": "DESCENDING"}]},
            {"collectionGroup": "cities", "queryScope": "COLLECTION_GROUP",
             "fields": [{"fieldPath": "state", "order": "ASCENDING"}, {"fieldPath": "`odd.name`", "order": "ASCENDING"}, {"fieldPath": "__name__", "order": "ASCENDING"}]}
          ],
          "fieldOverrides": [
            {"collectionGroup": "posts", "fieldPath": "tags", "indexes": [{"arrayConfig": "CONTAINS", "queryScope": "COLLECTION"}, {"order": "ASCENDING", "queryScope": "COLLECTION_GROUP"}]},
            {"collectionGroup": "posts", "fieldPath": "big", "indexes": []}
          ]
        }
        """
        let defs = try IndexDefinition.parse(json: json)
        XCTAssertEqual(defs.count, 4)
        XCTAssertEqual(defs[0].fields.map { $0.kind }, [.contains, .descending])
        XCTAssertEqual(defs[1].scope, .collectionGroup)
        XCTAssertEqual(defs[1].fields.map { $0.path.segments }, [["state"], ["odd.name"]], "__name__ is implicit")
        XCTAssertEqual(defs[2].fields, [.init(path: try FieldPath(parsing: "tags"), kind: .contains)])
        XCTAssertEqual(defs[3].scope, .collectionGroup)
        XCTAssertEqual(try IndexDefinition.parse(json: "{}"), [])
    }

    func testRejectsMalformedConfiguration() {
        for bad in ["not json", "[]", #"{"indexes": {}}"#, #"{"indexes": [{"fields": []}]}"#,
                    #"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "a"}]}]}"#,
                    #"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "a", "order": "UP"}]}]}"#,
                    #"{"indexes": [{"collectionGroup": "c", "queryScope": "X", "fields": [{"fieldPath": "a", "order": "ASCENDING"}]}]}"#,
                    #"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "a..b", "order": "ASCENDING"}]}]}"#,
                    #"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "a", "order": "ASCENDING", "arrayConfig": "CONTAINS"}]}]}"#] {
            XCTAssertThrowsError(try IndexDefinition.parse(json: bad), bad) { XCTAssertEqual(errorCode($0), .invalidArgument, bad) }
        }
    }
}

final class IndexScanAgreementTests: XCTestCase {
    let fieldNames = ["a", "b", "tags", "m.n"]

    func randomDoc<R: RandomNumberGenerator>(_ k: String, _ rng: inout R) -> Document {
        var d: [String: Value] = [:]
        if Int.random(in: 0..<10, using: &rng) > 0 { d["a"] = [.int(Int64.random(in: 0...9, using: &rng)), .double(Double(Int.random(in: 0...9, using: &rng)) + 0.5), .string("s\(Int.random(in: 0...3, using: &rng))"), .null, .double(.nan), .double(Double(Int.random(in: 0...9, using: &rng)))][Int.random(in: 0..<6, using: &rng)] }
        if Int.random(in: 0..<10, using: &rng) > 0 { d["b"] = .string(["x", "y", "z", "xy"][Int.random(in: 0..<4, using: &rng)]) }
        if Int.random(in: 0..<4, using: &rng) > 0 { d["tags"] = .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in Value.int(Int64.random(in: 0...5, using: &rng)) }) }
        if Bool.random(using: &rng) { d["m"] = .map(MapValue(["n": .int(Int64.random(in: 0...4, using: &rng))])) }
        return sdoc(k, d, version: Int64.random(in: 1...100, using: &rng))
    }

    func randomOperand<R: RandomNumberGenerator>(_ field: String, _ rng: inout R) -> Value {
        switch field {
        case "a": return [.int(Int64.random(in: 0...9, using: &rng)), .double(Double(Int.random(in: 0...9, using: &rng)) + 0.5), .string("s\(Int.random(in: 0...3, using: &rng))"), .null, .double(.nan)][Int.random(in: 0..<5, using: &rng)]
        case "b": return .string(["x", "y", "z", "xy", "a"][Int.random(in: 0..<5, using: &rng)])
        case "tags": return .int(Int64.random(in: 0...5, using: &rng))
        default: return .int(Int64.random(in: 0...4, using: &rng))
        }
    }

    func randomFilter<R: RandomNumberGenerator>(_ rng: inout R) -> Filter {
        let field = fieldNames[Int.random(in: 0..<fieldNames.count, using: &rng)]
        let path = try! FieldPath(parsing: field)
        if field == "tags" {
            if Bool.random(using: &rng) { return .field(FieldFilter(field: path, op: .arrayContains, value: randomOperand(field, &rng))) }
            return .field(FieldFilter(field: path, op: .arrayContainsAny, value: .array((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomOperand(field, &rng) })))
        }
        let ops: [FilterOperator] = [.equal, .equal, .in, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        let op = ops[Int.random(in: 0..<ops.count, using: &rng)]
        if op == .in { return .field(FieldFilter(field: path, op: .in, value: .array((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomOperand(field, &rng) }))) }
        return .field(FieldFilter(field: path, op: op, value: randomOperand(field, &rng)))
    }

    func randomQuery<R: RandomNumberGenerator>(_ rng: inout R) -> Query? {
        var q = Int.random(in: 0..<4, using: &rng) == 0 ? Query(collectionGroup: "items") : Query(collection: spath("items"))
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            var f = randomFilter(&rng)
            if Int.random(in: 0..<6, using: &rng) == 0 { f = .composite(CompositeFilter(op: .or, filters: [f, randomFilter(&rng)])) }
            guard let next = try? q.filter(f) else { continue }
            q = next
        }
        return (try? q.validateForExecution()) == nil ? nil : q
    }

    func keys(_ docs: [Document], _ q: Query) -> [String] {
        docs.filter { q.matches($0) }.map { $0.key.path.canonical }.sorted()
    }

    func scan(_ store: DocumentStore, _ q: Query) -> [Document] {
        q.collectionGroup != nil ? store.documents(inGroup: "items") : store.documents(in: q.path)
    }

    func testIndexAndScanAgreeOnRandomizedDataAndQueries() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["EMBER_INDEX_SEED"] ?? "") ?? UInt64.random(in: 0..<1_000_000)
        var rng = SplitMix(seed: seed)
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        let store = p.remoteDocuments
        try! p.runTransaction("fill") {
            for i in 0..<500 { store.put(randomDoc("items/d\(i)", &rng)) }
            for i in 0..<100 { store.put(randomDoc("g/\(i % 3)/items/e\(i)", &rng)) }
            store.put(Document.missing(skey("items/tomb"), version: 3))
        }
        let manager = try XCTUnwrap(p.indexManager)
        try manager.setConfiguration(try IndexDefinition.parse(json: """
            {"indexes": [
              {"collectionGroup": "items", "fields": [{"fieldPath": "a", "order": "ASCENDING"}]},
              {"collectionGroup": "items", "fields": [{"fieldPath": "b", "order": "ASCENDING"}, {"fieldPath": "a", "order": "DESCENDING"}]},
              {"collectionGroup": "items", "fields": [{"fieldPath": "tags", "arrayConfig": "CONTAINS"}, {"fieldPath": "a", "order": "ASCENDING"}]},
              {"collectionGroup": "items", "queryScope": "COLLECTION_GROUP", "fields": [{"fieldPath": "m.n", "order": "ASCENDING"}, {"fieldPath": "b", "order": "ASCENDING"}]}
            ], "fieldOverrides": [{"collectionGroup": "items", "fieldPath": "tags", "indexes": [{"arrayConfig": "CONTAINS", "queryScope": "COLLECTION"}]}]}
            """))
        var used = 0, total = 0
        for round in 0..<2 {
            for _ in 0..<300 {
                guard let q = randomQuery(&rng) else { continue }
                total += 1
                let viaIndex = keys(store.documents(matching: q), q)
                if manager.lastRead.usedIndex != nil { used += 1 }
                XCTAssertEqual(viaIndex, keys(scan(store, q), q), "seed \(seed) round \(round): \(q)")
            }
            // Change the data under the indexes: updates, deletions, tombstones.
            try! p.runTransaction("mutate") {
                for i in 0..<150 {
                    let k = "items/d\(Int.random(in: 0..<600, using: &rng))"
                    switch i % 3 {
                    case 0: store.remove(skey(k))
                    case 1: store.put(Document.missing(skey(k), version: 200))
                    default: store.put(randomDoc(k, &rng))
                    }
                }
            }
        }
        XCTAssertGreaterThan(used, total / 3, "indexes served many of the \(total) queries (seed \(seed))")
        // Reopening keeps the configuration and the entries.
        p.close()
        let again = try SQLitePersistence(path: dir.file())
        defer { again.close() }
        XCTAssertEqual(again.indexManager?.indexes().count, 5)
        let q = try Query(collection: spath("items")).filter(.field(FieldFilter(field: try FieldPath(parsing: "a"), op: .equal, value: .int(3))))
        XCTAssertEqual(keys(again.remoteDocuments.documents(matching: q), q), keys(scan(again.remoteDocuments, q), q))
        XCTAssertNotNil(again.indexManager?.lastRead.usedIndex)
    }

    /// An index on group "\u{E9}" serves that group only: a query on collection "e\u{301}" (equal
    /// as Swift Strings, another collection in Firestore) scans its own documents, and the two
    /// definitions are two indexes.
    func testAnIndexServesOnlyItsGroupByBytes() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        try p.runTransaction("fill") {
            for i in 0..<3 { p.remoteDocuments.put(sdoc("e\u{301}/d\(i)", ["v": .int(1)])) }
            p.remoteDocuments.put(sdoc("\u{E9}/x", ["v": .int(1)]))
        }
        let m = try XCTUnwrap(p.indexManager)
        func config(_ group: String) -> String {
            #"{"indexes":[{"collectionGroup":"\#(group)","queryScope":"COLLECTION","fields":[{"fieldPath":"v","order":"ASCENDING"}]}]}"#
        }
        try m.setConfiguration(IndexDefinition.parse(json: config("\u{E9}")))
        let filter = Filter.field(FieldFilter(field: try FieldPath(parsing: "v"), op: .equal, value: .int(1)))
        let decomposed = try Query(collection: spath("e\u{301}")).filter(filter)
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: decomposed), decomposed).count, 3)
        XCTAssertNil(m.lastRead.usedIndex, "the index of the other group is not used")
        let precomposed = try Query(collection: spath("\u{E9}")).filter(filter)
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: precomposed), precomposed), ["\u{E9}/x"])
        XCTAssertNotNil(m.lastRead.usedIndex)
        try m.setConfiguration(IndexDefinition.parse(json: config("\u{E9}")) + IndexDefinition.parse(json: config("e\u{301}")))
        XCTAssertEqual(m.indexes().count, 2)
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: decomposed), decomposed).count, 3)
        XCTAssertEqual(m.lastRead.documentsRead, 3, "its own index")
    }

    func testAutoCreationAndDeletion() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        try! p.runTransaction("fill") {
            for i in 0..<1000 { p.remoteDocuments.put(sdoc("c/\(i)", ["k": .int(Int64(i % 100)), "w": .int(Int64(i))])) }
        }
        let m = try XCTUnwrap(p.indexManager)
        let q = try Query(collection: spath("c")).filter(.field(FieldFilter(field: try FieldPath(parsing: "k"), op: .equal, value: .int(7))))
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: q), q).count, 10)
        XCTAssertTrue(m.indexes().isEmpty, "auto-creation is off by default")
        m.autoCreationEnabled = true
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: q), q).count, 10)
        XCTAssertEqual(m.lastRead.documentsRead, 1000)
        XCTAssertEqual(m.indexes().map { $0.description }, ["c[COLLECTION](k ASCENDING)"], "a scan of 1000 for 10 builds an index")
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: q), q).count, 10)
        XCTAssertEqual(m.lastRead.documentsRead, 10, "the next read uses it")
        // A selective enough scan builds nothing.
        let wide = try Query(collection: spath("c")).filter(.field(FieldFilter(field: try FieldPath(parsing: "w"), op: .greaterThanOrEqual, value: .int(100))))
        _ = p.remoteDocuments.documents(matching: wide)
        XCTAssertEqual(m.indexes().count, 1)
        m.deleteAllIndexes()
        XCTAssertTrue(m.indexes().isEmpty)
        m.autoCreationEnabled = false
        XCTAssertEqual(keys(p.remoteDocuments.documents(matching: q), q).count, 10)
        XCTAssertEqual(m.lastRead.documentsRead, 1000)
        XCTAssertNil(m.lastRead.usedIndex)
    }
}

/// A seeded generator so a failing run can be replayed (EMBER_INDEX_SEED).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
