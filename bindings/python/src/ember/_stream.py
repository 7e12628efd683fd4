"""Snapshot streams: a document or query listener as an async iterator.

Responsible for: `SnapshotStream`, what `snapshots()` returns (on DocumentReference, Query and
their async forms), like the seed's Dart `snapshots()` stream:

    async for docs, changes, read_time in ref.snapshots():
        print(docs[0].to_dict())
        break                      # leaving the loop unsubscribes

It knows its target only by its `on_snapshot` method, so the references and queries that
return it import this module, never the other way round.
"""
from __future__ import annotations

import asyncio
from typing import Any, List, Optional, Tuple

from ._values import ListenSource


class SnapshotStream:
    """An async iterator of (docs, changes, read_time) from a document or query listener.

    The listener starts at the first `async for` step; it ends when the stream is closed
    (`aclose()`), garbage-collected (leaving an `async for` drops it), or a listen error arrives
    (raised from the loop).
    """

    def __init__(self, target: Any, include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT) -> None:
        self._target = target
        self._include = include_metadata_changes
        self._source = source
        self._queue: Optional[asyncio.Queue] = None
        self._watch: Any = None
        self._closed = False

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        self._queue = queue

        def put(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                pass

        self._watch = self._target.on_snapshot(lambda docs, changes, rt: put((docs, changes, rt)),
                                               include_metadata_changes=self._include, source=self._source,
                                               on_error=put)

    def __aiter__(self) -> "SnapshotStream":
        return self

    async def __anext__(self) -> Tuple[Any, List[Any], Any]:
        if self._closed:
            raise StopAsyncIteration
        if self._queue is None:
            self._start()
        item = await self._queue.get()  # type: ignore[union-attr]
        if isinstance(item, BaseException):
            self._close()
            raise item
        return item

    def _close(self) -> None:
        self._closed = True
        if self._watch is not None:
            self._watch.unsubscribe()
            self._watch = None

    async def aclose(self) -> None:
        self._close()

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:
            pass
