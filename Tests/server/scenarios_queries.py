"""Scenarios: the shape of queries (AND/OR, order_by, cursors by value and by snapshot, limit,
limit_to_last, offset, projection) and invalid queries. Results are document ids in the server's
order."""
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import And, FieldFilter, Or

from normalize import docs, err, error_of, scenario
from scenarios_filters import NAN, name_desc, run_all, seed, where

ASC, DESC = firestore.Query.ASCENDING, firestore.Query.DESCENDING


@scenario
def composite_and_or(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    F = FieldFilter
    return run_all(c, [
        ("s == x or n == 2", lambda: c.where(filter=Or([F("s", "==", "x"), F("n", "==", 2)]))),
        ("s in [x,y] and (n > 1 or red)", lambda: c.where(filter=And([F("s", "in", ["x", "y"]),
                                                                      Or([F("n", ">", 1), F("tags", "array_contains", "red")])]))),
        ("(s == x and n > 0) or (s == y and n < 3)",
         lambda: c.where(filter=Or([And([F("s", "==", "x"), F("n", ">", 0)]), And([F("s", "==", "y"), F("n", "<", 3)])]))),
        ("or, ordered, limited", lambda: c.where(filter=Or([F("s", "==", "x"), F("s", "==", "y")])).order_by("n", direction=DESC).limit(4)),
        ("or of the same filter twice", lambda: c.where(filter=Or([F("n", "==", 1), F("n", "==", 1)]))),
        ("and of one filter", lambda: c.where(filter=And([F("s", "==", "w")]))),
        ("or with in and array_contains_any",
         lambda: c.where(filter=Or([F("n", "in", [1, 2]), F("tags", "array_contains_any", ["green"])]))),
        ("or with not-in", lambda: c.where(filter=Or([F("n", "not-in", [1, 2]), F("s", "==", "x")]))),
        ("or with !=", lambda: c.where(filter=Or([F("n", "!=", 1), F("s", "==", "x")]))),
        ("or of null and nan", lambda: c.where(filter=Or([F("n", "==", None), F("n", "==", NAN)]))),
        ("or then where", lambda: c.where(filter=Or([F("s", "==", "x"), F("s", "==", "q")])).where(filter=F("n", ">", 0))),
        ("or of ranges on two fields", lambda: c.where(filter=Or([F("n", ">", 2), F("s", "<", "x")]))),
    ])


@scenario
def order_by_fields(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    return run_all(c, [
        ("s asc, n desc", lambda: c.order_by("s").order_by("n", direction=DESC)),
        ("s desc, n asc", lambda: c.order_by("s", direction=DESC).order_by("n")),
        ("m.k", lambda: c.order_by("m.k")),
        ("n desc, __name__ desc", lambda: c.order_by("n", direction=DESC).order_by("__name__", direction=DESC)),
        ("missing field (no documents)", lambda: c.order_by("nothing")),
        ("s == x, order by n", lambda: where(c, "s", "==", "x").order_by("n")),
        ("n > 1, order by s", lambda: where(c, "n", ">", 1).order_by("s")),
        ("n > 1 (implicit order by n)", lambda: where(c, "n", ">", 1)),
        ("n != 1 (implicit order by n)", lambda: where(c, "n", "!=", 1)),
        ("n > 1 and s > a (implicit order)", lambda: where(c, "n", ">", 1).where(filter=FieldFilter("s", ">", "a"))),
        ("b asc, s asc, n asc", lambda: c.order_by("b").order_by("s").order_by("n")),
        ("order by the same field twice", lambda: c.order_by("s").order_by("s")),
    ]) | {"__name__ desc": name_desc(c, c.order_by("__name__", direction=DESC))}


@scenario
def cursors_values(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    s = lambda d=ASC: c.order_by("s", direction=d)  # noqa: E731
    sn = lambda: c.order_by("s").order_by("n", direction=DESC)  # noqa: E731
    return run_all(c, [
        ("start_at x", lambda: s().start_at({"s": "x"})),
        ("start_after x", lambda: s().start_after({"s": "x"})),
        ("end_at x", lambda: s().end_at({"s": "x"})),
        ("end_before x", lambda: s().end_before({"s": "x"})),
        ("start_after w end_at y", lambda: s().start_after({"s": "w"}).end_at({"s": "y"})),
        ("desc start_at x", lambda: s(DESC).start_at({"s": "x"})),
        ("desc end_before q", lambda: s(DESC).end_before({"s": "q"})),
        ("two fields, start_at [x, 1]", lambda: sn().start_at(["x", 1])),
        ("two fields, start_after [x, 1]", lambda: sn().start_after(["x", 1])),
        ("two fields, partial start_after [x]", lambda: sn().start_after(["x"])),
        ("two fields, end_before [y, 2]", lambda: sn().end_before(["y", 2])),
        ("__name__ start_after c", lambda: c.order_by("__name__").start_after({"__name__": c.document("c")})),
        ("s, __name__ start_after [x, c]", lambda: s().order_by("__name__").start_after(["x", c.document("c")])),
        ("cursor past the end", lambda: s().start_after({"s": "zzz"})),
        ("cursor of another type", lambda: s().start_at({"s": 5})),
        ("n start_at NaN", lambda: c.order_by("n").start_at({"n": NAN})),
        ("n start_after null", lambda: c.order_by("n").start_after({"n": None})),
        ("empty range", lambda: s().start_at({"s": "y"}).end_before({"s": "x"})),
    ])


@scenario
def cursors_snapshots(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    b, m, f = c.document("b").get(), c.document("m").get(), c.document("f").get()
    return run_all(c, [
        ("no order, start_after b", lambda: c.start_after(b)),
        ("no order, end_at b", lambda: c.end_at(b)),
        ("s, start_after m", lambda: c.order_by("s").start_after(m)),
        ("s, start_at m", lambda: c.order_by("s").start_at(m)),
        ("s desc, start_at m", lambda: c.order_by("s", direction=DESC).start_at(m)),
        ("s desc, end_before m", lambda: c.order_by("s", direction=DESC).end_before(m)),
        ("n > 0, start_after b (implicit order)", lambda: where(c, "n", ">", 0).start_after(b)),
        ("n desc, end_at b", lambda: c.order_by("n", direction=DESC).end_at(b)),
        ("s, n desc, start_after m", lambda: c.order_by("s").order_by("n", direction=DESC).start_after(m)),
        ("snapshot without the ordered field", lambda: c.order_by("n").start_after(f)),
        ("s == x, start_after m", lambda: where(c, "s", "==", "x").start_after(m)),
    ])


@scenario
def limit_offset(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    s = lambda: c.order_by("s")  # noqa: E731
    out = run_all(c, [
        ("limit 3", lambda: s().limit(3)),
        ("limit 100", lambda: s().limit(100)),
        ("collection limit 2 (name order)", lambda: c.limit(2)),
        ("offset 2", lambda: s().offset(2)),
        ("offset 2 limit 3", lambda: s().offset(2).limit(3)),
        ("offset 100", lambda: s().offset(100)),
        ("start_after y, offset 1", lambda: s().start_after({"s": "x"}).offset(1)),
        ("where, limit 2", lambda: where(c, "n", ">", 0).limit(2)),
    ])
    # limit_to_last: get() reverses the orders, runs the query with a limit and reverses the
    # results (the client's quirk: it leaves the cursors as they are, so limit_to_last with a
    # cursor asks another question; not used here).
    for label, make in [("limit_to_last 3", lambda: s().limit_to_last(3)),
                        ("limit_to_last 3, desc", lambda: c.order_by("s", direction=DESC).limit_to_last(3)),
                        ("limit_to_last 2, where", lambda: where(c, "n", ">", 1).order_by("n").limit_to_last(2)),
                        ("limit_to_last 100", lambda: s().limit_to_last(100)),
                        ("limit_to_last without order", lambda: c.limit_to_last(2))]:
        try:
            out[label] = [d.id for d in make().get()]
        except Exception as e:  # noqa: BLE001
            out[label] = error_of(e)
    return out


@scenario
def select_projection(db, p):
    c = db.collection(p + "rows")
    seed(db, c)
    out = {}
    out["s, ordered, 4"] = docs(c.order_by("s").select(["s"]).limit(4))
    out["m.k"] = docs(c.select(["m.k"]).where(filter=FieldFilter("m.k", ">=", 1)))
    out["missing field"] = docs(c.select(["nothing"]).limit(3))
    out["two fields, where"] = docs(c.select(["s", "n"]).where(filter=FieldFilter("s", "==", "x")))
    out["no fields"] = docs(c.select([]).limit(3))
    out["__name__"] = docs(c.select(["__name__"]).limit(2))
    out["field and its parent"] = err(lambda: list(c.select(["m", "m.k"]).stream()))
    return out


@scenario
def invalid_queries(db, p):
    c = db.collection(p + "bad")
    c.document("d").set({"a": 1, "b": [1]})
    F = FieldFilter

    def q(make):
        return err(lambda: list(make().stream()))

    out = {}
    out["in, 31 values"] = q(lambda: where(c, "a", "in", list(range(31))))
    out["in, []"] = q(lambda: where(c, "a", "in", []))
    out["array_contains_any, []"] = q(lambda: where(c, "b", "array_contains_any", []))
    out["array_contains_any, 31 values"] = q(lambda: where(c, "b", "array_contains_any", list(range(31))))
    out["not-in, 11 values"] = q(lambda: where(c, "a", "not-in", list(range(11))))
    out["not-in and !="] = q(lambda: where(c, "a", "not-in", [1]).where(filter=F("b", "!=", 1)))
    out["two !="] = q(lambda: where(c, "a", "!=", 1).where(filter=F("b", "!=", 1)))
    out["two array_contains"] = q(lambda: where(c, "b", "array_contains", 1).where(filter=F("b", "array_contains", 2)))
    out["array_contains_any and in"] = q(lambda: where(c, "b", "array_contains_any", [1]).where(filter=F("a", "in", [1])))
    out["not-in and in"] = q(lambda: where(c, "a", "not-in", [1]).where(filter=F("b", "in", [1])))
    out["or, 31 disjunctions"] = q(lambda: c.where(filter=Or([F("a", "==", i) for i in range(31)])))
    out["or, in x in = 36 disjunctions"] = q(lambda: c.where(filter=And([F("a", "in", list(range(6))), F("b", "in", list(range(6)))])))
    out["__name__ with a string"] = q(lambda: where(c, "__name__", "==", "d"))
    out["__name__ with another collection's document"] = q(lambda: where(c, "__name__", "==", db.document(p + "other/d")))
    out["order by __name__, cursor of another collection"] = q(lambda: c.order_by("__name__").start_at({"__name__": db.document(p + "other/d")}))
    out["array_contains_any with null only"] = q(lambda: where(c, "b", "array_contains_any", [None]))
    out["> null"] = q(lambda: where(c, "a", ">", None))
    out["> NaN"] = q(lambda: where(c, "a", ">", NAN))
    out["negative limit"] = q(lambda: c.limit(-1))
    out["negative offset"] = q(lambda: c.offset(-1))
    out["too many cursor values"] = q(lambda: c.order_by("a").start_at(["x", "y"]))
    out["bad field path"] = q(lambda: where(c, "a..b", "==", 1))
    out["collection group id with a slash"] = err(lambda: list(db.collection_group("a/b").stream()))
    return out
