"""The server's benchmarks: `ember serve` and the Cloud Firestore emulator measured in one run, with
the same clients (google-cloud-firestore, and its gRPC layer where the Python client's own costs
would hide the server's). See README.md beside this file for the method and results.

  1. write -> listener callback: a document listener (on_snapshot) and the writes in one process
  2. one write reaches 1,000 concurrent listeners (raw Listen streams in several processes;
     also 10 processes x 100 on_snapshot listeners)
  3. commits of 500-document batches: documents/s (client batch.commit(); raw gRPC commits)
  4. server memory per idle listen target (RSS before/after 10,000 targets)

Each judged figure's target is in bench/targets.json (server.*).

Usage: bench_server.py [EMBER_BIN] [--quick] [--only ember|emulator] [--json FILE]
   (EMBER_BIN: ember's release binary, default .build-bench/release/ember; the emulator is
    gcloud's, skipped with a note when it is not installed)

Every server is started in its own process group under Tests/server/servers.py's watchdog and
stopped by its group id; the worker processes read their stdin and exit at its end, so nothing
outlives the run. Every wait is bounded.
"""
import argparse
import asyncio
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "server"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import servers  # noqa: E402
from benchlib import finish, log, markdown_table, pct, target_text, verdict  # noqa: E402

import grpc  # noqa: E402
from google.cloud.firestore_v1.types import firestore as fs_types  # noqa: E402

PROJECT = "demo-ember"
DB = f"projects/{PROJECT}/databases/(default)"
ROOT = DB + "/documents"
LISTEN = "/google.firestore.v1.Firestore/Listen"
COMMIT = "/google.firestore.v1.Firestore/Commit"
MD = (("authorization", "Bearer owner"), ("google-cloud-resource-prefix", DB))
# Separate TCP connections per channel (grpc shares one per target by default).
CH_OPTS = [("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", 64 << 20),
           ("grpc.max_send_message_length", 64 << 20)]
ListenRequest = fs_types.ListenRequest.pb()
ListenResponse = fs_types.ListenResponse.pb()
CommitRequest = fs_types.CommitRequest.pb()
CURRENT, NO_CHANGE = 3, 0
PY = sys.executable


def now():
    """CLOCK_MONOTONIC: one clock for every process on the machine."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def doc_target(tid, name):
    return ListenRequest(database=DB, add_target={"target_id": tid, "documents": {"documents": [name]}})


def query_target(tid, collection):
    return ListenRequest(database=DB, add_target={"target_id": tid, "query": {
        "parent": ROOT, "structured_query": {"from_": [{"collection_id": collection}]}}})


def commit_bytes(names_values):
    """A serialized CommitRequest setting each (name, fields dict of ints/strings)."""
    req = CommitRequest(database=DB)
    for name, fields in names_values:
        w = req.writes.add()
        w.update.name = name
        for k, v in fields.items():
            if isinstance(v, int):
                w.update.fields[k].integer_value = v
            else:
                w.update.fields[k].string_value = v
    return req.SerializeToString()


# ------------------------------------------------------------------ listen streams (grpc.aio)

class Streams:
    """Raw Listen streams on `channels` connections; every response goes to on_msg(stream, t, bytes)
    with its arrival time, taken before it is parsed."""

    def __init__(self, host, channels):
        self.chans = [grpc.aio.insecure_channel(host, options=CH_OPTS) for _ in range(channels)]
        self.calls, self.tasks = [], []

    async def open(self, requests, on_msg):
        i = len(self.calls)
        call = self.chans[i % len(self.chans)].stream_stream(LISTEN)(metadata=MD)
        self.calls.append(call)
        for r in requests:
            await call.write(r.SerializeToString())

        async def read():
            try:
                while True:
                    m = await call.read()
                    if m is grpc.aio.EOF:
                        return
                    on_msg(i, now(), m)
            except (grpc.aio.AioRpcError, asyncio.CancelledError):
                pass
        self.tasks.append(asyncio.ensure_future(read()))

    async def close(self, seconds=20):
        # Half-close every stream and read it to its end: cancelling a thousand streams at once
        # would send a thousand RST_STREAMs, which HTTP/2 servers treat as a reset flood.
        for call in self.calls:
            try:
                await call.done_writing()
            except (grpc.aio.AioRpcError, asyncio.CancelledError):
                pass
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=seconds)
        for ch in self.chans:
            await ch.close()
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def stdin_eof_exits(loop, stop):
    """A worker ends when its parent closes its stdin (or dies); lines are handed to the loop."""
    def run():
        for line in sys.stdin:
            loop.call_soon_threadsafe(stop.put_nowait, line.strip())
        loop.call_soon_threadsafe(stop.put_nowait, None)
        time.sleep(10)
        os._exit(0)
    threading.Thread(target=run, daemon=True).start()


async def worker_fanout(host, n, channels, doc):
    """N streams, one document target each; prints READY once all are CURRENT, then for each value
    v of field "v" that reached all N streams: DONE v and the N arrival times."""
    loop = asyncio.get_running_loop()
    inbox = asyncio.Queue()
    stdin_eof_exits(loop, inbox)
    current, arrivals = set(), {}

    def on(i, t, m):
        r = ListenResponse.FromString(m)
        which = r.WhichOneof("response_type")
        if which == "target_change" and r.target_change.target_change_type == CURRENT:
            if i not in current:
                current.add(i)
                if len(current) == n:
                    print("READY", flush=True)
        elif which == "document_change":
            v = r.document_change.document.fields["v"].integer_value
            got = arrivals.setdefault(v, {})
            if i not in got:
                got[i] = t
                if len(got) == n:
                    print(f"DONE {v} " + " ".join(repr(x) for x in got.values()), flush=True)
    s = Streams(host, channels)
    for k in range(n):
        await s.open([doc_target(1, doc)], on)
    while await inbox.get() is not None:
        pass
    await s.close()


def worker_snapshot(host, n, doc):
    """N google-cloud-firestore document listeners (on_snapshot) on one client; READY, DONE as above."""
    db = servers.client(host)
    lock = threading.Lock()
    initial, arrivals = set(), {}

    def make(k):
        def on(snaps, changes, read_time):
            t = now()
            for s in snaps:
                if not s.exists:
                    continue
                v = s.get("v")
                with lock:
                    if k not in initial:
                        initial.add(k)
                        if len(initial) == n:
                            print("READY", flush=True)
                    got = arrivals.setdefault(v, {})
                    if k not in got:
                        got[k] = t
                        if len(got) == n:
                            print(f"DONE {v} " + " ".join(repr(x) for x in got.values()), flush=True)
        return on
    ref = db.document(doc)
    watches = [ref.on_snapshot(make(k)) for k in range(n)]
    sys.stdin.read()
    for w in watches:
        w.unsubscribe()
    db.close()


def worker_batch(host, batches, size, prefix):
    """google-cloud-firestore batch.commit() of `size` sets, `batches` times, once GO is read."""
    db = servers.client(host)
    col = db.collection(prefix)
    b = db.batch()
    b.set(col.document("warm"), {"i": 0})
    b.commit()
    print("READY", flush=True)
    if sys.stdin.readline().strip() != "GO":
        return
    t0 = now()
    for k in range(batches):
        b = db.batch()
        for j in range(size):
            b.set(col.document(f"b{k}-d{j}"), {"i": j, "name": "doc", "tag": k})
        b.commit()
    print(f"DONE {t0!r} {now()!r}", flush=True)
    sys.stdin.read()
    db.close()


class Workers:
    """Worker processes (this script with --worker ...): their stdout lines in one queue."""

    def __init__(self, args_list):
        self.q = queue.Queue()
        self.procs = []
        for args in args_list:
            p = subprocess.Popen([PY, os.path.abspath(__file__), "--worker", *map(str, args)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
            self.procs.append(p)
            threading.Thread(target=self._pump, args=(len(self.procs) - 1, p), daemon=True).start()

    def _pump(self, k, p):
        for line in p.stdout:
            self.q.put((k, line.split()))
        self.q.put((k, ["EXIT"]))

    def expect(self, word, count, seconds, pick=None):
        """The next `count` lines starting with `word` (the workers' lists), or None at the time bound."""
        out, deadline = [], time.monotonic() + seconds
        while len(out) < count:
            try:
                k, parts = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if parts and parts[0] == "EXIT":
                log(f"  worker {k} exited early (status {self.procs[k].poll()})")
                return None
            if parts and parts[0] == word and (pick is None or pick(parts)):
                out.append(parts)
        return out

    def send(self, line):
        for p in self.procs:
            try:
                p.stdin.write(line + "\n")
                p.stdin.flush()
            except OSError:
                pass

    def stop(self):
        for p in self.procs:
            try:
                p.stdin.close()
            except OSError:
                pass
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ------------------------------------------------------------------ figure 1: write -> callback

def fig1_latency(host, samples, warmup):
    """doc_ref.set() -> that write's on_snapshot callback, one client, same process."""
    db = servers.client(host)
    ref = db.collection("bench-lat").document("d")
    ref.set({"i": -1})
    seen, cond = {}, threading.Condition()

    def on(snaps, changes, read_time):
        t = now()
        for s in snaps:
            if s.exists:
                with cond:
                    seen.setdefault(s.get("i"), t)
                    cond.notify_all()
    watch = ref.on_snapshot(on)
    with cond:
        cond.wait_for(lambda: -1 in seen, timeout=30)
    lat, rtt, lost = [], [], 0
    for i in range(warmup + samples):
        t0 = now()
        ref.set({"i": i})
        t1 = now()
        with cond:
            ok = cond.wait_for(lambda: i in seen, timeout=10)
        if not ok:
            lost += 1
        elif i >= warmup:
            lat.append((seen[i] - t0) * 1e3)
            rtt.append((t1 - t0) * 1e3)
        time.sleep(0.003)
    watch.unsubscribe()
    db.close()
    return {"p50": pct(lat, 50), "p99": pct(lat, 99), "max": max(lat) if lat else None, "n": len(lat),
            "lost": lost, "set_p50": pct(rtt, 50), "set_p99": pct(rtt, 99)}


def fig1_raw(host, samples, warmup):
    """The same through raw gRPC: a Commit, then the document_change and the following global
    NO_CHANGE (the snapshot boundary a client waits for) on one Listen stream."""
    async def run():
        name = ROOT + "/bench-rawlat/d"
        ch = grpc.aio.insecure_channel(host, options=CH_OPTS)
        commit = ch.unary_unary(COMMIT)
        await commit(commit_bytes([(name, {"i": -1})]), metadata=MD, timeout=30)
        state = {"want": None, "doc": None, "nc": None, "current": False}
        ev = asyncio.Event()

        def on(_, t, m):
            r = ListenResponse.FromString(m)
            which = r.WhichOneof("response_type")
            if which == "document_change":
                if r.document_change.document.fields["i"].integer_value == state["want"] and state["doc"] is None:
                    state["doc"] = t
            elif which == "target_change":
                tc = r.target_change
                if tc.target_change_type == CURRENT:
                    state["current"] = True
                    ev.set()
                if tc.target_change_type == NO_CHANGE and not tc.target_ids and state["doc"] is not None \
                        and state["nc"] is None:
                    state["nc"] = t
                    ev.set()
        s = Streams(host, 1)
        await s.open([doc_target(1, name)], on)
        await asyncio.wait_for(ev.wait(), 30)
        await asyncio.sleep(0.2)
        doc, nc, rtt, lost = [], [], [], 0
        for i in range(warmup + samples):
            ev.clear()
            state.update(want=i, doc=None, nc=None)
            body = commit_bytes([(name, {"i": i})])
            t0 = now()
            await commit(body, metadata=MD, timeout=30)
            t1 = now()
            try:
                await asyncio.wait_for(ev.wait(), 10)
            except asyncio.TimeoutError:
                lost += 1
                continue
            if i >= warmup:
                doc.append((state["doc"] - t0) * 1e3)
                nc.append((state["nc"] - t0) * 1e3)
                rtt.append((t1 - t0) * 1e3)
            await asyncio.sleep(0.003)
        await s.close()
        await ch.close()
        return {"doc_p50": pct(doc, 50), "doc_p99": pct(doc, 99), "nc_p50": pct(nc, 50), "nc_p99": pct(nc, 99),
                "commit_p50": pct(rtt, 50), "commit_p99": pct(rtt, 99), "n": len(doc), "lost": lost}
    return asyncio.run(run())


def rpc_floor(host, n):
    """A trivial unary RPC (GetDocument of one small document), for the per-call cost under the
    figures above."""
    ch = grpc.insecure_channel(host, options=CH_OPTS)
    name = ROOT + "/bench-rpc/d"
    ch.unary_unary(COMMIT)(commit_bytes([(name, {"i": 1})]), metadata=MD, timeout=30)
    get = ch.unary_unary("/google.firestore.v1.Firestore/GetDocument")
    body = fs_types.GetDocumentRequest.pb()(name=name).SerializeToString()
    out = []
    for i in range(n + 100):
        t0 = now()
        get(body, metadata=MD, timeout=30)
        if i >= 100:
            out.append((now() - t0) * 1e3)
    ch.close()
    return {"p50": pct(out, 50), "p99": pct(out, 99)}


# ------------------------------------------------------------------ figure 2: fan-out

def fig2_fanout(host, procs, per_proc, channels, rounds, snapshot=False, cpu=lambda: None):
    """procs x per_proc listeners on one document (raw Listen streams, or on_snapshot listeners);
    the time from just before the write (the Python client's set()) to the last listener."""
    doc = f"bench-fan-{'snap' if snapshot else 'raw'}/doc"
    db = servers.client(host)
    db.document(doc).set({"v": 0})
    if snapshot:
        w = Workers([("snapshot", host, per_proc, doc)] * procs)
    else:
        w = Workers([("fanout", host, per_proc, channels, ROOT + "/" + doc)] * procs)
    try:
        t_open = now()
        if w.expect("READY", procs, 180) is None:
            log(f"  fan-out: not every listener became current within 180 s ({host})")
            return None
        open_s = now() - t_open
        out, first, mid = [], [], []
        time.sleep(0.5)
        for r in (-2, -1):                     # warm-up rounds (the JVM's JIT), not counted
            db.document(doc).set({"v": r})
            w.expect("DONE", procs, 60, pick=lambda p, r=r: int(p[1]) == r)
            time.sleep(0.3)
        i0, w0 = cpu(), now()
        time.sleep(2.0)
        i1, w1 = cpu(), now()
        c0, t_start = cpu(), now()
        for r in range(1, rounds + 1):
            t0 = now()
            db.document(doc).set({"v": r})
            done = w.expect("DONE", procs, 60, pick=lambda p, r=r: int(p[1]) == r)
            if done is None:
                log(f"  fan-out round {r}: not every listener received the write within 60 s")
                continue
            times = sorted((float(x) - t0) * 1e3 for p in done for x in p[2:])
            out.append(times[-1])
            first.append(times[0])
            mid.append(pct(times, 50))
            time.sleep(0.5)
        c1, t_end = cpu(), now()
        res = {"median": pct(out, 50), "max": max(out) if out else None, "rounds": len(out),
               "of": rounds, "first": pct(first, 50), "mid": pct(mid, 50), "open_s": open_s, "all": out}
        if None not in (i0, i1, c0, c1):
            idle = (i1 - i0) / (w1 - w0)          # the server's CPU/s with the streams idle
            res["server_cpu_ms"] = max(0.0, (c1 - c0) - idle * (t_end - t_start)) * 1e3 / rounds
        return res
    finally:
        w.stop()
        db.close()


# ------------------------------------------------------------------ figure 3: batches

def fig3_client_threads(host, threads, per_thread, size=500):
    db = servers.client(host)
    col = db.collection(f"bench-batch-t{threads}")
    b = db.batch()
    b.set(col.document("warm"), {"i": 0})
    b.commit()
    commit_time = [0.0] * threads

    def work(k):
        for n in range(per_thread):
            b = db.batch()
            for j in range(size):
                b.set(col.document(f"t{k}-b{n}-d{j}"), {"i": j, "name": "doc", "tag": n})
            c0 = now()
            b.commit()
            commit_time[k] += now() - c0
    t0 = now()
    ths = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(600)
    dt = now() - t0
    db.close()
    docs = threads * per_thread * size
    return {"docs_s": docs / dt, "commit_only_docs_s": docs / (sum(commit_time) / threads)}


def fig3_client_procs(host, procs, per_proc, size=500):
    w = Workers([("batch", host, per_proc, size, f"bench-batch-p{procs}-{k}") for k in range(procs)])
    try:
        if w.expect("READY", procs, 60) is None:
            return None
        w.send("GO")
        done = w.expect("DONE", procs, 600)
        if done is None:
            return None
        t0 = min(float(p[1]) for p in done)
        t1 = max(float(p[2]) for p in done)
        return {"docs_s": procs * per_proc * size / (t1 - t0)}
    finally:
        w.stop()


def fig3_raw(host, threads, per_thread, size=500):
    """Pre-serialized CommitRequests of `size` documents on raw gRPC (one connection per thread):
    the server's side of a batch without the Python client's per-document work."""
    bodies = [[commit_bytes([(f"{ROOT}/bench-raw-t{threads}/t{k}-b{n}-d{j}", {"i": j, "name": "doc", "tag": n})
                             for j in range(size)]) for n in range(per_thread)] for k in range(threads)]
    chans = [grpc.insecure_channel(host, options=CH_OPTS) for _ in range(threads)]
    calls = [c.unary_unary(COMMIT) for c in chans]
    for c in calls:
        c(commit_bytes([(f"{ROOT}/bench-raw-warm/d", {"i": 0})]), metadata=MD, timeout=60)
    rtts = []

    def work(k):
        for body in bodies[k]:
            c0 = now()
            calls[k](body, metadata=MD, timeout=120)
            rtts.append((now() - c0) * 1e3)
    t0 = now()
    ths = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(600)
    dt = now() - t0
    for c in chans:
        c.close()
    return {"docs_s": threads * per_thread * size / dt, "commit_ms_p50": pct(rtts, 50)}


# ------------------------------------------------------------------ figure 4: memory per idle target

def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def server_process(srv):
    """The process that serves: ember itself, or the emulator's JVM (under gcloud's python)."""
    for m in servers.group_members(srv.pgid):
        pid, comm = m.split(" ", 1)
        if comm == "(java)":
            return int(pid), True
    return srv.process.pid, False


def jvm_heap_kb(pid):
    """Heap in use after a full GC (jcmd), or None."""
    try:
        subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60)
        out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"total (\d+)K, used (\d+)K", out)
        return int(m.group(2)) if m else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def fig4_memory(srv, n, streams, latency_samples=0):
    """RSS of the server process before and after opening n idle targets on `streams` Listen
    streams (one connection): document targets on missing documents, then as many query targets
    on empty collections; the differences divided by n. With `latency_samples`, figure 1's raw
    latency again while all 2n targets are open."""
    pid, jvm = server_process(srv)

    async def run():
        counts = {"current": 0}
        ev = asyncio.Event()
        goal = {"n": 0}

        def on(_, t, m):
            r = ListenResponse.FromString(m)
            if r.WhichOneof("response_type") == "target_change" and r.target_change.target_change_type == CURRENT:
                counts["current"] += len(r.target_change.target_ids)
                if counts["current"] >= goal["n"]:
                    ev.set()

        async def open_targets(kind, count, prefix):
            s = Streams(srv.host, 1)
            per = count // streams
            ev.clear()
            counts["current"] = 0
            goal["n"] = count
            for k in range(streams):
                if kind == "doc":
                    reqs = [doc_target(j + 1, f"{ROOT}/{prefix}/s{k}-d{j}") for j in range(per)]
                else:
                    reqs = [query_target(j + 1, f"{prefix}-s{k}-c{j}") for j in range(per)]
                await s.open(reqs, on)
            try:
                await asyncio.wait_for(ev.wait(), 300)
            except asyncio.TimeoutError:
                log(f"  memory: {counts['current']} of {count} {kind} targets current after 300 s")
                return s, False
            return s, True

        # Warm-up: a few targets of each kind opened and closed (lazy initialisation, JIT).
        for kind in ("doc", "query"):
            s, _ = await open_targets(kind, 20 * streams, f"warm-{kind}")
            await s.close()
        await asyncio.sleep(1.0)
        res = {}
        heap0 = jvm_heap_kb(pid) if jvm else None
        rss0 = rss_kb(pid)
        s1, ok1 = await open_targets("doc", n, "bench-idle")
        await asyncio.sleep(2.0)
        heap1 = jvm_heap_kb(pid) if jvm else None
        rss1 = rss_kb(pid)
        s2, ok2 = await open_targets("query", n, "bench-idleq")
        await asyncio.sleep(2.0)
        heap2 = jvm_heap_kb(pid) if jvm else None
        rss2 = rss_kb(pid)
        res["doc"] = (rss1 - rss0) * 1024 / n if ok1 else None
        res["query"] = (rss2 - rss1) * 1024 / n if ok2 else None
        if jvm and None not in (heap0, heap1, heap2):
            res["heap_doc"] = (heap1 - heap0) * 1024 / n
            res["heap_query"] = (heap2 - heap1) * 1024 / n
        res["rss_mb"] = (rss0 / 1024, rss1 / 1024, rss2 / 1024)
        if ok1 and ok2 and latency_samples:
            # Another client's write -> listen while the 2n idle targets stay open (their streams
            # are served by this event loop meanwhile): compare with figure 1's raw row.
            res["busy_lat_raw"] = await asyncio.to_thread(fig1_raw, srv.host, latency_samples, 30)
        await s1.close()
        await s2.close()
        return res
    return asyncio.run(run())


# ------------------------------------------------------------------ one server, every figure

STARTED = []      # every server this run started: checked to be gone at the end


def started(srv):
    STARTED.append(srv)
    return srv


IDLE = {}         # server pid -> its CPU seconds per second when idle


def idle_rate(pid, seconds=3.0):
    c0, t0 = cpu_seconds(pid), now()
    time.sleep(seconds)
    c1, t1 = cpu_seconds(pid), now()
    IDLE[pid] = (c1 - c0) / (t1 - t0) if None not in (c0, c1) else 0.0
    return IDLE[pid]


def with_cpu(pid, ops, f, *a, **k):
    """f(*a, **k) with the server's CPU time per operation (µs) added to its result, less what
    the server burns when idle (the JVM's background threads) over the same time."""
    c0, t0 = cpu_seconds(pid), now()
    res = f(*a, **k)
    c1, t1 = cpu_seconds(pid), now()
    if isinstance(res, dict) and None not in (c0, c1):
        res["server_cpu_us"] = max(0.0, (c1 - c0) - IDLE.get(pid, 0.0) * (t1 - t0)) * 1e6 / ops
    return res


def measure(name, start, opts):
    q = opts.quick
    r = {}
    with tempfile.TemporaryDirectory(prefix=f"bench-server-{name}-") as tmp:
        log(f"== {name}: starting")
        srv = started(start(tmp))
        try:
            host = srv.host
            pid, _ = server_process(srv)
            n1 = 100 if q else 400
            log(f"== {name} on {host}: figure 1 (write -> on_snapshot callback)")
            r["lat"] = fig1_latency(host, 30, 30)                  # warm-up (the JVM's JIT)
            r["idle_cpu"] = idle_rate(pid)
            r["lat"] = with_cpu(pid, n1 + 30, fig1_latency, host, n1, 30)
            r["lat_raw"] = with_cpu(pid, n1 + 30, fig1_raw, host, n1, 30)
            r["rpc"] = with_cpu(pid, 5 * n1 + 100, rpc_floor, host, 5 * n1)
            log(f"== {name}: figure 3 (500-document batches)")
            nb = 4 if q else 20
            r["batch1"] = fig3_client_threads(host, 1, nb)
            r["batch4"] = fig3_client_threads(host, 4, nb // 4)
            r["batch_p4"] = fig3_client_procs(host, 4, nb // 4)
            r["raw1"] = with_cpu(pid, nb * 500, fig3_raw, host, 1, nb)
            r["raw4"] = with_cpu(pid, nb * 500, fig3_raw, host, 4, nb // 4)
            log(f"== {name}: figure 2 (1,000 listeners)")
            cpu = lambda: cpu_seconds(pid)  # noqa: E731
            nr = 3 if q else 15
            r["fan"] = fig2_fanout(host, 4, 250, 5, nr, cpu=cpu)
            r["fan1"] = fig2_fanout(host, 1, 1000, 1, nr, cpu=cpu)
            r["fan_snap"] = fig2_fanout(host, 10, 100, 1, 3 if q else 5, snapshot=True, cpu=cpu)
        finally:
            srv.stop()
        log(f"== {name}: figure 4 (memory per idle target), fresh server")
        srv = started(start(tmp))
        try:
            r["mem"] = fig4_memory(srv, 2000 if q else 10_000, 10, latency_samples=n1 if name == "ember" else 0)
        finally:
            srv.stop()
        if name == "ember":
            log("== ember --memory: figures 1 and 3 again")
            srv = started(servers.start_ember(tmp, memory=True))
            try:
                pid = srv.process.pid
                idle_rate(pid, 1.0)
                r["mem_lat"] = with_cpu(pid, n1 + 30, fig1_latency, srv.host, n1, 30)
                r["mem_lat_raw"] = with_cpu(pid, n1 + 30, fig1_raw, srv.host, n1, 30)
                r["mem_batch1"] = fig3_client_threads(srv.host, 1, nb)
                r["mem_raw4"] = with_cpu(pid, nb * 500, fig3_raw, srv.host, 4, nb // 4)
            finally:
                srv.stop()
    return r


def fmt_ms(x):
    return "n/a" if x is None else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def fmt_n(x):
    return "n/a" if x is None else f"{x:,.0f}"


def table(e, m):
    """Rows: figure, target, ember, emulator, ratio (how many times better ember is), met. A row
    with a target names its id in bench/targets.json."""
    def g(r, *keys):
        for k in keys:
            if r is None:
                return None
            r = r.get(k) if isinstance(r, dict) else None
        return r
    rows = []

    def row(fig, target, key, fmt, lower_better):
        ev, mv = g(e, *key), g(m, *key)
        ratio = ""
        if ev and mv:
            ratio = f"{(mv / ev) if lower_better else (ev / mv):.1f}x"
        rows.append((fig, target_text(target) if target else "", fmt(ev), fmt(mv), ratio,
                     verdict(target, ev, mv) if target else ""))
    row("1. write -> on_snapshot callback p50 (ms)", "server.callback_p50_ms", ("lat", "p50"), fmt_ms, True)
    row("1. write -> on_snapshot callback p99 (ms)", "server.callback_p99_vs_emulator", ("lat", "p99"), fmt_ms, True)
    row("   doc_ref.set() round trip p50 (ms)", "", ("lat", "set_p50"), fmt_ms, True)
    row("   raw gRPC: commit -> document_change p50 (ms)", "", ("lat_raw", "doc_p50"), fmt_ms, True)
    row("   raw gRPC: commit -> document_change p99 (ms)", "", ("lat_raw", "doc_p99"), fmt_ms, True)
    row("   raw gRPC: commit -> snapshot end (NO_CHANGE) p50 (ms)", "", ("lat_raw", "nc_p50"), fmt_ms, True)
    row("   raw gRPC: commit round trip p50 (ms)", "", ("lat_raw", "commit_p50"), fmt_ms, True)
    row("   raw gRPC: GetDocument round trip p50 (ms)", "", ("rpc", "p50"), fmt_ms, True)
    row("   server CPU per GetDocument (us)", "", ("rpc", "server_cpu_us"), fmt_n, True)
    row("   server CPU per commit + its notification (us)", "", ("lat_raw", "server_cpu_us"), fmt_n, True)
    row("   ember --memory: callback p50 (ms)", "", ("mem_lat", "p50"), fmt_ms, True)
    row("   ember --memory: callback p99 (ms)", "", ("mem_lat", "p99"), fmt_ms, True)
    row("   ember --memory: raw commit -> document_change p50 (ms)", "", ("mem_lat_raw", "doc_p50"), fmt_ms, True)
    row("   ember --memory: raw commit round trip p50 (ms)", "", ("mem_lat_raw", "commit_p50"), fmt_ms, True)
    row("2. one write -> last of 1,000 listeners (ms, median)", "server.fanout_1000_ms", ("fan", "median"), fmt_ms, True)
    row("   same, worst round (ms)", "", ("fan", "max"), fmt_ms, True)
    row("   same, first listener (ms, median)", "", ("fan", "first"), fmt_ms, True)
    row("   same, 500th listener (ms, median)", "", ("fan", "mid"), fmt_ms, True)
    row("   server CPU per write fanned out to 1,000 streams (ms)", "", ("fan", "server_cpu_ms"), fmt_ms, True)
    row("   1 process, 1,000 streams on 1 connection (ms, median)", "", ("fan1", "median"), fmt_ms, True)
    row("   on_snapshot, 10 processes x 100 (ms, median)", "", ("fan_snap", "median"), fmt_ms, True)
    row("   on_snapshot: server CPU per write (ms)", "", ("fan_snap", "server_cpu_ms"), fmt_ms, True)
    row("3. 500-doc batch.commit(), 1 thread (docs/s)", "server.batch_commit_docs_per_s", ("batch1", "docs_s"), fmt_n, False)
    row("   same, commit() time only (docs/s)", "", ("batch1", "commit_only_docs_s"), fmt_n, False)
    row("   batch.commit(), 4 threads, 1 client (docs/s)", "", ("batch4", "docs_s"), fmt_n, False)
    row("   batch.commit(), 4 processes (docs/s)", "", ("batch_p4", "docs_s"), fmt_n, False)
    row("   raw gRPC Commit of 500, 1 connection (docs/s)", "", ("raw1", "docs_s"), fmt_n, False)
    row("   raw gRPC Commit of 500, 4 connections (docs/s)", "server.raw_commit_4conn_docs_per_s", ("raw4", "docs_s"), fmt_n, False)
    row("   raw gRPC Commit of 500: round trip p50 (ms)", "", ("raw1", "commit_ms_p50"), fmt_ms, True)
    row("   server CPU per document, raw commits (us)", "", ("raw4", "server_cpu_us"), fmt_n, True)
    row("   ember --memory: batch.commit(), 1 thread (docs/s)", "", ("mem_batch1", "docs_s"), fmt_n, False)
    row("   ember --memory: raw, 4 connections (docs/s)", "", ("mem_raw4", "docs_s"), fmt_n, False)
    row("4. server RSS per idle document target (bytes)", "server.idle_doc_target_bytes", ("mem", "doc"), fmt_n, True)
    row("   server RSS per idle query target (bytes)", "server.idle_query_target_bytes", ("mem", "query"), fmt_n, True)
    row("   raw commit -> document_change p50 with those targets open (ms)", "", ("mem", "busy_lat_raw", "doc_p50"), fmt_ms, True)
    row("   raw commit -> document_change p99 with those targets open (ms)", "", ("mem", "busy_lat_raw", "doc_p99"), fmt_ms, True)
    row("   JVM heap after GC per document / query target (bytes)", "",
        ("mem", "heap_doc"), fmt_n, True)
    hq = g(m, "mem", "heap_query")
    rows[-1] = rows[-1][:3] + (rows[-1][3] + (f" / {fmt_n(hq)}" if hq is not None else ""), "", "")
    return markdown_table(("figure", "target", "ember", "emulator", "ratio", "target met"), rows)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, args = sys.argv[2], sys.argv[3:]
        if kind == "fanout":
            asyncio.run(worker_fanout(args[0], int(args[1]), int(args[2]), args[3]))
        elif kind == "snapshot":
            worker_snapshot(args[0], int(args[1]), args[2])
        elif kind == "batch":
            worker_batch(args[0], int(args[1]), int(args[2]), args[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("ember_bin", nargs="?", default=os.path.join(REPO, ".build-bench", "release", "ember"))
    ap.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    ap.add_argument("--only", choices=("ember", "emulator"))
    ap.add_argument("--json", help="also write the raw results here")
    opts = ap.parse_args()
    servers.EMBER_BIN = os.path.abspath(opts.ember_bin)
    t0 = time.monotonic()
    load0 = os.getloadavg()
    e = m = None
    if opts.only != "emulator":
        e = measure("ember", lambda tmp: servers.start_ember(tmp), opts)
    why = servers.emulator_missing()
    if opts.only != "ember":
        if why:
            log(f"the Firestore emulator is skipped: {why}")
        else:
            m = measure("emulator", servers.start_emulator, opts)
    load = os.getloadavg()
    print(f"\n## ember serve vs the Firestore emulator: google-cloud-firestore "
          f"{__import__('google.cloud.firestore', fromlist=['x']).__version__}, grpcio {grpc.__version__}, "
          f"loopback, {os.cpu_count()} cores shared by the server, the clients and whatever else runs "
          f"(1-minute load average {load0[0]:.1f} at the start, {load[0]:.1f} at the end; "
          f"{time.monotonic() - t0:.0f} s)\n")
    print(table(e, m))
    def g(r, k, f):
        return (r or {}).get(k, {}) and (r or {}).get(k, {}).get(f)
    print(f"\nsamples (figure 1): ember {g(e, 'lat', 'n')} (lost {g(e, 'lat', 'lost')}), "
          f"emulator {g(m, 'lat', 'n')} (lost {g(m, 'lat', 'lost')}); fan-out rounds complete: "
          f"ember {g(e, 'fan', 'rounds')}/{g(e, 'fan', 'of')}, emulator {g(m, 'fan', 'rounds')}/{g(m, 'fan', 'of')}; "
          f"RSS MB before/after doc/after query targets: ember {g(e, 'mem', 'rss_mb')}, emulator {g(m, 'mem', 'rss_mb')}")
    finish(servers, STARTED, opts.json, {"ember": e, "emulator": m})


if __name__ == "__main__":
    main()
