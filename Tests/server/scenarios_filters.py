"""Scenarios: every filter, and the order of values (mixed types, numbers, strings and bytes,
timestamps, references, geo points, arrays, maps). Results are document ids in the server's order.
Also the helpers the query scenarios share (ROWS, seed, where, run_all, name_desc)."""
import datetime

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from normalize import error_of, ids, refused_or, scenario

NAN = float("nan")
ASC, DESC = firestore.Query.ASCENDING, firestore.Query.DESCENDING

# Emulator quirk: a query whose first order is __name__ descending is refused ("Firestore does not
# support descending key scans"); "n desc, __name__ desc" is answered. Cloud Firestore and ember
# serve may answer it: then the answer must be the ascending one reversed.
NO_DESCENDING_KEY_SCAN = ["FAILED_PRECONDITION", "Firestore does not support descending key scans"]


def name_desc(query_asc, query_desc):
    """query_desc's ids: the emulator's refusal, or query_asc's ids reversed."""
    return refused_or(lambda: ids(query_desc), ids(query_asc)[::-1], NO_DESCENDING_KEY_SCAN)

# One collection of varied documents for the filter scenarios: numbers of both kinds (1 and 1.0,
# 2 and 2.0), NaN, null, a field of another type, missing fields, arrays with duplicates.
ROWS = {
    "a": {"n": 1, "s": "x", "tags": ["red", "blue"], "m": {"k": 1}, "b": True},
    "b": {"n": 2, "s": "y", "tags": ["blue"], "m": {"k": 2}, "b": False},
    "c": {"n": 3.5, "s": "x", "tags": [], "m": {"k": 3}},
    "d": {"n": None, "s": "z", "tags": None},
    "e": {"n": NAN, "s": "y", "tags": ["green", "red", "red"]},
    "f": {"s": "w"},
    "g": {"n": -5, "s": "x", "tags": ["red"], "m": {"k": "1"}},
    "h": {"n": "text", "s": "q", "tags": "red"},
    "i": {"n": True, "s": ""},
    "j": {"n": [1, 2], "tags": [{"c": "red"}, 1]},
    "k": {"n": 2.0, "s": "Y"},
    "l": {"n": {"k": 1}, "tags": [1, "1", None]},
    "m": {"n": 1.0, "s": "x"},
    "n": {"n": float("-inf"), "s": "y"},
}


def seed(db, col, rows=ROWS):
    batch = db.batch()
    for k, v in rows.items():
        batch.set(col.document(k), v)
    batch.commit()


def where(c, field, op, value):
    return c.where(filter=FieldFilter(field, op, value))


def run_all(c, cases):
    """{label: ids or error} for (label, query-maker) pairs."""
    out = {}
    for label, make in cases:
        try:
            out[label] = ids(make())
        except Exception as e:  # noqa: BLE001
            out[label] = error_of(e)
    return out


def filters(c, field, cases):
    return run_all(c, [(f"{field} {op} {val!r}", (lambda op=op, val=val: where(c, field, op, val))) for op, val in cases])


@scenario
def filter_equality(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    out = filters(c, "n", [("==", 1), ("==", 1.0), ("==", 2), ("==", "text"), ("==", True), ("==", [1, 2]),
                           ("==", {"k": 1}), ("==", None), ("==", NAN), ("==", float("-inf")), ("!=", 1), ("!=", None),
                           ("!=", NAN), ("!=", "text"), ("!=", [1, 2])])
    out.update(filters(c, "s", [("==", "x"), ("==", ""), ("!=", "x")]))
    out.update(filters(c, "m.k", [("==", 1), ("!=", 1)]))
    out.update(filters(c, "b", [("==", False), ("!=", False)]))
    out["__name__ == ref"] = ids(where(c, "__name__", "==", c.document("c")))
    out["n == 1 and s == x"] = ids(where(c, "n", "==", 1).where(filter=FieldFilter("s", "==", "x")))
    return out


@scenario
def filter_ranges(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    # A range stays within the type of its value: n < 3 sees numbers only, n > "a" strings only.
    out = filters(c, "n", [("<", 3), ("<=", 3.5), (">", 1), (">=", -5), ("<", 1.5), (">", float("-inf")),
                           ("<", "u"), (">", "a"), (">", False), ("<", True), (">=", [1]), ("<", {"z": 1}),
                           (">", NAN), (">", None)])
    out.update(filters(c, "m.k", [(">", 1), (">=", "0")]))
    out.update(filters(c, "s", [(">", "x"), ("<=", "Y"), (">=", "")]))
    out["n > 1 and s < y (two inequality fields)"] = ids(where(c, "n", ">", 1).where(filter=FieldFilter("s", "<", "y")))
    out["1 < n < 3"] = ids(where(c, "n", ">", 1).where(filter=FieldFilter("n", "<", 3)))
    out["__name__ > ref"] = ids(where(c, "__name__", ">", c.document("k")))
    out["__name__ < ref, desc"] = name_desc(where(c, "__name__", "<", c.document("c")),
                                            where(c, "__name__", "<", c.document("c")).order_by("__name__", direction=DESC))
    return out


@scenario
def filter_arrays(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    out = filters(c, "tags", [("array_contains", "red"), ("array_contains", "blue"), ("array_contains", 1),
                              ("array_contains", 1.0), ("array_contains", None), ("array_contains", {"c": "red"}),
                              ("array_contains_any", ["red", "green"]), ("array_contains_any", [1, "1"]),
                              ("array_contains_any", [None]), ("array_contains_any", ["red", "red"]),
                              ("array_contains", "nothing")])
    out["array_contains and n > 0"] = ids(where(c, "tags", "array_contains", "red").where(filter=FieldFilter("n", ">", 0)))
    return out


@scenario
def filter_in_not_in(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    out = filters(c, "n", [("in", [1, 2, "text"]), ("in", [[1, 2]]), ("in", [None]), ("in", [NAN]), ("in", [1.0, 1]),
                           ("not-in", [1, 2]), ("not-in", ["text", True]), ("not-in", [None]), ("not-in", [NAN])])
    out.update(filters(c, "s", [("in", ["x", "y"]), ("not-in", ["x", "y"])]))
    out["__name__ in refs"] = ids(where(c, "__name__", "in", [c.document("b"), c.document("z"), c.document("a")]))
    out["__name__ not-in refs"] = ids(where(c, "__name__", "not-in", [c.document("b"), c.document("a")]))
    out["in and order_by desc"] = ids(where(c, "s", "in", ["x", "w"]).order_by("s", direction=DESC))
    return out


def typed_rows(db, c):
    t = datetime.timezone.utc
    values = {
        "null": None, "false": False, "true": True, "nan": NAN, "ninf": float("-inf"), "neg": -1, "zero": 0,
        "one_i": 1, "one_d": 1.0, "big": 2 ** 62, "inf": float("inf"),
        "t_old": datetime.datetime(1960, 5, 6, tzinfo=t), "t_new": datetime.datetime(2020, 1, 1, 0, 0, 0, 1, tzinfo=t),
        "s_empty": "", "s_a": "a", "s_b": "b", "bytes0": b"", "bytes1": b"\x00", "ref_a": db.document("a/b"),
        "ref_z": db.document("z/a"), "geo1": firestore.GeoPoint(1, 2), "geo2": firestore.GeoPoint(1, 3),
        "arr0": [], "arr1": [1], "arr2": [None], "map0": {}, "map1": {"a": 1},
    }
    seed(db, c, {k: {"v": v} for k, v in values.items()} | {"missing": {"other": 1}})


@scenario
def mixed_type_order(db, p):
    # Firestore's order of types: null, booleans, numbers (NaN first), timestamps, strings, bytes,
    # references, geo points, arrays, maps; equal values by document name.
    c = db.collection(p + "typed")
    typed_rows(db, c)
    return run_all(c, [
        ("asc", lambda: c.order_by("v")),
        ("desc", lambda: c.order_by("v", direction=DESC)),
        ("v >= false", lambda: where(c, "v", ">=", False)),
        ("v > 0", lambda: where(c, "v", ">", 0)),
        ("v < ''", lambda: where(c, "v", "<", "")),
        ("v > timestamp 1970", lambda: where(c, "v", ">", datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc))),
        ("v >= b''", lambda: where(c, "v", ">=", b"")),
        ("v > ref", lambda: where(c, "v", ">", db.document("a/a"))),
        ("v >= geo(1, 2.5)", lambda: where(c, "v", ">=", firestore.GeoPoint(1, 2.5))),
        ("v < [0]", lambda: where(c, "v", "<", [0])),
        ("v >= {}", lambda: where(c, "v", ">=", {})),
        ("v != 1", lambda: where(c, "v", "!=", 1)),
        ("v not-in [false, 1]", lambda: where(c, "v", "not-in", [False, 1])),
    ])


@scenario
def number_order(db, p):
    c = db.collection(p + "nums")
    vals = {"nan": NAN, "ninf": float("-inf"), "min": -(2 ** 63), "m1_5": -1.5, "m1": -1, "negz": -0.0, "zero_i": 0,
            "zero_d": 0.0, "one": 1, "one_d": 1.0, "p53_i": 2 ** 53, "p53_d": float(2 ** 53), "p53p1": 2 ** 53 + 1,
            "max": 2 ** 63 - 1, "e300": 1e300, "inf": float("inf"), "tiny": 5e-324}
    seed(db, c, {k: {"v": v} for k, v in vals.items()})
    return run_all(c, [
        ("asc", lambda: c.order_by("v")),
        ("desc", lambda: c.order_by("v", direction=DESC)),
        ("v == 0", lambda: where(c, "v", "==", 0)),
        ("v == -0.0", lambda: where(c, "v", "==", -0.0)),
        ("v == 2^53", lambda: where(c, "v", "==", 2 ** 53)),
        ("v == 2^53 as double", lambda: where(c, "v", "==", float(2 ** 53))),
        ("v > 2^53 as double", lambda: where(c, "v", ">", float(2 ** 53))),
        ("v > 2^53", lambda: where(c, "v", ">", 2 ** 53)),
        ("v < 0", lambda: where(c, "v", "<", 0)),
        ("v >= max", lambda: where(c, "v", ">=", 2 ** 63 - 1)),
        ("v > 9.2e18", lambda: where(c, "v", ">", 9.2e18)),
        ("v in [1, -0.0]", lambda: where(c, "v", "in", [1, -0.0])),
    ])


@scenario
def string_bytes_order(db, p):
    # Cloud Firestore orders strings by their UTF-8 bytes: U+FFFF before U+1F600.
    c = db.collection(p + "strs")
    strs = ["", "a", "B", "Z", "aa", "é", "z", "\u00ff", "\uffff", "😀", "a\u0000b", "10", "9", " "]
    rows = {f"s{i:02d}": {"v": s} for i, s in enumerate(strs)}
    byts = [b"", b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\xff", b"\xff\x00"]
    rows.update({f"b{i:02d}": {"v": b} for i, b in enumerate(byts)})
    seed(db, c, rows)
    did = db.collection(p + "ids")
    seed(db, did, {k: {"x": 1} for k in ["a", "B", "10", "9", "é", "😀", "\uffff", "a b", "~"]})
    return run_all(c, [
        ("asc", lambda: c.order_by("v")),
        ("desc", lambda: c.order_by("v", direction=DESC)),
        ("v > 'a'", lambda: where(c, "v", ">", "a")),
        ("v >= '\\uffff'", lambda: where(c, "v", ">=", "\uffff")),
        ("v < b'\\x80'", lambda: where(c, "v", "<", b"\x80")),
        ("document ids", lambda: did),
    ]) | {"document ids desc": name_desc(did, did.order_by("__name__", direction=DESC))}


@scenario
def structured_order(db, p):
    t = datetime.timezone.utc
    c = db.collection(p + "structs")
    rows = {
        "t1": datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=t),
        "t2": datetime.datetime(1970, 1, 1, tzinfo=t), "t3": datetime.datetime(2020, 1, 1, 0, 0, 0, 1, tzinfo=t),
        "g1": firestore.GeoPoint(-90, 0), "g2": firestore.GeoPoint(0, -180), "g3": firestore.GeoPoint(0, 180),
        "g4": firestore.GeoPoint(45.5, 0),
        "r1": db.document("a/b"), "r2": db.document("a/b/c/d"), "r3": db.document("a/c"), "r4": db.document("b/a"),
        "r5": db.document("a/B"), "r6": db.document("a/b/c/a"),
        "a1": [], "a2": [1], "a3": [1, 2], "a4": [2], "a5": [1, "a"], "a6": ["a"], "a7": [None, 5], "a8": [1.0, 1],
        "m1": {}, "m2": {"a": 1}, "m3": {"a": 2}, "m4": {"b": 0}, "m5": {"a": 1, "b": 1}, "m6": {"A": 9},
        "m7": {"a": {"x": 1}},
    }
    seed(db, c, {k: {"v": v} for k, v in rows.items()})
    return run_all(c, [
        ("asc", lambda: c.order_by("v")),
        ("desc", lambda: c.order_by("v", direction=DESC)),
        ("v == [1.0, 1]", lambda: where(c, "v", "==", [1, 1])),
        ("v > {a: 1}", lambda: where(c, "v", ">", {"a": 1})),
        ("v < ref a/b/c/d", lambda: where(c, "v", "<", db.document("a/b/c/d"))),
    ])


