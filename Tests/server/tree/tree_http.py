"""The tree-port helpers of the rules, priorities, parameters and realtime tests, over rtdb_http:
a request answered as (status, headers, parsed JSON or text), with an optional bearer token;
and an event stream with a token whose events come as (name, raw data text).

    status, headers, body = request(port, "GET", "/a.json?ns=x", token="owner")
    with EventStream(port, "/a.json?ns=x", token="owner") as s:
        name, data = s.next_event(timeout=5)      # ("put", '{"path":"/","data":null}')
        s.finished()                              # True once the server ended the stream
"""
import json
import time

import rtdb_http
from rtdb_http import NO_BODY, database_port  # noqa: F401  (re-exported for the tests)


def request(port, method, target, body=None, token=None, headers=None, timeout=10):
    """`target` is the path with its query string; a str body is sent as it is, anything else
    as JSON."""
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    data = NO_BODY if body is None else (body.encode() if isinstance(body, str) else body)
    with rtdb_http.Conn(port, timeout) as c:
        r = c.call(method, target, None, data, h)
    raw = r.body.decode()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw
    return r.status, r.headers, parsed


class EventStream(rtdb_http.EventStream):
    def __init__(self, port, target, token=None, timeout=10):
        super().__init__(port, target, None, timeout, headers={"Authorization": f"Bearer {token}"} if token else None)

    def next_event(self, timeout=10):
        """(name, data text) of the next event other than keep-alive."""
        deadline = time.monotonic() + timeout
        while True:
            ev = self._take_event()
            if ev is not None:
                if ev[0] != "keep-alive":
                    return ev
                continue
            self._recv(deadline, "an event")

    def finished(self, timeout=5):
        """True once the server ended the stream with no further event."""
        try:
            ev = self.next_event(timeout)
        except AssertionError:
            if self.ended:
                return True
            raise
        raise AssertionError(f"expected the end of the stream, got {ev}")
