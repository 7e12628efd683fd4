"""The allow/deny cases of the rules differential test, and the documents they run against.

Responsible for: what is asked (method, path, who, the data written) and what is stored before
each case. The expected outcomes are not written here: record_rules_cases.py asks the Firestore
emulator and records them into Tests/EmberRulesTests/Resources/differential_cases.json.
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
}

ANON = None
ALICE = {"uid": "alice"}
BOB = {"uid": "bob"}
CAROL = {"uid": "carol"}
ADMIN = {"uid": "root", "claims": {"admin": True}}


def _invite(**over):
    d = {"uses": 2, "tags": ["a"], "score": 5}
    d.update(over)
    return d


# (name, method, path, auth, data for create/update)
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
]
