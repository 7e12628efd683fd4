"""Issue 11's benchmarks: `ember serve` and the Cloud Firestore emulator measured side by side
in one run, through google-cloud-firestore (and its gRPC layer for the fan-out and memory figures).

  1. write -> listener callback, a document listener in the same process: p50, p99
  2. 1,000 concurrent listeners (1,000 Listen streams, one target each, on one document): the time
     from a write to the last stream receiving it
  3. commits of 500-document batches: documents/s (1 client thread, then 4)
  4. server memory per idle listen target: server RSS before and after 10,000 targets

Usage: bench_server.py EMBER_BIN   (ember's release binary; the emulator comes from gcloud)
"""
import os
import queue
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "server"))
import servers  # noqa: E402

import grpc  # noqa: E402
from google.cloud.firestore_v1.services.firestore.transports.grpc import FirestoreGrpcTransport  # noqa: E402
from google.cloud.firestore_v1.types import firestore as fs_types, write as write_types, document as doc_types  # noqa: E402

PROJECT = "demo-ember"
DB = f"projects/{PROJECT}/databases/(default)"
ROOT = DB + "/documents"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(host, samples=300, warmup=30):
    db = servers.client(host)
    ref = db.collection("bench-lat").document("d")
    ref.set({"i": -1})
    seen = {}
    cond = threading.Condition()

    def on(snaps, changes, read_time):
        t = time.perf_counter()
        for s in snaps:
            if s.exists:
                with cond:
                    seen.setdefault(s.get("i"), t)
                    cond.notify_all()

    w = ref.on_snapshot(on)
    time.sleep(0.5)
    out = []
    for i in range(warmup + samples):
        t0 = time.perf_counter()
        ref.set({"i": i})
        with cond:
            cond.wait_for(lambda: i in seen, timeout=10)
        if i in seen and i >= warmup:
            out.append((seen[i] - t0) * 1e3)
        time.sleep(0.002)
    w.unsubscribe()
    db.close()
    return pct(out, 50), pct(out, 99), len(out)


def channel(host):
    return grpc.insecure_channel(host, options=[("grpc.max_concurrent_streams", 100000)])


def listen_stream(transport, targets, on_response, stop):
    """A Listen stream adding `targets` (Target messages); calls on_response for each response."""
    reqs = queue.Queue()
    for t in targets:
        reqs.put(fs_types.ListenRequest(database=DB, add_target=t))

    def gen():
        while True:
            r = reqs.get()
            if r is None:
                return
            yield r

    call = transport.listen(gen())

    def run():
        try:
            for resp in call:
                on_response(resp)
        except grpc.RpcError:
            pass
    th = threading.Thread(target=run, daemon=True)
    th.start()

    def close():
        reqs.put(None)
        call.cancel()
    stop.append(close)


def fanout(host, n=1000):
    transport = FirestoreGrpcTransport(channel=channel(host))
    name = ROOT + "/bench-fan/doc"
    db = servers.client(host)
    db.document("bench-fan/doc").set({"v": 0})
    lock = threading.Lock()
    current = 0
    arrivals = {}
    all_current = threading.Event()
    stops = []
    marker = {"v": None}

    def make(i):
        def on(resp):
            nonlocal current
            which = resp._pb.WhichOneof("response_type")
            if which == "target_change" and resp.target_change.target_change_type == 3:   # CURRENT
                with lock:
                    current += 1
                    if current == n:
                        all_current.set()
            elif which == "document_change" and marker["v"] is not None:
                v = resp.document_change.document.fields["v"].integer_value
                if v == marker["v"]:
                    with lock:
                        arrivals.setdefault(i, time.perf_counter())
        return on

    for i in range(n):
        t = doc_types and fs_types.Target(target_id=1, documents=fs_types.Target.DocumentsTarget(documents=[name]))
        listen_stream(transport, [t], make(i), stops)
    ok = all_current.wait(120)
    results = []
    for round_ in range(1, 6):
        arrivals.clear()
        marker["v"] = round_
        t0 = time.perf_counter()
        db.document("bench-fan/doc").set({"v": round_})
        deadline = time.time() + 30
        while len(arrivals) < n and time.time() < deadline:
            time.sleep(0.001)
        if len(arrivals) == n:
            results.append((max(arrivals.values()) - t0) * 1e3)
        time.sleep(0.3)
    for s in stops:
        s()
    db.close()
    return (statistics.median(results) if results else None), ok, len(results)


def batches(host, threads=1, per_thread=10, size=500):
    db = servers.client(host)
    col = db.collection(f"bench-batch-{threads}")

    def work(k):
        for b in range(per_thread):
            batch = db.batch()
            for j in range(size):
                batch.set(col.document(f"t{k}-b{b}-d{j}"), {"i": j, "name": "doc", "tag": b})
            batch.commit()
    # warm-up
    batch = db.batch()
    batch.set(col.document("warm"), {"i": 0})
    batch.commit()
    t0 = time.perf_counter()
    ths = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    dt = time.perf_counter() - t0
    db.close()
    return threads * per_thread * size / dt


def rss_kb(pids):
    total = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def server_pids(guarded):
    """The server's processes: the command and its descendants (the emulator is a JVM under gcloud)."""
    out, frontier = [], [guarded.pid]
    while frontier:
        p = frontier.pop()
        out.append(p)
        try:
            children = open(f"/proc/{p}/task/{p}/children").read().split()
        except OSError:
            children = []
        frontier += [int(c) for c in children]
    return out


def memory_per_target(host, guarded, n=10_000, streams=10):
    transport = FirestoreGrpcTransport(channel=channel(host))
    pids = server_pids(guarded)
    # Settle the server first (a few streams opened and closed).
    before = rss_kb(pids)
    lock = threading.Lock()
    current = 0
    done = threading.Event()
    stops = []

    def on(resp):
        nonlocal current
        if resp._pb.WhichOneof("response_type") == "target_change" and resp.target_change.target_change_type == 3:
            with lock:
                current += 1
                if current == n:
                    done.set()
    per = n // streams
    for s in range(streams):
        targets = [fs_types.Target(target_id=k + 1, documents=fs_types.Target.DocumentsTarget(documents=[f"{ROOT}/bench-idle/s{s}-d{k}"]))
                   for k in range(per)]
        listen_stream(transport, targets, on, stops)
    ok = done.wait(180)
    time.sleep(1.0)
    after = rss_kb(pids)
    for s in stops:
        s()
    return (after - before) * 1024 / n, ok


def measure(label, start):
    with tempfile.TemporaryDirectory() as tmp:
        g = start(tmp)
        try:
            host = g.host
            r = {}
            r["lat"] = latency(host)
            r["batch1"] = batches(host, 1)
            r["batch4"] = batches(host, 4, per_thread=5)
            r["fan"] = fanout(host)
            r["mem"] = memory_per_target(host, g)
            return r
        finally:
            g.stop()


def main():
    if len(sys.argv) > 1:
        servers.EMBER_BIN = sys.argv[1]
    ember = measure("ember", lambda tmp: servers.start_ember(tmp))
    emu = measure("emulator", servers.start_emulator) if servers.emulator_available() else None

    def row(name, target, e, m, fmt, better_low=True):
        es = fmt(e) if e is not None else "n/a"
        ms = fmt(m) if m is not None else "n/a"
        ratio = ""
        if e and m:
            ratio = f"{(m / e) if better_low else (e / m):.1f}x"
        print(f"| {name} | {target} | {es} | {ms} | {ratio} |")
    print("\n## ember serve vs the Firestore emulator (issue 11; google-cloud-firestore on loopback, 2 cores)\n")
    print("| figure | target | ember serve | emulator | ember's advantage |")
    print("|---|---|---|---|---|")
    g = lambda r, k: r[k] if r else None  # noqa: E731
    row("write -> listener p50 (ms)", "<= 1", g(ember, "lat")[0], g(emu, "lat")[0] if emu else None, lambda x: f"{x:.2f}")
    row("write -> listener p99 (ms)", ">= 10x lower than the emulator", g(ember, "lat")[1], g(emu, "lat")[1] if emu else None, lambda x: f"{x:.2f}")
    row("one write reaches 1,000 listeners (ms, median of 5)", "<= 50", ember["fan"][0], emu["fan"][0] if emu else None, lambda x: f"{x:.1f}")
    row("500-document batches, 1 thread (docs/s)", ">= 50,000", ember["batch1"], g(emu, "batch1"), lambda x: f"{x:,.0f}", better_low=False)
    row("500-document batches, 4 threads (docs/s)", ">= 50,000", ember["batch4"], g(emu, "batch4"), lambda x: f"{x:,.0f}", better_low=False)
    row("server memory per idle listen target (bytes)", "<= 4,096", ember["mem"][0], emu["mem"][0] if emu else None, lambda x: f"{x:,.0f}")
    print(f"\n(latency samples: ember {ember['lat'][2]}, emulator {emu['lat'][2] if emu else 'n/a'}; "
          f"fan-out rounds complete: ember {ember['fan'][2]}/5, emulator {emu['fan'][2] if emu else 'n/a'}/5; "
          f"all targets current: ember {ember['mem'][1]}, emulator {emu['mem'][1] if emu else 'n/a'})")


if __name__ == "__main__":
    main()
