"""A gRPC client over a raw HTTP/2 connection (the `h2` package), for what the official clients
never do: stop reading a stream at the TCP level (never sending WINDOW_UPDATE, so the server's
flow control stops it), or connect and stay silent.

Responsible for: one connection and its calls: `start(method, request)` sends a call's headers
and one framed request; `read_until_end(stream_id, seconds)` then reads, returning the grpc-status
of its trailers (or None when it did not end in time). Every socket wait is bounded.

    c = RawGrpc("127.0.0.1:8080")
    sid = c.start("/google.firestore.v1.Firestore/Listen", listen_request_bytes)
    ...                                  # not reading: the server stalls on flow control
    assert c.read_until_end(sid, 10) == "8"
"""
import socket
import struct
import time

import h2.config
import h2.connection
import h2.events


class RawGrpc:
    def __init__(self, host, timeout=5):
        address, port = host.rsplit(":", 1)
        self.sock = socket.create_connection((address, int(port)), timeout=timeout)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.host = host
        self.trailers = {}
        self.ended = set()
        self.received = {}

    def start(self, path, request_bytes, end_stream=False):
        """Starts a call with one request; `end_stream` half-closes it (unary and server-streaming
        calls are served once the request stream ends)."""
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", path),
                                     (":authority", self.host), ("content-type", "application/grpc"), ("te", "trailers")])
        self.conn.send_data(sid, struct.pack(">?I", False, len(request_bytes)) + request_bytes, end_stream=end_stream)
        self.sock.sendall(self.conn.data_to_send())
        return sid

    def read_until_end(self, sid, seconds):
        """Reads (acknowledging data, so the server may go on) until `sid` ends; its grpc-status."""
        deadline = time.monotonic() + seconds
        while sid not in self.ended and time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                break
            if not data:
                self.ended.add(sid)
                break
            for e in self.conn.receive_data(data):
                if isinstance(e, h2.events.DataReceived):
                    self.received[e.stream_id] = self.received.get(e.stream_id, 0) + len(e.data)
                    self.conn.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
                elif isinstance(e, h2.events.TrailersReceived):
                    self.trailers[e.stream_id] = dict(e.headers)
                elif isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)):
                    self.ended.add(e.stream_id)
                elif isinstance(e, h2.events.ConnectionTerminated):
                    self.ended.add(sid)
            out = self.conn.data_to_send()
            if out:
                self.sock.sendall(out)
        return self.trailers.get(sid, {}).get("grpc-status") if sid in self.ended else None

    def close(self):
        self.sock.close()
