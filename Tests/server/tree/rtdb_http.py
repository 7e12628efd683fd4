"""Plain HTTP/1.1 and Server-Sent Events clients for the tree's port of `ember serve` (no SDK).

Responsible for: finding the tree's port in a server's start line; one request on a connection
of its own (`call`) or on a kept-alive one (`Conn`), with JSON bodies and the Realtime Database's
query parameters percent-encoded; and an event stream read over a raw socket (`EventStream`:
the response head, chunked framing undone, `event:`/`data:` records), every read bounded.

    port = database_port(srv)
    r = call(port, "PUT", "/a.json", {"ns": "t1"}, body={"x": 1})    # r.status, r.headers, r.json
    with EventStream(port, "/a.json", {"ns": "t1"}) as s:
        assert s.next() == ("put", "/", {"x": 1})
"""
import http.client
import json
import re
import socket
import time
import urllib.parse

HOST = "127.0.0.1"
SECONDS = 10

# No body at all (as opposed to the JSON text "null").
NO_BODY = object()


def database_port(srv, seconds=SECONDS):
    """The tree's port from `srv`'s start line (`database_port=<n>`), waiting up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        m = re.search(r"database_port=(\d+)", srv.log_tail(200000))
        if m:
            return int(m.group(1))
        assert time.monotonic() < deadline, f"no database_port in the start line:\n{srv.log_tail()}"
        time.sleep(0.1)


def target(path, params=None):
    """`path` with `params` (a dict, in order) as a query string, each value percent-encoded."""
    if not params:
        return path
    return path + "?" + "&".join(f"{urllib.parse.quote(k, safe='')}={urllib.parse.quote(str(v), safe='')}"
                                 for k, v in params.items())


def encode(body):
    if body is NO_BODY:
        return None
    if isinstance(body, bytes):
        return body
    return json.dumps(body).encode()


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # names lower-cased
        self.body = body

    @property
    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"<{self.status} {self.headers} {self.body[:300]!r}>"


class Conn:
    """One kept-alive HTTP/1.1 connection (http.client), never reopened behind the caller's back:
    `socket_id` tells whether two requests went over the same socket."""

    def __init__(self, port, timeout=SECONDS):
        self.c = http.client.HTTPConnection(HOST, port, timeout=timeout)
        self.c.auto_open = 0
        self.c.connect()

    @property
    def socket_id(self):
        return id(self.c.sock) if self.c.sock else None

    def call(self, method, path, params=None, body=NO_BODY, headers=None):
        data = encode(body)
        h = {"Host": f"{HOST}"}
        if data is not None:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        self.c.request(method, target(path, params), body=data, headers=h)
        r = self.c.getresponse()
        raw = r.read()
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, raw)

    def close(self):
        self.c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def call(port, method, path, params=None, body=NO_BODY, headers=None, timeout=SECONDS):
    """One request on a connection of its own."""
    with Conn(port, timeout) as c:
        return c.call(method, path, params, body, headers)


def raw_exchange(port, data, timeout=SECONDS):
    """Sends `data` (bytes) and reads until the server closes or `timeout` passes; the bytes read."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out


class EventStream:
    """A streaming GET (`Accept: text/event-stream`) over a raw socket: `status` and `headers` of
    the response head, then `next()` for each event as (name, data) with data parsed as JSON
    (keep-alives skipped unless asked for)."""

    def __init__(self, port, path, params=None, timeout=SECONDS, headers=None):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.raw = b""            # bytes read, not yet de-chunked
        self.text = b""           # the body so far, de-chunked, not yet split into events
        self.ended = False
        self.chunked = None       # unknown until the head is read
        try:
            self.sock.sendall((f"GET {target(path, params)} HTTP/1.1\r\nHost: {HOST}\r\n"
                               f"Accept: text/event-stream\r\nCache-Control: no-cache\r\n{extra}\r\n").encode())
            deadline = time.monotonic() + timeout
            while b"\r\n\r\n" not in self.raw:
                self._recv(deadline, "the response head")
        except BaseException:
            self.sock.close()
            raise
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        self._dechunk()

    def body(self, timeout=SECONDS):
        """A plain (refused) answer's whole body: its Content-Length bytes."""
        n = int(self.headers.get("content-length", "0"))
        deadline = time.monotonic() + timeout
        while len(self.text) < n:
            self._recv(deadline, "the body")
        return self.text[:n]

    def raw_record(self, timeout=SECONDS):
        """The next event record's bytes as sent (up to its blank line), not parsed."""
        deadline = time.monotonic() + timeout
        while b"\n\n" not in self.text:
            self._recv(deadline, "an event")
        record, self.text = self.text.split(b"\n\n", 1)
        return record

    def _recv(self, deadline, what):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out waiting for {what}; body so far: {self.text[-2000:]!r}")
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            raise AssertionError(f"timed out waiting for {what}; body so far: {self.text[-2000:]!r}") from None
        if not chunk:
            self.ended = True
            raise AssertionError(f"the server closed the stream while waiting for {what}; body: {self.text[-2000:]!r}")
        self.raw += chunk
        self._dechunk()

    def _dechunk(self):
        if self.chunked is None:
            return
        if not self.chunked:
            self.text += self.raw
            self.raw = b""
            return
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0], 16)
            if size == 0:
                self.ended = True
                self.raw = b""
                return
            if len(self.raw) < line_end + 2 + size + 2:
                return
            self.text += self.raw[line_end + 2:line_end + 2 + size]
            self.raw = self.raw[line_end + 2 + size + 2:]

    def _take_event(self):
        """The next whole event record in the body read so far, or None."""
        self.text = self.text.replace(b"\r\n", b"\n")
        if b"\n\n" not in self.text:
            return None
        record, self.text = self.text.split(b"\n\n", 1)
        name, data = None, []
        for line in record.decode().split("\n"):
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        return name, "\n".join(data)

    def next(self, timeout=SECONDS, keep_alives=False):
        """The next event as (name, JSON data), within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            ev = self._take_event()
            if ev is not None:
                name, data = ev
                if name == "keep-alive" and not keep_alives:
                    continue
                return name, json.loads(data)
            self._recv(deadline, "an event")

    def put_or_patch(self, timeout=SECONDS):
        """The next event as (name, path, data)."""
        name, d = self.next(timeout)
        assert isinstance(d, dict) and set(d) == {"path", "data"}, (name, d)
        return name, d["path"], d["data"]

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
