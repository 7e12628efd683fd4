"""The seed's multi-user list across processes (issue 29): Python, C and Swift processes share
one tree through `ember serve`'s tree port (`Client(database_host=...)`,
`settings.database_host`, `FirestoreSettings.databaseHost`; the realtime protocol).

Two Python writer processes, a C process, a Swift process and the test's own client append with
push ids while the test's client and the C and Swift processes observe child_added: each sees
every child once, and replaying its previous keys gives the server's list (push-id order).
Also: offline appends of a durable client sent once, the server killed under writing and
observing clients, presence when a client process dies, and transactions from two Python
processes, a C and a Swift one adding up on one counter. Each process is waited for with a
bound and killed by its pid when it overstays; the server is servers.py's (its own process
group, under a watchdog)."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
import uuid

import pytest

import ember
import servers

CLIENT_SECONDS = 120

WRITER = r"""
import json, sys, time, urllib.request
import ember
port, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
keys = [db.reference("posts").push({"from": name, "i": i}).key for i in range(count)]
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/posts.json?ns=demo-ember&shallow=true", timeout=10) as r:
        there = json.loads(r.read() or b"null") or {}
    if all(k in there for k in keys):
        break
    time.sleep(0.05)
else:
    sys.exit("the server did not get every push")
db.close()
print(json.dumps(keys))
"""


def database_port(srv):
    import re
    m = re.search(r"database_port=(\d+)", srv.log_tail(20000))
    assert m, srv.log_tail()
    return int(m.group(1))


@pytest.fixture
def tree_port(tmp_path):
    """The tree port of a fresh `ember serve --memory`, stopped after the test."""
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)
    srv = servers.start_ember(str(tmp_path), memory=True)
    try:
        yield database_port(srv)
    finally:
        srv.stop()


def test_processes_share_one_list(tree_port, c_tree_client, swift_client):
    check_processes_share_one_list([tree_port] * 5, c_tree_client, swift_client)


def check_processes_share_one_list(ports, c_tree_client, swift_client):
    """The test: the test's own client on ports[0], the two writer processes on ports[1] and
    ports[2], the C process on ports[3], the Swift one on ports[4] (one server, or instances
    sharing one tree)."""
    port = ports[0]
    db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
    seen, lock, done = [], threading.Lock(), threading.Event()
    total = 2 * 25 + 20 + 20 + 10

    def added(snap, prev):
        with lock:
            seen.append((snap.key, prev))
            if len(seen) >= total:
                done.set()

    posts = db.reference("posts")
    posts.observe(ember.EventType.CHILD_ADDED, added)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(ports[1 + k]), f"w{k}", "25"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(2)]
    # The C process pushes 20 and observes until it has seen every child.
    c = subprocess.Popen([c_tree_client, f"127.0.0.1:{ports[3]}", "posts", "20", str(total)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # So does the Swift process.
    sw = subprocess.Popen([swift_client, "tree-list", f"127.0.0.1:{ports[4]}", "posts", "20", str(total)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mine = [posts.push({"from": "test", "i": i}).key for i in range(10)]
    outputs = []
    for w in writers:
        try:
            out, err = w.communicate(timeout=CLIENT_SECONDS)
        except subprocess.TimeoutExpired:
            w.kill()
            w.communicate()
            pytest.fail("a writer process overstayed")
        assert w.returncode == 0, err
        outputs.append(json.loads(out))
    observed = {}
    pushed = []
    for name, p in (("C", c), ("Swift", sw)):
        try:
            out, err = p.communicate(timeout=CLIENT_SECONDS)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            pytest.fail(f"the {name} process overstayed")
        assert p.returncode == 0, f"{name}: {err}"
        lines = out.splitlines()
        pushed += [line.split()[1] for line in lines if line.startswith("pushed ")]
        observed[name] = [(line.split()[1], None if line.split()[2] == "-" else line.split()[2])
                          for line in lines if line.startswith("added ")]
    assert done.wait(30), f"saw {len(seen)} of {total}"
    with lock:
        keys = [k for k, _ in seen]
        assert sorted(keys) == sorted(mine + outputs[0] + outputs[1] + pushed)
        assert len(set(keys)) == total, "every child once"
        replay = []
        for k, prev in seen:
            replay.insert(replay.index(prev) + 1 if prev is not None else 0, k)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/posts.json?ns=demo-ember&shallow=true", timeout=10) as r:
        server = sorted(json.loads(r.read()))
    assert replay == server, "previous keys replay to the server's order"
    # The C and Swift observers too: every child once, previous keys replaying to the same list.
    for name, events in observed.items():
        assert len(events) == total and len({k for k, _ in events}) == total, name
        other = []
        for k, prev in events:
            other.insert(other.index(prev) + 1 if prev is not None else 0, k)
        assert other == server, name
    db.close()


@pytest.mark.parametrize("bad, text", [("", "settings.database_host is empty"), (5, "expected a str"),
                                       ("no-port", "database_host"), ("a\0b", "database_host")])
def test_a_bad_database_host_is_an_invalid_argument(bad, text):
    with pytest.raises(ember.InvalidArgumentError) as e:
        ember.Client(database_host=bad, ssl=False)
    assert text in str(e.value)


def test_a_durable_client_offline_appends_are_sent_once_after_a_restart(tmp_path):
    """A durable client appends while the server is down, closes, opens again (still down), and
    the server comes up: each append arrives exactly once."""
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)
    dport = servers.free_port()
    path = str(tmp_path / "client.ember")
    db = ember.Client(path=path, database_host=f"127.0.0.1:{dport}", ssl=False)
    keys = [db.reference("offline").push({"i": i}).key for i in range(5)]
    db.close()
    db = ember.Client(path=path, database_host=f"127.0.0.1:{dport}", ssl=False)
    keys.append(db.reference("offline").push({"i": 5}).key)
    srv = servers.start_ember(str(tmp_path), memory=True, extra_args=["--database-port", str(dport)])
    try:
        deadline = time.monotonic() + 30
        there = {}
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{dport}/offline.json?ns=demo-ember", timeout=10) as r:
                there = json.loads(r.read() or b"null") or {}
            if len(there) >= 6:
                break
            time.sleep(0.05)
        time.sleep(0.5)     # a duplicate would be a seventh child by now
        with urllib.request.urlopen(f"http://127.0.0.1:{dport}/offline.json?ns=demo-ember", timeout=10) as r:
            there = json.loads(r.read() or b"null") or {}
        assert sorted(there) == sorted(keys)
        assert [there[k]["i"] for k in keys] == list(range(6))
        db.close()
    finally:
        srv.stop()


KILLED_WRITER = r"""
import json, sys, time, urllib.request
import ember
port, count = sys.argv[1], int(sys.argv[2])
db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
ref = db.reference("survive")
keys = []
for i in range(count):
    k = ref.push({"i": i}).key
    keys.append(k)
    print("pushed", k, flush=True)
    time.sleep(0.005)
deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/survive.json?ns=demo-ember&shallow=true", timeout=5) as r:
            there = json.loads(r.read() or b"null") or {}
        if all(k in there for k in keys):
            break
    except OSError:
        pass
    time.sleep(0.05)
else:
    sys.exit("the server did not get every push")
db.close()
print("done", flush=True)
"""


def test_the_server_killed_under_writing_and_observing_clients_loses_nothing(tmp_path):
    """kill -9 of the server while a client pushes and another observes; restarted on the same
    store and port: every push is there exactly once and the observer saw each child once."""
    import signal
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)
    dport = servers.free_port()
    store = str(tmp_path / "server.ember")

    def start():
        return servers.start_ember(str(tmp_path), store_path=store, extra_args=["--database-port", str(dport)])
    srv = start()
    try:
        db = ember.Client(database_host=f"127.0.0.1:{dport}", ssl=False)
        seen, lock = [], threading.Lock()

        def added(snap, prev):
            with lock:
                seen.append(snap.key)
        db.reference("survive").observe(ember.EventType.CHILD_ADDED, added)
        writer = subprocess.Popen([sys.executable, "-u", "-c", KILLED_WRITER, str(dport), "150"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pushed = []
        for line in writer.stdout:
            if line.startswith("pushed "):
                pushed.append(line.split()[1])
                if len(pushed) == 50:
                    os.killpg(srv.pgid, signal.SIGKILL)
                    srv.stop()
                    time.sleep(0.3)
                    srv = start()
            elif line.strip() == "done":
                break
        writer.wait(CLIENT_SECONDS)
        assert writer.returncode == 0, writer.stderr.read()
        assert len(pushed) == 150
        with urllib.request.urlopen(f"http://127.0.0.1:{dport}/survive.json?ns=demo-ember", timeout=10) as r:
            there = json.loads(r.read())
        assert sorted(there) == sorted(pushed)
        assert sorted(v["i"] for v in there.values()) == list(range(150))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(set(seen)) < 150:
            time.sleep(0.05)
        with lock:
            assert sorted(set(seen)) == sorted(pushed)
            assert len(seen) == 150, "each child once"
        db.close()
    finally:
        srv.stop()


PRESENT = r"""
import sys, time
import ember
port = sys.argv[1]
db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
me = db.reference("presence/p1")
me.on_disconnect().remove()
db.reference("presence/cancelled").on_disconnect().set(True)
db.reference("presence/cancelled").on_disconnect().cancel()
db.reference("seen").on_disconnect().update({"p1": "gone"})
me.set(True)
print("online", flush=True)
time.sleep(120)
"""


def test_presence_on_disconnect_runs_when_a_client_process_dies(tree_port):
    """A client process registers onDisconnect writes (remove, an update, a cancelled set), marks
    itself present, and is killed with SIGKILL: the server applies them; another client sees it."""
    port = tree_port
    db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
    events, lock = [], threading.Lock()

    def record(kind):
        def cb(snap, prev):
            with lock:
                events.append((kind, snap.key))
        return cb
    presence = db.reference("presence")
    presence.observe(ember.EventType.CHILD_ADDED, record("added"))
    presence.observe(ember.EventType.CHILD_REMOVED, record("removed"))
    p = subprocess.Popen([sys.executable, "-u", "-c", PRESENT, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "online"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and ("added", "p1") not in events:
            time.sleep(0.02)
        assert ("added", "p1") in events
        p.kill()
        p.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and ("removed", "p1") not in events:
            time.sleep(0.02)
        with lock:
            assert events == [("added", "p1"), ("removed", "p1")], events
        assert db.reference("seen/p1").get() == "gone"
        assert db.reference("presence/cancelled").get() is None
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
    db.close()


COUNTER = r"""
import sys
import ember
port, n = sys.argv[1], int(sys.argv[2])
db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
ref = db.reference("counter")
for _ in range(n):
    ref.transaction(lambda current: (current or 0) + 1)
db.close()
print("done")
"""


def test_transactions_from_four_processes_add_up(tree_port, c_tree_client, swift_client):
    check_transactions_add_up([tree_port] * 4, c_tree_client, swift_client)


def check_transactions_add_up(ports, c_tree_client, swift_client):
    """Two Python processes (on ports[0] and ports[1]), a C one (ports[2]) and a Swift one
    (ports[3]) each add 1 to one counter 250 times with transactions (compare-and-set by hash at
    the server, retried on contention): 1,000 in all."""
    port = ports[0]
    procs = [("Python 1", [sys.executable, "-c", COUNTER, str(ports[0]), "250"]),
             ("Python 2", [sys.executable, "-c", COUNTER, str(ports[1]), "250"]),
             ("C", [c_tree_client, "--counter", f"127.0.0.1:{ports[2]}", "counter", "250"]),
             ("Swift", [swift_client, "tree-counter", f"127.0.0.1:{ports[3]}", "counter", "250"])]
    running = [(name, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
               for name, cmd in procs]
    for name, p in running:
        try:
            out, err = p.communicate(timeout=CLIENT_SECONDS)
        except subprocess.TimeoutExpired:
            for _, q in running:
                q.kill()
            p.communicate()
            pytest.fail(f"the {name} process overstayed")
        assert p.returncode == 0 and out.strip() == "done", f"{name}: {err}"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/counter.json?ns=demo-ember", timeout=10) as r:
        assert json.loads(r.read()) == 1000
