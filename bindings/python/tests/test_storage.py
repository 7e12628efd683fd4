"""Durable storage from Python: ember.Client(path=..., persistence=, cache_size_bytes=), reopen
round trips in a temp dir, typed errors (locked, damaged, missing directory, cache size),
clear_persistence (instance and classmethod forms), set_index_configuration and the
persistent_cache_index_manager."""
import os

import pytest

import ember

INDEXES = """{
  "indexes": [
    {"collectionGroup": "cities", "queryScope": "COLLECTION",
     "fields": [{"fieldPath": "state", "order": "ASCENDING"}, {"fieldPath": "pop", "order": "DESCENDING"}]}
  ],
  "fieldOverrides": []
}"""


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "app.ember")


def test_reopen_round_trip(path):
    with ember.Client(path=path) as db:
        assert db.is_persistent
        db.collection("cities").document("SF").set({"name": "San Francisco", "pop": 860000}).wait(5)
        db.reference("tree/a").set({"x": 1}).wait(5)
        db.disable_network()
        db.collection("cities").document("LA").set({"name": "Los Angeles"})
    assert os.path.exists(path)
    with ember.Client(path=path) as db:
        db.disable_network()
        sf = db.collection("cities").document("SF").get(source=ember.Source.CACHE)
        assert sf.exists and sf.to_dict() == {"name": "San Francisco", "pop": 860000}
        assert db.collection("cities").document("LA").get(source=ember.Source.CACHE).exists
        db.enable_network()
        db.wait_for_pending_writes()
        la = db.collection("cities").document("LA").get(source=ember.Source.SERVER)
        assert la.exists and not la.metadata.has_pending_writes
    # pathlib paths work too
    import pathlib
    with ember.Client(path=pathlib.Path(path)) as db:
        assert db.collection("cities").document("SF").get().exists


def test_memory_cache_over_file(path):
    with ember.Client(path=path, persistence=False) as db:
        assert not db.is_persistent
        db.collection("c").document("a").set({"x": 1}).wait(5)
    with ember.Client(path=path, persistence=False) as db:
        assert db.collection("c").document("a").get(source=ember.Source.SERVER).exists
    assert not ember.Client().is_persistent


def test_cache_sizes(path):
    with pytest.raises(ember.InvalidArgumentError):
        ember.Client(path=path, cache_size_bytes=1000)
    with pytest.raises(ember.InvalidArgumentError):
        ember.Client(path=path, cache_size_bytes="big")
    ember.Client(path=path, cache_size_bytes=ember.CACHE_SIZE_UNLIMITED).close()
    ember.Client(path=path, cache_size_bytes=1 << 20).close()
    ember.Client(path=path, cache_size_bytes=100 * 1024 * 1024).close()
    assert ember.CACHE_SIZE_UNLIMITED == -1


def test_locked_damaged_missing(path, tmp_path):
    db = ember.Client(path=path)
    with pytest.raises(ember.FailedPreconditionError, match="locked"):
        ember.Client(path=path)
    with pytest.raises(ember.FailedPreconditionError):
        ember.Client.clear_persistence(path)
    with pytest.raises(ember.FailedPreconditionError):
        db.clear_persistence()          # only while closed
    db.close()
    db.close()                          # idempotent
    ember.Client(path=path).close()     # the lock went with close()

    bad = tmp_path / "bad.ember"
    bad.write_bytes(b"this is not an SQLite database, just text long enough for a header" * 2)
    with pytest.raises(ember.DataLossError):
        ember.Client(path=str(bad))
    with pytest.raises(ember.UnavailableError):
        ember.Client(path=str(tmp_path / "no" / "such" / "dir.ember"))


def test_clear_persistence(path):
    db = ember.Client(path=path)
    db.collection("c").document("a").set({"x": 1}).wait(5)
    db.close()
    db.clear_persistence()
    assert not os.path.exists(path)
    with ember.Client(path=path) as db2:
        assert not db2.collection("c").document("a").get().exists
    ember.Client.clear_persistence(path)       # classmethod form
    assert not os.path.exists(path)
    ember.Client.clear_persistence(path)       # nothing there: fine
    with pytest.raises(ember.InvalidArgumentError):
        ember.Client.clear_persistence()
    mem = ember.Client()
    mem.close()
    mem.clear_persistence()                    # in memory: nothing to delete


def test_index_configuration_and_manager(path):
    with ember.Client(path=path) as db:
        cities = db.collection("cities")
        for i in range(40):
            cities.document(f"c{i:02}").set({"state": "CA" if i % 4 == 0 else "NY", "pop": i})
        mgr = db.persistent_cache_index_manager
        assert mgr.index_count == 0
        db.set_index_configuration(INDEXES)
        assert mgr.index_count == 1
        with pytest.raises(ember.InvalidArgumentError):
            db.set_index_configuration('{"indexes": 3')
        with pytest.raises(ember.InvalidArgumentError):
            db.set_index_configuration(3)
        assert mgr.index_count == 1
        docs = list(cities.where(filter=ember.FieldFilter("state", "==", "CA")).stream())
        assert len(docs) == 10
        mgr.enable_index_auto_creation()
        mgr.disable_index_auto_creation()
        mgr.delete_all_indexes()
        assert mgr.index_count == 0
    with pytest.raises(ember.FailedPreconditionError):
        db.set_index_configuration(INDEXES)
    with pytest.raises(ember.FailedPreconditionError):
        db.persistent_cache_index_manager.delete_all_indexes()
    with ember.Client() as mem:        # a memory cache validates and ignores
        mem.set_index_configuration(INDEXES)
        mem.persistent_cache_index_manager.enable_index_auto_creation()
        assert mem.persistent_cache_index_manager.index_count == 0


def test_async_client_storage_and_tree(path):
    import asyncio

    async def main():
        async with ember.AsyncClient(path=path) as db:
            assert db.is_persistent
            await db.collection("c").document("a").set({"x": 1})
            db.reference("t/a").set({"y": 2}).wait(5)
            assert db.reference("t").get() == {"a": {"y": 2}}
        db.clear_persistence()
        assert not os.path.exists(path)

    asyncio.run(main())
