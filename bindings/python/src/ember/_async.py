"""asyncio: AsyncClient (google-cloud-firestore's AsyncClient shape) and the coroutine forms.

Responsible for: the coroutine forms of the document API (AsyncClient, AsyncDocumentReference,
AsyncCollectionReference, AsyncQuery, AsyncWriteBatch, AsyncTransaction, @async_transactional);
their `snapshots()` are `SnapshotStream`s (module `_stream`):

    db = ember.AsyncClient()
    await db.collection("cities").document("SF").set({"name": "San Francisco"})
    async for docs, changes, read_time in db.document("cities/SF").snapshots():
        break                      # leaving the loop unsubscribes

Reads and writes of an in-process database take microseconds, so the coroutines call libember
directly (the GIL is released inside); what may wait long (acknowledgements, transactions) runs in
the loop's default executor. The top of the package: nothing in it imports this module.
"""
from __future__ import annotations

import asyncio
import functools
from typing import Any, AsyncIterator, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._batch import WriteBatch
from ._client import Client
from ._documents import DocumentSnapshot, WriteResult
from ._errors import InvalidArgumentError
from ._query import AggregateQuery, AggregationResult, Query
from ._references import CollectionReference, DocumentReference
from ._stream import SnapshotStream
from ._transaction import Transaction
from ._values import ListenSource, Source


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args))


class AsyncWriteResult(WriteResult):
    """A WriteResult whose `wait()` is a coroutine."""

    __slots__ = ()

    async def wait(self, timeout: Optional[float] = None) -> "AsyncWriteResult":  # type: ignore[override]
        await _in_thread(WriteResult.wait, self, timeout)
        return self


def _async_result(r: WriteResult) -> AsyncWriteResult:
    return AsyncWriteResult(r._pending, r._time)


class AsyncClient:
    """The coroutine form of Client (google-cloud-firestore's AsyncClient)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._sync = Client(*args, **kwargs)

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        self._sync.close()

    @property
    def closed(self) -> bool:
        return self._sync.closed

    def __enter__(self) -> "AsyncClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def collection(self, *path: str) -> "AsyncCollectionReference":
        return AsyncCollectionReference(self._sync.collection(*path))

    def document(self, *path: str) -> "AsyncDocumentReference":
        return AsyncDocumentReference(self._sync.document(*path))

    def collection_group(self, collection_id: str) -> "AsyncQuery":
        return AsyncQuery(self._sync.collection_group(collection_id))

    def batch(self) -> "AsyncWriteBatch":
        return AsyncWriteBatch(self._sync.batch())

    def transaction(self, max_attempts: int = 5, read_only: bool = False) -> "AsyncTransaction":
        return AsyncTransaction(self._sync.transaction(max_attempts=max_attempts, read_only=read_only))

    async def get_all(self, references: Sequence["AsyncDocumentReference"], field_paths: Any = None,
                      transaction: Any = None, **kw: Any) -> AsyncIterator[DocumentSnapshot]:
        for r in references:
            yield await r.get(field_paths=field_paths, transaction=transaction)

    async def wait_for_pending_writes(self, timeout: Optional[float] = None) -> None:
        pending = self._sync._db.wait_for_pending_writes()
        await _in_thread(pending.wait, timeout)

    async def disable_network(self) -> None:
        self._sync.disable_network()

    async def enable_network(self) -> None:
        self._sync.enable_network()

    def set_index_configuration(self, json_text: str) -> None:
        self._sync.set_index_configuration(json_text)

    @property
    def persistent_cache_index_manager(self) -> Any:
        return self._sync.persistent_cache_index_manager

    @property
    def is_persistent(self) -> bool:
        return self._sync.is_persistent

    def clear_persistence(self, path: Any = None) -> None:
        """Deletes the database files of this closed client (or of `path`: Client.clear_persistence)."""
        if path is not None:
            Client.clear_persistence(path)
        else:
            self._sync.clear_persistence()

    def reference(self, path: Any = None) -> Any:
        """The tree's Reference (the synchronous one: its writes are local and return at once;
        `get()` blocks, so call it through an executor in a loop)."""
        return self._sync.reference(path)


def _sync_ref(ref: Any) -> DocumentReference:
    return ref._sync if isinstance(ref, AsyncDocumentReference) else ref


class AsyncDocumentReference:
    """The coroutine form of DocumentReference."""

    __slots__ = ("_sync",)

    def __init__(self, sync: DocumentReference) -> None:
        self._sync = sync

    id = property(lambda self: self._sync.id)
    path = property(lambda self: self._sync.path)
    _path = property(lambda self: self._sync._path)

    @property
    def parent(self) -> "AsyncCollectionReference":
        return AsyncCollectionReference(self._sync.parent)

    def collection(self, collection_id: str) -> "AsyncCollectionReference":
        return AsyncCollectionReference(self._sync.collection(collection_id))

    async def set(self, document_data: Dict[str, Any], merge: Union[bool, Sequence[str]] = False, **kw: Any) -> AsyncWriteResult:
        return _async_result(self._sync.set(document_data, merge))

    async def update(self, field_updates: Dict[str, Any], option: Any = None, **kw: Any) -> AsyncWriteResult:
        return _async_result(self._sync.update(field_updates))

    async def delete(self, option: Any = None, **kw: Any) -> AsyncWriteResult:
        return _async_result(self._sync.delete())

    async def create(self, document_data: Dict[str, Any], **kw: Any) -> AsyncWriteResult:
        return _async_result(await _in_thread(self._sync.create, document_data))

    async def get(self, field_paths: Any = None, transaction: Any = None, source: Any = Source.DEFAULT, **kw: Any) -> DocumentSnapshot:
        if isinstance(transaction, AsyncTransaction):
            transaction = transaction._sync
        return self._sync.get(field_paths=field_paths, transaction=transaction, source=source)

    def on_snapshot(self, callback: Callable, include_metadata_changes: bool = False,
                    source: Any = ListenSource.DEFAULT, on_error: Optional[Callable] = None) -> Any:
        return self._sync.on_snapshot(callback, include_metadata_changes, source, on_error)

    def snapshots(self, include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT) -> SnapshotStream:
        return SnapshotStream(self._sync, include_metadata_changes, source)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AsyncDocumentReference):
            return self._sync == other._sync
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._sync)

    def __repr__(self) -> str:
        return f"<AsyncDocumentReference {self._sync.path}>"


class AsyncQuery:
    """The coroutine form of Query (builder methods return AsyncQuery)."""

    def __init__(self, sync: Query) -> None:
        self._sync = sync

    ASCENDING = Query.ASCENDING
    DESCENDING = Query.DESCENDING

    def _wrap(name: str):  # type: ignore[misc]
        def method(self: "AsyncQuery", *args: Any, **kwargs: Any) -> "AsyncQuery":
            return AsyncQuery(getattr(self._sync, name)(*args, **kwargs))
        method.__name__ = name
        method.__doc__ = getattr(Query, name).__doc__
        return method

    where = _wrap("where")
    order_by = _wrap("order_by")
    limit = _wrap("limit")
    limit_to_last = _wrap("limit_to_last")
    offset = _wrap("offset")
    select = _wrap("select")
    start_at = _wrap("start_at")
    start_after = _wrap("start_after")
    end_at = _wrap("end_at")
    end_before = _wrap("end_before")
    del _wrap

    async def get(self, transaction: Any = None, source: Any = Source.DEFAULT, **kw: Any) -> List[DocumentSnapshot]:
        return self._sync.get(source=source)

    async def stream(self, transaction: Any = None, source: Any = Source.DEFAULT, **kw: Any) -> AsyncIterator[DocumentSnapshot]:
        for d in self._sync.get(source=source):
            yield d

    def count(self, alias: Optional[str] = None) -> "AsyncAggregateQuery":
        return AsyncAggregateQuery(self._sync.count(alias))

    def on_snapshot(self, callback: Callable, include_metadata_changes: bool = False,
                    source: Any = ListenSource.DEFAULT, on_error: Optional[Callable] = None) -> Any:
        return self._sync.on_snapshot(callback, include_metadata_changes, source, on_error)

    def snapshots(self, include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT) -> SnapshotStream:
        return SnapshotStream(self._sync, include_metadata_changes, source)


class AsyncAggregateQuery:
    def __init__(self, sync: AggregateQuery) -> None:
        self._sync = sync

    async def get(self, **kw: Any) -> List[List[AggregationResult]]:
        return self._sync.get()


class AsyncCollectionReference(AsyncQuery):
    """The coroutine form of CollectionReference."""

    _sync: CollectionReference

    id = property(lambda self: self._sync.id)
    path = property(lambda self: self._sync.path)

    @property
    def parent(self) -> Optional[AsyncDocumentReference]:
        p = self._sync.parent
        return None if p is None else AsyncDocumentReference(p)

    def document(self, document_id: Optional[str] = None) -> AsyncDocumentReference:
        return AsyncDocumentReference(self._sync.document(document_id))

    async def add(self, document_data: Dict[str, Any], document_id: Optional[str] = None, **kw: Any) -> Tuple[Any, AsyncDocumentReference]:
        t, ref = self._sync.add(document_data, document_id)
        return t, AsyncDocumentReference(ref)


class AsyncWriteBatch:
    """The coroutine form of WriteBatch (`await batch.commit()`)."""

    def __init__(self, sync: WriteBatch) -> None:
        self._sync = sync

    def set(self, reference: Any, document_data: Dict[str, Any], merge: Union[bool, Sequence[str]] = False) -> "AsyncWriteBatch":
        self._sync.set(_sync_ref(reference), document_data, merge)
        return self

    def update(self, reference: Any, field_updates: Dict[str, Any], option: Any = None) -> "AsyncWriteBatch":
        self._sync.update(_sync_ref(reference), field_updates)
        return self

    def delete(self, reference: Any, option: Any = None) -> "AsyncWriteBatch":
        self._sync.delete(_sync_ref(reference))
        return self

    def create(self, reference: Any, document_data: Dict[str, Any]) -> "AsyncWriteBatch":
        self._sync.create(_sync_ref(reference), document_data)
        return self

    async def commit(self, **kw: Any) -> List[AsyncWriteResult]:
        return [_async_result(r) for r in self._sync.commit()]

    async def __aenter__(self) -> "AsyncWriteBatch":
        return self

    async def __aexit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is None:
            await self.commit()


class AsyncTransaction:
    """The coroutine form of Transaction, for `@ember.async_transactional` functions."""

    def __init__(self, sync: Transaction) -> None:
        self._sync = sync

    in_progress = property(lambda self: self._sync.in_progress)

    async def get(self, ref_or_query: Any, **kw: Any) -> Any:
        if isinstance(ref_or_query, AsyncQuery):
            ref_or_query = ref_or_query._sync
        return self._sync.get(_sync_ref(ref_or_query))

    def set(self, reference: Any, document_data: Dict[str, Any], merge: Union[bool, Sequence[str]] = False) -> "AsyncTransaction":
        self._sync.set(_sync_ref(reference), document_data, merge)
        return self

    def update(self, reference: Any, field_updates: Dict[str, Any], option: Any = None) -> "AsyncTransaction":
        self._sync.update(_sync_ref(reference), field_updates)
        return self

    def delete(self, reference: Any, option: Any = None) -> "AsyncTransaction":
        self._sync.delete(_sync_ref(reference))
        return self

    def create(self, reference: Any, document_data: Dict[str, Any]) -> "AsyncTransaction":
        self._sync.create(_sync_ref(reference), document_data)
        return self

    async def _begin(self, retry_id: Any = None) -> None:
        self._sync._begin(retry_id)

    async def commit(self) -> List[Any]:
        return self._sync.commit()

    async def rollback(self) -> None:
        self._sync.rollback()

    async def __aenter__(self) -> "AsyncTransaction":
        self._sync._begin()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._sync.__exit__(exc_type, exc, tb)


class _AsyncTransactional:
    """What `@async_transactional` returns: `await f(transaction, *args)`. The transaction runs on
    an executor thread; each attempt runs the coroutine on the caller's loop."""

    def __init__(self, to_wrap: Callable[..., Any]) -> None:
        self.to_wrap = to_wrap
        functools.update_wrapper(self, to_wrap)

    async def __call__(self, transaction: AsyncTransaction, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(transaction, AsyncTransaction):
            raise InvalidArgumentError(f"the first argument must be an AsyncTransaction (db.transaction()), not {type(transaction).__name__}")
        loop = asyncio.get_running_loop()
        fn = self.to_wrap

        def attempt(_sync_tx: Transaction, *a: Any, **k: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(fn(transaction, *a, **k), loop).result()

        return await _in_thread(lambda: transaction._sync._run(attempt, args, kwargs))


def async_transactional(to_wrap: Callable[..., Any]) -> _AsyncTransactional:
    """Decorator: `@ember.async_transactional async def f(transaction, ...)`; `await f(db.transaction(), ...)`."""
    return _AsyncTransactional(to_wrap)
