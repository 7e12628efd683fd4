"""Scenarios: documents and single writes (set, get, update, merge, transforms, preconditions,
every value type, invalid writes). See normalize.py for the rules a scenario follows."""
import datetime

from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

from normalize import at_commit, data, err, plain, scenario

DELETE = firestore.DELETE_FIELD
NOW = firestore.SERVER_TIMESTAMP
NAN = float("nan")


@scenario
def set_get_nested(db, p):
    c = db.collection(p + "docs")
    ref = c.document("a")
    ref.set({"top": 1, "m": {"x": 1, "y": {"z": "deep"}, "e": {}}, "arr": [], "weird key": 1,
             "a.b": "a dotted key", "é": "unicode key", "`tick`": 2, "123": "numeric key"})
    snap = ref.get()
    out = {"doc": data(snap), "exists": snap.exists}
    out["get m.y.z"] = plain(snap.get("m.y.z"))
    out["get `a.b`"] = plain(snap.get(FieldPath("a.b").to_api_repr()))
    # A mask (DocumentMask in BatchGetDocuments): only these fields; missing ones are not made up.
    out["masked"] = data(ref.get(field_paths=["m.x", "top", "missing"]))
    out["masked quoted"] = data(ref.get(field_paths=["`a.b`", "`weird key`", "m.y"]))
    out["missing doc"] = data(c.document("nope").get())
    out["missing doc masked"] = data(c.document("nope").get(field_paths=["x"]))
    ref.set({"replaced": True})
    out["after replace"] = data(ref.get())
    c.document("ids with spaces é").set({"v": 1})
    out["odd id"] = data(c.document("ids with spaces é").get())
    return out


@scenario
def names_differing_only_in_normalization(db, p):
    # "\u00e9" and "e\u0301" are two fields, two documents and two collections: kept apart on the
    # wire both ways (a map<string, Value> decoded into a dictionary keyed by Swift Strings would
    # merge them), listed and filtered apart.
    a, b = "\u00e9", "e\u0301"
    c = db.collection(p + "norm")
    c.document(a).set({a: 1, b: 2, "m": {b: 3, a: 4}})
    c.document(b).set({"v": 2, b: 1})
    out = {"a": data(c.document(a).get()), "b": data(c.document(b).get())}
    out["ids"] = [d.id for d in c.stream()]
    out["where e-acute-decomposed == 2"] = [d.id for d in c.where(filter=FieldFilter(FieldPath(b).to_api_repr(), "==", 2)).stream()]
    out["where e-acute == 1"] = [d.id for d in c.where(filter=FieldFilter(FieldPath(a).to_api_repr(), "==", 1)).stream()]
    c.document(a).update({b: 5})
    out["updated"] = data(c.document(a).get())
    db.collection(p + a).document("x").set({"n": 1})
    db.collection(p + b).document("y").set({"n": 2})
    out["collections"] = sorted(col.id for col in db.collections() if col.id in (p + a, p + b))
    return out


@scenario
def update_field_paths(db, p):
    ref = db.collection(p + "docs").document("a")
    ref.set({"m": {"x": 1, "y": 2}, "s": "str", "keep": 1, "gone": 1})
    out = []

    def step(name, fields):
        out.append([name, err(lambda: ref.update(fields)), data(ref.get())])

    step("dotted paths, new intermediate maps", {"m.x": 10, "n.new.deep": 1})
    step("a map value replaces the map", {"m": {"only": 1}})
    step("a path through a string replaces it", {"s.inner": 1})
    step("DELETE_FIELD top, nested, absent", {"m.only": DELETE, "gone": DELETE, "absent": DELETE, "n.new.deep": DELETE})
    step("quoted segment", {FieldPath("dot.ted", "x").to_api_repr(): 5})
    step("only deletes of absent fields", {"nothing": DELETE})
    step("empty map value", {"e": {}, "a": []})
    return out


@scenario
def server_timestamps(db, p):
    # A server timestamp is the commit time: the document's update time and the write's (see
    # normalize.at_commit for the emulator's version of "is"). Server timestamps of later commits
    # are compared with >= only: the emulator's have millisecond precision.
    c = db.collection(p + "docs")
    ref = c.document("a")
    w1 = ref.set({"t": NOW, "m": {"t": NOW}, "v": 1})
    s1 = ref.get()
    t1 = s1.get("t")
    out = {"fields": sorted(s1.to_dict()), "types": [type(t1).__name__, type(s1.get("m.t")).__name__]}
    out["set"] = {"t at the commit": at_commit(t1, s1.update_time), "m.t == t": s1.get("m.t") == t1,
                  "write time == update time": w1.update_time == s1.update_time,
                  "create time == update time": s1.create_time == s1.update_time}
    w2 = ref.update({"t2": NOW, "v": 2})
    s2 = ref.get()
    out["update"] = {"t2 at the commit": at_commit(s2.get("t2"), s2.update_time),
                     "write time == update time": s2.update_time == w2.update_time, "t2 >= t": s2.get("t2") >= t1,
                     "t unchanged": s2.get("t") == t1, "create time unchanged": s2.create_time == s1.create_time,
                     "update time later": s2.update_time > s1.update_time}
    ref.set({"t3": NOW}, merge=True)
    s3 = ref.get()
    out["merge"] = {"fields": sorted(s3.to_dict()), "t3 at the commit": at_commit(s3.get("t3"), s3.update_time),
                    "t unchanged": s3.get("t") == t1}
    ref.update({"t": NOW})
    s4 = ref.get()
    out["only a transform"] = {"t at the commit": at_commit(s4.get("t"), s4.update_time),
                               "t >= t3": s4.get("t") >= s3.get("t3"), "update time later": s4.update_time > s3.update_time}
    # The same data again: no change, so no new update time.
    w5 = ref.set({"same": 1})
    w6 = ref.set({"same": 1})
    s6 = ref.get()
    out["identical set"] = {"write time unchanged": w6.update_time == w5.update_time,
                            "update time == write time": s6.update_time == w6.update_time}
    ref.delete()
    ref.set({"again": True})
    s7 = ref.get()
    out["recreated"] = {"new create time": s7.create_time > s1.create_time,
                        "create time == update time": s7.create_time == s7.update_time}
    out["in an array"] = err(lambda: c.document("b").set({"arr": [NOW]}))
    return out


@scenario
def increment(db, p):
    ref = db.collection(p + "docs").document("a")
    ref.set({"i": 1, "f": 1.5, "s": "x", "max": 2 ** 63 - 1, "min": -(2 ** 63), "nan": NAN, "mix": 1,
             "inf": float("inf")})
    out = []
    ref.update({"i": firestore.Increment(2), "f": firestore.Increment(1), "s": firestore.Increment(3),
                "new": firestore.Increment(4), "max": firestore.Increment(1), "min": firestore.Increment(-1),
                "nan": firestore.Increment(1), "mix": firestore.Increment(0.5), "m.deep": firestore.Increment(1.25),
                "inf": firestore.Increment(-1)})
    out.append(data(ref.get()))
    ref.update({"i": firestore.Increment(-2.5), "f": firestore.Increment(-1.5), "new": firestore.Increment(0)})
    out.append(data(ref.get()))
    c = db.collection(p + "docs")
    c.document("merged").set({"n": firestore.Increment(3)}, merge=True)
    c.document("plain").set({"n": firestore.Increment(3.5), "x": 1})
    out.append([data(c.document("merged").get()), data(c.document("plain").get())])
    return out


@scenario
def array_union_remove(db, p):
    ref = db.collection(p + "docs").document("a")
    ref.set({"a": [1, 2, 2, "x", {"k": 1}], "s": "not an array", "f": [1.0], "n": [NAN], "nul": [None, None]})
    out = []
    ref.update({"a": firestore.ArrayUnion([2, 3, 3, {"k": 1}, {"k": 2}]), "s": firestore.ArrayUnion([1]),
                "new": firestore.ArrayUnion([1, 1, "1"]), "f": firestore.ArrayUnion([1]), "n": firestore.ArrayUnion([NAN]),
                "nul": firestore.ArrayUnion([None])})
    out.append(data(ref.get()))
    ref.update({"a": firestore.ArrayRemove([2, {"k": 1}, "absent"]), "s": firestore.ArrayRemove([1]),
                "missing": firestore.ArrayRemove([1]), "f": firestore.ArrayRemove([1]), "n": firestore.ArrayRemove([NAN]),
                "nul": firestore.ArrayRemove([None])})
    out.append(data(ref.get()))
    ref.set({"u": firestore.ArrayUnion(["a"]), "r": firestore.ArrayRemove(["a"])})
    out.append(data(ref.get()))
    return out


@scenario
def create_update_delete_preconditions(db, p):
    c = db.collection(p + "docs")
    ref = c.document("a")
    w = ref.set({"v": 1})
    out = {}
    out["create existing"] = err(lambda: ref.create({"v": 2}))
    out["create new"] = [err(lambda: c.document("new").create({"v": 1})), data(c.document("new").get())]
    out["update missing"] = err(lambda: c.document("missing").update({"v": 1}))
    out["update missing, nested"] = err(lambda: c.document("sub").collection("c").document("d").update({"a.b": 1}))
    out["delete missing"] = err(lambda: c.document("missing").delete())
    out["delete missing, exists"] = err(lambda: c.document("missing").delete(option=db.write_option(exists=True)))
    # The emulator words a failed update-time precondition in its own terms ("the stored version
    # (N) does not match the required base version (M)"): only the code is compared.
    stale = w.update_time - datetime.timedelta(seconds=1)
    out["update, stale update time"] = err(lambda: ref.update({"v": 3}, option=db.write_option(last_update_time=stale)), message=False)
    out["delete, stale update time"] = err(lambda: ref.delete(option=db.write_option(last_update_time=stale)), message=False)
    out["update, current update time"] = err(lambda: ref.update({"v": 4}, option=db.write_option(last_update_time=w.update_time)))
    out["after"] = data(ref.get())
    now = ref.get().update_time
    out["delete, current update time"] = err(lambda: ref.delete(option=db.write_option(last_update_time=now)))
    out["delete existing, exists"] = err(lambda: c.document("new").delete(option=db.write_option(exists=True)))
    out["gone"] = [data(ref.get()), data(c.document("new").get())]
    out["create below a missing parent"] = [err(lambda: c.document("ghost").collection("k").document("x").create({})),
                                            data(c.document("ghost").get())]
    return out


@scenario
def merge_set(db, p):
    c = db.collection(p + "docs")
    ref = c.document("a")
    ref.set({"a": 1, "m": {"x": 1, "y": 1, "n": {"deep": 1}}, "arr": [1, 2]})
    out = []

    def step(name, f):
        out.append([name, err(f), data(ref.get())])

    step("merge=True merges maps, replaces arrays", lambda: ref.set({"m": {"y": 2, "z": 3}, "arr": [3], "b": 2}, merge=True))
    step("merge=True with DELETE_FIELD", lambda: ref.set({"m": {"x": DELETE}, "a": DELETE}, merge=True))
    step("merge=[field paths]", lambda: ref.set({"m": {"y": 9, "n": {"deep": 9}}, "b": 9, "c": 9}, merge=["m.y", "c"]))
    step("merge=[a map field] replaces it", lambda: ref.set({"m": {"only": 1}}, merge=["m"]))
    step("merge=True with an empty map", lambda: ref.set({"m": {}}, merge=True))
    step("merge=True with an empty map at a new field", lambda: ref.set({"e": {}}, merge=True))
    out.append(["merge=True creates", err(lambda: c.document("new").set({"x": {"y": 1}}, merge=True)), data(c.document("new").get())])
    out.append(["empty merge creates", err(lambda: c.document("empty").set({}, merge=True)), data(c.document("empty").get())])
    out.append(["empty set", err(lambda: c.document("empty2").set({})), data(c.document("empty2").get())])
    return out


@scenario
def value_types_round_trip(db, p):
    c = db.collection(p + "types")
    v = {"null": None, "t": True, "f": False, "i": -(2 ** 63), "imax": 2 ** 63 - 1, "zero": 0, "d": 1.5,
         "inf": float("inf"), "ninf": float("-inf"), "nan": NAN, "negz": -0.0, "tiny": 5e-324, "huge": 1.7976931348623157e308,
         "s": "é\u2603😀\u0000end", "empty": "", "b": b"\x00\xff\x10", "eb": b"",
         "ref": c.document("other"), "deepref": db.document("x/y/z/w"),
         "geo": firestore.GeoPoint(10.5, -20.25), "geo2": firestore.GeoPoint(-90, 180),
         "arr": [1, "a", None, {"in": [True]}, 2.5], "earr": [], "emap": {},
         "map": {"deep": {"deeper": {"x": 1}}, "a b": {"é": 1}},
         "ts": datetime.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc),
         "old": datetime.datetime(1900, 1, 1, tzinfo=datetime.timezone.utc),
         "epoch": datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc),
         "nanos": DatetimeWithNanoseconds(2020, 1, 2, 3, 4, 5, nanosecond=123456789, tzinfo=datetime.timezone.utc)}
    return {"set": err(lambda: c.document("v").set(v)), "got": data(c.document("v").get())}


@scenario
def vector_values(db, p):
    from google.cloud.firestore_v1.vector import Vector
    c = db.collection(p + "vec")
    c.document("a").set({"v": Vector([1.0, 2.5, -3.0])})
    c.document("b").set({"v": {"__type__": "__vector__", "value": [1.0]}})
    c.document("c").set({"v": Vector([0.5, 9.0])})
    c.document("d").set({"v": Vector([7.0])})
    return [data(c.document("a").get()), data(c.document("b").get()), err(lambda: c.document("e").set({"v": Vector([])})),
            [d.id for d in c.order_by("v").stream()]]


@scenario
def invalid_writes(db, p):
    c = db.collection(p + "bad")
    deep = 1
    for _ in range(25):
        deep = {"x": deep}
    out = {}
    out["reserved id"] = err(lambda: c.document("__x__").set({"a": 1}))
    out["reserved collection id"] = err(lambda: db.collection("__c__").document("d").set({"a": 1}))
    out["reserved field name"] = err(lambda: c.document("d").set({"__x__": 1}))
    out["empty field name"] = err(lambda: c.document("d").set({"": 1}))
    out["array in array"] = err(lambda: c.document("d").set({"a": [[1]]}))
    out["nested 25 deep"] = err(lambda: c.document("d").set({"a": deep}), message=False)
    out["id of 1,600 bytes"] = err(lambda: c.document("x" * 1600).set({"a": 1}), message=False)
    # Message of the emulator's own: 'The value of property "a" is longer than 1048487 bytes.'
    out["1.1 MB document"] = err(lambda: c.document("big").set({"a": "x" * 1_100_000}), message=False)
    out["1.0 MB document"] = err(lambda: c.document("big").set({"a": "x" * 1_000_000}))
    out["big exists"] = c.document("big").get().exists
    out["update with no fields"] = err(lambda: c.document("d").update({}))
    out["nothing written"] = sorted(d.id for d in c.list_documents())
    return out
