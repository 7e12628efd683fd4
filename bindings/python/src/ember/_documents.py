"""Snapshots, changes, write results and watches: what Ember hands back to Python code.

Responsible for: DocumentSnapshot (a subclass of the C-level `_ember.Document`, so a snapshot
is one object), QuerySnapshot (a lazy sequence over the C-level query snapshot), DocumentChange,
SnapshotMetadata, WriteResult and Watch, plus what every listener shares: `listen_flags` (the
on_snapshot options as libember's flags) and the dispatchers that turn C listener callbacks into
google-cloud-firestore's `callback(docs, changes, read_time)` shape:

    def on_snapshot(docs, changes, read_time):
        for change in changes:
            print(change.type.name, change.document.id, change.old_index, change.new_index)
    watch = ref.on_snapshot(on_snapshot)
    watch.unsubscribe()
"""
from __future__ import annotations

import datetime as _dt
import logging
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from . import _ember
from ._errors import EmberError, InvalidArgumentError
from ._values import CHANGE_FROM_C, ChangeType, ListenSource, field_path_str

log = logging.getLogger("ember")
_UTC = _dt.timezone.utc
_now = _dt.datetime.now


class SnapshotMetadata:
    """has_pending_writes: local writes not yet acknowledged; from_cache: not confirmed by the backend."""

    __slots__ = ("has_pending_writes", "from_cache")

    def __init__(self, has_pending_writes: bool, from_cache: bool) -> None:
        self.has_pending_writes = has_pending_writes
        self.from_cache = from_cache

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SnapshotMetadata) and (other.has_pending_writes, other.from_cache) == (
            self.has_pending_writes, self.from_cache)

    def __repr__(self) -> str:
        return f"SnapshotMetadata(has_pending_writes={self.has_pending_writes}, from_cache={self.from_cache})"


def _pick(data: Dict[str, Any], path: str) -> Any:
    cur: Any = data
    for part in _split_path(path):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(path)
        cur = cur[part]
    return cur


def _split_path(path: str) -> List[str]:
    if "`" not in path:
        return path.split(".")
    parts, cur, quoted, i = [], "", False, 0
    while i < len(path):
        c = path[i]
        if c == "\\" and quoted and i + 1 < len(path):
            cur += path[i + 1]
            i += 2
            continue
        if c == "`":
            quoted = not quoted
        elif c == "." and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return parts


def _project(data: Dict[str, Any], fields: Sequence[str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for f in fields:
        parts = _split_path(f)
        try:
            v = _pick(data, f)
        except KeyError:
            continue
        cur = out
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = v
    return out


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _micros_to_datetime(us: int) -> Optional[_dt.datetime]:
    return None if us == 0 else _EPOCH + _dt.timedelta(microseconds=us)


class DocumentSnapshot(_ember.Document):
    """A document's contents at one moment (google-cloud-firestore's DocumentSnapshot).

    `exists`, `id`, `reference`, `to_dict()`, `get("a.b")`, `snap["a"]`, `metadata`,
    `create_time`/`update_time` (the backend's; None for a pending local write), `read_time`.
    """

    __slots__ = ()   # _fields (a projection) and _rt (the read time) are the base type's, None until set

    def to_dict(self) -> Optional[Dict[str, Any]]:
        """The fields as a new dict, or None when the document does not exist."""
        d = self._data()
        fields = self._fields
        if d is not None and fields is not None:
            return _project(d, fields)
        return d

    def get(self, field_path: Any) -> Any:
        """The value at `field_path` ("a.b"); None when the document does not exist; KeyError when absent."""
        if not self.exists:
            return None
        return self._field(field_path_str(field_path))

    def __getitem__(self, field_path: Any) -> Any:
        if not self.exists:
            raise KeyError(field_path)
        return self._field(field_path_str(field_path))

    def __contains__(self, field_path: Any) -> bool:
        try:
            self[field_path]
            return True
        except KeyError:
            return False

    @property
    def metadata(self) -> SnapshotMetadata:
        return SnapshotMetadata(self._has_pending_writes, self._from_cache)

    @property
    def create_time(self) -> Optional[_dt.datetime]:
        """When the backend created the document (UTC), None when unknown (missing, or only a
        local write not yet acknowledged)."""
        return _micros_to_datetime(self._create_micros)

    @property
    def update_time(self) -> Optional[_dt.datetime]:
        """When the backend last updated the document (UTC), None when unknown."""
        return _micros_to_datetime(self._update_micros)

    @property
    def read_time(self) -> _dt.datetime:
        rt = self._rt
        if rt is None:
            rt = self._rt = _now(_UTC)
        return rt

    @property
    def path(self) -> str:
        return self._path

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DocumentSnapshot):
            return NotImplemented
        return self._path == other._path and self.exists == other.exists and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<DocumentSnapshot {self._path} exists={self.exists}>"


class _TransactionalDocumentSnapshot(DocumentSnapshot):
    """What Transaction.get(ref) returns: a snapshot that also iterates as google's generator does."""

    __slots__ = ()

    def __iter__(self) -> Iterator[DocumentSnapshot]:
        yield self

    def __next__(self) -> "_TransactionalDocumentSnapshot":
        return self


class QuerySnapshot(_ember.Snapshot):
    """A query's documents (a read-only sequence of DocumentSnapshot) with `.metadata`,
    `.read_time`, `.size`, `.empty`, `.docs` and `.query`."""

    __slots__ = ("_rt", "query")

    @property
    def metadata(self) -> SnapshotMetadata:
        return SnapshotMetadata(self._has_pending_writes, self._from_cache)

    @property
    def size(self) -> int:
        return len(self)

    @property
    def empty(self) -> bool:
        return len(self) == 0

    @property
    def docs(self) -> List[DocumentSnapshot]:
        return self[:]

    @property
    def read_time(self) -> _dt.datetime:
        try:
            rt = self._rt
        except AttributeError:
            rt = None
        if rt is None:
            rt = self._rt = _now(_UTC)
        return rt

    def __iter__(self) -> Iterator[DocumentSnapshot]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, QuerySnapshot)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<QuerySnapshot size={len(self)} from_cache={self._from_cache} has_pending_writes={self._has_pending_writes}>"


class DocumentListenSnapshot(list):
    """`docs` of a document listener's callback: a list of the one DocumentSnapshot with what a
    query snapshot has: `.metadata`, `.read_time`, `.size`, `.empty`, `.docs`."""

    __slots__ = ("_rt",)

    def __init__(self, doc: DocumentSnapshot, read_time: _dt.datetime) -> None:
        super().__init__((doc,))
        self._rt = read_time

    @property
    def metadata(self) -> SnapshotMetadata:
        return self[0].metadata

    @property
    def read_time(self) -> _dt.datetime:
        return self._rt

    @property
    def size(self) -> int:
        return len(self)

    @property
    def empty(self) -> bool:
        return len(self) == 0

    @property
    def docs(self) -> List[DocumentSnapshot]:
        return list(self)


class DocumentChange:
    """One change between two snapshots: `type` (ChangeType), `document`, `old_index`, `new_index`
    (-1 where there is none)."""

    __slots__ = ("type", "document", "old_index", "new_index")

    def __init__(self, type: ChangeType, document: DocumentSnapshot, old_index: int, new_index: int) -> None:
        self.type = type
        self.document = document
        self.old_index = old_index
        self.new_index = new_index

    def __repr__(self) -> str:
        return f"DocumentChange({self.type.name}, {self.document.id!r}, {self.old_index}, {self.new_index})"


class WriteResult:
    """The result of a write: `update_time` is None until the backend acknowledges it (then the
    local time of the acknowledgement: the C ABI does not report the commit time);
    `wait(timeout=None)` blocks until then and raises the write's error, if any."""

    __slots__ = ("_pending", "_time")

    def __init__(self, pending: Any = None, time: Optional[_dt.datetime] = None) -> None:
        self._pending = pending
        self._time = time

    @property
    def update_time(self) -> Optional[_dt.datetime]:
        if self._time is None and self._pending is not None:
            t = self._pending.ack_time
            if t is not None:
                self._time = _dt.datetime.fromtimestamp(t, _UTC)
        return self._time

    @property
    def done(self) -> bool:
        return self._pending is None or self._pending.done

    def wait(self, timeout: Optional[float] = None) -> "WriteResult":
        if self._pending is not None:
            t = self._pending.wait(timeout)
            if self._time is None:
                self._time = _dt.datetime.fromtimestamp(t, _UTC)
        return self

    def __repr__(self) -> str:
        return f"WriteResult(update_time={self.update_time!r})"


class _EndedListener:
    """The listener of a watch that could not start (its error went to on_error)."""

    active = False

    def remove(self) -> None:
        pass


class Watch:
    """A listener registration (google-cloud-firestore's Watch): `unsubscribe()` is idempotent
    and, when it returns, the callback is not running and never runs again (except when called
    from inside the callback itself, which then finishes)."""

    __slots__ = ("_listener", "__weakref__")

    def __init__(self, listener: Any) -> None:
        self._listener = listener

    @staticmethod
    def start(listen: Callable[[], Any], on_error: Optional[Callable[[BaseException], Any]], what: str) -> "Watch":
        """Runs `listen()`; when the listen is invalid (an EmberError), on_error(exc) runs once
        (logged without on_error) and the returned watch has ended, as for an error later."""
        try:
            return Watch(listen())
        except EmberError as e:
            _report(on_error, e, what)
            return Watch(_EndedListener())

    def unsubscribe(self) -> None:
        self._listener.remove()

    close = unsubscribe
    remove = unsubscribe

    @property
    def is_active(self) -> bool:
        return self._listener.active


def _report(on_error: Optional[Callable[[BaseException], Any]], exc: BaseException, what: str) -> None:
    if on_error is None:
        log.error("%s ended with an error: %s", what, exc)
        return
    try:
        on_error(exc)
    except Exception:
        log.exception("exception in the on_error callback of %s", what)


def listen_flags(include_metadata_changes: bool, source: Any) -> int:
    """on_snapshot(include_metadata_changes, source) as the flags of ember_doc_listen / ember_query_listen."""
    f = _ember.LISTEN_INCLUDE_METADATA_CHANGES if include_metadata_changes else 0
    if source is ListenSource.CACHE or source == "cache" or (isinstance(source, int) and source == ListenSource.CACHE):
        f |= _ember.LISTEN_SOURCE_CACHE
    elif source not in (None, ListenSource.DEFAULT, "default"):
        raise InvalidArgumentError(f"on_snapshot(source): expected ember.ListenSource, not {source!r}")
    return f


def document_dispatcher(callback: Callable, on_error: Optional[Callable], path: str, compare: bool) -> Callable:
    """The C-level callback of a document listener: builds ([doc], changes, read_time)."""
    state = [False, None]  # existed before, data before (only kept when compare)

    def dispatch(doc: Optional[DocumentSnapshot], error: Optional[BaseException]) -> None:
        if error is not None:
            _report(on_error, error, f"the listener on {path}")
            return
        try:
            exists = doc.exists
            existed = state[0]
            if exists and not existed:
                changes = [DocumentChange(ChangeType.ADDED, doc, -1, 0)]
            elif existed and not exists:
                changes = [DocumentChange(ChangeType.REMOVED, doc, 0, -1)]
            elif exists:
                if compare:
                    data = doc._raw()
                    changes = [] if data == state[1] else [DocumentChange(ChangeType.MODIFIED, doc, 0, 0)]
                    state[1] = data
                else:
                    changes = [DocumentChange(ChangeType.MODIFIED, doc, 0, 0)]
            else:
                changes = []
            if compare and exists and not existed:
                state[1] = doc._raw()
            state[0] = exists
            rt = doc._rt = _now(_UTC)
            callback(DocumentListenSnapshot(doc, rt), changes, rt)
        except Exception:
            log.exception("exception in the snapshot callback of the listener on %s", path)

    return dispatch


def query_dispatcher(callback: Callable, on_error: Optional[Callable], what: str, query: Any) -> Callable:
    """The C-level callback of a query listener: builds (QuerySnapshot, changes, read_time)."""

    def dispatch(snap: Optional[QuerySnapshot], error: Optional[BaseException]) -> None:
        if error is not None:
            _report(on_error, error, what)
            return
        try:
            changes = [DocumentChange(CHANGE_FROM_C[t], d, o, n) for (t, d, o, n) in snap._changes()]
            rt = snap._rt = _now(_UTC)
            snap.query = query
            callback(snap, changes, rt)
        except Exception:
            log.exception("exception in the snapshot callback of %s", what)

    return dispatch
