"""References: the names of documents and collections in a client (google-cloud-firestore's
DocumentReference and CollectionReference).

Responsible for: path syntax (segments joined, checked by libember, made canonical), a
document's writes (set / merge / update / delete / create), reads (get with a Source) and
listening (on_snapshot / snapshots), a collection's documents (`document(id=None)`, `add`),
and the checks batches and transactions share (`_ref_path`, `_field_updates`):

    sf = db.collection("cities").document("SF")
    sf.set({"name": "San Francisco"})
    sf.parent.document().set({"name": "a new city"})    # an auto id

A reference holds its client (it uses the client's `_db` and `_settle`) without importing the
client's module: `_client` is above this one. CollectionReference is a Query (module `_query`).
"""
from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _ember
from ._documents import DocumentSnapshot, Watch, WriteResult, document_dispatcher, listen_flags
from ._errors import EmberError, InvalidArgumentError
from ._query import Query
from ._stream import SnapshotStream
from ._values import ListenSource, Source, field_path_str


def _join(parts: Sequence[Any], what: str) -> str:
    if not parts:
        raise InvalidArgumentError(f"{what}: a path is required")
    out = []
    for p in parts:
        if not isinstance(p, str):
            raise InvalidArgumentError(f"{what}: path segments must be str, not {type(p).__name__}")
        out.append(p)
    return "/".join(out)


def _check_path(path: str, kind: int, what: str) -> str:
    try:
        k = _ember.path_kind(path)
    except EmberError as e:
        raise InvalidArgumentError(f"{what}: {e}") from None
    if k != kind:
        want = "a document path (an even number of segments)" if kind == 2 else "a collection path (an odd number of segments)"
        raise InvalidArgumentError(f"{what}: {path!r} is not {want}")
    # Canonical form: libember ignores one leading and one trailing slash (as the Apple SDK).
    if path.startswith("/"):
        path = path[1:]
    if path.endswith("/"):
        path = path[:-1]
    return path


def _source(source: Any, what: str) -> int:
    if source is None:
        return 0
    try:
        return int(Source(source))
    except (ValueError, TypeError):
        raise InvalidArgumentError(f"{what}(source): expected ember.Source, not {source!r}") from None


def _ref_path(reference: Any) -> str:
    """The path of a DocumentReference given to a batch or transaction; TypeError for anything else."""
    try:
        return reference._path
    except AttributeError:
        raise TypeError(f"expected a DocumentReference, not {type(reference).__name__}") from None


def _field_updates(field_updates: Any) -> Dict[str, Any]:
    if not isinstance(field_updates, dict):
        raise InvalidArgumentError(f"update(field_updates): expected a dict, not {type(field_updates).__name__}")
    if not field_updates:
        raise InvalidArgumentError("update(field_updates): at least one field is required")
    for k in field_updates:
        if not isinstance(k, str):
            return {field_path_str(k, "update(field_updates) key"): v for k, v in field_updates.items()}
    return field_updates


class DocumentReference:
    """A document's name in a client: `.id`, `.path`, `.parent`, `.collection(id)`; reads,
    writes and listeners on it."""

    __slots__ = ("_path", "_client", "__weakref__")

    def __init__(self, path: str, client: Any) -> None:
        self._path = path
        self._client = client

    @property
    def id(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def path(self) -> str:
        return self._path

    @property
    def parent(self) -> "CollectionReference":
        return CollectionReference(self._path.rsplit("/", 1)[0], self._client)

    def collection(self, collection_id: str) -> "CollectionReference":
        path = _check_path(f"{self._path}/{collection_id}", 1, "collection(collection_id)")
        return CollectionReference(path, self._client)

    def collections(self, page_size: Any = None, retry: Any = None, timeout: Any = None) -> Iterator["CollectionReference"]:
        """The subcollections of this document that hold a document (sorted by id)."""
        for cid in json.loads(self._client._db.list_collection_ids(self._path)):
            yield self.collection(cid)

    # ------------------------------------------------------------ writes
    def set(self, document_data: Dict[str, Any], merge: Union[bool, Sequence[str]] = False,
            retry: Any = None, timeout: Any = None) -> WriteResult:
        return self._client._settle(self._client._db.set(self._path, document_data, merge))

    def update(self, field_updates: Dict[str, Any], option: Any = None, retry: Any = None,
               timeout: Any = None) -> WriteResult:
        return self._client._settle(self._client._db.update(self._path, _field_updates(field_updates)))

    def delete(self, option: Any = None, retry: Any = None, timeout: Any = None) -> WriteResult:
        return self._client._settle(self._client._db.delete(self._path))

    def create(self, document_data: Dict[str, Any], retry: Any = None, timeout: Any = None) -> WriteResult:
        """Writes the document only if it does not exist at the backend (else AlreadyExistsError):
        one write with Firestore's exists=false precondition."""
        return self._client._settle(self._client._db.create(self._path, document_data))

    # ------------------------------------------------------------ reads
    def get(self, field_paths: Optional[Sequence[str]] = None, transaction: Any = None,
            retry: Any = None, timeout: Any = None, source: Any = Source.DEFAULT) -> DocumentSnapshot:
        if transaction is not None:
            snap = transaction._get_document(self._path)
        else:
            snap = self._client._db.get(self._path, _source(source, "get"))
        if field_paths is not None:
            snap._fields = [field_path_str(f) for f in field_paths]
        return snap

    # ------------------------------------------------------------ listening
    def on_snapshot(self, callback: Callable[[List[DocumentSnapshot], List[Any], _dt.datetime], Any],
                    include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT,
                    on_error: Optional[Callable[[BaseException], Any]] = None) -> Watch:
        """Calls `callback([snapshot], changes, read_time)` now and on every change."""
        if not callable(callback):
            raise InvalidArgumentError("on_snapshot(callback): callback must be callable")
        flags = listen_flags(include_metadata_changes, source)
        dispatch = document_dispatcher(callback, on_error, self._path, include_metadata_changes)
        return Watch(self._client._db.listen_document(self._path, flags, dispatch))

    def snapshots(self, include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT):
        """`async for docs, changes, read_time in ref.snapshots()`; leaving the loop unsubscribes."""
        return SnapshotStream(self, include_metadata_changes, source)

    # ------------------------------------------------------------ identity
    def __eq__(self, other: object) -> bool:
        if isinstance(other, DocumentReference):
            return self._path == other._path and self._client is other._client
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._path)

    def __repr__(self) -> str:
        return f"<DocumentReference {self._path}>"


class CollectionReference(Query):
    """A collection: `.id`, `.parent`, `.document(id=None)` (None: a new auto id), `.add(data)`,
    and every Query method."""

    def __init__(self, path: str, client: Any) -> None:
        Query.__init__(self, client, path)

    @property
    def id(self) -> str:
        return self._cpath.rsplit("/", 1)[-1]

    @property
    def path(self) -> str:
        return self._cpath

    @property
    def parent(self) -> Optional[DocumentReference]:
        if "/" not in self._cpath:
            return None
        return DocumentReference(self._cpath.rsplit("/", 1)[0], self._client)

    def document(self, document_id: Optional[str] = None) -> DocumentReference:
        if document_id is None:
            document_id = _ember.auto_id()
        elif not isinstance(document_id, str):
            raise InvalidArgumentError(f"document(document_id): expected a str, not {type(document_id).__name__}")
        elif (document_id.isascii() and "/" not in document_id and document_id[:2] != "__"
              and document_id not in ("", ".", "..") and len(self._cpath) + len(document_id) < 1_400):
            # An ASCII id that cannot break a rule of ResourcePath.validateSegment below a valid,
            # canonical collection path: no round trip through libember's path parser.
            return DocumentReference(f"{self._cpath}/{document_id}", self._client)
        return DocumentReference(_check_path(f"{self._cpath}/{document_id}", 2, "document(document_id)"), self._client)

    def add(self, document_data: Dict[str, Any], document_id: Optional[str] = None,
            retry: Any = None, timeout: Any = None) -> Tuple[_dt.datetime, DocumentReference]:
        """Writes a new document; returns (update_time, reference) as google-cloud-firestore
        (update_time: the acknowledgement's time; offline, the local time of the write)."""
        ref = self.document(document_id)
        result = ref.set(document_data)
        return result.update_time or _dt.datetime.now(_dt.timezone.utc), ref

    def list_documents(self, page_size: Any = None, retry: Any = None, timeout: Any = None) -> Iterator[DocumentReference]:
        for d in self._run():
            yield d.reference

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CollectionReference):
            return self._cpath == other._cpath and self._client is other._client
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._cpath)

    def __repr__(self) -> str:
        return f"<CollectionReference {self._cpath}>"
