import EmberFirestoreProto
import Foundation
import GRPCCore
import XCTest

/// Limit-query listens on the server: the documents a client holds after each commit (as a
/// Firestore client applies the Listen stream: changes, deletes and removes per target) are
/// exactly what RunQuery answers at that point, including when a held document moves past the
/// window's edge.
final class ListenLimitWindowTests: XCTestCase {
    typealias Write = Google_Firestore_V1_Write

    static func orderedByB(limit: Int32, last: Bool = false) -> Google_Firestore_V1_StructuredQuery {
        var sq = Google_Firestore_V1_StructuredQuery()
        var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
        from.collectionID = "w"
        sq.from = [from]
        var o = Google_Firestore_V1_StructuredQuery.Order()
        o.field.fieldPath = "b"
        o.direction = last ? .descending : .ascending
        sq.orderBy = [o]
        sq.limit.value = limit
        return sq
    }

    static func setB(_ id: String, _ b: Double) -> Write {
        var v = Google_Firestore_V1_Value()
        v.doubleValue = b
        return ServerTests.set("w/\(id)", ["b": v])
    }

    static func delete(_ id: String) -> Write {
        var w = Write()
        w.delete = ServerTests.root + "/w/" + id
        return w
    }

    /// RunQuery's answer: document id -> b.
    static func runQuery(_ fs: FirestoreClient, _ sq: Google_Firestore_V1_StructuredQuery) async throws -> [String: Double] {
        var req = Google_Firestore_V1_RunQueryRequest()
        req.parent = ServerTests.root
        req.structuredQuery = sq
        return try await fs.runQuery(req) { response in
            var out: [String: Double] = [:]
            for try await m in response.messages where m.hasDocument {
                out[String(m.document.name.split(separator: "/").last!)] = m.document.fields["b"]?.doubleValue
            }
            return out
        }
    }

    /// Listens to `sq` as target 1; after the initial result and after each batch of `batches`
    /// (each waited for through its NO_CHANGE), compares what the client holds with RunQuery.
    /// Returns the number of comparisons made. Every batch also updates a marker document that
    /// target 2 watches, so that each commit ends with one NO_CHANGE even when it does not touch
    /// the window; target 1 is added once target 2 is current.
    static func replay(_ fs: FirestoreClient, _ sq: Google_Firestore_V1_StructuredQuery, _ batches: [[Write]],
                       file: StaticString = #filePath, line: UInt = #line) async throws -> Int {
        let (requests, requestSink) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
        var marker = Google_Firestore_V1_ListenRequest()
        marker.database = ServerTests.database
        marker.addTarget.targetID = 2
        marker.addTarget.documents.documents = [ServerTests.root + "/m/marker"]
        requestSink.yield(marker)
        var add = Google_Firestore_V1_ListenRequest()
        add.database = ServerTests.database
        add.addTarget.targetID = 1
        add.addTarget.query.parent = ServerTests.root
        add.addTarget.query.structuredQuery = sq
        let stamp = UUID().uuidString
        let queryRequest = add
        let batches = batches.enumerated().map { i, b in b + [ServerTests.set("m/marker", ["n": ServerTests.value("\(stamp)-\(i)")])] }
        return try await fs.listen(requestProducer: { writer in
            for await r in requests { try await writer.write(r) }
        }, onResponse: { response in
            var held: [String: Double] = [:]
            var pending = batches
            var compared = 0
            var queryAdded = false
            func id(_ name: String) -> String { String(name.split(separator: "/").last!) }
            for try await m in response.messages {
                switch m.responseType {
                case .targetChange(let tc)? where tc.targetChangeType == .noChange && tc.targetIds.isEmpty && !queryAdded:
                    queryAdded = true
                    requestSink.yield(queryRequest)
                case .documentChange(let dc)?:
                    if dc.targetIds.contains(1) { held[id(dc.document.name)] = dc.document.fields["b"]?.doubleValue }
                    else if dc.removedTargetIds.contains(1) { held[id(dc.document.name)] = nil }
                case .documentDelete(let dd)?:
                    held[id(dd.document)] = nil
                case .documentRemove(let dr)?:
                    if dr.removedTargetIds.contains(1) { held[id(dr.document)] = nil }
                case .targetChange(let tc)? where tc.targetChangeType == .noChange && tc.targetIds.isEmpty:
                    let expected = try await runQuery(fs, sq)
                    XCTAssertEqual(held, expected, "after \(batches.count - pending.count) of \(batches.count) batches", file: file, line: line)
                    XCTAssertLessThanOrEqual(held.count, Int(sq.limit.value), file: file, line: line)
                    compared += 1
                    if pending.isEmpty { requestSink.finish(); return compared }
                    _ = try await ServerTests.commit(fs, pending.removeFirst())
                default:
                    break
                }
            }
            return compared
        })
    }

    static let sixDocuments = (1...6).map { setB("d\($0)", Double($0)) }

    func testAHeldDocumentThatMovesPastTheEdgeIsRemovedAndTheNextEnters() async throws {
        try await ServerTests.serve { fs, _ in
            _ = try await ServerTests.commit(fs, Self.sixDocuments)
            let n = try await Self.replay(fs, Self.orderedByB(limit: 3), [[Self.setB("d1", 100)]])
            XCTAssertEqual(n, 2)
        }
    }

    func testAHeldDocumentPushedOutByANewcomerWhileItChangesIsRemoved() async throws {
        try await ServerTests.serve { fs, _ in
            _ = try await ServerTests.commit(fs, Self.sixDocuments)
            let n = try await Self.replay(fs, Self.orderedByB(limit: 3), [[Self.setB("d3", 3.5), Self.setB("d0", 0)]])
            XCTAssertEqual(n, 2)
        }
    }

    func testLimitToLastWindowFollowsItsEdgeToo() async throws {
        try await ServerTests.serve { fs, _ in
            _ = try await ServerTests.commit(fs, Self.sixDocuments)
            let n = try await Self.replay(fs, Self.orderedByB(limit: 2, last: true),
                                          [[Self.setB("d6", -1)], [Self.setB("d5", 4.5), Self.setB("d9", 9)]])
            XCTAssertEqual(n, 3)
        }
    }

    /// Two limit queries on one stream both holding the document a newcomer pushes out: each
    /// is told it left (the first eviction must not hide the second).
    func testTwoWindowsOnOneStreamBothLoseThePushedOutDocument() async throws {
        try await ServerTests.serve { fs, _ in
            _ = try await ServerTests.commit(fs, Self.sixDocuments)
            let (requests, requestSink) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
            for id in [Int32(1), 2] {
                var add = Google_Firestore_V1_ListenRequest()
                add.database = ServerTests.database
                add.addTarget.targetID = id
                add.addTarget.query.parent = ServerTests.root
                add.addTarget.query.structuredQuery = Self.orderedByB(limit: 3)
                requestSink.yield(add)
            }
            let held = try await fs.listen(requestProducer: { writer in
                for await r in requests { try await writer.write(r) }
            }, onResponse: { response in
                var held: [Int32: Set<String>] = [1: [], 2: []]
                var currents = 0
                var committed = false
                func id(_ name: String) -> String { String(name.split(separator: "/").last!) }
                for try await m in response.messages {
                    switch m.responseType {
                    case .documentChange(let dc)?:
                        for t in dc.targetIds { held[t]?.insert(id(dc.document.name)) }
                        for t in dc.removedTargetIds { held[t]?.remove(id(dc.document.name)) }
                    case .documentRemove(let dr)?:
                        for t in dr.removedTargetIds { held[t]?.remove(id(dr.document)) }
                    case .documentDelete(let dd)?:
                        for t in [Int32(1), 2] { held[t]?.remove(id(dd.document)) }
                    case .targetChange(let tc)?:
                        if tc.targetChangeType == .current { currents += tc.targetIds.count }
                        if tc.targetChangeType == .noChange && tc.targetIds.isEmpty && currents == 2 {
                            if committed { requestSink.finish(); return held }
                            committed = true
                            _ = try await ServerTests.commit(fs, [Self.setB("d0", 0)])
                        }
                    default: break
                    }
                }
                return held
            })
            XCTAssertEqual(held[1], ["d0", "d1", "d2"])
            XCTAssertEqual(held[2], ["d0", "d1", "d2"])
        }
    }

    /// Random batches of updates, creates and deletes over twelve documents; every limit window
    /// matches RunQuery after each one (before the fix, 1 to 11 extra documents were held).
    func testRandomBatchesKeepTheWindowEqualToRunQuery() async throws {
        var rng = SplitMix(seed: 0x5EED_27)
        var generated: [[Write]] = []
        for _ in 0..<40 {
            var batch: [Write] = []
            var used = Set<Int>()
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = Int.random(in: 0..<12, using: &rng)
                guard used.insert(i).inserted else { continue }
                if Int.random(in: 0..<5, using: &rng) == 0 { batch.append(Self.delete("d\(i)")) }
                else { batch.append(Self.setB("d\(i)", Double(Int.random(in: 0..<20, using: &rng)))) }
            }
            generated.append(batch)
        }
        let batches = generated
        try await ServerTests.serve { fs, _ in
            _ = try await ServerTests.commit(fs, Self.sixDocuments)
            for (limit, last) in [(Int32(3), false), (1, false), (4, true)] {
                let n = try await Self.replay(fs, Self.orderedByB(limit: limit, last: last), batches)
                XCTAssertEqual(n, batches.count + 1)
            }
        }
    }
}

/// A small seeded generator: the random test replays the same batches on every run.
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
