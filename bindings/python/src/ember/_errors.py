"""Ember's exceptions: one class per C error code (include/ember.h), generated from TABLE.

Every class derives from `EmberError` (which has `.code` and `.code_name`) and, where one fits,
from the matching built-in, so `except ValueError` catches an invalid argument and
`except LookupError` a missing document:

    try:
        db.collection("cities").document("LA").create({"name": "Los Angeles"})
    except ember.AlreadyExistsError as e:
        print(e.code, e.code_name)      # 6 ALREADY_EXISTS
"""
from __future__ import annotations

from typing import Dict, Tuple, Type


class EmberError(Exception):
    """Base of every Ember error; `.code` is the C ABI's EMBER_ERR_* (a gRPC status code)."""

    code: int = 2
    code_name: str = "UNKNOWN"

    def __init__(self, message: str = "", code: int | None = None) -> None:
        super().__init__(message)
        if code is not None and code != type(self).code:
            self.code = code
        self.message = message

    def __reduce__(self):
        return (type(self), (self.message, self.code))


# code, C name, class name, built-in bases
TABLE: Tuple[Tuple[int, str, str, Tuple[type, ...]], ...] = (
    (1, "CANCELLED", "CancelledError", ()),
    (2, "UNKNOWN", "UnknownError", ()),
    (3, "INVALID_ARGUMENT", "InvalidArgumentError", (ValueError,)),
    (4, "DEADLINE_EXCEEDED", "DeadlineExceededError", (TimeoutError,)),
    (5, "NOT_FOUND", "NotFoundError", (LookupError,)),
    (6, "ALREADY_EXISTS", "AlreadyExistsError", ()),
    (7, "PERMISSION_DENIED", "PermissionDeniedError", (PermissionError,)),
    (8, "RESOURCE_EXHAUSTED", "ResourceExhaustedError", ()),
    (9, "FAILED_PRECONDITION", "FailedPreconditionError", ()),
    (10, "ABORTED", "AbortedError", ()),
    (11, "OUT_OF_RANGE", "OutOfRangeError", (IndexError,)),
    (12, "UNIMPLEMENTED", "UnimplementedError", (NotImplementedError,)),
    (13, "INTERNAL", "InternalError", ()),
    (14, "UNAVAILABLE", "UnavailableError", (ConnectionError,)),
    (15, "DATA_LOSS", "DataLossError", ()),
    (16, "UNAUTHENTICATED", "UnauthenticatedError", ()),
)

BY_CODE: Dict[int, Type[EmberError]] = {}


def _make(code: int, cname: str, name: str, bases: Tuple[type, ...]) -> Type[EmberError]:
    doc = f"Ember error {code} ({cname})." + (f" Also a {', '.join(b.__name__ for b in bases)}." if bases else "")
    cls = type(name, (EmberError,) + bases, {"code": code, "code_name": cname, "__doc__": doc, "__module__": "ember"})
    # built-in bases (OSError subclasses in particular) must not swallow our (message, code) args
    cls.__init__ = EmberError.__init__  # type: ignore[assignment]
    cls.__str__ = lambda self: self.message  # type: ignore[assignment]
    return cls


for _code, _cname, _name, _bases in TABLE:
    BY_CODE[_code] = globals()[_name] = _make(_code, _cname, _name, _bases)

__all__ = ["EmberError", "BY_CODE", "TABLE"] + [row[2] for row in TABLE]


def from_code(code: int, message: str) -> EmberError:
    return BY_CODE.get(code, BY_CODE[2])(message, code)
