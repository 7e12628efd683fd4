import EmberModel

/// Responsible for: the client's queue of unacknowledged batches in SQLite, one row per batch
/// (`MutationCodec` bytes) keyed by batch id, so a batch is either wholly queued or not at all.
final class SQLiteMutationQueue: MutationQueue {
    unowned let persistence: SQLitePersistence
    private var highestId: Int64?

    init(persistence: SQLitePersistence) { self.persistence = persistence }

    /// Forgets the highest id seen (a rolled-back transaction may have added it).
    func forgetCachedState() { highestId = nil }

    func add(_ batch: MutationBatch) {
        persistence.access(()) { db in
            try db.run("INSERT OR REPLACE INTO mutations(batch_id, data) VALUES(?, ?)", [.int(batch.batchId), .blob(MutationCodec.encode(batch))])
            highestId = max(highestId ?? 0, batch.batchId)
            // The highest id ever used survives the batch's removal (ids are never reused).
            try db.run("INSERT INTO meta(key, value) VALUES('queue.lastBatchId', ?) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)", [.int(batch.batchId)])
        }
    }

    func remove(batchId: Int64) {
        persistence.access(()) { db in try db.run("DELETE FROM mutations WHERE batch_id = ?", [.int(batchId)]) }
    }

    func allBatches() -> [MutationBatch] {
        persistence.access([]) { db in
            let st = try db.statement("SELECT data FROM mutations ORDER BY batch_id")
            defer { st.reset() }
            var out: [MutationBatch] = []
            while try st.step() { out.append(try MutationCodec.decode(st.blob(0))) }
            return out
        }
    }

    var isEmpty: Bool {
        persistence.access(true) { db in try db.scalarInt("SELECT 1 FROM mutations LIMIT 1") == nil }
    }

    func nextBatchId() -> Int64 {
        persistence.access(1) { db in
            // Above every id stored, and every id the backend recorded as applied (a batch
            // committed without being queued leaves no other trace; a later queued batch must
            // not take its id, or the backend would take it for one applied already).
            let stored = max(try db.scalarInt("SELECT value FROM meta WHERE key = 'queue.lastBatchId'") ?? 0,
                             try db.scalarInt("SELECT MAX(batch_id) FROM mutations") ?? 0,
                             try db.scalarInt("SELECT value FROM meta WHERE key = 'backend.appliedBatch'") ?? 0)
            return max(stored, highestId ?? 0) + 1
        }
    }
}

/// Responsible for: the client's listen targets in SQLite.
final class SQLiteTargetCache: TargetCache {
    unowned let persistence: SQLitePersistence

    init(persistence: SQLitePersistence) { self.persistence = persistence }

    func get(_ targetId: String) -> TargetData? {
        persistence.access(nil) { db in
            let st = try db.statement("SELECT read_time, last_used, resume_token FROM targets WHERE target_id = ?")
            defer { st.reset() }
            st.bind(1, targetId)
            guard try st.step() else { return nil }
            return TargetData(targetId: targetId, readTime: st.int(0), lastUsed: st.int(1),
                              resumeToken: st.isNull(2) ? nil : st.blobArray(2))
        }
    }

    func put(_ t: TargetData) {
        persistence.access(()) { db in
            try db.run("INSERT OR REPLACE INTO targets(target_id, read_time, last_used, resume_token) VALUES(?, ?, ?, ?)",
                       [.text(t.targetId), .int(t.readTime), .int(persistence.sequence), t.resumeToken.map { .blob($0) } ?? .null])
        }
    }

    func remove(_ targetId: String) {
        persistence.access(()) { db in try db.run("DELETE FROM targets WHERE target_id = ?", [.text(targetId)]) }
    }

    func all() -> [TargetData] {
        persistence.access([]) { db in
            let st = try db.statement("SELECT target_id, read_time, last_used, resume_token FROM targets ORDER BY target_id")
            defer { st.reset() }
            var out: [TargetData] = []
            while try st.step() {
                out.append(TargetData(targetId: st.text(0), readTime: st.int(1), lastUsed: st.int(2),
                                      resumeToken: st.isNull(3) ? nil : st.blobArray(3)))
            }
            return out
        }
    }
}
