"""The client (google-cloud-firestore's Client): one database, opened and closed.

Responsible for: opening a database (in memory, at a path, or the client of a server) and
closing it (also at interpreter exit), the entry points to everything else (`collection`,
`document`, `collection_group`, `batch`, `transaction`, `reference` for the tree), a write's
settlement (`_settle`: wait for the acknowledgement, or return pending), the network switch and
the persistent cache's indexes (`PersistentCacheIndexManager`):

    db = ember.Client()
    sf = db.collection("cities").document("SF")
    sf.set({"name": "San Francisco", "population": 860000}).wait()
    print(sf.get().to_dict())

The modules of what it hands out (`_references`, `_query`, `_batch`, `_transaction`, `_tree`)
are below it and do not import it.
"""
from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import weakref
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from . import _ember
from ._batch import WriteBatch
from ._documents import DocumentSnapshot, WriteResult
from ._errors import DeadlineExceededError, FailedPreconditionError, InvalidArgumentError
from ._query import CollectionGroup
from ._references import CollectionReference, DocumentReference, _check_path, _join
from ._transaction import Transaction
from ._tree import Reference
from ._values import Source

log = logging.getLogger("ember")

CACHE_SIZE_UNLIMITED = -1

_open_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # Listeners end (their last callbacks run) while the interpreter is still whole.
    for c in list(_open_clients):
        try:
            c.close()
        except Exception:
            pass


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
    `host="10.0.0.1:8080,10.0.0.2:8080"` names several instances of one `ember serve
    --postgres` deployment (IP addresses, at most 16): the client uses the first that answers
    and moves on to the next when its connection fails.
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
