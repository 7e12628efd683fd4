"""Firestore's finer rules (writes, queries, names, the tree's order). Each expectation is what the
Cloud Firestore emulator and google-cloud-firestore answered for the same calls (recorded here so
the test runs without the emulator)."""
import pytest

import ember
from ember import FieldFilter, Or, And


@pytest.fixture
def db():
    c = ember.Client()
    yield c
    c.close()


def test_update_replaces_a_map_value_whole_with_transforms_inside(db):
    ref = db.collection("c").document("u")
    ref.set({"c": {"x": 1, "d": [0]}, "keep": 1}).wait(5)
    ref.update({"c": {"d": ember.SERVER_TIMESTAMP}})
    got = ref.get().to_dict()
    assert set(got) == {"c", "keep"} and set(got["c"]) == {"d"}      # emulator: {'c': {'d': <time>}}
    ref.set({"c": {"x": 1, "d": [0]}}).wait(5)
    ref.update({"c": {"d": ember.ArrayUnion([1])}})
    assert ref.get().to_dict() == {"c": {"d": [1]}}                   # emulator: {'c': {'d': [1]}}
    ref.set({"c": {"x": 1}}).wait(5)
    ref.update({"c": {"y": 2}})
    assert ref.get().to_dict() == {"c": {"y": 2}}
    ref.update({"c.z": 3, "n": ember.Increment(1)})                   # dotted keys still patch
    assert ref.get().to_dict() == {"c": {"y": 2, "z": 3}, "n": 1}


def test_delete_field_rules(db):
    ref = db.collection("c").document("d")
    ref.set({"c": {"d": 1}, "e": 1}).wait(5)
    with pytest.raises(ember.InvalidArgumentError):                   # emulator client: ValueError
        ref.set({"a": ember.DELETE_FIELD})
    with pytest.raises(ember.InvalidArgumentError, match="top level"):
        ref.update({"c": {"d": ember.DELETE_FIELD}})                  # "Cannot update with nest delete"
    ref.update({"c.d": ember.DELETE_FIELD, "e": ember.DELETE_FIELD})  # top-level keys: fine
    assert ref.get().to_dict() == {"c": {}}


def test_merge_field_rules(db):
    ref = db.collection("c").document("m")
    with pytest.raises(ember.InvalidArgumentError, match="overlap"):  # "Merge paths overlap"
        ref.set({"a": 1, "b": {"c": 1}}, merge=["b", "b.c"])
    ref.set({"h": {"old": 1}, "k": 1}).wait(5)
    ref.set({"h": {"g": ember.SERVER_TIMESTAMP}}, merge=["h"]).wait(5)
    got = ref.get().to_dict()
    assert set(got) == {"h", "k"} and set(got["h"]) == {"g"}          # emulator: {'h': {'g': <time>}}


def test_list_operators_take_arrays_as_elements(db):
    c = db.collection("c")
    c.document("x").set({"v": [1, 2]}).wait(5)
    c.document("y").set({"v": [3]}).wait(5)
    assert [d.id for d in c.where("v", "in", [[1, 2]]).get()] == ["x"]
    assert [d.id for d in c.where("v", "not-in", [[1, 2]]).get()] == ["y"]
    assert [d.id for d in c.where("v", "array-contains-any", [[1, 2]]).get()] == []


def test_query_errors_when_built(db):
    c = db.collection("c")
    with pytest.raises(ember.InvalidArgumentError, match="order_by"):
        c.order_by("a").start_at({"a": 1}).order_by("b")
    for bad in ("a..b", ".a", "a.", "a.`b", "a~b", ""):
        with pytest.raises(ember.InvalidArgumentError):
            c.select([bad])
    c.select(["a.b", "`odd.name`", "x_1"])                            # valid paths pass
    other = db.collection("other").document("o")
    other.set({"a": 1}).wait(5)
    with pytest.raises(ember.InvalidArgumentError, match="another collection"):
        c.order_by("a").start_at(other.get())
    mine = c.document("m")
    mine.set({"a": 1}).wait(5)
    c.order_by("a").start_at(mine.get())                              # same collection: fine
    db.collection_group("c").order_by("a").start_at(mine.get())       # group of its collection: fine


def test_id_and_name_limits(db):
    c = db.collection("c")
    c.document("i" * 1500).set({"a": 1}).wait(5)                      # emulator: accepted
    with pytest.raises(ember.InvalidArgumentError, match="1500"):     # "longer than 1500 bytes"
        c.document("i" * 1501)
    long_path = "/".join(["p" * 1000, "q" * 1000, "r" * 1000, "s" * 1000, "t" * 1000]) + "/d"
    db.document(long_path).set({"a": 1}).wait(5)                      # 5,006 bytes: accepted
    with pytest.raises(ember.InvalidArgumentError, match="6144"):
        db.document("/".join(["n" * 1500] * 4) + "/" + "d" * 200)


def test_at_most_30_disjunctions(db):
    c = db.collection("c")
    F = FieldFilter
    c.where(filter=Or([F("a", "==", i) for i in range(30)])).get()
    with pytest.raises(ember.InvalidArgumentError, match="31 disjunctions"):
        c.where(filter=Or([F("a", "==", i) for i in range(31)])).get()
    c.where(filter=And([F("a", "in", list(range(6))), F("b", "in", list(range(5)))])).get()
    with pytest.raises(ember.InvalidArgumentError, match="36 disjunctions"):
        c.where(filter=And([F("a", "in", list(range(6))), F("b", "in", list(range(6)))])).get()
    with pytest.raises(ember.InvalidArgumentError, match="60 disjunctions"):
        c.where("b", "array-contains-any", list(range(30))).where("a", "in", [1, 2]).get()


def test_tree_default_order_is_priority_then_key(db):
    r = db.reference("t")
    r.set({"a": 1, "b": 2, "c": 3, "g": 4, "h": 5}).wait(5)
    assert list(r.start_at(None, "b").end_at(None, "g").get()) == ["b", "c", "g"]
    assert list(r.start_after(None, "b").get()) == ["c", "g", "h"]
    assert r.start_at("b").get() is None          # a priority above every child's (null)
    with pytest.raises(ember.InvalidArgumentError):
        r.start_at(True).get()                    # not a priority
