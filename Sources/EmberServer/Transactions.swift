import EmberModel
import Foundation

/// Responsible for: the open transactions of the server (BeginTransaction to Commit/Rollback).
/// A read-write transaction records the update time of every document it reads (0: missing);
/// its commit is checked against them (ABORTED when one changed). Ids are 16 random bytes; at
/// most `capacity` transactions stay open, the oldest forgotten first (its commit then fails as
/// an unknown transaction, and the client retries).
final class Transactions: @unchecked Sendable {
    struct Entry {
        let db: DatabaseName
        let readOnly: Bool
        var reads: [DocumentKey: Int64] = [:]
    }
    private let lock = NSLock()
    private var open: [Data: Entry] = [:]
    private var order: [Data] = []
    let capacity = 10_000

    func begin(db: DatabaseName, readOnly: Bool) -> Data {
        var id = Data(count: 16)
        for i in 0..<16 { id[i] = UInt8.random(in: 0...255) }
        lock.lock(); defer { lock.unlock() }
        open[id] = Entry(db: db, readOnly: readOnly)
        order.append(id)
        if order.count > capacity {
            let drop = order.count - capacity
            for old in order.prefix(drop) { open[old] = nil }
            order.removeFirst(drop)
        }
        return id
    }

    private func invalid() -> EmberError {
        EmberError.invalidArgument("Transaction is invalid or has expired. Please retry the transaction.")
    }

    /// Notes the documents read inside a transaction.
    func noteReads(_ id: Data, db: DatabaseName, documents: [Document]) throws {
        lock.lock(); defer { lock.unlock() }
        guard var e = open[id], e.db == db else { throw invalid() }
        if !e.readOnly {
            for d in documents where e.reads[d.key] == nil { e.reads[d.key] = d.exists ? d.updateTime : 0 }
            open[id] = e
        }
    }

    /// Ends the transaction, returning what it read (for the commit's check).
    func finish(_ id: Data, db: DatabaseName) throws -> Entry {
        lock.lock(); defer { lock.unlock() }
        guard let e = open.removeValue(forKey: id), e.db == db else { throw invalid() }
        order.removeAll { $0 == id }
        return e
    }

    func check(_ id: Data, db: DatabaseName) throws {
        lock.lock(); defer { lock.unlock() }
        guard let e = open[id], e.db == db else { throw invalid() }
    }
}
