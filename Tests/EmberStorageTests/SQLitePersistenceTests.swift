import XCTest
import Foundation
import EmberModel
import EmberStorage

/// SQLitePersistence: the document stores, the queue, targets and metadata, each round-tripped
/// through closing and reopening the file; transactions; the file-level errors.
final class SQLitePersistenceTests: XCTestCase {
    func testDocumentStoreBasicsAndReopen() throws {
        let dir = TempDir()
        var p: SQLitePersistence? = try SQLitePersistence(path: dir.file())
        let nested: Value = .map(MapValue(["a": .array([.int(1), .double(2.5), .null, .bool(true)]),
                                           "t": .timestamp(Timestamp(micros: 123_456)), "r": .reference(skey("x/y")),
                                           "g": .geoPoint(GeoPoint(latitude: 1, longitude: 2)), "b": .bytes([0, 1, 255])]))
        for store in [p!.backendDocuments, p!.remoteDocuments] {
            XCTAssertNil(store.get(skey("c/a")))
            store.put(sdoc("c/a", ["v": .int(1), "m": nested], version: 5))
            store.put(sdoc("c/b", ["v": .string("é")]))
            store.put(sdoc("x/1/c/z", ["v": .int(3)]))
            store.put(Document.missing(skey("c/gone"), version: 9))
            store.put(sdoc("c/b", ["v": .string("e\u{301}")], version: 2))
            XCTAssertEqual(store.count, 4)
            XCTAssertEqual(store.documents(in: spath("c")).count, 3)
            XCTAssertEqual(Set(store.documents(inGroup: "c").map { $0.key.path.canonical }), ["c/a", "c/b", "c/gone", "x/1/c/z"])
            store.remove(skey("x/1/c/z"))
            store.remove(skey("x/1/c/none"))
        }
        p!.close()
        p = nil
        let q = try SQLitePersistence(path: dir.file())
        for store in [q.backendDocuments, q.remoteDocuments] {
            let a = try XCTUnwrap(store.get(skey("c/a")))
            XCTAssertEqual(a.data["m"], nested)
            XCTAssertEqual(a.version, 5)
            XCTAssertEqual(store.get(skey("c/b"))?.data["v"], .string("e\u{301}"))
            XCTAssertEqual(store.get(skey("c/b"))?.version, 2)
            let gone = try XCTUnwrap(store.get(skey("c/gone")))
            XCTAssertFalse(gone.exists)
            XCTAssertEqual(gone.version, 9)
            XCTAssertNil(store.get(skey("x/1/c/z")))
            XCTAssertEqual(store.count, 3)
        }
        q.close()
    }

    func testQueueTargetsAndMetadataSurviveReopen() throws {
        let dir = TempDir()
        do {
            let p = try SQLitePersistence(path: dir.file())
            let m1 = Mutation(key: skey("c/a"), kind: .set(MapValue(["v": .int(1)])), precondition: .exists(false))
            let m2 = Mutation(key: skey("c/b"), kind: .patch(MapValue(["x.y": .int(2)]), mask: [try FieldPath(["x", "y"]), try FieldPath(parsing: "z")]),
                              transforms: [FieldTransform(path: try FieldPath(parsing: "t"), op: .serverTimestamp),
                                           FieldTransform(path: try FieldPath(parsing: "n"), op: .increment(.double(1.5))),
                                           FieldTransform(path: try FieldPath(parsing: "u"), op: .arrayUnion([.int(1)])),
                                           FieldTransform(path: try FieldPath(parsing: "r"), op: .arrayRemove([.string("q")]))],
                              precondition: .updateTime(77))
            try! p.runTransaction("w") {
                p.mutationQueue.add(MutationBatch(batchId: 1, localWriteTime: 10, mutations: [m1, m2]))
                p.mutationQueue.add(MutationBatch(batchId: 2, localWriteTime: 20, mutations: [Mutation(key: skey("c/a"), kind: .delete)]))
                p.mutationQueue.add(MutationBatch(batchId: 3, localWriteTime: 30, mutations: [Mutation(key: skey("c/a"), kind: .verify)]))
            }
            try! p.runTransaction("ack") { p.mutationQueue.remove(batchId: 3) }
            p.targetCache.put(TargetData(targetId: "q1", readTime: 99, lastUsed: 0))
            p.targetCache.put(TargetData(targetId: "q2", readTime: 5, lastUsed: 0, resumeToken: [0, 1, 2, 255]))
            p.setMetadata("k", 42)
            p.close()
        }
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        let batches = p.mutationQueue.allBatches()
        XCTAssertEqual(batches.map { $0.batchId }, [1, 2])
        XCTAssertEqual(p.mutationQueue.nextBatchId(), 4, "ids are never reused, even of removed batches")
        XCTAssertEqual(batches[0].localWriteTime, 10)
        let m2 = batches[0].mutations[1]
        XCTAssertEqual(m2.precondition, .updateTime(77))
        guard case .patch(let d, let mask) = m2.kind else { return XCTFail("kind") }
        XCTAssertEqual(d["x.y"], .int(2))
        XCTAssertEqual(mask.map { $0.segments }, [["x", "y"], ["z"]])
        XCTAssertEqual(m2.transforms.count, 4)
        if case .increment(let v) = m2.transforms[1].op { XCTAssertEqual(v, .double(1.5)) } else { XCTFail("transform") }
        XCTAssertEqual(batches[0].mutations[0].precondition, .exists(false))
        if case .delete = batches[1].mutations[0].kind {} else { XCTFail("delete") }
        XCTAssertEqual(p.targetCache.get("q1")?.readTime, 99)
        XCTAssertNil(p.targetCache.get("q1")?.resumeToken)
        XCTAssertEqual(p.targetCache.get("q2")?.resumeToken, [0, 1, 2, 255])
        XCTAssertEqual(p.targetCache.all().map { $0.resumeToken }, [nil, [0, 1, 2, 255]])
        XCTAssertEqual(p.metadata("k"), 42)
        XCTAssertNil(p.metadata("missing"))
    }

    func testTransactionIsAtomicWhenTheBodyThrows() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        defer { p.close() }
        struct Boom: Error {}
        XCTAssertThrowsError(try p.runTransaction("t") {
            p.remoteDocuments.put(sdoc("c/a", ["v": .int(1)]))
            try! p.runTransaction("nested") { p.remoteDocuments.put(sdoc("c/b", ["v": .int(1)])) }
            throw Boom()
        })
        XCTAssertNil(p.remoteDocuments.get(skey("c/a")))
        XCTAssertNil(p.remoteDocuments.get(skey("c/b")))
    }

    // MARK: file-level errors

    func testSecondOpenOfTheSamePathIsLocked() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file())
        XCTAssertThrowsError(try SQLitePersistence(path: dir.file())) { e in
            XCTAssertEqual(errorCode(e), .failedPrecondition)
            XCTAssertTrue("\(e)".contains("locked"), "\(e)")
        }
        XCTAssertThrowsError(try SQLitePersistence.clear(path: dir.file())) { XCTAssertEqual(errorCode($0), .failedPrecondition) }
        p.close()
        let again = try SQLitePersistence(path: dir.file())
        again.close()
        try SQLitePersistence.clear(path: dir.file())
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file()))
    }

    func testGarbageFileIsDataLoss() throws {
        let dir = TempDir()
        try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: dir.file()))
        XCTAssertThrowsError(try SQLitePersistence(path: dir.file())) { XCTAssertEqual(errorCode($0), .dataLoss, "\($0)") }
    }

    func testDamagedHeaderIsDataLoss() throws {
        let dir = TempDir()
        try fill(dir.file(), 200)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.file()))
        for i in 0..<16 { bytes[i] = 0xEE }
        try bytes.write(to: URL(fileURLWithPath: dir.file()))
        XCTAssertThrowsError(try SQLitePersistence(path: dir.file())) { XCTAssertEqual(errorCode($0), .dataLoss, "\($0)") }
    }

    func testTruncatedFileIsDataLoss() throws {
        let dir = TempDir()
        try fill(dir.file(), 2000)
        let size = try FileManager.default.attributesOfItem(atPath: dir.file())[.size] as! Int
        XCTAssertGreaterThan(size, 100_000)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file()))
        try h.truncate(atOffset: UInt64(size / 2))
        try h.close()
        XCTAssertThrowsError(try SQLitePersistence(path: dir.file())) { e in
            XCTAssertEqual(errorCode(e), .dataLoss, "\(e)")
            XCTAssertTrue("\(e)".contains("truncated"), "\(e)")
        }
    }

    func testCorruptedPagesNeverCrash() throws {
        // Damage in the middle of the file: opening may succeed (the header is fine); reads must
        // not crash, and the error is recorded for the caller.
        let dir = TempDir()
        try fill(dir.file(), 2000)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.file()))
        for i in stride(from: 8192, to: bytes.count - 4096, by: 7) { bytes[i] = UInt8.random(in: 0...255) }
        try bytes.write(to: URL(fileURLWithPath: dir.file()))
        do {
            let p = try SQLitePersistence(path: dir.file())
            _ = p.remoteDocuments.documents(in: spath("c"))
            _ = p.remoteDocuments.get(skey("c/17"))
            XCTAssertEqual(p.failure?.code, .dataLoss, "the damage is reported: \(String(describing: p.failure))")
            p.close()
        } catch {
            XCTAssertEqual(errorCode(error), .dataLoss, "\(error)")
        }
    }

    func testMissingDirectoryIsUnavailable() {
        XCTAssertThrowsError(try SQLitePersistence(path: "/nonexistent-ember-dir/x/db.ember")) { e in
            XCTAssertEqual(errorCode(e), .unavailable, "\(e)")
            XCTAssertTrue("\(e)".contains("does not exist"), "\(e)")
        }
    }

    func testReadOnlyDirectoryIsPermissionDenied() throws {
        let dir = TempDir()
        var path = dir.path + "/ro/db.ember"
        if getuid() == 0 {
            path = "/sys/ember-test.ember"   // root ignores directory modes; sysfs refuses new files
        } else {
            try FileManager.default.createDirectory(atPath: dir.path + "/ro", withIntermediateDirectories: false)
            chmod(dir.path + "/ro", 0o555)
        }
        defer { chmod(dir.path + "/ro", 0o755) }
        XCTAssertThrowsError(try SQLitePersistence(path: path)) { XCTAssertEqual(errorCode($0), .permissionDenied, "\($0)") }
    }

    /// A database at `path` with `n` checkpointed documents in collection c.
    private func fill(_ path: String, _ n: Int) throws {
        let p = try SQLitePersistence(path: path)
        try! p.runTransaction("fill") {
            for i in 0..<n { p.remoteDocuments.put(sdoc("c/\(i)", ["v": .int(Int64(i)), "pad": .string(String(repeating: "p", count: 100))])) }
        }
        p.close()
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        XCTAssertEqual(wal ?? 0, 0, "closing checkpoints the WAL")
    }
}
