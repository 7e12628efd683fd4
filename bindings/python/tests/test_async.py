"""AsyncClient and `async for docs, changes, read_time in ref.snapshots()`."""
import asyncio

import pytest

import ember


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_async_client_documents_queries_batches():
    async def main():
        async with ember.AsyncClient() as db:
            sf = db.collection("cities").document("SF")
            r = await sf.set({"name": "SF", "state": "CA", "pop": 1})
            await r.wait(5)
            assert r.update_time is not None
            await sf.update({"pop": ember.Increment(1)})
            assert (await sf.get()).to_dict() == {"name": "SF", "state": "CA", "pop": 2}
            _, la = await db.collection("cities").add({"name": "LA", "state": "CA", "pop": 5})
            q = db.collection("cities").where(filter=ember.FieldFilter("state", "==", "CA")).order_by("pop")
            assert [d.id for d in await q.get()] == ["SF", la.id]
            assert [d.id async for d in q.stream()] == ["SF", la.id]
            assert (await q.count().get())[0][0].value == 2
            batch = db.batch()
            batch.set(db.document("cities/NY"), {"name": "NY"}).delete(la)
            await batch.commit()
            await db.wait_for_pending_writes()
            assert not (await la.get()).exists
            await sf.delete()
            await db.document("x/y").create({"a": 1})
            with pytest.raises(ember.AlreadyExistsError):
                await db.document("x/y").create({"a": 1})
            await db.disable_network(); await db.enable_network()
            assert [s.exists async for s in db.get_all([db.document("x/y")])] == [True]
    run(main())


def test_async_transactional():
    async def main():
        db = ember.AsyncClient()
        ref = db.document("counters/c")
        await ref.set({"n": 1})

        @ember.async_transactional
        async def bump(transaction, by):
            snap = await transaction.get(ref)
            transaction.update(ref, {"n": snap.get("n") + by})
            return "ok"

        assert await bump(db.transaction(), 5) == "ok"
        assert (await ref.get()).get("n") == 6
        db.close()
    run(main())


def test_document_snapshots_stream_and_leaving_unsubscribes():
    async def main():
        db = ember.Client()
        ref = db.document("c/s")
        seen = []
        stream = ref.snapshots()
        async for docs, changes, read_time in stream:
            seen.append(docs[0].to_dict())
            if len(seen) == 1:
                ref.set({"a": 1})
            elif len(seen) == 2:
                break
        assert seen == [None, {"a": 1}]
        watch = stream._watch
        del stream
        assert watch is None or not watch.is_active
        db.close()
    run(main())


def test_query_snapshots_stream_with_metadata():
    async def main():
        db = ember.AsyncClient()
        q = db.collection("c")
        metas = []
        async for docs, changes, read_time in q.snapshots(include_metadata_changes=True):
            metas.append((len(docs), docs.metadata.has_pending_writes))
            if len(metas) == 1:
                await db.document("c/a").set({"x": 1})
            if metas[-1] == (1, False):
                break
        assert metas[0][0] == 0 and (1, True) in metas and metas[-1] == (1, False)
        db.close()
    run(main())


def test_stream_aclose():
    async def main():
        db = ember.Client()
        s = db.collection("c").snapshots()
        await s.__anext__()
        await s.aclose()
        with pytest.raises(StopAsyncIteration):
            await s.__anext__()
        db.close()
    run(main())
