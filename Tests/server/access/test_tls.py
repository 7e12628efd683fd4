"""`ember serve --tls-cert --tls-key` speaks TLS: trusted clients call it, plaintext ones cannot.

Responsible for: a self-signed certificate for 127.0.0.1/localhost made at test time (certs.py);
`ember serve` on loopback with it: a gRPC client trusting that certificate writes and reads (by
IP, and by the name localhost through grpc.ssl_target_name_override), while a plaintext client
and a TLS client that does not trust the certificate both fail; and --host 0.0.0.0 --rules with
TLS (no --insecure) starts, serves an admin over TLS and decides the others by its rules.
"""
import os
import secrets
import sys
import tempfile

import grpc
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import certs  # noqa: E402
from access_calls import Caller  # noqa: E402
from guarded_server import launch, require_ember, rules, write_file  # noqa: E402

import servers  # noqa: E402  (.., put on sys.path by guarded_server)
import wire  # noqa: E402  (../rules, put on sys.path by guarded_server)

DENY_ALL = rules("""\
    match /{document=**} {
      allow read, write: if false;
    }
""")


@pytest.fixture(scope="module")
def tls():
    """(tmpdir, cert path, key path, the certificate's bytes)."""
    if certs.CERTS_MISSING:
        pytest.fail(certs.CERTS_MISSING, pytrace=False)
    with tempfile.TemporaryDirectory(prefix="ember-access-tls-") as d:
        cert, key = certs.self_signed(d)
        with open(cert, "rb") as f:
            yield d, cert, key, f.read()


@pytest.fixture(scope="module")
def srv(tls):
    require_ember()
    d, cert, key, _ = tls
    try:
        server = servers.start_ember(d, memory=True, extra_args=["--tls-cert", cert, "--tls-key", key])
    except servers.StartError as e:
        pytest.fail(str(e), pytrace=False)
    yield server
    server.stop()


def tls_caller(host, root, name_override=None):
    options = [("grpc.ssl_target_name_override", name_override)] if name_override else []
    channel = grpc.secure_channel(host, grpc.ssl_channel_credentials(root_certificates=root), options=options)
    return Caller(host, channel=channel)


def write_and_read(caller, bearer=None):
    value = secrets.token_hex(6)
    out = caller.commit([wire.write("set", caller.docs, "tls/t1", {"v": value})], bearer)
    assert out.code == "OK", f"Commit over TLS: {out}"
    out = caller.get("tls/t1", bearer)
    assert out.code == "OK" and out.leaks(value), f"GetDocument over TLS: {out}"


def test_start_line_says_tls(srv):
    start = next((line for line in srv.log_tail().splitlines() if "event=start" in line), "")
    assert start and "tls=off" not in start, start


@pytest.mark.parametrize("override", [None, "localhost"], ids=["by_ip", "name_override_localhost"])
def test_client_trusting_the_certificate_calls(srv, tls, override):
    caller = tls_caller(srv.host, tls[3], override)
    try:
        write_and_read(caller)
    finally:
        caller.close()


def test_plaintext_client_cannot_call(srv):
    caller = Caller(srv.host)
    try:
        out = caller.get("tls/t1", None)
        assert out.code != "OK" and not out.responses, f"a plaintext client got an answer over TLS: {out}"
    finally:
        caller.close()


def test_client_not_trusting_the_certificate_cannot_call(srv):
    caller = Caller(srv.host, channel=grpc.secure_channel(srv.host, grpc.ssl_channel_credentials()))
    try:
        out = caller.get("tls/t1", None)
        assert out.code != "OK" and not out.responses, f"an untrusted self-signed certificate was accepted: {out}"
    finally:
        caller.close()


def test_any_address_with_rules_and_tls_starts_without_insecure(tls):
    d, cert, key, root = tls
    admin = "admin-" + secrets.token_hex(16)
    got = launch(d, ["--host", "0.0.0.0", "--rules", write_file(d, "deny.rules", DENY_ALL),
                     "--database-rules", write_file(d, "tree.rules.json", '{"rules": {".read": false}}'),
                     "--admin-token-file", write_file(d, "admin-token", admin),
                     "--tls-cert", cert, "--tls-key", key, "--port", "0"], name="any-address-tls")
    assert got.srv is not None, f"--host 0.0.0.0 --rules with TLS did not start: {got}"
    try:
        host = f"127.0.0.1:{got.srv.port}"
        caller = tls_caller(host, root)
        try:
            write_and_read(caller, admin)
            out = caller.get("tls/t1", None)
            assert out.code == "PERMISSION_DENIED", f"anonymous over TLS under deny-all rules: {out}"
        finally:
            caller.close()
        plain = Caller(host)
        try:
            out = plain.get("tls/t1", admin)
            assert out.code != "OK" and not out.responses, f"plaintext answered on the TLS port: {out}"
        finally:
            plain.close()
    finally:
        got.srv.stop()
