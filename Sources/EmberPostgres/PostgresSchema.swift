import PostgresNIO

/// Responsible for: the tables and the commit function of Ember on PostgreSQL, by schema version
/// (docs/scale-out.md), and the migration that brings a database to this version: one
/// transaction under a lock on `ember_meta`, so instances starting together migrate once; a
/// database at a newer version is refused.
///
///     try await PostgresSchema.migrate(client)      // at start, before any other statement
enum PostgresSchema {
    /// The version this build creates and understands.
    static let version = 2

    /// Each version's statements, applied in order from the database's version + 1.
    static let steps: [Int: [PostgresQuery]] = [1: [
        """
        CREATE TABLE ember_log_head (
          db_id serial PRIMARY KEY,
          name text COLLATE "C" NOT NULL UNIQUE,
          epoch bigint NOT NULL,
          seq bigint NOT NULL DEFAULT 0,
          commit_time bigint NOT NULL DEFAULT 0,
          floor_seq bigint NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE ember_documents (
          db_id integer NOT NULL,
          parent text COLLATE "C" NOT NULL,
          id text COLLATE "C" NOT NULL,
          collection_id text COLLATE "C" NOT NULL,
          fields bytea NOT NULL,
          create_time bigint NOT NULL,
          update_time bigint NOT NULL,
          update_seq bigint NOT NULL,
          PRIMARY KEY (db_id, parent, id))
        """,
        "CREATE INDEX ember_documents_group ON ember_documents (db_id, collection_id, parent, id)",
        """
        CREATE TABLE ember_changes (
          db_id integer NOT NULL,
          seq bigint NOT NULL,
          idx integer NOT NULL,
          parent text COLLATE "C" NOT NULL,
          id text COLLATE "C" NOT NULL,
          fields bytea,
          create_time bigint NOT NULL,
          commit_time bigint NOT NULL,
          PRIMARY KEY (db_id, seq, idx))
        """,
        // One commit: the position first (its row lock serializes the database's committers until
        // this transaction ends), at the committer's time when it is after the last commit's
        // (p_time 0: the server's clock; a time not after it raises EM003: the committer
        // retries later), then each write's expectation (-2 none, -1 exists, 0 absent, T: its
        // update_time is T; a mismatch rolls everything back), then the documents and the log
        // (kind 0 puts, 1 deletes, 2 only checks: a document a transaction read).
        """
        CREATE FUNCTION ember_commit(p_db integer, p_time bigint, p_parents text[], p_ids text[], p_collection_ids text[],
                                     p_fields bytea[], p_kinds smallint[], p_expect bigint[])
        RETURNS TABLE (out_seq bigint, out_commit_time bigint) LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
          v_seq bigint;
          v_time bigint;
          v_last bigint;
          v_current bigint;
          v_created bigint;
          i integer;
        BEGIN
          -- FOR UPDATE returns the row as the previous committer left it (READ COMMITTED re-reads
          -- it once the lock is granted).
          SELECT h.seq, h.commit_time INTO v_seq, v_last FROM ember_log_head h WHERE h.db_id = p_db FOR UPDATE;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'no database %', p_db USING ERRCODE = 'EM002';
          END IF;
          v_seq := v_seq + 1;
          IF p_time > 0 THEN
            IF p_time <= v_last THEN
              RAISE EXCEPTION 'time % is not after the last commit''s %', p_time, v_last USING ERRCODE = 'EM003';
            END IF;
            v_time := p_time;
          ELSE
            v_time := greatest((extract(epoch FROM clock_timestamp()) * 1000000)::bigint, v_last + 1);
          END IF;
          UPDATE ember_log_head h SET seq = v_seq, commit_time = v_time WHERE h.db_id = p_db;
          FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
            IF p_expect[i] <> -2 THEN
              SELECT d.update_time INTO v_current FROM ember_documents d
               WHERE d.db_id = p_db AND d.parent = p_parents[i] AND d.id = p_ids[i];
              IF (p_expect[i] = -1 AND NOT FOUND) OR (p_expect[i] = 0 AND FOUND)
                 OR (p_expect[i] > 0 AND (NOT FOUND OR v_current <> p_expect[i])) THEN
                RAISE EXCEPTION 'stale: %/%', p_parents[i], p_ids[i] USING ERRCODE = 'EM001';
              END IF;
            END IF;
            CONTINUE WHEN p_kinds[i] = 2;
            IF p_kinds[i] = 1 THEN
              DELETE FROM ember_documents d WHERE d.db_id = p_db AND d.parent = p_parents[i] AND d.id = p_ids[i];
              v_created := 0;
            ELSE
              INSERT INTO ember_documents AS d (db_id, parent, id, collection_id, fields, create_time, update_time, update_seq)
              VALUES (p_db, p_parents[i], p_ids[i], p_collection_ids[i], p_fields[i], v_time, v_time, v_seq)
              ON CONFLICT (db_id, parent, id) DO UPDATE
                SET fields = excluded.fields, update_time = excluded.update_time, update_seq = excluded.update_seq
              RETURNING d.create_time INTO v_created;
            END IF;
            INSERT INTO ember_changes (db_id, seq, idx, parent, id, fields, create_time, commit_time)
            VALUES (p_db, v_seq, i, p_parents[i], p_ids[i], CASE WHEN p_kinds[i] = 1 THEN NULL ELSE p_fields[i] END, v_created, v_time);
          END LOOP;
          RETURN QUERY SELECT v_seq, v_time;
        END
        $$
        """,
    ], 2: [
        // Retention: `floor_time` is the commit time of the newest commit trimmed from the log
        // (a resume token older than it gets a reset, not the changes since).
        "ALTER TABLE ember_log_head ADD COLUMN floor_time bigint NOT NULL DEFAULT 0",
        "CREATE INDEX ember_changes_time ON ember_changes (db_id, commit_time)",
        // Trims the commits before p_before (whole commits: their rows share one time) and moves
        // the floor; returns the floor's position and time.
        """
        CREATE FUNCTION ember_trim(p_db integer, p_before bigint)
        RETURNS TABLE (out_floor_seq bigint, out_floor_time bigint) LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
          v_seq bigint;
          v_time bigint;
        BEGIN
          SELECT max(c.seq), max(c.commit_time) INTO v_seq, v_time FROM ember_changes c
           WHERE c.db_id = p_db AND c.commit_time < p_before;
          IF v_seq IS NOT NULL THEN
            DELETE FROM ember_changes c WHERE c.db_id = p_db AND c.seq <= v_seq;
            UPDATE ember_log_head h SET floor_seq = greatest(h.floor_seq, v_seq), floor_time = greatest(h.floor_time, v_time)
             WHERE h.db_id = p_db;
          END IF;
          RETURN QUERY SELECT h.floor_seq, h.floor_time FROM ember_log_head h WHERE h.db_id = p_db;
        END
        $$
        """,
        // One tree write (the tree's log is one `ember_log_head` row, its writes `ember_changes`
        // rows: `parent` the path's segments joined by '/', `id` empty, `fields` the value in
        // Ember's MessagePack, NULL for null, given as empty bytes). p_expect >= 0: computed from the tree at that
        // position; any write logged since raises EM001 (a compare-and-set computes again).
        """
        CREATE FUNCTION ember_tree_commit(p_db integer, p_expect bigint, p_paths text[], p_values bytea[])
        RETURNS TABLE (out_seq bigint, out_commit_time bigint) LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
          v_seq bigint;
          v_last bigint;
          v_time bigint;
          i integer;
        BEGIN
          SELECT h.seq, h.commit_time INTO v_seq, v_last FROM ember_log_head h WHERE h.db_id = p_db FOR UPDATE;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'no log %', p_db USING ERRCODE = 'EM002';
          END IF;
          IF p_expect >= 0 AND v_seq <> p_expect THEN
            RAISE EXCEPTION 'the tree changed since position %', p_expect USING ERRCODE = 'EM001';
          END IF;
          v_seq := v_seq + 1;
          v_time := greatest((extract(epoch FROM clock_timestamp()) * 1000000)::bigint, v_last + 1);
          UPDATE ember_log_head h SET seq = v_seq, commit_time = v_time WHERE h.db_id = p_db;
          FOR i IN 1 .. coalesce(array_length(p_paths, 1), 0) LOOP
            INSERT INTO ember_changes (db_id, seq, idx, parent, id, fields, create_time, commit_time)
            VALUES (p_db, v_seq, i, p_paths[i], '', nullif(p_values[i], ''::bytea), 0, v_time);
          END LOOP;
          RETURN QUERY SELECT v_seq, v_time;
        END
        $$
        """,
    ]]

    /// Brings the database to `version`. Throws failedPrecondition for a newer schema.
    static func migrate(_ client: PostgresClient) async throws {
        // Instances starting together may race to create the table: one wins, the others retry.
        for attempt in 0..<5 {
            do {
                try await client.query("CREATE TABLE IF NOT EXISTS ember_meta (key text PRIMARY KEY, value text NOT NULL)")
                break
            } catch where attempt < 4 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await client.withConnection { c in
            try await c.query("BEGIN", logger: PostgresStore.quiet)
            do {
                try await c.query("LOCK TABLE ember_meta IN EXCLUSIVE MODE", logger: PostgresStore.quiet)
                var current = 0
                for try await (value) in try await c.query("SELECT value FROM ember_meta WHERE key = 'schema_version'",
                                                           logger: PostgresStore.quiet).decode(String.self) {
                    current = Int(value) ?? Int.max
                }
                if current > version {
                    throw PostgresStoreError.newerSchema(current)
                }
                if current < version {
                    for v in (current + 1)...version {
                        for statement in steps[v] ?? [] { try await c.query(statement, logger: PostgresStore.quiet) }
                    }
                }
                try await c.query("""
                    INSERT INTO ember_meta (key, value) VALUES ('schema_version', \(String(version)))
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, logger: PostgresStore.quiet)
                try await c.query("COMMIT", logger: PostgresStore.quiet)
            } catch {
                _ = try? await c.query("ROLLBACK", logger: PostgresStore.quiet)
                throw error
            }
        }
    }
}
