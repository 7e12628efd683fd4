"""Faults of several `ember serve` instances on one PostgreSQL (docs/scale-out.md): PostgreSQL
stopped under the instances (calls fail with UNAVAILABLE and nothing is acknowledged; health turns
NOT_SERVING; everything resumes when it returns, listeners included), also while clients keep
writing; an instance killed with SIGKILL while clients write through every instance and listen
(nothing acknowledged is lost); a full disk on the database side (RESOURCE_EXHAUSTED).
Each test gets a PostgreSQL cluster of its own (Tests/scripts/with_postgres.py's Cluster), which
it stops and starts."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from google.api_core import exceptions as gexc

import servers
from tree.rtdb_http import call, database_port

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from with_postgres import Cluster  # noqa: E402

WAIT = 30


@pytest.fixture
def pg():
    with Cluster() as cluster:
        yield cluster


def start(tmp_path, pg, name):
    d = tmp_path / name
    d.mkdir()
    return servers.start_ember(str(d), memory=True, extra_args=("--postgres", pg.url))


def wait_for(predicate, what, seconds=WAIT):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def healthz(srv):
    return call(database_port(srv), "GET", "/healthz").status


class Recorder:
    """A collection listener's snapshots: {id: n} after each."""

    def __init__(self, col):
        self.states = []
        self.lock = threading.Lock()
        self.watch = col.on_snapshot(self.on_snapshot)

    def on_snapshot(self, docs, changes, read_time):
        with self.lock:
            self.states.append({d.id: d.to_dict()["n"] for d in docs})

    def last(self):
        with self.lock:
            return self.states[-1] if self.states else None


def test_postgresql_stopped_and_started_again_under_two_instances(tmp_path, pg):
    a, b = start(tmp_path, pg, "a"), start(tmp_path, pg, "b")
    try:
        ca, cb = servers.client(a.host), servers.client(b.host)
        col = "faults-" + os.urandom(3).hex()
        rec = Recorder(cb.collection(col))
        ca.collection(col).document("x").set({"n": 1})
        wait_for(lambda: rec.last() == {"x": 1}, "the first write on B")

        pg.stop()   # immediate shutdown, as a crash
        wait_for(lambda: healthz(a) == 503 and healthz(b) == 503, "NOT_SERVING on both instances")
        with pytest.raises(gexc.ServiceUnavailable):
            ca.collection(col).document("lost").set({"n": 9}, retry=None, timeout=WAIT)
        with pytest.raises(gexc.ServiceUnavailable):
            cb.collection(col).document("x").get(retry=None, timeout=WAIT)
        def metric(name):
            text = call(database_port(a), "GET", "/metrics").body.decode()
            return next(float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " "))
        assert metric("ember_serving") == 0
        wait_for(lambda: metric("ember_log_read_failures_total") > 0, "a failed read of the log in the metrics")

        pg.start()
        wait_for(lambda: healthz(a) == 200 and healthz(b) == 200, "SERVING again")
        # The client retries what failed; the listener opened before the outage resumes.
        ca.collection(col).document("x").set({"n": 2})
        wait_for(lambda: rec.last() == {"x": 2}, "the write after the restart on B's listener")
        assert not cb.collection(col).document("lost").get().exists
        assert ca.collection(col).document("x").get().to_dict() == {"n": 2}
        rec.watch.unsubscribe()
    finally:
        a.stop()
        b.stop()


def test_an_instance_killed_with_sigkill_loses_nothing_acknowledged(tmp_path, pg):
    insts = [start(tmp_path, pg, n) for n in ("a", "b", "c")]
    try:
        col = "kill-" + os.urandom(3).hex()
        watcher = servers.client(insts[2].host)
        rec = Recorder(watcher.collection(col))
        wait_for(lambda: rec.last() == {}, "the listener's first snapshot")
        acked = {0: [], 1: []}
        stop = threading.Event()

        def write(i):
            db = servers.client(insts[i].host)
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    db.collection(col).document(f"w{i}-{n}").set({"n": n}, retry=None, timeout=10)
                    acked[i].append(f"w{i}-{n}")
                except gexc.GoogleAPICallError:
                    if i == 0:
                        return   # its instance is gone
                    raise

        threads = [threading.Thread(target=write, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        wait_for(lambda: len(acked[0]) >= 20 and len(acked[1]) >= 20, "writes through both instances")
        os.killpg(insts[0].pgid, signal.SIGKILL)
        killed_at = len(acked[1])
        wait_for(lambda: len(acked[1]) >= killed_at + 20, "writes through B after A was killed")
        stop.set()
        for t in threads:
            t.join(WAIT)
        expected = set(acked[0]) | set(acked[1])
        wait_for(lambda: expected <= set(rec.last() or {}), "every acknowledged write on C's listener")
        on_c = {d.id for d in watcher.collection(col).stream()}
        assert expected <= on_c, sorted(expected - on_c)[:10]
        # A listener on another instance sees the same documents.
        other = servers.client(insts[1].host)
        assert {d.id for d in other.collection(col).stream()} == on_c
        rec.watch.unsubscribe()
    finally:
        for s in insts:
            s.stop()


def test_postgresql_restarted_under_load_loses_nothing_acknowledged(tmp_path, pg):
    """Writers on two instances keep writing while PostgreSQL stops and starts again: every
    failure is UNAVAILABLE (or a deadline), every acknowledged write is there afterwards, and a
    listener opened before the outage ends on the same documents."""
    a, b = start(tmp_path, pg, "a"), start(tmp_path, pg, "b")
    try:
        col = "restart-" + os.urandom(3).hex()
        rec = Recorder(servers.client(b.host).collection(col))
        wait_for(lambda: rec.last() == {}, "the listener's first snapshot")
        acked, failures, stop = [], [], threading.Event()

        def write(srv, tag):
            db = servers.client(srv.host)
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    db.collection(col).document(f"{tag}{n}").set({"n": n}, retry=None, timeout=15)
                    acked.append(f"{tag}{n}")
                except (gexc.ServiceUnavailable, gexc.DeadlineExceeded) as e:
                    failures.append(e)
                    time.sleep(0.05)

        threads = [threading.Thread(target=write, args=(s, t)) for s, t in ((a, "a"), (b, "b"))]
        for t in threads:
            t.start()
        wait_for(lambda: len(acked) >= 20, "writes before the restart")
        pg.stop()
        wait_for(lambda: len(failures) >= 2, "writes refused while PostgreSQL is down")
        pg.start()
        before = len(acked)
        wait_for(lambda: len(acked) >= before + 20, "writes acknowledged after the restart")
        stop.set()
        for t in threads:
            t.join(WAIT)
        on_a = {d.id for d in servers.client(a.host).collection(col).stream()}
        assert set(acked) <= on_a, sorted(set(acked) - on_a)[:10]
        try:
            wait_for(lambda: set(rec.last() or {}) == on_a, "the listener on B converging")
        except AssertionError:
            missing = sorted(on_a - set(rec.last() or {}))
            extra = sorted(set(rec.last() or {}) - on_a)
            metrics = {s.host: [line for line in call(database_port(s), "GET", "/metrics").body.decode().splitlines()
                                if line.startswith(("ember_log", "ember_commits", "ember_logged", "ember_serving", "ember_pool"))]
                       for s in (a, b)}
            raise AssertionError(f"B's listener: missing {missing[:10]}, extra {extra[:10]}; {metrics}")
        rec.watch.unsubscribe()
    finally:
        a.stop()
        b.stop()


def test_a_full_disk_on_the_database_side_is_an_error_and_nothing_is_acknowledged(tmp_path, pg):
    """PostgreSQL's disk_full (53100), raised by a trigger on the log as a full disk would raise
    it inside the commit: the write fails with RESOURCE_EXHAUSTED, nothing of it is stored or
    seen, and writes succeed again once the disk has room."""
    a = start(tmp_path, pg, "a")
    try:
        db = servers.client(a.host)
        col = "full-" + os.urandom(3).hex()
        db.collection(col).document("before").set({"n": 1})
        psql = os.path.join(pg.bindir, "psql")

        def sql(statement):
            subprocess.run([psql, pg.url, "-q", "-c", statement], check=True, timeout=60, stdout=subprocess.DEVNULL)
        sql("CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$")
        sql("CREATE TRIGGER full_disk BEFORE INSERT ON ember_changes FOR EACH ROW EXECUTE FUNCTION full_disk()")
        with pytest.raises(gexc.ResourceExhausted) as e:
            db.collection(col).document("lost").set({"n": 2}, retry=None, timeout=WAIT)
        assert "disk is full" in str(e.value), e.value
        sql("DROP TRIGGER full_disk ON ember_changes")
        db.collection(col).document("after").set({"n": 3})
        assert sorted(d.id for d in db.collection(col).stream()) == ["after", "before"]
    finally:
        a.stop()
