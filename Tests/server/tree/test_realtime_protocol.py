"""The Realtime Database realtime protocol (v5) on `ember serve`, played frame by frame (issue 29).

Responsible for: the server side of the protocol as firebase-js-sdk speaks it: the hello, pings,
the client's keep-alive "0", stats, gauth (the admin's `owner`), auth with a bad token; listens
(the data pushed before the `ok`), overwrites and merges pushed in order, unlisten; tagged
queries; resumed listens (`h` matching: no data; `ch`: an `rm` of the changed ranges); gets; puts
and merges; compare-and-set hashes (`datastale`); onDisconnect writes run when a peer drops, or
stops reading with 16 MB unread; long messages split into counted frames both ways; rules: a
refused listen, a listen revoked with `c` when the rules change, a refused write.
"""
import base64
import hashlib
import json
import os
import struct
import sys
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import servers  # noqa: E402
from tree_http import database_port, request  # noqa: E402

pytest.importorskip("websocket", reason="websocket-client is installed by the Makefile's server venv")
from realtime_driver import Realtime  # noqa: E402


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    srv = servers.start_ember(str(tmp_path_factory.mktemp("realtime")))
    yield database_port(srv)
    srv.stop()


@pytest.fixture
def ns():
    return "w" + uuid.uuid4().hex[:10]


@pytest.fixture
def client(port, ns):
    c = Realtime(port, ns)
    yield c
    c.close()


def number_hash(x):
    hexed = struct.pack(">d", float(x)).hex()
    return base64.b64encode(hashlib.sha1(f"number:{hexed}".encode()).digest()).decode()


def test_hello_ping_keepalive_and_stats(client):
    assert client.hello["v"] == "5" and isinstance(client.hello["ts"], int) and client.hello["s"]
    client.send({"t": "c", "d": {"t": "p", "d": {}}})
    assert client.receive() == {"t": "c", "d": {"t": "o", "d": None}}
    client.send_raw("0")                      # the client's keep-alive: ignored
    assert client.request("s", {"c": {"sdk.js.12-3-0": 1}}) == ("ok", {})


def test_auth(client):
    assert client.request("gauth", {"cred": "owner"})[0] == "ok"
    status, data = client.request("auth", {"cred": "not-a-token"})
    assert status == "invalid_token" and "Invalid ID token" in data
    assert client.request("unauth", {}) == ("ok", {})


def test_listen_data_first_then_changes_in_order(client):
    r = client.next_r
    client.send({"t": "d", "d": {"r": r, "a": "q", "b": {"p": "/list", "h": ""}}})
    client.next_r += 1
    first = client.receive()
    assert first == {"t": "d", "d": {"a": "d", "b": {"p": "/list", "d": None}}}   # before the ok
    assert client.receive()["d"] == {"r": r, "b": {"s": "ok", "d": {}}}
    assert client.request("p", {"p": "/list/a", "d": 1}) == ("ok", {})
    assert client.push() == {"a": "d", "b": {"p": "/list/a", "d": 1}}
    assert client.request("m", {"p": "/list", "d": {"a": 2, "b": {"x": True}}}) == ("ok", {})
    assert client.push() == {"a": "m", "b": {"p": "/list", "d": {"a": 2, "b": {"x": True}}}}
    for i in range(50):
        client.request("p", {"p": f"/list/n{i:02d}", "d": i})
    assert [client.push()["b"]["d"] for _ in range(50)] == list(range(50))
    assert client.request("g", {"p": "/list/b", "q": {}}) == ("ok", {"x": True})
    assert client.request("n", {"p": "/list"})[0] == "ok"
    client.request("p", {"p": "/list/z", "d": 0})
    assert client.no_push()


def test_tagged_query(client):
    client.request("p", {"p": "/q", "d": {"a": 1, "b": 2, "c": 3}})
    status, _ = client.request("q", {"p": "/q", "h": "", "q": {"i": ".key", "l": 2, "vf": "r"}, "t": 7})
    assert status == "ok"
    assert client.push() == {"a": "d", "b": {"p": "/q", "d": {"b": 2, "c": 3}, "t": 7}}
    client.request("p", {"p": "/q/d", "d": 4})
    assert client.push() == {"a": "d", "b": {"p": "/q", "d": {"c": 3, "d": 4}, "t": 7}}
    assert client.request("g", {"p": "/q", "q": {"i": ".value", "sp": 2, "ep": 3}}) == ("ok", {"b": 2, "c": 3})
    assert client.request("n", {"p": "/q", "q": {"i": ".key", "l": 2, "vf": "r"}, "t": 7})[0] == "ok"


def test_compare_and_set(client):
    client.request("p", {"p": "/c", "d": 5})
    assert client.request("p", {"p": "/c", "d": 6, "h": number_hash(4)})[0] == "datastale"
    assert client.request("g", {"p": "/c", "q": {}}) == ("ok", 5)
    assert client.request("p", {"p": "/c", "d": 6, "h": number_hash(5)}) == ("ok", {})
    # An empty location's hash is "".
    assert client.request("p", {"p": "/new", "d": 1, "h": ""}) == ("ok", {})
    assert client.request("p", {"p": "/new", "d": 2, "h": ""})[0] == "datastale"


def test_a_resumed_listen_sends_nothing_or_the_changed_ranges(client):
    """A listen with the hash of the client's copy (`h`) gets no data when it matches; with a
    compound hash (`ch`: range end keys and range hashes, Ember's TreeRanges) only the ranges
    whose hash differs, as an `rm` push of {s, e, m} before the ok."""
    client.request("p", {"p": "/r", "d": 7})
    assert client.request("q", {"p": "/r", "h": number_hash(7)}) == ("ok", {})
    assert client.no_push(0.2), "an unchanged value is not sent"
    assert client.request("q", {"p": "/r", "h": number_hash(8)}) == ("ok", {})
    assert client.push() == {"a": "d", "b": {"p": "/r", "d": 7}}, "a stale copy gets the value"
    client.request("n", {"p": "/r"})

    def obj_hash(d):     # the SDKs' hash of an object of numbers, keys in key order
        text = "".join(f":{k}:{number_hash(v)}" for k, v in sorted(d.items()))
        return base64.b64encode(hashlib.sha1(text.encode()).digest()).decode()

    client.request("p", {"p": "/big", "d": {"a": 1, "b": 2, "c": 3, "d": 4}})
    mine = {"a": 1, "b": 2, "c": 30}               # c changed, d added since
    body = {"p": "/big", "h": obj_hash(mine),
            "ch": {"ps": ["a", "b"], "hs": [obj_hash({"a": 1}), obj_hash({"b": 2}), obj_hash({"c": 30})]}}
    assert client.request("q", body) == ("ok", {})
    assert client.push() == {"a": "rm", "b": {"p": "/big", "d": [{"s": "b", "e": None, "m": {"c": 3, "d": 4}}]}}


def test_on_disconnect_runs_when_the_peer_drops(port, ns):
    a, b = Realtime(port, ns), Realtime(port, ns)
    try:
        a.request("p", {"p": "/presence/u1", "d": True})
        assert a.request("o", {"p": "/presence/u1", "d": None}) == ("ok", {})
        assert a.request("om", {"p": "/last", "d": {"u1": {".sv": "timestamp"}}}) == ("ok", {})
        assert a.request("o", {"p": "/cancelled", "d": 1}) == ("ok", {})
        assert a.request("oc", {"p": "/cancelled", "d": None}) == ("ok", {})
        b.request("q", {"p": "/presence", "h": ""})
        assert b.push() == {"a": "d", "b": {"p": "/presence", "d": {"u1": True}}}
        a.drop()
        assert b.push(timeout=15) == {"a": "d", "b": {"p": "/presence/u1", "d": None}}
        status, last = b.request("g", {"p": "/last/u1", "q": {}})
        assert status == "ok" and isinstance(last, int) and last > 1_600_000_000_000
        assert b.request("g", {"p": "/cancelled", "q": {}}) == ("ok", None)
    finally:
        b.close()


def test_a_peer_that_stops_reading_is_disconnected(port, ns):
    """A client that stops reading while its listen's pushes pile up is disconnected once more
    than 16 MB wait to be written (as a REST stream is), long before the 90 s dead-peer timeout:
    its onDisconnect write runs."""
    slow = Realtime(port, ns)
    try:
        assert slow.request("o", {"p": "/slow/gone", "d": True}) == ("ok", {})
        assert slow.request("q", {"p": "/big", "h": ""})[0] == "ok"
        value = "x" * (1 << 20)
        deadline = time.monotonic() + 60
        gone = None
        for i in range(80):            # 80 MB of pushes at most; the client reads none of them
            status, _, _ = request(port, "PUT", f"/big/k{i}.json?ns={ns}", json.dumps(value))
            assert status == 200
            _, _, gone = request(port, "GET", f"/slow/gone.json?ns={ns}")
            if gone:
                break
        while not gone and time.monotonic() < deadline:
            time.sleep(0.1)
            _, _, gone = request(port, "GET", f"/slow/gone.json?ns={ns}")
        assert gone is True, "the slow peer was not disconnected"
    finally:
        try:
            slow.drop()
        except OSError:
            pass


def test_long_messages_are_framed_both_ways(client):
    big = {"k%03d" % i: "x" * 200 for i in range(400)}          # ~ 90 KB of JSON
    assert client.request("p", {"p": "/big", "d": big}) == ("ok", {})
    before = len(client.frames_received)
    assert client.request("g", {"p": "/big", "q": {}}) == ("ok", big)
    frames = client.frames_received[before:]
    assert frames[0].isdigit() and int(frames[0]) == len(frames) - 1 > 1
    assert all(len(f) <= 16384 for f in frames)


def test_rules_refuse_and_revoke(port, ns):
    rules = '{"rules": {"open": {".read": true, ".write": true}, "closed": {".read": false}}}'
    assert request(port, "PUT", f"/.settings/rules.json?ns={ns}", rules, token="owner")[0] == 200
    c = Realtime(port, ns)
    try:
        assert c.request("q", {"p": "/closed", "h": ""})[0] == "permission_denied"
        assert c.request("p", {"p": "/closed/x", "d": 1})[0] == "permission_denied"
        assert c.request("q", {"p": "/open", "h": ""})[0] == "ok"
        assert c.push() == {"a": "d", "b": {"p": "/open", "d": None}}
        assert request(port, "PUT", f"/.settings/rules.json?ns={ns}", '{"rules": {}}', token="owner")[0] == 200
        assert c.push() == {"a": "c", "b": {"p": "/open"}}
        # The admin passes every rule.
        assert c.request("gauth", {"cred": "owner"})[0] == "ok"
        assert c.request("q", {"p": "/closed", "h": ""})[0] == "ok"
    finally:
        c.close()


@pytest.mark.parametrize("rules", [None, '{"rules": {"$k": {".read": "root.child(\'open\').val() !== false", ".write": true}}}'])
def test_a_writes_data_is_pushed_before_its_ok(port, ns, rules):
    """A client drops its local copy of a write at the `ok`: the data of its own listens must be
    there first, also when the rules read data (events then wait for a check)."""
    if rules:
        assert request(port, "PUT", f"/.settings/rules.json?ns={ns}", rules, token="owner")[0] == 200
    c = Realtime(port, ns)
    try:
        assert c.request("q", {"p": "/l", "h": ""})[0] == "ok"
        assert c.push()["b"] == {"p": "/l", "d": None}
        for i in range(100):
            assert c.request("p", {"p": f"/l/k{i:03d}", "d": i}) == ("ok", {})
            assert c.pushes == [{"a": "d", "b": {"p": f"/l/k{i:03d}", "d": i}}], (i, c.pushes)
            c.pushes.clear()
        assert c.request("m", {"p": "/l", "d": {"a": 1, "b": 2}}) == ("ok", {})
        assert c.pushes == [{"a": "m", "b": {"p": "/l", "d": {"a": 1, "b": 2}}}]
    finally:
        c.close()
