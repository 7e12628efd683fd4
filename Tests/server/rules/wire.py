"""The requests of the rules cases in Firestore's v1 JSON form, for REST and (parsed) for gRPC.

Responsible for: turning a case's values, writes and query into the JSON the REST API takes
(camelCase, as in the v1 reference); grpc_rules.py parses the very same JSON into protos, so the
recorder (REST) and the server test (gRPC) send the same requests.

    value(3)                                         # {"integerValue": "3"}
    write("create", DOCS, "posts/p4", {"a": 1})      # update + currentDocument.exists false
    structured_query("notes", {"where": [["owner", "==", "alice"]], "limit": 5})
    case_query({"path": "posts/p1/comments", "group": True})   # ("", {"from": [{..., "allDescendants": True}]})

Write ops: `create` (currentDocument.exists false), `update` (exists true; the whole document, no
mask, so request.resource.data is the data given), `set` (no precondition), `delete` (none).
A query's filters are ANDed (one fieldFilter, or a compositeFilter AND). A case with
`"group": true` is a collection-group query: from = [{collectionId: the last segment of its path,
allDescendants: true}], run under the documents root.
"""

OPS = {"==": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS_THAN", "<=": "LESS_THAN_OR_EQUAL",
       ">": "GREATER_THAN", ">=": "GREATER_THAN_OR_EQUAL", "in": "IN", "not-in": "NOT_IN",
       "array-contains": "ARRAY_CONTAINS", "array-contains-any": "ARRAY_CONTAINS_ANY"}


def value(v):
    if v is None:
        return {"nullValue": None}
    if isinstance(v, bool):
        return {"booleanValue": v}
    if isinstance(v, int):
        return {"integerValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    if isinstance(v, dict):
        return {"mapValue": {"fields": {k: value(x) for k, x in v.items()}}}
    raise TypeError(v)


def fields(data):
    return {k: value(x) for k, x in data.items()}


def write(op, docs, path, data):
    """One Write; `docs` is "projects/P/databases/D/documents"."""
    name = f"{docs}/{path}"
    if op == "delete":
        return {"delete": name}
    w = {"update": {"name": name, "fields": fields(data)}}
    if op in ("create", "update"):
        w["currentDocument"] = {"exists": op == "update"}
    elif op != "set":
        raise ValueError(f"unknown write op {op!r}")
    return w


def case_writes(case):
    """The (op, path, data) writes a create/update/delete/commit case sends in one commit."""
    if case["method"] == "commit":
        return [(w["op"], w["path"], w["data"]) for w in case["writes"]]
    return [(case["method"], case["path"], case["data"])]


def split_collection(path):
    """("users/alice", "private") for "users/alice/private"; ("", "posts") for "posts"."""
    parent, _, coll = path.rpartition("/")
    return parent, coll


def case_query(case):
    """(parent, structuredQuery) of a list case or a listen case on a query; parent is relative
    to the documents root ("" for the root itself, always so for a collection group)."""
    parent, coll = split_collection(case["path"])
    group = bool(case.get("group"))
    return ("" if group else parent), structured_query(coll, case.get("query"), group=group)


def structured_query(collection_id, query, group=False):
    """A structuredQuery on one collection (every collection with that id when `group`) with the
    case's filters (ANDed) and limit."""
    sq = {"from": [{"collectionId": collection_id, "allDescendants": True} if group
                   else {"collectionId": collection_id}]}
    filters = [{"fieldFilter": {"field": {"fieldPath": f}, "op": OPS[op], "value": value(v)}}
               for f, op, v in (query or {}).get("where", [])]
    if len(filters) == 1:
        sq["where"] = filters[0]
    elif filters:
        sq["where"] = {"compositeFilter": {"op": "AND", "filters": filters}}
    if (query or {}).get("limit") is not None:
        sq["limit"] = query["limit"]
    return sq
