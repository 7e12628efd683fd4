"""Client, references, batches and transactions (google-cloud-firestore's shapes).

Responsible for: opening and closing a database (`Client`), naming documents and collections
(`DocumentReference`, `CollectionReference`), writing (set / merge / update / delete / create),
reading (get with a Source), listening (on_snapshot), `WriteBatch`, `Transaction` and
`@transactional`:

    db = ember.Client()
    sf = db.collection("cities").document("SF")
    sf.set({"name": "San Francisco", "population": 860000}).wait()
    print(sf.get().to_dict())
"""
from __future__ import annotations

import atexit
import datetime as _dt
import functools
import json
import logging
import os
import threading
import weakref
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _ember
from ._documents import (DocumentSnapshot, Watch, WriteResult, _TransactionalDocumentSnapshot,
                         document_dispatcher, listen_flags)
from ._errors import (AbortedError, AlreadyExistsError, DeadlineExceededError, EmberError, FailedPreconditionError,
                      InvalidArgumentError, UnavailableError)
from ._stream import SnapshotStream
from ._values import ListenSource, Source, field_path_str

from typing import TYPE_CHECKING

log = logging.getLogger("ember")

if TYPE_CHECKING:
    from ._tree import Reference  # noqa: F401

CACHE_SIZE_UNLIMITED = -1
_UTC = _dt.timezone.utc

_open_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # Listeners end (their last callbacks run) while the interpreter is still whole.
    for c in list(_open_clients):
        try:
            c.close()
        except Exception:
            pass


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


class _hybridmethod:
    """A method callable on the class (first argument: the class) or on an instance."""

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f = f
        self.__doc__ = f.__doc__

    def __get__(self, obj: Any, cls: Any) -> Callable[..., Any]:
        return functools.partial(self.f, cls if obj is None else obj)


def _check_host(host: Any, project: Any, database: Any, auth_token: Any, ssl_ca_file: Any) -> None:
    """What Client(host=...) refuses before libember reads the address (which refuses an empty
    host, a NUL, no port, ... with InvalidArgumentError): a host, token or CA file that is not a
    str, another project or database than Ember's clients use."""
    if not isinstance(host, str):
        raise InvalidArgumentError(f"Client(host): expected a str such as '127.0.0.1:8080', not {type(host).__name__}")
    if auth_token is not None and not isinstance(auth_token, str):
        raise InvalidArgumentError(f"Client(auth_token): expected a str (an ID token), not {type(auth_token).__name__}")
    if ssl_ca_file is not None and not isinstance(ssl_ca_file, (str, os.PathLike)):
        raise InvalidArgumentError(f"Client(ssl_ca_file): expected a path, not {type(ssl_ca_file).__name__}")
    if project is not None and project != "demo-ember":
        raise InvalidArgumentError(f"Client(project={project!r}, host=...): Ember's clients of a server use the project "
                                   "'demo-ember'; other projects are not supported yet")
    if database is not None and database != "(default)":
        raise InvalidArgumentError(f"Client(database={database!r}, host=...): Ember's clients of a server use the "
                                   "database '(default)'; other databases are not supported yet")


class Client:
    """An Ember database: in memory (`Client()`) or at a path (`Client(path="app.ember")`).

    `host="127.0.0.1:8080"` syncs the documents with that server (`ember serve` or the
    Firestore emulator, database `projects/demo-ember/databases/(default)`) instead of the
    in-process backend; `path` then holds the durable cache and pending writes.
    `database_host="127.0.0.1:9000"` syncs the tree (`reference()`) with `ember serve`'s tree
    port over the Realtime Database's realtime protocol (namespace `demo-ember`; `ssl` and
    `auth_token` apply to it too), offline first; without it the tree stays in this process.
    `ssl` (default True, as Firebase) connects with TLS, the
    server's certificate verified against the system's roots or the PEM file `ssl_ca_file`;
    pass `ssl=False` for a plaintext server (the emulator, an `ember serve` without
    `--tls-cert`). Each failed attempt to reach the server is told on stderr, one line
    `ember: could not reach the server at HOST (TLS on|off): ...` with the cause and the next
    retry (and `ssl=False` named when TLS met a plaintext server). `auth_token`
    (an ID token, a JWT) is sent as `authorization: Bearer` on every call, for a server whose
    security rules decide by `request.auth`; None: anonymous.

    A context manager; `close()` is idempotent. `project`, `credentials`, `database` and
    `client_options` are accepted (and ignored) so google-cloud-firestore code keeps working;
    with a host, `project` and `database` may only name Ember's (`demo-ember`, `(default)`).
    """

    def __init__(self, project: Any = None, credentials: Any = None, database: Any = None, *,
                 path: Any = None, persistence: Optional[bool] = None, cache_size_bytes: Optional[int] = None,
                 host: Optional[str] = None, ssl: bool = True, auth_token: Optional[str] = None,
                 ssl_ca_file: Any = None, client_options: Any = None, client_info: Any = None,
                 database_host: Optional[str] = None) -> None:
        if persistence is None:
            persistence = path is not None
        if cache_size_bytes is None:
            cache_size_bytes = 0
        elif not isinstance(cache_size_bytes, int) or isinstance(cache_size_bytes, bool):
            raise InvalidArgumentError(f"Client(cache_size_bytes): expected an int, not {type(cache_size_bytes).__name__}")
        elif not -2**63 <= cache_size_bytes < 2**63:
            raise InvalidArgumentError(f"Client(cache_size_bytes): {cache_size_bytes} is out of the 64-bit range")
        if not isinstance(ssl, bool):
            raise InvalidArgumentError(f"Client(ssl): expected a bool, not {type(ssl).__name__}")
        if host is not None:
            _check_host(host, project, database, auth_token, ssl_ca_file)
        if database_host is not None and not isinstance(database_host, str):
            raise InvalidArgumentError(f"Client(database_host): expected a str such as '127.0.0.1:9000', not {type(database_host).__name__}")
        ca = None if ssl_ca_file is None else os.fspath(ssl_ca_file)
        self._db = _ember.Database(path, bool(persistence), cache_size_bytes, host, ssl, auth_token, ca, database_host)
        self._online = True
        self._db.ref_factory = self._ref
        self._path = path
        self._host = host
        self._ssl = ssl
        self.project = project
        self._database = database or "(default)"
        _open_clients.add(self)

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Ends every listener and stops the database. Idempotent."""
        self._db.close()
        _open_clients.discard(self)

    @property
    def closed(self) -> bool:
        return self._db.closed

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "memory" if self._path is None else repr(str(self._path))
        if self._host is not None:
            where += f" host={self._host!r}"
        return f"<ember.Client {where}{' closed' if self.closed else ''}>"

    # ------------------------------------------------------------ references
    def _ref(self, path: str) -> "DocumentReference":
        return DocumentReference(path, self)

    def collection(self, *collection_path: str) -> "CollectionReference":
        path = _check_path(_join(collection_path, "collection(collection_path)"), 1, "collection(collection_path)")
        return CollectionReference(path, self)

    def document(self, *document_path: str) -> "DocumentReference":
        path = _check_path(_join(document_path, "document(document_path)"), 2, "document(document_path)")
        return DocumentReference(path, self)

    def collections(self, retry: Any = None, timeout: Any = None) -> Iterator["CollectionReference"]:
        """The top-level collections that hold a document (sorted by id)."""
        for cid in json.loads(self._db.list_collection_ids(None)):
            yield self.collection(cid)

    def collection_group(self, collection_id: str) -> "CollectionGroup":
        from ._query import CollectionGroup
        if not isinstance(collection_id, str) or not collection_id or "/" in collection_id:
            raise InvalidArgumentError(f"collection_group(collection_id): {collection_id!r} must be a non-empty id without '/'")
        return CollectionGroup(collection_id, self)

    def get_all(self, references: Iterable["DocumentReference"], field_paths: Optional[Sequence[str]] = None,
                transaction: Optional["Transaction"] = None, retry: Any = None, timeout: Any = None,
                source: Any = Source.DEFAULT) -> Iterator[DocumentSnapshot]:
        for ref in references:
            yield ref.get(field_paths=field_paths, transaction=transaction, source=source)

    # ------------------------------------------------------------ writes
    def batch(self) -> "WriteBatch":
        return WriteBatch(self)

    def bulk_writer(self, *args: Any, **kwargs: Any) -> "WriteBatch":
        return WriteBatch(self, auto_commit=True)

    def transaction(self, max_attempts: int = 5, read_only: bool = False) -> "Transaction":
        return Transaction(self, max_attempts=max_attempts, read_only=read_only)

    def wait_for_pending_writes(self, timeout: Optional[float] = None) -> None:
        """Blocks until every write made so far is acknowledged (or failed). With a host, as in
        Firestore, it keeps waiting while the server is unreachable (the writes stay queued and
        are sent once it answers; why it is unreachable is told on stderr): pass `timeout` to
        bound the wait (DeadlineExceededError when it passes, the writes still queued)."""
        self._db.wait_for_pending_writes().wait(timeout)

    # ------------------------------------------------------------ network and cache
    def disable_network(self) -> None:
        """Writes queue and listeners serve the cache (from_cache=True) until enable_network()."""
        self._db.set_network(False)
        self._online = False

    def enable_network(self) -> None:
        self._db.set_network(True)
        self._online = True

    def _settle(self, pending: Any) -> WriteResult:
        """A write's result as google-cloud-firestore returns it: while online, once the backend
        acknowledged it (raising the backend's error: NotFoundError, AlreadyExistsError, ...);
        offline, or inside an Ember callback (where the acknowledgement itself would have to be
        delivered), at once with a pending result whose wait() blocks until the acknowledgement."""
        r = WriteResult(pending)
        if self._online and not _ember.on_event_thread():
            if self._host is None:
                r.wait()
            else:
                # A server may be out of reach: the write is queued (and sent once it answers),
                # so after REMOTE_WRITE_WAIT it returns pending, as offline, instead of blocking.
                try:
                    r.wait(self.REMOTE_WRITE_WAIT)
                    self._unanswered_warned = False
                except DeadlineExceededError:
                    self._warn_unanswered()
        return r

    #: With a host, how long (seconds) a write waits for the server's acknowledgement before it
    #: returns pending (its `wait()` then blocks until the acknowledgement).
    REMOTE_WRITE_WAIT = 10.0

    _unanswered_warned = False

    def _warn_unanswered(self) -> None:
        """Says once (until a write is acknowledged in time again) through the "ember" logger
        that writes return pending because the server does not answer."""
        if self._unanswered_warned:
            return
        self._unanswered_warned = True
        tls = (" TLS is on (ssl=True, the default): pass ssl=False for a plaintext server."
               if self._ssl else "")
        log.warning("The server at %s did not acknowledge a write within %g s: the write returns pending "
                    "(update_time None) and stays queued, sent once the server answers; WriteResult.wait() "
                    "and wait_for_pending_writes() block until then. Why the server cannot be reached is "
                    "on stderr ('ember: could not reach the server at ...').%s",
                    self._host, self.REMOTE_WRITE_WAIT, tls)

    def set_index_configuration(self, json_text: str) -> None:
        """Builds the offline indexes of Firestore's index JSON (`{"indexes": [...],
        "fieldOverrides": [...]}`) in the persistent cache; a memory cache validates and ignores
        it. Raises InvalidArgumentError for malformed JSON."""
        if not isinstance(json_text, str):
            raise InvalidArgumentError(f"set_index_configuration(json_text): expected a str, not {type(json_text).__name__}")
        try:
            _ember.set_index_configuration(self._db, json_text)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"set_index_configuration(json_text): {e}") from None

    @property
    def persistent_cache_index_manager(self) -> "PersistentCacheIndexManager":
        """Index auto-creation and deletion of the persistent cache (Firestore's
        PersistentCacheIndexManager; its calls do nothing on a memory cache)."""
        return PersistentCacheIndexManager(self)

    @property
    def is_persistent(self) -> bool:
        """Whether the cache (and the pending-write queue) is on disk."""
        return _ember.is_persistent(self._db)

    @_hybridmethod
    def clear_persistence(self_or_cls: Any, path: Any = None) -> None:
        """Deletes the database files: `db.clear_persistence()` on a closed client, or
        `ember.Client.clear_persistence(path)`. FailedPreconditionError while any instance has
        the path open."""
        if isinstance(self_or_cls, Client):
            if path is not None:
                raise InvalidArgumentError("clear_persistence(): the client's own path is cleared; pass no path")
            if not self_or_cls.closed:
                raise FailedPreconditionError("clear_persistence(): close the client first (it is Firestore's terminate)")
            path = self_or_cls._path
            if path is None:
                return   # in memory: nothing on disk
        elif path is None:
            raise InvalidArgumentError("Client.clear_persistence(path): a path is required")
        _ember.clear_persistence(path)

    # ------------------------------------------------------------ the tree
    def reference(self, path: Optional[str] = None) -> "Reference":
        """A location in the Realtime-Database-style tree (the root when path is None)."""
        from ._tree import Reference
        if path is not None and not isinstance(path, str):
            raise InvalidArgumentError(f"reference(path): expected a str, not {type(path).__name__}")
        return Reference(_ember.tree_ref(self._db, path), self)


class PersistentCacheIndexManager:
    """Offline index switches of the persistent cache (Firestore's PersistentCacheIndexManager):

        db.persistent_cache_index_manager.enable_index_auto_creation()
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def enable_index_auto_creation(self) -> None:
        """Builds an index when a query scans many more documents than it returns (off by default)."""
        _ember.index_auto_creation(self._client._db, True)

    def disable_index_auto_creation(self) -> None:
        _ember.index_auto_creation(self._client._db, False)

    def delete_all_indexes(self) -> None:
        """Deletes every offline index (configured and auto-created)."""
        _ember.delete_all_indexes(self._client._db)

    @property
    def index_count(self) -> int:
        """How many offline indexes the cache has (0 for a memory cache)."""
        return _ember.index_count(self._client._db)


class DocumentReference:
    """A document's name in a client: `.id`, `.path`, `.parent`, `.collection(id)`; reads,
    writes and listeners on it."""

    __slots__ = ("_path", "_client", "__weakref__")

    def __init__(self, path: str, client: Client) -> None:
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
    def get(self, field_paths: Optional[Sequence[str]] = None, transaction: Optional["Transaction"] = None,
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


def _field_updates(field_updates: Any) -> Dict[str, Any]:
    if not isinstance(field_updates, dict):
        raise InvalidArgumentError(f"update(field_updates): expected a dict, not {type(field_updates).__name__}")
    if not field_updates:
        raise InvalidArgumentError("update(field_updates): at least one field is required")
    for k in field_updates:
        if not isinstance(k, str):
            return {field_path_str(k, "update(field_updates) key"): v for k, v in field_updates.items()}
    return field_updates


from ._query import CollectionReference, CollectionGroup  # noqa: E402  (they subclass Query)


def _ref_path(reference: Any) -> str:
    """The path of a DocumentReference given to a batch or transaction; TypeError for anything else."""
    try:
        return reference._path
    except AttributeError:
        raise TypeError(f"expected a DocumentReference, not {type(reference).__name__}") from None


class WriteBatch:
    """Up to 500 writes applied atomically by `commit()` (also a context manager that commits)."""

    def __init__(self, client: Client, auto_commit: bool = False) -> None:
        self._client = client
        self._b = client._db.batch()
        self._n = 0
        self._auto = auto_commit
        self._results: List[WriteResult] = []

    def _count(self) -> None:
        self._n += 1
        if self._auto and self._n >= 500:
            self._results.append(self._commit_now())

    def set(self, reference: DocumentReference, document_data: Dict[str, Any],
            merge: Union[bool, Sequence[str]] = False) -> "WriteBatch":
        self._b.set(_ref_path(reference), document_data, merge)
        self._n += 1   # _count() inlined: set() is the bulk-loading path
        if self._auto and self._n >= 500:
            self._results.append(self._commit_now())
        return self

    def update(self, reference: DocumentReference, field_updates: Dict[str, Any], option: Any = None) -> "WriteBatch":
        self._b.update(_ref_path(reference), _field_updates(field_updates))
        self._count()
        return self

    def delete(self, reference: DocumentReference, option: Any = None) -> "WriteBatch":
        self._b.delete(_ref_path(reference))
        self._count()
        return self

    def create(self, reference: DocumentReference, document_data: Dict[str, Any]) -> "WriteBatch":
        """A write with the exists=false precondition: the whole batch fails with
        AlreadyExistsError at commit when the document exists at the backend."""
        self._b.create(_ref_path(reference), document_data)
        self._count()
        return self

    def _commit_now(self) -> WriteResult:
        r = WriteResult(self._b.commit())
        self._b = self._client._db.batch()
        self._n = 0
        return r

    def commit(self, retry: Any = None, timeout: Any = None) -> List[WriteResult]:
        """Applies every write at once; one WriteResult per write (all share the commit's)."""
        n = self._n
        r = self._client._settle(self._b.commit())
        results = self._results + [r] * n
        self._results = []
        return results

    def flush(self) -> None:
        if self._n:
            self._results.append(self._commit_now())

    def close(self) -> None:
        self.flush()

    def __len__(self) -> int:
        return self._n

    def __enter__(self) -> "WriteBatch":
        return self

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is None:
            self.commit()


class _ManualTransaction:
    """A transaction the caller drives (google-cloud-firestore's `t._begin(); ...; t.commit()` or
    `with db.transaction() as t:`), with the interface of the C transaction object: reads go to
    the backend and record each document's update time; writes are buffered; commit sends one
    batch that first verifies every document read is as it was read (else AbortedError: the
    caller may retry) and then applies the writes, atomically."""

    def __init__(self, client: "Client") -> None:
        self._client = client
        self._reads: Dict[str, int] = {}
        self._writes: List[Tuple[Any, ...]] = []

    def get(self, path: str) -> DocumentSnapshot:
        if self._writes:
            raise InvalidArgumentError("Firestore transactions require all reads to be executed before all writes.")
        snap = self._client._db.get(path, int(Source.SERVER))
        self._reads.setdefault(path, snap._update_micros if snap.exists else 0)
        return snap

    def set(self, path: str, data: Any, merge: Any = False) -> None:
        self._writes.append(("set", path, data, merge))

    def update(self, path: str, fields: Any) -> None:
        self._writes.append(("update", path, fields))

    def delete(self, path: str) -> None:
        self._writes.append(("delete", path))

    def commit(self) -> WriteResult:
        b = self._client._db.batch()
        for path, t in self._reads.items():
            b.verify(path, t)
        for w in self._writes:
            getattr(b, w[0])(*w[1:])
        try:
            return self._client._settle(b.commit())
        except FailedPreconditionError as e:
            raise AbortedError(f"the transaction's reads changed before it committed: {e}") from None


class Transaction:
    """A transaction (google-cloud-firestore's shape): pass it to a `@ember.transactional`
    function, which runs (and is retried on contention) with reads before writes; or drive it
    yourself: `t._begin()`, reads, writes, `t.commit()` (or `t.rollback()`), or
    `with db.transaction() as t:` (commits at the end of the block, applies nothing if it raises)."""

    def __init__(self, client: Client, max_attempts: int = 5, read_only: bool = False) -> None:
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise InvalidArgumentError(f"transaction(max_attempts): must be a positive int, not {max_attempts!r}")
        self._client = client
        self._max_attempts = max_attempts
        self._read_only = read_only
        self._tx: Any = None

    @property
    def in_progress(self) -> bool:
        return self._tx is not None

    @property
    def id(self) -> Optional[bytes]:
        return b"ember" if self._tx is not None else None

    def _need(self) -> Any:
        if self._tx is None:
            raise FailedPreconditionError("the transaction is not in progress: call it through @ember.transactional, "
                                          "or call _begin() (or use `with db.transaction() as t:`)")
        return self._tx

    # ------------------------------------------------------------ driven by the caller
    def _begin(self, retry_id: Any = None) -> None:
        if self._tx is not None:
            raise FailedPreconditionError("the transaction is already in progress")
        self._tx = _ManualTransaction(self._client)

    def _manual(self) -> _ManualTransaction:
        tx = self._need()
        if not isinstance(tx, _ManualTransaction):
            raise FailedPreconditionError("a @transactional function's transaction commits when the function returns")
        return tx

    def commit(self, retry: Any = None, timeout: Any = None) -> List[WriteResult]:
        """Commits a transaction begun with _begin(): one WriteResult per write."""
        tx = self._manual()
        self._tx = None
        n = len(tx._writes)
        return [tx.commit()] * n

    _commit = commit

    def rollback(self) -> None:
        """Ends a transaction begun with _begin() without applying anything."""
        self._manual()
        self._tx = None

    _rollback = rollback

    def __enter__(self) -> "Transaction":
        self._begin()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._tx is None:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()

    def _get_document(self, path: str) -> DocumentSnapshot:
        return self._need().get(path)

    def get(self, ref_or_query: Any, retry: Any = None, timeout: Any = None) -> Any:
        """A DocumentReference gives its snapshot (also iterable, as google's generator); a query
        gives its documents, each read inside the transaction (the commit fails if one changes)."""
        if isinstance(ref_or_query, DocumentReference):
            snap = self._get_document(ref_or_query._path)
            snap.__class__ = _TransactionalDocumentSnapshot
            return snap
        self._need()
        return iter([self._get_document(d._path) for d in ref_or_query.get()])

    def get_all(self, references: Iterable[DocumentReference], retry: Any = None, timeout: Any = None) -> Iterator[DocumentSnapshot]:
        for r in references:
            yield self._get_document(r._path)

    def set(self, reference: DocumentReference, document_data: Dict[str, Any],
            merge: Union[bool, Sequence[str]] = False) -> "Transaction":
        self._write()
        self._tx.set(_ref_path(reference), document_data, merge)
        return self

    def update(self, reference: DocumentReference, field_updates: Dict[str, Any], option: Any = None) -> "Transaction":
        self._write()
        self._tx.update(_ref_path(reference), _field_updates(field_updates))
        return self

    def delete(self, reference: DocumentReference, option: Any = None) -> "Transaction":
        self._write()
        self._tx.delete(_ref_path(reference))
        return self

    def create(self, reference: DocumentReference, document_data: Dict[str, Any]) -> "Transaction":
        """Reads the document first (so call it before other writes), then sets it."""
        if self._get_document(_ref_path(reference)).exists:
            raise AlreadyExistsError(f"create(): the document {_ref_path(reference)} already exists")
        return self.set(reference, document_data)

    def _write(self) -> None:
        self._need()
        if self._read_only:
            raise InvalidArgumentError("this transaction is read-only")

    def _run(self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        if self._tx is not None:
            raise FailedPreconditionError("the transaction is already in progress")

        def body(tx: Any) -> Any:
            self._tx = tx
            try:
                return fn(self, *args, **kwargs)
            finally:
                self._tx = None

        return self._client._db.run_transaction(body, self._max_attempts)


class _Transactional:
    """What `@transactional` returns: call it with (transaction, *args); runs in the transaction,
    retried on contention (up to the transaction's max_attempts); returns the function's result."""

    def __init__(self, to_wrap: Callable[..., Any]) -> None:
        self.to_wrap = to_wrap
        functools.update_wrapper(self, to_wrap)

    def __call__(self, transaction: Transaction, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(transaction, Transaction):
            raise InvalidArgumentError(f"the first argument must be a Transaction (db.transaction()), not {type(transaction).__name__}")
        return transaction._run(self.to_wrap, args, kwargs)


def transactional(to_wrap: Callable[..., Any]) -> _Transactional:
    """Decorator: `@ember.transactional def f(transaction, ...)`, then `f(db.transaction(), ...)`."""
    return _Transactional(to_wrap)
