"""Input at the C boundary.

Every string that crosses into libember as a C string is refused when it holds a NUL character
(C would read only what precedes it: another document, another file). Every value encoder bounds
nesting for lists and dicts alike (self-references included) and raises. Wrong argument types and
out-of-range numbers raise Ember's errors, TypeError or ValueError, never AttributeError,
OverflowError or RecursionError.
"""
import os

import pytest

import ember


@pytest.fixture
def db():
    c = ember.Client()
    yield c
    c.close()


NUL_ERRORS = (ember.InvalidArgumentError, ValueError)


def test_nul_in_document_id_does_not_write_another_document(db):
    db.collection("c").document("a").set({"v": "original"}).wait(5)
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").document("a\x00b").set({"v": "overwritten"})
    with pytest.raises(ember.InvalidArgumentError):
        db.document("c/a\x00b").update({"v": "overwritten"})
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").document("a\x00").delete()
    assert db.collection("c").document("a").get().to_dict() == {"v": "original"}


def test_ids_that_begin_with_a_combining_mark_address_their_own_documents(db):
    # "/" followed by U+0301 still separates segments, as in Python's str.split("/").
    db.document("rooms/\u0301r/messages/\u0301m").set({"n": 1}).wait(5)
    msgs = db.collection("rooms").document("\u0301r").collection("messages")
    assert msgs.document("\u0301m").get().to_dict() == {"n": 1}
    assert [d.id for d in msgs.get()] == ["\u0301m"]
    db.collection("c").document("d").set({"x": {"\u0301y": 5}}).wait(5)
    assert [d.id for d in db.collection("c").where("x.\u0301y", "==", 5).get()] == ["d"]


@pytest.mark.parametrize("call", [
    lambda db: db.collection("c\x00d").document("x").set({"v": 1}),
    lambda db: db.collection("c").document("a\x00b").get(),
    lambda db: db.collection("c").document("a\x00b").on_snapshot(lambda *a: None),
    lambda db: db.collection_group("g\x00h").get(),
    lambda db: db.collection("c\x00d").get(),
    lambda db: db.collection("c").where("f\x00g", "==", 1).get(),
    lambda db: db.collection("c").order_by("f\x00g").get(),
    lambda db: db.collection("c").document("a").set({"v": 1}, merge=["v\x00w"]),
    lambda db: db.batch().set(db.collection("c").document("a\x00b"), {"v": 1}).commit(),
    lambda db: db.batch().delete(db.collection("c").document("a\x00b")).commit(),
    lambda db: db.reference("tree\x00x").set(1),
    lambda db: db.reference("tree").child("a\x00b").set(1),
    lambda db: db.reference("tree").order_by_child("a\x00b").get(),
    lambda db: db.set_index_configuration('{"indexes": [], "fieldOverrides": []}\x00junk'),
], ids=["collection", "get", "listen", "group", "query", "where", "order_by", "merge",
        "batch-set", "batch-delete", "tree-ref", "tree-child", "tree-order-by-child", "index-json"])
def test_nul_in_any_string_argument_is_refused(db, call):
    # Strings that travel inside MessagePack values (values, map keys, select's field paths, tree
    # bounds) carry their length and may hold NULs; these travel as C strings.
    with pytest.raises(NUL_ERRORS):
        call(db)


def test_nul_in_client_path_opens_no_other_file(tmp_path):
    target = tmp_path / "app.ember"
    with pytest.raises(NUL_ERRORS):
        ember.Client(path=str(target) + "\x00.other")
    assert not target.exists()
    with pytest.raises(NUL_ERRORS):
        ember.Client.clear_persistence(str(target) + "\x00x")


def test_nul_inside_values_and_field_names_round_trips(db):
    ref = db.collection("c").document("a")
    ref.set({"s": "a\x00b", "k\x00ey": 1, "m": {"x\x00": "\x00"}}).wait(5)
    assert ref.get().to_dict() == {"s": "a\x00b", "k\x00ey": 1, "m": {"x\x00": "\x00"}}


def _deep_list(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


def _deep_dict(n):
    v = {}
    for _ in range(n):
        v = {"a": v}
    return v


def _self_list():
    x = []
    x.append(x)
    return x


def _self_dict():
    d = {}
    d["d"] = d
    return d


BAD_VALUES = {
    "self-list": _self_list,
    "self-dict": _self_dict,
    "list-100k": lambda: _deep_list(100_000),
    "dict-100k": lambda: _deep_dict(100_000),
    "mixed-100k": lambda: [_deep_dict(50_000)],
}


@pytest.mark.parametrize("make", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_deep_or_self_referencing_values_raise_everywhere(db, make):
    v = make()
    c = db.collection("c")
    calls = [
        lambda: c.document("a").set({"v": v}),
        lambda: c.document("a").set({"v": v}, merge=True),
        lambda: c.document("a").update({"v": v}),
        lambda: c.document("a").update({"v": ember.ArrayUnion([v])}),
        lambda: c.document("a").update({"v": ember.ArrayRemove([v])}),
        lambda: db.batch().set(c.document("a"), {"v": v}),
        lambda: c.where("v", "==", v).get(),
        lambda: c.where("v", "in", [v]).get(),
        lambda: c.order_by("v").start_at([v]).get(),
        lambda: c.order_by("v").start_at({"v": v}).get(),
        lambda: db.reference("t").set(v),
        lambda: db.reference("t").update({"x": v}),
        lambda: db.reference("t").push(v),
    ]
    for call in calls:
        with pytest.raises(ember.InvalidArgumentError, match="nested too deeply|too deep|depth"):
            call()
    assert not c.document("a").get().exists


def test_wrong_types_and_ranges_raise_documented_errors(db):
    ref = db.collection("c").document("a")
    with pytest.raises(TypeError):
        ref.set({"v": 1}, merge=[1])
    with pytest.raises(TypeError):
        db.batch().set(None, {"v": 1})
    with pytest.raises(TypeError):
        db.batch().update("c/a", {"v": 1})
    with pytest.raises(TypeError):
        db.batch().delete(None)
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").limit(2**70)
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").limit_to_last(2**70)
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").offset(2**70)
    with pytest.raises(ember.InvalidArgumentError):
        ember.Client(cache_size_bytes=2**70)
    f = ember.FieldFilter("a", "==", 1)
    for combinator in (ember.Or, ember.And):
        deep = f
        for _ in range(1000):
            deep = combinator([deep])
        with pytest.raises(ember.InvalidArgumentError):
            db.collection("c").where(filter=deep).get()


# Values whose encoding runs Python code (a tzinfo's utcoffset(), a __getattr__) that changes the
# container being encoded: an error, never a read of freed memory.

def test_a_list_emptied_while_it_is_encoded_raises(db):
    import datetime
    vals = []

    class Clearing(datetime.tzinfo):
        def utcoffset(self, dt):
            vals.clear()
            [[i] for i in range(5000)]   # reuse the freed memory
            return datetime.timedelta(0)

    vals += [datetime.datetime(2024, 1, 1, tzinfo=Clearing())] + ["s%d" % i for i in range(2000)]
    with pytest.raises(ember.InvalidArgumentError, match="changed size"):
        db.collection("c").document("d").set({"vals": vals})


def test_a_dict_emptied_while_it_is_encoded_raises(db):
    data = {}

    class Clearing:
        def __getattr__(self, name):
            data.clear()
            [{"k%d" % i: i} for i in range(2000)]
            raise AttributeError(name)

    data.update({"a": Clearing(), **{"f%d" % i: i for i in range(100)}})
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").document("d").set(data)


def test_merge_field_paths_are_not_read_from_a_list_changed_meanwhile(db):
    ref = db.collection("c").document("m")
    ref.set({"a": 1, "b": 2}).wait(5)
    fields = [ember.FieldPath("a"), "b"]
    ref.set({"a": 10, "b": 20}, merge=fields).wait(5)
    assert ref.get().to_dict() == {"a": 10, "b": 20}
    assert isinstance(fields[0], ember.FieldPath), "the caller's list is left as it was"
    ref.set({"a": 11}, merge=(ember.FieldPath("a"),)).wait(5)   # a tuple, not only a list
    assert ref.get().to_dict() == {"a": 11, "b": 20}

    class Replacing(ember.FieldPath):
        def to_api_repr(self):
            fields2[0] = "z" * 72
            [("q" * 72) for _ in range(1000)]
            return "a"

    fields2 = ["b", Replacing("a")]
    ref.set({"a": 12, "b": 21}, merge=fields2).wait(5)
    assert ref.get().to_dict() == {"a": 12, "b": 21}


def test_lone_surrogates_are_invalid_arguments(db):
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").document("d").set({"v": "\ud800"})
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").document("d").set({"\udfff": 1})
    with pytest.raises(ember.InvalidArgumentError):
        db.collection("c").document("\ud800").set({"v": 1})


def test_str_subclasses_are_stored_as_str(db):
    import enum

    class Color(str, enum.Enum):
        RED = "red"

    ref = db.collection("c").document("e")
    ref.set({"color": Color.RED}).wait(5)
    assert ref.get().to_dict() == {"color": "red"}


def test_a_non_contiguous_memoryview_is_an_invalid_argument(db):
    view = memoryview(bytes(range(10)))[::2]
    with pytest.raises(ember.InvalidArgumentError, match="contiguous"):
        db.collection("c").document("d").set({"b": view})


def test_wait_timeouts_nan_and_infinite(db):
    import threading
    ref = db.collection("c").document("w")
    with pytest.raises(ember.InvalidArgumentError):
        ref.set({"a": 1}).wait(float("nan"))
    db.disable_network()
    pending = ref.set({"a": 2})
    out = {}

    def waiter():
        pending.wait(float("inf"))
        out["done"] = True

    t = threading.Thread(target=waiter)
    t.start()
    db.enable_network()
    t.join(10)
    assert out.get("done"), "wait(inf) returned once the write was acknowledged"
    got = threading.Event()
    w = db.collection("c").document("w").on_snapshot(lambda *a: got.set())
    assert got.wait(5), "the event thread still delivers"
    w.unsubscribe()


def test_waiting_for_an_acknowledgement_inside_a_callback_raises(db):
    import threading
    errors, done = [], threading.Event()

    def on_snapshot(*args):
        if done.is_set():
            return
        try:
            db.collection("c").document("x").set({"b": 2}).wait()
        except ember.FailedPreconditionError as e:
            errors.append(e)
        try:
            db.wait_for_pending_writes()
        except ember.FailedPreconditionError as e:
            errors.append(e)
        done.set()

    w = db.collection("c").document("y").on_snapshot(on_snapshot)
    assert done.wait(5), "the callback returned instead of waiting for ever"
    w.unsubscribe()
    assert len(errors) == 2
