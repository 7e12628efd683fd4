"""The figures for Ember's tree clients through `ember serve` (the realtime protocol),
loopback, release builds:

1. a push in process A -> child_added in process B: p50 and p99, with Python clients and with
   Swift clients (EmberRemoteBench tree-push / tree-listen), one process each; every process
   reads CLOCK_MONOTONIC, which Linux shares between processes;
2. 1,000 observers on one list (10 clients x 100 observers, in one process), one push from
   another process: the time until every observer was called;
3. resume: a client holding a 10,000-child list goes offline, another pushes 10 children, it
   comes back: the children the server sent (EmberRemoteBench tree-resume).

Responsible for: starting a release `ember serve --memory` (its own process group, stopped by
pid), the client processes, and printing each figure beside its target (bench/targets.json,
tree_remote.*).
Usage: bench_tree_remote.py --ember-bin BIN --swift-bench BIN [--quick]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import target_value, verdict  # noqa: E402

OBSERVER = r"""
import json, sys, threading, time
import ember
port, clients, per, expected, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
lock = threading.Lock()
seen = {}
done = threading.Event()
dbs = [ember.Client(database_host=f"127.0.0.1:{port}", ssl=False) for _ in range(clients)]
def on_added(snap, prev):
    t = time.monotonic_ns()
    with lock:
        seen.setdefault(snap.key, []).append(t)
        if sum(len(v) for v in seen.values()) >= expected:
            done.set()
for db in dbs:
    for _ in range(per):
        db.reference(path).observe(ember.EventType.CHILD_ADDED, on_added)
print("ready", flush=True)
if not done.wait(300):
    print("timeout", flush=True)
with lock:
    print(json.dumps(seen), flush=True)
for db in dbs:
    db.close()
"""


def start_server(binary):
    p = subprocess.Popen([binary, "serve", "--memory", "--port", "0", "--database-port", "0"],
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"database_port=(\d+)", p.stderr.readline())
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, int(m.group(1))
    p.kill()
    raise SystemExit("ember serve did not start")


def observer(port, clients, per, expected, path):
    o = subprocess.Popen([sys.executable, "-c", OBSERVER, str(port), str(clients), str(per), str(expected), path],
                         stdout=subprocess.PIPE, text=True)
    assert o.stdout.readline().strip() == "ready"
    return o


def finish(o):
    lines = o.communicate(timeout=600)[0].splitlines()
    assert lines and lines[-1].startswith("{"), lines
    return json.loads(lines[-1])


def latency(port, n):
    import ember
    o = observer(port, 1, 1, n, "latency")
    db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
    ref = db.reference("latency")
    time.sleep(0.5)                      # both connected and listening
    sent = {}
    for i in range(n):
        child = ref.push()
        sent[child.key] = time.monotonic_ns()
        child.set({"i": i})
        time.sleep(0.002)
    seen = finish(o)
    db.close()
    lat = sorted((seen[k][0] - t) / 1000 for k, t in sent.items() if k in seen)
    lat = lat[len(lat) // 10:] if len(lat) > 100 else lat      # the first tenth warms up
    return statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))], len(seen), n


def fanout(port, clients, per, rounds):
    import ember
    o = observer(port, clients, per, clients * per * rounds, "fanout")
    db = ember.Client(database_host=f"127.0.0.1:{port}", ssl=False)
    ref = db.reference("fanout")
    time.sleep(1.0)
    sent = {}
    for _ in range(rounds):
        child = ref.push()
        sent[child.key] = time.monotonic_ns()
        child.set(True)
        time.sleep(0.2)
    seen = finish(o)
    db.close()
    spans = [(max(seen[k]) - t) / 1e6 for k, t in sent.items() if k in seen and len(seen[k]) == clients * per]
    return statistics.median(spans) if spans else float("inf"), len(spans), rounds


def percentiles(lat):
    lat = sorted(lat)
    lat = lat[len(lat) // 10:] if len(lat) > 100 else lat      # the first tenth warms up
    return statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))]


def swift_latency(port, n, swift_bench):
    """tree-push in one process, tree-listen in another: latency per child_added (µs)."""
    host = f"127.0.0.1:{port}"
    listen = subprocess.Popen([swift_bench, "tree-listen", host, "swift-latency"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    push = subprocess.Popen([swift_bench, "tree-push", host, "swift-latency"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert listen.stdout.readline().strip() == "ready"
        assert push.stdout.readline().strip() == "ready"
        lat = []
        done = threading.Event()

        def read():
            for line in listen.stdout:
                if line.startswith("cb "):
                    lat.append(int(line.split()[1]) / 1000)
                    if len(lat) >= n:
                        done.set()
                        return
        threading.Thread(target=read, daemon=True).start()
        for i in range(n):
            push.stdin.write(f"w {i}\n")
            push.stdin.flush()
            time.sleep(0.002)
        done.wait(60)
        got = len(lat)
        p50, p99 = percentiles(lat) if lat else (float("inf"), float("inf"))
        return p50, p99, got, n
    finally:
        for p in (push, listen):
            try:
                p.stdin.write("stop\n")
                p.stdin.close()
                p.wait(timeout=30)
            except Exception:
                p.kill()
                p.wait()


def resume(port, swift_bench, n, changes):
    out = subprocess.run([swift_bench, "tree-resume", f"127.0.0.1:{port}", "resume", str(n), str(changes)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    figures = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return {k: float(v) for k, v in figures.items()}


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--ember-bin", required=True)
    a.add_argument("--swift-bench", required=True)
    a.add_argument("--quick", action="store_true")
    args = a.parse_args()
    samples = 200 if args.quick else 1000
    p, port = start_server(args.ember_bin)
    try:
        p50, p99, got, n = latency(port, samples)
        s50, s99, sgot, sn = swift_latency(port, samples, args.swift_bench)
        fan, full, rounds = fanout(port, 10, 100, 3 if args.quick else 10)
        r = resume(port, args.swift_bench, 10_000, 10)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    print("\n## Ember's tree clients through ember serve, loopback, release builds")
    print(f"{'figure':<66} {'measured':>10} {'target':>10}  verdict")
    rows = [(f"Python: push in A -> child_added in B, p50 (µs) [{got}/{n}]", p50, "tree_remote.python_push_p50_us"),
            ("Python: push in A -> child_added in B, p99 (µs)", p99, "tree_remote.python_push_p99_us"),
            (f"Swift: push in A -> child_added in B, p50 (µs) [{sgot}/{sn}]", s50, "tree_remote.swift_push_p50_us"),
            ("Swift: push in A -> child_added in B, p99 (µs)", s99, "tree_remote.swift_push_p99_us"),
            (f"1,000 observers, one push: all called, median of {full}/{rounds} (ms)", fan, "tree_remote.fanout_1000_ms"),
            ("resume 10,000 children after 10 pushed away: children sent", r["resume_children"], "tree_remote.resume_children")]
    for name, v, fig in rows:
        print(f"{name:<66} {v:>10.1f} {target_value(fig):>10.1f}  {verdict(fig, v)}")
    print(f"(resume: first load {r['initial_children']:.0f} children; back with nothing changed {r['unchanged_children']:.0f}; "
          f"back after the pushes in {r['resume_ms']:.1f} ms)")


if __name__ == "__main__":
    main()
