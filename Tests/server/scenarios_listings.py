"""Scenarios: collection groups (at the root and under a document), recursive delete, listing
documents (with "missing" parents) and collection ids, batch get, and count/sum/avg."""
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.query import CollectionGroup

from normalize import data, err, error_of, plain, refused_or, scenario

DESC = firestore.Query.DESCENDING

# Emulator quirk: a collection-group query whose parent is a document (RunQuery with parent
# ".../documents/rooms/r1" and all_descendants) is refused. Cloud Firestore's API defines it (the
# group's collections below that document), and ember serve answers it: the answer must then be
# the root group's answer restricted to paths below the document.
GROUP_ONLY_AT_ROOT = ["INVALID_ARGUMENT", "collection group queries are only allowed at the root parent"]


def tree(db, p):
    """rooms/{r1,r2}/G/{m1,m2}, rooms/r1/G/m1/G/deep, other/x/G/m9, G/top (a root collection of
    the group's id), rooms/r1/notG/n1, and the phantom rooms/r3 (only rooms/r3/G/m1 exists)."""
    g = p + "msgs"
    rooms = db.collection(p + "rooms")
    batch = db.batch()
    for r in ["r1", "r2"]:
        batch.set(rooms.document(r), {"name": r})
        for m in ["m1", "m2"]:
            batch.set(rooms.document(r).collection(g).document(m), {"room": r, "n": int(m[1]) + (10 if r == "r2" else 0)})
    batch.set(rooms.document("r1").collection(g).document("m1").collection(g).document("deep"), {"room": "r1", "n": 100})
    batch.set(db.collection(p + "other").document("x").collection(g).document("m9"), {"room": "none", "n": 9})
    batch.set(db.collection(g).document("top"), {"room": "root", "n": 0})
    batch.set(rooms.document("r1").collection(p + "notmsgs").document("n1"), {"room": "r1", "n": 1})
    batch.set(rooms.document("r3").collection(g).document("m1"), {"room": "r3", "n": 31})
    batch.commit()
    return g, rooms


def paths(snaps):
    return [s.reference.path for s in snaps]


@scenario
def collection_groups(db, p):
    g, rooms = tree(db, p)
    group = db.collection_group(g)
    under_r1 = CollectionGroup(rooms.document("r1").collection(g))
    under_r3 = CollectionGroup(rooms.document("r3").collection(g))
    out = {}
    out["all (path order)"] = paths(group.stream())
    out["room == r1"] = paths(group.where(filter=FieldFilter("room", "==", "r1")).stream())
    out["n desc, limit 4"] = paths(group.order_by("n", direction=DESC).limit(4).stream())
    out["n > 5, start_after"] = paths(group.where(filter=FieldFilter("n", ">", 5)).order_by("n").start_after({"n": 10}).stream())
    whole = out["all (path order)"]
    n_ge_2 = paths(group.where(filter=FieldFilter("n", ">=", 2)).stream())
    below = lambda doc, ps: [x for x in ps if x.startswith(doc.path + "/")]  # noqa: E731
    r1, r3 = rooms.document("r1"), rooms.document("r3")
    out["under rooms/r1"] = refused_or(lambda: paths(under_r1.stream()), below(r1, whole), GROUP_ONLY_AT_ROOT)
    out["under rooms/r1, n >= 2"] = refused_or(lambda: paths(under_r1.where(filter=FieldFilter("n", ">=", 2)).stream()),
                                               below(r1, n_ge_2), GROUP_ONLY_AT_ROOT)
    out["under the phantom rooms/r3"] = refused_or(lambda: paths(under_r3.stream()), below(r3, whole), GROUP_ONLY_AT_ROOT)
    out["count under rooms/r1"] = refused_or(lambda: under_r1.count().get()[0][0].value, len(below(r1, whole)),
                                             GROUP_ONLY_AT_ROOT)
    out["select room"] = [data(s) for s in group.select(["room"]).order_by("n").limit(2).stream()]
    out["count"] = group.count().get()[0][0].value
    out["unknown group"] = paths(db.collection_group(p + "nothing").stream())
    out["limit_to_last 2"] = paths(group.order_by("n").limit_to_last(2).get())
    return out


@scenario
def recursive_delete(db, p):
    # recursive_delete: a kind-less query (all descendants of a parent) feeding a BulkWriter.
    g, rooms = tree(db, p)
    out = {"delete rooms/r1": db.recursive_delete(rooms.document("r1"))}
    out["left in the group"] = paths(db.collection_group(g).stream())
    out["rooms/r1"] = data(rooms.document("r1").get())
    out["delete rooms"] = db.recursive_delete(rooms)
    out["left"] = paths(db.collection_group(g).stream())
    out["root collections"] = [c.id for c in db.collections()]
    return out


@scenario
def list_documents_and_phantoms(db, p):
    g, rooms = tree(db, p)
    rooms.document("del").collection("sub").document("x").set({"v": 1})
    rooms.document("del").set({"v": 1})
    rooms.document("del").delete()
    out = {}
    # list_documents asks for show_missing: documents that do not exist but have documents below.
    listed = list(rooms.list_documents())
    out["rooms"] = [[r.id, r.get().exists] for r in listed]
    out["rooms, page_size 1"] = [r.id for r in rooms.list_documents(page_size=1)]
    out["rooms/r1/G"] = [r.id for r in rooms.document("r1").collection(g).list_documents()]
    out["empty collection"] = [r.id for r in db.collection(p + "empty").list_documents()]
    out["root group collection"] = [r.id for r in db.collection(g).list_documents()]
    return out


@scenario
def collection_ids(db, p):
    g, rooms = tree(db, p)
    rooms.document("r2").collection("a sub").document("x").set({})
    out = {}
    out["root"] = [c.id for c in db.collections()]
    out["rooms/r1"] = [c.id for c in rooms.document("r1").collections()]
    out["rooms/r2"] = [c.id for c in rooms.document("r2").collections()]
    out["phantom rooms/r3"] = [c.id for c in rooms.document("r3").collections()]
    out["missing rooms/none"] = [c.id for c in rooms.document("none").collections()]
    out["deep rooms/r1/G/m1"] = [c.id for c in rooms.document("r1").collection(g).document("m1").collections()]
    out["rooms/r1, page_size 1"] = [c.id for c in rooms.document("r1").collections(page_size=1)]
    return out


@scenario
def get_all(db, p):
    c = db.collection(p + "docs")
    c.document("a").set({"x": 1, "y": {"z": 2}})
    c.document("b").set({"x": 2})
    refs = [c.document("b"), c.document("missing"), c.document("a"), c.document("a"), db.document(p + "other/deep/c/d")]
    # Cloud Firestore returns a batch get's documents in no promised order: sorted here.
    out = {"plain": sorted(data(s) for s in db.get_all(refs))}
    out["field_paths"] = sorted(data(s) for s in db.get_all(refs, field_paths=["y.z"]))
    out["exists"] = sorted([s.id, s.exists, s.create_time is not None] for s in db.get_all(refs))
    out["none"] = list(db.get_all([]))
    return out


def aggregate(q):
    """An aggregation query's results as {alias: value}, read from the wire.

    The client's AggregationResult.value is `integer_value or double_value`: an integer 0, a
    double 0.0 and a null (the average of nothing) all come out 0.0. So the responses of the
    request the client sends (RunAggregationQuery, through the client's own stub) are decoded
    here with the client's value decoder, which keeps them apart."""
    from google.cloud.firestore_v1 import _helpers
    try:
        responses = list(q._get_stream_iterator(None, None, None))
    except Exception as e:  # noqa: BLE001
        return error_of(e)
    return [{k: plain(_helpers.decode_value(v, q._client)) for k, v in r.result.aggregate_fields.items()}
            for r in responses if r.result.aggregate_fields]


@scenario
def aggregations_count(db, p):
    from scenarios_filters import ROWS, seed
    c = db.collection(p + "agg")
    seed(db, c, ROWS)
    out = {}
    out["count"] = aggregate(c.count(alias="n"))
    out["count, as the client reads it"] = [[r.alias, r.value] for r in c.count(alias="n").get()[0]]
    out["count, default alias"] = aggregate(c.count())
    out["count where s == x"] = aggregate(c.where(filter=FieldFilter("s", "==", "x")).count(alias="n"))
    out["count, limit 4"] = aggregate(c.limit(4).count(alias="n"))
    out["count, order by n (documents with n)"] = aggregate(c.order_by("n").count(alias="n"))
    out["count, offset 10"] = aggregate(c.offset(10).count(alias="n"))
    out["count, start_after"] = aggregate(c.order_by("s").start_after({"s": "x"}).count(alias="n"))
    out["count of an empty collection"] = aggregate(db.collection(p + "agg-empty").count(alias="n"))
    out["count of no matches"] = aggregate(c.where(filter=FieldFilter("s", "==", "none")).count(alias="n"))
    return out


@scenario
def aggregations_sum_avg(db, p):
    c = db.collection(p + "agg")
    rows = {"i1": {"n": 1, "g": "ints"}, "i2": {"n": 2, "g": "ints"}, "i3": {"n": -10, "g": "ints"},
            "d1": {"n": 1.5, "g": "mixed"}, "d2": {"n": 2, "g": "mixed"}, "s1": {"n": "x", "g": "mixed"},
            "n1": {"n": None, "g": "mixed"}, "b1": {"n": True, "g": "mixed"}, "a1": {"n": [1], "g": "mixed"},
            "big1": {"n": 2 ** 63 - 1, "g": "overflow"}, "big2": {"n": 1, "g": "overflow"},
            "nan": {"n": float("nan"), "g": "nan"}, "one": {"n": 1, "g": "nan"},
            "pinf": {"n": float("inf"), "g": "inf"}, "ninf": {"n": float("-inf"), "g": "inf"},
            "pinf2": {"n": float("inf"), "g": "pinf"}, "five": {"n": 5, "g": "pinf"},
            "str": {"n": "a", "g": "strings"}, "none": {"g": "nothing"}, "m1": {"m": 1, "g": "m"}}
    batch = db.batch()
    for k, v in rows.items():
        batch.set(c.document(k), v)
    batch.commit()
    out = {}
    for group in ["ints", "mixed", "overflow", "nan", "inf", "pinf", "strings", "nothing", "absent"]:
        q = c.where(filter=FieldFilter("g", "==", group))
        out[group] = aggregate(q.sum("n", alias="sum").avg("n", alias="avg").count(alias="count"))
    out["default aliases"] = aggregate(c.where(filter=FieldFilter("g", "==", "ints")).sum("n").avg("n"))
    out["sum of a nested field"] = aggregate(c.sum("m.k", alias="s"))
    out["empty collection"] = aggregate(db.collection(p + "none").sum("n", alias="s").avg("n", alias="a"))
    # Sum and average are computed from the aggregated field's index, as Cloud Firestore computes
    # them: each aggregated field restricts the whole aggregation, count() included, to the
    # documents that have it ("nothing" above counts 0), ordered by it after the query's own
    # orders. So a limit keeps the lowest values ("limit 2": -10 and 1, not the first two by
    # name), an explicit order by __name__ is refused (no index has a field after __name__), and
    # two fields keep only the documents that have both.
    ints = c.where(filter=FieldFilter("g", "==", "ints"))
    out["limit 2"] = aggregate(ints.limit(2).sum("n", alias="s").count(alias="c"))
    out["order by n desc, limit 2"] = aggregate(ints.order_by("n", direction=DESC).limit(2).sum("n", alias="s"))
    out["order by __name__, limit 2"] = aggregate(ints.order_by("__name__").limit(2).sum("n", alias="s"))
    out["n and m (no document has both)"] = aggregate(c.sum("n", alias="n").avg("m", alias="m").count(alias="c"))
    out["count alone"] = aggregate(c.count(alias="c"))
    out["duplicate alias"] = err(lambda: c.sum("n", alias="x").avg("n", alias="x").get())
    out["as the client reads it"] = sorted([r.alias, plain(r.value)] for r in
                                           c.where(filter=FieldFilter("g", "==", "ints")).sum("n", alias="s").avg("n", alias="a").get()[0])
    return out
