"""A denied Listen target is removed (cause 7) while the stream and its other targets go on.

Responsible for: one Listen stream of a signed-in user on `ember serve --rules`: target 1 (a
public document) reaches CURRENT; target 2 (a document, or a query, the user may not read) gets
TargetChange REMOVE with cause.code 7; then a write to target 1's document still arrives on the
same stream, which stays open and takes a further allowed target; nothing of the denied
document ever arrives. Also with the denied target added first.
"""
import os
import secrets
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from access_streams import TargetChangeType, document_change, target_change  # noqa: E402
from guarded_server import Guarded, rules  # noqa: E402

RULES = rules("""\
    match /pub/{id} {
      allow read: if true;
    }
    match /priv/{id} {
      allow read: if request.auth != null && request.auth.uid == resource.data.owner;
    }
""")
MARK = "PRIVATE-" + secrets.token_hex(8)
CURRENT, REMOVE = TargetChangeType.CURRENT, TargetChangeType.REMOVE


@pytest.fixture(scope="module")
def g():
    with Guarded.running(RULES, seed={"pub/d1": {"v": "one"}, "pub/d2": {"v": "other"},
                         "priv/p1": {"owner": "bob", "payload": MARK}}) as server:
        yield server


DENIED_TARGETS = {
    "document": lambda c: c.doc_target("priv/p1"),
    "query": lambda c: c.query_target("priv"),
    "query_owner_is_bob": lambda c: c.query_target("priv", [["owner", "==", "bob"]]),
}


def await_change(stream, predicate, what):
    got = stream.wait_for(predicate)
    assert got is not None, f"{what} did not arrive: {stream.kinds()}"
    return got


@pytest.mark.parametrize("denied_first", [False, True], ids=["allowed_first", "denied_first"])
@pytest.mark.parametrize("denied", list(DENIED_TARGETS))
def test_denied_target_removed_stream_goes_on(g, denied, denied_first):
    c = g.caller
    stream = c.listen(g.token("alice"))
    try:
        def add_allowed():
            c.add_target(stream, 1, c.doc_target("pub/d1"))
            await_change(stream, target_change(1, CURRENT), "CURRENT for the allowed target 1")

        def add_denied():
            c.add_target(stream, 2, DENIED_TARGETS[denied](c))
            removed = await_change(stream, target_change(2, REMOVE, CURRENT), "a decision on the denied target 2")
            change = removed.target_change
            assert change.target_change_type == REMOVE and change.cause.code == 7, \
                f"target 2: expected REMOVE with cause 7: {stream.kinds()}"

        for step in ((add_denied, add_allowed) if denied_first else (add_allowed, add_denied)):
            step()
        value = "two-" + secrets.token_hex(6)
        g.seed({"pub/d1": {"v": value}})
        await_change(stream, document_change(1, value), "the write to target 1's document")
        c.add_target(stream, 3, c.doc_target("pub/d2"))
        await_change(stream, target_change(3, CURRENT), "CURRENT for a target added after the denial")
        assert stream.end is None, f"the stream ended: {stream.kinds()}"
        assert not stream.leaks(MARK), f"the denied document's data arrived: {stream.kinds()}"
        assert not any(target_change(2, CURRENT)(r) for r in stream.responses), stream.kinds()
    finally:
        stream.close()
