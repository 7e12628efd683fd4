"""Write batches (google-cloud-firestore's WriteBatch and, with auto_commit, its BulkWriter).

Responsible for: `WriteBatch`, up to 500 writes applied atomically by `commit()` (and, for
`db.bulk_writer()`, committed every 500 writes):

    with db.batch() as batch:
        batch.set(db.document("cities/SF"), {"name": "San Francisco"})
        batch.delete(db.document("cities/LA"))

A batch holds its client (it uses the client's `_db` and `_settle`); `_client` is above this module.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence, Union

from ._documents import WriteResult
from ._references import DocumentReference, _field_updates, _ref_path


class WriteBatch:
    """Up to 500 writes applied atomically by `commit()` (also a context manager that commits)."""

    def __init__(self, client: Any, auto_commit: bool = False) -> None:
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
