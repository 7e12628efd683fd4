#!/usr/bin/env python3
"""Ember's Python tree benchmarks, printed beside their targets (bench/targets.json):

  (t1) child_added after a push: an observer on /posts; time from just before
       `posts.push(value)` until the user callback runs with the new child's snapshot (key
       checked); 2,000 iterations after 50 warm-up; p50 / p99 us (python.tree_push_p50_us)
  (t2) order_by_child("score").limit_to_last(100) over 100,000 children: time from
       observe(VALUE) to the first value callback, then the live window updated per write: set a
       child's score so it enters the window, time to the value callback; p50 us. Their targets
       are Swift's figures (swift.tree_window_first_ms, swift.tree_window_write_us), shown
       beside these for reference, without a verdict

In memory, 2 event-thread hops per event (worker -> event thread -> Python with the GIL).
QUICK=1 makes every size 10x smaller. Prints one `RESULT {json}` line.
"""
import json
import math
import os
import sys
import threading
from pathlib import Path
from time import perf_counter_ns

import ember
from ember import EventType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import target_text, verdict  # noqa: E402

QUICK = os.environ.get("QUICK") == "1"
N_PUSH = 200 if QUICK else 2000
N_CHILDREN = 10_000 if QUICK else 100_000
N_WINDOW = 100 if QUICK else 500
WARMUP = 50


def pctl(vals, p):
    s = sorted(vals)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


def lat(ns):
    return {"n": len(ns), "p50_us": round(pctl(ns, 50) / 1e3, 1), "p99_us": round(pctl(ns, 99) / 1e3, 1)}


def bench_push(db):
    posts = db.reference("posts")
    box = {"t": 0, "n": 0}
    ev = threading.Event()

    def on_added(snap, prev_key):
        box["t"] = perf_counter_ns()
        box["key"] = snap.key
        ev.set()

    h = posts.observe(EventType.CHILD_ADDED, on_added)
    out = []
    for i in range(WARMUP + N_PUSH):
        ev.clear()
        t0 = perf_counter_ns()
        new = posts.push({"title": "Hi", "n": i, "metrics": {"views": 3}})
        if not ev.wait(5):
            raise SystemExit("(t1) no child_added in 5 s")
        if box["key"] != new.key:
            # the callback can beat push()'s return; wait for ours if it was an earlier one
            raise SystemExit(f"(t1) unexpected key {box['key']} != {new.key}")
        if i >= WARMUP:
            out.append(box["t"] - t0)
    posts.remove_observer(h)
    return lat(out)


def bench_window(db):
    scores = db.reference("scores")
    chunk = 5_000
    for start in range(0, N_CHILDREN, chunk):
        last = scores.update({f"c{i:06}": {"score": i, "name": f"user{i}"} for i in range(start, min(N_CHILDREN, start + chunk))})
    last.wait(60)   # tree writes are acknowledged in order: the last one means every one
    q = scores.order_by_child("score").limit_to_last(100)
    box = {"t": 0, "n": 0}
    ev = threading.Event()

    def on_value(snap, _):
        box["t"] = perf_counter_ns()
        box["n"] = snap.child_count
        ev.set()

    t0 = perf_counter_ns()
    h = q.observe(EventType.VALUE, on_value)
    if not ev.wait(30):
        raise SystemExit("(t2) no first value in 30 s")
    first_ms = round((box["t"] - t0) / 1e6, 2)
    assert box["n"] == 100, box["n"]
    out = []
    for i in range(WARMUP + N_WINDOW):
        ev.clear()
        child = scores.child(f"c{i % N_CHILDREN:06}/score")
        t0 = perf_counter_ns()
        child.set(N_CHILDREN + i)       # enters the window at the top
        if not ev.wait(5):
            raise SystemExit("(t2) no window update in 5 s")
        if i >= WARMUP:
            out.append(box["t"] - t0)
    scores.remove_observer(h)
    return {"first_ms": first_ms, "update": lat(out)}


def main():
    res = {}
    with ember.Client() as db:
        print("(t1) child_added after a push", flush=True)
        res["t1"] = bench_push(db)
        print(f"    {res['t1']}", flush=True)
    with ember.Client() as db:
        print(f"(t2) order_by_child limit_to_last(100) over {N_CHILDREN:,} children", flush=True)
        res["t2"] = bench_window(db)
        print(f"    {res['t2']}", flush=True)
    print("RESULT " + json.dumps(res), flush=True)
    print()
    print("| tree (Python) | measured | target | verdict |")
    print("|---|---|---|---|")
    print(f"| (t1) child_added after push, p50 / p99 us | {res['t1']['p50_us']} / {res['t1']['p99_us']} "
          f"| p50 {target_text('python.tree_push_p50_us')} | {verdict('python.tree_push_p50_us', res['t1']['p50_us'])} |")
    print(f"| (t2) limit_to_last(100) over {N_CHILDREN:,}: first value, ms | {res['t2']['first_ms']} "
          f"| {target_text('swift.tree_window_first_ms')} (Swift's) | - |")
    u = res["t2"]["update"]
    print(f"| (t2) live window update per write, p50 / p99 us | {u['p50_us']} / {u['p99_us']} "
          f"| p50 {target_text('swift.tree_window_write_us')} (Swift's) | - |")


if __name__ == "__main__":
    main()
