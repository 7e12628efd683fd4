"""The Realtime-Database-style tree (docs/python.md, "The tree").

Responsible for: `Reference` (a location: child, push, set, multi-path update, delete, get,
observers), `TreeQuery` (order_by_child / key / value, limit_to_first / last, start_at,
start_after, end_at, end_before, equal_to; get and observe through the window), `EventType`,
and `DataSnapshot` (the C type `ember._ember.DataSnapshot`). Writes apply locally at once
(observers hear them before the call returns to the caller's next event) and return a
`WriteResult` whose `wait()` blocks until the backend acknowledges:

    root = db.reference()
    posts = root.child("posts")
    new = posts.push({"title": "Hi", "metrics": {"views": 3}})     # new.key: a push id
    handle = posts.observe(ember.EventType.CHILD_ADDED, lambda snap, prev_key: print(snap.key))
    posts.remove_observer(handle)

Callbacks run on Ember's event thread, one at a time, in order; they may write, observe and
remove observers (including their own), but not call get() (it would wait for that thread:
FailedPreconditionError).
"""
from __future__ import annotations

import logging
import enum
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional

from . import _ember
from . import _errors
from ._documents import WriteResult
from ._errors import InvalidArgumentError

DataSnapshot = _ember.DataSnapshot


class EventType(enum.IntEnum):
    """Tree event types (values as Firebase's FIRDataEventType and the C ABI's EMBER_EVENT_*)."""

    CHILD_ADDED = _ember.EVENT_CHILD_ADDED
    CHILD_REMOVED = _ember.EVENT_CHILD_REMOVED
    CHILD_CHANGED = _ember.EVENT_CHILD_CHANGED
    CHILD_MOVED = _ember.EVENT_CHILD_MOVED
    VALUE = _ember.EVENT_VALUE


def _event_type(event_type: Any) -> int:
    if isinstance(event_type, EventType):
        return int(event_type)
    if isinstance(event_type, str):
        try:
            return int(EventType[event_type.upper()])
        except KeyError:
            pass
    raise InvalidArgumentError(f"observe(event_type): expected ember.EventType, not {event_type!r}")


def _callback(callback: Any) -> Callable[[DataSnapshot, Optional[str]], Any]:
    """`callback` wrapped so that an exception it raises is logged (logger "ember"), as for
    document listeners, and later events still come."""
    if not callable(callback):
        raise TypeError("observe(callback): callback(snapshot, prev_key) must be callable")

    def observer(snapshot: DataSnapshot, prev_key: Optional[str]) -> None:
        try:
            callback(snapshot, prev_key)
        except Exception:
            log.exception("exception in the tree observer callback %r", callback)

    return observer


log = logging.getLogger("ember")


class TreeQuery:
    """A location seen through an order, a range and a limit (each builder returns a new query;
    the first rule broken raises InvalidArgumentError: docs/semantics.md 19)."""

    __slots__ = ("_q", "_ref", "_ordered")

    def __init__(self, q: Any, ref: "Reference", ordered: bool) -> None:
        self._q = q
        self._ref = ref
        self._ordered = ordered

    def _step(self, name: str, *args: Any, ordered: bool = False) -> "TreeQuery":
        q = self._q.copy()
        getattr(q, name)(*args)
        return TreeQuery(q, self._ref, self._ordered or ordered)

    @property
    def ref(self) -> "Reference":
        """The location this query reads."""
        return self._ref

    # ordering
    def order_by_child(self, path: str) -> "TreeQuery":
        """Orders children by the value at `path` below each ("metrics/views" nests)."""
        if not isinstance(path, str):
            raise InvalidArgumentError(f"order_by_child(path): expected a str, not {type(path).__name__}")
        return self._step("order_by_child", path, ordered=True)

    def order_by_key(self) -> "TreeQuery":
        return self._step("order_by_key", ordered=True)

    def order_by_value(self) -> "TreeQuery":
        return self._step("order_by_value", ordered=True)

    # limits and ranges
    def limit_to_first(self, limit: int) -> "TreeQuery":
        return self._step("limit", False, limit)

    def limit_to_last(self, limit: int) -> "TreeQuery":
        return self._step("limit", True, limit)

    def start_at(self, value: Any, key: Optional[str] = None) -> "TreeQuery":
        return self._step("bound", _ember.TREE_START_AT, value, key)

    def start_after(self, value: Any, key: Optional[str] = None) -> "TreeQuery":
        return self._step("bound", _ember.TREE_START_AFTER, value, key)

    def end_at(self, value: Any, key: Optional[str] = None) -> "TreeQuery":
        return self._step("bound", _ember.TREE_END_AT, value, key)

    def end_before(self, value: Any, key: Optional[str] = None) -> "TreeQuery":
        return self._step("bound", _ember.TREE_END_BEFORE, value, key)

    def equal_to(self, value: Any, key: Optional[str] = None) -> "TreeQuery":
        return self._step("bound", _ember.TREE_EQUAL_TO, value, key)

    # reading and observing
    def get(self) -> Any:
        """The query's window once: an OrderedDict in the query's order when ordered (None when
        empty), else the plain value. Blocks; online it asks the backend."""
        v = self._q.get()
        if self._ordered and isinstance(v, dict):
            return OrderedDict(v)
        return v

    def observe(self, event_type: Any, callback: Callable[[DataSnapshot, Optional[str]], Any]) -> Any:
        """Starts an observer of `event_type` on the query's window; returns its handle."""
        return self._q.observe(_event_type(event_type), _callback(callback))

    def remove_observer(self, handle: Any) -> None:
        """Removes the observer `handle` if it observes this location."""
        self._ref.remove_observer(handle)

    def remove_all_observers(self) -> None:
        """Removes the observers of this query (same location and parameters)."""
        self._q.remove_all_observers()

    def __repr__(self) -> str:
        return f"<ember.TreeQuery {self._ref.path}>"


class ServerValue:
    """Placeholders in tree writes that the server (or the in-process backend) fills in when it
    applies the write, as the Realtime Database's `{".sv": ...}` values: `TIMESTAMP` (its clock,
    ms since 1970) and `increment(n)` (the number there plus n). Until then the writer shows its
    estimate (its clock plus `.info/serverTimeOffset`; its own number plus n).

        ref.child("lastOnline").on_disconnect().set(ember.ServerValue.TIMESTAMP)
        ref.child("likes").set(ember.ServerValue.increment(1))
    """

    TIMESTAMP: Dict[str, Any] = {".sv": "timestamp"}

    @staticmethod
    def increment(delta: Any) -> Dict[str, Any]:
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise InvalidArgumentError(f"ServerValue.increment(delta): expected a number, not {type(delta).__name__}")
        return {".sv": {"increment": delta}}


class _Transaction:
    """One transaction's state between the event thread (which runs the update function and
    the completion through the C extension) and the thread waiting in Reference.transaction."""

    __slots__ = ("fn", "error", "value", "finished")

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.value: Any = None
        self.finished = threading.Event()

    def _update(self, current: Any) -> Any:
        try:
            return (True, self.fn(current))
        except BaseException as e:  # raised to the caller of transaction()
            self.error = e
            return (False, None)

    def _failed(self, exception: BaseException) -> None:
        self.error = exception

    def _done(self, code: int, message: str, committed: bool, value: Any) -> None:
        if self.error is None and code:
            self.error = _errors.from_code(code, message)
        self.value = value
        self.finished.set()


class Reference:
    """A location in the tree: `db.reference("posts/abc")`, `.child("a/b")`, `.key`, `.path`,
    `.parent`; writes, reads, queries and observers there."""

    __slots__ = ("_r", "_client", "__weakref__")

    def __init__(self, r: Any, client: Any) -> None:
        self._r = r
        self._client = client

    @property
    def key(self) -> Optional[str]:
        """The last path segment (None at the root)."""
        return self._r.key

    @property
    def path(self) -> str:
        """'/posts/abc' ('/' at the root)."""
        return self._r.path

    @property
    def parent(self) -> Optional["Reference"]:
        p = self._r.parent()
        return None if p is None else Reference(p, self._client)

    def child(self, path: str) -> "Reference":
        if not isinstance(path, str):
            raise InvalidArgumentError(f"child(path): expected a str, not {type(path).__name__}")
        return Reference(self._r.child(path), self._client)

    # writes
    def push(self, value: Any = None) -> "Reference":
        """A new child whose key is a push id (time-ordered, unique); with a value, sets it."""
        if value is None:
            return Reference(self._r.push(), self._client)
        return Reference(self._r.push_set(value), self._client)

    def set(self, value: Any) -> WriteResult:
        """Replaces the data here (None deletes it)."""
        return WriteResult(self._r.set(value))

    def update(self, value: Dict[str, Any]) -> WriteResult:
        """Sets each relative path ("a/b") to its value at once (None deletes); one event per
        observer for the whole update."""
        if not isinstance(value, dict):
            raise InvalidArgumentError(f"update(value): expected a dict, not {type(value).__name__}")
        return WriteResult(self._r.update(value))

    def delete(self) -> WriteResult:
        """Removes the data here."""
        return WriteResult(self._r.remove())

    def on_disconnect(self) -> "OnDisconnect":
        """Writes the server applies here when this client's connection to it ends (presence;
        `Client(database_host=...)`; with the in-process tree, when the client closes)."""
        return OnDisconnect(self)

    def transaction(self, transaction_update: Callable[[Any], Any]) -> Any:
        """Atomically replaces the value here with `transaction_update(current)` and returns the
        value written (firebase_admin's `Reference.transaction`). The function may run several
        times: first with what this client has (None when it has nothing yet), again, up to 25
        times, whenever the server's value had changed; it runs on Ember's event thread while
        this call waits. Returning None deletes the value. An exception it raises ends the
        transaction and is raised here; too many retries raise AbortedError. Blocks (refused
        with FailedPreconditionError from a callback)."""
        if not callable(transaction_update):
            raise InvalidArgumentError("transaction(transaction_update): expected a function of the current value")
        if _ember.on_event_thread():
            raise _errors.FailedPreconditionError(
                "transaction() from a callback would wait for the event thread it runs on; call it outside callbacks", 9)
        state = _Transaction(transaction_update)
        self._r.transaction(state)
        state.finished.wait()
        if state.error is not None:
            raise state.error
        return state.value

    # reads
    def get(self) -> Any:
        """The value here once (None when nothing is there). Blocks; online it asks the backend,
        offline it answers from what the client has (else UnavailableError)."""
        return self._r.get()

    # queries
    def _query(self) -> TreeQuery:
        return TreeQuery(self._r.query(), self, False)

    def order_by_child(self, path: str) -> TreeQuery:
        return self._query().order_by_child(path)

    def order_by_key(self) -> TreeQuery:
        return self._query().order_by_key()

    def order_by_value(self) -> TreeQuery:
        return self._query().order_by_value()

    def limit_to_first(self, limit: int) -> TreeQuery:
        return self._query().limit_to_first(limit)

    def limit_to_last(self, limit: int) -> TreeQuery:
        return self._query().limit_to_last(limit)

    def start_at(self, value: Any, key: Optional[str] = None) -> TreeQuery:
        return self._query().start_at(value, key)

    def start_after(self, value: Any, key: Optional[str] = None) -> TreeQuery:
        return self._query().start_after(value, key)

    def end_at(self, value: Any, key: Optional[str] = None) -> TreeQuery:
        return self._query().end_at(value, key)

    def end_before(self, value: Any, key: Optional[str] = None) -> TreeQuery:
        return self._query().end_before(value, key)

    def equal_to(self, value: Any, key: Optional[str] = None) -> TreeQuery:
        return self._query().equal_to(value, key)

    # observers
    def observe(self, event_type: Any, callback: Callable[[DataSnapshot, Optional[str]], Any]) -> Any:
        """Starts an observer; returns its handle. callback(snapshot, prev_key) runs on Ember's
        event thread: child_added once per existing child first, then per change."""
        return self._r.observe(_event_type(event_type), _callback(callback))

    def remove_observer(self, handle: Any) -> None:
        """Removes the observer `handle` if it observes this location (idempotent)."""
        self._r.remove_observer(handle)

    def remove_all_observers(self) -> None:
        """Removes every observer at this location, but not those on child locations."""
        self._r.remove_all_observers()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other._client is self._client and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"<ember.Reference {self.path}>"


__all__ = ["Reference", "TreeQuery", "EventType", "DataSnapshot"]


class OnDisconnect:
    """A location's onDisconnect writes (Firebase's `onDisconnect(ref)`): each call registers
    one, answered (WriteResult) once the server holds it or refused it."""

    def __init__(self, ref: "Reference") -> None:
        self._ref = ref

    def set(self, value: Any) -> WriteResult:
        return WriteResult(self._ref._r.on_disconnect_set(value))

    def update(self, value: Dict[str, Any]) -> WriteResult:
        if not isinstance(value, dict):
            raise InvalidArgumentError(f"update(value): expected a dict, not {type(value).__name__}")
        return WriteResult(self._ref._r.on_disconnect_update(value))

    def remove(self) -> WriteResult:
        return WriteResult(self._ref._r.on_disconnect_remove())

    def cancel(self) -> WriteResult:
        """Drops the onDisconnect writes registered here and below."""
        return WriteResult(self._ref._r.on_disconnect_cancel())
