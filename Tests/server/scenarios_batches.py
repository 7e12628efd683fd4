"""Scenarios: several writes at once (WriteBatch, BulkWriter's BatchWrite) and transactions."""
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.rpc import code_pb2

from normalize import at_commit, data, err, scenario

NOW = firestore.SERVER_TIMESTAMP


@scenario
def batch_writes(db, p):
    c = db.collection(p + "batch")
    c.document("acct").set({"bal": 10})
    c.document("old").set({"v": 1})
    out = {}
    b = db.batch()
    b.set(c.document("x"), {"v": 1})
    b.update(c.document("acct"), {"bal": firestore.Increment(5), "t": NOW})
    b.delete(c.document("old"))
    b.create(c.document("y"), {"v": 2})
    res = b.commit()
    times = [r.update_time for r in res]
    # Every write of one commit has the commit's time (a delete's included, if it reports one).
    out["results"] = {"count": len(res), "without a time": [i for i, t in enumerate(times) if t is None],
                      "distinct times": len({t for t in times if t is not None})}
    acct = c.document("acct").get()
    out["transform at the commit"] = at_commit(acct.get("t"), times[1])
    out["after"] = [data(c.document(i).get()) for i in ("x", "y", "old")] + [acct.get("bal")]
    bad = db.batch()
    bad.set(c.document("z"), {"v": 1})
    bad.update(c.document("acct"), {"bal": 0})
    bad.create(c.document("x"), {"v": 9})
    out["failing batch"] = err(bad.commit)
    out["atomic"] = [data(c.document("z").get()), c.document("acct").get().get("bal")]
    same = db.batch()
    same.set(c.document("s"), {"a": 1, "n": 1})
    same.update(c.document("s"), {"b": 2, "n": firestore.Increment(1)})
    same.set(c.document("s"), {"c": 3}, merge=True)
    out["one document three times"] = [err(same.commit), data(c.document("s").get())]
    out["empty batch"] = [err(db.batch().commit)]
    return out


@scenario
def bulk_writer(db, p):
    # BatchWrite: each write applied on its own, each with its status. The default error handler
    # retries 15 times with backoff; this one never retries.
    c = db.collection(p + "bulk")
    c.document("exists").set({"v": 0})
    c.document("gone").set({"v": 0})
    failures = []
    bw = db.bulk_writer()
    bw.on_write_error(lambda e, w: failures.append([e.operation.reference.id, code_pb2.Code.Name(e.code)]) and False)
    bw.create(c.document("exists"), {"v": 1})
    bw.set(c.document("new"), {"v": 1})
    bw.update(c.document("missing"), {"v": 1})
    bw.delete(c.document("gone"))
    bw.update(c.document("exists"), {"w": firestore.Increment(2)})
    bw.close()
    return {"failures": sorted(failures),
            "docs": [data(c.document(i).get()) for i in ("exists", "new", "missing", "gone")]}


@scenario
def transactions(db, p):
    c = db.collection(p + "txn")
    acct, log = c.document("acct"), c.document("log")
    acct.set({"bal": 100})
    out = {}
    attempts = []

    @firestore.transactional
    def transfer(t, n):
        attempts.append(1)
        snap = acct.get(transaction=t)
        t.update(acct, {"bal": snap.get("bal") - n})
        t.set(log, {"last": n, "at": NOW})
        return snap.get("bal")

    out["read then write"] = [transfer(db.transaction(), 30), len(attempts), data(acct.get())]
    lg = log.get()
    out["commit time"] = {"at at the commit": at_commit(lg.get("at"), lg.update_time),
                          "one update time": lg.update_time == acct.get().update_time}

    @firestore.transactional
    def query_and_batch_get(t):
        found = [data(s) for s in t.get(c.where(filter=FieldFilter("bal", ">=", 0)))]
        got = sorted((data(s) for s in t.get_all([acct, c.document("missing")])), key=lambda x: x[0])
        t.set(c.document("count"), {"n": len(found)})
        return [found, got]

    out["query and get_all inside"] = [query_and_batch_get(db.transaction()), data(c.document("count").get())]

    @firestore.transactional
    def read_only(t):
        return [data(acct.get(transaction=t)), data(c.document("missing").get(transaction=t))]

    out["read-only"] = read_only(db.transaction(read_only=True))

    @firestore.transactional
    def write_in_read_only(t):
        t.set(c.document("ro"), {"v": 1})

    out["write in read-only"] = [err(lambda: write_in_read_only(db.transaction(read_only=True))), data(c.document("ro").get())]

    @firestore.transactional
    def raises(t):
        acct.get(transaction=t)
        t.set(c.document("never"), {"v": 1})
        raise ValueError("the function failed")

    out["function raises: nothing written"] = [err(lambda: raises(db.transaction())), data(c.document("never").get())]

    @firestore.transactional
    def fails_at_commit(t):
        attempts.append(1)
        acct.get(transaction=t)
        t.set(c.document("partial"), {"v": 1})
        t.create(acct, {"bal": 0})

    del attempts[:]
    out["commit fails (create existing)"] = [err(lambda: fails_at_commit(db.transaction())), len(attempts),
                                            data(c.document("partial").get()), data(acct.get())]

    @firestore.transactional
    def update_missing(t):
        t.update(c.document("nobody"), {"v": 1})

    out["update missing"] = err(lambda: update_missing(db.transaction()))

    @firestore.transactional
    def read_after_write(t):
        t.set(c.document("w"), {"v": 1})
        c.document("w").get(transaction=t)

    out["read after write"] = err(lambda: read_after_write(db.transaction()))

    @firestore.transactional
    def write_only(t):
        t.set(c.document("w1"), {"v": 1})
        t.delete(log)

    write_only(db.transaction())
    out["write only"] = [data(c.document("w1").get()), data(log.get())]
    # Not compared: contention. The emulator locks what a transaction read (a write from outside
    # waits about 2 s, then fails with ABORTED, and the transaction commits); ember serve is
    # optimistic (the outside write succeeds, the transaction's commit is ABORTED and retried).
    return out
