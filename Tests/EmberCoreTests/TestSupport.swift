import XCTest
import EmberModel
import EmberCore

/// Collects listener events on the event thread and lets a test wait for them (bounded).
final class EventLog: @unchecked Sendable {
    private let lock = Lock()
    private var events: [ListenEvent] = []
    private let sem = Semaphore()

    func append(_ e: ListenEvent) {
        lock.withLock { events.append(e) }
        sem.signal()
    }

    /// Waits until at least `n` events arrived (at most 5 s each) and returns all of them.
    @discardableResult
    func wait(for n: Int, file: StaticString = #filePath, line: UInt = #line) -> [ListenEvent] {
        while lock.withLock({ events.count }) < n {
            if !sem.wait(seconds: 5) { XCTFail("timed out waiting for \(n) events, got \(lock.withLock { events.count })", file: file, line: line); break }
        }
        return lock.withLock { events }
    }

    var all: [ListenEvent] { lock.withLock { events } }

    var snapshots: [ViewSnapshot] {
        all.compactMap { if case .snapshot(let s) = $0 { return s }; return nil }
    }
}

func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
func fields(_ d: [String: Value]) -> MapValue { MapValue(d) }
func setM(_ k: String, _ d: [String: Value]) -> Mutation { Mutation(key: key(k), kind: .set(MapValue(d))) }
func collection(_ s: String) -> Query { Query(collection: try! ResourcePath(parsing: s)) }
func fp(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
func summary(_ s: ViewSnapshot) -> [String] {
    s.changes.map { c in
        let k = ["added", "removed", "modified", "metadata"][c.kind.rawValue]
        return "\(k) \(c.document.key.id) \(c.oldIndex) \(c.newIndex)"
    }
}
