"""A protected document is read by its owner only, by every read RPC `ember serve --rules` has.

Responsible for: one server (rules: /secret/{id} readable and writable only by the uid in its
`owner` field) seeded as the admin with one document; four intruders (no token, a token forged
with another secret, an expired token, a valid token of another user) each try every read path:
GetDocument, BatchGetDocuments, ListDocuments, RunQuery (no filter; owner == victim),
RunAggregationQuery (count), a collection-group RunQuery, ListCollectionIds, Listen (a documents
target and a query target) and a transaction (BeginTransaction, then BatchGet in it). Each must
be refused: PERMISSION_DENIED "Missing or insufficient permissions." for a valid identity (a
Listen target: REMOVE with cause 7), UNAUTHENTICATED "Invalid ID token: ..." for a bad token;
and no response of a refused call may carry the document's data. The owner reads it by Get,
Query (owner == self) and Listen; collection-group queries and ListCollectionIds are the admin's.
"""
import os
import secrets
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from access_calls import Caller  # noqa: E402
from access_outcome import DENIED  # noqa: E402
from guarded_server import Guarded, rules  # noqa: E402
from jwts import claims, hs, now  # noqa: E402

RULES = rules("""\
    match /secret/{id} {
      allow read, write: if request.auth != null && request.auth.uid == resource.data.owner;
    }
""")
VICTIM = "victim"
MARK = "TOP-SECRET-" + secrets.token_hex(8)      # the protected document's data
DOC = "secret/s1"


@pytest.fixture(scope="module")
def g():
    with Guarded.running(RULES, seed={DOC: {"owner": VICTIM, "payload": MARK}}) as server:
        yield server


# Each intruder: (its bearer for server g, the code every read must end with, the message part).
INTRUDERS = {
    "anonymous": (lambda g: None, "PERMISSION_DENIED", DENIED),
    "forged": (lambda g: hs(claims(VICTIM), b"not-the-server-secret-0123456789"), "UNAUTHENTICATED", "Invalid ID token"),
    "expired": (lambda g: g.token(VICTIM, iat=now() - 3720, exp=now() - 120), "UNAUTHENTICATED", "Invalid ID token"),
    "other_user": (lambda g: g.token("mallory"), "PERMISSION_DENIED", DENIED),
}


def transaction_read(g, bearer, expected):
    """BeginTransaction, then BatchGetDocuments in it (rolled back after). A bad token is refused
    at BeginTransaction already; a valid identity begins and is refused at the read."""
    begun = g.caller.begin(bearer)
    if expected == "UNAUTHENTICATED" or begun.code != "OK":
        assert expected == "UNAUTHENTICATED" or begun.code == "OK", f"BeginTransaction: {begun}"
        return begun
    tx = begun.responses[0].transaction
    try:
        return g.caller.batch_get([DOC], bearer, transaction=tx)
    finally:
        g.caller.rollback(tx, g.admin)


READS = {
    "GetDocument": lambda g, b, e: g.caller.get(DOC, b),
    "BatchGetDocuments": lambda g, b, e: g.caller.batch_get([DOC], b),
    "ListDocuments": lambda g, b, e: g.caller.list_documents("secret", b),
    "RunQuery": lambda g, b, e: g.caller.run_query(Caller.query("secret"), b),
    "RunQuery_owner_is_victim": lambda g, b, e: g.caller.run_query(
        Caller.query("secret", [["owner", "==", VICTIM]]), b),
    "RunAggregationQuery_count": lambda g, b, e: g.caller.count(Caller.query("secret"), b),
    "RunAggregationQuery_count_owner_is_victim": lambda g, b, e: g.caller.count(
        Caller.query("secret", [["owner", "==", VICTIM]]), b),
    "RunQuery_collection_group": lambda g, b, e: g.caller.run_query(
        Caller.query("secret", all_descendants=True), b),
    "ListCollectionIds": lambda g, b, e: g.caller.list_collection_ids(b),
    "Listen_documents_target": lambda g, b, e: g.caller.listen_once(b, g.caller.doc_target(DOC)),
    "Listen_query_target": lambda g, b, e: g.caller.listen_once(b, g.caller.query_target("secret")),
    "Listen_query_target_owner_is_victim": lambda g, b, e: g.caller.listen_once(
        b, g.caller.query_target("secret", [["owner", "==", VICTIM]])),
    "Transaction_BatchGet": transaction_read,
}


@pytest.mark.parametrize("read", list(READS))
@pytest.mark.parametrize("intruder", list(INTRUDERS))
def test_intruder_reads_nothing(g, intruder, read):
    bearer_of, expected, message = INTRUDERS[intruder]
    out = READS[read](g, bearer_of(g), expected)
    assert not out.leaks(MARK), f"{intruder} {read}: the protected data came back: {out}"
    assert out.code == expected, f"{intruder} {read}: expected {expected}, got {out}"
    if not read.startswith("Listen"):        # a Listen REMOVE's cause message is not specified
        assert message in out.message, f"{intruder} {read}: expected {message!r} in the message, got {out}"


def test_owner_reads_by_get(g):
    out = g.caller.get(DOC, g.token(VICTIM))
    assert out.code == "OK" and out.leaks(MARK), out


def test_owner_reads_by_query_on_own_uid(g):
    out = g.caller.run_query(Caller.query("secret", [["owner", "==", VICTIM]]), g.token(VICTIM))
    assert out.code == "OK", out
    found = [r.document.name for r in out.responses if r.document.name]
    assert found == [g.caller.name(DOC)] and out.leaks(MARK), out


def test_owner_counts_by_query_on_own_uid(g):
    out = g.caller.count(Caller.query("secret", [["owner", "==", VICTIM]]), g.token(VICTIM))
    assert out.code == "OK", out
    assert [r.result.aggregate_fields["n"].integer_value for r in out.responses if "n" in r.result.aggregate_fields] == [1]


@pytest.mark.parametrize("kind", ["documents", "query_owner_is_self"])
def test_owner_reads_by_listen(g, kind):
    target = g.caller.doc_target(DOC) if kind == "documents" else \
        g.caller.query_target("secret", [["owner", "==", VICTIM]])
    out = g.caller.listen_once(g.token(VICTIM), target)
    assert out.code == "OK", out
    assert out.leaks(MARK), f"CURRENT came without the document: {out}"


def test_owner_cannot_query_the_collection_group_nor_list_collection_ids(g):
    out = g.caller.run_query(Caller.query("secret", all_descendants=True), g.token(VICTIM))
    assert out.code == "PERMISSION_DENIED" and not out.leaks(MARK), out
    out = g.caller.list_collection_ids(g.token(VICTIM))
    assert out.code == "PERMISSION_DENIED", out


def test_admin_queries_the_collection_group_and_lists_collection_ids(g):
    out = g.caller.run_query(Caller.query("secret", all_descendants=True), g.admin)
    assert out.code == "OK" and out.leaks(MARK), out
    out = g.caller.list_collection_ids(g.admin)
    assert out.code == "OK", out
    assert out.responses == ["secret"], out           # the pager yields the ids
