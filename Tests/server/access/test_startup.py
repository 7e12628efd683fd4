"""What `ember serve` refuses to start with (exit status 2, a `cannot start` log line and why).

Responsible for: each refusal: a non-loopback --host without --rules; a non-loopback host with
rules but neither TLS nor --insecure; a rules file with a syntax error (the reason has
line:column) or missing; a TLS certificate or key missing or not PEM; an HS256 secret or an
admin token shorter than 16 bytes (after trimming); a malformed JWKS. And the one that starts:
--host 0.0.0.0 --rules R --insecure --port 0 (its start line names the port it bound, which
answers, and says its tasks run on the event loops; rules decide there). Each run is bounded (guarded_server.launch) and stopped by
its process group.
"""
import json
import os
import re
import socket
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import certs  # noqa: E402
import jwts  # noqa: E402
from access_calls import Caller  # noqa: E402
from guarded_server import launch, rules, write_file  # noqa: E402

GOOD_RULES = rules("""\
    match /{document=**} {
      allow read, write: if false;
    }
""")
BAD_RULES = rules("""\
    match /notes/{id} {
      allow read: if request.auth != null &&;
    }
""")


@pytest.fixture(scope="module")
def files():
    """name -> path of every file the cases use."""
    with tempfile.TemporaryDirectory(prefix="ember-access-startup-") as d:
        out = {
            "rules": write_file(d, "good.rules", GOOD_RULES),
            "bad_rules": write_file(d, "bad.rules", BAD_RULES),
            "missing": os.path.join(d, "no-such-file.pem"),
            "garbage": write_file(d, "garbage.pem", "this is not a PEM file\n"),
            "secret": write_file(d, "secret", "0123456789abcdef0123456789abcdef\n"),
            "short_secret": write_file(d, "short-secret", "short-secret"),
            "short_after_trim": write_file(d, "padded-secret", "    0123456789      \n\n"),
            "short_admin": write_file(d, "short-admin", "admin-123"),
            "jwks_not_json": write_file(d, "jwks-not-json.json", "{\"keys\": [ not json"),
            "jwks_no_keys": write_file(d, "jwks-no-keys.json", json.dumps({"items": []})),
            "jwks_key_not_an_object": write_file(d, "jwks-key-str.json", json.dumps({"keys": ["rsa-1"]})),
        }
        if not jwts.CRYPTOGRAPHY_MISSING:
            jwk = jwts.KeyPair.rsa("rsa-1").jwk()
            del jwk["kid"]
            out["jwks_without_kid"] = write_file(d, "jwks-no-kid.json", json.dumps({"keys": [jwk]}))
        if not certs.CERTS_MISSING:
            os.mkdir(os.path.join(d, "tls"))
            out["cert"], out["key"] = certs.self_signed(os.path.join(d, "tls"))
        out["dir"] = d
        yield out


# name -> (arguments from `files`, a pattern the `cannot start` line must match)
REFUSALS = {
    "non_loopback_host_without_rules": (lambda f: ["--host", "0.0.0.0"], r"rules"),
    "non_loopback_host_rules_without_tls_or_insecure": (
        lambda f: ["--host", "0.0.0.0", "--rules", f["rules"]], r"TLS|tls|--insecure"),
    "rules_syntax_error": (lambda f: ["--rules", f["bad_rules"]], r"\b\d+:\d+\b"),
    "rules_file_missing": (lambda f: ["--rules", f["missing"]], r"no-such-file"),
    "tls_cert_missing": (lambda f: ["--tls-cert", f["missing"], "--tls-key", f["key"]], r"no-such-file|cert"),
    "tls_key_missing": (lambda f: ["--tls-cert", f["cert"], "--tls-key", f["missing"]], r"no-such-file|key"),
    "tls_cert_not_pem": (lambda f: ["--tls-cert", f["garbage"], "--tls-key", f["key"]], r"garbage|cert|PEM"),
    "tls_key_not_pem": (lambda f: ["--tls-cert", f["cert"], "--tls-key", f["garbage"]], r"garbage|key|PEM"),
    "jwt_secret_shorter_than_16_bytes": (
        lambda f: ["--rules", f["rules"], "--jwt-secret-file", f["short_secret"]], r"16"),
    "jwt_secret_short_once_trimmed": (
        lambda f: ["--rules", f["rules"], "--jwt-secret-file", f["short_after_trim"]], r"16"),
    "admin_token_shorter_than_16_bytes": (
        lambda f: ["--rules", f["rules"], "--admin-token-file", f["short_admin"]], r"16"),
    "jwks_not_json": (lambda f: ["--rules", f["rules"], "--jwks", f["jwks_not_json"]], r"JWKS|jwks|JSON|json"),
    "jwks_without_keys": (lambda f: ["--rules", f["rules"], "--jwks", f["jwks_no_keys"]], r"JWKS|jwks|keys"),
    "jwks_key_not_an_object": (lambda f: ["--rules", f["rules"], "--jwks", f["jwks_key_not_an_object"]],
                               r"JWKS|jwks|key"),
    "jwks_key_without_kid": (lambda f: ["--rules", f["rules"], "--jwks", f["jwks_without_kid"]], r"(?i)kid"),
}
NEEDS = {"tls_": ("cert", certs.CERTS_MISSING), "jwks_key_without_kid": ("jwks_without_kid", jwts.CRYPTOGRAPHY_MISSING)}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refuses_to_start(files, case):
    for prefix, (needed, why) in NEEDS.items():
        if case.startswith(prefix) and needed not in files:
            pytest.skip(why)
    args, reason = REFUSALS[case]
    got = launch(files["dir"], [*args(files), "--port", "0"], name=case)
    if got.srv is not None:
        got.srv.stop()
        pytest.fail(f"{case}: ember serve started (port {got.srv.port}) but should refuse:\n{got.srv.log_tail()}")
    assert got.status == 2, f"{case}: exit status {got.status}, expected 2:\n{got.log}"
    lines = [line for line in got.log.splitlines() if "cannot start" in line]
    assert lines, f"{case}: no `cannot start` line:\n{got.log}"
    assert re.search(reason, lines[0]), f"{case}: the reason does not match {reason!r}: {lines[0]}"


def test_rules_syntax_error_names_line_and_column(files):
    got = launch(files["dir"], ["--rules", files["bad_rules"], "--port", "0"], name="syntax")
    if got.srv is not None:
        got.srv.stop()
        pytest.fail("started with a rules syntax error")
    line = next((x for x in got.log.splitlines() if "cannot start" in x), "")
    m = re.search(r"\b(\d+):(\d+)\b", line)
    assert m, f"no line:column in {line!r}"
    # BAD_RULES' error is on its line 5 (`&&;`), whatever column the parser reports.
    assert m.group(1) == "5", f"the error is on line 5 of the rules file: {line!r}"


def test_any_address_with_rules_and_insecure_starts(files):
    # A non-loopback host needs tree rules too (or --no-database): locked ones here.
    tree_rules = os.path.join(files["dir"], "tree.rules.json")
    with open(tree_rules, "w") as f:
        f.write('{"rules": {".read": false, ".write": false}}')
    got = launch(files["dir"], ["--host", "0.0.0.0", "--rules", files["rules"], "--database-rules", tree_rules,
                                "--insecure", "--port", "0"], name="insecure")
    assert got.srv is not None, f"--host 0.0.0.0 --rules --insecure did not start: {got}"
    try:
        start = next(line for line in got.srv.log_tail().splitlines() if "event=start" in line)
        assert got.srv.port > 0, start
        assert "host=0.0.0.0" in start, start
        # The binary's Swift tasks run on its event loops (EventLoopExecutor, main.swift).
        assert "executor=event-loops" in start, start
        socket.create_connection(("127.0.0.1", got.srv.port), timeout=5).close()
        caller = Caller(f"127.0.0.1:{got.srv.port}")
        try:
            out = caller.get("notes/n1", None)
            assert out.code == "PERMISSION_DENIED", f"the rules (deny all) decide there: {out}"
        finally:
            caller.close()
    finally:
        got.srv.stop()
