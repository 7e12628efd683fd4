"""Records what the Firestore emulator decides for each rules case, for EmberRules to agree with.

Responsible for: starting the emulator (127.0.0.1 only, bounded start, stopped by its process
group) with Tests/EmberRulesTests/Resources/differential.rules, and for each case in cases.py:
clearing the database, writing the seed as `Bearer owner` (which bypasses rules), then sending
the case's request over the emulator's REST API as an unauthenticated client or with an
unsigned ID token (`alg: none`, as the emulator docs describe), and recording allow (HTTP 200,
or 404 for a get the rules allowed) or deny (403 PERMISSION_DENIED). Anything else fails.
A list is a runQuery (with the case's filters and limit; with `"group": true` a collection-group
query under the documents root), a commit case one :commit with all its writes; a listen case goes over gRPC (grpc_rules.py: REST has no Listen), on the same emulator.

    /work/main/.venv-server/bin/python Tests/server/rules/record_rules_cases.py          # rewrite the JSON
    /work/main/.venv-server/bin/python Tests/server/rules/record_rules_cases.py --check  # compare only

The Swift side is Tests/EmberRulesTests/DifferentialTests.swift, which evaluates the same cases
with EmberRules and must reach the recorded outcomes.
"""
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RESOURCES = os.path.join(ROOT, "Tests", "EmberRulesTests", "Resources")
RULES = os.path.join(RESOURCES, "differential.rules")
OUT = os.path.join(RESOURCES, "differential_cases.json")
REQUEST_SECONDS = 10

import servers  # noqa: E402
import wire  # noqa: E402
from cases import CASES, SEED, unpack  # noqa: E402
from tokens import PROJECT, claims_of, unsigned_token  # noqa: E402


class Emulator:
    def __init__(self, host):
        self.host = host
        self.db = f"projects/{PROJECT}/databases/(default)/documents"
        self._grpc = None

    def call(self, method, url, body=None, bearer=None):
        req = urllib.request.Request(f"http://{self.host}{url}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
        req.add_header("Content-Type", "application/json")
        if bearer:
            req.add_header("Authorization", f"Bearer {bearer}")
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_SECONDS) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def reset(self):
        status, text = self.call("DELETE", f"/emulator/v1/{self.db}")
        assert status == 200, (status, text)
        writes = [wire.write("set", self.db, p, d) for p, d in SEED.items()]
        status, text = self.call("POST", f"/v1/{self.db}:commit", {"writes": writes}, bearer="owner")
        assert status == 200, (status, text)

    def listen(self, case):
        """A listen case's outcome, over gRPC (its own answer format: "allow", "deny", ...)."""
        if self._grpc is None:
            import grpc_rules
            self._grpc = grpc_rules.RulesServer(self.host, unsigned_token, "owner")
        return self._grpc.run(case)

    def close(self):
        if self._grpc is not None:
            self._grpc.close()

    def run(self, case):
        method, path = case["method"], case["path"]
        bearer = unsigned_token(case["auth"]) if case["auth"] else None
        if method == "get":
            return self.call("GET", f"/v1/{self.db}/{path}", bearer=bearer)
        if method == "list":
            parent, sq = wire.case_query(case)
            url = f"/v1/{self.db}/{parent}:runQuery" if parent else f"/v1/{self.db}:runQuery"
            return self.call("POST", url, {"structuredQuery": sq}, bearer=bearer)
        writes = [wire.write(op, self.db, p, data) for op, p, data in wire.case_writes(case)]
        return self.call("POST", f"/v1/{self.db}:commit", {"writes": writes}, bearer=bearer)


def outcome(method, status, text):
    if status == 200 or (status == 404 and method == "get"):
        return "allow"
    if status == 403 and "PERMISSION_DENIED" in text:
        return "deny"
    raise AssertionError(f"unexpected answer {status}: {text[:300]}")


def record():
    with tempfile.TemporaryDirectory() as tmp:
        srv = servers.start_emulator(tmp, project=PROJECT, extra_args=[f"--rules={RULES}"])
        emu = Emulator(srv.host)
        try:
            results = []
            for case in map(unpack, CASES):
                emu.reset()
                if case["method"] == "listen":
                    expected = emu.listen(case)
                    assert expected in ("allow", "deny"), f"{case['name']}: {expected}"
                else:
                    try:
                        expected = outcome(case["method"], *emu.run(case))
                    except AssertionError as e:
                        raise AssertionError(f"{case['name']}: {e}") from None
                auth = case["auth"]
                results.append(dict(case, expected=expected,
                                    auth=None if auth is None else {"uid": auth["uid"], "token": claims_of(auth)}))
        finally:
            try:
                emu.close()
            finally:
                srv.stop()
    return {"rules": "differential.rules", "seed": SEED, "cases": results}


def main():
    started = time.monotonic()
    got = record()
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if "--check" in sys.argv:
        with open(OUT) as f:
            if f.read() != text:
                print("the emulator's outcomes differ from", OUT, file=sys.stderr)
                return 1
        print(f"{len(got['cases'])} cases agree with {OUT}")
    else:
        with open(OUT, "w") as f:
            f.write(text)
        allow = sum(c["expected"] == "allow" for c in got["cases"])
        print(f"recorded {len(got['cases'])} cases ({allow} allow) in {time.monotonic() - started:.1f}s to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
