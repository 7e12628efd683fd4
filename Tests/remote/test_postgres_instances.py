"""Ember's clients across several `ember serve` instances on one PostgreSQL (docs/scale-out.md):
Swift, C and Python client processes, each on another instance, see each other's writes as on one
server, and a listener on every instance converges on the same documents; a
client given several hosts moves on to the next when its instance is killed with SIGKILL, and
its writes are acknowledged there; the seed's multi-user list and tree transactions work with
their processes spread over the instances. The PostgreSQL is a cluster of this module's own
(Tests/scripts/with_postgres.py's Cluster)."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import ember
import servers
from test_mixed import finish, unique
from test_tree_lists import check_processes_share_one_list, check_transactions_add_up, database_port

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from with_postgres import Cluster  # noqa: E402

WAIT = 60


@pytest.fixture(scope="module")
def pg():
    with Cluster() as cluster:
        yield cluster


@pytest.fixture
def instances(pg, tmp_path):
    started = []
    try:
        for name in ("a", "b", "c"):
            (tmp_path / name).mkdir()
            started.append(servers.start_ember(str(tmp_path / name), memory=True, extra_args=("--postgres", pg.url)))
        yield started
    finally:
        for s in started:
            s.stop()


def wait_for(predicate, what, seconds=WAIT):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_swift_c_and_python_clients_on_three_instances_see_each_others_writes(instances, swift_client, c_client, python_client):
    collection = unique("pg-mixed")
    names = "swift,c,python"
    hosts = {"swift": instances[0].host, "c": instances[1].host, "python": instances[2].host}
    commands = {
        "swift": [swift_client, hosts["swift"], collection, "swift", names],
        "c": [c_client, hosts["c"], collection, "c", names],
        "python": [*python_client, hosts["python"], collection, "python", names],
    }
    # A Python listener of its own on every instance.
    states = []
    watches = []
    dbs = []
    for s in instances:
        db = ember.Client(host=s.host, ssl=False)
        dbs.append(db)
        state = {}
        states.append(state)
        watches.append(db.collection(collection).on_snapshot(
            lambda snap, changes, t, state=state: state.update(docs={d.id: d.get("round") for d in snap})))
    procs = {n: subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n, cmd in commands.items()}
    results = {n: finish(p) for n, p in procs.items()}
    for n, (status, out, err) in results.items():
        assert status == 0, f"{n} client: status {status}\n{out}\n{err}"
        lines = out.splitlines()
        assert lines[0] == "pending true,false,true,false", f"{n} client: {out}"
        assert sorted(lines[1:4]) == sorted(f"saw {m} 2" for m in names.split(",")), f"{n} client: {out}"
    final = {"swift": 2, "c": 2, "python": 2}
    for i, state in enumerate(states):
        wait_for(lambda: state.get("docs") == final, f"instance {i}'s listener")
    for w, db in zip(watches, dbs):
        w.unsubscribe()
        db.close()


def test_a_client_given_several_hosts_moves_on_when_its_instance_is_killed(instances):
    a, b = instances[0], instances[1]
    collection = unique("pg-failover")
    lock = threading.Lock()
    seen = {}

    def on_snapshot(snapshot, changes, read_time):
        with lock:
            for d in snapshot:
                seen[d.id] = (d.get("n"), d.metadata.has_pending_writes)

    def acknowledged(doc_id, n):
        with lock:
            return seen.get(doc_id) == (n, False)

    with ember.Client(host=f"{a.host},{b.host}", ssl=False) as db:
        watch = db.collection(collection).on_snapshot(on_snapshot, include_metadata_changes=True)
        db.collection(collection).document("before").set({"n": 1})
        wait_for(lambda: acknowledged("before", 1), "the first write's acknowledgement (through A)")
        os.killpg(a.pgid, signal.SIGKILL)
        db.collection(collection).document("after").set({"n": 2})
        wait_for(lambda: acknowledged("after", 2), "the write after A was killed, acknowledged through B")
        # Another instance's listener saw it too: nothing was lost and it went through the log.
        with ember.Client(host=instances[2].host, ssl=False) as other:
            docs = {d.id: d.to_dict() for d in other.collection(collection).get()}
        assert docs == {"before": {"n": 1}, "after": {"n": 2}}
        watch.unsubscribe()


def test_the_seeds_list_across_instances(instances, c_tree_client, swift_client):
    """The seed's multi-user list with its clients spread over three instances (the realtime
    protocol): every observer sees every child once, replaying to the same list."""
    p = [database_port(s) for s in instances]
    check_processes_share_one_list([p[0], p[1], p[2], p[1], p[2]], c_tree_client, swift_client)


def test_tree_transactions_across_instances_add_up(instances, c_tree_client, swift_client):
    p = [database_port(s) for s in instances]
    check_transactions_add_up([p[0], p[1], p[2], p[0]], c_tree_client, swift_client)
