"""The Realtime-Database-style tree from Python (docs/python.md's tree part): references, push
ids, set / multi-path update / delete / get, ordered queries, event sequences with prev_key,
limit windows, query errors, observers removed (one, all at a location, inside a callback),
DataSnapshot."""
import threading
import time
from collections import OrderedDict

import pytest

import ember
from ember import EventType


class Events:
    """Records (type letter, key, prev_key, value) per callback; wait(n) blocks until n arrived."""

    def __init__(self):
        self.items = []
        self.cv = threading.Condition()

    def cb(self, letter, with_value=False):
        def on(snap, prev):
            with self.cv:
                self.items.append((letter, snap.key, prev) + ((snap.value,) if with_value else ()))
                self.cv.notify_all()
        return on

    def wait(self, n, timeout=5.0, settle=0.03):
        end = time.monotonic() + timeout
        with self.cv:
            while len(self.items) < n:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} events, got {self.items}")
                self.cv.wait(left)
        time.sleep(settle)
        with self.cv:
            out, self.items = self.items, []
        return out


def setv(ref, value):
    """Sets and waits for the acknowledgement."""
    ref.set(value).wait(5)


def test_references_and_push_ids(db):
    root = db.reference()
    assert root.key is None and root.path == "/" and root.parent is None
    posts = root.child("posts")
    assert posts.key == "posts" and posts.path == "/posts"
    assert db.reference("posts/abc/") == posts.child("abc")
    assert posts.child("a/b").parent.path == "/posts/a"
    keys = [posts.push().key for _ in range(2000)]
    assert all(len(k) == 20 for k in keys)
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    new = posts.push({"title": "Hi", "metrics": {"views": 3}})
    assert len(new.key) == 20 and new.get() == {"title": "Hi", "metrics": {"views": 3}}
    for bad in ["a.b", "a$", "#", "[x]", "x\x01", ""]:
        with pytest.raises(ember.InvalidArgumentError):
            posts.child(bad)
    with pytest.raises(ember.InvalidArgumentError):
        db.reference("/".join(["a"] * 33))
    with pytest.raises(ember.InvalidArgumentError):
        posts.child(3)


def test_set_update_delete_get(db):
    posts = db.reference("posts")
    assert posts.get() is None
    r = posts.child("x").set({"a": 1, "b": "s", "c": [1, 2, 3], "d": 1.5, "e": True, "f": None, "g": {}})
    r.wait(5)
    assert r.done and r.update_time is not None
    assert posts.get() == {"x": {"a": 1, "b": "s", "c": [1, 2, 3], "d": 1.5, "e": True}}
    posts.update({"x/a": 2, "y": {"z": None, "w": 0}, "x/c": None})
    assert posts.get() == {"x": {"a": 2, "b": "s", "d": 1.5, "e": True}, "y": {"w": 0}}
    posts.child("x").delete().wait(5)
    assert posts.get() == {"y": {"w": 0}}
    posts.child("sparse").set({"0": "a", "1": "b", "3": "d"})
    assert posts.child("sparse").get() == ["a", "b", None, "d"]
    posts.child("sparse").set({"0": "a", "9": "j"})
    assert posts.child("sparse").get() == {"0": "a", "9": "j"}
    posts.child("y").set(None)
    assert posts.child("y").get() is None


def test_write_errors(db):
    ref = db.reference("w")
    with pytest.raises(ember.InvalidArgumentError):
        ref.set({"a.b": 1})
    with pytest.raises(ember.InvalidArgumentError):
        ref.set(float("nan"))
    with pytest.raises(ember.InvalidArgumentError):
        ref.set(b"bytes are not tree values")
    with pytest.raises(ember.InvalidArgumentError):
        ref.update({"a": 1, "a/b": 2})
    with pytest.raises(ember.InvalidArgumentError):
        ref.update([1, 2])
    with pytest.raises((ember.InvalidArgumentError, TypeError)):
        ref.set({1: "non-str key"})
    deep = {}
    node = deep
    for _ in range(40):
        node["n"] = {}
        node = node["n"]
    node["leaf"] = 1
    with pytest.raises(ember.InvalidArgumentError):
        ref.set(deep)
    assert ref.get() is None


def test_ordered_queries(db):
    s = db.reference("scores")
    setv(s, {"a": 10, "b": 30, "c": 20, "d": {"x": 1}, "e": "str", "f": True})
    got = s.order_by_value().get()
    assert isinstance(got, OrderedDict)
    assert list(got) == ["f", "a", "c", "b", "e", "d"]   # bool < numbers < strings < objects
    assert list(s.order_by_value().limit_to_last(2).get()) == ["e", "d"]
    assert list(s.order_by_value().start_at(20).end_at(30).get()) == ["c", "b"]
    assert list(s.order_by_value().start_after(10).end_before(30).get()) == ["c"]
    assert list(s.order_by_value().equal_to(20).get()) == ["c"]
    assert list(s.order_by_key().start_at("b").end_before("e").get()) == ["b", "c", "d"]
    assert s.order_by_value().equal_to(99).get() is None
    # key order table (docs/semantics.md 15)
    k = db.reference("keys")
    setv(k, {key: 1 for key in ["foo", "100", "003", "bar", "5", "03", "0", "9", "3", "20"]})
    assert list(k.order_by_key().get()) == ["0", "3", "03", "003", "5", "9", "20", "100", "bar", "foo"]
    # nested child paths, ties by key
    p = db.reference("posts")
    setv(p, {"p1": {"m": {"v": 5}}, "p2": {"m": {"v": 1}}, "p3": {"m": {"v": 5}}, "p4": {}})
    assert list(p.order_by_child("m/v").get()) == ["p2", "p1", "p3"]
    assert list(p.order_by_child("m/v").limit_to_last(2).get()) == ["p1", "p3"]
    assert list(p.order_by_child("m/v").start_at(5, "p3").get()) == ["p3"]


def test_query_errors(db):
    s = db.reference("s")
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_value().order_by_key()
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_child("")
    for reserved in ["$key", "$value", "$priority"]:
        with pytest.raises(ember.InvalidArgumentError):
            s.order_by_child(reserved)
    with pytest.raises(ember.InvalidArgumentError):
        s.limit_to_first(0)
    with pytest.raises(ember.InvalidArgumentError):
        s.limit_to_last(-1)
    with pytest.raises(ember.InvalidArgumentError):
        s.limit_to_first(2).limit_to_last(2)
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_value().start_at(1).start_after(2)
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_value().start_at(1).equal_to(2)
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_key().start_at(3)
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_key().start_at("a", "k")
    with pytest.raises(ember.InvalidArgumentError):
        s.order_by_value().end_at({"a": 1})
    with pytest.raises(ember.InvalidArgumentError):
        s.start_at(True).get()   # without an order-by, bounds are priorities (null, numbers, strings)
    q = s.order_by_value()
    q.limit_to_first(1)
    q.limit_to_last(1)   # builders return new queries: q itself is unchanged
    with pytest.raises(ember.InvalidArgumentError):
        s.observe("nope", lambda snap, prev: None)
    with pytest.raises(TypeError):
        s.observe(EventType.VALUE, None)


def test_event_sequences(db):
    lst = db.reference("list")
    setv(lst, {"a": {"score": 3}, "b": {"score": 1}, "c": {"score": 2}})
    ev = Events()
    q = lst.order_by_child("score")
    handles = [q.observe(EventType.CHILD_ADDED, ev.cb("A"))]
    assert ev.wait(3) == [("A", "b", None), ("A", "c", "b"), ("A", "a", "c")]
    handles += [q.observe(EventType.CHILD_REMOVED, ev.cb("R")), q.observe(EventType.CHILD_CHANGED, ev.cb("C")),
                q.observe(EventType.CHILD_MOVED, ev.cb("M")), lst.observe(EventType.VALUE, ev.cb("V", True))]
    assert ev.wait(1) == [("V", "list", None, {"a": {"score": 3}, "b": {"score": 1}, "c": {"score": 2}})]
    lst.child("b/score").set(5)
    assert ev.wait(3) == [("M", "b", "a"), ("C", "b", "a"),
                          ("V", "list", None, {"a": {"score": 3}, "b": {"score": 5}, "c": {"score": 2}})]
    lst.child("a").delete()
    assert ev.wait(2) == [("R", "a", None), ("V", "list", None, {"b": {"score": 5}, "c": {"score": 2}})]
    lst.update({"d/score": 0, "e/score": 9, "c": None})     # one value event for the whole update
    assert ev.wait(4) == [("R", "c", None), ("A", "d", None), ("A", "e", "b"),
                          ("V", "list", None, {"b": {"score": 5}, "d": {"score": 0}, "e": {"score": 9}})]
    for h in handles:
        lst.remove_observer(h)
    lst.remove_observer(handles[0])   # idempotent
    lst.child("z").set({"score": 1})
    time.sleep(0.05)
    assert ev.items == []


def test_limit_windows(db):
    s = db.reference("s")
    setv(s, {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    ev = Events()
    first = s.order_by_value().limit_to_first(2)
    first.observe(EventType.CHILD_ADDED, ev.cb("A"))
    first.observe(EventType.CHILD_REMOVED, ev.cb("R"))
    assert ev.wait(2) == [("A", "a", None), ("A", "b", "a")]
    s.child("a").delete()
    assert ev.wait(2) == [("R", "a", None), ("A", "c", "b")]     # the window refills
    s.child("z").set(0)
    assert ev.wait(2) == [("R", "c", None), ("A", "z", None)]
    first.remove_all_observers()
    last = s.order_by_value().limit_to_last(2)
    last.observe(EventType.VALUE, ev.cb("V", True))
    [(_, _, _, v)] = ev.wait(1)
    assert list(v) == ["d", "e"]
    s.child("b").set(10)
    [(_, _, _, v)] = ev.wait(1)
    assert list(v) == ["e", "b"] and v == {"e": 5, "b": 10}
    s.remove_all_observers()


def test_remove_all_not_recursive_and_removal_in_callback(db):
    lst = db.reference("l")
    setv(lst, {"a": {"v": 1}, "b": {"v": 2}, "c": {"v": 3}})
    ev = Events()
    box = {}

    def once(snap, prev):
        ev.cb("A")(snap, prev)
        lst.remove_observer(box["h"])        # from inside its own callback: no more events

    started = threading.Event()
    # the handle must be known before the first callback: hold it back until observe returned
    def gated(snap, prev):
        started.wait(5)
        once(snap, prev)

    box["h"] = lst.observe(EventType.CHILD_ADDED, gated)
    started.set()
    assert ev.wait(1, settle=0.1) == [("A", "a", None)]

    child = lst.child("a")
    lst.observe(EventType.VALUE, ev.cb("Vl"))
    child.observe(EventType.VALUE, ev.cb("Vc", True))
    ev.wait(2)
    db.reference("other").remove_observer(box["h"])   # wrong location: nothing
    lst.remove_all_observers()
    child.child("v").set(7)
    assert ev.wait(1) == [("Vc", "a", None, {"v": 7})]   # the child's observer stays
    child.remove_all_observers()
    child.child("v").set(8)
    time.sleep(0.05)
    assert ev.items == []


def test_data_snapshot(db):
    lst = db.reference("l")
    setv(lst, {"b": {"n": 2, "deep": {"x": "y"}}, "a": {"n": 3}, "c": {"n": 1}})
    got = []
    done = threading.Event()

    def on(snap, prev):
        got.append(snap)
        done.set()

    h = lst.order_by_child("n").observe(EventType.VALUE, on)
    assert done.wait(5)
    lst.remove_observer(h)
    snap = got[0]
    assert isinstance(snap, ember.DataSnapshot)
    assert snap.key == "l" and snap.exists and snap.child_count == 3
    assert [c.key for c in snap.children] == ["c", "b", "a"]    # the query's order
    assert list(snap.value) == ["c", "b", "a"]
    assert snap.child("b/deep/x").value == "y" and snap.child("b/deep").child_count == 1
    missing = snap.child("zz")
    assert not missing.exists and missing.value is None and missing.child_count == 0 and missing.children == []
    with pytest.raises(ember.InvalidArgumentError):
        snap.child("a.b")
    assert "DataSnapshot" in repr(snap)
    with pytest.raises(TypeError):
        ember.DataSnapshot()


def test_get_inside_callback_is_refused(db):
    ref = db.reference("x")
    errors = []
    done = threading.Event()

    def on(snap, prev):
        try:
            ref.get()
        except ember.FailedPreconditionError as e:
            errors.append(e)
        done.set()

    h = ref.observe(EventType.VALUE, on)
    assert done.wait(5)
    ref.remove_observer(h)
    assert len(errors) == 1


def test_offline_and_close(db):
    ref = db.reference("o")
    setv(ref, {"a": 1})
    ev = Events()
    h = ref.observe(EventType.VALUE, ev.cb("V", True))
    ev.wait(1)
    db.disable_network()
    w = ref.child("b").set(2)
    assert ev.wait(1) == [("V", "o", None, {"a": 1, "b": 2})]   # local writes raise events at once
    assert not w.done
    db.enable_network()
    w.wait(5)
    db.close()
    with pytest.raises(ember.FailedPreconditionError):
        ref.set(1)
    with pytest.raises(ember.FailedPreconditionError):
        db.reference("a")
    ref.remove_observer(h)   # after close: harmless


def test_exception_in_observe_callback_is_logged_and_later_events_arrive(caplog):
    import logging
    import threading
    db = ember.Client()
    try:
        seen = []
        two = threading.Event()

        def cb(snap, prev):
            seen.append(snap.key)
            if len(seen) == 2:
                two.set()
            if len(seen) == 1:
                raise RuntimeError("boom in observer")

        with caplog.at_level(logging.ERROR, logger="ember"):
            h = db.reference("posts").observe(ember.EventType.CHILD_ADDED, cb)
            db.reference("posts/a").set(1)
            db.reference("posts/b").set(2)
            assert two.wait(5)
        assert seen[:2] == ["a", "b"]
        assert "boom in observer" in caplog.text
        db.reference("posts").remove_observer(h)
    finally:
        db.close()


@pytest.mark.parametrize("durable", [False, True])
def test_keys_and_strings_differing_only_in_normalization_are_distinct(durable, tmp_path):
    # "\u00e9" and "e\u0301" are two keys (and two string values): kept apart in memory and in the
    # file, ordered by code units (e\u0301 < f < \u00e9), compared apart by bounds, by multi-path
    # updates, by value listeners and by listeners of queries that differ only so.
    a, b = "\u00e9", "e\u0301"
    path = str(tmp_path / "t.ember") if durable else None
    db = ember.Client(path=path) if durable else ember.Client()
    try:
        t = db.reference("t")
        setv(t.child(a), 1)
        setv(t.child(b), 2)
        assert t.get() == {a: 1, b: 2}
        setv(t.child("f"), 3)
        assert list(t.order_by_key().get()) == [b, "f", a]
        assert t.order_by_key().start_at(a + "z").get() is None
        assert list(t.order_by_key().end_before(a).get()) == [b, "f"]
        assert list(t.order_by_key().start_after(b).get()) == ["f", a]
        db.reference("u").update({"x/" + b: 1, "x/" + a: 2}).wait(5)
        assert db.reference("u/x").get() == {a: 2, b: 1}

        s = db.reference("s")
        setv(s, {"x": a, "y": b})
        ev = Events()
        hs = [(s, s.order_by_value().equal_to(a).observe(EventType.VALUE, ev.cb("A", True))),
              (s, s.order_by_value().equal_to(b).observe(EventType.VALUE, ev.cb("B", True)))]
        got = sorted(ev.wait(2))
        assert got == [("A", "s", None, {"x": a}), ("B", "s", None, {"y": b})], got
        leaf = db.reference("leaf")
        setv(leaf, a)
        hs.append((leaf, leaf.observe(EventType.VALUE, ev.cb("V", True))))
        assert ev.wait(1) == [("V", "leaf", None, a)]
        setv(leaf, b)
        assert ev.wait(1) == [("V", "leaf", None, b)], "a change of bytes is a change"
        for ref, h in hs:
            ref.remove_observer(h)

        # One update that adds both keys raises both child events; removing the observers of one
        # query leaves those of the query whose bound key differs only so.
        u2 = db.reference("u2")
        hs = [(u2, u2.observe(EventType.CHILD_ADDED, ev.cb("A")))]
        u2.update({a: 1, b: 2}).wait(5)
        assert ev.wait(2) == [("A", b, None), ("A", a, b)]   # key order: e\u0301 < \u00e9
        qa, qb = s.order_by_value().start_at(None, a), s.order_by_value().start_at(None, b)
        qa.observe(EventType.VALUE, ev.cb("QA"))
        qb.observe(EventType.VALUE, ev.cb("QB"))
        ev.wait(2)
        qa.remove_all_observers()
        setv(s.child("z"), "zz")
        assert [e[0] for e in ev.wait(1)] == ["QB"]
        qb.remove_all_observers()
        for ref, h in hs:
            ref.remove_observer(h)
    finally:
        db.close()
    if durable:
        db = ember.Client(path=path)
        try:
            assert db.reference("t").get() == {a: 1, b: 2, "f": 3}
        finally:
            db.close()


def test_info_connected_follows_the_network_switch(db):
    """`.info/connected` (and `.info/serverTimeOffset`): read at once, observed as the network
    switch changes it; writes under `.info` are refused."""
    connected = db.reference(".info/connected")
    assert connected.get() is True
    assert db.reference(".info/serverTimeOffset").get() == 0
    seen, cv = [], threading.Condition()

    def on(snap, _):
        with cv:
            seen.append(snap.value)
            cv.notify_all()

    handle = connected.observe(EventType.VALUE, on)
    db.disable_network()
    db.enable_network()
    with cv:
        assert cv.wait_for(lambda: len(seen) >= 3, 5), seen
    assert seen[:3] == [True, False, True]
    connected.remove_observer(handle)
    with pytest.raises(ember.InvalidArgumentError, match="read-only"):
        connected.set(False)


def test_server_values_are_filled_in(db):
    """ember.ServerValue.TIMESTAMP and increment(n) in tree writes: filled in when applied."""
    before = int(time.time() * 1000)
    post = db.reference("posts/p")
    post.set({"at": ember.ServerValue.TIMESTAMP, "likes": ember.ServerValue.increment(2)}).wait()
    post.child("likes").set(ember.ServerValue.increment(3)).wait()
    value = post.get()
    assert before <= value["at"] <= int(time.time() * 1000) + 1
    assert value["likes"] == 5
    with pytest.raises(ember.InvalidArgumentError, match="Invalid server value"):
        post.child("x").set({".sv": "tomorrow"})
    with pytest.raises(ember.InvalidArgumentError):
        ember.ServerValue.increment("1")
