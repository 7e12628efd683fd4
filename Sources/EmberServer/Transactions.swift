import EmberModel
import EmberWire
import Foundation

/// Responsible for: the open transactions of the server (BeginTransaction to Commit/Rollback).
/// A read-write transaction records the update time of every document it reads (0: missing);
/// its commit is checked against them (ABORTED when one changed). Ids are 16 random bytes.
///
/// Every transaction belongs to the caller that began it (the admin, one user id, or the
/// anonymous callers together) and only that caller may use it; another gets "Invalid
/// transaction.", as for an id never issued. Each owner keeps at most `perOwner` open (the
/// anonymous callers together, who are everyone on a server without rules, `anonymousShare`),
/// its own oldest forgotten first (its commit then fails as an unknown transaction, and the
/// client retries), so no caller can push out another's. A transaction lives at most `lifetime`
/// (Firestore's 270 s): an expired one is refused and forgotten. All owners together keep at
/// most `capacity` open: when full, the expired ones are dropped, and if none was, a new
/// transaction is refused with RESOURCE_EXHAUSTED rather than taken from anyone. The last
/// `capacity` / 10 ended transactions (committed, failed or rolled back) are remembered: a
/// Rollback of one succeeds (clients roll back after a failed commit), any other use is refused
/// as closed, as the Firestore emulator does (forgetting one only turns a late Rollback into
/// "Invalid transaction."). Thread-safe.
final class Transactions: @unchecked Sendable { // every table under `lock`; `now` is set by tests before use
    struct Entry {
        let db: DatabaseName
        let readOnly: Bool
        let owner: Owner
        let begun: ContinuousClock.Instant
        var reads: [DocumentKey: Int64] = [:]
    }

    /// Who a transaction belongs to.
    enum Owner: Hashable {
        case admin
        case anonymous
        case user(uid: String, issuer: String?)

        init(_ caller: Caller) {
            switch caller {
            case .admin: self = .admin
            case .anonymous: self = .anonymous
            case .user(let t): self = .user(uid: t.auth.uid, issuer: t.issuer)
            }
        }
    }

    let perOwner: Int
    let anonymousShare: Int
    let capacity: Int
    let lifetime: Duration
    /// The clock (tests move it).
    var now: @Sendable () -> ContinuousClock.Instant = { .now }
    private let lock = NSLock()
    private var open: [Data: Entry] = [:]
    private var openOrder: [Owner: OldestFirst] = [:]
    private var closed: [Data: (db: DatabaseName, owner: Owner)] = [:]
    private var closedOrder = OldestFirst()

    init(perOwner: Int = 1_000, anonymousShare: Int = 10_000, capacity: Int = 100_000, lifetime: Duration = .seconds(270)) {
        self.perOwner = perOwner
        self.anonymousShare = anonymousShare
        self.capacity = capacity
        self.lifetime = lifetime
    }

    private func bound(_ owner: Owner) -> Int { owner == .anonymous ? anonymousShare : perOwner }

    func begin(_ caller: Caller, db: DatabaseName, readOnly: Bool) throws -> Data {
        let owner = Owner(caller)
        var id = Data(count: 16)
        for i in 0..<16 { id[i] = UInt8.random(in: 0...255) }
        lock.lock(); defer { lock.unlock() }
        let t = now()
        var mine = openOrder[owner] ?? OldestFirst()
        if mine.count >= bound(owner), let oldest = mine.removeOldest() {
            open[oldest] = nil
        } else if open.count >= capacity {
            dropExpired(at: t)
            mine = openOrder[owner] ?? OldestFirst()
            if open.count >= capacity {
                throw EmberError(.resourceExhausted, "Too many open transactions on this server: commit or roll back some, then retry.")
            }
        }
        open[id] = Entry(db: db, readOnly: readOnly, owner: owner, begun: t)
        mine.append(id)
        openOrder[owner] = mine
        return id
    }

    /// Forgets every open transaction past its lifetime (lock held; only when full).
    private func dropExpired(at t: ContinuousClock.Instant) {
        for (id, e) in open where t - e.begun > lifetime { forget(id, e) }
    }

    /// Removes an open transaction without remembering it as ended (lock held).
    private func forget(_ id: Data, _ e: Entry) {
        open[id] = nil
        openOrder[e.owner]?.remove(id)
        if openOrder[e.owner]?.count == 0 { openOrder[e.owner] = nil }
    }

    /// The open transaction `id` when `caller` may use it in `db` (lock held).
    private func entry(_ id: Data, _ caller: Caller, db: DatabaseName) throws -> Entry {
        if let e = open[id], e.db == db, e.owner == Owner(caller) {
            if now() - e.begun > lifetime {
                forget(id, e)
                throw EmberError.invalidArgument("The referenced transaction has expired or is no longer valid.")
            }
            return e
        }
        if let c = closed[id], c.db == db, c.owner == Owner(caller) { throw EmberError.invalidArgument("Transaction is invalid or closed.") }
        throw EmberError.invalidArgument("Invalid transaction.")
    }

    /// Notes the documents read inside a transaction.
    func noteReads(_ caller: Caller, _ id: Data, db: DatabaseName, documents: [Document]) throws {
        lock.lock(); defer { lock.unlock() }
        var e = try entry(id, caller, db: db)
        if !e.readOnly {
            for d in documents where e.reads[d.key] == nil { e.reads[d.key] = d.exists ? d.updateTime : 0 }
            open[id] = e
        }
    }

    /// Ends the transaction for its commit, returning what it read (for the commit's check).
    func finish(_ caller: Caller, _ id: Data, db: DatabaseName) throws -> Entry {
        lock.lock(); defer { lock.unlock() }
        let e = try entry(id, caller, db: db)
        close(id, e)
        return e
    }

    /// Rolls the transaction back; a transaction already ended rolls back as a no-op.
    func rollback(_ caller: Caller, _ id: Data, db: DatabaseName) throws {
        lock.lock(); defer { lock.unlock() }
        if let e = open[id], e.db == db, e.owner == Owner(caller) { close(id, e); return }
        guard let c = closed[id], c.db == db, c.owner == Owner(caller) else { throw EmberError.invalidArgument("Invalid transaction.") }
    }

    func check(_ caller: Caller, _ id: Data, db: DatabaseName) throws {
        lock.lock(); defer { lock.unlock() }
        _ = try entry(id, caller, db: db)
    }

    /// The number of open transactions (tests).
    var openCount: Int {
        lock.lock(); defer { lock.unlock() }
        return open.count
    }

    /// Moves an open transaction to the ended ones (lock held).
    private func close(_ id: Data, _ e: Entry) {
        forget(id, e)
        if closedOrder.count >= max(1, capacity / 10), let oldest = closedOrder.removeOldest() { closed[oldest] = nil }
        closedOrder.append(id)
        closed[id] = (e.db, e.owner)
    }
}

/// Responsible for: one owner's transaction ids, oldest first, with removal of any one of them
/// in O(1) amortized (a removed id is skipped when it reaches the front).
struct OldestFirst {
    private var ids: [Data] = []
    private var head = 0
    private var live = Set<Data>()

    var count: Int { live.count }

    mutating func append(_ id: Data) {
        ids.append(id)
        live.insert(id)
    }

    mutating func remove(_ id: Data) {
        live.remove(id)
        compactFront()
    }

    mutating func removeOldest() -> Data? {
        compactFront()
        guard head < ids.count else { return nil }
        let id = ids[head]
        head += 1
        live.remove(id)
        compactFront()
        return id
    }

    /// Skips removed ids at the front; rebuilds the array once most of it is removed ids (so it
    /// stays within twice the live count however long the oldest one lives).
    private mutating func compactFront() {
        while head < ids.count, !live.contains(ids[head]) { head += 1 }
        if ids.count > 32, ids.count > 2 * live.count {
            ids = ids[head...].filter { live.contains($0) }
            head = 0
        }
    }
}
