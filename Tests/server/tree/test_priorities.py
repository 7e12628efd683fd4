"""Priorities on the tree's port (issue 28): kept beside the data, shown where asked.

Responsible for: `.priority` in written values (objects and `{".value", ".priority"}` leaves)
kept and shown only by `format=export`; `/<path>/.priority.json` read, set and removed; a set
replacing the priorities under its path; `orderBy="$priority"` (none first, then numbers, then
strings, ties by key; limits and bounds), plain and streamed; ETags (the SDKs' hash with
priorities); `getPriority()` in rules; invalid priorities refused (400, nothing changed).
"""
import json
import os
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import servers  # noqa: E402
from tree_http import EventStream, database_port, request  # noqa: E402


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    srv = servers.start_ember(str(tmp_path_factory.mktemp("tree-priorities")))
    yield database_port(srv)
    srv.stop()


@pytest.fixture
def ns():
    return "p" + uuid.uuid4().hex[:10]


def put(port, ns, path, value, **kw):
    status, _, body = request(port, "PUT", f"{path}?ns={ns}", value, **kw)
    assert status == 200, body
    return body


def get(port, ns, path, params=""):
    status, headers, body = request(port, "GET", f"{path}?ns={ns}{params}")
    assert status == 200, body
    return body


def test_priorities_kept_and_exported(port, ns):
    put(port, ns, "/s.json", {"a": {"x": 1, ".priority": 2}, "b": {".value": "v", ".priority": "p"}, "c": 3})
    assert get(port, ns, "/s.json") == {"a": {"x": 1}, "b": "v", "c": 3}
    assert get(port, ns, "/s.json", "&format=export") == {
        "a": {"x": 1, ".priority": 2}, "b": {".value": "v", ".priority": "p"}, "c": 3}
    assert get(port, ns, "/s/a/.priority.json") == 2
    assert get(port, ns, "/s/c/.priority.json") is None


def test_priority_endpoint_sets_and_removes(port, ns):
    put(port, ns, "/n.json", {"a": 1})
    assert request(port, "PUT", f"/n/a/.priority.json?ns={ns}", 7)[0:3:2] == (200, 7)
    assert get(port, ns, "/n.json", "&format=export") == {"a": {".value": 1, ".priority": 7}}
    assert request(port, "DELETE", f"/n/a/.priority.json?ns={ns}")[0] == 200
    assert get(port, ns, "/n/a/.priority.json") is None
    # No node, no priority.
    assert request(port, "PUT", f"/n/missing/.priority.json?ns={ns}", 1)[0] == 200
    assert get(port, ns, "/n/missing/.priority.json") is None


def test_a_set_replaces_the_priorities_below_it(port, ns):
    put(port, ns, "/r.json", {"a": {".value": 1, ".priority": 1}, "b": {".value": 2, ".priority": 2}})
    put(port, ns, "/r/a.json", 5)
    assert get(port, ns, "/r.json", "&format=export") == {"a": 5, "b": {".value": 2, ".priority": 2}}
    assert request(port, "PATCH", f"/r.json?ns={ns}", {"b": {".value": 3, ".priority": "z"}})[0] == 200
    assert get(port, ns, "/r.json", "&format=export") == {"a": 5, "b": {".value": 3, ".priority": "z"}}
    assert request(port, "DELETE", f"/r.json?ns={ns}")[0] == 200
    put(port, ns, "/r/b.json", 4)
    assert get(port, ns, "/r.json", "&format=export") == {"b": 4}


@pytest.mark.parametrize("bad", [{".value": 1, ".priority": True}, {".value": 1, ".priority": {"x": 1}},
                                 {"a": 1, ".priority": [1]}])
def test_invalid_priorities_are_refused(port, ns, bad):
    put(port, ns, "/i.json", 0)
    status, _, body = request(port, "PUT", f"/i.json?ns={ns}", bad)
    assert status == 400 and "priority" in body["error"]
    assert get(port, ns, "/i.json") == 0
    assert request(port, "PUT", f"/i/.priority.json?ns={ns}", {"x": 1})[0] == 400


def order(port, ns, params):
    return get(port, ns, "/o.json", '&orderBy=%22$priority%22' + params)


def test_order_by_priority(port, ns):
    put(port, ns, "/o.json", {
        "n1": "none", "n2": "none",
        "a": {".value": 1, ".priority": 10}, "b": {".value": 2, ".priority": 2.5},
        "c": {".value": 3, ".priority": "m"}, "d": {".value": 4, ".priority": "b"},
        "e": {".value": 5, ".priority": 2.5},
    })
    # none < numbers < strings; ties by key.
    assert list(order(port, ns, "&limitToFirst=3")) and set(order(port, ns, "&limitToFirst=3")) == {"n1", "n2", "b"}
    assert set(order(port, ns, "&limitToLast=2")) == {"c", "d"}
    assert set(order(port, ns, "&startAt=2.5&endAt=10")) == {"a", "b", "e"}
    assert set(order(port, ns, "&startAt=2.5&endAt=2.5")) == {"b", "e"}
    assert set(order(port, ns, '&startAt=%22a%22')) == {"c", "d"}
    assert set(order(port, ns, "&equalTo=10")) == {"a"}
    assert set(order(port, ns, '&startAt=2.5,%22c%22&limitToFirst=1')) == {"e"}


def test_streamed_order_by_priority_follows_priority_changes(port, ns):
    put(port, ns, "/q.json", {"a": {".value": 1, ".priority": 1}, "b": {".value": 2, ".priority": 2}})
    with EventStream(port, f"/q.json?ns={ns}&orderBy=%22$priority%22&limitToFirst=1") as s:
        assert json.loads(s.next_event()[1]) == {"path": "/", "data": {"a": 1}}
        assert request(port, "PUT", f"/q/b/.priority.json?ns={ns}", 0)[0] == 200
        assert json.loads(s.next_event()[1]) == {"path": "/", "data": {"b": 2}}
        put(port, ns, "/q/c.json", {".value": 3, ".priority": -1})
        assert json.loads(s.next_event()[1]) == {"path": "/", "data": {"c": 3}}


def test_etags_include_priorities(port, ns):
    put(port, ns, "/e.json", {".priority": 200, ".value": "primitive"})
    status, headers, _ = request(port, "GET", f"/e.json?ns={ns}", headers={"X-Firebase-ETag": "true"})
    assert headers["etag"] == "R9u8hs9fhRzuQ2M/3BQ0uhxz5ys="
    # A PUT conditional on that ETag applies; on the ETag of the value alone it does not.
    plain = "B8HWXc7zXMjrsnJxPRj7wrNGqt4="  # "Hello World" without a priority, a mismatch anyway
    assert request(port, "PUT", f"/e.json?ns={ns}", '"x"', headers={"if-match": plain})[0] == 412
    assert request(port, "PUT", f"/e.json?ns={ns}", '"x"', headers={"if-match": "R9u8hs9fhRzuQ2M/3BQ0uhxz5ys="})[0] == 200


def test_get_priority_in_rules(port, ns):
    rules = '{"rules": {".read": true, "t": {"$k": {".write": "newData.getPriority() !== null && (!data.exists() || data.getPriority() < newData.getPriority())"}}}}'
    assert request(port, "PUT", f"/.settings/rules.json?ns={ns}", rules, token="owner")[0] == 200
    assert request(port, "PUT", f"/t/a.json?ns={ns}", 1)[0] == 401
    assert request(port, "PUT", f"/t/a.json?ns={ns}", {".value": 1, ".priority": 5})[0] == 200
    assert request(port, "PUT", f"/t/a.json?ns={ns}", {".value": 2, ".priority": 4})[0] == 401
    assert request(port, "PUT", f"/t/a.json?ns={ns}", {".value": 2, ".priority": 6})[0] == 200
    assert request(port, "PUT", f"/t/a/.priority.json?ns={ns}", 3)[0] == 401
    assert request(port, "PUT", f"/t/a/.priority.json?ns={ns}", 9)[0] == 200
    assert get(port, ns, "/t.json", "&format=export") == {"a": {".value": 2, ".priority": 9}}
