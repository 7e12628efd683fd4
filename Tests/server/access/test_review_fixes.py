"""What a security review of the rules found, each fixed and checked end to end on `ember serve`.

Responsible for: (1) a documents Listen target is decided again as its document changes: a
target allowed on a missing document (`resource == null`) is removed with PERMISSION_DENIED when
someone else creates it, and none of its data arrives; (2) ListDocuments is a query with no
filter, so `resource == null` does not allow it; (3) `request.time` is the commit's time, so a
rule comparing a server timestamp with it allows the write; (4) an UpdateDocument by a caller
who may write but not read answers with the name and times only.
"""
import os
import secrets
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from access_streams import TargetChangeType, target_change  # noqa: E402
from guarded_server import Guarded, rules  # noqa: E402

RULES = rules("""\
    match /notes/{id} {
      allow get: if resource == null || resource.data.owner == request.auth.uid;
      allow list: if resource == null || resource.data.owner == request.auth.uid;
      allow create: if request.resource.data.owner == request.auth.uid;
    }
    match /stamped/{id} {
      allow create: if request.auth != null && request.resource.data.at == request.time;
    }
    match /drop/{id} {
      allow update: if request.auth != null;
    }
""")
MARK = "SECRET-" + secrets.token_hex(8)
CURRENT, REMOVE = TargetChangeType.CURRENT, TargetChangeType.REMOVE


@pytest.fixture(scope="module")
def g():
    with Guarded.running(RULES) as server:
        yield server


def test_a_document_target_is_decided_again_when_its_document_changes(g):
    c = g.caller
    stream = c.listen(g.token("mallory"))
    try:
        c.add_target(stream, 1, c.doc_target("notes/x"))
        assert stream.wait_for(target_change(1, CURRENT)) is not None, stream.kinds()
        assert c.commit([{"update": {"name": c.name("notes/x"), "fields": {
            "owner": {"stringValue": "alice"}, "text": {"stringValue": MARK}}}}], g.token("alice")).code == "OK"
        removed = stream.wait_for(target_change(1, REMOVE))
        assert removed is not None and removed.target_change.cause.code == 7, stream.kinds()
        assert not stream.leaks(MARK), f"the document arrived: {stream.kinds()}"
    finally:
        stream.close()


def test_list_documents_is_a_query_with_no_filter(g):
    g.seed({"notes/y": {"owner": "alice", "text": MARK}})
    out = g.caller.list_documents("notes", g.token("mallory"))
    assert out.code == "PERMISSION_DENIED", out
    assert MARK not in str(out.responses)


def test_request_time_is_the_commit_time(g):
    c = g.caller
    w = {"update": {"name": c.name("stamped/s1"), "fields": {}},
         "updateTransforms": [{"fieldPath": "at", "setToServerValue": "REQUEST_TIME"}],
         "currentDocument": {"exists": False}}
    assert c.commit([w], g.token("alice")).code == "OK"
    assert c.commit([dict(w, update={"name": c.name("stamped/s2"), "fields": {}})], None).code == "PERMISSION_DENIED"


def test_an_update_without_read_answers_no_fields(g):
    g.seed({"drop/d1": {"hidden": MARK}})
    out = g.caller.update_document("drop/d1", {"hidden": MARK, "n": 1}, g.token("mallory"))
    assert out.code == "OK", out
    doc = out.responses[0]
    assert dict(doc.fields) == {} and doc.name.endswith("drop/d1"), doc


PRE_RULES = rules("""\
    match /pre/{id} {
      allow create, update: if request.resource.data.ok == true;
    }
""")


def test_the_write_rule_decides_before_a_precondition():
    # As the emulator: a refused write is PERMISSION_DENIED even where its precondition fails
    # (which would tell whether the document exists); an allowed one gets the precondition's error.
    with Guarded.running(PRE_RULES, seed={"pre/a": {"v": 1}}) as server:
        c = server.caller
        alice = server.token("alice")

        def write(path, exists, ok):
            fields = {"ok": {"booleanValue": True}} if ok else {}
            return c.commit([{"update": {"name": c.name(path), "fields": fields}, "currentDocument": {"exists": exists}}], alice).code
        assert write("pre/a", False, False) == "PERMISSION_DENIED"
        assert write("pre/zz", True, False) == "PERMISSION_DENIED"
        assert write("pre/a", False, True) == "ALREADY_EXISTS"
        assert write("pre/zz", True, True) == "NOT_FOUND"
