"""Value types and sentinels of Ember's Python API (google-cloud-firestore names).

Responsible for: GeoPoint, the field transforms (SERVER_TIMESTAMP, DELETE_FIELD, Increment,
ArrayUnion, ArrayRemove), the enums (Source, ListenSource, ChangeType), FieldPath and the query
filters (FieldFilter, And, Or):

    ref.update({"visits": ember.Increment(1), "at": ember.SERVER_TIMESTAMP})
    q = cities.where(filter=ember.Or([ember.FieldFilter("a", "==", 1), ember.FieldFilter("b", ">", 2)]))
"""
from __future__ import annotations

import enum
import math
from typing import Any, Iterable, List, Sequence

from ._errors import InvalidArgumentError


class GeoPoint:
    """A latitude/longitude pair (degrees)."""

    __slots__ = ("latitude", "longitude")

    def __init__(self, latitude: float, longitude: float) -> None:
        self.latitude = float(latitude)
        self.longitude = float(longitude)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GeoPoint):
            return NotImplemented
        return _same(self.latitude, other.latitude) and _same(self.longitude, other.longitude)

    def __hash__(self) -> int:
        return hash((self.latitude, self.longitude))

    def __repr__(self) -> str:
        return f"GeoPoint({self.latitude!r}, {self.longitude!r})"


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name


SERVER_TIMESTAMP = _Sentinel("SERVER_TIMESTAMP")
"""Field transform: the time the backend commits the write (reads as None until then)."""
DELETE_FIELD = _Sentinel("DELETE_FIELD")
"""Field transform: removes the field (update() and set(merge=...))."""


class Increment:
    """Field transform: adds `value` (int or float) to the field (missing or non-numeric: set to it)."""

    __slots__ = ("value",)

    def __init__(self, value: int | float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidArgumentError(f"Increment(value): value must be an int or a float, not {type(value).__name__}")
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Increment) and other.value == self.value

    def __repr__(self) -> str:
        return f"Increment({self.value!r})"


class _ArrayTransform:
    __slots__ = ("values",)

    def __init__(self, values: Iterable[Any]) -> None:
        if isinstance(values, (str, bytes, dict)):
            raise InvalidArgumentError(f"{type(self).__name__}(values): values must be a list, not {type(values).__name__}")
        self.values: List[Any] = list(values)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.values == self.values  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.values!r})"


class ArrayUnion(_ArrayTransform):
    """Field transform: appends the elements not already in the array."""


class ArrayRemove(_ArrayTransform):
    """Field transform: removes every element equal to one of `values`."""


class Source(enum.IntEnum):
    """Where get() reads: DEFAULT (backend when online, else cache), SERVER, CACHE."""

    DEFAULT = 0
    SERVER = 1
    CACHE = 2


class ListenSource(enum.IntEnum):
    """Where a listener listens: DEFAULT (cache, then backend) or CACHE (the cache only)."""

    DEFAULT = 0
    CACHE = 1


class ChangeType(enum.Enum):
    """A document change in a query snapshot (google-cloud-firestore's values)."""

    ADDED = 1
    REMOVED = 2
    MODIFIED = 3


CHANGE_FROM_C = {0: ChangeType.ADDED, 1: ChangeType.MODIFIED, 2: ChangeType.REMOVED}


class FieldPath:
    """A field path from parts: FieldPath("a", "b.c") is a.`b.c`; FieldPath.document_id() is __name__."""

    def __init__(self, *parts: str) -> None:
        if not parts or not all(isinstance(p, str) and p for p in parts):
            raise InvalidArgumentError("FieldPath(*parts): parts must be non-empty strings")
        self.parts = tuple(parts)

    @classmethod
    def document_id(cls) -> "FieldPath":
        return cls("__name__")

    @classmethod
    def from_string(cls, path: str) -> "FieldPath":
        return cls(*path.split("."))

    def to_api_repr(self) -> str:
        out = []
        for p in self.parts:
            if p.replace("_", "a").isalnum() and not p[0].isdigit() and p.isascii():
                out.append(p)
            else:
                out.append("`" + p.replace("\\", "\\\\").replace("`", "\\`") + "`")
        return ".".join(out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldPath) and other.parts == self.parts

    def __hash__(self) -> int:
        return hash(self.parts)

    def __repr__(self) -> str:
        return f"FieldPath{self.parts!r}"


def field_path_str(path: Any, what: str = "field_path") -> str:
    if isinstance(path, str):
        return path
    if isinstance(path, FieldPath) or hasattr(path, "to_api_repr"):
        return path.to_api_repr()
    raise InvalidArgumentError(f"{what} must be a str or a FieldPath, not {type(path).__name__}")


def check_field_path(path: str, what: str) -> str:
    """`path` (dotted, `backquoted` segments allowed) when it is a valid field path; raises
    InvalidArgumentError otherwise: an empty path or segment ("a..b", ".a", "a."), an unclosed
    backquote, or one of ~ * / [ ] in an unquoted segment (Firestore's rules)."""
    segments, seg, i, n = [], "", 0, len(path)
    while i <= n:
        if i == n or path[i] == ".":
            if seg == "":
                raise InvalidArgumentError(f"{what}: invalid field path {path!r}: empty segment")
            segments.append(seg)
            seg, i = "", i + 1
            if i > n:
                break
            continue
        if path[i] == "`" and seg == "":
            j, quoted = i + 1, ""
            while j < n and path[j] != "`":
                if path[j] == "\\" and j + 1 < n:
                    j += 1
                quoted += path[j]
                j += 1
            if j >= n:
                raise InvalidArgumentError(f"{what}: invalid field path {path!r}: unclosed backquote")
            if j + 1 < n and path[j + 1] != ".":
                raise InvalidArgumentError(f"{what}: invalid field path {path!r}: text after a backquoted segment")
            seg, i = quoted or "`", j + 1
            if quoted == "":
                raise InvalidArgumentError(f"{what}: invalid field path {path!r}: empty segment")
            continue
        if path[i] in "~*/[]`":
            raise InvalidArgumentError(f"{what}: invalid field path {path!r}: {path[i]!r} is only allowed in a backquoted segment")
        seg += path[i]
        i += 1
    return path


class FieldFilter:
    """`field_path op_string value`, as google.cloud.firestore_v1.base_query.FieldFilter."""

    def __init__(self, field_path: Any, op_string: str, value: Any = None) -> None:
        self.field_path = field_path
        self.op_string = op_string
        self.value = value

    def __repr__(self) -> str:
        return f"FieldFilter({self.field_path!r}, {self.op_string!r}, {self.value!r})"


class BaseCompositeFilter:
    operator = "AND"

    def __init__(self, filters: Sequence[Any] | None = None) -> None:
        self.filters = list(filters or [])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.filters!r})"


class And(BaseCompositeFilter):
    """All of `filters`."""

    operator = "AND"


class Or(BaseCompositeFilter):
    """Any of `filters`."""

    operator = "OR"
