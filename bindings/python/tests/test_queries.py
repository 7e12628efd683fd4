"""Queries: every operator and alias, FieldFilter/And/Or (ours and duck-typed google ones),
order_by, limits, cursors, collection groups, count, stream, select, offset, invalid queries."""
import types

import pytest

import ember
from ember import And, FieldFilter, Or, Query


@pytest.fixture
def cities(db):
    c = db.collection("cities")
    data = {
        "SF": {"name": "San Francisco", "state": "CA", "population": 860000, "regions": ["west_coast", "norcal"]},
        "LA": {"name": "Los Angeles", "state": "CA", "population": 3900000, "regions": ["west_coast", "socal"]},
        "DC": {"name": "Washington", "state": "DC", "population": 680000, "regions": ["east_coast"]},
        "TOK": {"name": "Tokyo", "state": None, "population": 9000000, "regions": ["kanto", "honshu"]},
        "BJ": {"name": "Beijing", "state": None, "population": 21500000, "regions": ["jingjinji", "hebei"]},
    }
    b = db.batch()
    for k, v in data.items():
        b.set(c.document(k), v)
    b.commit()
    return c


def ids(q):
    return [d.id for d in q.get()]


@pytest.mark.parametrize("op,value,expected", [
    ("==", "CA", {"SF", "LA"}), ("!=", "CA", {"DC"}),
    ("<", 860000, {"DC"}), ("<=", 860000, {"DC", "SF"}), (">", 9000000, {"BJ"}), (">=", 9000000, {"BJ", "TOK"}),
    ("array-contains", "west_coast", {"SF", "LA"}), ("array_contains", "west_coast", {"SF", "LA"}),
    ("array-contains-any", ["socal", "kanto"], {"LA", "TOK"}), ("array_contains_any", ["socal", "kanto"], {"LA", "TOK"}),
    ("in", ["Tokyo", "Beijing"], {"TOK", "BJ"}), ("not-in", ["Tokyo", "Beijing"], {"SF", "LA", "DC"}),
    ("not_in", ["Tokyo", "Beijing"], {"SF", "LA", "DC"}),
])
def test_every_operator(cities, op, value, expected):
    field = {"==": "state", "!=": "state"}.get(op, "population")
    if "array" in op:
        field = "regions"
    if op in ("in", "not-in", "not_in"):
        field = "name"
    assert set(ids(cities.where(filter=FieldFilter(field, op, value)))) == expected
    assert set(ids(cities.where(field, op, value))) == expected


def test_null_equality(cities):
    assert set(ids(cities.where("state", "==", None))) == {"TOK", "BJ"}


def test_unknown_operator(cities):
    with pytest.raises(ember.InvalidArgumentError, match="op_string.*'=~'"):
        cities.where("a", "=~", 1)


def test_and_or(cities):
    q = cities.where(filter=Or([FieldFilter("state", "==", "CA"), FieldFilter("population", ">", 10000000)]))
    assert set(ids(q)) == {"SF", "LA", "BJ"}
    q = cities.where(filter=And([FieldFilter("state", "==", "CA"), FieldFilter("population", ">", 1000000)]))
    assert ids(q) == ["LA"]
    q = cities.where(filter=Or([And([FieldFilter("state", "==", "CA"), FieldFilter("population", "<", 1000000)]),
                                FieldFilter("name", "==", "Tokyo")]))
    assert set(ids(q)) == {"SF", "TOK"}


def test_google_filters_duck_typed(cities):
    # shapes of google.cloud.firestore_v1.base_query.FieldFilter / Or (operator is a proto enum)
    GFieldFilter = type("FieldFilter", (), {})
    f1 = GFieldFilter(); f1.field_path, f1.op_string, f1.value = "state", "==", "CA"
    f2 = GFieldFilter(); f2.field_path, f2.op_string, f2.value = "name", "==", "Tokyo"
    GOr = type("Or", (), {})
    o = GOr(); o.filters = [f1, f2]; o.operator = types.SimpleNamespace(name="OR", value=2)
    assert set(ids(cities.where(filter=o))) == {"SF", "LA", "TOK"}
    assert set(ids(cities.where(filter=f1))) == {"SF", "LA"}
    with pytest.raises(ember.InvalidArgumentError, match="filter"):
        cities.where(filter=object())
    with pytest.raises(ember.InvalidArgumentError, match="not both"):
        cities.where("a", "==", 1, filter=f1)


def test_order_by_limit(cities):
    assert ids(cities.order_by("population").limit(2)) == ["DC", "SF"]
    assert ids(cities.order_by("population", direction=Query.DESCENDING).limit(2)) == ["BJ", "TOK"]
    assert ids(cities.order_by("population", direction=ember.Query.DESCENDING)) == ["BJ", "TOK", "LA", "SF", "DC"]
    assert ids(cities.order_by("name").limit_to_last(2)) == ["TOK", "DC"]
    with pytest.raises(ember.InvalidArgumentError, match="direction"):
        cities.order_by("name", direction="UP")
    with pytest.raises(ember.InvalidArgumentError, match="limit"):
        cities.limit(0)
    with pytest.raises(ember.InvalidArgumentError, match="limit"):
        cities.limit("3")


def test_limit_to_last_needs_order_by_when_run(cities):
    q = cities.limit_to_last(2)
    with pytest.raises(ember.InvalidArgumentError) as e:
        q.get()
    assert isinstance(e.value, ValueError)
    errors = []
    q.on_snapshot(lambda *a: None, on_error=errors.append)   # a listen reports it to on_error
    assert len(errors) == 1 and isinstance(errors[0], ember.InvalidArgumentError)


def test_cursors(cities):
    by_name = cities.order_by("name")
    assert ids(by_name.start_at({"name": "San Francisco"})) == ["SF", "TOK", "DC"]
    assert ids(by_name.start_after(["San Francisco"])) == ["TOK", "DC"]
    assert ids(by_name.end_at(("Los Angeles",))) == ["BJ", "LA"]
    assert ids(by_name.end_before({"name": "Los Angeles"})) == ["BJ"]
    assert ids(cities.order_by("name").limit_to_last(3).start_at({"name": "B"}).end_before(["M"])) == ["BJ", "LA"]
    snap = cities.document("LA").get()
    assert ids(cities.order_by("population").start_after(snap)) == ["TOK", "BJ"]
    assert ids(cities.order_by("population").end_at(snap)) == ["DC", "SF", "LA"]
    with pytest.raises(ember.InvalidArgumentError, match="order-by field"):
        by_name.start_at({"population": 1})
    with pytest.raises(ember.InvalidArgumentError, match="order_by"):
        cities.start_at({"name": "a"})
    with pytest.raises(ember.InvalidArgumentError, match="document_fields_or_snapshot"):
        by_name.start_at("a")


def test_document_id_field(cities):
    q = cities.order_by(ember.FieldPath.document_id()).start_at(["LA"]).limit(2)
    assert ids(q) == ["LA", "SF"]
    assert ids(cities.where(ember.FieldPath.document_id(), "==", cities.document("SF"))) == ["SF"]


def test_collection_group(db):
    db.document("cities/SF/landmarks/golden").set({"type": "bridge"})
    db.document("cities/SF/landmarks/moma").set({"type": "museum"})
    db.document("cities/TOK/landmarks/national").set({"type": "museum"})
    db.document("museums/x").set({"type": "museum"})
    assert sorted(ids(db.collection_group("landmarks").where("type", "==", "museum"))) == ["moma", "national"]
    with pytest.raises(ember.InvalidArgumentError, match="collection_id"):
        db.collection_group("a/b")


def test_count_stream_select_offset(cities):
    res = cities.where("state", "==", "CA").count().get()
    assert res[0][0].value == 2 and res[0][0].alias == "field_1"
    assert cities.count(alias="all").get()[0][0].alias == "all"
    assert [d.id for d in cities.order_by("name").stream()] == ["BJ", "LA", "SF", "TOK", "DC"]
    docs = cities.order_by("name").select(["name"]).get()
    assert docs[0].to_dict() == {"name": "Beijing"}
    assert ids(cities.order_by("name").offset(1).limit(2)) == ["LA", "SF"]
    assert cities.order_by("name").offset(3).count().get()[0][0].value == 2
    with pytest.raises(ember.InvalidArgumentError, match="offset"):
        cities.offset(-1)
    with pytest.raises(ember.InvalidArgumentError, match="select"):
        cities.select("name")


def test_queries_are_immutable(cities):
    base = cities.where("state", "==", "CA")
    a = base.order_by("population").limit(1)
    assert ids(a) == ["SF"] and set(ids(base)) == {"SF", "LA"}


def test_invalid_query_raises_when_built(cities):
    with pytest.raises(ember.InvalidArgumentError):
        cities.where("regions", "array-contains-any", [])
    with pytest.raises(ember.InvalidArgumentError):
        cities.where("a", "in", list(range(31)))


def test_query_source_and_offline(db, cities):
    db.disable_network()
    assert set(ids(cities.where("state", "==", "CA"))) == {"SF", "LA"}
    with pytest.raises(ember.UnavailableError):
        cities.count().get()
    db.enable_network()
