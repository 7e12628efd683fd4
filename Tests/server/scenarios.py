"""Client scripts run unchanged against the Firestore emulator and `ember serve`; each returns
plain data (documents, query results in order, aggregation values, error codes, listener event
sequences) so that the two servers' answers can be compared. Times are replaced by facts about
them (present, ordered) since they differ between runs."""
import datetime
import threading

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import And, FieldFilter, Or

SCENARIOS = {}


def scenario(f):
    SCENARIOS[f.__name__] = f
    return f


def plain(v):
    """A value as comparable plain data."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, datetime.datetime):
        return "time"
    if isinstance(v, firestore.DocumentReference):
        return "ref:" + v.path
    if isinstance(v, bytes):
        return "bytes:" + v.hex()
    if hasattr(v, "latitude"):
        return ["geo", v.latitude, v.longitude]
    return v


def err(f):
    try:
        f()
        return "ok"
    except gexc.GoogleAPICallError as e:
        return type(e).__name__
    except ValueError as e:
        return "ValueError"


def ids(query):
    return [d.id for d in query.stream()]


def seed(db, col):
    rows = {
        "a": {"n": 1, "s": "x", "tags": ["red", "blue"], "m": {"k": 1}},
        "b": {"n": 2, "s": "y", "tags": ["blue"], "m": {"k": 2}},
        "c": {"n": 3.5, "s": "x", "tags": [], "m": {"k": 3}},
        "d": {"n": None, "s": "z"},
        "e": {"n": float("nan"), "s": "y", "tags": ["green"]},
        "f": {"s": "w"},
        "g": {"n": -5, "s": "x", "tags": ["red"]},
        "h": {"n": "text", "s": "q"},
        "i": {"n": True},
        "j": {"n": [1, 2]},
    }
    batch = db.batch()
    for k, v in rows.items():
        batch.set(col.document(k), v)
    batch.commit()


@scenario
def crud_and_transforms(db, p):
    c = db.collection(p + "crud")
    ref = c.document("a")
    out = []
    ref.set({"a": 1, "nested": {"x": 1, "y": 2}, "arr": [1, 2]})
    out.append(plain(ref.get().to_dict()))
    ref.update({"nested.x": 10, "arr": firestore.ArrayUnion([2, 3]), "n": firestore.Increment(5)})
    out.append(plain(ref.get().to_dict()))
    ref.update({"nested.y": firestore.DELETE_FIELD, "arr": firestore.ArrayRemove([1]), "n": firestore.Increment(1.5)})
    out.append(plain(ref.get().to_dict()))
    ref.set({"b": 2, "nested": {"z": 3}}, merge=True)
    out.append(plain(ref.get().to_dict()))
    ref.set({"t": firestore.SERVER_TIMESTAMP}, merge=["t"])
    snap = ref.get()
    out.append([plain(snap.to_dict()), snap.create_time <= snap.update_time])
    out.append(err(lambda: c.document("a").create({"x": 1})))
    out.append(err(lambda: c.document("missing").update({"x": 1})))
    out.append(err(lambda: c.document("missing").delete()))
    ref.delete()
    out.append(ref.get().exists)
    c.document("made").create({"v": 1})
    out.append(plain(c.document("made").get().to_dict()))
    return out


@scenario
def value_types_round_trip(db, p):
    c = db.collection(p + "types")
    other = c.document("other")
    v = {"null": None, "t": True, "f": False, "i": -(2 ** 63), "imax": 2 ** 63 - 1, "d": 1.5, "inf": float("inf"),
         "nan": float("nan"), "negz": -0.0, "s": "é\u2603", "empty": "", "b": b"\x00\xff", "ref": other,
         "geo": firestore.GeoPoint(10.5, -20.25), "arr": [1, "a", None, {"in": [True]}],
         "map": {"deep": {"deeper": {"x": 1}}}, "ts": datetime.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)}
    c.document("v").set(v)
    got = c.document("v").get().to_dict()
    return [plain(got), got["ts"].isoformat()]


@scenario
def every_filter(db, p):
    c = db.collection(p + "filters")
    seed(db, c)
    out = {}
    for op, val in [("==", 1), ("==", "x"), ("!=", "x"), ("<", 3), ("<=", 3.5), (">", 1), (">=", -5), ("==", None),
                    ("==", float("nan")), ("!=", None), ("array_contains", "blue"), ("array_contains_any", ["red", "green"]),
                    ("in", [1, 2, "text"]), ("not-in", [1, 2]), ("<", "z"), (">", False)]:
        field = "tags" if op.startswith("array") else "n"
        try:
            out[f"{field} {op} {val!r}"] = ids(c.where(filter=FieldFilter(field, op, val)))
        except Exception as e:
            out[f"{field} {op} {val!r}"] = type(e).__name__
    out["s in"] = ids(c.where(filter=FieldFilter("s", "in", ["x", "y"])))
    out["m.k >"] = ids(c.where(filter=FieldFilter("m.k", ">", 1)))
    return out


@scenario
def composite_order_cursors_limits(db, p):
    c = db.collection(p + "comp")
    seed(db, c)
    out = {}
    out["or"] = ids(c.where(filter=Or([FieldFilter("s", "==", "x"), FieldFilter("n", "==", 2)])))
    out["and-or"] = ids(c.where(filter=And([FieldFilter("s", "in", ["x", "y"]), Or([FieldFilter("n", ">", 1), FieldFilter("tags", "array_contains", "red")])])))
    out["order all"] = ids(c.order_by("n"))
    out["order desc"] = ids(c.order_by("n", direction=firestore.Query.DESCENDING))
    out["order two"] = ids(c.order_by("s").order_by("n", direction=firestore.Query.DESCENDING))
    out["limit"] = ids(c.order_by("s").limit(3))
    out["limit_to_last"] = [d.id for d in c.order_by("s").limit_to_last(3).get()]
    out["offset"] = ids(c.order_by("s").offset(2).limit(3))
    out["start_at"] = ids(c.order_by("s").start_at({"s": "x"}))
    out["start_after"] = ids(c.order_by("s").start_after({"s": "x"}))
    out["end_at"] = ids(c.order_by("s").end_at({"s": "x"}))
    out["end_before"] = ids(c.order_by("s").end_before({"s": "x"}))
    snap = c.document("b").get()
    out["start_after snap"] = ids(c.order_by("s").start_after(snap))
    out["end_before snap"] = ids(c.order_by("n").end_before(snap))
    out["select"] = [plain(d.to_dict()) for d in c.order_by("s").select(["s"]).limit(3).stream()]
    out["name order"] = ids(c.order_by("__name__", direction=firestore.Query.ASCENDING).limit(4))
    return out


@scenario
def collection_groups_and_listing(db, p):
    root = db.collection(p + "rooms")
    for r in ["r1", "r2"]:
        for m in ["m1", "m2"]:
            root.document(r).collection("msgs").document(m).set({"room": r, "n": int(m[1])})
    db.collection(p + "other").document("x").collection("msgs").document("m9").set({"room": "none", "n": 9})
    out = {}
    group = db.collection_group("msgs")
    out["group"] = sorted((d.reference.path.split("/", 1)[1] for d in group.where(filter=FieldFilter("n", ">=", 1)).stream() if d.reference.path.startswith(p)))
    out["group filtered"] = sorted(d.id for d in group.where(filter=FieldFilter("room", "==", "r1")).stream())
    out["list_documents"] = sorted(d.id for d in root.list_documents())
    out["collections of r1"] = sorted(c.id for c in root.document("r1").collections())
    out["root collections"] = sorted(c.id for c in db.collections() if c.id.startswith(p))
    out["get_all"] = [(s.id, s.exists) for s in db.get_all([root.document("r1").collection("msgs").document("m1"), root.document("nope")])]
    return out


@scenario
def aggregations(db, p):
    c = db.collection(p + "agg")
    seed(db, c)
    out = {}
    out["count"] = c.count().get()[0][0].value
    out["count filtered"] = c.where(filter=FieldFilter("s", "==", "x")).count().get()[0][0].value
    out["sum"] = plain(c.sum("n").get()[0][0].value)
    out["avg"] = plain(c.avg("n").get()[0][0].value)
    out["sum m.k"] = c.sum("m.k").get()[0][0].value
    out["avg none"] = c.avg("nothing").get()[0][0].value
    out["count empty"] = db.collection(p + "agg-empty").count().get()[0][0].value
    out["count limit"] = c.limit(4).count().get()[0][0].value
    return out


@scenario
def transactions_and_batches(db, p):
    c = db.collection(p + "txn")
    c.document("acct").set({"balance": 100})

    @firestore.transactional
    def move(t, amount):
        snap = c.document("acct").get(transaction=t)
        t.update(c.document("acct"), {"balance": snap.get("balance") - amount})
        t.set(c.document("log"), {"last": amount})
        return snap.get("balance")

    out = [move(db.transaction(), 30), plain(c.document("acct").get().to_dict()), plain(c.document("log").get().to_dict())]
    b = db.batch()
    b.set(c.document("x"), {"v": 1})
    b.update(c.document("acct"), {"balance": firestore.Increment(1)})
    b.delete(c.document("log"))
    b.commit()
    out.append([plain(c.document("x").get().to_dict()), c.document("acct").get().get("balance"), c.document("log").get().exists])
    bad = db.batch()
    bad.set(c.document("y"), {"v": 1})
    bad.update(c.document("missing"), {"v": 1})
    out.append(err(bad.commit))
    out.append(c.document("y").get().exists)   # the batch is atomic
    return out


@scenario
def invalid_requests(db, p):
    c = db.collection(p + "bad")
    out = {}
    out["nested too deep"] = err(lambda: c.document("d").set({"a": _deep(25)}))
    out["array in array"] = err(lambda: c.document("e").set({"a": [[1]]}))
    out["update no fields"] = err(lambda: c.document("f").update({}))
    out["order after cursor field missing"] = err(lambda: list(c.where(filter=FieldFilter("a", "in", list(range(31)))).stream()))
    out["get missing"] = c.document("nope").get().exists
    return out


def _deep(n):
    v = 1
    for _ in range(n):
        v = {"x": v}
    return v


@scenario
def listeners(db, p):
    c = db.collection(p + "listen")
    c.document("a").set({"n": 1})
    c.document("b").set({"n": 2})
    events = []
    got = threading.Event()

    def on(docs, changes, read_time):
        events.append({"docs": [d.id for d in docs],
                       "changes": sorted([(ch.type.name, ch.document.id, ch.old_index, ch.new_index) for ch in changes])})
        got.set()

    def step(f, expect=True):
        # A write outside the query raises no event: wait briefly for one that should not come.
        got.clear()
        f()
        if not got.wait(10 if expect else 1.5):
            events.append("timeout" if expect else "no event")

    watch = c.where(filter=FieldFilter("n", ">=", 1)).order_by("n").limit(3).on_snapshot(on)
    got.wait(10)
    step(lambda: c.document("c").set({"n": 0}), expect=False)
    step(lambda: c.document("a").update({"n": 10}))
    step(lambda: c.document("z").set({"n": 5}))
    step(lambda: c.document("b").delete())
    step(lambda: c.document("c").update({"n": -1}), expect=False)
    watch.unsubscribe()
    doc_events = []
    got2 = threading.Event()

    def on_doc(snaps, changes, read_time):
        doc_events.append([(s.id, s.exists, plain(s.to_dict()) if s.exists else None) for s in snaps])
        got2.set()

    w2 = c.document("solo").on_snapshot(on_doc)
    got2.wait(10)
    for f in [lambda: c.document("solo").set({"v": 1}), lambda: c.document("solo").update({"v": 2}), lambda: c.document("solo").delete()]:
        got2.clear()
        f()
        got2.wait(10)
    w2.unsubscribe()
    return {"query": events, "doc": doc_events}
