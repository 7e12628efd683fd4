"""The tree on `ember serve` through firebase_admin.db, unchanged (issue 28, the REST part).

Responsible for: every call of firebase_admin's `db` module that does not need streaming or
rules, against `ember serve --database-port`: get (plain, shallow, etag), get_if_changed, set,
update (multi-path, deletes), push, delete, set_if_unchanged, transaction, the query forms, the
SDK's exception types and texts for refusals; namespaces kept apart; server values; and the
durable store keeping what was acknowledged across a restart. One server per module, a fresh
namespace per test.
"""
import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import servers  # noqa: E402

firebase_admin = pytest.importorskip("firebase_admin", reason="firebase-admin is installed by the Makefile's server venv")
from firebase_admin import db, exceptions  # noqa: E402


def database_port(srv):
    import re
    m = re.search(r"database_port=(\d+)", srv.log_tail(20000))
    assert m, srv.log_tail()
    return int(m.group(1))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    srv = servers.start_ember(str(tmp_path_factory.mktemp("tree")))
    yield srv
    srv.stop()


@pytest.fixture
def root(server):
    """A reference to the root of a fresh namespace (its own app)."""
    ns = "t" + uuid.uuid4().hex[:12]
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{database_port(server)}"
    app = firebase_admin.initialize_app(options={"databaseURL": f"https://{ns}.firebaseio.com", "projectId": "demo-ember"}, name=ns)
    try:
        yield db.reference("/", app=app)
    finally:
        firebase_admin.delete_app(app)


def test_set_get_update_push_delete(root):
    ref = root.child("lists")
    ref.set({"a": 1, "b": {"c": "x"}, "l": [1, 2, 3]})
    assert ref.get() == {"a": 1, "b": {"c": "x"}, "l": [1, 2, 3]}
    ref.update({"b/c": "y", "a": None, "d": True})
    assert ref.get() == {"b": {"c": "y"}, "l": [1, 2, 3], "d": True}
    key = ref.child("messages").push({"t": "hi"}).key
    assert key.startswith("-") and len(key) == 20
    assert ref.child("messages").child(key).get() == {"t": "hi"}
    ref.child("d").delete()
    assert ref.child("d").get() is None
    assert ref.get(shallow=True) == {"b": True, "l": True, "messages": True}


def test_namespaces_are_separate_trees(server, root):
    root.child("x").set(1)
    other = "o" + uuid.uuid4().hex[:12]
    app = firebase_admin.initialize_app(options={"databaseURL": f"https://{other}.firebaseio.com"}, name=other)
    try:
        assert db.reference("x", app=app).get() is None
    finally:
        firebase_admin.delete_app(app)


def test_etags_conditional_writes_and_transactions(root):
    ref = root.child("counter")
    value, etag = ref.get(etag=True)
    assert value is None and etag == "null_etag"
    ref.set(1)
    changed, value, new_etag = ref.get_if_changed(etag)
    assert changed and value == 1 and new_etag != etag
    assert ref.get_if_changed(new_etag) == (False, None, None)
    ok, value, _ = ref.set_if_unchanged("not-the-etag", 5)
    assert (ok, value) == (False, 1)
    ok, value, _ = ref.set_if_unchanged(new_etag, 2)
    assert (ok, value) == (True, 2)
    assert ref.transaction(lambda v: (v or 0) + 40) == 42
    assert ref.get() == 42


def test_known_node_hashes_as_etags(root):
    # The Firebase SDKs' hashes (firebase-js-sdk; vectors from urish/firebase-server's tests).
    cases = [(True, "E5z61QM0lN/U2WsOnusszCTkR8M="), (False, "aSSNoqcS4oQwJ2xxH20rvpp3zP0="),
             (500, "Ajg9bohDwTVmqR14o1bVJnneryM="), ("Hello World", "B8HWXc7zXMjrsnJxPRj7wrNGqt4="),
             ({"foo": "bar"}, "XnLeTeWQmzTHImTbSMDLg/qMrKY="), ({"10": 1, "9": 1, "a": 1}, "evCfROj4O5BuYeBWBzyApN5V/lQ=")]
    for value, expected in cases:
        root.child("h").set(value)
        assert root.child("h").get(etag=True)[1] == expected, value


def test_queries(root):
    ref = root.child("scores")
    ref.set({"alice": {"s": 30}, "bob": {"s": 10}, "carol": {"s": 20}, "dave": {"s": 40}})
    assert list(ref.order_by_key().limit_to_first(2).get().keys()) == ["alice", "bob"]
    assert list(ref.order_by_key().limit_to_last(1).get().keys()) == ["dave"]
    assert list(ref.order_by_child("s").start_at(15).end_at(35).get().keys()) == ["carol", "alice"]
    assert list(ref.order_by_child("s").equal_to(10).get().keys()) == ["bob"]
    assert list(ref.order_by_key().start_at("b").end_at("c\uf8ff").get().keys()) == ["bob", "carol"]
    root.child("v").set({"x": 3, "y": 1, "z": 2})
    assert list(root.child("v").order_by_value().limit_to_first(2).get().keys()) == ["y", "z"]


def test_server_values(root):
    import time
    ref = root.child("sv")
    before = int(time.time() * 1000)
    ref.set({"at": {".sv": "timestamp"}, "n": {".sv": {"increment": 2}}})
    ref.update({"n": {".sv": {"increment": 3}}})
    v = ref.get()
    assert v["n"] == 5 and before - 5000 <= v["at"] <= int(time.time() * 1000) + 5000


def test_refusals_raise_the_sdks_exceptions(root):
    with pytest.raises(exceptions.InvalidArgumentError, match="keys must not contain"):
        root.child("bad").set({"a.b": 1})
    with pytest.raises(exceptions.InvalidArgumentError, match="ancestor"):
        root.child("bad").update({"a": 1, "a/b": 2})
    assert root.child("bad").get() is None


def test_query_without_order_by_is_refused_in_the_databases_words(server):
    import json
    import urllib.error
    import urllib.request
    url = f"http://127.0.0.1:{database_port(server)}/x.json?ns=q{uuid.uuid4().hex[:8]}&limitToFirst=1"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(url, timeout=10)
    assert e.value.code == 400
    assert json.loads(e.value.read()) == {"error": "orderBy must be defined when other query parameters are defined"}


def test_acknowledged_writes_survive_a_restart(tmp_path):
    srv = servers.start_ember(str(tmp_path))
    ns = "k" + uuid.uuid4().hex[:8]
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{database_port(srv)}"
    app = firebase_admin.initialize_app(options={"databaseURL": f"https://{ns}.firebaseio.com"}, name=ns)
    try:
        db.reference("kept", app=app).set({"v": 1})
        key = db.reference("kept/list", app=app).push("x").key
    finally:
        firebase_admin.delete_app(app)
        srv.stop()
    srv = servers.start_ember(str(tmp_path))
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{database_port(srv)}"
    app = firebase_admin.initialize_app(options={"databaseURL": f"https://{ns}.firebaseio.com"}, name=ns + "2")
    try:
        assert db.reference("kept", app=app).get() == {"v": 1, "list": {key: "x"}}
    finally:
        firebase_admin.delete_app(app)
        srv.stop()


def collect(ref, expected, action, seconds=10):
    """Listens to `ref`, runs `action` once the first event arrived, and returns the
    (event_type, path, data) of the first `expected` events."""
    import queue
    import time
    events = queue.Queue()
    registration = ref.listen(lambda e: events.put((e.event_type, e.path, e.data)))
    got = []
    try:
        deadline = time.monotonic() + seconds
        while len(got) < expected and time.monotonic() < deadline:
            try:
                got.append(events.get(timeout=max(0.05, deadline - time.monotonic())))
            except queue.Empty:
                break
            if len(got) == 1:
                action()
    finally:
        registration.close()
    return got


def test_listen_streams_writes_at_below_and_above_in_order(root):
    ref = root.child("l")
    ref.set({"a": 1})

    def writes():
        ref.child("b").set(2)
        ref.update({"c": 3, "a": None})
        root.update({"l/d": 4, "other": 1})
        root.set({"l": {"x": 1}})
        ref.delete()
    got = collect(ref, 6, writes)
    assert got == [
        ("put", "/", {"a": 1}),
        ("put", "/b", 2),
        ("patch", "/", {"a": None, "c": 3}),
        ("put", "/d", 4),
        ("put", "/", {"x": 1}),
        ("put", "/", None),
    ]


def test_a_streamed_query_sends_its_result_again_when_it_changes(server, root):
    import json
    import socket
    ref = root.child("s")
    ref.set({"a": 3, "b": 1, "c": 2})
    ns = root._client.params["ns"]
    port = database_port(server)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall((f'GET /s.json?ns={ns}&orderBy=%22$value%22&limitToFirst=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                      'Accept: text/event-stream\r\n\r\n').encode())
        text = b""
        while text.count(b"event: put") < 1:
            text += sock.recv(65536)
        ref.child("d").set(0)           # enters the window
        ref.child("a").set(5)           # outside the window: no event
        ref.child("b").set(7)           # leaves it
        while text.count(b"event: put") < 3:
            text += sock.recv(65536)
    finally:
        sock.close()
    puts = [json.loads(line[len(b"data: "):]) for line in text.split(b"\n") if line.startswith(b"data: ")]
    assert [p["data"] for p in puts[:3]] == [{"b": 1, "c": 2}, {"d": 0, "b": 1}, {"d": 0, "c": 2}]
