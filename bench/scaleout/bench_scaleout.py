"""Several `ember serve` instances on one PostgreSQL (docs/scale-out.md), measured beside one
SQLite-backed `ember serve` in the same run:

  1. commits/s: closed-loop raw gRPC Commits of one small document each, from 16 coroutines
     per instance, with 1, 2 and 3 instances; the SQLite-backed server the same way
  2. a Commit on instance A -> the document_change on a raw Listen stream on instance B, p50 and
     p99 (several runs); beside it A -> A on PostgreSQL and on SQLite
  3. catch-up: an instance stopped while 100,000 commits are logged (through the schema's own
     `ember_commit`, called from SQL to save time), then started again: seconds until it
     answers a read of the last commit
  4. one write reaches 10,000 raw Listen streams spread over 3 instances (worker processes of
     bench/server/bench_server.py): until the last stream has its document_change

The targets are in bench/targets.json (scaleout.*). The PostgreSQL is a cluster of this run's own
(Tests/scripts/with_postgres.py), removed at the end; every server is started and stopped as in
bench/server (own process group, watchdog).

Usage: bench_scaleout.py [EMBER_BIN] [--quick] [--json FILE]
"""
import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench", "server"))
sys.path.insert(0, os.path.join(REPO, "Tests", "scripts"))
import bench_server as bs  # noqa: E402
from bench_server import CH_OPTS, COMMIT, MD, ROOT, Streams, commit_bytes, doc_target, now, servers  # noqa: E402
from benchlib import finish, log, markdown_table, pct, target_text, verdict  # noqa: E402
from with_postgres import Cluster  # noqa: E402

import grpc  # noqa: E402
from google.cloud.firestore_v1.types import firestore as fs_types  # noqa: E402

ListenResponse = fs_types.ListenResponse.pb()
STARTED = []
# How a server keeps the collection bench-catchup of projects/demo-ember/databases/(default).
PARENT = ".p:demo-ember/.d:(default)/bench-catchup"


def start(tmp, name, pg=None, database=False):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    extra = ("--postgres", pg.url) if pg else ()
    if not database:
        extra += ("--no-database",)
    srv = servers.start_ember(d, memory=pg is not None, extra_args=extra)
    STARTED.append(srv)
    return srv


# ------------------------------------------------------------------ 1. commits/s

def commits_per_s(hosts, seconds, per_host, tag):
    async def run():
        chans = [grpc.aio.insecure_channel(h, options=CH_OPTS) for h in hosts]
        calls = [c.unary_unary(COMMIT) for c in chans]
        count, lat, errors = [0], [], [0]
        deadline = now() + seconds

        async def committer(h, k):
            i = 0
            while now() < deadline:
                i += 1
                body = commit_bytes([(f"{ROOT}/bench-cps-{tag}/h{h}-c{k}-{i}", {"i": i})])
                t0 = now()
                try:
                    await calls[h](body, metadata=MD, timeout=30)
                except grpc.aio.AioRpcError:
                    errors[0] += 1
                    continue
                lat.append((now() - t0) * 1e3)
                count[0] += 1
        t0 = now()
        await asyncio.gather(*(committer(h, k) for h in range(len(hosts)) for k in range(per_host)))
        elapsed = now() - t0
        for c in chans:
            await c.close()
        return {"per_s": count[0] / elapsed, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "errors": errors[0]}
    return asyncio.run(run())


# ------------------------------------------------------------------ 2. A -> B

def a_to_b(host_a, host_b, samples, warmup, tag):
    async def run():
        name = f"{ROOT}/bench-ab-{tag}/d"
        ch = grpc.aio.insecure_channel(host_a, options=CH_OPTS)
        commit = ch.unary_unary(COMMIT)
        await commit(commit_bytes([(name, {"i": -1})]), metadata=MD, timeout=30)
        state = {"want": None, "t": None, "current": False}
        ev = asyncio.Event()

        def on(_, t, m):
            r = ListenResponse.FromString(m)
            which = r.WhichOneof("response_type")
            if which == "document_change":
                if r.document_change.document.fields["i"].integer_value == state["want"] and state["t"] is None:
                    state["t"] = t
                    ev.set()
            elif which == "target_change" and r.target_change.target_change_type == bs.CURRENT:
                state["current"] = True
                ev.set()
        s = Streams(host_b, 1)
        await s.open([doc_target(1, name)], on)
        await asyncio.wait_for(ev.wait(), 30)
        await asyncio.sleep(0.2)
        out, lost = [], 0
        for i in range(warmup + samples):
            ev.clear()
            state.update(want=i, t=None)
            body = commit_bytes([(name, {"i": i})])
            t0 = now()
            await commit(body, metadata=MD, timeout=30)
            try:
                await asyncio.wait_for(ev.wait(), 10)
            except asyncio.TimeoutError:
                lost += 1
                continue
            if i >= warmup:
                out.append((state["t"] - t0) * 1e3)
            await asyncio.sleep(0.003)
        await s.close()
        await ch.close()
        return {"p50": pct(out, 50), "p99": pct(out, 99), "n": len(out), "lost": lost}
    return asyncio.run(run())


# ------------------------------------------------------------------ 3. catch-up

def psql(pg, sql):
    r = subprocess.run([os.path.join(pg.bindir, "psql"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "ember", "-d", "ember",
                           "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"psql: {r.stderr}")
    return r.stdout.strip()


def catch_up(tmp, pg, n):
    a = start(tmp, "catchup-a", pg)
    c = start(tmp, "catchup-c", pg)
    ch = grpc.insecure_channel(a.host, options=CH_OPTS)
    ch.unary_unary(COMMIT)(commit_bytes([(f"{ROOT}/bench-catchup/seed", {"i": 1})]), metadata=MD, timeout=30)
    ch.close()
    c.stop()
    t0 = now()
    # In transactions of 5,000: one transaction updating the log's head 100,000 times would
    # leave each FOR UPDATE a longer chain of row versions to walk.
    for start_at in range(1, n + 1, 5000):
        psql(pg, f"""
            SELECT count(*) FROM generate_series({start_at}, {min(n, start_at + 4999)}) g, LATERAL ember_commit(
              (SELECT db_id FROM ember_log_head WHERE name = 'ember'), 0,
              ARRAY['{PARENT}'], ARRAY['d' || g], ARRAY['bench-catchup'],
              ARRAY[(SELECT fields FROM ember_documents WHERE parent = '{PARENT}' AND id = 'seed')],
              ARRAY[0::smallint], ARRAY[-2::bigint])""")
    logged_s = now() - t0
    t1 = now()
    c2 = start(tmp, "catchup-c2", pg)
    started_s = now() - t1
    get = grpc.insecure_channel(c2.host, options=CH_OPTS)
    body = fs_types.GetDocumentRequest.pb()(name=f"{ROOT}/bench-catchup/d{n}").SerializeToString()
    get.unary_unary("/google.firestore.v1.Firestore/GetDocument")(body, metadata=MD, timeout=60)
    read_s = now() - t1
    get.close()
    rss = bs.rss_kb(c2.process.pid)
    for s in (a, c2):
        s.stop()
    return {"commits": n, "logged_s": logged_s, "start_s": started_s, "read_s": read_s, "rss_mb": rss / 1024 if rss else None}


# ------------------------------------------------------------------ 4. 10,000 listeners

def fanout(hosts, total, procs_per_host, channels, rounds):
    doc = "bench-scale-fan/doc"
    per = -(-total // (len(hosts) * procs_per_host))   # at least `total` in all
    w = bs.Workers([("fanout", h, per, channels, ROOT + "/" + doc) for h in hosts for _ in range(procs_per_host)])
    ch = grpc.insecure_channel(hosts[0], options=CH_OPTS)
    commit = ch.unary_unary(COMMIT)
    commit(commit_bytes([(ROOT + "/" + doc, {"v": 0})]), metadata=MD, timeout=30)
    nprocs = len(hosts) * procs_per_host
    try:
        if w.expect("READY", nprocs, 300) is None:
            log("  fan-out: not every stream became current within 300 s")
            return None
        out, first, mid = [], [], []
        for r in range(-2, rounds + 1):
            if r == 0:
                continue
            time.sleep(0.5)
            t0 = now()
            commit(commit_bytes([(ROOT + "/" + doc, {"v": r})]), metadata=MD, timeout=30)
            done = w.expect("DONE", nprocs, 60, pick=lambda p, r=r: int(p[1]) == r)
            if done is None:
                log(f"  fan-out round {r}: not every stream received the write within 60 s")
                continue
            if r < 0:
                continue
            times = sorted((float(x) - t0) * 1e3 for p in done for x in p[2:])
            out.append(times[-1])
            first.append(times[0])
            mid.append(pct(times, 50))
        return {"median": pct(out, 50), "max": max(out) if out else None, "first": pct(first, 50), "mid": pct(mid, 50),
                "rounds": len(out), "streams": per * nprocs}
    finally:
        w.stop()
        ch.close()


# ------------------------------------------------------------------ the run

def fmt(x, digits=2):
    return "n/a" if x is None else f"{x:,.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ember_bin", nargs="?", default=os.path.join(REPO, ".build-bench", "release", "ember"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    opts = ap.parse_args()
    servers.EMBER_BIN = os.path.abspath(opts.ember_bin)
    q = opts.quick
    seconds = 3 if q else 8
    samples = 100 if q else 400
    runs = 2 if q else 5
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-scaleout-") as tmp, Cluster() as pg:
        log("== SQLite-backed ember serve: commits/s, A -> A")
        lite = start(tmp, "sqlite")
        results["cps_sqlite"] = commits_per_s([lite.host], seconds, 16, "sqlite")
        results["ab_sqlite"] = a_to_b(lite.host, lite.host, samples, 30, "sqlite")
        lite.stop()
        insts = [start(tmp, f"pg{i}", pg) for i in range(3)]
        for n in (1, 2, 3):
            log(f"== PostgreSQL: commits/s through {n} instance(s)")
            results[f"cps_pg{n}"] = commits_per_s([s.host for s in insts[:n]], seconds, 16, f"pg{n}")
        log("== PostgreSQL: A -> A and A -> B")
        results["ab_pg_same"] = a_to_b(insts[0].host, insts[0].host, samples, 30, "same")
        results["ab_runs"] = [a_to_b(insts[0].host, insts[1].host, samples, 30, f"ab{r}") for r in range(runs)]
        log("== PostgreSQL: 10,000 listeners over 3 instances")
        results["fan"] = fanout([s.host for s in insts], 2_000 if q else 10_000, 2, 10, 3 if q else 7)
        for s in insts:
            s.stop()
        log("== PostgreSQL: catch-up")
        results["catchup"] = catch_up(tmp, pg, 10_000 if q else 100_000)

    runs_ab = results["ab_runs"]
    p50s = [r["p50"] for r in runs_ab if r["p50"] is not None]
    p99s = [r["p99"] for r in runs_ab if r["p99"] is not None]
    ab50, ab99 = pct(p50s, 50), pct(p99s, 50)
    fan = results["fan"] or {}
    cu = results["catchup"]
    rows = [
        ("commits/s, SQLite ember serve (16 committers)", "", fmt(results["cps_sqlite"]["per_s"], 0), ""),
    ]
    for n in (1, 2, 3):
        r = results[f"cps_pg{n}"]
        rows.append((f"commits/s, {n} instance(s) on PostgreSQL ({16 * n} committers)", "",
                     f"{fmt(r['per_s'], 0)} (commit p50 {fmt(r['p50_ms'])} ms, errors {r['errors']})", ""))
    rows += [
        ("A -> B p50, ms (median of runs)", target_text("scaleout.a_to_b_p50_ms"), fmt(ab50), verdict("scaleout.a_to_b_p50_ms", ab50)),
        ("A -> B p99, ms (median of runs)", target_text("scaleout.a_to_b_p99_ms"), fmt(ab99), verdict("scaleout.a_to_b_p99_ms", ab99)),
        ("A -> B per run p50 / p99, ms", "", " ".join(f"{fmt(r['p50'])}/{fmt(r['p99'])}" for r in runs_ab), ""),
        ("A -> A on PostgreSQL p50 / p99, ms", "", f"{fmt(results['ab_pg_same']['p50'])}/{fmt(results['ab_pg_same']['p99'])}", ""),
        ("A -> A on SQLite p50 / p99, ms", "", f"{fmt(results['ab_sqlite']['p50'])}/{fmt(results['ab_sqlite']['p99'])}", ""),
        (f"{fan.get('streams', 0):,} listeners over 3 instances, last, ms", target_text("scaleout.fanout_10000_ms"),
         f"{fmt(fan.get('median'))} (first {fmt(fan.get('first'))}, median stream {fmt(fan.get('mid'))})",
         verdict("scaleout.fanout_10000_ms", fan.get("median")) if fan.get("streams", 0) >= 10_000 else "n/a (quick)"),
        (f"catch-up after {cu['commits']:,} commits: start, s", "", fmt(cu["start_s"]), ""),
        ("catch-up: first read of the last commit, s", "", f"{fmt(cu['read_s'])} (RSS {fmt(cu['rss_mb'], 0)} MB; log written in {fmt(cu['logged_s'], 1)} s)", ""),
    ]
    print(markdown_table(("figure", "target", "measured", "verdict"), rows))
    finish(servers, STARTED, opts.json, results)


if __name__ == "__main__":
    main()
