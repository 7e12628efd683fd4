"""The allow/deny cases of the rules differential test, and the documents they run against.

Responsible for: what is asked (method, path, who, the data written, a query's filters, a
batch's writes) and what is stored before each case. The expected outcomes are not written here:
record_rules_cases.py asks the Firestore emulator and records them into
Tests/EmberRulesTests/Resources/differential_cases.json.

A case is `(name, method, path, auth, data)` or `(name, method, path, auth, data, extra)`:
- method get/create/update/delete: one document at `path`; `data` the whole new document.
- method list: a runQuery on the collection `path`; `extra` = where(...) adds filters and a limit.
- method commit: `path` is "" and `extra` = batch(...): several writes in one commit, denied as
  a whole when any write is denied.
- method listen: a Listen target on the document `path` (get rules) or on the collection `path`
  (list rules, with where(...) as for list).
- a list or listen case with the extra GROUP is a collection-group query on the last segment of
  `path` (every collection with that id, at any depth), run under the documents root.

    ("notes list own", "list", "notes", ALICE, None, where(("owner", "==", "alice")))
"""

SEED = {
    "users/alice": {"name": "Alice", "age": 30, "email": "a@x"},
    "users/bob": {"name": "Bob", "age": 40},
    "users/alice/private/n1": {"text": "secret"},
    "public/p1": {"title": "hello"},
    "posts/p1": {"author": "alice", "title": "Hi", "published": True},
    "posts/p2": {"author": "alice", "title": "Draft", "published": False},
    "posts/p3": {"author": "bob", "title": "Bobs", "published": False},
    "groups/g1": {"members": ["alice", "carol"]},
    "groups/g1/messages/m1": {"from": "alice", "text": "hi"},
    "invites/abcdef": {"x": 1},
    "notes/n1": {"owner": "alice", "tag": "x", "n": 1},
    "notes/n2": {"owner": "bob", "tag": "x", "n": 2},
    "notes/n3": {"owner": "alice", "tag": "y", "n": 3},
    "limited/l1": {"v": 1},
    "limited/l2": {"v": 2},
    "scores/s1": {"points": 10},
    "scores/s2": {"points": 150},
    "teams/t1": {"members": ["alice", "bob"]},
    "teams/t2": {"members": ["carol"]},
    "posts/p1/comments/c1": {"visible": True, "by": "alice"},
    "posts/p1/comments/c2": {"visible": False, "by": "bob"},
    "comments/top": {"visible": True, "by": "carol"},
    "forums/f1": {"name": "x"},
    "forums/f1/threads/t1": {"title": "t"},
    "forums/f1/threads/t1/replies/r1": {"x": 1},
}

ANON = None
ALICE = {"uid": "alice"}
BOB = {"uid": "bob"}
CAROL = {"uid": "carol"}
ADMIN = {"uid": "root", "claims": {"admin": True}}
DAVE = {"uid": "dave"}          # signed in, no users/ document
FAY_F1 = {"uid": "fay", "claims": {"forum": "f1"}}
GUS_F2 = {"uid": "gus", "claims": {"forum": "f2"}}
GROUP = {"group": True}         # extra of a list/listen case: a collection-group query


def _invite(**over):
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


# Lists with filters: a list rule must hold for every document the query could return, so the
# outcome depends on the filters, not on what is stored.
QUERY_CASES = [
    ("notes get own", "get", "notes/n1", ALICE, None),
    ("notes get other's", "get", "notes/n2", ALICE, None),
    ("notes get anon", "get", "notes/n1", ANON, None),
    ("notes get missing", "get", "notes/zz", ALICE, None),
    ("notes list no filter", "list", "notes", ALICE, None),
    ("notes list own", "list", "notes", ALICE, None, where(("owner", "==", "alice"))),
    ("notes list other's", "list", "notes", ALICE, None, where(("owner", "==", "bob"))),
    ("notes list own as anon", "list", "notes", ANON, None, where(("owner", "==", "alice"))),
    ("notes list own in", "list", "notes", ALICE, None, where(("owner", "in", ["alice"]))),
    ("notes list own or other's in", "list", "notes", ALICE, None, where(("owner", "in", ["alice", "bob"]))),
    ("notes list own and tag", "list", "notes", ALICE, None, where(("owner", "==", "alice"), ("tag", "==", "x"))),
    ("notes list own and range", "list", "notes", ALICE, None, where(("owner", "==", "alice"), ("n", "<", 3))),
    ("notes list tag only", "list", "notes", ALICE, None, where(("tag", "==", "x"))),
    ("notes list own limit 1", "list", "notes", ALICE, None, where(("owner", "==", "alice"), limit=1)),
    ("notes list bob own and range", "list", "notes", BOB, None, where(("n", ">", 0), ("owner", "==", "bob"))),
    ("notes list not other's", "list", "notes", ALICE, None, where(("owner", "!=", "bob"))),
    ("notes list owner range", "list", "notes", ALICE, None, where(("owner", ">=", "alice"))),
    ("limited get anon", "get", "limited/l1", ANON, None),
    ("limited list limit 5", "list", "limited", ANON, None, where(limit=5)),
    ("limited list limit 10", "list", "limited", ANON, None, where(limit=10)),
    ("limited list limit 20", "list", "limited", ANON, None, where(limit=20)),
    ("limited list no limit", "list", "limited", ANON, None),
    ("limited list filter and limit 5", "list", "limited", ALICE, None, where(("v", "==", 1), limit=5)),
    ("scores get anon", "get", "scores/s1", ANON, None),
    ("scores list no filter", "list", "scores", ANON, None),
    ("scores list points < 50", "list", "scores", ANON, None, where(("points", "<", 50))),
    ("scores list points < 100", "list", "scores", ANON, None, where(("points", "<", 100))),
    ("scores list points < 200", "list", "scores", ANON, None, where(("points", "<", 200))),
    ("scores list points > 10", "list", "scores", ANON, None, where(("points", ">", 10))),
    ("scores list points == 20", "list", "scores", ANON, None, where(("points", "==", 20))),
    ("scores list points == 150", "list", "scores", ANON, None, where(("points", "==", 150))),
    ("scores list points in [1, 2]", "list", "scores", ANON, None, where(("points", "in", [1, 2]))),
    ("teams list no filter", "list", "teams", ALICE, None),
    ("teams list own membership", "list", "teams", ALICE, None, where(("members", "array-contains", "alice"))),
    ("teams list other's membership", "list", "teams", ALICE, None, where(("members", "array-contains", "bob"))),
    ("teams list membership anon", "list", "teams", ANON, None, where(("members", "array-contains", "alice"))),
    ("post list published anon", "list", "posts", ANON, None, where(("published", "==", True))),
    ("post list drafts anon", "list", "posts", ANON, None, where(("published", "==", False))),
    ("post list published in anon", "list", "posts", ANON, None, where(("published", "in", [True]))),
    ("post list published limit anon", "list", "posts", ANON, None, where(("published", "==", True), limit=1)),
    ("post list published bob", "list", "posts", BOB, None, where(("published", "==", True))),
    ("post list title anon", "list", "posts", ANON, None, where(("title", "==", "Hi"))),
    ("post list own author", "list", "posts", ALICE, None, where(("author", "==", "alice"))),
    ("post list own drafts", "list", "posts", ALICE, None, where(("author", "==", "alice"), ("published", "==", False))),
    ("post list other author", "list", "posts", ALICE, None, where(("author", "==", "bob"))),
    ("public list filter anon", "list", "public", ANON, None, where(("title", "==", "hello"))),
    ("user list filter alice", "list", "users", ALICE, None, where(("name", "==", "Alice"))),
    ("user list filter admin", "list", "users", ADMIN, None, where(("age", ">", 18))),
    ("private list filter self", "list", "users/alice/private", ALICE, None, where(("text", "==", "secret"))),
    ("message list filter member", "list", "groups/g1/messages", CAROL, None, where(("from", "==", "alice"))),
    ("message list filter non-member", "list", "groups/g1/messages", BOB, None, where(("from", "==", "alice"))),
    ("message list missing group", "list", "groups/g2/messages", ALICE, None),
]

# Several writes in one commit: all are allowed or the commit is denied (nothing written).
BATCH_CASES = [
    ("batch empty anon", "commit", "", ANON, None, batch()),
    ("batch public creates admin", "commit", "", ADMIN, None,
     batch(("create", "public/p2", {"title": "a"}), ("create", "public/p3", {"title": "b"}))),
    ("batch public creates alice", "commit", "", ALICE, None,
     batch(("create", "public/p2", {"title": "a"}), ("create", "public/p3", {"title": "b"}))),
    ("batch public set anon", "commit", "", ANON, None, batch(("set", "public/p2", {"title": "a"}))),
    ("batch post create and update", "commit", "", ALICE, None,
     batch(("create", "posts/p4", {"author": "alice", "title": "Hello", "published": True}),
           ("update", "posts/p2", {"author": "alice", "title": "Now", "published": True}))),
    ("batch post create and foreign delete", "commit", "", ALICE, None,
     batch(("create", "posts/p4", {"author": "alice", "title": "Hello", "published": True}),
           ("delete", "posts/p3", None))),
    ("batch admin deletes", "commit", "", ADMIN, None,
     batch(("delete", "users/bob", None), ("delete", "posts/p3", None), ("delete", "public/p1", None))),
    ("batch own and missing post deletes", "commit", "", BOB, None,
     batch(("delete", "posts/p3", None), ("delete", "posts/nope", None))),
    ("batch private set and message", "commit", "", ALICE, None,
     batch(("set", "users/alice/private/n2", {"text": "t"}), ("create", "groups/g1/messages/m2", {"from": "alice", "text": "yo"}))),
    ("batch message and group set", "commit", "", ALICE, None,
     batch(("create", "groups/g1/messages/m2", {"from": "alice", "text": "yo"}), ("set", "groups/g1", {"members": ["alice"]}))),
    ("batch three blocks allowed", "commit", "", CAROL, None,
     batch(("create", "users/carol", {"name": "Carol", "age": 20}), ("create", "invites/xyz", _invite()),
           ("create", "groups/g1/messages/m3", {"from": "carol", "text": "hey"}))),
    ("batch three blocks last denied", "commit", "", CAROL, None,
     batch(("create", "users/carol", {"name": "Carol", "age": 20}), ("create", "invites/xyz", _invite()),
           ("create", "public/p2", {"title": "a"}))),
    ("batch set existing user self", "commit", "", ALICE, None,
     batch(("set", "users/alice", {"name": "Al", "age": 30, "email": "a@x"}))),
    ("batch set drops email", "commit", "", ALICE, None, batch(("set", "users/alice", {"name": "Alice", "age": 30}))),
    ("batch set new user", "commit", "", CAROL, None, batch(("set", "users/carol", {"name": "Carol", "age": 20}))),
]

# A Listen target: on a document the get rule decides, on a query the list rule.
LISTEN_CASES = [
    ("listen public doc anon", "listen", "public/p1", ANON, None),
    ("listen user doc self", "listen", "users/alice", ALICE, None),
    ("listen user doc other", "listen", "users/alice", BOB, None),
    ("listen missing post", "listen", "posts/nope", ALICE, None),
    ("listen message via get()", "listen", "groups/g1/messages/m1", CAROL, None),
    ("listen published post doc anon", "listen", "posts/p1", ANON, None),
    ("listen draft post doc anon", "listen", "posts/p2", ANON, None),
    ("listen own note doc", "listen", "notes/n1", ALICE, None),
    ("listen group doc member", "listen", "groups/g1", ALICE, None),
    ("listen invite via exists()", "listen", "invites/abcdef", ALICE, None),
    ("listen invite via exists() no profile", "listen", "invites/abcdef", CAROL, None),
    ("listen messages member via get()", "listen", "groups/g1/messages", CAROL, None, where(("from", "==", "alice"))),
    ("listen messages non-member", "listen", "groups/g1/messages", BOB, None),
    ("listen users admin", "listen", "users", ADMIN, None),
    ("listen notes own", "listen", "notes", ALICE, None, where(("owner", "==", "alice"))),
    ("listen notes no filter", "listen", "notes", ALICE, None),
    ("listen posts published anon", "listen", "posts", ANON, None, where(("published", "==", True))),
    ("listen posts drafts anon", "listen", "posts", ANON, None, where(("published", "==", False))),
    ("listen limited limit 20", "listen", "limited", ANON, None, where(limit=20)),
    ("listen limited limit 5", "listen", "limited", ANON, None, where(limit=5)),
]

# Recursive wildcards in the middle of a match path (/{path=**}/comments/{id}: zero or more
# segments before `comments`) or at its end (/forums/{forumId}/{rest=**}), and collection-group
# queries (GROUP), which a rule allows only through a path that starts with a recursive wildcard.
WILDCARD_CASES = [
    ("comment get visible nested anon", "get", "posts/p1/comments/c1", ANON, None),
    ("comment get invisible nested anon", "get", "posts/p1/comments/c2", ANON, None),
    ("comment get root-level anon", "get", "comments/top", ANON, None),
    ("comment get missing nested anon", "get", "posts/p1/comments/zz", ANON, None),
    ("comment create nested by author", "create", "posts/p1/comments/c3", ALICE, {"visible": True, "by": "alice"}),
    ("comment create nested as other", "create", "posts/p1/comments/c3", ALICE, {"visible": True, "by": "bob"}),
    ("comment create nested anon", "create", "posts/p1/comments/c3", ANON, {"visible": True, "by": "alice"}),
    ("comment create deep under missing parents", "create", "a/b/c/d/comments/c9", BOB, {"visible": False, "by": "bob"}),
    ("comment update nested by author", "update", "posts/p1/comments/c1", ALICE, {"visible": True, "by": "alice"}),
    ("comment list nested visible anon", "list", "posts/p1/comments", ANON, None, where(("visible", "==", True))),
    ("comment list nested no filter anon", "list", "posts/p1/comments", ANON, None),
    ("comment list root-level visible anon", "list", "comments", ANON, None, where(("visible", "==", True))),
    ("comment group visible anon", "list", "comments", ANON, None, where(("visible", "==", True)), GROUP),
    ("comment group no filter anon", "list", "comments", ANON, None, GROUP),
    ("comment group invisible alice", "list", "comments", ALICE, None, where(("visible", "==", False)), GROUP),
    ("comment group visible limit anon", "list", "comments", ANON, None, where(("visible", "==", True), limit=1), GROUP),
    ("comment group via nested path visible anon", "list", "posts/p1/comments", ANON, None,
     where(("visible", "==", True)), GROUP),
    ("unmatched group admin", "list", "widgets", ADMIN, None, GROUP),
    ("forum replies group own forum", "list", "replies", FAY_F1, None, GROUP),
    ("forum reply get own forum", "get", "forums/f1/threads/t1/replies/r1", FAY_F1, None),
    ("forum reply get other forum", "get", "forums/f1/threads/t1/replies/r1", GUS_F2, None),
    ("forum reply get anon", "get", "forums/f1/threads/t1/replies/r1", ANON, None),
    ("forum doc get own forum (rest zero segments)", "get", "forums/f1", FAY_F1, None),
    ("forum doc get other forum", "get", "forums/f1", GUS_F2, None),
    ("forum threads list own forum", "list", "forums/f1/threads", FAY_F1, None),
    ("forum threads list other forum", "list", "forums/f1/threads", GUS_F2, None),
    ("forum replies list own forum", "list", "forums/f1/threads/t1/replies", FAY_F1, None),
    ("forums list with forum claim", "list", "forums", FAY_F1, None),
    ("forum reply create own forum", "create", "forums/f1/threads/t1/replies/r2", FAY_F1, {"x": 2}),
    ("listen comment group visible anon", "listen", "comments", ANON, None, where(("visible", "==", True)), GROUP),
    ("listen comment group no filter anon", "listen", "comments", ANON, None, GROUP),
    ("listen forum threads own forum", "listen", "forums/f1/threads", FAY_F1, None),
]

# (name, method, path, auth, data for create/update[, extra])
CASES = [
    ("public get anon", "get", "public/p1", ANON, None),
    ("public list anon", "list", "public", ANON, None),
    ("public create anon", "create", "public/p2", ANON, {"title": "x"}),
    ("public create admin", "create", "public/p2", ADMIN, {"title": "x"}),
    ("public update alice", "update", "public/p1", ALICE, {"title": "y"}),
    ("public delete admin", "delete", "public/p1", ADMIN, None),

    ("user get anon", "get", "users/alice", ANON, None),
    ("user get self", "get", "users/alice", ALICE, None),
    ("user get other", "get", "users/alice", BOB, None),
    ("user get admin", "get", "users/alice", ADMIN, None),
    ("user list alice", "list", "users", ALICE, None),
    ("user list admin", "list", "users", ADMIN, None),
    ("user create valid", "create", "users/carol", CAROL, {"name": "Carol", "age": 20}),
    ("user create too young", "create", "users/carol", CAROL, {"name": "Carol", "age": 12}),
    ("user create extra key", "create", "users/carol", CAROL, {"name": "Carol", "age": 20, "role": "admin"}),
    ("user create empty name", "create", "users/carol", CAROL, {"name": "", "age": 20}),
    ("user create age string", "create", "users/carol", CAROL, {"name": "Carol", "age": "20"}),
    ("user create age float", "create", "users/carol", CAROL, {"name": "Carol", "age": 20.5}),
    ("user create for other", "create", "users/carol", BOB, {"name": "Carol", "age": 20}),
    ("user create anon", "create", "users/carol", ANON, {"name": "Carol", "age": 20}),
    ("user update name and age", "update", "users/alice", ALICE, {"name": "Alicia", "age": 31, "email": "a@x"}),
    ("user update email", "update", "users/alice", ALICE, {"name": "Alice", "age": 30, "email": "new@x"}),
    ("user update drops email", "update", "users/alice", ALICE, {"name": "Alice", "age": 30}),
    ("user update other", "update", "users/alice", BOB, {"name": "Alicia", "age": 31, "email": "a@x"}),
    ("user delete self", "delete", "users/alice", ALICE, None),
    ("user delete admin", "delete", "users/bob", ADMIN, None),

    ("private get self", "get", "users/alice/private/n1", ALICE, None),
    ("private get other", "get", "users/alice/private/n1", BOB, None),
    ("private create self deep", "create", "users/alice/private/n1/deep/d2", ALICE, {"text": "more"}),
    ("private create other", "create", "users/alice/private/n1/deep/d2", BOB, {"text": "more"}),
    ("private list self", "list", "users/alice/private", ALICE, None),
    ("private list other", "list", "users/alice/private", BOB, None),

    ("post get published anon", "get", "posts/p1", ANON, None),
    ("post get draft anon", "get", "posts/p2", ANON, None),
    ("post get draft author", "get", "posts/p2", ALICE, None),
    ("post get draft other", "get", "posts/p3", ALICE, None),
    ("post list anon", "list", "posts", ANON, None),
    ("post list alice", "list", "posts", ALICE, None),
    ("post create published", "create", "posts/p4", ALICE, {"author": "alice", "title": "Hello", "published": True}),
    ("post create published lowercase", "create", "posts/p4", ALICE, {"author": "alice", "title": "hello", "published": True}),
    ("post create draft lowercase", "create", "posts/p4", ALICE, {"author": "alice", "title": "hello", "published": False}),
    ("post create as other author", "create", "posts/p4", ALICE, {"author": "bob", "title": "Hello", "published": True}),
    ("post create long title", "create", "posts/p4", ALICE, {"author": "alice", "title": "A" * 25, "published": True}),
    ("post create anon", "create", "posts/p4", ANON, {"author": "alice", "title": "Hello", "published": True}),
    ("post update author", "update", "posts/p2", ALICE, {"author": "alice", "title": "Now", "published": True}),
    ("post update change author", "update", "posts/p2", ALICE, {"author": "bob", "title": "Now", "published": True}),
    ("post update not author", "update", "posts/p3", ALICE, {"author": "bob", "title": "Now", "published": True}),
    ("post delete author", "delete", "posts/p3", BOB, None),
    ("post delete not author", "delete", "posts/p3", ALICE, None),
    ("post delete admin", "delete", "posts/p3", ADMIN, None),
    ("post delete missing", "delete", "posts/nope", ALICE, None),

    ("group get member", "get", "groups/g1", ALICE, None),
    ("group get non-member", "get", "groups/g1", BOB, None),
    ("message get member via get()", "get", "groups/g1/messages/m1", CAROL, None),
    ("message get non-member", "get", "groups/g1/messages/m1", BOB, None),
    ("message get anon", "get", "groups/g1/messages/m1", ANON, None),
    ("message list member", "list", "groups/g1/messages", CAROL, None),
    ("message create member", "create", "groups/g1/messages/m2", ALICE, {"from": "alice", "text": "yo"}),
    ("message create as other", "create", "groups/g1/messages/m2", ALICE, {"from": "carol", "text": "yo"}),
    ("message update member", "update", "groups/g1/messages/m1", ALICE, {"from": "alice", "text": "edited"}),
    ("message get missing group", "get", "groups/g2/messages/m1", ALICE, None),

    ("invite get with profile", "get", "invites/abcdef", ALICE, None),
    ("invite get without profile", "get", "invites/abcdef", CAROL, None),
    ("invite get anon", "get", "invites/abcdef", ANON, None),
    ("invite get uppercase code", "get", "invites/ABCDEF", ALICE, None),
    ("invite create valid", "create", "invites/xyz", ALICE, _invite()),
    ("invite create odd uses", "create", "invites/xyz", ALICE, _invite(uses=3)),
    ("invite create uses string", "create", "invites/xyz", ALICE, _invite(uses="2")),
    ("invite create forbidden tags", "create", "invites/xyz", ALICE, _invite(tags=["x", "y", "a"])),
    ("invite create no tag", "create", "invites/xyz", ALICE, _invite(tags=["c"])),
    ("invite create low score", "create", "invites/xyz", ALICE, _invite(score=4.5)),
    ("invite create long note", "create", "invites/xyz", ALICE, _invite(note="this is too long")),
    ("invite create short note", "create", "invites/xyz", ALICE, _invite(note="ok")),

    ("unmatched get admin", "get", "other/x", ADMIN, None),
    ("unmatched create admin", "create", "other/x", ADMIN, {"a": 1}),

    # More single-document cases over the blocks above.
    ("public list admin", "list", "public", ADMIN, None),
    ("public update admin", "update", "public/p1", ADMIN, {"title": "z"}),
    ("public delete alice", "delete", "public/p1", ALICE, None),
    ("user get missing self", "get", "users/dave", DAVE, None),
    ("user create age 13", "create", "users/carol", CAROL, {"name": "Carol", "age": 13}),
    ("user create no age", "create", "users/carol", CAROL, {"name": "Carol"}),
    ("user create with email", "create", "users/carol", CAROL, {"name": "Carol", "age": 20, "email": "c@x"}),
    ("user update age only", "update", "users/alice", ALICE, {"name": "Alice", "age": 31, "email": "a@x"}),
    ("user update adds key", "update", "users/alice", ALICE, {"name": "Alice", "age": 30, "email": "a@x", "role": "x"}),
    ("user update anon", "update", "users/alice", ANON, {"name": "Alicia", "age": 30, "email": "a@x"}),
    ("user delete other", "delete", "users/alice", BOB, None),
    ("user delete anon", "delete", "users/alice", ANON, None),
    ("user delete missing admin", "delete", "users/zed", ADMIN, None),
    ("private delete self", "delete", "users/alice/private/n1", ALICE, None),
    ("private delete other", "delete", "users/alice/private/n1", BOB, None),
    ("private get admin", "get", "users/alice/private/n1", ADMIN, None),
    ("private list deep self", "list", "users/alice/private/n1/deep", ALICE, None),
    ("post get own draft bob", "get", "posts/p3", BOB, None),
    ("post get missing anon", "get", "posts/nope", ANON, None),
    ("post create title 20", "create", "posts/p4", ALICE, {"author": "alice", "title": "A" * 20, "published": True}),
    ("post create title 21", "create", "posts/p4", ALICE, {"author": "alice", "title": "A" * 21, "published": True}),
    ("post create no title", "create", "posts/p4", ALICE, {"author": "alice", "published": True}),
    ("post update unpublish", "update", "posts/p1", ALICE, {"author": "alice", "title": "Hi", "published": False}),
    ("post delete anon", "delete", "posts/p2", ANON, None),
    ("group get carol", "get", "groups/g1", CAROL, None),
    ("group get anon", "get", "groups/g1", ANON, None),
    ("group get missing", "get", "groups/g2", ALICE, None),
    ("group create admin", "create", "groups/g2", ADMIN, {"members": ["root"]}),
    ("message get missing member", "get", "groups/g1/messages/zz", ALICE, None),
    ("message create non-member", "create", "groups/g1/messages/m2", BOB, {"from": "bob", "text": "yo"}),
    ("message create text 99", "create", "groups/g1/messages/m2", ALICE, {"from": "alice", "text": "t" * 99}),
    ("message create text 100", "create", "groups/g1/messages/m2", ALICE, {"from": "alice", "text": "t" * 100}),
    ("message delete member", "delete", "groups/g1/messages/m1", ALICE, None),
    ("invite get bob", "get", "invites/abcdef", BOB, None),
    ("invite get short code", "get", "invites/abcde", ALICE, None),
    ("invite get missing code", "get", "invites/zzzzzz", ALICE, None),
    ("invite create anon", "create", "invites/xyz", ANON, _invite()),
    ("invite create score 4.6", "create", "invites/xyz", ALICE, _invite(score=4.6)),
    ("invite create score 4", "create", "invites/xyz", ALICE, _invite(score=4)),
    ("invite create note 9", "create", "invites/xyz", ALICE, _invite(note="123456789")),
    ("invite create note 10", "create", "invites/xyz", ALICE, _invite(note="1234567890")),
    ("invite create tag b", "create", "invites/xyz", ALICE, _invite(tags=["b"])),
    ("invite create tags x y", "create", "invites/xyz", ALICE, _invite(tags=["x", "y"])),
    ("invite create tags a x", "create", "invites/xyz", ALICE, _invite(tags=["a", "x"])),
    ("invite create uses 0", "create", "invites/xyz", ALICE, _invite(uses=0)),
    ("invite create uses -2", "create", "invites/xyz", ALICE, _invite(uses=-2)),
    ("invite create uses 2.0", "create", "invites/xyz", ALICE, _invite(uses=2.0)),
    ("invite update", "update", "invites/abcdef", ALICE, {"x": 2}),
    ("invite delete", "delete", "invites/abcdef", ALICE, None),
] + QUERY_CASES + BATCH_CASES + LISTEN_CASES + WILDCARD_CASES
