import XCTest
import Foundation
import Ember

/// DocumentReference: set / merge / mergeFields / update / delete, reads by source, listeners,
/// paths, auto ids, and the errors of invalid paths and data.
final class DocumentReferenceTests: XCTestCase {
    var db: Firestore!

    override func setUpWithError() throws { db = try openDB() }
    override func tearDown() { db.terminate(); db = nil }

    func data(_ ref: DocumentReference, file: StaticString = #filePath, line: UInt = #line) -> [String: Any]? {
        get(ref, file: file, line: line)?.data()
    }

    // MARK: set, merge, mergeFields

    func testSetReplacesTheWholeDocument() {
        let ref = db.collection("cities").document("SF")
        set(ref, ["name": "San Francisco", "state": "CA"])
        set(ref, ["population": 860000])
        XCTAssertSame(data(ref), ["population": 860000])
    }

    func testSetMergeKeepsOtherFieldsAndMergesNestedMaps() {
        let ref = db.document("cities/SF")
        set(ref, ["name": "San Francisco", "nested": ["x": 1, "keep": true], "top": 1])
        XCTAssertNil(waitError { ref.setData(["nested": ["y": 2], "capital": false, "empty": [String: Any]()], merge: true, completion: $0) })
        XCTAssertSame(data(ref), ["name": "San Francisco", "top": 1, "capital": false, "empty": [String: Any](),
                                                    "nested": ["x": 1, "y": 2, "keep": true]])
        // merge: false is a plain set.
        XCTAssertNil(waitError { ref.setData(["only": 1], merge: false, completion: $0) })
        XCTAssertSame(data(ref), ["only": 1])
    }

    func testSetMergeCreatesAMissingDocument() {
        let ref = db.document("cities/NEW")
        XCTAssertNil(waitError { ref.setData(["a": ["b": 1]], merge: true, completion: $0) })
        XCTAssertSame(data(ref), ["a": ["b": 1]])
    }

    func testMergeFieldsWritesOnlyTheListedFields() {
        let ref = db.document("cities/SF")
        set(ref, ["a": 1, "b": 2, "nested": ["x": 1, "z": 1], "m": ["old": true]])
        let e = waitError {
            ref.setData(["a": 10, "b": 20, "nested": ["x": 5, "z": 6], "m": ["new": true]],
                        mergeFields: ["a", FieldPath(["nested", "x"]), "m"], completion: $0)
        }
        XCTAssertNil(e)
        // A listed map replaces the map; unlisted fields keep their values.
        XCTAssertSame(data(ref), ["a": 10, "b": 2, "nested": ["x": 5, "z": 1], "m": ["new": true]])
    }

    func testMergeFieldsWithTransformsAndDelete() {
        let ref = db.document("cities/SF")
        set(ref, ["count": 1, "gone": true, "other": 1])
        XCTAssertNil(waitError {
            ref.setData(["count": FieldValue.increment(Int64(2)), "gone": FieldValue.delete(), "other": FieldValue.increment(Int64(100))],
                        mergeFields: ["count", "gone"], completion: $0)
        })
        XCTAssertSame(data(ref), ["count": 3, "other": 1])
    }

    /// Firestore's conformance cases set-del-nomerge and set-del-nonleaf: a delete must itself be
    /// a merge field; one another merge field's value holds, or none selects, is refused.
    func testMergeFieldsRefuseADeleteTheyDoNotName() {
        let ref = db.document("cities/SF")
        set(ref, ["a": 0, "b": 0, "h": ["g": 0, "k": 0]])
        let unselected = waitError { ref.setData(["a": 1, "b": FieldValue.delete()], mergeFields: ["a"], completion: $0) }
        XCTAssertEqual(code(unselected), .invalidArgument)
        XCTAssertTrue("\(unselected!)".contains("'b'"), "\(unselected!)")
        let inside = waitError { ref.setData(["h": ["g": FieldValue.delete()]], mergeFields: ["h"], completion: $0) }
        XCTAssertEqual(code(inside), .invalidArgument)
        XCTAssertTrue("\(inside!)".contains("'h.g'"), "\(inside!)")
        XCTAssertSame(data(ref), ["a": 0, "b": 0, "h": ["g": 0, "k": 0]])
        // Named itself, the same delete is applied.
        XCTAssertNil(waitError { ref.setData(["a": 1, "h": ["g": FieldValue.delete()]], mergeFields: ["a", "h.g"], completion: $0) })
        XCTAssertSame(data(ref), ["a": 1, "b": 0, "h": ["k": 0]])
    }

    func testMergeFieldMissingFromTheDataIsInvalid() {
        let ref = db.document("cities/SF")
        XCTAssertEqual(code(waitError { ref.setData(["a": 1], mergeFields: ["b"], completion: $0) }), .invalidArgument)
        XCTAssertEqual(code(waitError { ref.setData(["a": 1], mergeFields: [42], completion: $0) }), .invalidArgument)
        XCTAssertEqual(get(ref)?.exists, false)
    }

    // MARK: update

    func testUpdateWithDottedPathsAndFieldPaths() {
        let ref = db.document("cities/SF")
        set(ref, ["name": "SF", "favorites": ["food": "Pizza", "color": "Blue"], "a.b": 0])
        XCTAssertNil(waitError {
            ref.updateData(["favorites.color": "Red", FieldPath(["a.b"]): 1, FieldPath(["deep", "er"]): true, "new.field": 3], completion: $0)
        })
        XCTAssertSame(data(ref), ["name": "SF", "favorites": ["food": "Pizza", "color": "Red"], "a.b": 1,
                                                    "deep": ["er": true], "new": ["field": 3]])
        // Updating a map field replaces the map.
        XCTAssertNil(waitError { ref.updateData(["favorites": ["food": "Ramen"]], completion: $0) })
        XCTAssertSame(get(ref)?.get("favorites"), ["food": "Ramen"])
        XCTAssertEqual(get(ref)?.get(FieldPath(["a.b"])) as? Int, 1)
        XCTAssertEqual(get(ref)?["deep.er"] as? Bool, true)
    }

    func testUpdateOfAMissingDocumentFailsWithNotFound() {
        let ref = db.document("cities/NOPE")
        let seen = Recorder<Bool>()
        let reg = ref.addSnapshotListener { s, _ in seen.append(s?.exists ?? false) }
        defer { reg.remove() }
        XCTAssertEqual(seen.wait(for: 1), [false])
        XCTAssertEqual(code(waitError { ref.updateData(["a": 1], completion: $0) }), .notFound)
        XCTAssertEqual(get(ref)?.exists, false)
        XCTAssertThrowsError(try runAsync { try await ref.updateData(["a": 1]) }.get()) { XCTAssertEqual(code($0), .notFound) }
        XCTAssertEqual(seen.all, [false], "the refused update never made the document appear")
    }

    func testUpdateWithNoFieldsOrBadKeysIsInvalid() {
        let ref = db.document("cities/SF")
        set(ref, ["a": 1])
        XCTAssertEqual(code(waitError { ref.updateData([:], completion: $0) }), .invalidArgument)
        XCTAssertEqual(code(waitError { ref.updateData([1: "x"], completion: $0) }), .invalidArgument)
        XCTAssertEqual(code(waitError { ref.updateData(["a..b": 1], completion: $0) }), .invalidArgument)
        XCTAssertEqual(code(waitError { ref.updateData([FieldPath([]): 1], completion: $0) }), .invalidArgument)
        XCTAssertSame(data(ref), ["a": 1])
    }

    // MARK: field values

    func testServerTimestampIsNullLocallyThenATimestampAfterTheAck() {
        let ref = db.document("cities/SF")
        let seen = Recorder<(Any?, Bool)>()
        let reg = ref.addSnapshotListener(includeMetadataChanges: true) { s, _ in
            guard let s, s.exists else { return }
            seen.append((s.get("at"), s.metadata.hasPendingWrites))
        }
        defer { reg.remove() }
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        let before = Date()
        ref.setData(["at": FieldValue.serverTimestamp(), "nested": ["at": FieldValue.serverTimestamp()]])
        let local = seen.wait(for: 1)
        XCTAssertTrue(local[0].0 is NSNull, "pending server timestamp reads as null, got \(String(describing: local[0].0))")
        XCTAssertTrue(local[0].1)
        XCTAssertTrue(get(ref, source: .cache)?.get("nested.at") is NSNull)
        XCTAssertNil(waitError { db.enableNetwork(completion: $0) })
        let events = seen.wait(until: { $0.0 is Timestamp })
        XCTAssertTrue(events.dropLast().allSatisfy { $0.0 is NSNull && $0.1 }, "\(events)")
        guard let ts = events.last?.0 as? Timestamp else { return XCTFail("expected a Timestamp, got \(String(describing: events.last))") }
        XCTAssertFalse(events.last!.1)
        XCTAssertGreaterThanOrEqual(ts.dateValue().timeIntervalSince1970, before.timeIntervalSince1970 - 0.001)
        XCTAssertLessThanOrEqual(ts.dateValue().timeIntervalSince1970, Date().timeIntervalSince1970 + 0.001)
        let doc = get(ref)
        XCTAssertEqual(doc?.get("at") as? Timestamp, ts)
        XCTAssertEqual(doc?.get("nested.at") as? Timestamp, ts, "both server timestamps of one write are the commit time")
        // In an update too.
        XCTAssertNil(waitError { ref.updateData(["later": FieldValue.serverTimestamp()], completion: $0) })
        let later = get(ref)?.get("later") as? Timestamp
        XCTAssertNotNil(later)
        if let later { XCTAssertGreaterThan(later.dateValue(), ts.dateValue()) }
    }

    func testIncrementKeepsIntegersIntegral() {
        let ref = db.document("counters/c")
        set(ref, ["i": 5, "d": 5.5, "s": "text"])
        XCTAssertNil(waitError {
            ref.updateData(["i": FieldValue.increment(Int64(2)), "d": FieldValue.increment(1.25),
                            "missing": FieldValue.increment(Int64(7)), "s": FieldValue.increment(1.5),
                            "mixed": FieldValue.increment(0.5)], completion: $0)
        })
        let d = data(ref)
        XCTAssertEqual(d?["i"] as? Int, 7)
        XCTAssertTrue(d?["i"] is Int)
        XCTAssertEqual(d?["d"] as? Double, 6.75)
        XCTAssertEqual(d?["missing"] as? Int, 7)
        XCTAssertEqual(d?["s"] as? Double, 1.5, "a non-number is replaced by the operand")
        XCTAssertEqual(d?["mixed"] as? Double, 0.5)
        XCTAssertNil(waitError { ref.updateData(["i": FieldValue.increment(0.5)], completion: $0) })
        XCTAssertEqual(get(ref)?.get("i") as? Double, 7.5, "int + double is a double")
        XCTAssertNil(waitError { ref.updateData(["d": FieldValue.increment(Int64(-10))], completion: $0) })
        XCTAssertEqual(get(ref)?.get("d") as? Double, -3.25)
    }

    func testArrayUnionAndRemove() {
        let ref = db.document("cities/SF")
        set(ref, ["regions": ["west_coast", "norcal"], "n": [1, 2, 1, 3]])
        XCTAssertNil(waitError {
            ref.updateData(["regions": FieldValue.arrayUnion(["greater_virginia", "norcal", "east"]),
                            "n": FieldValue.arrayRemove([1]), "fresh": FieldValue.arrayUnion([["m": 1], 2])], completion: $0)
        })
        let d = data(ref)
        XCTAssertEqual(d?["regions"] as? [String], ["west_coast", "norcal", "greater_virginia", "east"])
        XCTAssertEqual(d?["n"] as? [Int], [2, 3])
        XCTAssertSame(d?["fresh"], [["m": 1], 2] as [Any])
        XCTAssertNil(waitError { ref.updateData(["regions": FieldValue.arrayRemove(["west_coast", "nowhere"]), "absent": FieldValue.arrayRemove([1])], completion: $0) })
        XCTAssertEqual(get(ref)?.get("regions") as? [String], ["norcal", "greater_virginia", "east"])
        XCTAssertSame(get(ref)?.get("absent"), [] as [Any])
        // Sentinels are not allowed inside arrays.
        XCTAssertEqual(code(waitError { ref.updateData(["regions": [FieldValue.arrayUnion([1])]], completion: $0) }), .invalidArgument)
    }

    func testDeleteFieldInUpdateAndMergeButNotInSet() {
        let ref = db.document("cities/SF")
        set(ref, ["a": 1, "b": 2, "m": ["x": 1, "y": 2]])
        XCTAssertNil(waitError { ref.updateData(["a": FieldValue.delete(), "m.x": FieldValue.delete()], completion: $0) })
        XCTAssertSame(data(ref), ["b": 2, "m": ["y": 2]])
        XCTAssertNil(waitError { ref.setData(["b": FieldValue.delete()], merge: true, completion: $0) })
        XCTAssertSame(data(ref), ["m": ["y": 2]])
        XCTAssertEqual(code(waitError { ref.setData(["m": FieldValue.delete()], completion: $0) }), .invalidArgument)
        XCTAssertSame(data(ref), ["m": ["y": 2]])
    }

    func testDeleteDocument() throws {
        let ref = db.document("cities/SF")
        set(ref, ["a": 1])
        XCTAssertNil(waitError { ref.delete(completion: $0) })
        XCTAssertEqual(get(ref)?.exists, false)
        XCTAssertNil(get(ref)?.data())
        XCTAssertNil(waitError { ref.delete(completion: $0) }, "deleting a missing document is fine")
        try runAsync { try await ref.setData(["b": 2]) }.get()
        try runAsync { try await ref.delete() }.get()
        XCTAssertEqual(get(ref)?.exists, false)
    }

    // MARK: reads by source

    func testGetFromCacheOfADocumentNotInCacheIsUnavailable() throws {
        let ref = db.document("cities/SF")
        let (s, e) = waitResult { ref.getDocument(source: .cache, completion: $0) }
        XCTAssertNil(s)
        XCTAssertEqual(code(e), .unavailable)
        XCTAssertThrowsError(try runAsync { try await ref.getDocument(source: .cache) }.get()) { XCTAssertEqual(code($0), .unavailable) }
        // Once read from the backend it is in the cache (also its absence).
        XCTAssertEqual(get(ref)?.exists, false)
        XCTAssertEqual(get(ref, source: .cache)?.exists, false)
        XCTAssertEqual(get(ref, source: .cache)?.metadata.isFromCache, true)
        set(ref, ["v": 1])
        let cached = get(ref, source: .cache)
        XCTAssertEqual(cached?.get("v") as? Int, 1)
        XCTAssertEqual(cached?.metadata.isFromCache, true)
        XCTAssertEqual(get(ref, source: .server)?.metadata.isFromCache, false)
        let asyncSnap = try runAsync { try await ref.getDocument(source: .cache) }.get()
        XCTAssertEqual(asyncSnap.get("v") as? Int, 1)
    }

    func testLocalWriteIsVisibleInTheCacheBeforeTheAck() {
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        let ref = db.document("cities/SF")
        ref.setData(["v": 1])
        let s = get(ref, source: .cache)
        XCTAssertEqual(s?.get("v") as? Int, 1)
        XCTAssertEqual(s?.metadata.hasPendingWrites, true)
    }

    // MARK: paths and ids

    func testReferencePathsAndParents() {
        let ref = db.collection("cities").document("SF").collection("landmarks").document("gg")
        XCTAssertEqual(ref.path, "cities/SF/landmarks/gg")
        XCTAssertEqual(ref.documentID, "gg")
        XCTAssertEqual(ref.parent.path, "cities/SF/landmarks")
        XCTAssertEqual(ref.parent.collectionID, "landmarks")
        XCTAssertEqual(ref.parent.parent?.path, "cities/SF")
        XCTAssertNil(db.collection("cities").parent)
        XCTAssertEqual(db.document("cities/SF/landmarks/gg").path, ref.path)
        XCTAssertTrue(ref.firestore === db)
    }

    func testAddDocumentGivesA20CharacterId() throws {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var seen = Set<String>()
        for _ in 0..<50 {
            let ref = db.collection("cities").addDocument(data: ["name": "Tokyo"])
            XCTAssertEqual(ref.documentID.count, 20)
            XCTAssertTrue(ref.documentID.allSatisfy { alphabet.contains($0) }, ref.documentID)
            XCTAssertEqual(ref.path, "cities/" + ref.documentID)
            seen.insert(ref.documentID)
        }
        XCTAssertEqual(seen.count, 50)
        let acked = Recorder<Error?>()
        let ref = db.collection("cities").addDocument(data: ["name": "Osaka"]) { acked.append($0) }
        XCTAssertEqual(acked.wait(for: 1).count, 1)
        XCTAssertNil(acked.all[0])
        XCTAssertEqual(get(ref)?.get("name") as? String, "Osaka")
        let asyncRef = try runAsync { [db] in try await db.collection("cities").addDocument(data: ["name": "Kyoto"]) }.get()
        XCTAssertEqual(asyncRef.documentID.count, 20)
        XCTAssertEqual(get(asyncRef)?.get("name") as? String, "Kyoto")
        XCTAssertEqual(db.collection("cities").document().documentID.count, 20)
        XCTAssertEqual(get(db.collection("cities"))?.count, 52)
    }

    func testCanonicallyEquivalentIdsAreDifferentDocuments() {
        let composed = db.collection("c").document("\u{E9}")
        let decomposed = db.collection("c").document("e\u{301}")
        set(composed, ["v": 1])
        set(decomposed, ["v": 2])
        XCTAssertEqual(get(composed)?.get("v") as? Int, 1)
        XCTAssertEqual(get(decomposed)?.get("v") as? Int, 2)
        XCTAssertEqual(get(db.collection("c"))?.count, 2)
        XCTAssertEqual(get(composed, source: .cache)?.get("v") as? Int, 1)
    }

    // MARK: invalid paths

    /// As the Apple SDK: one leading or trailing slash is ignored and paths read back canonical.
    func testLeadingAndTrailingSlashesAreIgnored() {
        XCTAssertEqual(db.document("/cities/SF/").path, "cities/SF")
        XCTAssertEqual(db.collection("/cities/").path, "cities")
        XCTAssertEqual(db.collection("cities/").document("LA").path, "cities/LA")
        XCTAssertNil(waitError { self.db.document("/cities/SF").setData(["v": 1], completion: $0) })
        XCTAssertEqual(get(db.document("cities/SF"))?.get("v") as? Int, 1)
    }

    func testInvalidPathsReportErrorsInsteadOfCrashing() {
        let badDocs: [DocumentReference] = [
            db.document("a"), db.document("a//b"), db.document("a/b/c"), db.document(""),
            db.collection("a/b").document("c"), db.collection("a").document(""), db.document("a/__x__"),
        ]
        for ref in badDocs {
            XCTAssertEqual(code(waitError { ref.setData(["v": 1], completion: $0) }), .invalidArgument, ref.path)
            XCTAssertEqual(code(waitError { ref.setData(["v": 1], merge: true, completion: $0) }), .invalidArgument, ref.path)
            XCTAssertEqual(code(waitError { ref.updateData(["v": 1], completion: $0) }), .invalidArgument, ref.path)
            XCTAssertEqual(code(waitError { ref.delete(completion: $0) }), .invalidArgument, ref.path)
            let (s, e) = waitResult { ref.getDocument(completion: $0) }
            XCTAssertNil(s)
            XCTAssertEqual(code(e), .invalidArgument, ref.path)
            let calls = Recorder<FirestoreErrorCode?>()
            let reg = ref.addSnapshotListener { s, e in calls.append(s == nil ? code(e) : nil) }
            XCTAssertEqual(calls.wait(for: 1), [.invalidArgument], ref.path)
            reg.remove()
            let b = db.batch()
            b.setData(["v": 1], forDocument: ref)
            XCTAssertEqual(code(waitError { b.commit(completion: $0) }), .invalidArgument, ref.path)
        }
        for col in [db.collection("a/b"), db.collection("a//b"), db.collection("")] {
            let (s, e) = waitResult { col.getDocuments(completion: $0) }
            XCTAssertNil(s)
            XCTAssertEqual(code(e), .invalidArgument, col.path)
            XCTAssertThrowsError(try col.validate(), col.path)
            XCTAssertEqual(code(waitError { col.addDocument(data: ["v": 1], completion: $0) }), .invalidArgument, col.path)
            let calls = Recorder<FirestoreErrorCode?>()
            let reg = col.addSnapshotListener { s, e in calls.append(s == nil ? code(e) : nil) }
            XCTAssertEqual(calls.wait(for: 1), [.invalidArgument], col.path)
            reg.remove()
        }
        XCTAssertEqual(get(db.collection("a"))?.count, 0, "nothing was written")
    }

    // MARK: invalid data

    func testInvalidDataIsInvalidArgument() {
        struct Custom {}
        var deep: [String: Any] = ["leaf": 1]
        for _ in 0..<25 { deep = ["d": deep] }
        let big = String(repeating: "x", count: 1_048_576)
        let cases: [(String, [String: Any])] = [
            ("nested arrays", ["a": [[1, 2], 3]]),
            ("nested arrays in a map", ["m": ["a": [1, [2]]]]),
            ("too deep", deep),
            ("larger than 1 MiB", ["big": big]),
            ("unsupported type", ["c": Custom()]),
            ("unsupported type in an array", ["a": [1, Custom()]]),
            ("a Set", ["s": Set([1, 2])]),
            ("a URL", ["u": URL(string: "https://example.com")!]),
            ("empty field name", ["": 1]),
            ("sentinel in an array", ["a": [FieldValue.serverTimestamp()]]),
            ("delete in set", ["a": FieldValue.delete()]),
            ("UInt64 too large", ["u": UInt64.max]),
            ("geopoint out of range", ["g": GeoPoint(latitude: 91, longitude: 0)]),
            ("reference with an invalid path", ["r": db.document("a")]),
        ]
        let ref = db.document("cities/SF")
        for (what, data) in cases {
            XCTAssertEqual(code(waitError { ref.setData(data, completion: $0) }), .invalidArgument, what)
            if what == "delete in set" { continue }   // allowed with merge: true
            XCTAssertEqual(code(waitError { ref.setData(data, merge: true, completion: $0) }), .invalidArgument, what)
        }
        set(ref, ["ok": 1])
        for (what, data) in cases where what != "empty field name" && what != "delete in set" {
            XCTAssertEqual(code(waitError { ref.updateData(data, completion: $0) }), .invalidArgument, what)
        }
        XCTAssertEqual(code(waitError { ref.updateData(["big": big], completion: $0) }), .invalidArgument)
        XCTAssertSame(data(ref), ["ok": 1], "nothing invalid was applied")
        XCTAssertThrowsError(try runAsync { try await ref.setData(["a": [[1]]]) }.get()) { XCTAssertEqual(code($0), .invalidArgument) }
    }

    func testLimitsThatAreJustAllowed() {
        let ref = db.document("cities/SF")
        var deep: [String: Any] = ["leaf": 1]
        for _ in 0..<10 { deep = ["d": deep] }
        set(ref, deep)
        set(ref, ["big": String(repeating: "x", count: 1_000_000)])
        XCTAssertEqual((get(ref)?.get("big") as? String)?.utf8.count, 1_000_000)
        set(ref, ["arrayOfMapsOfArrays": [["a": [1, 2]], ["b": [["c": [3]]]]]])
        XCTAssertSame(get(ref)?.get("arrayOfMapsOfArrays"), [["a": [1, 2]], ["b": [["c": [3]]]]] as [Any])
    }

    // MARK: listeners

    func testDocumentListenerOptionsAndRemoval() {
        let ref = db.document("cities/SF")
        let plain = Recorder<String>(), meta = Recorder<String>()
        let r1 = ref.addSnapshotListener { s, _ in plain.append("\(s?.get("v") ?? "-")/\(s?.metadata.hasPendingWrites ?? false)") }
        let r2 = ref.addSnapshotListener(options: SnapshotListenOptions().withIncludeMetadataChanges(true)) { s, _ in
            meta.append("\(s?.get("v") ?? "-")/\(s?.metadata.hasPendingWrites ?? false)")
        }
        plain.wait(for: 1); meta.wait(for: 1)
        set(ref, ["v": 1])
        XCTAssertEqual(meta.wait(for: 3), ["-/false", "1/true", "1/false"])
        r1.remove()
        set(ref, ["v": 2])
        XCTAssertEqual(meta.wait(for: 5), ["-/false", "1/true", "1/false", "2/true", "2/false"])
        XCTAssertEqual(plain.all, ["-/false", "1/true"])
        r2.remove()
        r2.remove()
    }

    func testRemoveFromInsideTheCallbackStopsFurtherEvents() {
        let ref = db.document("cities/SF")
        let seen = Recorder<Int>()
        let regBox = Box<ListenerRegistration>()
        let reg = ref.addSnapshotListener { s, _ in
            seen.append(s?.get("v") as? Int ?? 0)
            if s?.exists == true { regBox.value?.remove() }
        }
        regBox.set(reg)
        seen.wait(for: 1)
        set(ref, ["v": 1])
        set(ref, ["v": 2])
        let barrier = Recorder<Int>()
        let r = ref.addSnapshotListener { s, _ in barrier.append(s?.get("v") as? Int ?? 0) }
        defer { r.remove() }
        XCTAssertEqual(barrier.wait(for: 1), [2])
        XCTAssertEqual(seen.all, [0, 1])
    }
}
