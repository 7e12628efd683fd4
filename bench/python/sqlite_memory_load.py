"""The SQLite+apsw peer of the in-memory bulk load: bench_sqlite.py's (c) on ":memory:" (its
documents, its size (QUICK=1 too), json.dumps and one executemany transaction). Run with the
peers' Python (it needs apsw) by bench_ember.py; prints `RESULT {json}`."""
import json
import os
import sys
import time
from pathlib import Path

import apsw

PEERS = Path(os.environ.get("PEERS_DIR", Path(__file__).resolve().parents[3] / "shared" / "peers"))
sys.path.insert(0, str(PEERS))
from bench_sqlite import N_C, make_doc  # noqa: E402  (the peer's own documents and count)


def main():
    best = None
    for _ in range(3):
        con = apsw.Connection(":memory:")
        con.execute("CREATE TABLE bulk (id TEXT PRIMARY KEY, data TEXT NOT NULL)")
        docs = [make_doc(i) for i in range(N_C)]
        t0 = time.perf_counter()
        con.execute("BEGIN")
        con.executemany("INSERT INTO bulk (id, data) VALUES (?, ?)",
                        ((f"b{i}", json.dumps(d)) for i, d in enumerate(docs)))
        con.execute("COMMIT")
        rate = N_C / (time.perf_counter() - t0)
        best = rate if best is None else max(best, rate)
        con.close()
    print("RESULT " + json.dumps({"c_memory_docs_per_s": round(best),
                                  "method": "apsw, :memory:, executemany in one transaction (json.dumps included), best of 3"}))


if __name__ == "__main__":
    main()
