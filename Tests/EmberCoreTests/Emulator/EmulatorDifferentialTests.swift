// Differential tests of Ember against the Cloud Firestore emulator (the reference where
// docs/semantics.md is silent): randomized documents and queries must give the same document ids
// in the same order (seeded; EMBER_DIFF_SEED=<n> replays a run, EMBER_DIFF_QUERIES=<n> changes the
// count, EMBER_DIFF_STRICT=1 also fails on the known rejection differences listed in DiffQuery),
// and probes pin the number / NaN / null answers of docs/semantics.md 2 and 4 for Ember even
// without the emulator.
import EmberConcurrency
import XCTest
import Foundation
import EmberModel
import EmberCore

final class EmulatorDifferentialTests: XCTestCase {
    // Set once by the first test that needs the emulator; XCTest runs the class's tests serially.
    nonisolated(unsafe) private static var emulator: FirestoreEmulator?
    nonisolated(unsafe) private static var startFailure: Error?

    /// The class's emulator, started on first use; XCTSkip when it is not installed.
    static func sharedEmulator() throws -> FirestoreEmulator {
        if case .failure(let why) = FirestoreEmulator.locate() {
            throw XCTSkip("Cloud Firestore emulator not installed (\(why)). Install the Google Cloud SDK and `gcloud components install cloud-firestore-emulator` (Java 17+) to compare Ember with it.")
        }
        if let e = emulator { return e }
        if let e = startFailure { throw e }
        let started = Date()
        do {
            emulator = try FirestoreEmulator.start(timeout: 60)
        } catch {
            startFailure = error
            throw error
        }
        print("EmulatorDifferentialTests: emulator pid \(emulator!.pid) on 127.0.0.1:\(emulator!.port), up in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        return emulator!
    }

    override class func tearDown() {
        emulator?.stop()
        emulator = nil
        super.tearDown()
    }

    // MARK: randomized differential test

    func testRandomQueriesMatchEmulator() throws {
        let emu = try Self.sharedEmulator()
        let env = ProcessInfo.processInfo.environment
        let seed = env["EMBER_DIFF_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...999_999_999)
        let count = env["EMBER_DIFF_QUERIES"].flatMap { Int($0) } ?? 300
        print("EmulatorDifferentialTests: seed \(seed) (replay with EMBER_DIFF_SEED=\(seed)), \(count) queries")
        let started = Date()
        var rng = DiffRandom(state: seed)
        let data = DiffDataset.random(&rng)

        try emu.clear()
        try emu.commit(data.docs)
        let client = EmberClient()
        defer { client.close() }
        try Self.write(data.docs, to: client)
        try checkStoredDocuments(emu, data)

        var agree = 0, bothRejected = 0, nonEmpty = 0
        var problems: [String] = []
        var knownDivergences: [String: Int] = [:]
        var coverage: [String: Int] = [:]
        for n in 0..<count {
            let q = DiffQuery.random(&rng, data)
            let mine = Self.run(q, on: client)
            let theirs = Self.run(q, on: emu)
            switch (mine, theirs) {
            case (.ids(let a), .ids(let b)) where a == b:
                agree += 1
                if !a.isEmpty { nonEmpty += 1 }
                for feature in q.features { coverage[feature, default: 0] += 1 }
            case (.rejected, .rejected): bothRejected += 1
            default:
                if let known = DiffQuery.knownDivergence(ember: mine, emulator: theirs) {
                    knownDivergences[known, default: 0] += 1
                    continue
                }
                problems.append("#\(n) \(q)\n    REST \(q.rest().query.serialized())\n    ember:    \(mine)\n    emulator: \(theirs)\n" + data.explain(mine, theirs, fields: q.fieldsUsed))
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        print("EmulatorDifferentialTests: seed \(seed): \(count) queries, \(agree) same results, \(bothRejected) rejected by both, \(problems.count) mismatches, \(String(format: "%.1f", elapsed)) s")
        print("  agreeing queries with a non-empty result: \(nonEmpty); features among agreeing queries: "
              + coverage.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        for (k, v) in knownDivergences.sorted(by: { $0.key < $1.key }) { print("  known divergence (\(v)x): \(k)") }
        for p in problems.prefix(30) { print(p) }
        XCTAssertEqual(problems.count, 0, "Ember and the emulator disagree on \(problems.count) of \(count) queries (seed \(seed); replay with EMBER_DIFF_SEED=\(seed)); see the log above")
        XCTAssertGreaterThan(agree, count / 3, "too few queries were valid for both; the generator needs tuning")
    }

    /// The emulator must hold exactly what was written (checks the JSON conversions both ways);
    /// it stores -0.0 as 0.0, which every comparison treats as equal anyway.
    private func checkStoredDocuments(_ emu: FirestoreEmulator, _ data: DiffDataset) throws {
        var stored: [String: MapValue] = [:]
        for (parent, from) in [("", JSON.object([("collectionId", .string("items")), ("allDescendants", .bool(true))])),
                               ("", JSON.object([("collectionId", .string("other"))]))] {
            guard case .documents(let docs) = try emu.runQuery(parent: parent, .object([("from", .array([from]))])) else {
                return XCTFail("reading back the documents failed")
            }
            for d in docs { stored[d.path] = d.fields }
        }
        XCTAssertEqual(stored.count, data.docs.count)
        for d in data.docs {
            XCTAssertEqual(stored[d.path].map { Value.map($0) }, DiffPool.positiveZero(.map(d.fields)),
                           "emulator copy of \(d.path) differs")
        }
    }

    // MARK: running one query on each side

    enum Outcome: CustomStringConvertible {
        case ids([String])
        case rejected(String)
        case failed(String)

        var description: String {
            switch self {
            case .ids(let a): return "\(a.count) [" + a.joined(separator: ", ") + "]"
            case .rejected(let m): return "rejected: \(m)"
            case .failed(let m): return "FAILED: \(m)"
            }
        }
    }

    static func run(_ q: DiffQuery, on client: EmberClient) -> Outcome {
        do {
            let snap = try client.getDocuments(try q.emberQuery(), source: .default, timeout: 30)
            return .ids(snap.documents.map { $0.key.path.canonical })
        } catch let e as EmberError {
            return e.code == .invalidArgument ? .rejected(e.message) : .failed(e.description)
        } catch {
            return .failed("\(error)")
        }
    }

    static func run(_ q: DiffQuery, on emu: FirestoreEmulator) -> Outcome {
        let (parent, query) = q.rest()
        do {
            switch try emu.runQuery(parent: parent, query) {
            case .documents(let docs):
                let ids = docs.map { $0.path }
                return .ids(q.limitToLast ? ids.reversed() : ids)
            case .rejected(let m): return .rejected(m)
            }
        } catch {
            return .failed("\(error)")
        }
    }

    static func write(_ docs: [(path: String, fields: MapValue)], to client: EmberClient) throws {
        try client.write(docs.map { Mutation(key: try DocumentKey(parsing: $0.path), kind: .set($0.fields)) })
        let done = Semaphore()
        try client.waitForPendingWrites { _ in done.signal() }
        if !done.wait(seconds: 30) { throw EmberError(.deadlineExceeded, "Ember did not acknowledge the writes within 30 s") }
    }

    // MARK: probes (docs/semantics.md 2: "check what the emulator does ... and follow it, with a test")

    /// Eleven documents in "p" whose field v (and arr) hold the values the probes ask about; d1, i1
    /// and j1 hold 1.0, 1 and 1.0, so ties between equal numbers show their order (by name, not type).
    static let probeDocs: [(path: String, fields: MapValue)] = [
        ("p/i0", MapValue(["v": .int(0)])),
        ("p/nz", MapValue(["v": .double(-0.0)])),
        ("p/d1", MapValue(["v": .double(1.0), "arr": .array([.double(1.0)])])),
        ("p/i1", MapValue(["v": .int(1), "arr": .array([.int(1)])])),
        ("p/j1", MapValue(["v": .double(1.0)])),
        ("p/i2", MapValue(["v": .int(2)])),
        ("p/nan", MapValue(["v": .double(.nan), "arr": .array([.double(.nan)])])),
        ("p/ninf", MapValue(["v": .double(-.infinity)])),
        ("p/null", MapValue(["v": .null, "arr": .array([.null])])),
        ("p/str", MapValue(["v": .string("s")])),
        ("p/missing", MapValue(["w": .int(1)])),
    ]

    /// Asserts each query's answer for Ember, then (when installed) that the emulator still gives it.
    func probe(_ cases: [(DiffQuery, [String])], file: StaticString = #filePath, line: UInt = #line) throws {
        let client = EmberClient()
        defer { client.close() }
        try Self.write(Self.probeDocs, to: client)
        for (q, expected) in cases {
            XCTAssertEqual("\(Self.run(q, on: client))", "\(Outcome.ids(expected.map { "p/" + $0 }))", "Ember: \(q)", file: file, line: line)
        }
        let emu = try Self.sharedEmulator()
        try emu.clear()
        try emu.commit(Self.probeDocs)
        for (q, expected) in cases {
            XCTAssertEqual("\(Self.run(q, on: emu))", "\(Outcome.ids(expected.map { "p/" + $0 }))",
                           "the emulator's answer to \(q) is not the one recorded here (and followed by Ember)", file: file, line: line)
        }
    }

    private func p(_ field: String, _ op: FilterOperator, _ v: Value, orderBy: [(String, Bool)] = []) -> DiffQuery {
        var q = DiffQuery(target: .collection("p"))
        q.filters = [.field(field, op, v)]
        q.orderBy = orderBy.map { (field: $0.0, descending: $0.1) }
        return q
    }

    func testProbeInWithDoubleMatchesIntField() throws {
        try probe([(p("v", .in, .array([.double(1.0)])), ["d1", "i1", "j1"]),
                   (p("v", .in, .array([.int(1)])), ["d1", "i1", "j1"]),
                   (p("v", .in, .array([.int(0)])), ["i0", "nz"])])
    }

    func testProbeArrayContainsWithDoubleMatchesIntElement() throws {
        try probe([(p("arr", .arrayContains, .double(1.0)), ["d1", "i1"]),
                   (p("arr", .arrayContains, .int(1)), ["d1", "i1"])])
    }

    func testProbeArrayContainsAnyWithDoubleMatchesIntElement() throws {
        try probe([(p("arr", .arrayContainsAny, .array([.double(1.0)])), ["d1", "i1"]),
                   (p("arr", .arrayContainsAny, .array([.int(1), .string("x")])), ["d1", "i1"])])
    }

    func testProbeEqualWithDoubleMatchesInt() throws {
        try probe([(p("v", .equal, .double(1.0)), ["d1", "i1", "j1"]),
                   (p("v", .equal, .int(1)), ["d1", "i1", "j1"]),
                   (p("v", .equal, .double(-0.0)), ["i0", "nz"])])
    }

    func testProbeRangeExcludesNaN() throws {
        try probe([(p("v", .lessThan, .int(5)), ["ninf", "i0", "nz", "d1", "i1", "j1", "i2"]),
                   (p("v", .lessThanOrEqual, .double(1.0)), ["ninf", "i0", "nz", "d1", "i1", "j1"]),
                   (p("v", .greaterThanOrEqual, .double(-.infinity)), ["ninf", "i0", "nz", "d1", "i1", "j1", "i2"])])
    }

    func testProbeNotEqualIncludesNaNButNotMissingOrNull() throws {
        try probe([(p("v", .notEqual, .int(1)), ["nan", "ninf", "i0", "nz", "i2", "str"]),
                   (p("v", .notEqual, .double(1.0)), ["nan", "ninf", "i0", "nz", "i2", "str"])])
    }

    func testProbeNotInIncludesNaNAndComparesNumerically() throws {
        try probe([(p("v", .notIn, .array([.int(1)])), ["nan", "ninf", "i0", "nz", "i2", "str"]),
                   (p("v", .notIn, .array([.double(1.0), .string("s")])), ["nan", "ninf", "i0", "nz", "i2"]),
                   (p("v", .notIn, .array([.double(.nan)])), ["nan", "ninf", "i0", "nz", "d1", "i1", "j1", "i2", "str"])])
    }

    func testProbeIntAndDoubleTiesOrderByDocumentName() throws {
        try probe([(p("v", .notEqual, .string("none"), orderBy: [("v", false)]),
                    ["nan", "ninf", "i0", "nz", "d1", "i1", "j1", "i2", "str"]),
                   (p("v", .notEqual, .string("none"), orderBy: [("v", true)]),
                    ["str", "i2", "j1", "i1", "d1", "nz", "i0", "ninf", "nan"]),
                   (DiffQuery(target: .collection("p"), orderBy: [(field: "v", descending: false)]),
                    ["null", "nan", "ninf", "i0", "nz", "d1", "i1", "j1", "i2", "str"]),
                   (p("v", .in, .array([.int(1)]), orderBy: [("v", true)]), ["j1", "i1", "d1"])])
    }

    func testProbeNullAndNaNInsideArrayOperandsMatchNothing() throws {
        try probe([(p("v", .in, .array([.double(.nan)])), []),
                   (p("v", .in, .array([.null])), []),
                   (p("arr", .arrayContainsAny, .array([.double(.nan)])), []),
                   (p("arr", .arrayContainsAny, .array([.null])), []),
                   (p("v", .equal, .double(.nan)), ["nan"]),
                   (p("v", .equal, .null), ["null"])])
    }
}

// MARK: - generator

/// Responsible for: a reproducible random stream (SplitMix64) with the picks the generator needs.
struct DiffRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func pick<T>(_ a: [T]) -> T { a[Int.random(in: 0..<a.count, using: &self)] }
    mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &self) }
}

/// Responsible for: the values documents and operands are drawn from: every type, and the numbers
/// that tell implementations apart (1 and 1.0, -0.0, NaN, infinities, 2^53 +/- 1, int64 limits).
enum DiffPool {
    static func ts(_ micros: Int64) -> Value { .timestamp(Timestamp(micros: micros)) }
    static func geo(_ a: Double, _ b: Double) -> Value { .geoPoint(GeoPoint(latitude: a, longitude: b)) }
    static func ref(_ p: String) -> Value { .reference(try! DocumentKey(parsing: p)) }
    static func map(_ d: [String: Value]) -> Value { .map(MapValue(d)) }

    static let numbers: [Value] = [
        .int(0), .int(1), .int(-1), .int(2), .int(5), .int(Int64.max), .int(Int64.min),
        .int(9_007_199_254_740_993), .int(9_007_199_254_740_992),
        .double(0.0), .double(-0.0), .double(1.0), .double(1.5), .double(-1.5), .double(2.0), .double(.nan),
        .double(.infinity), .double(-.infinity), .double(9_007_199_254_740_992.0), .double(9_223_372_036_854_775_808.0),
        .double(-9_223_372_036_854_775_808.0), .double(0.1), .double(.leastNonzeroMagnitude), .double(-1e300),
    ]
    static let others: [Value] = [
        .null, .bool(false), .bool(true),
        ts(0), ts(1_577_836_800_123_456), ts(-1), ts(Timestamp.minMicros), ts(Timestamp.maxMicros),
        .string(""), .string("a"), .string("A"), .string("b"), .string("ab"), .string("é"), .string("e\u{301}"),
        .string("z"), .string("😀"), .string("\u{FFFD}"), .string("a\u{0}b"),
        .bytes([]), .bytes([0]), .bytes([0, 1]), .bytes([1]), .bytes([255]),
        ref("items/a"), ref("items/b"), ref("other/o1"), ref("other/o1/items/a"),
        geo(0, 0), geo(-10.5, 20), geo(10, -20), geo(10, 20),
    ]
    static let arrays: [Value] = [
        .array([]), .array([.int(1)]), .array([.double(1.0)]), .array([.int(1), .string("a")]), .array([.string("a"), .int(1)]),
        .array([.null]), .array([.double(.nan)]), .array([.int(1), .int(2)]), .array([.int(2), .int(1)]),
        .array([map(["k": .int(1)])]), .array([.double(-0.0)]), .array([.int(0)]), .array([.string("a")]),
        .array([.bool(true), .bool(false)]), .array([.int(Int64.max)]), .array([geo(10, 20)]), .array([ts(0)]),
        .array([.double(2.0), .null, .string("b")]),
    ]
    static let maps: [Value] = [
        map([:]), map(["k": .int(1)]), map(["k": .double(1.0)]), map(["k": .string("a")]), map(["a": .int(1), "b": .int(2)]),
        map(["b": .int(1)]), map(["k": map(["n": .double(.nan)])]), map(["k": .null]), map(["k": .array([.int(1), .int(2)])]),
        map(["k": .double(.nan)]), map(["k": .double(-0.0)]), map(["k": .int(2)]), map(["k": .bool(true)]),
        map(["k": .int(1), "z": .null]),
    ]
    static let scalars = numbers + others

    static func any(_ rng: inout DiffRandom) -> Value {
        switch rng.int(0...9) {
        case 0...3: return rng.pick(numbers)
        case 4...6: return rng.pick(others)
        case 7, 8: return rng.pick(arrays)
        default: return rng.pick(maps)
        }
    }

    /// A value for field `field` (documents and operands use the same distribution).
    static func value(for field: String, _ rng: inout DiffRandom) -> Value {
        switch field {
        case "n", "m.k": return rng.chance(0.85) ? rng.pick(numbers) : any(&rng)
        case "arr": return rng.chance(0.85) ? rng.pick(arrays) : any(&rng)
        case "m": return rng.chance(0.8) ? rng.pick(maps) : any(&rng)
        case "b": return rng.pick(scalars)
        default: return any(&rng)
        }
    }

    /// The value as the emulator stores it: -0.0 becomes 0.0.
    static func positiveZero(_ v: Value) -> Value {
        switch v {
        case .double(let d) where d == 0: return .double(0)
        case .array(let a): return .array(a.map(positiveZero))
        case .map(let m): return .map(MapValue(sortedEntries: m.entries.map { (key: $0.key, value: positiveZero($0.value)) }))
        default: return v
        }
    }

    static func render(_ v: Value) -> String {
        switch v {
        case .null: return "null"
        case .bool(let b): return "\(b)"
        case .int(let i): return "\(i)"
        case .double(let d): return d.isNaN ? "NaN" : (d == d.rounded() && abs(d) < 1e15 ? "\(d)" : "\(d)d")
        case .timestamp(let t): return "ts(\(t.micros))"
        case .string(let s): return "\"\(s.unicodeScalars.map { $0.value < 0x20 ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())\""
        case .bytes(let b): return "b\(b)"
        case .reference(let k): return "ref(\(k))"
        case .geoPoint(let g): return "geo(\(g.latitude),\(g.longitude))"
        case .array(let a): return "[" + a.map(render).joined(separator: ",") + "]"
        case .map(let m): return "{" + m.entries.map { "\($0.key):\(render($0.value))" }.joined(separator: ",") + "}"
        }
    }
}

/// Responsible for: the random documents of one run: ~40 in "items", "other" and the subcollection
/// "other/o1/items" (plus "items/a/items"), so that collection-group "items" spans three collections.
struct DiffDataset {
    var docs: [(path: String, fields: MapValue)] = []
    static let fieldNames = ["a", "b", "n", "arr", "m"]

    static func random(_ rng: inout DiffRandom) -> DiffDataset {
        var d = DiffDataset()
        let ids = ["a", "A", "b", "B", "a1", "a10", "a2", "aa", "z", "Z", "é", "e", "0", "00", "1", "10", "9", "x_y", "x-y", "~", "mid", "q"]
        for id in ids { d.docs.append(("items/" + id, randomFields(&rng))) }
        for id in ["o1", "o2", "o3", "a", "b", "z"] { d.docs.append(("other/" + id, randomFields(&rng))) }
        for id in ["a", "b", "s1", "s2", "z", "A", "0", "q"] { d.docs.append(("other/o1/items/" + id, randomFields(&rng))) }
        for id in ["a", "n1", "zz", "B"] { d.docs.append(("items/a/items/" + id, randomFields(&rng))) }
        return d
    }

    static func randomFields(_ rng: inout DiffRandom) -> MapValue {
        var m = MapValue()
        for f in fieldNames where rng.chance(0.82) { m[f] = DiffPool.value(for: f, &rng) }
        return m
    }

    /// Paths of the documents `target` reads.
    func paths(in target: DiffQuery.Target) -> [String] {
        docs.map { $0.path }.filter { p in
            let segs = p.split(separator: "/")
            switch target {
            case .collection(let c): return segs.dropLast().joined(separator: "/") == c
            case .group(let g): return String(segs[segs.count - 2]) == g
            }
        }
    }

    /// The used fields of the documents in only one of the two results (for mismatch reports).
    func explain(_ a: EmulatorDifferentialTests.Outcome, _ b: EmulatorDifferentialTests.Outcome, fields: [String]) -> String {
        guard case .ids(let x) = a, case .ids(let y) = b else { return "" }
        let diff = Set(x).symmetricDifference(Set(y)).sorted()
        let show = diff.isEmpty ? Array(Set(x)).sorted() : diff
        return show.prefix(12).map { p -> String in
            guard let doc = docs.first(where: { $0.path == p }) else { return "" }
            let vals = fields.filter { $0 != "__name__" }.map { f in "\(f)=" + (doc.fields.value(at: try! FieldPath(parsing: f)).map(DiffPool.render) ?? "<missing>") }
            return "      \(p): " + vals.joined(separator: " ") + "\n"
        }.joined()
    }
}

/// Responsible for: one query described independently of Ember, and its two forms: an Ember `Query`
/// built through the validating builder, and the emulator's structuredQuery as the Firebase SDKs send
/// it (== / != null and NaN become unary filters; with cursors or limit-to-last the order-by is the
/// SDK's normalized one, computed here independently; limit-to-last is sent flipped and reversed).
struct DiffQuery: CustomStringConvertible {
    enum Target { case collection(String), group(String) }
    indirect enum Cond {
        case field(String, FilterOperator, Value)
        case and([Cond])
        case or([Cond])
    }
    enum CursorValue {
        case value(Value)
        /// A plain id for a collection query, a path for a collection-group query.
        case documentId(String)
    }
    struct Cursor {
        var values: [CursorValue]
        var inclusive: Bool
        /// Values of a document for the whole normalized order (a snapshot cursor), not user values.
        var fromDocument = false
    }

    var target: Target
    var filters: [Cond] = []
    var orderBy: [(field: String, descending: Bool)] = []
    var limit: Int?
    var limitToLast = false
    var start: Cursor?
    var end: Cursor?

    // MARK: Ember form

    func emberQuery() throws -> Query {
        var q: Query
        switch target {
        case .collection(let p): q = Query(collection: try ResourcePath(parsing: p))
        case .group(let g): q = Query(collectionGroup: g)
        }
        for c in filters { q = try q.filter(DiffQuery.emberFilter(c)) }
        for o in orderBy { q = try q.order(by: try FieldPath(parsing: o.field), descending: o.descending) }
        if let l = limit { q = try q.limit(l, type: limitToLast ? .last : .first) }
        func values(_ c: Cursor) -> [Value] {
            c.values.map { if case .value(let v) = $0 { return v }; if case .documentId(let s) = $0 { return .string(s) }; return .null }
        }
        if let s = start { q = try q.start(values(s), inclusive: s.inclusive, fromDocument: s.fromDocument) }
        if let e = end { q = try q.end(values(e), inclusive: e.inclusive, fromDocument: e.fromDocument) }
        return q
    }

    static func emberFilter(_ c: Cond) throws -> Filter {
        switch c {
        case .field(let f, let op, let v): return .field(FieldFilter(field: try FieldPath(parsing: f), op: op, value: v))
        case .and(let cs): return .composite(CompositeFilter(op: .and, filters: try cs.map(emberFilter)))
        case .or(let cs): return .composite(CompositeFilter(op: .or, filters: try cs.map(emberFilter)))
        }
    }

    // MARK: REST form

    static func flatten(_ c: Cond) -> [(String, FilterOperator, Value)] {
        switch c {
        case .field(let f, let op, let v): return [(f, op, v)]
        case .and(let cs), .or(let cs): return cs.flatMap(flatten)
        }
    }

    /// What the query exercises (operators, composites, order, limits, cursors, target), for the summary.
    var features: Set<String> {
        var f = Set(filters.flatMap(DiffQuery.flatten).map { $0.1.rawValue })
        func walk(_ c: Cond) {
            switch c {
            case .field: break
            case .and(let cs): f.insert("AND-composite"); cs.forEach(walk)
            case .or(let cs): f.insert("OR"); cs.forEach(walk)
            }
        }
        filters.forEach(walk)
        if orderBy.count > 0 { f.insert("orderBy\(orderBy.count)") }
        if orderBy.contains(where: { $0.descending }) { f.insert("desc") }
        if limit != nil { f.insert(limitToLast ? "limitToLast" : "limit") }
        if let c = start { f.insert(c.inclusive ? "startAt" : "startAfter"); if c.fromDocument { f.insert("docCursor") } }
        if let c = end { f.insert(c.inclusive ? "endAt" : "endBefore"); if c.fromDocument { f.insert("docCursor") } }
        if case .group = target { f.insert("collectionGroup") }
        return f
    }

    var fieldsUsed: [String] {
        var seen: [String] = []
        for f in filters.flatMap(DiffQuery.flatten).map({ $0.0 }) + orderBy.map({ $0.field }) where !seen.contains(f) { seen.append(f) }
        return seen
    }

    /// Firebase JS `queryNormalizedOrderBy`: explicit order-bys, then the inequality fields not yet
    /// ordered (by field path, the document key excluded), then the key; implicit ones take the
    /// direction of the last explicit one.
    var normalizedOrderBy: [(field: String, descending: Bool)] {
        var out = orderBy
        let last = orderBy.last?.descending ?? false
        let inequalityOps: Set<FilterOperator> = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn]
        let fields = Set(filters.flatMap(DiffQuery.flatten).filter { inequalityOps.contains($0.1) }.map { $0.0 })
        let sorted = fields.sorted { (try! FieldPath(parsing: $0)).compare(try! FieldPath(parsing: $1)) < 0 }
        for f in sorted where f != "__name__" && !out.contains(where: { $0.field == f }) { out.append((f, last)) }
        if !out.contains(where: { $0.field == "__name__" }) { out.append(("__name__", last)) }
        return out
    }

    static let restOps: [FilterOperator: String] = [
        .lessThan: "LESS_THAN", .lessThanOrEqual: "LESS_THAN_OR_EQUAL", .greaterThan: "GREATER_THAN",
        .greaterThanOrEqual: "GREATER_THAN_OR_EQUAL", .equal: "EQUAL", .notEqual: "NOT_EQUAL",
        .arrayContains: "ARRAY_CONTAINS", .in: "IN", .arrayContainsAny: "ARRAY_CONTAINS_ANY", .notIn: "NOT_IN",
    ]

    static func restField(_ f: String) -> JSON { .object([("fieldPath", .string(f))]) }

    static func restFilter(_ c: Cond) -> JSON {
        switch c {
        case .field(let f, let op, let v):
            if (op == .equal || op == .notEqual) && (v.isNull || v.isNaN) {
                let unary = (v.isNull ? "NULL" : "NAN")
                return .object([("unaryFilter", .object([("op", .string((op == .equal ? "IS_" : "IS_NOT_") + unary)), ("field", restField(f))]))])
            }
            return .object([("fieldFilter", .object([("field", restField(f)), ("op", .string(restOps[op]!)),
                                                      ("value", FirestoreEmulator.encode(v))]))])
        case .and(let cs): return composite("AND", cs)
        case .or(let cs): return composite("OR", cs)
        }
    }

    static func composite(_ op: String, _ cs: [Cond]) -> JSON {
        .object([("compositeFilter", .object([("op", .string(op)), ("filters", .array(cs.map(restFilter)))]))])
    }

    /// The runQuery parent ("" or a document path) and the structuredQuery.
    func rest() -> (parent: String, query: JSON) {
        var parent = ""
        var q: [(String, JSON)] = []
        let collectionPath: String
        switch target {
        case .collection(let p):
            let segs = p.split(separator: "/")
            parent = segs.dropLast().joined(separator: "/")
            collectionPath = p
            q.append(("from", .array([.object([("collectionId", .string(String(segs.last!)))])])))
        case .group(let g):
            collectionPath = ""
            q.append(("from", .array([.object([("collectionId", .string(g)), ("allDescendants", .bool(true))])])))
        }
        if filters.count == 1 { q.append(("where", DiffQuery.restFilter(filters[0]))) }
        if filters.count > 1 { q.append(("where", DiffQuery.composite("AND", filters))) }
        var order = (start != nil || end != nil || limitToLast) ? normalizedOrderBy : orderBy
        if limitToLast { order = order.map { (field: $0.field, descending: !$0.descending) } }
        if !order.isEmpty {
            q.append(("orderBy", .array(order.map { o in
                .object([("field", DiffQuery.restField(o.field)), ("direction", .string(o.descending ? "DESCENDING" : "ASCENDING"))])
            })))
        }
        func cursor(_ c: Cursor, before: Bool) -> JSON {
            .object([("values", .array(c.values.map { v in
                switch v {
                case .value(let x): return FirestoreEmulator.encode(x)
                case .documentId(let s):
                    let path = collectionPath.isEmpty ? s : collectionPath + "/" + s
                    return .object([("referenceValue", .string(FirestoreEmulator.documentsRoot + "/" + path))])
                }
            })), ("before", .bool(before))])
        }
        // Limit-to-last: flipped order, so the end cursor becomes the start and vice versa.
        let (s, e) = limitToLast ? (end, start) : (start, end)
        if let s { q.append(("startAt", cursor(s, before: s.inclusive))) }
        if let e { q.append(("endAt", cursor(e, before: !e.inclusive))) }
        if let l = limit { q.append(("limit", .number(String(l)))) }
        return (parent, .object(q))
    }

    // MARK: known divergences

    /// Rules the emulator (the Firestore backend) enforces but the client-side checks of
    /// docs/semantics.md 7 (Firebase JS `conflictingOps`: "not a comprehensive check ...
    /// Validations should occur in the Firestore backend") do not, so Ember's builder accepts
    /// these queries and answers them.
    static let backendOnlyRules = [
        "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction",
        "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities",
        "order by clause cannot contain more fields after the key",
        "order by clause cannot contain duplicate fields",
        "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'",
        // An emulator limitation (Firestore itself serves orderBy(documentId(), "desc")).
        "Firestore does not support descending key scans",
        // The disjunctive normal form may have at most 30 terms (`in` x `array-contains-any` x OR).
        "Too many disjunctions after normalization",
    ]
    /// Client-side rules of docs/semantics.md 7 that the backend does not enforce (or never sees:
    /// limit-to-last is sent flipped, as the SDKs do).
    static let clientOnlyRules = [
        "limit(toLast:) queries require specifying at least one order(by:) clause",
        "Null only supports '==' and '!=' comparisons",
        "NaN only supports '==' and '!=' comparisons",
        "you must provide a plain document ID",
        // User cursor values may not outnumber the explicit order-bys (the backend takes up to the normalized count).
        "Too many arguments provided to",
    ]

    /// A rejection mismatch explained by the rule lists above (its label), or nil for a real mismatch.
    /// With EMBER_DIFF_STRICT=1 nothing is explained away.
    static func knownDivergence(ember: EmulatorDifferentialTests.Outcome, emulator: EmulatorDifferentialTests.Outcome) -> String? {
        if ProcessInfo.processInfo.environment["EMBER_DIFF_STRICT"] == "1" { return nil }
        switch (ember, emulator) {
        case (.ids, .rejected(let m)):
            return backendOnlyRules.first { m.contains($0) }.map { "only the emulator rejects: \($0)" }
        case (.rejected(let m), .ids):
            return clientOnlyRules.first { m.contains($0) }.map { "only Ember rejects (client-side rule): \($0)" }
        default:
            return nil
        }
    }

    // MARK: description

    var description: String {
        var s: String
        switch target {
        case .collection(let p): s = p
        case .group(let g): s = "group(\(g))"
        }
        func render(_ c: Cond) -> String {
            switch c {
            case .field(let f, let op, let v): return "\(f) \(op.rawValue) \(DiffPool.render(v))"
            case .and(let cs): return "(" + cs.map(render).joined(separator: " AND ") + ")"
            case .or(let cs): return "(" + cs.map(render).joined(separator: " OR ") + ")"
            }
        }
        if !filters.isEmpty { s += " where " + filters.map(render).joined(separator: " AND ") }
        for o in orderBy { s += " order \(o.field)\(o.descending ? " desc" : "")" }
        if let l = limit { s += limitToLast ? " limitToLast \(l)" : " limit \(l)" }
        func cursor(_ c: Cursor) -> String {
            "[" + c.values.map { if case .value(let v) = $0 { return DiffPool.render(v) }; if case .documentId(let d) = $0 { return "id:\(d)" }; return "" }.joined(separator: ", ") + "]"
        }
        if let c = start { s += (c.inclusive ? " startAt" : " startAfter") + (c.fromDocument ? "(doc)" : "") + cursor(c) }
        if let c = end { s += (c.inclusive ? " endAt" : " endBefore") + (c.fromDocument ? "(doc)" : "") + cursor(c) }
        return s
    }

    // MARK: random queries

    static func random(_ rng: inout DiffRandom, _ data: DiffDataset) -> DiffQuery {
        let target: Target
        switch rng.int(0...19) {
        case 0...10: target = .collection("items")
        case 11...15: target = .group("items")
        case 16, 17: target = .collection("other")
        default: target = .collection("other/o1/items")
        }
        var q = DiffQuery(target: target)
        let paths = data.paths(in: target)
        for _ in 0..<rng.pick([0, 0, 1, 1, 1, 1, 2, 2, 2, 3]) { q.filters.append(randomFieldFilter(&rng, target, paths)) }
        if rng.chance(0.2) {
            var branches: [Cond] = []
            for _ in 0..<rng.int(2...3) {
                branches.append(rng.chance(0.3) ? .and([randomFieldFilter(&rng, target, paths), randomFieldFilter(&rng, target, paths)])
                                                : randomFieldFilter(&rng, target, paths))
            }
            q.filters.append(.or(branches))
        }
        // Mostly distinct fields with the key last: the backend rejects the rest (see backendOnlyRules).
        for _ in 0..<rng.pick([0, 0, 0, 1, 1, 1, 1, 2, 2]) {
            var field = rng.pick(["a", "b", "n", "n", "arr", "m", "m.k", "__name__"])
            if q.orderBy.contains(where: { $0.field == field || $0.field == "__name__" }) && rng.chance(0.9) { continue }
            if field == "__name__" && rng.chance(0.5) { field = "n" }
            q.orderBy.append((field: field, descending: rng.chance(0.5)))
        }
        if rng.chance(0.35) {
            q.limit = rng.int(1...8)
            q.limitToLast = rng.chance(q.orderBy.isEmpty ? 0.1 : 0.4)
        }
        if rng.chance(0.25) { q.start = randomCursor(&rng, q, data, paths) }
        if rng.chance(0.25) { q.end = randomCursor(&rng, q, data, paths) }
        return q
    }

    static func randomFieldFilter(_ rng: inout DiffRandom, _ target: Target, _ paths: [String]) -> Cond {
        let field = rng.pick(["a", "a", "b", "n", "n", "n", "arr", "arr", "m", "m.k", "m.k", "__name__"])
        if field == "__name__" {
            func ref() -> Value {
                if rng.chance(0.05) { return DiffPool.ref("elsewhere/x") }
                let p = rng.chance(0.8) ? rng.pick(paths) : (paths.first.map { ($0 as NSString).deletingLastPathComponent } ?? "items") + "/m0"
                return DiffPool.ref(p)
            }
            let op = rng.pick([FilterOperator.equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .in, .notIn])
            return .field(field, op, op.takesArray ? .array((0..<rng.int(1...3)).map { _ in ref() }) : ref())
        }
        // Array operators mostly on "arr": the backend allows one per disjunction.
        let arrayOps: [FilterOperator] = [.arrayContains, .arrayContainsAny]
        let op: FilterOperator = field == "arr" && rng.chance(0.6) ? rng.pick(arrayOps)
            : rng.pick(FilterOperator.allCases.filter { field == "arr" || rng.chance(0.3) || !arrayOps.contains($0) })
        var value: Value
        if op.takesArray {
            let n = rng.chance(0.03) ? 0 : (rng.chance(0.03) ? 11 : rng.pick([1, 1, 2, 2, 3, 4]))
            let elementField = field == "arr" ? "b" : field
            value = .array((0..<n).map { _ in DiffPool.value(for: elementField, &rng) })
        } else if op == .arrayContains {
            value = DiffPool.value(for: "b", &rng)
        } else {
            value = DiffPool.value(for: field, &rng)
        }
        // Keep most operands valid: null and NaN only go with == and !=.
        if (value.isNull || value.isNaN) && op != .equal && op != .notEqual && rng.chance(0.8) { value = .int(1) }
        return .field(field, op, value)
    }

    /// A cursor: a document's values for the whole normalized order (as from a snapshot), or user
    /// values for the explicit order-bys (mostly a document's own values, rarely one too many).
    static func randomCursor(_ rng: inout DiffRandom, _ q: DiffQuery, _ data: DiffDataset, _ paths: [String]) -> Cursor? {
        let order = q.normalizedOrderBy
        let docPath = paths.isEmpty ? nil : rng.pick(paths)
        let doc = data.docs.first { $0.path == docPath }
        if let doc, rng.chance(q.orderBy.isEmpty ? 0.9 : 0.4) {
            let values: [CursorValue] = order.compactMap { o in
                if o.field == "__name__" { return .value(DiffPool.ref(doc.path)) }
                return doc.fields.value(at: try! FieldPath(parsing: o.field)).map { .value($0) }
            }
            if values.count == order.count { return Cursor(values: values, inclusive: rng.chance(0.5), fromDocument: true) }
        }
        let explicit = q.orderBy.count
        if explicit == 0 && rng.chance(0.8) { return nil }
        let n = explicit == 0 || rng.chance(0.04) ? explicit + 1 : rng.int(1...explicit)
        var values: [CursorValue] = []
        for i in 0..<n {
            let field = i < order.count ? order[i].field : "a"
            if field == "__name__" {
                let p = docPath ?? "items/zz"
                switch q.target {
                case .collection: values.append(.documentId(String(p.split(separator: "/").last!)))
                case .group: values.append(.documentId(p))
                }
            } else if rng.chance(0.7), let v = doc?.fields.value(at: try! FieldPath(parsing: field)) {
                values.append(.value(v))
            } else {
                values.append(.value(DiffPool.value(for: field, &rng)))
            }
        }
        return Cursor(values: values, inclusive: rng.chance(0.5))
    }
}

