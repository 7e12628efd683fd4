"""Records what the Firestore emulator decides for each rules case, for EmberRules to agree with.

Responsible for: starting the emulator (127.0.0.1 only, bounded start, stopped by its process
group) with Tests/EmberRulesTests/Resources/differential.rules, and for each case in cases.py:
clearing the database, writing the seed as `Bearer owner` (which bypasses rules), then sending
the case's request over the emulator's REST API as an unauthenticated client or with an
unsigned ID token (`alg: none`, as the emulator docs describe), and recording allow (HTTP 200,
or 404 for a get the rules allowed) or deny (403 PERMISSION_DENIED). Anything else fails.

    /work/main/.venv-server/bin/python Tests/server/rules/record_rules_cases.py          # rewrite the JSON
    /work/main/.venv-server/bin/python Tests/server/rules/record_rules_cases.py --check  # compare only

The Swift side is Tests/EmberRulesTests/DifferentialTests.swift, which evaluates the same cases
with EmberRules and must reach the recorded outcomes.
"""
import base64
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RESOURCES = os.path.join(ROOT, "Tests", "EmberRulesTests", "Resources")
RULES = os.path.join(RESOURCES, "differential.rules")
OUT = os.path.join(RESOURCES, "differential_cases.json")
PROJECT = "demo-rules"
REQUEST_SECONDS = 10

import servers  # noqa: E402
from cases import CASES, SEED  # noqa: E402


def to_rest(v):
    if v is None:
        return {"nullValue": None}
    if isinstance(v, bool):
        return {"booleanValue": v}
    if isinstance(v, int):
        return {"integerValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [to_rest(x) for x in v]}}
    if isinstance(v, dict):
        return {"mapValue": {"fields": {k: to_rest(x) for k, x in v.items()}}}
    raise TypeError(v)


def b64(obj):
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()


def claims_of(auth):
    """Every claim of the token; the Swift test gives the same map to request.auth.token."""
    now = 1_700_000_000
    claims = {"iss": f"https://securetoken.google.com/{PROJECT}", "aud": PROJECT, "sub": auth["uid"],
              "user_id": auth["uid"], "iat": now, "auth_time": now, "exp": 4_102_444_800,
              "firebase": {"sign_in_provider": "custom", "identities": {}}}
    claims.update(auth.get("claims", {}))
    return claims


def unsigned_token(auth):
    return b64({"alg": "none", "typ": "JWT"}) + "." + b64(claims_of(auth)) + "."


class Emulator:
    def __init__(self, host):
        self.host = host
        self.db = f"projects/{PROJECT}/databases/(default)/documents"

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
        writes = [{"update": {"name": f"{self.db}/{p}", "fields": to_rest(d)["mapValue"]["fields"]}} for p, d in SEED.items()]
        status, text = self.call("POST", f"/v1/{self.db}:commit", {"writes": writes}, bearer="owner")
        assert status == 200, (status, text)

    def run(self, method, path, auth, data):
        bearer = unsigned_token(auth) if auth else None
        name = f"{self.db}/{path}"
        if method == "get":
            return self.call("GET", f"/v1/{name}", bearer=bearer)
        if method == "list":
            parent, _, coll = path.rpartition("/")
            url = f"/v1/{self.db}/{parent}:runQuery" if parent else f"/v1/{self.db}:runQuery"
            return self.call("POST", url, {"structuredQuery": {"from": [{"collectionId": coll}]}}, bearer=bearer)
        if method == "delete":
            write = {"delete": name}
        else:
            write = {"update": {"name": name, "fields": to_rest(data)["mapValue"]["fields"]},
                     "currentDocument": {"exists": method == "update"}}
        return self.call("POST", f"/v1/{self.db}:commit", {"writes": [write]}, bearer=bearer)


def outcome(method, status, text):
    if status == 200 or (status == 404 and method == "get"):
        return "allow"
    if status == 403 and "PERMISSION_DENIED" in text:
        return "deny"
    raise AssertionError(f"unexpected answer {status}: {text[:300]}")


def record():
    with tempfile.TemporaryDirectory() as tmp:
        srv = servers.start_emulator(tmp, project=PROJECT, extra_args=[f"--rules={RULES}"])
        try:
            emu = Emulator(srv.host)
            results = []
            for name, method, path, auth, data in CASES:
                emu.reset()
                status, text = emu.run(method, path, auth, data)
                entry = {"name": name, "method": method, "path": path,
                         "auth": None if auth is None else {"uid": auth["uid"], "token": claims_of(auth)},
                         "data": data, "expected": outcome(method, status, text)}
                results.append(entry)
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
