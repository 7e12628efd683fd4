#!/usr/bin/env python3
"""Ember's Python benchmarks, same workloads and document shape as ../../../shared/peers/:

  (a) document listener: write one 5-field doc, time from just before set() until the user
      callback runs with the new document; 2,000 iterations after 50 warm-up; p50/p99 us
  (b) query listener: 10,000 docs, listener on state == "CA" (1,000 matches), update one matching
      doc, time to the callback carrying the MODIFIED change; 500 iterations after 50 warm-up;
      p50/p99 us
  (c) bulk insert of 100,000 docs with WriteBatch (500 per batch), in memory; docs/s
  (c-durable) the same into a database file (persistence on), until every batch is acknowledged
  (d) equality query group == 42 over those 100,000 cached docs (source=CACHE) returning 1,000
      dicts; median of 20; ms; without an index, then with one made by set_index_configuration
  (e) one durably acknowledged write: set() then wait_for_pending_writes() on the file; p50/p99 us
  (a-durable), (b-durable) (a) and (b) on a database file (persistence on): the embedded
      default, compared with SQLite+apsw in the table printed last, with ratios

Each figure's target is in bench/targets.json (python.*), printed beside it with its verdict.

Then it runs the peers' scripts that can run here (SQLite via stdlib/apsw and TinyDB, when their
packages are importable by this Python or by $PEERS_VENVS/main) and prints everything side by
side. QUICK=1 makes every size 10x smaller. Prints one `RESULT {json}` line for Ember.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from time import perf_counter_ns

import ember

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import ratio, target_text, verdict  # noqa: E402

QUICK = os.environ.get("QUICK") == "1"
N_A = 200 if QUICK else 2000
N_B = 100 if QUICK else 500
N_B_COLL = 10_000
N_C = 10_000 if QUICK else 100_000
N_D_REPS = 5 if QUICK else 20
N_E = 50 if QUICK else 500
WARMUP = 50
STATES = ["CA", "NY", "TX", "WA", "FL", "IL", "OR", "NV", "AZ", "CO"]
PEERS = Path(os.environ.get("PEERS_DIR", Path(__file__).resolve().parents[3] / "shared" / "peers"))


def make_doc(i, v=0):
    return {"name": f"user{i}", "age": 20 + (i + v) % 50, "state": STATES[i % 10],
            "group": (i * 37) % 100, "score": (i % 1000) / 10 + v}


def pctl(vals, p):
    s = sorted(vals)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


def lat(ns):
    return {"n": len(ns), "p50_us": round(pctl(ns, 50) / 1e3, 1), "p99_us": round(pctl(ns, 99) / 1e3, 1)}


def bench_a(db):
    ref = db.collection("docs").document("a")
    box = {"t": 0, "want": None}
    ev = threading.Event()

    def on_snapshot(docs, changes, read_time):
        d = docs[0]
        if d.exists and d.get("score") == box["want"]:
            box["t"] = perf_counter_ns()
            ev.set()

    watch = ref.on_snapshot(on_snapshot)
    out = []
    for i in range(WARMUP + N_A):
        doc = make_doc(0, i + 1)
        box["want"] = doc["score"]
        ev.clear()
        t0 = perf_counter_ns()
        ref.set(doc)
        if not ev.wait(5):
            raise SystemExit("(a) no callback in 5 s")
        if i >= WARMUP:
            out.append(box["t"] - t0)
    watch.unsubscribe()
    return lat(out)


def bench_b(db):
    coll = db.collection("qdocs")
    batch = db.batch()
    for i in range(N_B_COLL):
        batch.set(coll.document(f"q{i}"), make_doc(i))
        if len(batch) == 500:
            batch.commit()
            batch = db.batch()
    batch.commit()
    db.wait_for_pending_writes()
    box = {"t": 0, "id": None, "matches": 0}
    ev = threading.Event()

    def on_snapshot(docs, changes, read_time):
        box["matches"] = len(docs)
        for c in changes:
            if c.type is ember.ChangeType.MODIFIED and c.document.id == box["id"]:
                box["t"] = perf_counter_ns()
                ev.set()

    watch = coll.where(filter=ember.FieldFilter("state", "==", "CA")).on_snapshot(on_snapshot)
    time.sleep(0.2)
    matching = [i for i in range(N_B_COLL) if STATES[i % 10] == "CA"]
    out = []
    for i in range(WARMUP + N_B):
        j = matching[i % len(matching)]
        ref = coll.document(f"q{j}")
        box["id"] = ref.id
        ev.clear()
        t0 = perf_counter_ns()
        ref.set(make_doc(j, i + 1))
        if not ev.wait(5):
            raise SystemExit("(b) no callback in 5 s")
        if i >= WARMUP:
            out.append(box["t"] - t0)
    watch.unsubscribe()
    r = lat(out)
    r["initial_matches"] = box["matches"]
    return r


def bench_c(db, name="bulk"):
    coll = db.collection(name)
    docs = [make_doc(i) for i in range(N_C)]
    t0 = time.perf_counter()
    batch = db.batch()
    for i, d in enumerate(docs):
        batch.set(coll.document(f"b{i}"), d)
        if len(batch) == 500:
            batch.commit()
            batch = db.batch()
    batch.commit()
    dt = time.perf_counter() - t0
    db.wait_for_pending_writes()
    dt_acked = time.perf_counter() - t0
    return {"docs_per_s": round(N_C / dt), "docs_per_s_acknowledged": round(N_C / dt_acked),
            "method": "WriteBatch, 500 set() per commit; docs_per_s: applied locally, acknowledged: every batch committed by the backend"}


def bench_d(db, name="bulk"):
    q = db.collection(name).where(filter=ember.FieldFilter("group", "==", 42))
    q.get(source=ember.Source.CACHE)
    ts = []
    n = 0
    for _ in range(N_D_REPS):
        t0 = time.perf_counter()
        rows = [d.to_dict() for d in q.get(source=ember.Source.CACHE)]
        ts.append((time.perf_counter() - t0) * 1e3)
        n = len(rows)
    ts.sort()
    return {"ms": round(ts[len(ts) // 2], 2), "rows": n}


INDEX_CONFIG = json.dumps({"indexes": [{"collectionGroup": "bulk", "queryScope": "COLLECTION",
                                        "fields": [{"fieldPath": "group", "order": "ASCENDING"}]}]})


def bench_e(db):
    ref = db.collection("acks").document("a")
    out = []
    for i in range(WARMUP + N_E):
        t0 = perf_counter_ns()
        ref.set(make_doc(0, i))
        db.wait_for_pending_writes()
        if i >= WARMUP:
            out.append(perf_counter_ns() - t0)
    return lat(out)


def step(res, key, label, fn, *args):
    """Runs one measurement, printing its label and then its result, kept as res[key]."""
    print(label, flush=True)
    res[key] = fn(*args)
    print(f"    {res[key]}", flush=True)


def bench_durable(res):
    tmp = tempfile.mkdtemp(prefix="ember-bench-")
    try:
        # The embedded default: the listeners on a database file, persistence on.
        db = ember.Client(path=os.path.join(tmp, "listen.ember"))
        step(res, "a_durable", "(a-durable) document listener, database file", bench_a, db)
        step(res, "b_durable", "(b-durable) query listener, database file", bench_b, db)
        db.close()
        db = ember.Client(path=os.path.join(tmp, "bench.ember"))
        step(res, "c_durable", "(c-durable) bulk insert into a file", bench_c, db)
        step(res, "d_noindex", "(d) equality query over the cached docs, no index", bench_d, db)
        t0 = time.perf_counter()
        db.set_index_configuration(INDEX_CONFIG)
        res["d_index_build_s"] = round(time.perf_counter() - t0, 2)
        step(res, "d_index", f"(d) with an index (built in {res['d_index_build_s']} s)", bench_d, db)
        step(res, "e", "(e) one durably acknowledged write", bench_e, db)
        db.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_peers():
    """Runs the peer scripts that can run on this machine, with a Python that has their packages."""
    results = {}
    pythons = [os.environ.get("PEERS_PYTHON"), str(Path(os.environ.get("PEERS_VENVS", "/tmp/peers-venvs")) / "main/bin/python"), sys.executable]
    for path, needs in ((PEERS / "bench_sqlite.py", "apsw"), (PEERS / "bench_tinydb.py", "tinydb"),
                        (Path(__file__).parent / "sqlite_memory_load.py", "apsw")):
        script = path.name
        if not path.exists():
            continue
        py = next((p for p in pythons if p and Path(p).exists() and
                   subprocess.run([p, "-c", f"import {needs}"], capture_output=True).returncode == 0), None)
        if py is None:
            results[script] = {"skipped": f"no Python with '{needs}' (set PEERS_PYTHON or run ../shared/peers/setup.sh)"}
            continue
        print(f"--- peer {script} ({py})", flush=True)
        try:
            p = subprocess.run([py, str(path)], capture_output=True, text=True, timeout=240, env=dict(os.environ))
            line = next((l for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
            results[script] = json.loads(line[7:]) if line else {"failed": p.stderr[-500:]}
        except subprocess.TimeoutExpired:
            results[script] = {"failed": "timeout"}
    return results


def fmt_lat(r):
    return f"{r['p50_us']} / {r['p99_us']}" if r and "p50_us" in r else "n/a"


def ms(r):
    return r.get("median_ms", r.get("ms")) if isinstance(r, dict) else "n/a"


def main():
    res = {"peer": "ember (python)", "quick": QUICK}
    db = ember.Client()
    step(res, "a", "(a) document listener", bench_a, db)
    step(res, "b", "(b) query listener", bench_b, db)
    db.close()
    db = ember.Client()
    step(res, "c", "(c) bulk insert in memory", bench_c, db)
    db.close()
    bench_durable(res)
    print("RESULT " + json.dumps(res), flush=True)

    peers = {} if os.environ.get("EMBER_BENCH_NO_PEERS") == "1" else run_peers()
    print()
    print("| | (a) doc listener p50 / p99 us | (b) query listener p50 / p99 us | (c) bulk docs/s | (d) no index / index ms |")
    print("|---|---|---|---|---|")
    print(f"| Ember, in memory | {fmt_lat(res['a'])} | {fmt_lat(res['b'])} | {res['c']['docs_per_s']:,} (acknowledged {res['c']['docs_per_s_acknowledged']:,}) | |")
    print(f"| Ember, file (WAL, synchronous=NORMAL) | | | {res['c_durable']['docs_per_s_acknowledged']:,} acknowledged | {ms(res['d_noindex'])} / {ms(res['d_index'])} |")
    print(f"| targets | {target_text('python.doc_listener_p50_us')} / {target_text('python.doc_listener_p99_us')} "
          f"| {target_text('python.query_listener_p50_us')} (p50) "
          f"| {target_text('python.bulk_memory_docs_per_s')} memory; {target_text('python.bulk_durable_docs_per_s')} file "
          f"| {target_text('python.query_scan_ms')} / {target_text('python.query_indexed_ms')} |")
    print(f"| verdict | {verdict('python.doc_listener_p50_us', res['a'].get('p50_us'))} / "
          f"{verdict('python.doc_listener_p99_us', res['a'].get('p99_us'))} "
          f"| {verdict('python.query_listener_p50_us', res['b'].get('p50_us'))} "
          f"| {verdict('python.bulk_memory_docs_per_s', res['c'].get('docs_per_s'))} memory; "
          f"{verdict('python.bulk_durable_docs_per_s', res['c_durable'].get('docs_per_s_acknowledged'))} file "
          f"| {verdict('python.query_scan_ms', ms(res['d_noindex']))} / {verdict('python.query_indexed_ms', ms(res['d_index']))} |")
    for name, r in peers.items():
        if name == "sqlite_memory_load.py":
            continue    # its one figure is in the table against SQLite below
        if "skipped" in r or "failed" in r:
            print(f"| {name} | {r.get('skipped') or r.get('failed')} | | | |")
            continue
        c = r.get("c_docs_per_s", "n/a")
        d = f"{ms(r.get('d_noindex'))} / {ms(r.get('d_index', 'n/a'))}"
        print(f"| {r.get('peer', name)} | {fmt_lat(r.get('a'))} | {fmt_lat(r.get('b'))} | {c:,} | {d} |" if isinstance(c, int)
              else f"| {r.get('peer', name)} | {fmt_lat(r.get('a'))} | {fmt_lat(r.get('b'))} | {c} | {d} |")
    print(f"\n(e) one durably acknowledged write, p50 / p99 us: {fmt_lat(res['e'])} (report only)")
    sqlite = next((r for name, r in peers.items() if name == "bench_sqlite.py" and "a" in r), None)
    print_vs_sqlite(res, sqlite, peers.get("sqlite_memory_load.py", {}))


def versus(fig, ember_value, peer_value):
    """How many times better Ember is than the peer (> 1: better) and its verdict, as text."""
    r = ratio(fig, ember_value, peer_value)
    return "n/a" if r is None else f"{r:.2f}x {verdict(fig, ember_value, peer_value)}"


def print_vs_sqlite(res, sqlite, sqlite_memory):
    """The durable embedded default against SQLite+apsw, same run; each row's target is in
    bench/targets.json (python.vs_sqlite.*)."""
    print("\nEmber with a path vs SQLite+apsw, this run (ratio: how many times better Ember is)")
    print("| workload | SQLite+apsw | Ember (path) | ratio | target |")
    print("|---|---|---|---|---|")
    if sqlite is None:
        print("| (the SQLite peer did not run: see above) | | | | |")
        return
    a, sa = res["a_durable"], sqlite.get("a", {})
    b, sb = res["b_durable"], sqlite.get("b", {})
    bulk = sqlite.get("apsw", sqlite)   # (c) and (d) through apsw
    smem = sqlite_memory.get("c_memory_docs_per_s")
    cmem = res["c"]["docs_per_s_acknowledged"]
    c, sc = res["c_durable"]["docs_per_s_acknowledged"], bulk.get("c_docs_per_s")
    dn, di = ms(res["d_noindex"]), ms(res["d_index"])
    sdn, sdi = ms(bulk.get("d_noindex")), ms(bulk.get("d_index"))
    for label, fig, peer_value, ember_value in (
            ("(a) write -> document listener, p50 us", "doc_listener_p50", sa.get("p50_us"), a["p50_us"]),
            ("(b) query listener (1k of 10k), p50 us", "query_listener_p50", sb.get("p50_us"), b["p50_us"]),
            ("(b) query listener (1k of 10k), p99 us", "query_listener_p99", sb.get("p99_us"), b["p99_us"]),
            ("(c) bulk insert 100k, durable, docs/s", "bulk_durable", sc, c),
            ("(c) bulk insert 100k, in memory, docs/s", "bulk_memory", smem, cmem),
            ("(d) group == 42 -> 1,000 dicts, no index, ms", "query_scan", sdn, dn),
            ("(d) with an index, ms", "query_indexed", sdi, di)):
        fig = "python.vs_sqlite." + fig
        print(f"| {label} | {peer_value} | {ember_value} | {versus(fig, ember_value, peer_value)} | {target_text(fig)} |")


if __name__ == "__main__":
    main()
