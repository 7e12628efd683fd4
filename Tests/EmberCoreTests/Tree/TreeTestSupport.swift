import EmberConcurrency
import XCTest
import EmberModel
import EmberCore
import Foundation

/// Shared helpers of the tree engine tests (not a test of its own).
func tp(_ s: String) -> TreePath { try! TreePath(parsing: s) }

/// A tree value from a JSON-like Swift literal: Int, Double, Bool, String, nested dictionaries, nil.
func tv(_ any: Any?) -> TreeValue {
    switch any {
    case nil: return .null
    case let b as Bool: return .bool(b)
    case let i as Int: return .int(Int64(i))
    case let d as Double: return .double(d)
    case let s as String: return .string(s)
    case let d as [String: Any]: 
        var o: [String: TreeValue] = [:]
        for (k, v) in d { o[k] = tv(v) }
        let obj = TreeObject(o)
        return obj.isEmpty ? .null : .object(obj)
    case let a as [Any]:
        var o: [String: TreeValue] = [:]
        for (i, v) in a.enumerated() { o["\(i)"] = tv(v) }
        return .object(TreeObject(o))
    default: fatalError("unsupported \(String(describing: any))")
    }
}

func setOp(_ p: String, _ v: Any?) -> TreeWriteOp { TreeWriteOp(path: tp(p), value: tv(v)) }

/// Records events as compact strings: "added a prev=nil", "value {..}".
final class TreeLog: @unchecked Sendable {
    private let lock = Lock()
    private var items: [String] = []
    private let sem = Semaphore()

    func record(_ e: TreeListenEvent) {
        let s: String
        switch e {
        case .event(let type, let snap, let prev):
            let name = ["added", "removed", "changed", "moved", "value"][type.rawValue]
            if type == .value {
                s = "value \(snap.children.isEmpty ? snap.value.description : snap.children.map { $0.key! }.joined(separator: ","))"
            } else {
                s = "\(name) \(snap.key ?? "") prev=\(prev ?? "nil")"
            }
        case .cancelled(let err): s = "cancelled \(err.code.name)"
        }
        lock.withLock { items.append(s) }
        sem.signal()
    }

    @discardableResult
    func wait(for n: Int, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        while lock.withLock({ items.count }) < n {
            if !sem.wait(seconds: 5) { XCTFail("timed out waiting for \(n) events, got \(all)", file: file, line: line); break }
        }
        return all
    }

    var all: [String] { lock.withLock { items } }

    /// Returns the events so far and forgets them.
    func take() -> [String] { lock.withLock { defer { items.removeAll() }; return items } }
}

extension EmberClient {
    /// Observes `type`s at `path` into `log` (each type its own observer, in the order given).
    @discardableResult
    func watch(_ path: String, _ query: TreeQuery = TreeQuery(), _ types: [TreeEventType], into log: TreeLog) throws -> [ListenerToken] {
        try types.map { t in try treeObserve(tp(path), query: query, type: t) { log.record($0) }.token }
    }

    /// Waits until every write is acknowledged and every callback posted so far has run.
    func settle() throws {
        let sem = Semaphore()
        try waitForPendingWrites { _ in sem.signal() }
        _ = sem.wait(seconds: 5)
        for _ in 0..<200 where treePendingWriteCount > 0 { _ = Semaphore().wait(seconds: 0.005) }
        backend.flush()
        _ = try treeGet(.root, timeout: 5)     // one round trip through the worker and backend
        events.drain()
    }
}

let allChildEvents: [TreeEventType] = [.childAdded, .childRemoved, .childChanged, .childMoved]
