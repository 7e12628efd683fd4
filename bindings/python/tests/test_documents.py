"""Client, references, writes (set / merge / update with every transform / delete / create),
WriteResult, wait_for_pending_writes and get with a Source."""
import datetime as dt
import os

import pytest

import ember


def test_client_memory_context_manager_and_idempotent_close():
    with ember.Client() as db:
        db.document("a/b").set({"x": 1})
        assert db.document("a/b").get().to_dict() == {"x": 1}
        assert not db.closed
    assert db.closed
    db.close()
    db.close()
    with pytest.raises(ember.FailedPreconditionError):
        db.document("a/b").set({"x": 1})
    with pytest.raises(ember.FailedPreconditionError):
        db.document("a/b").get()


def test_client_path_opens_durable_storage(tmp_path):
    # (durable storage in detail: test_storage.py)
    with ember.Client(path=str(tmp_path / "app.ember")) as db:
        assert db.is_persistent and "app.ember" in repr(db)


def test_client_google_arguments_accepted():
    db = ember.Client(project="demo", database="(default)")
    assert "memory" in repr(db)
    db.close()


def test_cache_size_arguments():
    ember.Client(cache_size_bytes=ember.CACHE_SIZE_UNLIMITED).close()
    with pytest.raises(ember.InvalidArgumentError, match="cache_size_bytes"):
        ember.Client(cache_size_bytes="big")


def test_references(db):
    cities = db.collection("cities")
    assert cities.id == "cities" and cities.parent is None and cities.path == "cities"
    sf = cities.document("SF")
    assert sf.id == "SF" and sf.path == "cities/SF" and sf.parent == cities
    assert db.document("cities/SF") == sf == db.document("cities", "SF")
    assert hash(sf) == hash(db.document("cities/SF"))
    lm = sf.collection("landmarks")
    assert lm.path == "cities/SF/landmarks" and lm.parent == sf
    assert db.collection("cities", "SF", "landmarks") == lm
    auto = cities.document()
    assert len(auto.id) == 20 and auto.id.isalnum()
    assert cities.document().id != auto.id


@pytest.mark.parametrize("bad", ["", "a/b", "a//b", "/", "/a/b/"])
def test_bad_collection_paths(db, bad):
    with pytest.raises(ember.InvalidArgumentError, match="collection"):
        db.collection(bad)


def test_one_leading_or_trailing_slash_is_ignored(db):
    # As the Apple and C++ SDKs (and the core) do.
    assert db.collection("/cities/").id == "cities"
    assert db.document("/cities/SF/").path == "cities/SF"


@pytest.mark.parametrize("bad", ["a", "a/b/c", "a//b"])
def test_bad_document_paths(db, bad):
    with pytest.raises(ember.InvalidArgumentError, match="document"):
        db.document(bad)


def test_bad_document_id(db):
    with pytest.raises(ember.InvalidArgumentError, match="document_id"):
        db.collection("c").document("x/y")
    with pytest.raises(ember.InvalidArgumentError, match="document_id"):
        db.collection("c").document(5)


def test_add(db):
    t, ref = db.collection("cities").add({"name": "Tokyo"})
    assert isinstance(t, dt.datetime) and len(ref.id) == 20
    assert ref.get().to_dict() == {"name": "Tokyo"}
    t, ref = db.collection("cities").add({"name": "Oslo"}, document_id="OSL")
    assert ref.id == "OSL"


def test_set_get_snapshot_fields(db):
    sf = db.document("cities/SF")
    r = sf.set({"name": "San Francisco", "state": "CA", "regions": {"bay": True}})
    assert isinstance(r, ember.WriteResult)
    snap = sf.get()
    assert snap.exists and snap.id == "SF" and snap.reference == sf
    assert snap.get("regions.bay") is True and snap["name"] == "San Francisco"
    assert "name" in snap and "nope" not in snap
    with pytest.raises(KeyError):
        snap.get("nope")
    with pytest.raises(KeyError):
        snap["nope"]
    assert snap.get(ember.FieldPath("regions", "bay")) is True
    assert snap.read_time.tzinfo is not None
    # The backend's times (the set was acknowledged before it returned, as google-cloud-firestore's).
    assert snap.create_time is not None and snap.create_time.tzinfo is not None
    assert snap.update_time == snap.create_time <= snap.read_time
    assert isinstance(snap.metadata, ember.SnapshotMetadata)
    assert snap == sf.get()


def test_missing_document(db):
    snap = db.document("cities/none").get()
    assert not snap.exists and snap.to_dict() is None and snap.get("a") is None
    with pytest.raises(KeyError):
        snap["a"]


def test_get_reads_fields_from_the_snapshot_like_libember(db):
    # get() of simple dotted names reads the snapshot's MessagePack in C; anything else asks
    # libember. Both must give the same answers and the same errors.
    ref = db.document("g/one")
    data = {"a": {"b": {"c": 1}, "l": [1, {"x": 2}]}, "s": "t", "f": 1.5, "n": None, "e": {},
            "big": {f"k{i:02d}": i for i in range(20)}, "`q`": 3, "a.b": 4, "é": 5, "bytes": b"\x00\x01",
            "when": dt.datetime(2024, 5, 1, 12, 0, 0, 1, tzinfo=dt.timezone.utc), "ref": db.document("x/y")}
    ref.set(data)
    snap = ref.get()
    assert snap.get("a.b.c") == 1 and snap.get("a.b") == {"c": 1} and snap.get("a.l") == [1, {"x": 2}]
    assert snap.get("s") == "t" and snap.get("f") == 1.5 and snap.get("n") is None and snap.get("e") == {}
    assert snap.get("big.k07") == 7 and snap.get("big.k19") == 19
    assert snap.get("bytes") == b"\x00\x01" and snap.get("when") == data["when"] and snap.get("ref") == db.document("x/y")
    assert snap.get("`a.b`") == 4 and snap.get("`\\`q\\``") == 3 and snap.get("é") == 5
    assert snap.get("__name__") == ref
    for missing in ("zz", "a.zz", "a.b.c.d", "s.x", "a.l.0", "big.k20", "A"):
        with pytest.raises(KeyError):
            snap.get(missing)
    for bad in ("a..b", ".a", "a.", "a*b", ""):
        with pytest.raises(ember.InvalidArgumentError):
            snap.get(bad)
    first = snap.get("a")
    first["b"] = "changed"
    assert snap.get("a") == data["a"] and snap.to_dict() == data   # fresh objects every time


def test_get_field_paths_projection(db):
    ref = db.document("c/d")
    ref.set({"a": 1, "b": {"c": 2, "d": 3}})
    assert ref.get(field_paths=["b.c"]).to_dict() == {"b": {"c": 2}}


def test_merge_true_and_fields(db):
    sf = db.document("cities/SF")
    sf.set({"name": "SF", "nested": {"a": 1, "b": 2}})
    sf.set({"capital": False, "nested": {"b": 3}}, merge=True)
    assert sf.get().to_dict() == {"name": "SF", "capital": False, "nested": {"a": 1, "b": 3}}
    sf.set({"name": "X", "nested": {"a": 9, "b": 9}}, merge=["nested.a"])
    assert sf.get().to_dict() == {"name": "SF", "capital": False, "nested": {"a": 9, "b": 3}}
    with pytest.raises(ember.InvalidArgumentError, match="merge"):
        sf.set({"a": 1}, merge=[])


def test_merge_fields_refuse_a_delete_they_do_not_name(db):
    # Firestore's conformance cases set-del-nomerge and set-del-nonleaf.
    sf = db.document("cities/SF")
    sf.set({"a": 0, "b": 0, "h": {"g": 0, "k": 0}})
    with pytest.raises(ember.InvalidArgumentError, match="'b'"):
        sf.set({"a": 1, "b": ember.DELETE_FIELD}, merge=["a"])
    with pytest.raises(ember.InvalidArgumentError, match="'h.g'"):
        sf.set({"h": {"g": ember.DELETE_FIELD}}, merge=["h"])
    assert sf.get().to_dict() == {"a": 0, "b": 0, "h": {"g": 0, "k": 0}}
    sf.set({"a": 1, "h": {"g": ember.DELETE_FIELD}}, merge=["a", "h.g"]).wait(5)
    assert sf.get().to_dict() == {"a": 1, "b": 0, "h": {"k": 0}}


def test_update_field_paths_and_every_transform(db):
    sf = db.document("cities/SF")
    sf.set({"population": 1, "tags": ["east"], "old": 1, "regions": {"x": 1}, "nums": [1, 2, 1]})
    sf.update({"population": ember.Increment(1), "tags": ember.ArrayUnion(["west", "east"]),
               "regions.bay": True, "old": ember.DELETE_FIELD, "ts": ember.SERVER_TIMESTAMP,
               "nums": ember.ArrayRemove([1])}).wait(5)
    d = sf.get().to_dict()
    assert d["population"] == 2 and d["tags"] == ["east", "west"] and d["regions"] == {"x": 1, "bay": True}
    assert "old" not in d and d["nums"] == [2]
    assert isinstance(d["ts"], dt.datetime) and d["ts"].tzinfo is not None
    sf.update({"population": ember.Increment(0.5)})
    assert sf.get().get("population") == 2.5


def test_transforms_in_set_and_nested(db):
    ref = db.document("c/t")
    ref.set({"a": {"n": ember.Increment(5), "ts": ember.SERVER_TIMESTAMP}, "b": 1}).wait(5)
    d = ref.get().to_dict()
    assert d["a"]["n"] == 5 and isinstance(d["a"]["ts"], dt.datetime) and d["b"] == 1
    with pytest.raises(ember.InvalidArgumentError):
        ref.set({"gone": ember.DELETE_FIELD})
    with pytest.raises(ember.InvalidArgumentError, match="inside an array"):
        ref.set({"l": [ember.SERVER_TIMESTAMP]})


def test_pending_server_timestamp_reads_none(db):
    ref = db.document("c/ts")
    db.disable_network()
    ref.set({"ts": ember.SERVER_TIMESTAMP})
    assert ref.get(source=ember.Source.CACHE).to_dict() == {"ts": None}
    db.enable_network()
    db.wait_for_pending_writes()
    assert isinstance(ref.get().get("ts"), dt.datetime)


def test_transform_argument_errors():
    with pytest.raises(ember.InvalidArgumentError, match="Increment"):
        ember.Increment("1")
    with pytest.raises(ember.InvalidArgumentError, match="ArrayUnion"):
        ember.ArrayUnion("abc")


def test_update_errors(db):
    ref = db.document("c/missing")
    with pytest.raises(ember.NotFoundError) as e:     # online: raised by update() itself
        ref.update({"a": 1})
    assert isinstance(e.value, LookupError) and "No document to update" in str(e.value)
    db.disable_network()                              # offline: a pending result, the error at wait()
    r = ref.update({"a": 1})
    assert r.update_time is None
    db.enable_network()
    with pytest.raises(ember.NotFoundError):
        r.wait(5)
    with pytest.raises(ember.InvalidArgumentError, match="at least one"):
        ref.update({})
    with pytest.raises(ember.InvalidArgumentError, match="field_updates"):
        ref.update([("a", 1)])


def test_delete(db):
    ref = db.document("c/d")
    ref.set({"a": 1})
    ref.delete().wait(5)
    assert not ref.get().exists
    ref.delete().wait(5)  # deleting a missing document is fine


def test_create(db):
    ref = db.document("cities/LA")
    r = ref.create({"name": "Los Angeles"})
    assert r.update_time is not None and r.wait() is r
    with pytest.raises(ember.AlreadyExistsError, match="already exists"):
        ref.create({"name": "again"})
    assert ref.get().to_dict() == {"name": "Los Angeles"}


def test_write_result_wait_and_update_time(db):
    r = db.document("c/w").set({"a": 1})
    assert r.wait(5) is r and r.done
    assert isinstance(r.update_time, dt.datetime)
    db.disable_network()
    r2 = db.document("c/w").set({"a": 2})
    assert r2.update_time is None and not r2.done
    with pytest.raises(ember.DeadlineExceededError) as e:
        r2.wait(0.05)
    assert isinstance(e.value, TimeoutError)
    db.enable_network()
    assert r2.wait(5).update_time is not None


def test_wait_for_pending_writes(db):
    db.disable_network()
    rs = [db.document(f"c/{i}").set({"i": i}) for i in range(10)]
    db.enable_network()
    db.wait_for_pending_writes()
    assert all(r.done for r in rs)


def test_write_cancelled_by_close():
    db = ember.Client()
    db.disable_network()
    r = db.document("c/x").set({"a": 1})
    db.close()
    with pytest.raises(ember.CancelledError):
        r.wait(5)


def test_get_with_source(db):
    ref = db.document("c/s")
    ref.set({"a": 1}).wait(5)
    assert ref.get(source=ember.Source.SERVER).to_dict() == {"a": 1}
    assert ref.get(source=ember.Source.CACHE).to_dict() == {"a": 1}
    assert ref.get(source=ember.Source.DEFAULT).to_dict() == {"a": 1}
    db.disable_network()
    with pytest.raises(ember.UnavailableError) as e:
        ref.get(source=ember.Source.SERVER)
    assert isinstance(e.value, ConnectionError)
    assert ref.get().metadata.from_cache
    with pytest.raises(ember.UnavailableError):
        db.document("c/never-seen").get()
    with pytest.raises(ember.InvalidArgumentError, match="source"):
        ref.get(source="nowhere")


def test_get_all(db):
    a, b = db.document("c/a"), db.document("c/b")
    a.set({"n": 1})
    snaps = list(db.get_all([a, b]))
    assert [s.exists for s in snaps] == [True, False]


def test_list_documents(db):
    for i in range(3):
        db.collection("l").document(f"d{i}").set({"i": i})
    assert sorted(r.id for r in db.collection("l").list_documents()) == ["d0", "d1", "d2"]


def test_index_configuration_and_cache(db):
    db.set_index_configuration('{"indexes": [], "fieldOverrides": []}')
    with pytest.raises(ember.InvalidArgumentError, match="json_text"):
        db.set_index_configuration("{nope")
    m = db.persistent_cache_index_manager
    m.enable_index_auto_creation(); m.disable_index_auto_creation(); m.delete_all_indexes()
    with pytest.raises(ember.FailedPreconditionError):
        db.clear_persistence()
    db.close()
    db.clear_persistence()


def test_writes_return_once_acknowledged_while_online(db):
    """google-cloud-firestore's synchronous writes: online, set/update/delete/create
    and batch.commit() return once the backend acknowledged, with update_time; offline at once."""
    ref = db.document("c/sync")
    r = ref.set({"a": 1})
    assert r.done and r.update_time is not None
    assert ref.get(source=ember.Source.CACHE).metadata.has_pending_writes is False
    snap = ref.get()
    assert snap.create_time is not None and snap.update_time is not None
    r2 = ref.update({"a": 2})
    assert r2.done and ref.get().update_time > snap.update_time
    assert ref.get().create_time == snap.create_time
    with pytest.raises(ember.AlreadyExistsError, match="already exists"):
        ref.create({"a": 3})
    assert ref.get().to_dict() == {"a": 2}
    created = db.document("c/created").create({"b": 1})
    assert created.done and db.document("c/created").get().to_dict() == {"b": 1}
    results = db.batch().set(db.document("c/b1"), {"x": 1}).delete(ref).commit()
    assert all(w.done for w in results) and not ref.get().exists
    db.disable_network()
    off = db.document("c/off").set({"o": 1})
    assert not off.done and off.update_time is None
    assert db.document("c/off").get(source=ember.Source.CACHE).metadata.has_pending_writes
    db.enable_network()
    assert off.wait(5).update_time is not None
