"""The figures for the tree on `ember serve` (REST and streaming), loopback:

1. a REST PUT from one client -> the `put` event at another client's stream: p50 and p99;
2. 1,000 streams on one location, one write: the time until every stream has its event;
3. pushes per second (POST) over keep-alive connections, 4 client threads.

Responsible for: starting a release `ember serve` (its own process group, stopped by pid) three
ways: the memory store; the durable store (a SQLite file: a write is answered once it is in the
file); and the durable store under tree rules that read data on every request (the rules
engine's cost). It drives each with raw sockets (HTTP/1.1 keep-alive; SSE read by hand) and
prints each figure beside its target (bench/targets.json, tree_server.*).
Usage: bench_tree_server.py EMBER_BIN [--quick]
"""
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import target_value, verdict  # noqa: E402


# Rules that read the tree for every read and write (the streams' events each wait for a check).
RULES = """{"rules": {"$top": {
  ".read": "root.child('config/open').val() !== false",
  ".write": "root.child('config/open').val() !== false",
  "$child": {".validate": "newData.exists()"}
}}}"""


def start(binary, store):
    p = subprocess.Popen([binary, "serve", *store, "--port", "0", "--database-port", "0",
                          "--max-connections", "4000"],
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        m = re.search(r"database_port=(\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, int(m.group(1))
    p.kill()
    raise SystemExit("ember serve did not start")


class Client:
    """One keep-alive HTTP/1.1 connection."""
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def request(self, method, path, body=b""):
        self.s.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.s.recv(65536)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        n = int(re.search(rb"Content-Length: (\d+)", head, re.I).group(1)) if re.search(rb"Content-Length", head, re.I) else 0
        while len(self.buf) < n:
            self.buf += self.s.recv(65536)
        out, self.buf = self.buf[:n], self.buf[n:]
        return int(head.split(b" ")[1]), out


def stream(port, path):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    return s


def read_events(s, buf, count):
    """Reads until `count` more `data:` lines; returns (their JSON, rest of buffer)."""
    out = []
    while len(out) < count:
        while b"\n\n" not in buf:
            buf += s.recv(65536)
        ev, buf = buf.split(b"\n\n", 1)
        for line in ev.split(b"\n"):
            if line.startswith(b"data: ") and b"event: keep-alive" not in ev:
                out.append(json.loads(line[6:]))
    return out, buf


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def write_to_event(port, samples):
    s = stream(port, "/lat.json?ns=bench")
    _, buf = read_events(s, b"", 1)
    c = Client(port)
    lat = []
    for i in range(samples):
        t0 = time.perf_counter()
        c.request("PUT", "/lat/v.json?ns=bench&print=silent", str(i).encode())
        evs, buf = read_events(s, buf, 1)
        lat.append((time.perf_counter() - t0) * 1e6)
        assert evs[0]["data"] == i, evs
    s.close()
    return statistics.median(lat), pct(lat, 0.99)


def fanout(port, n):
    socks = [stream(port, "/fan.json?ns=bench") for _ in range(n)]
    bufs = [read_events(s, b"", 1)[1] for s in socks]
    c = Client(port)
    t0 = time.perf_counter()
    c.request("PUT", "/fan/v.json?ns=bench&print=silent", b"1")
    for s, b in zip(socks, bufs):
        read_events(s, b, 1)
    elapsed = (time.perf_counter() - t0) * 1000
    for s in socks:
        s.close()
    return elapsed


def pushes(port, seconds, threads=4):
    counts = [0] * threads
    stop = time.monotonic() + seconds

    def run(k):
        c = Client(port)
        while time.monotonic() < stop:
            status, _ = c.request("POST", "/pushes.json?ns=bench", b'{"t":"hi"}')
            assert status == 200
            counts[k] += 1
    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / (time.monotonic() - t0)


def run(binary, store, quick):
    p, port = start(binary, store)
    try:
        write_to_event(port, 200)                        # warm-up
        p50, p99 = write_to_event(port, 300 if quick else 2000)
        fan = fanout(port, 200 if quick else 1000)
        rate = pushes(port, 2 if quick else 5)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    return p50, p99, fan, rate


def main():
    import tempfile
    binary = sys.argv[1]
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory(prefix="ember-bench-tree-") as d:
        with open(os.path.join(d, "rules.json"), "w") as f:
            f.write(RULES)
        configs = [("memory store", ["--memory"]),
                   ("durable store (SQLite file)", ["--path", os.path.join(d, "a.ember")]),
                   ("durable store + data-reading rules", ["--path", os.path.join(d, "b.ember"),
                                                           "--database-rules", os.path.join(d, "rules.json")])]
        results = [(name, run(binary, store, quick)) for name, store in configs]
    n = 200 if quick else 1000
    for name, (p50, p99, fan, rate) in results:
        print(f"\n## the tree on ember serve, loopback, release build: {name}")
        print(f"{'figure':<52} {'measured':>12} {'target':>12}  verdict")
        rows = [("REST PUT -> SSE event at another client, p50 (µs)", p50, "tree_server.put_to_event_p50_us"),
                ("REST PUT -> SSE event at another client, p99 (µs)", p99, "tree_server.put_to_event_p99_us"),
                (f"{n} streams, one write: all delivered (ms)", fan, "tree_server.fanout_1000_ms"),
                ("pushes/s, 4 keep-alive clients", rate, "tree_server.pushes_per_s")]
        for label, v, fig in rows:
            print(f"{label:<52} {v:>12.1f} {target_value(fig):>12.1f}  {verdict(fig, v)}")


if __name__ == "__main__":
    main()
