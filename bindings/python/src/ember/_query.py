"""Queries (google-cloud-firestore's Query, CollectionGroup, AggregateQuery).

Responsible for: building queries immutably (each call returns a new Query, checked at once by
libember, so an invalid query raises InvalidArgumentError where it is built), running them
(get / stream / count), listening to them (on_snapshot / snapshots), and the google-cloud-
firestore extras libember does not have natively (select, offset: applied here). A Query uses
only its client's `_db`; CollectionReference (module `_references`, above this one) subclasses it:

    q = cities.where(filter=ember.FieldFilter("state", "==", "CA")).order_by("population", direction=ember.Query.DESCENDING).limit(10)
    for doc in q.stream(): print(doc.id)
"""
from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from . import _ember
from ._documents import DocumentSnapshot, QuerySnapshot, Watch, listen_flags, query_dispatcher, _pick
from ._errors import EmberError, InvalidArgumentError
from ._stream import SnapshotStream
from ._values import check_field_path, FieldPath, ListenSource, Source, field_path_str

_OPS = {
    "<": 0, "<=": 1, "==": 2, "!=": 3, ">": 4, ">=": 5,
    "array-contains": 6, "array_contains": 6,
    "array-contains-any": 7, "array_contains_any": 7,
    "in": 8, "not-in": 9, "not_in": 9,
}
_CURSORS = {"start_at": 0, "start_after": 1, "end_at": 2, "end_before": 3}


def _op(op_string: Any, what: str) -> int:
    if hasattr(op_string, "name") and not isinstance(op_string, str):  # proto enums, e.g. Operator.EQUAL
        names = {"LESS_THAN": "<", "LESS_THAN_OR_EQUAL": "<=", "EQUAL": "==", "NOT_EQUAL": "!=",
                 "GREATER_THAN": ">", "GREATER_THAN_OR_EQUAL": ">=", "ARRAY_CONTAINS": "array-contains",
                 "ARRAY_CONTAINS_ANY": "array-contains-any", "IN": "in", "NOT_IN": "not-in"}
        op_string = names.get(op_string.name, op_string.name)
    try:
        return _OPS[op_string]
    except (KeyError, TypeError):
        raise InvalidArgumentError(
            f"{what}(op_string): unknown operator {op_string!r}; use one of {', '.join(sorted(set(_OPS)))}") from None


def _is_or(f: Any) -> bool:
    op = getattr(f, "operator", None)
    if op is None:
        return type(f).__name__ == "Or"
    if isinstance(op, str):
        return op.upper() == "OR"
    name = getattr(op, "name", None)
    if name is not None:
        return name == "OR"
    return op == 2  # StructuredQuery.CompositeFilter.Operator.OR


#: Composite filters (And/Or) inside one another that a query may hold.
MAX_FILTER_NESTING = 100


def _c_filter(f: Any, depth: int = 0) -> Any:
    """FieldFilter/And/Or, ours or google.cloud.firestore_v1's (duck-typed) -> _ember.Filter."""
    if hasattr(f, "op_string") and hasattr(f, "field_path"):
        return _ember.filter_field(field_path_str(f.field_path, "FieldFilter(field_path)"), _op(f.op_string, "FieldFilter"), f.value)
    if hasattr(f, "filters"):
        if depth >= MAX_FILTER_NESTING:
            raise InvalidArgumentError(f"where(filter): And/Or filters nested more than {MAX_FILTER_NESTING} deep")
        subs = [_c_filter(x, depth + 1) for x in f.filters]
        return _ember.filter_or(subs) if _is_or(f) else _ember.filter_and(subs)
    raise InvalidArgumentError(f"where(filter): expected FieldFilter, And or Or, not {type(f).__name__}")


class Query:
    """An immutable query over a collection (or a collection group)."""

    ASCENDING = "ASCENDING"
    DESCENDING = "DESCENDING"

    def __init__(self, client: Any, path: str, group: bool = False, ops: Tuple[Any, ...] = (),
                 limit: Optional[Tuple[int, bool]] = None, cursors: Tuple[Any, ...] = (),
                 projection: Optional[List[str]] = None, offset: int = 0, handle: Any = None) -> None:
        self._client = client
        self._cpath = path
        self._group = group
        self._ops = ops
        self._limit = limit
        self._cursors = cursors
        self._projection = projection
        self._offset = offset
        self._handle = handle if handle is not None else self._build()

    # ------------------------------------------------------------ building
    def _build(self) -> Any:
        db = self._client._db
        q = db.query(self._cpath, self._group)
        orders: List[str] = []
        for op in self._ops:
            kind = op[0]
            if kind == "where":
                q.where(op[1], op[2], op[3])
            elif kind == "filter":
                q.where_filter(op[1])
            else:
                q.order_by(op[1], op[2])
                orders.append(op[1])
        if self._limit is not None:
            n, last = self._limit
            q.limit(n + (self._offset if not last else 0), last)
        for name, values in self._cursors:
            if isinstance(values, DocumentSnapshot):
                q.cursor(_CURSORS[name], values)
            elif isinstance(values, dict):
                if not orders:
                    raise InvalidArgumentError(f"{name}(document_fields): a dict cursor needs order_by() first")
                try:
                    vals = [values[o] if o in values else _pick(values, o) for o in orders]
                except KeyError as e:
                    raise InvalidArgumentError(f"{name}(document_fields): the cursor has no value for the order-by field {e.args[0]!r}") from None
                q.cursor(_CURSORS[name], vals)
            else:
                q.cursor(_CURSORS[name], list(values))
        return q

    def _with(self, **changes: Any) -> "Query":
        kw = dict(client=self._client, path=self._cpath, group=self._group, ops=self._ops, limit=self._limit,
                  cursors=self._cursors, projection=self._projection, offset=self._offset)
        kw.update(changes)
        return Query(**kw)

    def where(self, field_path: Any = None, op_string: Any = None, value: Any = None, *, filter: Any = None) -> "Query":
        """`where("state", "==", "CA")` or `where(filter=FieldFilter(...) | And([...]) | Or([...]))`."""
        if filter is not None:
            if field_path is not None or op_string is not None:
                raise InvalidArgumentError("where(): pass either field_path/op_string/value or filter=, not both")
            if hasattr(filter, "op_string") and hasattr(filter, "field_path"):
                op = ("where", field_path_str(filter.field_path, "FieldFilter(field_path)"), _op(filter.op_string, "FieldFilter"), filter.value)
            else:
                op = ("filter", _c_filter(filter))
        else:
            if field_path is None:
                raise InvalidArgumentError("where(field_path): a field path (or filter=) is required")
            op = ("where", field_path_str(field_path, "where(field_path)"), _op(op_string, "where"), value)
        return self._with(ops=self._ops + (op,))

    def order_by(self, field_path: Any, direction: str = ASCENDING) -> "Query":
        d = direction.upper() if isinstance(direction, str) else getattr(direction, "name", direction)
        if d not in ("ASCENDING", "DESCENDING"):
            raise InvalidArgumentError(f"order_by(direction): expected Query.ASCENDING or Query.DESCENDING, not {direction!r}")
        if self._cursors:
            raise InvalidArgumentError("Invalid query. You must not call start_at(), start_after(), end_at() or "
                                       "end_before() before calling order_by().")
        return self._with(ops=self._ops + (("order", field_path_str(field_path, "order_by(field_path)"), d == "DESCENDING"),))

    def limit(self, count: int) -> "Query":
        return self._with(limit=(_count(count, "limit"), False))

    def limit_to_last(self, count: int) -> "Query":
        return self._with(limit=(_count(count, "limit_to_last"), True))

    def offset(self, num_to_skip: int) -> "Query":
        if not isinstance(num_to_skip, int) or isinstance(num_to_skip, bool) or not 0 <= num_to_skip <= INT32_MAX:
            raise InvalidArgumentError(f"offset(num_to_skip): expected an int from 0 to {INT32_MAX}, not {num_to_skip!r}")
        return self._with(offset=num_to_skip)

    def select(self, field_paths: Sequence[Any]) -> "Query":
        if isinstance(field_paths, str):
            raise InvalidArgumentError("select(field_paths): expected a list of field paths, not a str")
        return self._with(projection=[check_field_path(field_path_str(f, "select(field_paths)"), "select(field_paths)")
                                      for f in field_paths])

    def _cursor(self, name: str, document_fields_or_snapshot: Any) -> "Query":
        v = document_fields_or_snapshot
        if not isinstance(v, (DocumentSnapshot, dict, list, tuple)):
            raise InvalidArgumentError(f"{name}(document_fields_or_snapshot): expected a dict, a list or a DocumentSnapshot, not {type(v).__name__}")
        if isinstance(v, DocumentSnapshot) and not v.exists:
            raise InvalidArgumentError(f"{name}(document_fields_or_snapshot): the snapshot's document does not exist")
        if isinstance(v, DocumentSnapshot):
            parent = v._path.rsplit("/", 1)[0]
            same = parent.rsplit("/", 1)[-1] == self._cpath if self._group else parent == self._cpath
            if not same:
                raise InvalidArgumentError(f"{name}(document_fields_or_snapshot): cannot use a snapshot of {v._path} "
                                           f"(another collection) as a cursor of a query on {self._cpath}")
        start = name.startswith("start")
        kept = tuple(c for c in self._cursors if c[0].startswith("start") != start)
        return self._with(cursors=kept + ((name, v),))

    def start_at(self, document_fields_or_snapshot: Any) -> "Query":
        return self._cursor("start_at", document_fields_or_snapshot)

    def start_after(self, document_fields_or_snapshot: Any) -> "Query":
        return self._cursor("start_after", document_fields_or_snapshot)

    def end_at(self, document_fields_or_snapshot: Any) -> "Query":
        return self._cursor("end_at", document_fields_or_snapshot)

    def end_before(self, document_fields_or_snapshot: Any) -> "Query":
        return self._cursor("end_before", document_fields_or_snapshot)

    # ------------------------------------------------------------ running
    def _run(self, source: Any = Source.DEFAULT) -> List[DocumentSnapshot]:
        try:
            src = int(Source(source))
        except (ValueError, TypeError):
            raise InvalidArgumentError(f"get(source): expected ember.Source, not {source!r}") from None
        snap = self._handle.get(src)
        docs = snap[:]
        if self._offset:
            docs = docs[self._offset:] if not (self._limit and self._limit[1]) else docs
        if self._projection is not None:
            for d in docs:
                d._fields = self._projection
        return docs

    def get(self, transaction: Any = None, retry: Any = None, timeout: Any = None,
            source: Any = Source.DEFAULT) -> List[DocumentSnapshot]:
        """The matching documents, in query order."""
        return self._run(source)

    def stream(self, transaction: Any = None, retry: Any = None, timeout: Any = None,
               source: Any = Source.DEFAULT) -> Iterator[DocumentSnapshot]:
        return iter(self._run(source))

    def count(self, alias: Optional[str] = None) -> "AggregateQuery":
        return AggregateQuery(self, alias or "field_1")

    def on_snapshot(self, callback: Callable[[QuerySnapshot, List[Any], _dt.datetime], Any],
                    include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT,
                    on_error: Optional[Callable[[BaseException], Any]] = None) -> Watch:
        """Calls `callback(docs, changes, read_time)` now and on every change of the results."""
        if not callable(callback):
            raise InvalidArgumentError("on_snapshot(callback): callback must be callable")
        flags = listen_flags(include_metadata_changes, source)
        what = f"the listener on {self!r}"
        dispatch = query_dispatcher(callback, on_error, what, self)

        def listen() -> Any:
            if self._offset:
                raise InvalidArgumentError("on_snapshot(): queries with offset() cannot be listened to")
            return self._handle.listen(flags, dispatch)

        return Watch.start(listen, on_error, what)

    def snapshots(self, include_metadata_changes: bool = False, source: Any = ListenSource.DEFAULT):
        """`async for docs, changes, read_time in query.snapshots()`; leaving the loop unsubscribes."""
        return SnapshotStream(self, include_metadata_changes, source)

    def _parent_path(self) -> str:
        return self._cpath

    def __repr__(self) -> str:
        what = f"group {self._cpath}" if self._group else self._cpath
        return f"<Query {what} ops={len(self._ops)}>"


def _count(n: Any, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool):
        raise InvalidArgumentError(f"{what}(count): expected an int, not {type(n).__name__}")
    if n <= 0:
        raise InvalidArgumentError(f"{what}(count): must be > 0, not {n}")
    if n > INT32_MAX:
        raise InvalidArgumentError(f"{what}(count): must be at most {INT32_MAX} (Firestore's limit is an int32), not {n}")
    return n


INT32_MAX = 2**31 - 1


class AggregationResult:
    """One aggregation's value (google-cloud-firestore's shape: alias, value, read_time)."""

    __slots__ = ("alias", "value", "read_time")

    def __init__(self, alias: str, value: Any, read_time: Optional[_dt.datetime] = None) -> None:
        self.alias = alias
        self.value = value
        self.read_time = read_time

    def __repr__(self) -> str:
        return f"AggregationResult(alias={self.alias!r}, value={self.value!r})"


class AggregateQuery:
    """`query.count().get()` -> [[AggregationResult(alias, value)]], as google-cloud-firestore."""

    def __init__(self, query: Query, alias: str) -> None:
        self._query = query
        self._alias = alias

    def _value(self) -> int:
        q = self._query
        if q._offset or (q._limit is not None and q._limit[1]):
            return len(q._run())
        return q._handle.count()

    def get(self, transaction: Any = None, retry: Any = None, timeout: Any = None) -> List[List[AggregationResult]]:
        return [[AggregationResult(self._alias, self._value(), _dt.datetime.now(_dt.timezone.utc))]]

    def stream(self, transaction: Any = None, retry: Any = None, timeout: Any = None) -> Iterator[List[AggregationResult]]:
        yield from self.get()


class CollectionGroup(Query):
    """Every collection with one id, wherever it is (`db.collection_group("landmarks")`)."""

    def __init__(self, collection_id: str, client: Any) -> None:
        Query.__init__(self, client, collection_id, group=True)
