"""Listeners: change sequences with old/new index, metadata events, cache-only listening,
network off/on, unsubscribe (idempotent, from inside a callback), callbacks from many threads'
writes, exceptions in callbacks, on_error."""
import logging
import threading
import time

import pytest

import ember
from ember import ChangeType, FieldFilter


def changes_of(event):
    return [(c.type, c.document.id, c.old_index, c.new_index) for c in event[1]]


def test_document_listener_sequence(db, recorder):
    sf = db.document("cities/SF")
    w = sf.on_snapshot(recorder)
    docs, changes, rt = recorder.wait(1)
    assert isinstance(docs, list) and len(docs) == 1 and not docs[0].exists and changes == []
    assert rt.tzinfo is not None
    sf.set({"name": "SF"})
    docs, changes, _ = recorder.wait(2)
    assert docs[0].to_dict() == {"name": "SF"} and docs[0].metadata.has_pending_writes
    assert changes_of(recorder.events[1]) == [(ChangeType.ADDED, "SF", -1, 0)]
    sf.update({"pop": 1})
    recorder.wait(3)
    assert changes_of(recorder.events[2]) == [(ChangeType.MODIFIED, "SF", 0, 0)]
    sf.delete()
    docs, _, _ = recorder.wait(4)
    assert not docs[0].exists and changes_of(recorder.events[3]) == [(ChangeType.REMOVED, "SF", 0, -1)]
    w.unsubscribe()


def test_listeners_on_collections_differing_only_in_normalization_see_their_own(db):
    # "\u00e9" and "e\u0301" are two collections (and two documents, two fields): each listener
    # gets its own query's documents, not those of the other.
    a, b = "\u00e9", "e\u0301"
    db.collection(a).document("x").set({a: 1, "v": "A"})
    db.collection(b).document("y").set({b: 1, "v": "B"})
    seen, done = {}, threading.Event()

    def record(name):
        def cb(docs, changes, read_time):
            seen[name] = sorted(d.reference.path for d in docs)
            if len(seen) == 4:
                done.set()
        return cb

    ws = [db.collection(a).on_snapshot(record("ca")), db.collection(b).on_snapshot(record("cb")),
          db.collection("c0").where(filter=FieldFilter(b, "==", 1)).on_snapshot(record("fb")),
          db.document(f"{b}/y").on_snapshot(record("db"))]
    db.collection("c0").document("z").set({a: 1})
    assert done.wait(10), seen
    time.sleep(0.1)
    assert seen["ca"] == [f"{a}/x"] and seen["cb"] == [f"{b}/y"], seen
    assert seen["fb"] == [] and seen["db"] == [f"{b}/y"], seen
    for w in ws:
        w.unsubscribe()


def test_metadata_events(db, recorder):
    sf = db.document("cities/SF")
    plain = []
    w1 = sf.on_snapshot(recorder, include_metadata_changes=True)
    w2 = sf.on_snapshot(lambda d, c, r: plain.append(d[0].metadata))
    recorder.wait(1)
    sf.set({"name": "SF"}).wait(5)
    docs, changes, _ = recorder.wait(3)
    metas = [e[0][0].metadata for e in recorder.events]
    assert metas[1].has_pending_writes and not metas[-1].has_pending_writes
    assert changes == []  # the acknowledgement is a metadata-only change
    time.sleep(0.05)
    assert all(not m.has_pending_writes for m in plain[:1]) and any(m.has_pending_writes for m in plain)
    assert len(plain) < len(recorder.events)
    w1.unsubscribe(); w2.unsubscribe()


def test_query_change_sequence_with_indexes(db, recorder):
    q = db.collection("cities").where(filter=FieldFilter("state", "==", "CA")).order_by("name")
    w = q.on_snapshot(recorder)
    docs, changes, _ = recorder.wait(1)
    assert len(docs) == 0 and docs.empty and changes == []
    db.document("cities/SF").set({"name": "San Francisco", "state": "CA"})
    recorder.wait(2)
    db.document("cities/LA").set({"name": "Los Angeles", "state": "CA"})
    docs, _, _ = recorder.wait(3)
    assert [d.id for d in docs] == ["LA", "SF"] and docs.size == 2
    assert changes_of(recorder.events[2]) == [(ChangeType.ADDED, "LA", -1, 0)]
    db.document("cities/LA").update({"name": "Zurich-ish"})
    recorder.wait(4)
    assert changes_of(recorder.events[3]) == [(ChangeType.MODIFIED, "LA", 0, 1)]
    db.document("cities/SF").update({"state": "NV"})
    docs, _, _ = recorder.wait(5)
    assert changes_of(recorder.events[4]) == [(ChangeType.REMOVED, "SF", 0, -1)]
    assert [d.id for d in docs] == ["LA"] and docs[0].to_dict()["name"] == "Zurich-ish"
    assert docs[-1].id == "LA" and [d.id for d in docs[0:1]] == ["LA"] and docs.docs[0].id == "LA"
    assert isinstance(docs, ember.QuerySnapshot) and docs.metadata.has_pending_writes in (True, False)
    w.unsubscribe()


def test_query_metadata_and_cache_only(db, recorder):
    cache_events = []
    q = db.collection("c")
    w = q.on_snapshot(recorder, include_metadata_changes=True)
    wc = q.on_snapshot(lambda d, c, r: cache_events.append(d.metadata), source=ember.ListenSource.CACHE)
    recorder.wait(1)
    db.document("c/a").set({"x": 1}).wait(5)
    recorder.wait(3)
    assert recorder.events[1][0].metadata.has_pending_writes and not recorder.events[-1][0].metadata.has_pending_writes
    time.sleep(0.05)
    assert cache_events and all(m.from_cache for m in cache_events)
    w.unsubscribe(); wc.unsubscribe()


def test_network_off_and_on(db, recorder):
    ref = db.document("c/n")
    ref.set({"v": 1}).wait(5)
    w = ref.on_snapshot(recorder, include_metadata_changes=True)
    deadline = time.time() + 5
    while not recorder.events or recorder.events[-1][0][0].metadata.from_cache:
        assert time.time() < deadline, recorder.summary()
        time.sleep(0.005)
    n = len(recorder.events)
    db.disable_network()
    docs, _, _ = recorder.wait(n + 1)
    assert docs[0].metadata.from_cache
    r = ref.update({"v": 2})
    docs, _, _ = recorder.wait(n + 2)
    assert docs[0].metadata.has_pending_writes and docs[0].get("v") == 2
    assert not r.done
    db.enable_network()
    r.wait(5)
    deadline = time.time() + 5
    while time.time() < deadline:
        m = recorder.events[-1][0][0].metadata
        if not m.from_cache and not m.has_pending_writes:
            break
        time.sleep(0.01)
    assert not recorder.events[-1][0][0].metadata.from_cache
    w.unsubscribe()


def test_unsubscribe_idempotent_and_final(db, recorder):
    ref = db.document("c/u")
    w = ref.on_snapshot(recorder)
    recorder.wait(1)
    assert w.is_active
    w.unsubscribe(); w.unsubscribe()
    assert not w.is_active
    n = len(recorder.events)
    ref.set({"a": 1})
    assert recorder.quiet() == n


def test_unsubscribe_from_inside_callback(db):
    ref = db.document("c/self")
    calls = []
    box = {}
    done = threading.Event()

    first = threading.Event()

    def cb(docs, changes, rt):
        calls.append(1)
        first.set()
        if len(calls) == 2:
            box["w"].unsubscribe()
            box["w"].unsubscribe()
            done.set()

    box["w"] = ref.on_snapshot(cb)
    assert first.wait(5)
    ref.set({"a": 1})
    assert done.wait(5)
    ref.set({"a": 2}); ref.set({"a": 3})
    time.sleep(0.05)
    assert len(calls) == 2


def test_callback_may_write_and_read(db):
    ref, other = db.document("c/r"), db.document("c/o")
    done = threading.Event()

    def cb(docs, changes, rt):
        if docs[0].exists:
            other.set({"copy": docs[0].get("a")})
            assert other.get().get("copy") == docs[0].get("a")
            done.set()

    w = ref.on_snapshot(cb)
    ref.set({"a": 5})
    assert done.wait(5)
    w.unsubscribe()


def test_callbacks_from_many_threads_writes(db):
    q = db.collection("m")
    seen = set()
    lock = threading.Lock()
    active = [0, 0]
    done = threading.Event()

    def cb(docs, changes, rt):
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        for c in changes:
            seen.add(c.document.id)
        if len(docs) == 200:
            done.set()
        with lock:
            active[0] -= 1

    w = q.on_snapshot(cb)

    def writer(t):
        for i in range(25):
            q.document(f"t{t}-{i}").set({"t": t, "i": i})

    ts = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert done.wait(10)
    assert len(seen) == 200 and active[1] == 1  # one at a time
    w.unsubscribe()


def test_exception_in_callback_is_logged_and_later_events_arrive(db, caplog):
    # How many events the first writes raise depends on timing (the server's answer may or may
    # not be folded into them), so: raise in the second call, whatever it shows, then write
    # again and require that write's event.
    ref = db.document("c/x")
    seen = []
    raised = threading.Event()
    later = threading.Event()

    def cb(docs, changes, rt):
        seen.append(docs[0].to_dict() if docs[0].exists else None)
        if len(seen) == 2:
            raised.set()
            raise RuntimeError("boom")
        if raised.is_set() and seen[-1] == {"a": 99}:
            later.set()

    with caplog.at_level(logging.ERROR, logger="ember"):
        w = ref.on_snapshot(cb)
        n = 0
        while not raised.is_set() and n < 50:
            n += 1
            ref.set({"a": n})
            raised.wait(0.1)
        assert raised.is_set()
        ref.set({"a": 99})
        assert later.wait(5)
    assert any("boom" in (r.exc_text or "") or (r.exc_info and "boom" in str(r.exc_info[1])) for r in caplog.records)
    assert all(r.name == "ember" for r in caplog.records)
    w.unsubscribe()


def test_on_error_and_logging_of_listen_errors(caplog):
    from ember._documents import document_dispatcher, query_dispatcher
    errors = []
    err = ember.PermissionDeniedError("missing permission", 7)
    document_dispatcher(lambda *a: None, errors.append, "c/x", False)(None, err)
    assert errors == [err]
    with caplog.at_level(logging.ERROR, logger="ember"):
        query_dispatcher(lambda *a: None, None, "the listener on q", None)(None, err)
    assert "missing permission" in caplog.text


def test_listen_argument_errors(db):
    with pytest.raises(ember.InvalidArgumentError, match="callback"):
        db.document("c/x").on_snapshot(None)
    with pytest.raises(ember.InvalidArgumentError, match="source"):
        db.document("c/x").on_snapshot(lambda *a: None, source="server-only")
    # An invalid query is an error of the listen: it goes to on_error (see below), not raised.
    errors = []
    w = db.collection("c").offset(1).on_snapshot(lambda *a: None, on_error=errors.append)
    assert len(errors) == 1 and isinstance(errors[0], ember.InvalidArgumentError) and "offset" in str(errors[0])
    assert not w.is_active


def test_invalid_listen_calls_on_error_once_and_ends_the_watch(db, caplog):
    calls, errors = [], []
    q = db.collection("c").limit_to_last(2)          # no order_by: invalid when run
    w = q.on_snapshot(lambda *a: calls.append(a), on_error=errors.append)
    db.collection("c").document("a").set({"v": 1}).wait(5)
    time.sleep(0.05)
    assert calls == [] and len(errors) == 1 and isinstance(errors[0], ember.InvalidArgumentError)
    assert not w.is_active
    w.unsubscribe()                                   # still fine
    with caplog.at_level(logging.ERROR, logger="ember"):
        w2 = q.on_snapshot(lambda *a: calls.append(a))  # no on_error: logged
    assert "limit" in caplog.text and calls == [] and not w2.is_active


def test_document_listener_docs_carry_snapshot_metadata(db, recorder):
    ref = db.document("cities/SF")
    w = ref.on_snapshot(recorder, include_metadata_changes=True)
    docs, _, rt = recorder.wait(1)
    assert docs.size == 1 and not docs.empty and docs.read_time == rt
    assert docs.metadata.has_pending_writes is False
    ref.set({"name": "SF"})
    docs, _, _ = recorder.wait(2)
    assert docs.metadata.has_pending_writes is True and docs.metadata.from_cache in (True, False)
    assert docs.docs == [docs[0]] and docs[0].id == "SF"
    w.unsubscribe()


def test_each_change_carries_its_own_document(db, recorder):
    cities = db.collection("cities")
    for cid, name in [("DC", "Washington"), ("LA", "Los Angeles"), ("TOK", "Tokyo")]:
        cities.document(cid).set({"name": name})
    w = cities.order_by("name").on_snapshot(recorder)
    recorder.wait(1)
    b = db.batch()
    b.set(cities.document("A1"), {"name": "Aachen"})
    b.set(cities.document("A2"), {"name": "Abu Dhabi"})
    b.delete(cities.document("LA"))
    b.set(cities.document("DC"), {"name": "Aaa"})      # moves before the added ones
    b.commit()
    docs, changes, _ = recorder.wait(2)
    got = [(c.type.name, c.document.id, c.old_index, c.new_index) for c in changes]
    # Step by step: new_index 0 of A1 is its place before DC moved in front of it.
    assert got == [("REMOVED", "LA", 0, -1), ("ADDED", "A1", -1, 0), ("ADDED", "A2", -1, 1),
                   ("MODIFIED", "DC", 3, 0)]
    for c in changes:
        if c.type != ChangeType.REMOVED:
            assert c.document.to_dict() == next(d.to_dict() for d in docs if d.id == c.document.id)
    assert [d.id for d in docs] == ["DC", "A1", "A2", "TOK"]
    w.unsubscribe()


def test_close_ends_listeners(recorder):
    db = ember.Client()
    w = db.document("c/x").on_snapshot(recorder)
    recorder.wait(1)
    db.close()
    w.unsubscribe()  # still fine after close
    assert recorder.quiet() == 1
