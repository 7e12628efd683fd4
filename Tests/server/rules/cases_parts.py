"""What the rules cases are built from: who asks, and the builders of a case's extras.

Responsible for: the identities a case runs as (ANON is unauthenticated; the others are ID
tokens with a uid and custom claims, see tokens.py), the `extra` builders of list/listen/commit
cases (where, batch, GROUP), the invites/ document builder two case files share, and unpack,
which turns a case tuple into the dict the runners read. The cases themselves are in cases.py
and cases_queries.py; nothing here imports them.

    ("notes list own", "list", "notes", ALICE, None, where(("owner", "==", "alice")))
    unpack(("g", "list", "comments", ANON, None, GROUP))["group"]  # True
"""

ANON = None
ALICE = {"uid": "alice"}
BOB = {"uid": "bob"}
CAROL = {"uid": "carol"}
ADMIN = {"uid": "root", "claims": {"admin": True}}
DAVE = {"uid": "dave"}          # signed in, no users/ document
FAY_F1 = {"uid": "fay", "claims": {"forum": "f1"}}
GUS_F2 = {"uid": "gus", "claims": {"forum": "f2"}}
GROUP = {"group": True}         # extra of a list/listen case: a collection-group query


def invite(**over):
    """An invites/ document: uses 2, tags ["a"], score 5, with `over` replacing or adding keys."""
    d = {"uses": 2, "tags": ["a"], "score": 5}
    d.update(over)
    return d


def where(*filters, limit=None):
    """The `extra` of a list/listen case: (field, op, value) filters, ANDed, and a limit."""
    query = {"where": [list(f) for f in filters]}
    if limit is not None:
        query["limit"] = limit
    return {"query": query}


def batch(*writes):
    """The `extra` of a commit case: (op, path, data) writes, op create/update/set/delete."""
    return {"writes": [{"op": op, "path": path, "data": data} for op, path, data in writes]}


def unpack(case):
    """A case as a dict: name, method, path, auth, data, and query or writes when it has them."""
    name, method, path, auth, data, *extra = case
    out = {"name": name, "method": method, "path": path, "auth": auth, "data": data}
    for e in extra:
        out.update(e)
    return out
