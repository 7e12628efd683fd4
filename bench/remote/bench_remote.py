"""The remote benchmarks: Ember's clients of a server (`ember serve` on loopback), with the
Cloud Firestore emulator measured beside it in the same run (bench/remote/README.md). Each judged
figure's target is in bench/targets.json (remote.*).

Usage: bench_remote.py --ember-bin BIN --swift-bench BIN [--ember-python PY] [--samples N]
                       [--only ember|emulator] [--json FILE]
   BIN: ember's release binary and the release EmberRemoteBench; PY: a Python with the `ember`
   package installed (the `ember` rows are skipped without it). Run from a Python that has
   google-cloud-firestore (.venv-server); `make bench-remote` does all of it.

Every server is started by Tests/server/servers.py (own process group, 127.0.0.1, a watchdog,
bounded start) and stopped by group id; every client process is ours, reads its commands from a
pipe, exits when the pipe closes, and is killed by PID if it has not after a bound.
"""
import argparse
import os
import queue
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

WARMUP = 50
SAMPLE_TIMEOUT = 5.0      # s for one write to reach the listener (else the sample is lost)
READY_TIMEOUT = 60.0
RESUME_TIMEOUT = 600.0


# ------------------------------------------------------------------ the Python client processes

def worker(role, kind, host, collection, doc):
    """One client process: `listen` prints `ready` then `cb I LATENCY_NS` per new value of the
    document; `write` prints `ready`, then per stdin line `w I` sets the document to
    {"i": I, "t": CLOCK_MONOTONIC ns just before the call}. kind: `ember` (ember.Client over
    host) or `gcf` (google-cloud-firestore, as FIRESTORE_EMULATOR_HOST makes it)."""
    out_lock = threading.Lock()

    def say(line):
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    if kind == "ember":
        import ember
        db = ember.Client(host=host, ssl=False)
    else:
        db = servers.client(host)
    ref = db.collection(collection).document(doc)
    if role == "write":
        say("ready")
        for line in sys.stdin:
            parts = line.split()
            if len(parts) == 2 and parts[0] == "w":
                t = time.monotonic_ns()
                ref.set({"i": int(parts[1]), "t": t})
        db.close()
        return
    ready = threading.Event()
    last = [-1]

    def on_snapshot(docs, changes, read_time):
        now = time.monotonic_ns()
        if not docs:
            ready.set()
            return
        d = docs[0]
        if kind == "gcf" or not d.metadata.from_cache:
            ready.set()
        data = d.to_dict() if d.exists else None
        if not data or "i" not in data or data["i"] <= last[0]:
            return
        last[0] = data["i"]
        say(f"cb {data['i']} {now - data['t']}")

    # Metadata changes too: the server's confirmation that the document is missing may be one.
    watch = ref.on_snapshot(on_snapshot, include_metadata_changes=True) if kind == "ember" else ref.on_snapshot(on_snapshot)
    if not ready.wait(READY_TIMEOUT):
        sys.exit("listener: no first snapshot")
    say("ready")
    for _ in sys.stdin:
        pass
    watch.unsubscribe()
    db.close()


# ------------------------------------------------------------------ driving client processes

class Proc:
    """A client process of ours: commands on stdin, lines from stdout into a queue."""

    def __init__(self, cmd, name):
        self.name = name
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def line(self, timeout):
        try:
            line = self.q.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            raise RuntimeError(f"{self.name} exited (status {self.p.wait()})")
        return line

    def expect(self, word, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.line(end - time.monotonic())
            if line is not None and line.split()[0] == word:
                return line
        raise RuntimeError(f"{self.name}: no `{word}` within {timeout} s")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def stop(self, timeout=15):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()                      # by PID: the process we started
            self.p.wait()


def client_cmd(opts, kind, role, host, collection, doc):
    if kind == "swift":
        return [opts.swift_bench, "listen" if role == "listen" else "write", host, collection, doc]
    py = opts.ember_python if kind == "ember" else sys.executable
    return [py, os.path.abspath(__file__), "--worker", role, kind, host, collection, doc]


def latency(opts, kind, host, tag):
    """Write in one process -> listener callback in another, one write at a time."""
    collection, doc = f"lat-{kind}-{tag}-{os.getpid()}", "d"
    procs = []
    try:
        b = Proc(client_cmd(opts, kind, "listen", host, collection, doc), f"{kind} listener")
        procs.append(b)
        b.expect("ready", READY_TIMEOUT)
        a = Proc(client_cmd(opts, kind, "write", host, collection, doc), f"{kind} writer")
        procs.append(a)
        a.expect("ready", READY_TIMEOUT)
        lat, lost = [], 0
        for i in range(WARMUP + opts.samples):
            a.send(f"w {i}")
            end = time.monotonic() + SAMPLE_TIMEOUT
            got = None
            while time.monotonic() < end:
                line = b.line(end - time.monotonic())
                if line and line.startswith("cb "):
                    _, j, ns = line.split()
                    if int(j) >= i:
                        got = int(ns)
                        break
            if got is None:
                lost += 1
            elif i >= WARMUP:
                lat.append(got / 1000.0)
            time.sleep(0.002)
        return {"n": len(lat), "lost": lost, "p50": pct(lat, 50), "p99": pct(lat, 99),
                "p90": pct(lat, 90), "max": max(lat) if lat else None}
    finally:
        for p in reversed(procs):
            p.stop()


def get_round_trips(opts, host, tag, n=2000):
    """One GetDocument at a time from Ember's Swift client (`getDocument(source: .server)`)."""
    cmd = [opts.swift_bench, "get", host, f"get-{tag}-{os.getpid()}", "d", str(n)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise RuntimeError("EmberRemoteBench get: no answer within 300 s")
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "get_us":
            return {"n": n, "p50": float(f[2]), "p99": float(f[4])}
    raise RuntimeError(f"EmberRemoteBench get failed: {out.stdout[-300:]} {out.stderr[-300:]}")


def resume(opts, host, tmp, tag, restart=None):
    """The Swift resume client (EmberRemoteBench resume); `restart(stopped)`, if given, stops the
    server, calls `stopped()` and starts it again on the same port and file."""
    path = os.path.join(tmp, f"resume-{tag}.ember")
    cmd = [opts.swift_bench, "resume", host, path, f"resume-{tag}-{os.getpid()}", str(opts.resume_docs), "10"]
    p = Proc(cmd, "swift resume client")
    r = {}
    try:
        end = time.monotonic() + RESUME_TIMEOUT
        while True:
            line = p.line(end - time.monotonic())
            if line is None:
                raise RuntimeError(f"resume client: no answer within {RESUME_TIMEOUT} s")
            if line == "done":
                break
            if line == "restart_wait":
                if restart is None:
                    p.send("skip")
                else:
                    def stopped():
                        p.send("stopped")
                        p.expect("changed", 60)
                    restart(stopped)
                    p.send("started")
                continue
            k, v = line.split()
            r[k] = float(v)
            log(f"   {k} {v}")
    finally:
        p.stop()
    return r


# ------------------------------------------------------------------ one server, every figure

STARTED = []


def start_ember_at(tmp, port):
    """`ember serve` again on `port` and the file servers.start_ember(tmp) used."""
    return servers.Server("ember serve", [servers.EMBER_BIN, "serve", "--database-port", "0", "--path", os.path.join(tmp, "data.ember"),
                                          "--port", str(port)],
                          port, os.path.join(tmp, "ember-restarted.log"), servers._port_accepts,
                          servers.EMBER_START_SECONDS)


def measure(name, start, opts):
    r = {}
    with tempfile.TemporaryDirectory(prefix=f"bench-remote-{name}-") as tmp:
        log(f"== {name}: starting")
        srv = start(tmp)
        STARTED.append(srv)
        live = [srv]
        try:
            kinds = ["swift"] + (["ember"] if opts.ember_python else []) + ["gcf"]
            for kind in kinds:
                log(f"== {name} on {srv.host}: write -> callback, {kind} clients")
                try:
                    r[f"lat_{kind}"] = latency(opts, kind, srv.host, name)
                    log(f"   {r[f'lat_{kind}']}")
                except RuntimeError as e:
                    log(f"   failed: {e}")
            log(f"== {name} on {srv.host}: GetDocument round trips, Swift client")
            try:
                r["get_swift"] = get_round_trips(opts, srv.host, name)
                log(f"   {r['get_swift']}")
            except RuntimeError as e:
                log(f"   failed: {e}")
            log(f"== {name}: resume of a {opts.resume_docs:,}-document query after 10 changes")
            restart = None
            if name == "ember":           # the emulator keeps nothing across a restart
                def restart(stopped):
                    live[-1].stop()
                    stopped()
                    again = start_ember_at(tmp, srv.port)
                    STARTED.append(again)
                    live.append(again)
            try:
                r["resume"] = resume(opts, srv.host, tmp, name, restart)
            except (RuntimeError, ValueError) as e:
                log(f"   failed: {e}")
        finally:
            for s in live:
                s.stop()
    return r


def table(e, m):
    rows = []

    def g(r, k, f):
        return ((r or {}).get(k) or {}).get(f)

    def us(x):
        return "n/a" if x is None else f"{x:,.0f}"

    def n(x):
        return "n/a" if x is None else f"{x:,.0f}"

    def row(label, target, k, f, fmt):
        a, b = g(e, k, f), g(m, k, f)
        rows.append((label, target_text(target) if target else "", fmt(a), fmt(b), verdict(target, a) if target else ""))

    for kind, who, label in (("swift", "swift", "Swift (FirestoreSettings.host)"),
                             ("ember", "python", "Python (ember.Client(host=))")):
        row(f"write -> callback p50 (us), {label}", f"remote.{who}_callback_p50_us", f"lat_{kind}", "p50", us)
        row(f"write -> callback p99 (us), {label}", f"remote.{who}_callback_p99_us", f"lat_{kind}", "p99", us)
    row("GetDocument round trip p50 (us), Swift (FirestoreSettings.host)", "remote.swift_get_p50_us", "get_swift", "p50", us)
    row("GetDocument round trip p99 (us), Swift (FirestoreSettings.host)", "", "get_swift", "p99", us)
    row("write -> callback p50 (us), google-cloud-firestore", "", "lat_gcf", "p50", us)
    row("write -> callback p99 (us), google-cloud-firestore", "", "lat_gcf", "p99", us)
    row("resume: documents sent after reopening (10 changed of 10,000)", "remote.resume_reopen_docs", "resume", "reopen_docs", n)
    row("   time from listen to current after reopening (ms)", "", "resume", "reopen_ms", lambda x: "n/a" if x is None else f"{x:,.1f}")
    row("   documents sent after disable/enableNetwork (10 changed)", "remote.resume_network_docs", "resume", "network_docs", n)
    row("   time from enableNetwork to current (ms)", "", "resume", "network_ms", lambda x: "n/a" if x is None else f"{x:,.1f}")
    row("   documents sent after the server's restart (10 changed)", "remote.resume_restart_docs", "resume", "restart_docs", n)
    row("   time from restart to current (ms)", "", "resume", "restart_ms", lambda x: "n/a" if x is None else f"{x:,.1f}")
    row("   first listen: documents sent", "", "resume", "first_docs", n)
    row("   first listen: time to current (ms)", "", "resume", "first_ms", lambda x: "n/a" if x is None else f"{x:,.1f}")
    return markdown_table(("figure", "target", "ember serve", "emulator", "target met"), rows)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:7])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-bin", default=os.path.join(REPO, ".build-bench", "release", "ember"))
    ap.add_argument("--swift-bench", default=os.path.join(REPO, ".build-bench", "release", "EmberRemoteBench"))
    ap.add_argument("--ember-python", help="a Python with the ember package (the Python rows)")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--resume-docs", type=int, default=10_000)
    ap.add_argument("--only", choices=("ember", "emulator"))
    ap.add_argument("--json", help="also write the raw results here")
    opts = ap.parse_args()
    servers.EMBER_BIN = os.path.abspath(opts.ember_bin)
    opts.swift_bench = os.path.abspath(opts.swift_bench)
    t0, load0 = time.monotonic(), os.getloadavg()
    e = m = None
    if opts.only != "emulator":
        e = measure("ember", lambda tmp: servers.start_ember(tmp), opts)
    if opts.only != "ember":
        why = servers.emulator_missing()
        if why:
            log(f"the Firestore emulator is skipped: {why}")
        else:
            m = measure("emulator", servers.start_emulator, opts)
    load = os.getloadavg()
    print(f"\n## Clients of a server: Ember's Swift and Python clients and google-cloud-firestore "
          f"on loopback; ember serve (durable) beside the Firestore emulator; {os.cpu_count()} cores shared by "
          f"the servers, the clients and whatever else runs (1-minute load average {load0[0]:.1f} at the start, "
          f"{load[0]:.1f} at the end; {time.monotonic() - t0:.0f} s)\n")
    print(table(e, m))

    def g(r, k, f):
        return ((r or {}).get(k) or {}).get(f)
    print("\nsamples per latency row (lost): " + ", ".join(
        f"{k} {g(r, 'lat_' + k, 'n')} ({g(r, 'lat_' + k, 'lost')}) on {s}"
        for s, r in (("ember", e), ("emulator", m)) for k in ("swift", "ember", "gcf")))
    finish(servers, STARTED, opts.json, {"ember": e, "emulator": m})


if __name__ == "__main__":
    main()
