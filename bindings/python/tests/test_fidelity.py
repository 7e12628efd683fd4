"""google-cloud-firestore code runs unchanged but for the import: collection
listing, transactions driven by the caller (_begin/commit, `with`, `async with`), and queries read
inside a transaction."""
import asyncio
import threading

import pytest

import ember


@pytest.fixture
def db():
    c = ember.Client()
    yield c
    c.close()


def test_collections_and_list_documents(db):
    assert list(db.collections()) == []
    db.collection("cities").document("SF").set({"n": 1})
    db.collection("users").document("u").set({"n": 1})
    db.document("cities/SF/landmarks/a").set({"n": 1})
    db.document("cities/LA/museums/m").set({"n": 1})        # LA itself does not exist
    assert [c.id for c in db.collections()] == ["cities", "users"]
    assert [c.id for c in db.document("cities/SF").collections()] == ["landmarks"]
    assert [c.id for c in db.document("cities/LA").collections()] == ["museums"]
    assert list(db.document("users/u").collections()) == []
    assert [r.id for r in db.collection("cities").list_documents()] == ["SF"]
    db.document("users/u").delete()
    assert [c.id for c in db.collections()] == ["cities"]
    db.disable_network()                                     # offline: the cache, plus local writes
    db.collection("offline").document("x").set({"n": 1})
    assert [c.id for c in db.collections()] == ["cities", "offline"]
    db.enable_network()


def test_collections_differing_only_in_normalization_are_two(db):
    # "\u00e9" and "e\u0301" are canonically equivalent but different ids: both are listed, in
    # UTF-8 byte order, online and (with local writes pending) offline.
    db.collection("\u00e9").document("a").set({"n": 1})
    db.collection("e\u0301").document("b").set({"n": 2})
    assert [c.id for c in db.collections()] == ["e\u0301", "\u00e9"]
    db.disable_network()
    db.document("r/\u00e9/s1/x").set({"n": 3})
    db.document("r/e\u0301/s2/y").set({"n": 4})
    assert [c.id for c in db.collections()] == ["e\u0301", "r", "\u00e9"]
    assert [c.id for c in db.document("r/\u00e9").collections()] == ["s1"]
    assert [c.id for c in db.document("r/e\u0301").collections()] == ["s2"]
    db.enable_network()
    assert [c.id for c in db.document("r/e\u0301").collections()] == ["s2"]


def test_transaction_driven_by_the_caller(db):
    a, b = db.document("acct/a"), db.document("acct/b")
    a.set({"v": 10})
    b.set({"v": 0})
    t = db.transaction()
    t._begin()
    va = t.get(a).get("v")
    t.set(a, {"v": va - 5})
    t.update(b, {"v": ember.Increment(5)})
    results = t.commit()
    assert len(results) == 2 and all(r.update_time is not None for r in results)
    assert a.get().get("v") == 5 and b.get().get("v") == 5
    # A document changed between the read and the commit: AbortedError, nothing applied.
    t = db.transaction()
    t._begin()
    t.get(a)
    a.set({"v": 100})
    t.set(b, {"v": -1})
    with pytest.raises(ember.AbortedError):
        t.commit()
    assert b.get().get("v") == 5
    # Reads after writes are refused, as Firestore does.
    t = db.transaction()
    t._begin()
    t.set(b, {"v": 1})
    with pytest.raises(ember.InvalidArgumentError, match="reads"):
        t.get(a)
    t.rollback()
    assert b.get().get("v") == 5


def test_transaction_as_a_context_manager(db):
    ref = db.document("c/x")
    with db.transaction() as t:
        snap = t.get(ref)
        assert not snap.exists
        t.set(ref, {"n": 1})
    assert ref.get().to_dict() == {"n": 1}
    with pytest.raises(RuntimeError):
        with db.transaction() as t:
            t.get(ref)
            t.set(ref, {"n": 2})
            raise RuntimeError("the block fails")
    assert ref.get().to_dict() == {"n": 1}                  # nothing applied


def test_async_transaction_as_an_async_context_manager():
    async def main():
        db = ember.AsyncClient()
        try:
            ref = db.document("c/y")
            await ref.set({"n": 1})
            async with db.transaction() as t:
                snap = await t.get(ref)
                t.set(ref, {"n": snap.get("n") + 1})
            assert (await ref.get()).to_dict() == {"n": 2}
            with pytest.raises(ValueError):
                async with db.transaction() as t:
                    await t.get(ref)
                    t.set(ref, {"n": 99})
                    raise ValueError("no")
            assert (await ref.get()).to_dict() == {"n": 2}
        finally:
            db.close()
    asyncio.run(main())


def test_query_read_inside_a_transaction(db):
    for i in range(3):
        db.document(f"q/{i}").set({"n": i})
    q = db.collection("q").where("n", ">=", 1)

    @ember.transactional
    def bump(t):
        docs = list(t.get(q))
        for d in docs:
            t.update(d.reference, {"n": d.get("n") + 10})
        return [d.id for d in docs]

    assert bump(db.transaction()) == ["1", "2"]
    assert sorted(d.get("n") for d in db.collection("q").get()) == [0, 11, 12]
    # Driven by the caller: a document the query returned changes before the commit.
    t = db.transaction()
    t._begin()
    docs = list(t.get(q))
    db.document("q/1").set({"n": 50})
    t.set(db.document("q/new"), {"n": len(docs)})
    with pytest.raises(ember.AbortedError):
        t.commit()
    assert not db.document("q/new").get().exists
