"""HTTP helpers for the tree-port tests: one request, a raw Server-Sent Events reader, and the
port a server's start line names.

Responsible for: requests over http.client with a bounded timeout, answered as
(status, headers, parsed JSON or raw text); an SSE stream read over a raw socket, event by
event (name, data text), each wait bounded.

    status, headers, body = request(port, "GET", "/a.json?ns=x", token="owner")
    with EventStream(port, "/a.json?ns=x", token="owner") as s:
        name, data = s.next_event(timeout=5)      # ("put", '{"path":"/","data":null}')
"""
import http.client
import json
import re
import socket
import time


def database_port(srv):
    m = re.search(r"database_port=(\d+)", srv.log_tail(20000))
    assert m, srv.log_tail()
    return int(m.group(1))


def request(port, method, target, body=None, token=None, headers=None, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        conn.request(method, target, body=data, headers=h)
        r = conn.getresponse()
        raw = r.read().decode()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        return r.status, {k.lower(): v for k, v in r.getheaders()}, parsed
    finally:
        conn.close()


class EventStream:
    """A streaming GET over a raw socket: the status line, then events one by one."""

    def __init__(self, port, target, token=None, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
        self.sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n{auth}\r\n".encode())
        self.buffer = b""
        head = self._read_until(b"\r\n\r\n", timeout)
        self.status = int(head.split(b" ", 2)[1])
        self.head = head.decode()
        self.chunked = b"transfer-encoding: chunked" in head.lower()
        self.text = ""
        self.closed = False

    def _read_until(self, marker, timeout):
        deadline = time.monotonic() + timeout
        while marker not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {marker!r} within {timeout} s: {self.buffer[:300]!r}")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError(f"closed before {marker!r}: {self.buffer[:300]!r}")
            self.buffer += chunk
        i = self.buffer.index(marker)
        out, self.buffer = self.buffer[:i], self.buffer[i + len(marker):]
        return out

    def _more_text(self, timeout):
        if self.chunked:
            size = int(self._read_until(b"\r\n", timeout).split(b";")[0], 16)
            if size == 0:
                self.closed = True
                raise EOFError("the stream ended")
            while len(self.buffer) < size + 2:
                self.sock.settimeout(timeout)
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise EOFError("closed inside a chunk")
                self.buffer += chunk
            self.text += self.buffer[:size].decode()
            self.buffer = self.buffer[size + 2:]
        else:
            self.sock.settimeout(timeout)
            chunk = self.buffer or self.sock.recv(65536)
            self.buffer = b""
            if not chunk:
                self.closed = True
                raise EOFError("the stream ended")
            self.text += chunk.decode()

    def next_event(self, timeout=10):
        """(name, data) of the next event other than keep-alive."""
        deadline = time.monotonic() + timeout
        while True:
            while "\n\n" not in self.text:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no event within {timeout} s (have {self.text!r})")
                self._more_text(left)
            block, self.text = self.text.split("\n\n", 1)
            name, data = None, []
            for line in block.split("\n"):
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
            if name != "keep-alive":
                return name, "\n".join(data)

    def ended(self, timeout=5):
        """True once the server closed the stream (no further event)."""
        try:
            ev = self.next_event(timeout)
            raise AssertionError(f"expected the end of the stream, got {ev}")
        except EOFError:
            return True

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()
