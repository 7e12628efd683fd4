"""Several `ember serve` instances on one PostgreSQL (docs/scale-out.md), through
google-cloud-firestore: a write on one instance reaches a listener on another, the instances
agree on every document, and transactions incrementing one counter through different instances
lose no update. The PostgreSQL is the test run's own (Tests/scripts/with_postgres.py sets
EMBER_TEST_POSTGRES_URL; make test-server runs under it); without it the tests fail, never skip."""
import os
import random
import threading
import time

import pytest
from google.api_core.exceptions import NotFound
from google.cloud import firestore

import servers


def start_instances(tmp_path, n):
    url = os.environ.get("EMBER_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("EMBER_TEST_POSTGRES_URL is not set: run under Tests/scripts/with_postgres.py (make test-server does)",
                    pytrace=False)
    started = []
    try:
        for i in range(n):
            (tmp_path / f"i{i}").mkdir()
            started.append(servers.start_ember(str(tmp_path / f"i{i}"), memory=True,
                                               extra_args=("--postgres", url, "--no-database")))
    except BaseException:
        for s in started:
            s.stop()
        raise
    return started


def running(tmp_path, n):
    started = start_instances(tmp_path, n)
    try:
        yield started
    finally:
        for s in started:
            s.stop()


@pytest.fixture
def instances(tmp_path):
    yield from running(tmp_path, 2)


@pytest.fixture
def three(tmp_path):
    yield from running(tmp_path, 3)


def test_the_start_line_names_the_store(instances):
    for s in instances:
        assert "store=\"postgresql postgresql://ember@127.0.0.1" in s.log_tail() or \
               "store=postgresql" in s.log_tail().replace('"', ""), s.log_tail()


def test_a_write_on_one_instance_reaches_a_listener_on_the_other(instances):
    a, b = (servers.client(s.host) for s in instances)
    col = "pg-" + os.urandom(4).hex()
    seen = []
    arrived = threading.Event()

    def on_snapshot(docs, changes, read_time):
        seen.append(sorted((d.id, d.to_dict()["n"]) for d in docs))
        if any(d.id == "x" and d.to_dict()["n"] == 2 for d in docs):
            arrived.set()

    watch = b.collection(col).on_snapshot(on_snapshot)
    try:
        a.collection(col).document("x").set({"n": 1})
        a.collection(col).document("x").set({"n": 2})
        assert arrived.wait(30), seen
        assert seen[-1] == [("x", 2)]
        assert [("x", 1)] in seen or seen[-1] == [("x", 2)]
    finally:
        watch.unsubscribe()
    for db in (a, b):
        assert db.collection(col).document("x").get().to_dict() == {"n": 2}


def test_transactions_through_two_instances_lose_no_update(instances):
    dbs = [servers.client(s.host) for s in instances]
    ref_path = "pg-counter-" + os.urandom(4).hex() + "/c"
    dbs[0].document(ref_path).set({"n": 0})
    per_worker, workers = 10, 4
    errors = []

    def work(db):
        ref = db.document(ref_path)

        @firestore.transactional
        def increment(tx):
            n = ref.get(transaction=tx).to_dict()["n"]
            tx.update(ref, {"n": n + 1})

        try:
            for _ in range(per_worker):
                increment(db.transaction(max_attempts=50))
        except Exception as e:   # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(dbs[i % 2],)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for db in dbs:
        assert db.document(ref_path).get().to_dict() == {"n": per_worker * workers}


def test_a_random_workload_through_three_instances_replays_on_every_listener(three):
    """Writers on every instance set, update and delete a few documents at random; a listener on
    every instance records each snapshot. Every acknowledgement names its commit's time, which
    gives the history of each document; each snapshot must be exactly the history's state at its
    read time (no commit skipped, none out of order, none seen twice), and every listener ends
    on the final state."""
    col = "pg-replay-" + os.urandom(4).hex()
    dbs = [servers.client(s.host) for s in three]
    lock = threading.Lock()
    snapshots = [[] for _ in three]
    watches = []
    for i, db in enumerate(dbs):
        def on_snapshot(docs, changes, read_time, i=i):
            with lock:
                snapshots[i].append((read_time, {d.id: d.to_dict() for d in docs}))
        watches.append(db.collection(col).on_snapshot(on_snapshot))
    history = {}     # doc id -> [(commit time, value or None)]
    errors = []

    def write(w):
        rnd = random.Random(w)
        db = dbs[w % 3]
        for i in range(40):
            doc = f"d{rnd.randrange(6)}"
            ref = db.collection(col).document(doc)
            value = {"w": w, "i": i}
            try:
                op = rnd.random()
                if op < 0.6:
                    t = ref.set(value).update_time
                elif op < 0.8:
                    try:
                        t = ref.update({"i": i, "w": w}).update_time
                    except NotFound:
                        continue
                else:
                    t, value = ref.delete(), None
            except Exception as e:   # reported below
                errors.append(e)
                return
            with lock:
                history.setdefault(doc, []).append((t, value))

    writers = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for t in writers:
        t.start()
    for t in writers:
        t.join(120)
    assert not errors, errors

    def state_at(read_time):
        out = {}
        for doc, entries in history.items():
            before = [e for e in entries if e[0] <= read_time]
            if before:
                value = max(before, key=lambda e: e[0])[1]
                if value is not None:
                    out[doc] = value
        return out

    final = state_at(max(e[0] for entries in history.values() for e in entries))
    deadline = time.monotonic() + 30
    while True:
        with lock:
            done = all(s and s[-1][1] == final for s in snapshots)
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for w in watches:
        w.unsubscribe()
    for i, snaps in enumerate(snapshots):
        assert snaps and snaps[-1][1] == final, f"instance {i} ends on {snaps[-1][1] if snaps else None}, not {final}"
        assert len(snaps) > 5, f"instance {i}: only {len(snaps)} snapshots"
        times = [t for t, _ in snaps]
        assert times == sorted(times) and len(set(times)) == len(times), f"instance {i}: read times out of order"
        for read_time, docs in snaps:
            assert docs == state_at(read_time), f"instance {i} at {read_time}: {docs} != {state_at(read_time)}"
    for db in dbs:
        assert {d.id: d.to_dict() for d in db.collection(col).stream()} == final
