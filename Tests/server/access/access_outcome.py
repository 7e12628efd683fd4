"""What one gRPC call to `ember serve` got, read back whole: an Outcome.

Responsible for: turning a unary call, a server stream or a pager into an Outcome (the status
code name, its message, every response that arrived even when the call ended in error), so that
a test asserts both the code and that no response carried protected data (`leaks`); and plain
Python values of a document's fields.

    out = unary(lambda: client.get_document(request=..., timeout=CALL_SECONDS))
    out.code, out.message, out.responses      # "PERMISSION_DENIED", "Missing or ...", []
    out.leaks("TOP-SECRET")                    # False
"""
import grpc
from google.api_core import exceptions
from google.cloud.firestore_v1.types import document as document_pb

CALL_SECONDS = 10          # every unary or server-streaming call
DENIED = "Missing or insufficient permissions."


class Outcome:
    """What one call got: the status code name ("OK", "PERMISSION_DENIED", ...), its message and
    every response that arrived before it ended."""

    def __init__(self, code, message="", responses=()):
        self.code, self.message, self.responses = code, message, list(responses)

    def leaks(self, marker):
        """True if `marker` (a string) is in any response or in the message."""
        needle = marker.encode()
        return needle in self.message.encode() or any(needle in serialized(r) for r in self.responses)

    def __repr__(self):
        shown = [str(type(r).pb(r)).strip()[:300] for r in self.responses[:3]]
        return f"Outcome({self.code}, {self.message!r}, {len(self.responses)} responses {shown})"


def serialized(message):
    return type(message).pb(message).SerializeToString() if hasattr(type(message), "pb") else str(message).encode()


def error_outcome(e, responses=()):
    if isinstance(e, exceptions.GoogleAPICallError):
        code = e.grpc_status_code.name if e.grpc_status_code is not None else type(e).__name__
        return Outcome(code, e.message or "", responses)
    return Outcome(f"{type(e).__name__}", str(e), responses)


def unary(call):
    try:
        return Outcome("OK", "", [call()])
    except (exceptions.GoogleAPICallError, grpc.RpcError) as e:
        return error_outcome(e)


def streamed(call):
    """Reads a server stream (or pager) to its end; responses kept even when it ends in error."""
    got = []
    try:
        for r in call():
            got.append(r)
        return Outcome("OK", "", got)
    except (exceptions.GoogleAPICallError, grpc.RpcError) as e:
        return error_outcome(e, got)


def plain(value):
    pb = document_pb.Value.pb(value)
    kind = pb.WhichOneof("value_type")
    if kind == "map_value":
        return {k: plain(v) for k, v in value.map_value.fields.items()}
    if kind == "array_value":
        return [plain(v) for v in value.array_value.values]
    return None if kind == "null_value" else getattr(value, kind)


def plain_fields(document):
    return {k: plain(v) for k, v in document.fields.items()}
