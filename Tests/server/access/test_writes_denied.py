"""Writes under `ember serve --rules`: each written document is decided, and a refusal applies nothing.

Responsible for: a Commit with one allowed and one denied write (PERMISSION_DENIED, and neither is
applied: checked as the admin); a Write stream whose batch is denied (the stream ends with
PERMISSION_DENIED; an allowed batch before it stays applied); BatchWrite (one status per write:
denied ones code 7, allowed ones applied); CreateDocument/UpdateDocument/DeleteDocument each
decided; no token and a bad token. Rules: notes/{id} are created, updated and deleted only by
the uid in their `owner` field. Each test writes documents of its own (ids prefixed by its name).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from access_outcome import DENIED  # noqa: E402
from guarded_server import Guarded, rules  # noqa: E402
from jwts import claims, hs  # noqa: E402

import wire  # noqa: E402  (../rules, put on sys.path by guarded_server)

RULES = rules("""\
    match /notes/{id} {
      allow read: if request.auth != null && resource.data.owner == request.auth.uid;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
      allow update: if request.auth != null && resource.data.owner == request.auth.uid
                    && request.resource.data.owner == request.auth.uid;
      allow delete: if request.auth != null && resource.data.owner == request.auth.uid;
    }
""")


@pytest.fixture(scope="module")
def g():
    with Guarded.running(RULES) as server:
        yield server


def w(g, op, path, data=None):
    return wire.write(op, g.caller.docs, path, data)


def seed_pair(g, prefix):
    """notes/{prefix}-alice (alice's, text v1) and notes/{prefix}-bob (bob's); their paths."""
    mine, theirs = f"notes/{prefix}-alice", f"notes/{prefix}-bob"
    g.seed({mine: {"owner": "alice", "text": "v1"}, theirs: {"owner": "bob", "text": "bob's"}})
    return mine, theirs


def test_commit_allowed_alone_is_applied(g):
    out = g.caller.commit([w(g, "create", "notes/c0-new", {"owner": "alice", "text": "hi"})], g.token("alice"))
    assert out.code == "OK", out
    assert g.admin_get("notes/c0-new") == {"owner": "alice", "text": "hi"}


def test_commit_with_one_denied_create_applies_nothing(g):
    out = g.caller.commit([w(g, "create", "notes/c1-ok", {"owner": "alice"}),
                           w(g, "create", "notes/c1-bad", {"owner": "bob"})], g.token("alice"))
    assert out.code == "PERMISSION_DENIED" and out.message == DENIED, out
    assert g.admin_get("notes/c1-ok") is None, "the allowed write of a refused commit was applied"
    assert g.admin_get("notes/c1-bad") is None


def test_commit_with_allowed_update_and_denied_delete_applies_nothing(g):
    mine, theirs = seed_pair(g, "c2")
    out = g.caller.commit([w(g, "update", mine, {"owner": "alice", "text": "v2"}), w(g, "delete", theirs)],
                          g.token("alice"))
    assert out.code == "PERMISSION_DENIED", out
    assert g.admin_get(mine) == {"owner": "alice", "text": "v1"}, "the allowed update of a refused commit was applied"
    assert g.admin_get(theirs) == {"owner": "bob", "text": "bob's"}, "the denied delete was applied"


def test_commit_denied_write_first_applies_nothing(g):
    mine, theirs = seed_pair(g, "c3")
    out = g.caller.commit([w(g, "set", theirs, {"owner": "alice", "text": "stolen"}),
                           w(g, "set", mine, {"owner": "alice", "text": "v2"})], g.token("alice"))
    assert out.code == "PERMISSION_DENIED", out
    assert g.admin_get(theirs) == {"owner": "bob", "text": "bob's"}
    assert g.admin_get(mine) == {"owner": "alice", "text": "v1"}


@pytest.mark.parametrize("who", ["anonymous", "bad_token"])
def test_commit_without_a_valid_identity(g, who):
    bearer, expected = (None, "PERMISSION_DENIED") if who == "anonymous" else \
        (hs(claims("alice"), b"not-the-server-secret-0123456789"), "UNAUTHENTICATED")
    out = g.caller.commit([w(g, "create", f"notes/c4-{who}", {"owner": "alice"})], bearer)
    assert out.code == expected, out
    assert g.admin_get(f"notes/c4-{who}") is None


def open_write_stream(g, bearer):
    """A Write stream past its handshake, and the stream token to send writes with."""
    stream = g.caller.write_stream(bearer)
    first = stream.wait_for(lambda r: bool(r.stream_token))
    assert first is not None, f"no handshake response on the Write stream: {stream.kinds()}"
    return stream, first.stream_token


def test_write_stream_denied_batch_ends_the_stream(g):
    mine, theirs = seed_pair(g, "s1")
    stream, token = open_write_stream(g, g.token("alice"))
    try:
        g.caller.stream_writes(stream, token, [w(g, "update", mine, {"owner": "alice", "text": "v2"})])
        applied = stream.wait_for(lambda r: len(r.write_results) == 1)
        assert applied is not None, f"the allowed batch got no WriteResponse: {stream.kinds()}"
        g.caller.stream_writes(stream, applied.stream_token,
                               [w(g, "create", "notes/s1-new", {"owner": "alice"}),
                                w(g, "update", theirs, {"owner": "alice", "text": "stolen"})])
        end = stream.wait_end()
        assert end is not None, f"the Write stream stayed open after a denied batch: {stream.kinds()}"
        assert end.code == "PERMISSION_DENIED", f"the Write stream ended with {end}: {stream.kinds()}"
        assert not any(len(r.write_results) == 2 for r in stream.responses), stream.kinds()
    finally:
        stream.close()
    assert g.admin_get(mine) == {"owner": "alice", "text": "v2"}, "the allowed batch before the denied one"
    assert g.admin_get("notes/s1-new") is None, "an allowed write of the denied batch was applied"
    assert g.admin_get(theirs) == {"owner": "bob", "text": "bob's"}


def test_batch_write_reports_each_write(g):
    mine, theirs = seed_pair(g, "b1")
    writes = [w(g, "create", "notes/b1-ok", {"owner": "alice"}),           # allowed
              w(g, "create", "notes/b1-bad", {"owner": "bob"}),            # denied
              w(g, "update", mine, {"owner": "alice", "text": "v2"}),       # allowed
              w(g, "delete", theirs)]                                      # denied
    out = g.caller.batch_write(writes, g.token("alice"))
    assert out.code == "OK", out
    codes = [s.code for s in out.responses[0].status]
    assert codes == [0, 7, 0, 7], f"BatchWrite statuses {codes}: {out}"
    assert g.admin_get("notes/b1-ok") == {"owner": "alice"}
    assert g.admin_get("notes/b1-bad") is None
    assert g.admin_get(mine) == {"owner": "alice", "text": "v2"}
    assert g.admin_get(theirs) == {"owner": "bob", "text": "bob's"}


def test_create_update_delete_document_each_decided(g):
    mine, theirs = seed_pair(g, "d1")
    alice = g.token("alice")
    out = g.caller.create_document("notes", "d1-bad", {"owner": "bob"}, alice)
    assert out.code == "PERMISSION_DENIED", f"CreateDocument for bob: {out}"
    assert g.admin_get("notes/d1-bad") is None
    out = g.caller.create_document("notes", "d1-ok", {"owner": "alice"}, alice)
    assert out.code == "OK", f"CreateDocument for alice: {out}"
    out = g.caller.update_document(theirs, {"owner": "alice", "text": "stolen"}, alice)
    assert out.code == "PERMISSION_DENIED", f"UpdateDocument of bob's: {out}"
    out = g.caller.update_document(mine, {"owner": "alice", "text": "v2"}, alice)
    assert out.code == "OK", f"UpdateDocument of alice's: {out}"
    out = g.caller.delete_document(theirs, alice)
    assert out.code == "PERMISSION_DENIED", f"DeleteDocument of bob's: {out}"
    out = g.caller.delete_document("notes/d1-ok", alice)
    assert out.code == "OK", f"DeleteDocument of alice's: {out}"
    assert g.admin_get(theirs) == {"owner": "bob", "text": "bob's"}
    assert g.admin_get(mine) == {"owner": "alice", "text": "v2"}
    assert g.admin_get("notes/d1-ok") is None
