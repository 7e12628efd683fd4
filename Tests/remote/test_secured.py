"""Ember's Python client of a secured `ember serve` (issue 14): TLS with the server's own
certificate (`ssl_ca_file`), security rules, and ID tokens (`auth_token`). The owner's client
reads and writes her note; an anonymous client's listener on it gets `on_error` with
PermissionDeniedError (the server removed the target) while its listener on a public document
goes on; its write is refused; a client that does not trust the certificate never reaches
the server (its write stays pending).

The server is the built binary ($EMBER_BIN) on a free port under servers.py's watchdog."""
import os
import queue
import sys
import time

import pytest

import ember
import servers

sys.path.insert(0, os.path.join(os.path.dirname(servers.__file__), "access"))
from certs import self_signed  # noqa: E402
from jwts import claims, hs  # noqa: E402

RULES = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read, update: if request.auth != null && resource.data.owner == request.auth.uid;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
    }
    match /public/{id} { allow read; allow write: if request.auth != null; }
  }
}
"""
SECRET = b"the-python-secret-for-issue-14-x"
WAIT = 15


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    d = tmp_path_factory.mktemp("secured")
    cert, key = self_signed(str(d))
    files = {"rules": RULES, "secret": SECRET.decode()}
    for name, text in files.items():
        with open(d / name, "w") as f:
            f.write(text)
    port = servers.free_port()
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)
    srv = servers.Server("ember serve", [servers.EMBER_BIN, "serve", "--memory", "--port", str(port), "--database-port", "0",
                                         "--rules", str(d / "rules"), "--jwt-secret-file", str(d / "secret"),
                                         "--tls-cert", cert, "--tls-key", key],
                         port, str(d / "ember.log"), lambda s: "event=start" in s.log_tail(4000),
                         servers.EMBER_START_SECONDS)
    yield srv, cert
    srv.stop()


def client(srv, cert, uid=None, trusted=True):
    token = hs(claims(uid, project="demo-ember"), SECRET) if uid else None
    return ember.Client(host=f"127.0.0.1:{srv.port}", ssl=True, ssl_ca_file=cert if trusted else None, auth_token=token)


def test_owner_reads_and_writes_anonymous_is_refused_by_the_rules(secured):
    srv, cert = secured
    with client(srv, cert, "alice") as alice, client(srv, cert) as anon:
        alice.document("notes/a").set({"owner": "alice", "text": "hers"})
        alice.document("public/p").set({"title": "hello"})
        assert alice.document("notes/a").get().to_dict() == {"owner": "alice", "text": "hers"}

        errors, public = queue.Queue(), queue.Queue()
        watch = anon.document("notes/a").on_snapshot(lambda docs, changes, t: errors.put(("snapshot", docs)),
                                                     on_error=lambda e: errors.put(("error", e)))
        shown = anon.document("public/p").on_snapshot(lambda docs, changes, t: public.put(docs[0].exists))
        try:
            kind, value = errors.get(timeout=WAIT)
            while kind == "snapshot" and not value[0].exists and value[0].metadata.from_cache:
                kind, value = errors.get(timeout=WAIT)   # a first snapshot from the empty cache
            assert kind == "error" and isinstance(value, ember.PermissionDeniedError), (kind, value)
            deadline = time.monotonic() + WAIT
            while public.get(timeout=WAIT) is not True:
                assert time.monotonic() < deadline
        finally:
            watch.unsubscribe()
            shown.unsubscribe()
        with pytest.raises(ember.PermissionDeniedError):
            anon.document("notes/b").set({"owner": "alice"})
        with pytest.raises(ember.PermissionDeniedError):
            alice.document("notes/c").set({"owner": "bob"})


def test_a_client_that_does_not_trust_the_certificate_never_reaches_the_server(secured):
    srv, cert = secured
    with client(srv, cert, "alice", trusted=False) as untrusting:
        untrusting.REMOTE_WRITE_WAIT = 2
        result = untrusting.document("public/q").set({"title": "never"})
        assert result.update_time is None, "a write acknowledged without a trusted TLS connection"
    with client(srv, cert, "alice") as alice:
        assert not alice.document("public/q").get().exists
