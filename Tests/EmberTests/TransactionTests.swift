import XCTest
import Foundation
import Ember

/// Transactions: reads before writes, optimistic commit with retries, the block's result and
/// errors (errorPointer), completion and async forms.
final class TransactionTests: XCTestCase {
    var db: Firestore!

    override func setUpWithError() throws { db = try openDB() }
    override func tearDown() { db.terminate(); db = nil }

    func testIncrementPopulationAsInTheFirebaseDocs() {
        let db: Firestore = self.db
        let sfReference = db.collection("cities").document("SF")
        set(sfReference, ["population": 860000])
        let (object, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            self.db.runTransaction({ (transaction, errorPointer) -> Any? in
                let sfDocument: DocumentSnapshot
                do {
                    try sfDocument = transaction.getDocument(sfReference)
                } catch {
                    // The docs write `catch let fetchError as NSError`; on Linux a Swift error never
                    // matches that pattern (no conditional bridging), so it is coerced instead.
                    errorPointer?.pointee = error as NSError
                    return nil
                }
                guard let oldPopulation = sfDocument.data()?["population"] as? Int else {
                    let error = NSError(domain: "AppErrorDomain", code: -1, userInfo: [
                        NSLocalizedDescriptionKey: "Unable to retrieve population from snapshot \(sfDocument)"
                    ])
                    errorPointer?.pointee = error
                    return nil
                }
                transaction.updateData(["population": oldPopulation + 1], forDocument: sfReference)
                return oldPopulation + 1
            }, completion: done)
        }
        XCTAssertNil(error)
        XCTAssertEqual(object as? Int, 860001)
        XCTAssertEqual(get(sfReference)?.get("population") as? Int, 860001)
    }

    func testErrorPointerFailsTheTransactionWithThatError() {
        let db: Firestore = self.db
        let ref = db.document("cities/SF")
        set(ref, ["population": "not a number"])
        let (object, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            self.db.runTransaction({ transaction, errorPointer in
                let doc = try? transaction.getDocument(ref)
                transaction.setData(["population": 0], forDocument: ref)
                if doc?.data()?["population"] as? Int == nil {
                    errorPointer?.pointee = NSError(domain: "AppErrorDomain", code: -1,
                                                    userInfo: [NSLocalizedDescriptionKey: "no population"])
                    return nil
                }
                return 1
            }, completion: done)
        }
        XCTAssertNil(object)
        let ns = error as NSError?
        XCTAssertEqual(ns?.domain, "AppErrorDomain")
        XCTAssertEqual(ns?.code, -1)
        XCTAssertEqual(ns?.localizedDescription, "no population")
        XCTAssertEqual(get(ref)?.get("population") as? String, "not a number", "nothing of a failed transaction is written")
    }

    func testAsyncTransactionAndErrorPointer() throws {
        let ref = db.document("counters/c")
        set(ref, ["n": 1])
        let value = try runAsync { [db] in
            try await db.runTransaction({ tx, _ in
                let n = (try? tx.getDocument(ref))?.get("n") as? Int ?? 0
                tx.updateData(["n": n + 1], forDocument: ref)
                return "done \(n + 1)"
            })
        }.get()
        XCTAssertEqual(value as? String, "done 2")
        XCTAssertEqual(get(ref)?.get("n") as? Int, 2)
        XCTAssertThrowsError(try runAsync { [db] in
            try await db.runTransaction({ _, errorPointer in
                errorPointer?.pointee = NSError(domain: "Mine", code: 7)
                return nil
            })
        }.get()) { e in
            XCTAssertEqual((e as NSError).domain, "Mine")
            XCTAssertEqual((e as NSError).code, 7)
        }
    }

    func testConcurrentIncrementsGiveTheExactTotal() {
        let ref = db.document("counters/shared")
        set(ref, ["count": 0])
        let perTask = 10, tasks = 4
        let finished = Recorder<String>()
        let exp = expectation(description: "all transactions")
        exp.expectedFulfillmentCount = tasks * perTask
        for t in 0..<tasks {
            Thread.detachNewThread { [db = self.db!] in
                for _ in 0..<perTask {
                    let sem = DispatchSemaphore(value: 0)
                    db.runTransaction({ tx, errorPointer in
                        do {
                            let n = try tx.getDocument(ref).get("count") as? Int ?? -1000
                            tx.updateData(["count": n + 1], forDocument: ref)
                        } catch {
                            errorPointer?.pointee = error as NSError
                        }
                        return nil
                    }) { _, error in
                        finished.append(error.map { "task \(t): \($0)" } ?? "ok")
                        exp.fulfill()
                        sem.signal()
                    }
                    _ = sem.wait(timeout: .now() + 5)
                }
            }
        }
        wait(for: [exp], timeout: 20)
        XCTAssertEqual(finished.all.filter { $0 != "ok" }, [])
        XCTAssertEqual(get(ref)?.get("count") as? Int, tasks * perTask)
    }

    func testConcurrentAsyncIncrementsGiveTheExactTotal() {
        let ref = db.document("counters/async")
        set(ref, ["count": 0])
        let db = self.db!
        let result = runAsync { () -> [String] in
            try await withThrowingTaskGroup(of: String.self) { group in
                for t in 0..<4 {
                    group.addTask {
                        for _ in 0..<5 {
                            do {
                                _ = try await db.runTransaction({ tx, errorPointer in
                                    do {
                                        let n = try tx.getDocument(ref).get("count") as? Int ?? -1000
                                        tx.updateData(["count": n + 1], forDocument: ref)
                                    } catch { errorPointer?.pointee = error as NSError }
                                    return nil
                                })
                            } catch { return "task \(t): \(error)" }
                        }
                        return "ok"
                    }
                }
                var out: [String] = []
                for try await r in group { out.append(r) }
                return out
            }
        }
        XCTAssertEqual(try result.get(), ["ok", "ok", "ok", "ok"])
        XCTAssertEqual(get(ref)?.get("count") as? Int, 20)
    }

    func testReadsAfterWritesAreAnError() {
        let db: Firestore = self.db
        let ref = db.document("c/a")
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            self.db.runTransaction({ tx, errorPointer in
                tx.setData(["v": 1], forDocument: ref)
                do { _ = try tx.getDocument(ref) } catch { errorPointer?.pointee = error as NSError }
                return nil
            }, completion: done)
        }
        // The Firestore error went through NSError (errorPointer) and keeps its status code.
        XCTAssertEqual(code(error), .invalidArgument)
        XCTAssertEqual((error as NSError?)?.domain, FirestoreErrorDomain)
        XCTAssertEqual((error as NSError?)?.code, Int(FirestoreErrorCode.invalidArgument.rawValue))
        XCTAssertEqual(get(ref)?.exists, false)
    }

    func testInvalidWriteInATransactionFailsIt() {
        let db: Firestore = self.db
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            db.runTransaction({ tx, _ in
                tx.setData(["v": [[1]]], forDocument: db.document("c/a"))
                tx.setData(["v": 1], forDocument: db.document("c/b"))
                return nil
            }, completion: done)
        }
        XCTAssertEqual(code(error), .invalidArgument)
        XCTAssertEqual(get(db.collection("c"))?.count, 0)
    }

    func testUpdateOfAMissingDocumentInATransactionIsNotFound() {
        let db: Firestore = self.db
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            db.runTransaction({ tx, _ in
                tx.updateData(["v": 1], forDocument: db.document("c/missing"))
                return nil
            }, completion: done)
        }
        XCTAssertEqual(code(error), .notFound)
    }

    /// As the Firebase SDKs do: an update of a document the transaction read as missing can
    /// never succeed, so it fails at once with invalid-argument and the body is not run again.
    func testUpdateOfADocumentReadAsMissingFailsWithoutRetry() {
        let db: Firestore = self.db
        let runs = Recorder<Int>()
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            db.runTransaction({ tx, _ in
                runs.append(1)
                let ref = db.document("c/missing")
                _ = try? tx.getDocument(ref)
                tx.updateData(["v": 1], forDocument: ref)
                return nil
            }, completion: done)
        }
        XCTAssertEqual(code(error), .invalidArgument)
        XCTAssertTrue("\(error!)".contains("doesn't exist") || (error! as NSError).localizedDescription.contains("doesn't exist"))
        XCTAssertEqual(runs.count, 1)
    }

    func testTransactionWritesAreSeenByListeners() {
        let db: Firestore = self.db
        let seen = Recorder<[String]>()
        let reg = db.collection("c").addSnapshotListener { s, _ in seen.append(s?.documents.map { $0.documentID } ?? []) }
        defer { reg.remove() }
        seen.wait(for: 1)
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            db.runTransaction({ tx, _ in
                let a = db.document("c/a")
                if (try? tx.getDocument(a))?.exists == false { tx.setData(["v": 1], forDocument: a) }
                tx.setData(["v": 2], forDocument: db.document("c/b"))
                return nil
            }, completion: done)
        }
        XCTAssertNil(error)
        XCTAssertEqual(seen.wait(for: 2).last, ["a", "b"])
        tx_deleteAndCheck()
    }

    private func tx_deleteAndCheck() {
        let db: Firestore = self.db
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            db.runTransaction({ tx, _ in
                tx.deleteDocument(db.document("c/a"))
                tx.setData(["w": 1], forDocument: db.document("c/b"), merge: true)
                return nil
            }, completion: done)
        }
        XCTAssertNil(error)
        XCTAssertEqual(ids(db.collection("c")), ["b"])
        XCTAssertSame(get(db.document("c/b"))?.data(), ["v": 2, "w": 1])
    }

    func testTransactionOfflineIsUnavailable() {
        let db: Firestore = self.db
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            self.db.runTransaction({ _, _ in nil }, completion: done)
        }
        XCTAssertEqual(code(error), .unavailable)
    }

    func testTransactionAfterTerminateIsFailedPrecondition() {
        let db: Firestore = self.db
        db.terminate()
        let (_, error) = waitResult { (done: @escaping @Sendable (Any?, Error?) -> Void) in
            self.db.runTransaction({ _, _ in 1 }, completion: done)
        }
        XCTAssertEqual(code(error), .failedPrecondition)
    }
}
