"""Transactions (google-cloud-firestore's Transaction and @transactional).

Responsible for: `Transaction`, run by a `@transactional` function (libember's transaction:
retried on contention, reads before writes) or driven by the caller (`t._begin()`, reads,
writes, `t.commit()`, or `with db.transaction() as t:`: reads recorded, writes buffered, one
batch that verifies the reads and applies the writes), and the `transactional` decorator:

    @ember.transactional
    def take(transaction, counter):
        n = counter.get(transaction=transaction).get("n")
        transaction.update(counter, {"n": n - 1})
    take(db.transaction(), db.document("counters/a"))

A transaction holds its client (it uses the client's `_db` and `_settle`); `_client` is above
this module.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ._documents import DocumentSnapshot, WriteResult, _TransactionalDocumentSnapshot
from ._errors import AbortedError, AlreadyExistsError, FailedPreconditionError, InvalidArgumentError
from ._references import DocumentReference, _field_updates, _ref_path
from ._values import Source


class _ManualTransaction:
    """A transaction the caller drives (google-cloud-firestore's `t._begin(); ...; t.commit()` or
    `with db.transaction() as t:`), with the interface of the C transaction object: reads go to
    the backend and record each document's update time; writes are buffered; commit sends one
    batch that first verifies every document read is as it was read (else AbortedError: the
    caller may retry) and then applies the writes, atomically."""

    def __init__(self, client: Any) -> None:
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

    def __init__(self, client: Any, max_attempts: int = 5, read_only: bool = False) -> None:
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
