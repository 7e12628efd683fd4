import EmberConcurrency
import XCTest
import Foundation
import Ember

/// Collects values produced on Ember's event thread (or any thread) and lets a test wait,
/// bounded, until enough have arrived.
final class Recorder<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    private let sem = DispatchSemaphore(value: 0)

    func append(_ x: T) {
        lock.lock(); items.append(x); lock.unlock()
        sem.signal()
    }

    var all: [T] { lock.lock(); defer { lock.unlock() }; return items }
    var count: Int { all.count }

    /// Waits (at most `timeout` seconds in all) until at least `n` items arrived; returns them all.
    @discardableResult
    func wait(for n: Int, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> [T] {
        let deadline = DispatchTime.now() + timeout
        while count < n {
            if sem.wait(timeout: deadline) == .timedOut {
                XCTFail("timed out waiting for \(n) items, got \(count): \(all)", file: file, line: line)
                break
            }
        }
        return all
    }

    /// Waits (at most `timeout` seconds) until the last item satisfies `done`; returns them all.
    @discardableResult
    func wait(until done: (T) -> Bool, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> [T] {
        let deadline = DispatchTime.now() + timeout
        while !(all.last.map(done) ?? false) {
            if sem.wait(timeout: deadline) == .timedOut {
                XCTFail("timed out waiting for a matching item, got \(count): \(String(describing: all.last))", file: file, line: line)
                break
            }
        }
        return all
    }
}

/// A value set on one thread and read on another after an expectation was fulfilled.
final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    func set(_ v: T) { lock.lock(); stored = v; lock.unlock() }
    var value: T? { lock.lock(); defer { lock.unlock() }; return stored }
}

func openDB() throws -> Firestore { try Firestore.open(settings: FirestoreSettings()) }

func code(_ error: Error?) -> FirestoreErrorCode? { (error as? FirestoreError)?.code }

/// Every order in which a dictionary of these entries may print, prefixed (Swift's dictionary
/// order is not fixed).
func printed(_ prefix: String, _ entries: [String]) -> Set<String> {
    func perms(_ a: [String]) -> [[String]] {
        if a.count <= 1 { return [a] }
        return a.indices.flatMap { i -> [[String]] in
            var rest = a; let x = rest.remove(at: i)
            return perms(rest).map { [x] + $0 }
        }
    }
    return Set(perms(entries).map { prefix + "[" + $0.joined(separator: ", ") + "]" })
}

extension XCTestCase {
    /// Starts an operation whose completion takes an optional error and waits for it (5 s).
    func waitError(_ what: String = #function, file: StaticString = #filePath, line: UInt = #line,
                   _ start: (@escaping @Sendable (Error?) -> Void) -> Void) -> Error? {
        let exp = expectation(description: what)
        let box = Box<Error?>()
        let calls = Recorder<Int>()
        start { e in
            box.set(e)
            calls.append(1)
            if calls.count == 1 { exp.fulfill() }
        }
        wait(for: [exp], timeout: 5)
        XCTAssertEqual(calls.count, 1, "completion must run exactly once", file: file, line: line)
        return box.value ?? nil
    }

    /// Starts an operation whose completion takes (value?, error?) and waits for it (5 s).
    func waitResult<T>(_ what: String = #function, _ start: (@escaping @Sendable (T?, Error?) -> Void) -> Void) -> (T?, Error?) {
        let exp = expectation(description: what)
        let box = Box<(T?, Error?)>()
        start { v, e in box.set((v, e)); exp.fulfill() }
        wait(for: [exp], timeout: 5)
        return box.value ?? (nil, nil)
    }

    /// Runs an async body on a task and waits for it (5 s).
    func runAsync<T>(_ what: String = #function, _ body: @escaping @Sendable () async throws -> T) -> Result<T, Error> {
        let exp = expectation(description: what)
        let box = Box<Result<T, Error>>()
        Task {
            do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
            exp.fulfill()
        }
        wait(for: [exp], timeout: 5)
        return box.value ?? .failure(FirestoreError(.deadlineExceeded, "the async body did not finish in 5 s"))
    }

    /// setData, waiting for the backend's acknowledgement; fails the test on error.
    func set(_ ref: DocumentReference, _ data: [String: Any], file: StaticString = #filePath, line: UInt = #line) {
        let e = waitError { ref.setData(data, completion: $0) }
        XCTAssertNil(e, "setData(\(ref.path)) failed", file: file, line: line)
    }

    /// getDocument, waiting for it; fails the test on error.
    func get(_ ref: DocumentReference, source: FirestoreSource = .default,
             file: StaticString = #filePath, line: UInt = #line) -> DocumentSnapshot? {
        let (s, e) = waitResult { ref.getDocument(source: source, completion: $0) }
        XCTAssertNil(e, "getDocument(\(ref.path)) failed", file: file, line: line)
        return s
    }

    /// getDocuments, waiting for it; fails the test on error.
    func get(_ q: Query, source: FirestoreSource = .default,
             file: StaticString = #filePath, line: UInt = #line) -> QuerySnapshot? {
        let (s, e) = waitResult { q.getDocuments(source: source, completion: $0) }
        XCTAssertNil(e, "getDocuments failed: \(String(describing: e))", file: file, line: line)
        return s
    }

    /// The document ids of a query's result, in order.
    func ids(_ q: Query, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        get(q, file: file, line: line)?.documents.map { $0.documentID } ?? []
    }

    /// Commits a batch of sets and waits for it.
    func seed(_ db: Firestore, _ docs: [String: [String: Any]], file: StaticString = #filePath, line: UInt = #line) {
        let b = db.batch()
        for (path, data) in docs { b.setData(data, forDocument: db.document(path)) }
        XCTAssertNil(waitError { b.commit(completion: $0) }, "seed batch failed", file: file, line: line)
    }
}

/// Structural equality of values read from Ember, strict about types (an Int is not a Double),
/// NaN equal to NaN and -0.0 distinct from 0.0.
func deepEqual(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (nil, _), (_, nil): return false
    case (let x as [String: Any], let y as [String: Any]):
        return x.count == y.count && x.allSatisfy { k, v in y[k].map { deepEqual(v, $0) } ?? false }
    case (let x as [Any], let y as [Any]):
        return x.count == y.count && zip(x, y).allSatisfy { deepEqual($0, $1) }
    case (is NSNull, is NSNull): return true
    case (let x as Bool, let y as Bool): return x == y && type(of: a!) == type(of: b!)
    case (let x as Int, let y as Int): return x == y && type(of: a!) == type(of: b!)
    case (let x as Double, let y as Double):
        guard type(of: a!) == type(of: b!) else { return false }
        return (x.isNaN && y.isNaN) || (x == y && x.sign == y.sign)
    case (let x as String, let y as String): return x == y
    case (let x as Data, let y as Data): return x == y
    case (let x as Timestamp, let y as Timestamp): return x == y
    case (let x as GeoPoint, let y as GeoPoint): return x == y
    case (let x as DocumentReference, let y as DocumentReference): return x.path == y.path
    default: return false
    }
}

func XCTAssertSame(_ actual: Any?, _ expected: Any?, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    if !deepEqual(actual, expected) {
        XCTFail("\(String(describing: actual)) is not \(String(describing: expected)) \(message)", file: file, line: line)
    }
}

/// Responsible for: what the tree API's test cases share: a fresh in-memory database and its
/// root for each test, a write waited for, a read.
class TreeTestCase: XCTestCase {
    var db: Firestore!
    var ref: DatabaseReference!

    override func setUp() {
        db = try! openDB()
        ref = db.database().reference()
    }

    override func tearDown() { db.terminate() }

    func awaitWrite(_ body: (@escaping @Sendable (Error?, DatabaseReference) -> Void) -> Void) -> Error? {
        let e = expectation(description: "write")
        let box = Box<Error?>()
        body { err, _ in box.set(err); e.fulfill() }
        wait(for: [e], timeout: 5)
        return box.value ?? nil
    }

    func read(_ q: DatabaseQuery) -> DataSnapshot? {
        let e = expectation(description: "read")
        let box = Box<DataSnapshot>()
        q.getData { err, s in XCTAssertNil(err); if let s { box.set(s) }; e.fulfill() }
        wait(for: [e], timeout: 5)
        return box.value
    }
}
