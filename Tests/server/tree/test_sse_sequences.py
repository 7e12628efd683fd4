"""Server-Sent Events from the tree's port of `ember serve`, read over a raw socket (no SDK).

Responsible for: the sequence of `event:`/`data:` records a streaming GET (`Accept:
text/event-stream`) receives: the first `put` at "/" with the whole value (null when empty);
for a write at the listened location a `put` at "/", below it a `put` at the relative path,
above it a `put` at "/" of the location's part of the new value; a PATCH of several children as
one `patch` at their parent; a DELETE as a `put` of null; commit order over 200 writes; a
streamed query's whole result again as a `put` at "/" whenever it changes; namespaces apart.
Where an event must NOT come, a later write's event is asserted to be the next one (no sleeps).
Every read is bounded (rtdb_http.EventStream: 10 s). One server per module, a fresh namespace
per test.
"""
import json
import os
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import servers  # noqa: E402
from rtdb_http import NO_BODY, Conn, EventStream, call, database_port  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    srv = servers.start_ember(str(tmp_path_factory.mktemp("sse")))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def port(server):
    return database_port(server)


class Ns:
    """Writes to, and streams of, one namespace."""

    def __init__(self, port, ns=None):
        self.port = port
        self.ns = ns or "s" + uuid.uuid4().hex[:12]

    def write(self, method, path, body=NO_BODY, status=200):
        r = call(self.port, method, path, {"ns": self.ns}, body)
        assert r.status == status, r
        return r

    def put(self, path, value):
        return self.write("PUT", path, value)

    def stream(self, path, **params):
        s = EventStream(self.port, path, dict(params, ns=self.ns))
        assert s.status == 200, (s.status, s.headers, s.raw)
        assert s.headers.get("content-type", "").startswith("text/event-stream"), s.headers
        return s


@pytest.fixture
def ns(port):
    return Ns(port)


def test_the_first_event_is_the_whole_value_or_null(ns):
    with ns.stream("/.json") as s:
        assert s.put_or_patch() == ("put", "/", None)
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", None)
    ns.put("/l.json", {"a": {"b": 1}, "c": [1, 2], "d": "x"})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": {"b": 1}, "c": [1, 2], "d": "x"})
    with ns.stream("/l/a/b.json") as s:
        assert s.put_or_patch() == ("put", "/", 1)
    with ns.stream("/.json") as s:
        assert s.put_or_patch() == ("put", "/", {"l": {"a": {"b": 1}, "c": [1, 2], "d": "x"}})


def test_events_are_named_records_of_one_data_line(ns):
    ns.put("/l.json", {"a": 1})
    with ns.stream("/l.json") as s:
        s.put_or_patch()
        ns.put("/l/b.json", "two\nlines")
        assert s.put_or_patch() == ("put", "/b", "two\nlines")
    with ns.stream("/l.json") as s:
        record = s.raw_record()
        assert record == b'event: put\ndata: {"path":"/","data":{"a":1,"b":"two\\nlines"}}', record


def test_a_write_at_the_listened_location_is_a_put_at_root(ns):
    ns.put("/l.json", {"a": 1})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": 1})
        ns.put("/l.json", {"x": {"y": 2}})
        assert s.put_or_patch() == ("put", "/", {"x": {"y": 2}})
        ns.put("/l.json", 5)
        assert s.put_or_patch() == ("put", "/", 5)
        ns.put("/l.json", [1, 2, 3])
        assert s.put_or_patch() == ("put", "/", [1, 2, 3])


def test_a_write_below_is_a_put_at_the_relative_path(ns):
    ns.put("/l.json", {"a": 1})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": 1})
        ns.put("/l/a/b.json", 2)
        assert s.put_or_patch() == ("put", "/a/b", 2)
        ns.put("/l/c.json", {"d": {"e": True}})
        assert s.put_or_patch() == ("put", "/c", {"d": {"e": True}})
        r = ns.write("POST", "/l/list.json", "pushed")
        assert s.put_or_patch() == ("put", f"/list/{r.json['name']}", "pushed")
        ns.put("/l/c/d/e.json", {".sv": {"increment": 2}})
        assert s.put_or_patch() == ("put", "/c/d/e", 2)


def test_a_write_above_is_a_put_at_root_of_the_locations_part(ns):
    ns.put("/.json", {"l": {"a": 1}, "other": 1})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": 1})
        ns.put("/.json", {"l": {"y": 1}, "other": 2})
        assert s.put_or_patch() == ("put", "/", {"y": 1})
        ns.put("/.json", {"other": 3})
        assert s.put_or_patch() == ("put", "/", None)
        ns.put("/.json", {"l": "leaf"})
        assert s.put_or_patch() == ("put", "/", "leaf")
    ns.put("/.json", {"p": {"q": {"r": 1, "s": 2}}})
    with ns.stream("/p/q/r.json") as s:
        assert s.put_or_patch() == ("put", "/", 1)
        ns.put("/p.json", {"q": {"r": 7}})
        assert s.put_or_patch() == ("put", "/", 7)


def test_writes_beside_the_location_send_nothing(ns):
    ns.put("/.json", {"l": {"a": 1}, "m": 1})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": 1})
        ns.put("/m.json", 2)
        ns.put("/lx.json", 2)                            # a key that only starts like the location
        ns.write("PATCH", "/.json", {"m": 3, "n/o": 4})
        ns.write("DELETE", "/m.json")
        ns.put("/l/a.json", "marker")
        assert s.put_or_patch() == ("put", "/a", "marker")


def test_a_write_above_that_leaves_the_location_unchanged_sends_nothing(ns):
    # TREE-SERVER.md §6: a write above the location sends its new value "only if it changed".
    ns.put("/.json", {"l": {"a": 1}, "m": 1})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": 1})
        ns.put("/.json", {"l": {"a": 1}, "m": 2})
        ns.put("/l/a.json", "marker")
        assert s.put_or_patch() == ("put", "/a", "marker")


def test_a_patch_of_several_children_is_one_patch_event(ns):
    ns.put("/l.json", {"a": 1, "b": 2, "c": {"d": 1}})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": 1, "b": 2, "c": {"d": 1}})
        ns.write("PATCH", "/l.json", {"a": 10, "b": None, "n": {"x": 1}})
        assert s.put_or_patch() == ("patch", "/", {"a": 10, "b": None, "n": {"x": 1}})
        ns.write("PATCH", "/l/c.json", {"d": 2, "e": 3})
        assert s.put_or_patch() == ("patch", "/c", {"d": 2, "e": 3})
        ns.write("PATCH", "/.json", {"l/a": 11, "l/z": 12})       # a multi-path update from above
        assert s.put_or_patch() == ("patch", "/", {"a": 11, "z": 12})
        ns.write("PATCH", "/l.json", {"c/d": 5, "c/f": 6})         # deep keys sharing one parent
        assert s.put_or_patch() == ("patch", "/c", {"d": 5, "f": 6})
        ns.put("/l/a.json", "marker")
        assert s.put_or_patch() == ("put", "/a", "marker")


def test_delete_is_a_put_of_null(ns):
    ns.put("/.json", {"l": {"a": {"b": 1}, "c": 2}})
    with ns.stream("/l.json") as s:
        assert s.put_or_patch() == ("put", "/", {"a": {"b": 1}, "c": 2})
        ns.write("DELETE", "/l/a/b.json")
        assert s.put_or_patch() == ("put", "/a/b", None)
        ns.write("DELETE", "/l.json")
        assert s.put_or_patch() == ("put", "/", None)
        ns.put("/l.json", {"again": 1})
        assert s.put_or_patch() == ("put", "/", {"again": 1})
        ns.write("DELETE", "/.json")
        assert s.put_or_patch() == ("put", "/", None)
        ns.put("/l/y.json", 1)
        assert s.put_or_patch() == ("put", "/y", 1)
        ns.put("/l/y.json", None)                                   # a PUT of null deletes
        assert s.put_or_patch() == ("put", "/y", None)


def test_events_come_in_commit_order(ns):
    n = 200
    with ns.stream("/l.json") as s1, ns.stream("/l.json") as s2:
        assert s1.put_or_patch() == ("put", "/", None)
        assert s2.put_or_patch() == ("put", "/", None)
        expected = []
        with Conn(ns.port) as c:
            for i in range(n):
                key = f"k{i % 7}"
                if i % 5 == 4:
                    r = c.call("PATCH", "/l.json", {"ns": ns.ns, "print": "silent"}, {key: i, "last": i})
                    assert r.status == 204, r
                    expected.append(("patch", "/", {key: i, "last": i}))
                else:
                    r = c.call("PUT", f"/l/{key}.json", {"ns": ns.ns, "print": "silent"}, i)
                    assert r.status == 204, r
                    expected.append(("put", f"/{key}", i))
        got1 = [s1.put_or_patch() for _ in range(n)]
        got2 = [s2.put_or_patch() for _ in range(n)]
    assert got1 == expected
    assert got2 == expected


def test_writes_of_several_clients_reach_every_stream_in_one_order(ns):
    import threading
    with ns.stream("/l.json") as s1, ns.stream("/l.json") as s2:
        s1.put_or_patch()
        s2.put_or_patch()
        failures = []

        def writer(w):
            with Conn(ns.port) as c:
                for i in range(50):
                    r = c.call("PUT", f"/l/w{w}.json", {"ns": ns.ns, "print": "silent"}, i)
                    if r.status != 204:
                        failures.append(r)
        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not failures and not any(t.is_alive() for t in threads)
        got1 = [s1.put_or_patch() for _ in range(200)]
        got2 = [s2.put_or_patch() for _ in range(200)]
    assert got1 == got2
    for w in range(4):
        assert [d for _, p, d in got1 if p == f"/w{w}"] == list(range(50))   # each writer's own order


def test_a_streamed_query_sends_its_whole_result_when_it_changes(ns):
    ns.put("/q.json", {"b": 1, "c": 2, "d": 3})
    with ns.stream("/q.json", orderBy='"$key"', limitToFirst="2") as s:
        assert s.put_or_patch() == ("put", "/", {"b": 1, "c": 2})
        ns.put("/q/a.json", 0)                                     # enters the window, pushes c out
        assert s.put_or_patch() == ("put", "/", {"a": 0, "b": 1})
        ns.put("/q/z.json", 9)                                     # outside the window: nothing
        ns.put("/q/d.json", 4)                                     # outside too
        ns.put("/q/b.json", 5)                                     # inside: changed
        assert s.put_or_patch() == ("put", "/", {"a": 0, "b": 5})
        ns.write("DELETE", "/q/a.json")                            # leaves: c comes back
        assert s.put_or_patch() == ("put", "/", {"b": 5, "c": 2})
        ns.write("PATCH", "/q.json", {"b": None, "c": None})
        assert s.put_or_patch() == ("put", "/", {"d": 4, "z": 9})
        ns.write("DELETE", "/q.json")
        assert s.put_or_patch() == ("put", "/", None)
        ns.put("/q/m.json", 1)
        assert s.put_or_patch() == ("put", "/", {"m": 1})


def test_a_streamed_child_query(ns):
    ns.put("/q.json", {"a": {"s": 3}, "b": {"s": 1}, "c": {"s": 2}})
    with ns.stream("/q.json", orderBy='"s"', limitToLast="2") as s:
        assert s.put_or_patch() == ("put", "/", {"a": {"s": 3}, "c": {"s": 2}})
        ns.put("/q/b/s.json", 10)
        assert s.put_or_patch() == ("put", "/", {"a": {"s": 3}, "b": {"s": 10}})
        ns.put("/q/c/t.json", "not the window")                   # c is out of the window
        ns.put("/q/a/t.json", "in the window")
        assert s.put_or_patch() == ("put", "/", {"a": {"s": 3, "t": "in the window"}, "b": {"s": 10}})
    with ns.stream("/q.json", orderBy='"s"', startAt="2", endAt="3") as s:
        assert s.put_or_patch() == ("put", "/", {"a": {"s": 3, "t": "in the window"}, "c": {"s": 2, "t": "not the window"}})
        ns.put("/q/c/s.json", 5)                                   # leaves the range
        assert s.put_or_patch() == ("put", "/", {"a": {"s": 3, "t": "in the window"}})
        ns.put("/q/b/s.json", 2.5)                                 # enters it
        assert s.put_or_patch() == ("put", "/", {"a": {"s": 3, "t": "in the window"}, "b": {"s": 2.5}})


def test_streams_on_two_namespaces_do_not_see_each_other(port):
    a, b = Ns(port), Ns(port)
    with a.stream("/.json") as sa, b.stream("/.json") as sb, a.stream("/x.json") as sax:
        assert sa.put_or_patch() == ("put", "/", None)
        assert sb.put_or_patch() == ("put", "/", None)
        assert sax.put_or_patch() == ("put", "/", None)
        a.put("/x.json", "in a")
        a.write("PATCH", "/.json", {"y": 1, "z": 2})
        a.write("DELETE", "/x.json")
        b.put("/x.json", "in b")
        assert sb.put_or_patch() == ("put", "/x", "in b")
        assert sa.put_or_patch() == ("put", "/x", "in a")
        assert sa.put_or_patch() == ("patch", "/", {"y": 1, "z": 2})
        assert sa.put_or_patch() == ("put", "/x", None)
        assert sax.put_or_patch() == ("put", "/", "in a")
        assert sax.put_or_patch() == ("put", "/", None)
        b.write("DELETE", "/.json")
        a.put("/w.json", 1)
        assert sb.put_or_patch() == ("put", "/", None)
        assert sa.put_or_patch() == ("put", "/w", 1)


def test_a_closed_stream_leaves_the_others_running(ns):
    s1 = ns.stream("/l.json")
    with ns.stream("/l.json") as s2:
        s1.put_or_patch()
        s2.put_or_patch()
        s1.close()
        for i in range(5):
            ns.put("/l/a.json", i)
        assert [s2.put_or_patch() for _ in range(5)] == [("put", "/a", i) for i in range(5)]
    with ns.stream("/l.json") as s3:
        assert s3.put_or_patch() == ("put", "/", {"a": 4})


def test_refused_streams(ns):
    for params, error in [({"shallow": "true"}, "shallow cannot be streamed"),
                          ({"limitToFirst": "1"}, "orderBy must be defined when other query parameters are defined"),
                          ({"print": "loud"}, "print must be 'pretty' or 'silent', got 'loud'")]:
        s = EventStream(ns.port, "/l.json", dict(params, ns=ns.ns))
        try:
            assert s.status == 400, (params, s.status, s.headers)
            assert json.loads(s.body()) == {"error": error}, params
        finally:
            s.close()
