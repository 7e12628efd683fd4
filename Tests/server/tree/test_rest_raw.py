"""The tree's REST API on `ember serve --database-port`, over plain HTTP/1.1 (http.client, raw
sockets; no SDK): every parameter and every status code.

Responsible for: print=silent|pretty, shallow (and shallow with a query: 400), format=export,
each query parameter and the refused combinations (400 with the server's texts), push ids,
server values, ETags (X-Firebase-ETag, if-match, null_etag, if-none-match, GET with if-match),
refused bodies (bad JSON, bad keys, long keys, deep values, too big), 401/404/405,
X-HTTP-Method-Override, namespaces, keep-alive and pipelining. Every refused write is checked
to have changed nothing (the namespace read back). One server per module (request bodies
limited to LIMIT bytes), a fresh namespace per test.
"""
import json
import os
import secrets
import sys
import time
import urllib.parse
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import servers  # noqa: E402
from rtdb_http import NO_BODY, Conn, call, database_port, raw_exchange  # noqa: E402

LIMIT = 100_000
PUSH_ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
TOO_BIG = "WRITE_TOO_BIG: Data to write exceeds the maximum size that can be modified with a single request."
NOT_JSON = "Invalid data; couldn't parse JSON object, array, or value"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    srv = servers.start_ember(str(tmp_path_factory.mktemp("rest-raw")), extra_args=["--max-request-bytes", str(LIMIT)])
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def port(server):
    return database_port(server)


class Api:
    """Requests on one namespace of the server."""

    def __init__(self, port, ns):
        self.port, self.ns = port, ns

    def req(self, method, path, params=None, body=NO_BODY, headers=None):
        return call(self.port, method, path, dict(params or {}, ns=self.ns), body, headers)

    def value(self, path="/.json"):
        r = self.req("GET", path)
        assert r.status == 200, r
        return r.json

    def put(self, path, value):
        r = self.req("PUT", path, body=value)
        assert r.status == 200, r
        return r

    def refused(self, method, path, status, error=None, params=None, body=NO_BODY, headers=None, starts=None):
        """Asserts that the request is answered `status` with `{"error": error}` (or an error
        starting with `starts`) and that the namespace is the same afterwards."""
        before = self.value()
        r = self.req(method, path, params, body, headers)
        assert r.status == status, r
        assert r.headers.get("content-type", "").startswith("application/json"), r
        got = r.json
        assert set(got) == {"error"} and isinstance(got["error"], str) and got["error"], r
        if error is not None:
            assert got["error"] == error, r
        if starts is not None:
            assert got["error"].startswith(starts), r
        assert self.value() == before, f"a refused {method} {path} changed the namespace"
        return got["error"]


@pytest.fixture
def api(port):
    return Api(port, "r" + uuid.uuid4().hex[:12])


# ---------------------------------------------------------------- print, shallow, format

def test_put_answers_the_written_value_and_get_reads_it(api):
    r = api.req("PUT", "/a.json", body={"b": 1, "c": [1, 2], "d": None, "e": {}})
    assert r.status == 200 and r.headers["content-type"].startswith("application/json")
    assert r.json == {"b": 1, "c": [1, 2]}                  # nulls and empty objects vanish
    assert api.value("/a.json") == {"b": 1, "c": [1, 2]}
    assert api.value("/a/c/1.json") == 2
    assert api.value("/a/missing.json") is None
    assert api.value("/.json") == {"a": {"b": 1, "c": [1, 2]}}
    assert api.value("/a/.json") == {"b": 1, "c": [1, 2]}    # `/<path>/.json` names the same location
    api.put("/n.json", 1.0)
    assert api.req("GET", "/n.json").body == b"1"             # an integral double is a JS number
    api.put("/o.json", {"0": "x", "1": "y"})
    assert api.value("/o.json") == ["x", "y"]                 # dense integer keys read as an array


def test_print_silent_answers_204_with_an_empty_body_and_still_writes(api):
    for method, body in [("PUT", {"a": 1}), ("PATCH", {"b": 2}), ("POST", "pushed")]:
        r = api.req(method, "/s.json", {"print": "silent"}, body)
        assert (r.status, r.body) == (204, b""), (method, r)
    v = api.value("/s.json")
    pushed = [k for k in v if k not in ("a", "b")]
    assert v == {"a": 1, "b": 2, pushed[0]: "pushed"} and len(pushed) == 1
    r = api.req("GET", "/s.json", {"print": "silent"})
    assert (r.status, r.body) == (204, b"")


def test_print_pretty_indents_with_two_spaces(api):
    r = api.req("PUT", "/p.json", {"print": "pretty"}, {"b": 1, "c": [1, 2], "a": {"x": "y"}})
    assert r.status == 200
    text = '{\n  "a" : {\n    "x" : "y"\n  },\n  "b" : 1,\n  "c" : [\n    1,\n    2\n  ]\n}'
    assert r.body.decode() == text
    r = api.req("GET", "/p.json", {"print": "pretty"})
    assert (r.status, r.body.decode()) == (200, text)
    assert api.req("GET", "/p/b.json", {"print": "pretty"}).body == b"1"
    # Plain answers are compact.
    assert api.req("GET", "/p.json").body == b'{"a":{"x":"y"},"b":1,"c":[1,2]}'


def test_an_unknown_print_mode_is_refused(api):
    api.put("/a.json", 1)
    assert api.refused("GET", "/a.json", 400, "print must be 'pretty' or 'silent', got 'loud'", {"print": "loud"})
    api.refused("PUT", "/a.json", 400, "print must be 'pretty' or 'silent', got 'loud'", {"print": "loud"}, 2)
    api.refused("POST", "/a.json", 400, "print must be 'pretty' or 'silent', got 'loud'", {"print": "loud"}, 2)


def test_shallow_truncates_children_to_true(api):
    api.put("/s.json", {"a": {"x": 1, "y": {"z": 2}}, "b": 2, "c": "s", "d": False})
    assert api.req("GET", "/s.json", {"shallow": "true"}).json == {"a": True, "b": 2, "c": "s", "d": False}
    assert api.req("GET", "/s/b.json", {"shallow": "true"}).json == 2
    assert api.req("GET", "/nothing.json", {"shallow": "true"}).json is None
    assert api.req("GET", "/s.json", {"shallow": "false"}).json == api.value("/s.json")
    assert api.req("GET", "/.json", {"shallow": "true"}).json == {"s": True}


def test_shallow_mixed_with_a_query_or_format_is_refused(api):
    api.put("/s.json", {"a": 1, "b": 2})
    mixed = "Mixing 'shallow' and other query parameters is not allowed"
    api.refused("GET", "/s.json", 400, mixed, {"shallow": "true", "orderBy": '"$key"'})
    api.refused("GET", "/s.json", 400, mixed, {"shallow": "true", "orderBy": '"$key"', "limitToFirst": "1"})
    api.refused("GET", "/s.json", 400, mixed, {"shallow": "true", "format": "export"})
    api.refused("GET", "/s.json", 400, "shallow must be 'true' or 'false'", {"shallow": "yes"})


def test_format_export_reads_the_value(api):
    api.put("/e.json", {"a": {"b": 1}, "c": "x", "l": [True, False]})
    r = api.req("GET", "/e.json", {"format": "export"})
    assert r.status == 200 and r.json == {"a": {"b": 1}, "c": "x", "l": [True, False]}
    assert api.req("GET", "/e/c.json", {"format": "export"}).json == "x"
    api.refused("GET", "/e.json", 400, "format must be 'export', got 'xml'", {"format": "xml"})


def test_write_methods_refuse_query_parameters_and_shallow(api):
    api.put("/w.json", {"a": 1})
    only_get = "Query parameters and shallow are only for GET"
    for method, body in [("PUT", 2), ("PATCH", {"a": 2}), ("POST", 3), ("DELETE", NO_BODY)]:
        api.refused(method, "/w.json", 400, only_get, {"shallow": "true"}, body)
        api.refused(method, "/w.json", 400, only_get, {"orderBy": '"$key"', "limitToFirst": "1"}, body)
        api.refused(method, "/w.json", 400, only_get, {"limitToLast": "1"}, body)


# ---------------------------------------------------------------- queries

SCORES = {"a": {"s": 30, "m": {"n": 3}}, "b": {"s": 10, "m": {"n": 1}}, "c": {"s": 20, "m": {"n": 2}},
          "d": {"s": 40}, "e": {"t": 1}, "f": {"s": "text"}, "g": {"s": True}}


@pytest.mark.parametrize("params, keys", [
    ({"orderBy": '"$key"', "limitToFirst": "2"}, {"a", "b"}),
    ({"orderBy": '"$key"', "limitToLast": "2"}, {"f", "g"}),
    ({"orderBy": '"$key"', "startAt": '"b"', "endAt": '"d"'}, {"b", "c", "d"}),
    ({"orderBy": '"$key"', "startAfter": '"b"', "endBefore": '"d"'}, {"c"}),
    ({"orderBy": '"$key"', "equalTo": '"c"'}, {"c"}),
    ({"orderBy": '"$key"', "startAt": '"c"', "limitToFirst": "2"}, {"c", "d"}),
    ({"orderBy": '"$key"', "endAt": '"c"', "limitToLast": "2"}, {"b", "c"}),
    ({"orderBy": '"$key"', "startAt": '"b"', "endAt": '"b\uf8ff"'}, {"b"}),
    # Child order: missing first, then booleans, numbers, strings.
    ({"orderBy": '"s"', "limitToFirst": "2"}, {"e", "g"}),
    ({"orderBy": '"s"', "limitToLast": "1"}, {"f"}),
    ({"orderBy": '"s"', "startAt": "15", "endAt": "35"}, {"c", "a"}),
    ({"orderBy": '"s"', "startAfter": "20", "endBefore": "40"}, {"a"}),
    ({"orderBy": '"s"', "equalTo": "10"}, {"b"}),
    ({"orderBy": '"s"', "equalTo": "true"}, {"g"}),
    ({"orderBy": '"s"', "equalTo": '"text"'}, {"f"}),
    ({"orderBy": '"s"', "equalTo": "null"}, {"e"}),
    ({"orderBy": '"s"', "startAt": "30", "endAt": "40", "limitToFirst": "1"}, {"a"}),
    ({"orderBy": '"s"', "startAt": '30,"a"', "endAt": "40"}, {"a", "d"}),
    ({"orderBy": '"s"', "startAt": '30,"b"', "endAt": "40"}, {"d"}),
    ({"orderBy": '"s"', "startAt": '"u"'}, set()),                   # after every string: nothing
    ({"orderBy": '"m/n"', "startAt": "2"}, {"a", "c"}),
    ({"orderBy": '"m/n"', "limitToFirst": "1", "startAt": "1"}, {"b"}),
    ({"orderBy": '"$key"', "limitToFirst": "0"}, set()),
    ({"orderBy": '"$key"', "limitToLast": "0"}, set()),
    ({"orderBy": '"s"', "startAt": "100"}, {"f"}),                 # strings after numbers
])
def test_queries(api, params, keys):
    api.put("/q.json", SCORES)
    r = api.req("GET", "/q.json", params)
    assert r.status == 200, r
    assert r.json == ({k: SCORES[k] for k in keys} if keys else None)


def test_queries_by_value(api):
    api.put("/v.json", {"x": 3, "y": 1, "z": 2, "w": "a", "u": False})
    q = lambda **p: api.req("GET", "/v.json", dict(p, orderBy='"$value"'))  # noqa: E731
    assert q(limitToFirst="2").json == {"u": False, "y": 1}
    assert q(startAt="2").json == {"x": 3, "z": 2, "w": "a"}
    assert q(startAt="2", endAt="3").json == {"x": 3, "z": 2}
    assert q(equalTo='"a"').json == {"w": "a"}
    assert q(limitToLast="1").json == {"w": "a"}
    assert q(startAt='2,"z"', endAt="3").json == {"x": 3, "z": 2}
    assert q(startAfter='2,"z"').json == {"x": 3, "w": "a"}


@pytest.mark.parametrize("params, error", [
    ({"limitToFirst": "1"}, "orderBy must be defined when other query parameters are defined"),
    ({"limitToLast": "1"}, "orderBy must be defined when other query parameters are defined"),
    ({"startAt": '"a"'}, "orderBy must be defined when other query parameters are defined"),
    ({"startAfter": '"a"'}, "orderBy must be defined when other query parameters are defined"),
    ({"endAt": '"a"'}, "orderBy must be defined when other query parameters are defined"),
    ({"endBefore": '"a"'}, "orderBy must be defined when other query parameters are defined"),
    ({"equalTo": '"a"'}, "orderBy must be defined when other query parameters are defined"),
    ({"orderBy": "$key"}, "orderBy must be a valid JSON encoded path"),
    ({"orderBy": "3"}, "orderBy must be a valid JSON encoded path"),
    ({"orderBy": '""'}, "orderBy must be a valid JSON encoded path"),
    ({"orderBy": '"/"'}, "orderBy must be a valid JSON encoded path"),
    ({"orderBy": '"$key"', "limitToFirst": "1", "limitToLast": "1"}, "limitToFirst and limitToLast cannot both be given"),
    ({"orderBy": '"$key"', "limitToFirst": "-1"}, "limitToFirst must be a non-negative integer, got '-1'"),
    ({"orderBy": '"$key"', "limitToFirst": "1.5"}, "limitToFirst must be a non-negative integer, got '1.5'"),
    ({"orderBy": '"$key"', "limitToLast": "x"}, "limitToLast must be a non-negative integer, got 'x'"),
    ({"orderBy": '"$key"', "equalTo": '"a"', "startAt": '"a"'}, "equalTo cannot be given with startAt, startAfter, endAt or endBefore"),
    ({"orderBy": '"$key"', "equalTo": '"a"', "endBefore": '"a"'}, "equalTo cannot be given with startAt, startAfter, endAt or endBefore"),
    ({"orderBy": '"$key"', "startAt": '"a"', "startAfter": '"a"'}, "startAt and startAfter cannot both be given"),
    ({"orderBy": '"$key"', "endAt": '"a"', "endBefore": '"a"'}, "endAt and endBefore cannot both be given"),
    ({"orderBy": '"s"', "startAt": '{"a":1}'},
     "startAt must be a JSON null, boolean, number or string (optionally followed by ,<JSON key>), got '{\"a\":1}'"),
    ({"orderBy": '"s"', "endAt": "abc"},
     "endAt must be a JSON null, boolean, number or string (optionally followed by ,<JSON key>), got 'abc'"),
    ({"orderBy": '"s"', "equalTo": "[1]"},
     "equalTo must be a JSON null, boolean, number or string (optionally followed by ,<JSON key>), got '[1]'"),
    ({"orderBy": '"s"', "format": "json"}, "format must be 'export', got 'json'"),
    ({"orderBy": '"$key"', "limit": "1"}, "Invalid query parameter: 'limit' is not supported"),
    ({"callback": "f"}, "Invalid query parameter: 'callback' is not supported"),
])
def test_refused_queries(api, params, error):
    api.put("/q.json", SCORES)
    api.refused("GET", "/q.json", 400, error, params)


def test_a_refused_order_by_path_is_400(api):
    api.put("/q.json", SCORES)
    assert "key" in api.refused("GET", "/q.json", 400, None, {"orderBy": '"a.b"'})
    assert "key" in api.refused("GET", "/q.json", 400, None, {"orderBy": '"a$"', "limitToFirst": "1"})


def test_a_parameter_given_twice_is_refused(api):
    api.put("/q.json", SCORES)
    r = call(api.port, "GET", f"/q.json?ns={api.ns}&orderBy=%22$key%22&orderBy=%22s%22")
    assert (r.status, r.json) == (400, {"error": "Invalid query parameter: 'orderBy' is given more than once"})
    r = call(api.port, "PUT", f"/q.json?ns={api.ns}&print=silent&print=silent", body=1)
    assert (r.status, r.json) == (400, {"error": "Invalid query parameter: 'print' is given more than once"})
    assert api.value("/q.json") == SCORES


def test_query_parameters_keep_a_literal_plus(api):
    # REST clients percent-encode a space; '+' is a plus (the SDKs send it literally).
    api.put("/k.json", {"a+b": 1, "a b": 2, "c": 3})
    r = call(api.port, "GET", f"/k.json?ns={api.ns}&orderBy=%22$key%22&equalTo=%22a+b%22")
    assert r.json == {"a+b": 1}
    r = call(api.port, "GET", f"/k.json?ns={api.ns}&orderBy=%22$key%22&equalTo=%22a%20b%22")
    assert r.json == {"a b": 2}


# ---------------------------------------------------------------- push ids and server values

def test_post_pushes_children_with_increasing_twenty_character_ids(api):
    before = int(time.time() * 1000)
    names = []
    with Conn(api.port) as c:
        for i in range(40):
            r = c.call("POST", "/list.json", {"ns": api.ns}, {"i": i})
            assert r.status == 200, r
            body = r.json
            assert set(body) == {"name"}, body
            names.append(body["name"])
    after = int(time.time() * 1000)
    for n in names:
        assert len(n) == 20 and all(ch in PUSH_ALPHABET for ch in n), n
        t = 0
        for ch in n[:8]:
            t = t * 64 + PUSH_ALPHABET.index(ch)
        assert before - 1000 <= t <= after + 1000, (n, t, before, after)
    assert all(a < b for a, b in zip(names, names[1:])), names      # strictly increasing (ASCII order)
    assert api.value("/list.json") == {n: {"i": i} for i, n in enumerate(names)}
    # $key order is the push order.
    r = api.req("GET", "/list.json", {"orderBy": '"$key"', "limitToLast": "1"})
    assert r.json == {names[-1]: {"i": 39}}


def test_post_of_a_refused_body_pushes_nothing(api):
    api.put("/list.json", {"x": 1})
    api.refused("POST", "/list.json", 400, body={"a.b": 1})
    api.refused("POST", "/list.json", 400, starts=NOT_JSON, body=b"{nope")
    api.refused("POST", "/list.json", 400, starts=NOT_JSON, body=b"")


def test_server_timestamp_and_increment(api):
    before = int(time.time() * 1000)
    r = api.req("PUT", "/sv.json", body={"t": {".sv": "timestamp"}, "n": {".sv": {"increment": 2}}, "k": "x"})
    after = int(time.time() * 1000)
    assert r.status == 200, r
    echoed = r.json
    assert before <= echoed["t"] <= after and echoed["n"] == 2 and echoed["k"] == "x"
    assert api.value("/sv.json") == echoed                           # the answer is what was stored
    r = api.req("PATCH", "/sv.json", body={"n": {".sv": {"increment": 3}}, "m": {".sv": {"increment": -1}}})
    assert r.status == 200 and r.json == {"n": 5, "m": -1}
    api.put("/sv/n.json", {".sv": {"increment": 1.5}})
    assert api.value("/sv/n.json") == 6.5
    api.put("/sv/k.json", {".sv": {"increment": 4}})                 # not a number there: the delta
    assert api.value("/sv/k.json") == 4
    r = api.req("POST", "/sv/log.json", body={"at": {".sv": "timestamp"}})
    at = api.value(f"/sv/log/{r.json['name']}/at.json")
    assert before <= at <= int(time.time() * 1000)
    api.put("/big.json", 9007199254740991)
    api.put("/big.json", {".sv": {"increment": 9223372036854775807}})
    assert api.value("/big.json") == pytest.approx(9007199254740991 + 9223372036854775807, rel=1e-12)


def test_concurrent_increments_are_atomic(api):
    import threading
    errors = []

    def bump():
        with Conn(api.port) as c:
            for _ in range(25):
                r = c.call("PUT", "/count.json", {"ns": api.ns, "print": "silent"}, {".sv": {"increment": 1}})
                if r.status != 204:
                    errors.append(r)
    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
    assert api.value("/count.json") == 100


@pytest.mark.parametrize("body", [
    {".sv": "nope"},
    {".sv": {"increment": "x"}},
    {".sv": {"decrement": 1}},
    {".sv": {"increment": 1, "other": 2}},
    {".sv": "timestamp", "x": 1},
    {"a": {".sv": 5}},
])
def test_an_unrecognized_server_value_is_refused(api, body):
    api.put("/sv.json", {"keep": 1})
    api.refused("PUT", "/sv.json", 400, body=body)
    api.refused("PATCH", "/sv.json", 400, body={"keep": body})
    api.refused("POST", "/sv.json", 400, body=body)


# ---------------------------------------------------------------- ETags

def test_x_firebase_etag_returns_the_locations_etag(api):
    r = api.req("GET", "/e.json", headers={"X-Firebase-ETag": "true"})
    assert (r.status, r.json, r.headers.get("etag")) == (200, None, "null_etag")
    assert "etag" not in api.req("GET", "/e.json").headers                # only when asked
    r = api.req("PUT", "/e.json", body=True, headers={"X-Firebase-ETag": "true"})
    assert r.status == 200 and r.headers["etag"] == "E5z61QM0lN/U2WsOnusszCTkR8M="
    assert api.req("GET", "/e.json", headers={"X-Firebase-ETag": "true"}).headers["etag"] == "E5z61QM0lN/U2WsOnusszCTkR8M="
    assert "etag" not in api.req("PUT", "/e.json", body=True).headers
    api.put("/e.json", {"foo": "bar"})
    assert api.req("GET", "/e.json", headers={"X-Firebase-ETag": "true"}).headers["etag"] == "XnLeTeWQmzTHImTbSMDLg/qMrKY="
    # POST: the ETag of the pushed data; DELETE: of null.
    r = api.req("POST", "/p.json", body="Hello World", headers={"X-Firebase-ETag": "true"})
    assert r.status == 200 and r.headers["etag"] == "B8HWXc7zXMjrsnJxPRj7wrNGqt4="
    r = api.req("DELETE", "/e.json", headers={"X-Firebase-ETag": "true"})
    assert (r.status, r.headers["etag"]) == (200, "null_etag")
    r = api.req("GET", "/p.json", {"print": "silent"}, headers={"X-Firebase-ETag": "true"})
    assert r.status == 204 and r.headers["etag"] == api.req("GET", "/p.json", headers={"X-Firebase-ETag": "true"}).headers["etag"]


def test_if_match_writes_only_on_a_match(api):
    api.put("/c.json", {"v": 1})
    etag = api.req("GET", "/c.json", headers={"X-Firebase-ETag": "true"}).headers["etag"]
    r = api.req("PUT", "/c.json", body={"v": 2}, headers={"if-match": etag})
    assert (r.status, r.json) == (200, {"v": 2})
    # The old ETag no longer matches: 412, the current value as the body, its ETag as a header.
    before = api.value()
    r = api.req("PUT", "/c.json", body={"v": 3}, headers={"if-match": etag})
    assert r.status == 412, r
    assert r.json == {"v": 2}
    assert r.headers["etag"] == api.req("GET", "/c.json", headers={"X-Firebase-ETag": "true"}).headers["etag"]
    assert api.value() == before
    r = api.req("PUT", "/c.json", body={"v": 3}, headers={"if-match": "not-an-etag"})
    assert (r.status, r.json) == (412, {"v": 2})
    assert api.value() == before
    r = api.req("PUT", "/c.json", body={"v": 3}, headers={"if-match": r.headers["etag"]})
    assert (r.status, r.json) == (200, {"v": 3})


def test_if_match_null_etag_matches_only_an_empty_location(api):
    r = api.req("PUT", "/n.json", body="first", headers={"if-match": "null_etag"})
    assert (r.status, r.json) == (200, "first")
    before = api.value()
    r = api.req("PUT", "/n.json", body="second", headers={"if-match": "null_etag"})
    assert (r.status, r.json, r.headers["etag"]) == (412, "first", api.req("GET", "/n.json", headers={"X-Firebase-ETag": "true"}).headers["etag"])
    assert api.value() == before
    # A 412 for an empty location: null and null_etag.
    api.put("/m.json", 1)
    etag = api.req("GET", "/m.json", headers={"X-Firebase-ETag": "true"}).headers["etag"]
    r = api.req("PUT", "/empty.json", body=1, headers={"if-match": etag})
    assert (r.status, r.json, r.headers["etag"]) == (412, None, "null_etag")
    assert api.value("/empty.json") is None


def test_delete_with_if_match(api):
    api.put("/d.json", {"a": 1})
    before = api.value()
    r = api.req("DELETE", "/d.json", headers={"if-match": "null_etag"})
    assert (r.status, r.json) == (412, {"a": 1}) and r.headers["etag"]
    assert api.value() == before
    r = api.req("DELETE", "/d.json", headers={"if-match": r.headers["etag"]})
    assert (r.status, r.body) == (200, b"null")
    assert api.value("/d.json") is None


def test_if_none_match_answers_304_when_unchanged(api):
    api.put("/g.json", {"a": 1})
    r = api.req("GET", "/g.json", headers={"X-Firebase-ETag": "true"})
    etag = r.headers["etag"]
    r = api.req("GET", "/g.json", headers={"if-none-match": etag})
    assert (r.status, r.body) == (304, b"")
    assert r.headers.get("etag") == etag
    r = api.req("GET", "/g.json", headers={"if-none-match": "other"})
    assert (r.status, r.json, r.headers.get("etag")) == (200, {"a": 1}, etag)
    api.put("/g/a.json", 2)
    r = api.req("GET", "/g.json", headers={"if-none-match": etag})
    assert r.status == 200 and r.json == {"a": 2} and r.headers["etag"] != etag
    r = api.req("GET", "/none.json", headers={"if-none-match": "null_etag"})
    assert (r.status, r.body) == (304, b"")


def test_get_with_if_match_is_refused(api):
    api.put("/g.json", 1)
    api.refused("GET", "/g.json", 400, "if-match is not supported on GET", headers={"if-match": "null_etag"})


# ---------------------------------------------------------------- refused bodies

@pytest.mark.parametrize("body", [b"{", b"{'a': 1}", b"", b"   ", b"[1,", b'{"a":1}x', b"NaN", b"undefined",
                                  b'{"a":1,}', b"\xff\xfe", b'"\xff"', b"01"])
def test_a_body_that_is_not_json_is_refused(api, body):
    api.put("/j.json", {"keep": True})
    api.refused("PUT", "/j.json", 400, body=body, starts=NOT_JSON)
    api.refused("POST", "/j.json", 400, body=body, starts=NOT_JSON)
    api.refused("PATCH", "/j.json", 400, body=body, starts=NOT_JSON)


def test_a_put_without_a_body_is_refused(api):
    api.put("/j.json", 1)
    api.refused("PUT", "/j.json", 400, body=NO_BODY, starts=NOT_JSON)


def test_a_patch_needs_an_object_of_disjoint_child_paths(api):
    api.put("/u.json", {"a": {"b": 1}, "c": 2})
    api.refused("PATCH", "/u.json", 400, "Invalid data; a PATCH needs a JSON object of paths and values.", body=1)
    api.refused("PATCH", "/u.json", 400, "Invalid data; a PATCH needs a JSON object of paths and values.", body="s")
    assert "ancestor" in api.refused("PATCH", "/u.json", 400, body={"a": 1, "a/b": 2})
    api.refused("PATCH", "/u.json", 400, body={"/": 1})
    api.refused("PATCH", "/u.json", 400, body={"ok": 1, "a.b": 2})
    api.refused("PATCH", "/u.json", 400, body={"ok": 1, "x/$y": 2})
    # A good multi-path PATCH: deep keys, null deletes, other children kept.
    r = api.req("PATCH", "/u.json", body={"a/b": 5, "c": None, "d/e": {"f": 1}})
    assert r.status == 200 and r.json == {"a": {"b": 5}, "d": {"e": {"f": 1}}}
    assert api.value("/u.json") == {"a": {"b": 5}, "d": {"e": {"f": 1}}}


BAD_CHARS = [".", "$", "#", "[", "]", "/", "\x00", "\x01", "\x1f", "\x7f"]


@pytest.mark.parametrize("ch", BAD_CHARS, ids=[f"U+{ord(c):04X}" for c in BAD_CHARS])
def test_a_bad_key_in_the_body_is_refused(api, ch):
    api.put("/k.json", {"keep": 1})
    key = f"a{ch}b"
    text = "keys must not contain '.', '$', '#', '[', ']', '/' or control characters"
    assert text in api.refused("PUT", "/k.json", 400, body={"ok": 1, "deep": {key: 1}})
    assert text in api.refused("PUT", "/k.json", 400, body={key: 1})
    assert text in api.refused("POST", "/k.json", 400, body={key: 1})
    assert text in api.refused("PATCH", "/k.json", 400, body={"ok": {key: 1}})
    if ch != "/":                      # in a PATCH key, '/' separates the path's keys
        assert text in api.refused("PATCH", "/k.json", 400, body={"ok": 1, f"x/{key}": 1})


URL_BAD_CHARS = [c for c in BAD_CHARS if c != "/"]


@pytest.mark.parametrize("ch", URL_BAD_CHARS, ids=[f"U+{ord(c):04X}" for c in URL_BAD_CHARS])
def test_a_bad_key_in_the_url_is_refused(api, ch):
    api.put("/k.json", {"keep": 1})
    seg = urllib.parse.quote(f"a{ch}b", safe="")     # '.' stays literal: /k/a.b.json
    for method, body in [("PUT", 1), ("PATCH", {"x": 1}), ("POST", 1), ("DELETE", NO_BODY), ("GET", NO_BODY)]:
        assert "keys must not contain" in api.refused(method, f"/k/{seg}.json", 400, body=body)
        assert "keys must not contain" in api.refused(method, f"/k/{seg}/c.json", 400, body=body)


def test_a_slash_escaped_in_a_segment_is_refused(api):
    api.put("/k.json", {"keep": 1})
    assert api.refused("PUT", "/k/a%2Fb.json", 400, body=1) == "Invalid path '/k/a%2Fb': keys must not contain '/'"


def test_keys_longer_than_768_bytes_are_refused(api):
    api.put("/k.json", {"keep": 1})
    ok = "k" * 700
    api.put(f"/k/{ok}.json", 1)
    assert api.value(f"/k/{ok}.json") == 1
    api.put("/long.json", {"x" * 700: 1, "é" * 350: 2})
    assert api.value("/long.json") == {"x" * 700: 1, "é" * 350: 2}
    for key in ["y" * 769, "é" * 385]:
        assert "keys are at most 768 bytes" in api.refused("PUT", "/k.json", 400, body={key: 1})
        assert "keys are at most 768 bytes" in api.refused("PATCH", "/k.json", 400, body={key: 1})
        assert "keys are at most 768 bytes" in api.refused("POST", "/k.json", 400, body={"a": {key: 1}})
        api.refused("PUT", f"/{urllib.parse.quote(key)}.json", 400, body=1)
        api.refused("GET", f"/{urllib.parse.quote(key)}.json", 400)


def test_a_path_over_768_bytes_made_by_the_bodys_keys_is_refused(api):
    # The URL path /<400>/<400> is refused (a path is at most 768 bytes); a body may not make it
    # either, or the data could never be addressed again.
    a, b = "a" * 400, "b" * 400
    api.put("/keep.json", 1)
    api.refused("PUT", f"/{a}/{b}.json", 400, body=1)
    api.refused("PUT", f"/{a}.json", 400, body={b: 1})
    api.refused("PATCH", "/.json", 400, body={f"{a}/{b}": 1})


def nested(depth, leaf=1):
    v = leaf
    for _ in range(depth):
        v = {"k": v}
    return v


def test_values_deeper_than_32_levels_are_refused(api):
    api.put("/keep.json", 1)
    api.put("/.json", dict(nested(32), keep=1))                       # 32 levels from the root
    assert api.value("/.json") == dict(nested(32), keep=1)
    api.put("/a/b.json", nested(30))                                  # 2 + 30
    deep = "the tree is at most 32 levels deep"
    before = api.value()
    assert deep in api.refused("PUT", "/.json", 400, body=nested(33))
    assert deep in api.refused("PUT", "/a/b.json", 400, body=nested(31))
    assert deep in api.refused("PATCH", "/a.json", 400, body={"b": nested(31)})
    assert deep in api.refused("PATCH", "/.json", 400, body={"a/b/c": nested(30)})
    assert deep in api.refused("POST", "/a.json", 400, body=nested(32))
    path = "/" + "/".join(["p"] * 33) + ".json"
    assert "levels deep" in api.refused("PUT", path, 400, body=1)
    assert api.value() == before


def test_a_body_just_over_the_size_limit_is_write_too_big(api):
    api.put("/big.json", "small")
    fits = json.dumps("x" * (LIMIT - 2)).encode()
    assert len(fits) == LIMIT
    r = api.req("PUT", "/fits.json", body=fits)
    assert r.status == 200, r
    api.req("DELETE", "/fits.json")
    over = json.dumps("x" * (LIMIT - 1)).encode()
    assert len(over) == LIMIT + 1
    api.refused("PUT", "/big.json", 400, TOO_BIG, body=over)
    api.refused("POST", "/big.json", 400, TOO_BIG, body=over)
    patch = json.dumps({"a": "x" * (LIMIT + 1 - len(json.dumps({"a": ""})))}).encode()
    assert len(patch) == LIMIT + 1
    api.refused("PATCH", "/big.json", 400, TOO_BIG, body=patch)


def test_a_body_far_over_the_size_limit_is_400_write_too_big(api):
    # The Realtime Database answers a write too big 400 WRITE_TOO_BIG (TREE-SERVER.md §2.2, §6).
    api.put("/big.json", "small")
    api.refused("PUT", "/big.json", 400, TOO_BIG, body=json.dumps("x" * (3 * LIMIT)).encode())
    api.refused("PATCH", "/big.json", 400, TOO_BIG, body=json.dumps({"a": "x" * (3 * LIMIT)}).encode())


# ---------------------------------------------------------------- methods, statuses

@pytest.mark.parametrize("method", ["OPTIONS", "TRACE", "PROPFIND", "MKCOL"])
def test_an_unknown_method_is_405(api, method):
    api.put("/m.json", 1)
    api.refused(method, "/m.json", 405, f"Method {method} is not supported")


def test_x_http_method_override(api):
    api.put("/o.json", {"a": 1, "b": 2})
    r = api.req("POST", "/o.json", body={"c": 3}, headers={"X-HTTP-Method-Override": "PATCH"})
    assert (r.status, r.json) == (200, {"c": 3})
    assert api.value("/o.json") == {"a": 1, "b": 2, "c": 3}
    r = api.req("POST", "/o.json", body={"z": 0}, headers={"X-HTTP-Method-Override": "PUT"})
    assert (r.status, r.json) == (200, {"z": 0})
    assert api.value("/o.json") == {"z": 0}
    r = api.req("POST", "/o/z.json", headers={"X-HTTP-Method-Override": "DELETE"})
    assert (r.status, r.body) == (200, b"null")
    assert api.value("/o.json") is None
    api.put("/o.json", {"a": 1})
    r = api.req("POST", "/o.json", {"x-http-method-override": "DELETE"})
    assert (r.status, r.body) == (200, b"null")
    assert api.value("/o.json") is None
    api.put("/o.json", {"a": 1})
    r = api.req("POST", "/o.json", {"x-http-method-override": "patch"}, body={"b": 2})
    assert r.status == 200 and api.value("/o.json") == {"a": 1, "b": 2}
    # Overriding to an unknown method: 405, nothing pushed.
    api.refused("POST", "/o.json", 405, body=1, headers={"X-HTTP-Method-Override": "BREW"})


def test_locations_not_ending_in_json_are_404(api):
    api.put("/a.json", 1)
    for method, body in [("GET", NO_BODY), ("PUT", 2), ("DELETE", NO_BODY)]:
        api.refused(method, "/a", 404, "Not Found: a location is addressed as /<path>.json", body=body)
    # Settings other than the rules do not exist (the rules are the admin's: test_rules_rest.py).
    assert api.refused("GET", "/.settings/other.json", 404).startswith("Not Found: '/.settings/other.json'")
    assert api.refused("GET", "/.settings/rules.json", 401) == "Permission denied"


def test_delete_answers_null(api):
    api.put("/d.json", {"a": 1, "b": 2})
    r = api.req("DELETE", "/d/a.json")
    assert (r.status, r.body) == (200, b"null")
    assert api.value("/d.json") == {"b": 2}
    r = api.req("DELETE", "/d/missing.json")
    assert (r.status, r.body) == (200, b"null")
    r = api.req("DELETE", "/.json")
    assert (r.status, r.body) == (200, b"null")
    assert api.value() is None
    r = api.req("PUT", "/e.json", body=None)                          # a PUT of null deletes too
    assert (r.status, r.body) == (200, b"null")


# ---------------------------------------------------------------- namespaces

def test_namespaces_are_isolated(port):
    a, b = Api(port, "a" + uuid.uuid4().hex[:10]), Api(port, "b" + uuid.uuid4().hex[:10])
    a.put("/x.json", {"from": "a"})
    b.put("/x.json", {"from": "b"})
    assert a.value("/x.json") == {"from": "a"} and b.value("/x.json") == {"from": "b"}
    assert a.value() == {"x": {"from": "a"}}
    a.req("DELETE", "/.json")
    assert a.value() is None and b.value() == {"x": {"from": "b"}}
    r = a.req("POST", "/x.json", body=1)
    assert b.value("/x.json") == {"from": "b"} and a.value("/x.json") == {r.json["name"]: 1}
    a.req("PATCH", "/.json", body={"x/y": 2})
    assert b.value() == {"x": {"from": "b"}}
    # Case matters.
    upper = Api(port, a.ns.upper())
    assert upper.value() is None


def test_the_namespace_comes_from_the_host_when_ns_is_absent(port):
    ns = "h" + uuid.uuid4().hex[:10]
    r = call(port, "PUT", "/x.json", body=1, headers={"Host": f"{ns}.localhost:{port}"})
    assert r.status == 200, r
    assert Api(port, ns).value() == {"x": 1}
    # ns= wins over the Host.
    other = "o" + uuid.uuid4().hex[:10]
    r = call(port, "PUT", f"/y.json?ns={other}", body=2, headers={"Host": f"{ns}.localhost:{port}"})
    assert Api(port, other).value() == {"y": 2} and Api(port, ns).value() == {"x": 1}


@pytest.mark.parametrize("bad", ["a.b", "", "x" * 64, "sp ace", "é"])
def test_an_invalid_namespace_is_refused(port, bad):
    before = call(port, "GET", "/.json?ns=ember").body
    r = call(port, "PUT", "/x.json?ns=" + urllib.parse.quote(bad, safe=""), body=1)
    assert r.status == 400 and r.json["error"].startswith(f"Invalid namespace '{bad}'"), r
    assert call(port, "GET", "/.json?ns=ember").body == before


# ---------------------------------------------------------------- connections

def test_one_kept_alive_connection_serves_many_requests(api):
    with Conn(api.port) as c:
        sock = c.socket_id
        p = {"ns": api.ns}
        answers = [
            c.call("PUT", "/k.json", p, {"a": 1}),
            c.call("GET", "/k.json", p),
            c.call("PATCH", "/k.json", p, {"b": 2}),
            c.call("POST", "/k/l.json", p, "x"),
            c.call("GET", "/k.json", dict(p, shallow="true")),
            c.call("PUT", "/k.json", dict(p, print="silent"), {"c": 3}),
            c.call("GET", "/k.json", p, headers={"if-none-match": "null_etag"}),
            c.call("PUT", "/k.json", p, b"{bad"),                       # refused, the connection stays
            c.call("GET", "/k", p),                                      # 404, the connection stays
            c.call("OPTIONS", "/k.json", p),                             # 405, the connection stays
            c.call("GET", "/k.json", p, headers={"if-match": "x"}),
            c.call("PUT", "/k.json", p, {"d": 4}, headers={"if-match": "null_etag"}),
            c.call("DELETE", "/k/d.json", p),
            c.call("GET", "/k.json", p, headers={"X-Firebase-ETag": "true"}),
        ]
        assert c.socket_id == sock
        got = [(r.status, r.body if r.status in (204, 304) else r.json) for r in answers]
        name = answers[3].json["name"]
        etag = answers[13].headers["etag"]
        assert got[:5] == [(200, {"a": 1}), (200, {"a": 1}), (200, {"b": 2}), (200, {"name": name}),
                           (200, {"a": 1, "b": 2, "l": True})]
        assert got[5] == (204, b"")
        assert got[6][0] == 200 and got[6][1] == {"c": 3}
        assert [s for s, _ in got[7:11]] == [400, 404, 405, 400]
        assert got[11] == (412, {"c": 3})
        assert got[12] == (200, None) and got[13] == (200, {"c": 3})
        assert c.call("GET", "/k.json", p, headers={"if-none-match": etag}).status == 304
        assert all(r.headers.get("connection", "keep-alive").lower() == "keep-alive" for r in answers)
        assert c.socket_id == sock


def parse_responses(data):
    """HTTP/1.1 responses with Content-Length bodies (or none: 204/304) from `data`."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
        n = int(headers.get("content-length", "0"))
        out.append((status, headers, rest[:n]))
        data = rest[n:]
    return out


def test_pipelined_requests_are_answered_in_order(api):
    api.put("/p.json", {"a": 1})
    ns = api.ns
    reqs = (f"GET /p.json?ns={ns} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            f"PUT /p/b.json?ns={ns} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n2"
            f"GET /p.json?ns={ns} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            f"DELETE /p/a.json?ns={ns} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            f"GET /p.json?ns={ns} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    got = parse_responses(raw_exchange(api.port, reqs.encode()))
    assert [(s, json.loads(b)) for s, _, b in got] == [(200, {"a": 1}), (200, 2), (200, {"a": 1, "b": 2}),
                                                       (200, None), (200, {"b": 2})]
    assert got[-1][1].get("connection") == "close"


def test_http_1_0_closes_after_the_answer(api):
    api.put("/z.json", 5)
    got = parse_responses(raw_exchange(api.port, f"GET /z.json?ns={api.ns} HTTP/1.0\r\n\r\n".encode()))
    assert len(got) == 1 and got[0][0] == 200 and got[0][2] == b"5"


# ---------------------------------------------------------------- 401 on a server with rules

def test_a_server_with_rules_answers_401_to_all_but_the_admin(tmp_path):
    rules = ("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
             "    match /{document=**} { allow read, write: if true; }\n  }\n}\n")
    admin = "admin-" + secrets.token_hex(16)
    (tmp_path / "r.rules").write_text(rules)
    (tmp_path / "secret").write_text(secrets.token_hex(32))
    (tmp_path / "admin").write_text(admin)
    srv = servers.start_ember(str(tmp_path), memory=True, extra_args=[
        "--rules", str(tmp_path / "r.rules"), "--jwt-secret-file", str(tmp_path / "secret"),
        "--admin-token-file", str(tmp_path / "admin")])
    try:
        port = database_port(srv)
        as_admin = {"Authorization": f"Bearer {admin}"}
        r = call(port, "PUT", "/x.json?ns=g", body={"v": 1}, headers=as_admin)
        assert r.status == 200, r
        # Without tree rules a server with Firestore rules keeps the tree locked to the admin:
        # no token is refused by the rules, a token that is not the admin's and no ID token by
        # its reason, another scheme as a bad header. All 401, nothing changed.
        denied = "Permission denied"
        for headers, query, reason in [({}, "", denied), ({"Authorization": "Bearer owner"}, "", "Invalid ID token: the token is not a JWT"),
                                       ({"Authorization": "Bearer wrong"}, "", "Invalid ID token: the token is not a JWT"),
                                       ({}, "&auth=wrong", "Invalid ID token: the token is not a JWT"),
                                       ({"Authorization": f"Basic {admin}"}, "", "Invalid authorization header: expected 'Bearer <token>'")]:
            for method, body in [("GET", NO_BODY), ("PUT", {"v": 2}), ("PATCH", {"w": 1}), ("POST", 1), ("DELETE", NO_BODY)]:
                r = call(port, method, f"/x.json?ns=g{query}", body=body, headers=headers)
                assert (r.status, r.json) == (401, {"error": reason}), (method, headers, query, r)
        assert call(port, "GET", "/x.json?ns=g", headers=as_admin).json == {"v": 1}
        assert call(port, "GET", f"/x.json?ns=g&auth={admin}").json == {"v": 1}
        assert call(port, "GET", f"/x.json?ns=g&access_token={admin}").json == {"v": 1}
        r = call(port, "PATCH", f"/x.json?ns=g&auth={admin}", body={"w": 2})
        assert r.status == 200 and call(port, "GET", "/x.json?ns=g", headers=as_admin).json == {"v": 1, "w": 2}
    finally:
        srv.stop()
