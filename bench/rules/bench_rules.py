"""What security rules cost a call: the same unary calls against `ember serve` without
rules, `ember serve --rules` with an HS256 ID token, and the Firestore emulator with the same
rules (unsigned token), measured in one run with the same gRPC client.

  get     GetDocument of a document the rule allows by `resource.data.owner == request.auth.uid`
  query   RunQuery `owner == <uid>`, limit 10 (the list rule decided for every possible result)
  commit  Commit of one set the create/update rule decides (`request.resource.data.owner == uid`)
  get()   GetDocument allowed by a rule that reads another document with get()

p50 / p99 in microseconds over N calls after a warm-up. Usage:
  bench_rules.py EMBER_BIN [--quick] [--json FILE]
Servers run under Tests/server/servers.py's watchdog and are stopped by their process group.
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "server"))
sys.path.insert(0, os.path.join(REPO, "Tests", "server", "access"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import servers  # noqa: E402
from benchlib import finish, log, markdown_table, pct  # noqa: E402
from jwts import claims, hs, unsigned  # noqa: E402

import grpc  # noqa: E402
from google.cloud.firestore_v1.services.firestore import FirestoreClient  # noqa: E402
from google.cloud.firestore_v1.services.firestore.transports import FirestoreGrpcTransport  # noqa: E402
from google.cloud.firestore_v1.types import common, document, firestore, query, write  # noqa: E402

PROJECT = "demo-ember"
DB = f"projects/{PROJECT}/databases/(default)"
ROOT = DB + "/documents"
RULES = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read: if request.auth != null && resource.data.owner == request.auth.uid;
      allow write: if request.auth != null && request.resource.data.owner == request.auth.uid;
    }
    match /members/{uid} { allow read: if false; }
    match /shared/{id} {
      allow read: if request.auth != null && get(/databases/$(database)/documents/members/$(request.auth.uid)).data.active == true;
    }
  }
}
"""
SECRET = b"bench-rules-secret-0123456789abcdef"
ADMIN = "bench-rules-admin-token-0123456789"


def value(x):
    return document.Value(string_value=x) if isinstance(x, str) else document.Value(boolean_value=x)


def client(host, bearer):
    md = [("google-cloud-resource-prefix", DB)] + ([("authorization", "Bearer " + bearer)] if bearer else [])
    return FirestoreClient(transport=FirestoreGrpcTransport(channel=grpc.insecure_channel(host))), md


def seed(host, admin_bearer):
    c, md = client(host, admin_bearer)
    writes = [write.Write(update=document.Document(name=f"{ROOT}/{path}", fields={k: value(v) for k, v in data.items()}))
              for path, data in (("notes/n1", {"owner": "alice"}), ("members/alice", {"active": True}),
                                 ("shared/s1", {"title": "x"}))]
    c.commit(request=firestore.CommitRequest(database=DB, writes=writes), metadata=md, timeout=10)


def calls(host, bearer):
    c, md = client(host, bearer)
    q = query.StructuredQuery(
        from_=[query.StructuredQuery.CollectionSelector(collection_id="notes")],
        where=query.StructuredQuery.Filter(field_filter=query.StructuredQuery.FieldFilter(
            field=query.StructuredQuery.FieldReference(field_path="owner"),
            op=query.StructuredQuery.FieldFilter.Operator.EQUAL, value=value("alice"))),
        limit=10)
    note = document.Document(name=f"{ROOT}/notes/n2", fields={"owner": value("alice")})
    return {
        "get": lambda: c.get_document(request=firestore.GetDocumentRequest(name=f"{ROOT}/notes/n1"), metadata=md, timeout=10),
        "query": lambda: list(c.run_query(request=firestore.RunQueryRequest(parent=ROOT, structured_query=q), metadata=md, timeout=10)),
        "commit": lambda: c.commit(request=firestore.CommitRequest(database=DB, writes=[write.Write(update=note)]), metadata=md, timeout=10),
        "get()": lambda: c.get_document(request=firestore.GetDocumentRequest(name=f"{ROOT}/shared/s1"), metadata=md, timeout=10),
    }


def measure(host, bearer, n, warmup):
    out = {}
    for name, call in calls(host, bearer).items():
        for _ in range(warmup):
            call()
        ts = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            call()
            ts.append((time.perf_counter_ns() - t0) / 1e3)
        out[name] = {"p50_us": round(pct(ts, 50)), "p99_us": round(pct(ts, 99))}
        log(f"   {name}: {out[name]}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ember_bin")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    n, warmup = (200, 20) if a.quick else (2000, 200)
    tmp = tempfile.mkdtemp(prefix="bench-rules-")
    files = {"rules": RULES, "secret": SECRET.decode(), "admin": ADMIN}
    for k, text in files.items():
        with open(os.path.join(tmp, k), "w") as f:
            f.write(text)
    servers.EMBER_BIN = a.ember_bin
    token = claims("alice", project=PROJECT)
    started, results = [], {}
    runs = [("ember serve, no rules", [], None, None),
            ("ember serve --rules, HS256 token", ["--rules", os.path.join(tmp, "rules"), "--jwt-secret-file",
                                                 os.path.join(tmp, "secret"), "--admin-token-file", os.path.join(tmp, "admin")],
             hs(token, SECRET), ADMIN)]
    try:
        for name, extra, bearer, admin in runs:
            log(f"== {name}")
            srv = servers.start_ember(tmp, memory=True, extra_args=extra)
            started.append(srv)
            seed(srv.host, admin or "owner")
            results[name] = measure(srv.host, bearer, n, warmup)
            srv.stop()
        why = servers.emulator_missing()
        if why:
            log(f"== emulator skipped: {why}")
        else:
            log("== Firestore emulator --rules, unsigned token")
            srv = servers.start_emulator(tmp, project=PROJECT, extra_args=[f"--rules={os.path.join(tmp, 'rules')}"])
            started.append(srv)
            seed(srv.host, "owner")
            results["emulator --rules, unsigned token"] = measure(srv.host, unsigned(token), n, warmup)
            srv.stop()
    finally:
        for srv in started:
            srv.stop()
    names = list(results)
    rows = [(call, *(f"{results[r][call]['p50_us']} / {results[r][call]['p99_us']}" for r in names))
            for call in ("get", "query", "commit", "get()")]
    print("\n" + markdown_table(("call, p50 / p99 us", *names), rows))
    base, ruled = results.get(runs[0][0]), results.get(runs[1][0])
    if base and ruled:
        print("\nrules + token cost per call (p50, ember serve): " +
              ", ".join(f"{c} {ruled[c]['p50_us'] - base[c]['p50_us']:+} us" for c in ("get", "query", "commit", "get()")))
    finish(servers, started, a.json, results)


if __name__ == "__main__":
    main()
