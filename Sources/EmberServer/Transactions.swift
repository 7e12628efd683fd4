import EmberModel
import Foundation

/// Responsible for: the open transactions of the server (BeginTransaction to Commit/Rollback).
/// A read-write transaction records the update time of every document it reads (0: missing);
/// its commit is checked against them (ABORTED when one changed). Ids are 16 random bytes; at
/// most `capacity` transactions stay open, the oldest forgotten first (its commit then fails as
/// an unknown transaction, and the client retries). Ended transactions (committed, failed or
/// rolled back) are remembered, as many again: a Rollback of one succeeds (clients roll back
/// after a failed commit), any other use is refused as closed, as the Firestore emulator does.
final class Transactions: @unchecked Sendable {
    struct Entry {
        let db: DatabaseName
        let readOnly: Bool
        var reads: [DocumentKey: Int64] = [:]
    }
    private let lock = NSLock()
    private var open: [Data: Entry] = [:]
    private var order: [Data] = []
    private var closed: [Data: DatabaseName] = [:]
    private var closedOrder: [Data] = []
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

    /// The error for a transaction id that is not open (lock held).
    private func notOpen(_ id: Data, db: DatabaseName) -> EmberError {
        if closed[id] == db { return EmberError.invalidArgument("Transaction is invalid or closed.") }
        return EmberError.invalidArgument("Invalid transaction.")
    }

    /// Notes the documents read inside a transaction.
    func noteReads(_ id: Data, db: DatabaseName, documents: [Document]) throws {
        lock.lock(); defer { lock.unlock() }
        guard var e = open[id], e.db == db else { throw notOpen(id, db: db) }
        if !e.readOnly {
            for d in documents where e.reads[d.key] == nil { e.reads[d.key] = d.exists ? d.updateTime : 0 }
            open[id] = e
        }
    }

    /// Ends the transaction for its commit, returning what it read (for the commit's check).
    func finish(_ id: Data, db: DatabaseName) throws -> Entry {
        lock.lock(); defer { lock.unlock() }
        guard let e = open[id], e.db == db else { throw notOpen(id, db: db) }
        close(id, db: db)
        return e
    }

    /// Rolls the transaction back; a transaction already ended rolls back as a no-op.
    func rollback(_ id: Data, db: DatabaseName) throws {
        lock.lock(); defer { lock.unlock() }
        if let e = open[id], e.db == db { close(id, db: db); return }
        guard closed[id] == db else { throw EmberError.invalidArgument("Invalid transaction.") }
    }

    func check(_ id: Data, db: DatabaseName) throws {
        lock.lock(); defer { lock.unlock() }
        guard let e = open[id], e.db == db else { throw notOpen(id, db: db) }
    }

    /// Moves an open transaction to the closed ones (lock held).
    private func close(_ id: Data, db: DatabaseName) {
        open[id] = nil
        if let i = order.firstIndex(of: id) { order.remove(at: i) }
        closed[id] = db
        closedOrder.append(id)
        if closedOrder.count > capacity {
            let drop = closedOrder.count - capacity
            for old in closedOrder.prefix(drop) { closed[old] = nil }
            closedOrder.removeFirst(drop)
        }
    }
}
