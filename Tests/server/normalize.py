"""Turning what google-cloud-firestore returns into plain data that two servers can be compared on.

Responsible for: values (`plain`), errors (`err`: gRPC code name and a canonical message), query
results (`ids`, `docs`), listener event sequences (`Recorder`), and the registry of scenarios
(`@scenario`). A scenario is `f(db, p) -> JSON-able data`: `db` a client on a project of its own,
`p` a collection-name prefix of its own. Whatever differs between runs (times, generated ids, the
project and prefix) must not reach the result: times become facts about them (present, ordered,
equal to the commit time), and the runner replaces the project and prefix in every string.

    @scenario
    def my_case(db, p):
        c = db.collection(p + "c")
        c.document("a").set({"x": 1.0})
        return {"doc": plain(c.document("a").get().to_dict()),          # {"x": "double:1.0"}
                "bad": err(lambda: c.document("a").create({}))}         # ["ALREADY_EXISTS", "..."]

Numbers keep their kind: an int stays a JSON integer, a double becomes "double:<repr>" (so that
1 and 1.0, or -0.0 and 0.0, never compare equal by accident); results are compared as canonical
JSON text, so true and 1 differ too.
"""
import datetime
import re
import threading

from google.api_core import exceptions as gexc
from google.cloud import firestore

SCENARIOS = {}


def scenario(f):
    """Registers `f` under its name (the test id)."""
    assert f.__name__ not in SCENARIOS, f.__name__
    SCENARIOS[f.__name__] = f
    return f


# ---------------------------------------------------------------------------------------- values

def plain(v, server_times=False):
    """A Firestore value (as the client decodes it) as JSON-able data that keeps its type.
    server_times: every timestamp is a server's (SERVER_TIMESTAMP) and becomes "server-time"."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return "double:" + repr(v)
    if isinstance(v, dict):
        return {k: plain(x, server_times) for k, x in sorted(v.items())}
    if isinstance(v, (list, tuple)):
        return [plain(x, server_times) for x in v]
    if isinstance(v, datetime.datetime):
        if server_times:
            return "server-time"
        # Only for times the scenario wrote itself: server times are never passed here.
        return "time:" + (v.rfc3339() if hasattr(v, "rfc3339") else v.isoformat())
    if isinstance(v, bytes):
        return "bytes:" + v.hex()
    if isinstance(v, firestore.DocumentReference):
        return "ref:" + v.path
    if isinstance(v, firestore.GeoPoint):
        return {"geo": [plain(float(v.latitude)), plain(float(v.longitude))]}
    if type(v).__name__ == "Vector":
        return {"vector": [plain(float(x)) for x in v]}
    raise TypeError(f"no plain form for {type(v).__name__}: {v!r}")


def at_commit(t, commit_time):
    """Whether a SERVER_TIMESTAMP value `t` is the time of the commit that wrote it.

    Emulator quirk: its server timestamps are a millisecond clock reading taken just before the
    commit (08:56:25.118000 for a commit at 08:56:25.119064), where Cloud Firestore stores the
    commit time itself. Both pass: t at most 1 s before the commit time, never after it."""
    return datetime.timedelta(0) <= commit_time - t < datetime.timedelta(seconds=1)


def data(snap, server_times=False):
    """A snapshot as [id, fields] ([id, None] when the document does not exist)."""
    return [snap.id, plain(snap.to_dict(), server_times) if snap.exists else None]


def ids(query):
    """The ids of a query's results, in order (stream: RunQuery)."""
    return [d.id for d in query.stream()]


def docs(query):
    """The ids and fields of a query's results, in order."""
    return [data(d) for d in query.stream()]


# ---------------------------------------------------------------------------------------- errors

_ROOT = "projects/{project}/databases/(default)/documents/"

# The emulator reports a few write failures in its storage layer's words (Datastore entities),
# where Cloud Firestore says "No document to update: projects/.../documents/c/a" and "Document
# already exists: ...". These rules rewrite the emulator's wording as Firestore's, so that ember
# serve is held to the production messages.
_ENTITY_ELEMENT = re.compile(r'Element \{\s*type: "((?:[^"\\]|\\.)*)"\s*name: "((?:[^"\\]|\\.)*)"\s*\}')
_NO_ENTITY = re.compile(r'^no entity to update: app: "dev~([^"]*)"')
_ENTITY_EXISTS = re.compile(r"^entity already exists: EntityRef\{partitionRef=dev~([^,]*), path=/(.*)\}$", re.S)


def canonical_message(message):
    """The message with the emulator's internal wording replaced by Cloud Firestore's."""
    m = _NO_ENTITY.match(message)
    if m:
        path = "/".join(f"{t}/{n}" for t, n in _ENTITY_ELEMENT.findall(message))
        return "No document to update: " + _ROOT.format(project=m.group(1)) + path
    m = _ENTITY_EXISTS.match(message)
    if m:
        return "Document already exists: " + _ROOT.format(project=m.group(1)) + m.group(2)
    return message.strip()


def error_of(e, message=True):
    """An exception as [code, message]: a gRPC status code name for a server error, "client:Type"
    for an error the client library raised before sending anything. With message=False the
    message is left out (where the emulator's wording is its own and Firestore's unknown)."""
    if isinstance(e, gexc.GoogleAPICallError):
        code = e.grpc_status_code.name if e.grpc_status_code is not None else type(e).__name__
        text = canonical_message(e.message or "")
    elif isinstance(e, gexc.RetryError):
        # A retried call that ran out of time: the last error is what the server said.
        return error_of(e.cause, message) if e.cause is not None else ["RetryError"]
    else:
        # The client's messages may show an object's repr: "<...DocumentReference object at 0x7f...>".
        code, text = "client:" + type(e).__name__, re.sub(r" object at 0x[0-9a-f]+>", " object>", str(e))
    return [code, text] if message else [code]


def err(f, message=True):
    """Runs f(): ["ok"] if it returns, else its error (see error_of)."""
    try:
        f()
        return ["ok"]
    except Exception as e:  # noqa: BLE001 - every error is data here
        return error_of(e, message)


REFUSED_OR_RIGHT = "refused (as the emulator does) or right"


def refused_or(f, expected, refusal):
    """For a request the emulator refuses (`refusal`: [code, message]) that Cloud Firestore, or
    ember serve, may answer: REFUSED_OR_RIGHT when f() fails with exactly that refusal or returns
    `expected` (computed another way by the scenario), else what it did, beside `expected`."""
    try:
        got = f()
    except Exception as e:  # noqa: BLE001
        if error_of(e) == refusal:
            return REFUSED_OR_RIGHT
        return {"error": error_of(e), "expected": expected}
    return REFUSED_OR_RIGHT if got == expected else {"got": got, "expected": expected}


# ------------------------------------------------------------------------------------- listeners

class Recorder:
    """Records a listener's callbacks (google-cloud-firestore calls them on its own thread) and
    lets the scenario wait, bounded, for the next one.

        rec = Recorder()
        w = query.on_snapshot(rec)
        rec.expect()                      # the first snapshot ("timeout" recorded after 10 s)
        c.document("a").set({...}); rec.expect()
        c.document("x").set({...}); rec.expect_none()   # a write the query does not see
        w.unsubscribe(); rec.events       # [{"docs": [...], "changes": [...]}, ...]

    Each event keeps the documents in order (id and fields) and the changes as
    [type, id, old_index, new_index], sorted: the client builds that list from a dict, so its
    order says nothing about the server. read_time is dropped."""

    WAIT = 10.0       # an expected snapshot comes within this
    QUIET = 1.0       # no snapshot within this counts as "none came"

    def __init__(self, server_times=False):
        self.server_times = server_times      # documents hold SERVER_TIMESTAMP values
        self.events = []
        self._seen = 0
        self._cv = threading.Condition()

    def __call__(self, snaps, changes, read_time):
        event = {"docs": [data(s, self.server_times) for s in snaps],
                 "changes": sorted([ch.type.name, ch.document.id, ch.old_index, ch.new_index] for ch in changes)}
        with self._cv:
            self.events.append(event)
            self._cv.notify_all()

    def expect(self, n=1):
        """Waits for `n` more snapshots; records "timeout" if they do not all come in time."""
        with self._cv:
            ok = self._cv.wait_for(lambda: len(self.events) >= self._seen + n, self.WAIT)
            if not ok:
                self.events.append("timeout")
            self._seen = len(self.events)

    def expect_none(self):
        """Waits QUIET seconds; an event that comes is recorded (and counted) as usual."""
        with self._cv:
            self._cv.wait_for(lambda: len(self.events) > self._seen, self.QUIET)
            if len(self.events) == self._seen:
                self.events.append("no event")
            self._seen = len(self.events)
