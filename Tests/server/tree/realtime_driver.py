"""A client of the Realtime Database realtime protocol (version 5) frame by frame, for tests.

Responsible for: a WebSocket to `ember serve`'s tree port (`/.ws?v=5&ns=...`, websocket-client
from PyPI), the protocol's framing (a count frame, then the pieces, for messages over 16,384
characters; a count frame ahead of a long message received), requests numbered from 1 with their
responses, and the pushes received meanwhile kept in order. Every wait is bounded.

    c = Realtime(port, "ns1")
    hello = c.hello                                   # {"ts": ..., "v": "5", "h": ..., "s": ...}
    status, data = c.request("q", {"p": "/list", "h": ""})
    c.pushes                                          # [{"a": "d", "b": {"p": "/list", "d": None}}]
"""
import json
import time

import websocket

FRAME = 16384


class Realtime:
    def __init__(self, port, ns, timeout=10):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/.ws?v=5&ns={ns}", timeout=timeout)
        self.timeout = timeout
        self.next_r = 1
        self.pushes = []
        self.frames_received = []
        first = self.receive()
        assert first["t"] == "c" and first["d"]["t"] == "h", first
        self.hello = first["d"]["d"]

    def send_raw(self, text):
        self.ws.send(text)

    def send(self, message):
        text = json.dumps(message, separators=(",", ":"))
        if len(text) <= FRAME:
            self.ws.send(text)
            return
        pieces = [text[i:i + FRAME] for i in range(0, len(text), FRAME)]
        self.ws.send(str(len(pieces)))
        for p in pieces:
            self.ws.send(p)

    def receive(self, timeout=None):
        """The next message (a count frame is followed by its pieces)."""
        self.ws.settimeout(timeout or self.timeout)
        frame = self.ws.recv()
        self.frames_received.append(frame)
        if len(frame) <= 6 and frame.isdigit():
            n = int(frame)
            assert n > 0, "the server sent a count of 0"
            parts = []
            for _ in range(n):
                parts.append(self.ws.recv())
                self.frames_received.append(parts[-1])
            frame = "".join(parts)
        return json.loads(frame)

    def request(self, action, body, timeout=None):
        """(status, data) of one request; pushes received before the response are kept."""
        r = self.next_r
        self.next_r += 1
        self.send({"t": "d", "d": {"r": r, "a": action, "b": body}})
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no response to {action} {body}"
            m = self.receive(left)
            if m["t"] == "d" and m["d"].get("r") == r:
                return m["d"]["b"]["s"], m["d"]["b"].get("d")
            if m["t"] == "d" and "a" in m["d"]:
                self.pushes.append(m["d"])

    def push(self, timeout=None):
        """The next push (kept ones first)."""
        if self.pushes:
            return self.pushes.pop(0)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no push"
            m = self.receive(left)
            if m["t"] == "d" and "a" in m["d"]:
                return m["d"]

    def no_push(self, seconds=0.5):
        """True when nothing is pushed for `seconds`."""
        if self.pushes:
            return False
        try:
            self.receive(seconds)
            return False
        except websocket.WebSocketTimeoutException:
            return True

    def close(self):
        self.ws.close()

    def drop(self):
        """Ends the connection without a close frame (a lost peer)."""
        self.ws.sock.shutdown(2)
        self.ws.sock.close()
