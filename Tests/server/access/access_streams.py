"""Listen and Write streams read by a thread, with bounded waits, and predicates on their messages.

Responsible for: one bidirectional GAPIC call (Bidi) whose requests go through a queue and whose
responses a reader thread collects, so a test waits for a given message at most WAIT_SECONDS and
the whole stream lives at most STREAM_SECONDS; every response is kept for leak checks and a
short account of what arrived (kinds) goes into assertion messages.

    stream = Bidi(client.listen, metadata)
    stream.send(listen_request)
    stream.wait_for(target_change(1, TargetChangeType.CURRENT))     # the response, or None
    stream.close()
"""
import queue
import threading
import time

import grpc
from google.api_core import exceptions
from google.cloud.firestore_v1.types import firestore as fs

from access_outcome import Outcome, error_outcome, serialized

STREAM_SECONDS = 15        # the deadline of a whole Listen/Write stream
WAIT_SECONDS = 5           # the longest wait for one awaited stream message
TargetChangeType = fs.TargetChange.TargetChangeType


class Bidi:
    """One bidirectional stream (Listen or Write): requests sent through a queue, responses read
    by a thread; every wait bounded. The call itself starts on the reader thread (the GAPIC
    wrapper blocks until the first response), with a STREAM_SECONDS deadline."""

    _END = object()

    def __init__(self, method, metadata):
        self._outbox = queue.Queue()
        self._inbox = queue.Queue()
        self._closed = threading.Event()
        self._call = None
        self.responses = []           # everything received, for leak checks
        self.end = None               # an Outcome once the stream has ended
        self._reader = threading.Thread(target=self._read, args=(method, metadata), daemon=True)
        self._reader.start()

    def _requests(self):
        while not self._closed.is_set():
            try:
                request = self._outbox.get(timeout=0.2)
            except queue.Empty:
                continue
            if request is None:
                return
            yield request

    def _read(self, method, metadata):
        try:
            self._call = method(requests=self._requests(), metadata=metadata, timeout=STREAM_SECONDS, retry=None)
            if self._closed.is_set():
                self._call.cancel()
            for response in self._call:
                self._inbox.put(response)
            self._inbox.put(Outcome("OK"))
        except (exceptions.GoogleAPICallError, grpc.RpcError) as e:
            self._inbox.put(error_outcome(e))
        except Exception as e:          # noqa: BLE001 - reported to the test, never swallowed
            self._inbox.put(Outcome(type(e).__name__, str(e)))

    def send(self, request):
        self._outbox.put(request)

    def next(self, seconds=WAIT_SECONDS):
        """The next response; None if the stream has ended (see .end) or nothing came in time."""
        if self.end is not None:
            return None
        try:
            item = self._inbox.get(timeout=seconds)
        except queue.Empty:
            return None
        if isinstance(item, Outcome):
            self.end = item
            return None
        self.responses.append(item)
        return item

    def wait_for(self, predicate, seconds=WAIT_SECONDS):
        """The first response for which predicate holds, within `seconds`; None if the stream
        ends first or the time runs out. Responses passed over stay in .responses."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            response = self.next(left)
            if response is None:
                return None
            if predicate(response):
                return response

    def wait_end(self, seconds=WAIT_SECONDS):
        """The stream's end Outcome, reading (and keeping) what comes before; None if still open."""
        deadline = time.monotonic() + seconds
        while self.end is None and time.monotonic() < deadline:
            self.next(deadline - time.monotonic())
        return self.end

    def leaks(self, marker):
        return Outcome("", "", self.responses).leaks(marker) or (self.end is not None and self.end.leaks(marker))

    def kinds(self):
        """What arrived, briefly: target_change TYPE[ids] code / document_change / ..."""
        out = []
        for r in self.responses:
            kind = fs.ListenResponse.pb(r).WhichOneof("response_type") if isinstance(r, fs.ListenResponse) \
                else "write_response"
            if kind == "target_change":
                c = r.target_change
                out.append(f"{c.target_change_type.name}{list(c.target_ids)}"
                           + (f" cause={c.cause.code}" if c.cause.code else ""))
            else:
                out.append(kind)
        return out + ([f"end {self.end.code} {self.end.message!r}"] if self.end else [])

    def close(self):
        self._closed.set()
        self._outbox.put(None)
        if self._call is not None:
            self._call.cancel()
        self._reader.join(STREAM_SECONDS + 5)


def target_change(target_id, *types, code=None):
    """A predicate: a TargetChange of one of `types` naming `target_id` (and with cause `code`)."""
    def match(response):
        if fs.ListenResponse.pb(response).WhichOneof("response_type") != "target_change":
            return False
        c = response.target_change
        return (c.target_change_type in types and target_id in c.target_ids
                and (code is None or c.cause.code == code))
    return match


def document_change(target_id, marker):
    """A predicate: a DocumentChange for `target_id` whose document carries `marker`."""
    def match(response):
        if fs.ListenResponse.pb(response).WhichOneof("response_type") != "document_change":
            return False
        return target_id in response.document_change.target_ids and marker.encode() in serialized(response)
    return match
