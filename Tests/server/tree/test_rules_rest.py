"""Tree security rules and callers on `ember serve`'s tree port (issue 28).

Responsible for: the rules deciding REST reads, writes and streams from outside, with the
callers the Realtime Database knows: the admin (`Bearer owner` on a loopback server) and its
`auth_variable_override` (through firebase_admin's `databaseAuthVariableOverride`), ID tokens in
`Authorization`, `auth=` and `access_token=`, bad tokens (401 with a reason), signed-out callers;
`GET/PUT /.settings/rules.json` (source with comments, `format=strict`, errors, kept across a
restart); "Index not defined"; query rules; streams cancelled when the rules stop allowing the
read and revoked when the token expires; a non-loopback host refused without tree rules.
"""
import json
import os
import secrets
import sys
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "access"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "rules"))
import servers  # noqa: E402
from jwts import claims, hs, now  # noqa: E402
from tree_http import EventStream, database_port, request  # noqa: E402

firebase_admin = pytest.importorskip("firebase_admin", reason="firebase-admin is installed by the Makefile's server venv")
from firebase_admin import db, exceptions  # noqa: E402

PROJECT = "demo-tree"
RULES = """
// Issue 28's rules for these tests: comments are allowed and kept.
{
  "rules": {
    /* users: each reads and writes their own */
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth != null && auth.uid === $uid",
        "age": {".validate": "newData.isNumber() && newData.val() >= 0"}
      }
    },
    "public": {".read": true, ".write": "auth != null"},
    "rooms": {"$room": {".read": "data.child('open').val() === true", ".write": true}},
    "baskets": {
      ".read": "auth != null && query.orderByChild === 'owner' && query.equalTo === auth.uid",
      ".indexOn": ["owner"],
      ".write": true
    },
    "dinosaurs": {".read": true, ".write": true, ".indexOn": ["height"]},
    "role": {".read": "auth != null && auth.role === 'editor'"}
  }
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    d = str(tmp_path_factory.mktemp("tree-rules"))
    secret = secrets.token_hex(32).encode()
    with open(os.path.join(d, "tree.rules.json"), "w") as f:
        f.write(RULES)
    with open(os.path.join(d, "secret"), "wb") as f:
        f.write(secret)
    srv = servers.start_ember(d, extra_args=["--database-rules", os.path.join(d, "tree.rules.json"),
                                             "--jwt-secret-file", os.path.join(d, "secret")])
    srv.secret = secret
    srv.dport = database_port(srv)
    yield srv
    srv.stop()


def token(server, uid, **over):
    return hs(claims(uid, project=PROJECT, **over), server.secret)


def ns_path(path, ns=PROJECT):
    sep = "&" if "?" in path else "?"
    return f"{path}{sep}ns={ns}"


def admin_put(server, path, value):
    status, _, body = request(server.dport, "PUT", ns_path(path), value, token="owner")
    assert status == 200, body


def test_signed_out_and_signed_in_reads(server):
    admin_put(server, "/users/alice.json", {"name": "Alice", "age": 30})
    assert request(server.dport, "GET", ns_path("/users/alice.json"))[0:3:2] == (401, {"error": "Permission denied"})
    status, _, body = request(server.dport, "GET", ns_path("/users/alice.json"), token=token(server, "alice"))
    assert (status, body) == (200, {"name": "Alice", "age": 30})
    assert request(server.dport, "GET", ns_path("/users/alice.json"), token=token(server, "bob"))[0] == 401
    # Rules are not filters: the list itself is nobody's but the admin's.
    assert request(server.dport, "GET", ns_path("/users.json"), token=token(server, "alice"))[0] == 401
    assert request(server.dport, "GET", ns_path("/users.json"), token="owner")[0] == 200


def test_token_in_auth_and_access_token_parameters(server):
    admin_put(server, "/users/carol.json", {"name": "C"})
    t = token(server, "carol")
    assert request(server.dport, "GET", ns_path(f"/users/carol.json?auth={t}"))[0] == 200
    assert request(server.dport, "GET", ns_path(f"/users/carol.json?access_token={t}"))[0] == 200


@pytest.mark.parametrize("make, reason", [
    (lambda s: "not-a-jwt", "not a JWT"),
    (lambda s: token(s, "alice", exp=now() - 120), "expired"),
    (lambda s: hs(claims("alice", project=PROJECT), b"another-secret-0123456789"), "does not verify"),
    (lambda s: token(s, "alice", aud="other-project"), "audience"),
    (lambda s: token(s, "alice", iss="https://securetoken.google.com/other"), "issuer"),
])
def test_bad_tokens_are_401_with_a_reason(server, make, reason):
    status, _, body = request(server.dport, "GET", ns_path("/public.json"), token=make(server))
    assert status == 401 and reason in body["error"], body


def test_tokens_for_the_default_rtdb_namespace(server):
    ns = f"{PROJECT}-default-rtdb"
    status, _, _ = request(server.dport, "PUT", f"/public/x.json?ns={ns}", 1, token=token(server, "alice"))
    assert status == 200


def test_writes_are_granted_and_validated(server):
    t = token(server, "dave")
    assert request(server.dport, "PUT", ns_path("/users/dave.json"), {"name": "D", "age": 5}, token=t)[0] == 200
    # .validate refuses a negative age; the write changes nothing.
    status, _, body = request(server.dport, "PATCH", ns_path("/users/dave.json"), {"age": -1, "name": "X"}, token=t)
    assert (status, body) == (401, {"error": "Permission denied"})
    assert request(server.dport, "GET", ns_path("/users/dave.json"), token=t)[2] == {"name": "D", "age": 5}
    # Someone else's node.
    assert request(server.dport, "PUT", ns_path("/users/dave/age.json"), 6, token=token(server, "eve"))[0] == 401
    # Signed out may not write public; signed in may.
    assert request(server.dport, "POST", ns_path("/public/posts.json"), {"t": 1})[0] == 401
    assert request(server.dport, "POST", ns_path("/public/posts.json"), {"t": 1}, token=t)[0] == 200
    # A delete: granted, and validate skipped for the null.
    assert request(server.dport, "DELETE", ns_path("/users/dave/age.json"), token=t)[0] == 200


def test_data_dependent_read(server):
    admin_put(server, "/rooms/r1.json", {"open": True, "topic": "x"})
    admin_put(server, "/rooms/r2.json", {"open": False, "topic": "y"})
    assert request(server.dport, "GET", ns_path("/rooms/r1.json"))[0] == 200
    assert request(server.dport, "GET", ns_path("/rooms/r2.json"))[0] == 401


def test_query_rules(server):
    admin_put(server, "/baskets.json", {"b1": {"owner": "alice"}, "b2": {"owner": "bob"}})
    t = token(server, "alice")
    ok = '/baskets.json?orderBy=%22owner%22&equalTo=%22alice%22'
    status, _, body = request(server.dport, "GET", ns_path(ok), token=t)
    assert (status, body) == (200, {"b1": {"owner": "alice"}})
    assert request(server.dport, "GET", ns_path('/baskets.json?orderBy=%22owner%22&equalTo=%22bob%22'), token=t)[0] == 401
    assert request(server.dport, "GET", ns_path("/baskets.json"), token=t)[0] == 401


def test_index_not_defined(server):
    admin_put(server, "/dinosaurs.json", {"a": {"height": 3, "weight": 1}, "b": {"height": 1, "weight": 2}})
    status, _, body = request(server.dport, "GET", ns_path('/dinosaurs.json?orderBy=%22weight%22&limitToFirst=1'), token="owner")
    assert status == 400
    assert body == {"error": 'Index not defined, add ".indexOn": "weight", for path "/dinosaurs", to the rules'}
    status, _, body = request(server.dport, "GET", ns_path('/dinosaurs.json?orderBy=%22$value%22'), token="owner")
    assert status == 400 and '".indexOn": ".value"' in body["error"]
    status, _, body = request(server.dport, "GET", ns_path('/dinosaurs.json?orderBy=%22height%22&limitToFirst=1'), token="owner")
    assert (status, body) == (200, {"b": {"height": 1, "weight": 2}})
    # $key needs no index.
    assert request(server.dport, "GET", ns_path('/dinosaurs.json?orderBy=%22$key%22'), token="owner")[0] == 200


@pytest.fixture
def admin_app(server):
    def make(override=None, with_override=False):
        name = "a" + uuid.uuid4().hex[:10]
        os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{server.dport}"
        options = {"databaseURL": f"https://{PROJECT}.firebaseio.com", "projectId": PROJECT}
        if with_override:
            options["databaseAuthVariableOverride"] = override
        app = firebase_admin.initialize_app(options=options, name=name)
        made.append(app)
        return db.reference("/", app=app)
    made = []
    yield make
    for app in made:
        firebase_admin.delete_app(app)


def test_firebase_admin_index_error_and_override(server, admin_app):
    root = admin_app()
    root.child("dinosaurs").set({"a": {"height": 3, "weight": 1}})
    with pytest.raises(exceptions.InvalidArgumentError) as e:
        root.child("dinosaurs").order_by_child("weight").get()
    assert 'Index not defined, add ".indexOn": "weight", for path "/dinosaurs", to the rules' in str(e.value)
    assert list(root.child("dinosaurs").order_by_child("height").limit_to_first(1).get().keys()) == ["a"]
    # auth_variable_override: the rules run with that auth.
    alice = admin_app({"uid": "alice"}, with_override=True)
    root.child("users/alice").set({"name": "Alice"})
    assert alice.child("users/alice").get() == {"name": "Alice"}
    with pytest.raises(exceptions.UnauthenticatedError) as e:
        alice.child("users/bob").get()
    assert "Permission denied" in str(e.value)
    with pytest.raises(exceptions.UnauthenticatedError):
        alice.child("users/bob").set({"name": "B"})
    editor = admin_app({"uid": "x", "role": "editor"}, with_override=True)
    root.child("role").set("r")
    assert editor.child("role").get() == "r"
    # None: signed out.
    nobody = admin_app(None, with_override=True)
    with pytest.raises(exceptions.UnauthenticatedError):
        nobody.child("role").get()
    nobody.child("public").get()       # public is readable by anyone: no exception
    with pytest.raises(exceptions.UnauthenticatedError):
        nobody.child("public/x").set(1)


def test_override_is_only_for_the_admin(server):
    t = token(server, "alice")
    status, _, body = request(server.dport, "GET", ns_path('/public.json?auth_variable_override=%7B%22uid%22:%22x%22%7D'), token=t)
    assert status == 401 and "only for the admin" in body["error"]


def test_rules_endpoint(server):
    ns = "rules" + uuid.uuid4().hex[:8]
    status, _, body = request(server.dport, "GET", f"/.settings/rules.json?ns={ns}", token="owner")
    assert status == 200 and "// Issue 28's rules" in body        # the source, comments and all
    status, _, body = request(server.dport, "GET", f"/.settings/rules.json?ns={ns}&format=strict", token="owner")
    assert status == 200 and body["rules"]["public"] == {".read": True, ".write": "auth != null"}
    assert request(server.dport, "GET", f"/.settings/rules.json?ns={ns}", token=token(server, "alice"))[0] == 401
    assert request(server.dport, "GET", f"/.settings/rules.json?ns={ns}")[0] == 401
    # Refused sources: 400 with the reason; the rules in force stay.
    for bad, reason in [("{", "not valid JSON"), ('{"rules": {".read": "foo"}}', "unknown variable 'foo'"),
                        ('{"rules": {".raed": true}}', "unknown rule '.raed'")]:
        status, _, body = request(server.dport, "PUT", f"/.settings/rules.json?ns={ns}", bad, token="owner")
        assert status == 400 and body["error"].startswith("Error saving rules") and reason in body["error"], body
    new = '{"rules": {/* everyone reads */ ".read": true}}'
    status, _, body = request(server.dport, "PUT", f"/.settings/rules.json?ns={ns}", new, token="owner")
    assert (status, body) == (200, {"status": "ok"})
    assert request(server.dport, "GET", f"/.settings/rules.json?ns={ns}", token="owner")[2] == new
    assert request(server.dport, "GET", f"/anything.json?ns={ns}")[0] == 200
    assert request(server.dport, "PUT", f"/anything.json?ns={ns}", 1)[0] == 401
    # Only this namespace changed.
    assert request(server.dport, "GET", ns_path("/anything.json"))[0] == 401
    assert request(server.dport, "PUT", f"/.settings/rules.json?ns={ns}", new, token=token(server, "alice"))[0] == 401


def test_stream_cancelled_when_rules_change(server):
    ns = "s" + uuid.uuid4().hex[:8]
    assert request(server.dport, "PUT", f"/.settings/rules.json?ns={ns}", '{"rules": {"a": {".read": true, ".write": true}}}', token="owner")[0] == 200
    with EventStream(server.dport, f"/a.json?ns={ns}") as s:
        assert s.status == 200
        assert s.next_event() == ("put", '{"path":"/","data":null}')
        assert request(server.dport, "PUT", f"/a/x.json?ns={ns}", 1)[0] == 200
        assert json.loads(s.next_event()[1]) == {"path": "/x", "data": 1}
        assert request(server.dport, "PUT", f"/.settings/rules.json?ns={ns}", '{"rules": {"a": {".read": false}}}', token="owner")[0] == 200
        assert s.next_event() == ("cancel", '"Permission denied"')
        assert s.finished()
    # Refused from the start: 401 before any event.
    with EventStream(server.dport, f"/a.json?ns={ns}") as s:
        assert s.status == 401


def test_stream_cancelled_when_data_stops_allowing(server):
    admin_put(server, "/rooms/live.json", {"open": True, "n": 0})
    with EventStream(server.dport, ns_path("/rooms/live.json")) as s:
        assert json.loads(s.next_event()[1]) == {"path": "/", "data": {"open": True, "n": 0}}
        admin_put(server, "/rooms/live/n.json", 1)
        assert json.loads(s.next_event()[1]) == {"path": "/n", "data": 1}
        admin_put(server, "/rooms/live/open.json", False)
        # The write that closed the room is not sent: the read is refused on the tree after it.
        assert s.next_event() == ("cancel", '"Permission denied"')
        assert s.finished()


def test_stream_revoked_when_the_token_expires(server):
    admin_put(server, "/users/fay.json", {"name": "F"})
    t = token(server, "fay", exp=now() + 2)
    with EventStream(server.dport, ns_path("/users/fay.json"), token=t, timeout=15) as s:
        assert s.status == 200
        assert json.loads(s.next_event()[1])["data"] == {"name": "F"}
        name, data = s.next_event(timeout=15)
        assert (name, data) == ("auth_revoked", "credential is no longer valid")
        assert s.finished()


def test_non_loopback_host_needs_tree_rules(tmp_path):
    from guarded_server import launch
    rules = tmp_path / "fs.rules"
    rules.write_text("rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { } }\n")
    out = launch(str(tmp_path), ["--host", "0.0.0.0", "--port", "0", "--insecure", "--rules", str(rules), "--memory"])
    assert out.srv is None and "--database-rules" in out.log, out


def test_tree_port_speaks_tls_with_the_servers_certificate(tmp_path):
    """With --tls-cert/--tls-key the tree port is HTTPS: a client trusting the certificate reads
    and writes; a plaintext request gets no HTTP answer."""
    import http.client
    import ssl
    import certs
    if certs.CERTS_MISSING:
        pytest.fail(certs.CERTS_MISSING, pytrace=False)
    cert, key = certs.self_signed(str(tmp_path))
    srv = servers.start_ember(str(tmp_path), memory=True, extra_args=["--tls-cert", cert, "--tls-key", key])
    try:
        port = database_port(srv)
        ctx = ssl.create_default_context(cafile=cert)
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        conn.request("PUT", "/a.json?ns=tls", body="1", headers={"Authorization": "Bearer owner"})
        r = conn.getresponse()
        assert (r.status, r.read()) == (200, b"1")
        conn.request("GET", "/a.json?ns=tls", headers={"Authorization": "Bearer owner"})
        assert conn.getresponse().read() == b"1"
        conn.close()
        with pytest.raises((http.client.HTTPException, ConnectionError, OSError)):
            status, _, _ = request(port, "GET", "/a.json?ns=tls", token="owner", timeout=5)
            raise ConnectionError(f"a plaintext request was answered: {status}")
    finally:
        srv.stop()


def test_a_namespaces_rules_survive_a_restart(tmp_path):
    """Rules set with PUT /.settings/rules.json are kept in the store: after a restart on the same
    file they are still the namespace's, comments and all, and still decide."""
    store = str(tmp_path / "data.ember")
    rules = '{"rules": {/* kept */ "pub": {".read": true}}}'
    srv = servers.start_ember(str(tmp_path), store_path=store)
    try:
        port = database_port(srv)
        assert request(port, "PUT", "/.settings/rules.json?ns=keep", rules, token="owner")[0] == 200
        assert request(port, "PUT", "/pub/x.json?ns=keep", 1, token="owner")[0] == 200
    finally:
        srv.stop()
    srv = servers.start_ember(str(tmp_path), store_path=store)
    try:
        port = database_port(srv)
        assert request(port, "GET", "/.settings/rules.json?ns=keep", token="owner")[2] == rules
        assert request(port, "GET", "/pub/x.json?ns=keep")[0:3:2] == (200, 1)
        assert request(port, "PUT", "/pub/x.json?ns=keep", 2)[0] == 401
        # Another namespace still has the server's default (open on loopback).
        assert request(port, "PUT", "/pub/x.json?ns=other", 2)[0] == 200
    finally:
        srv.stop()
