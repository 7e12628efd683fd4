"""An `ember serve --rules` for the access tests, started and stopped; and runs that must start or exit.

Responsible for: writing the rules, an HS256 secret (with a trailing newline, which the server
trims), an admin token (and a JWKS when asked) into a directory and starting `ember serve --memory`
with them (../servers.py: bounded start, stopped by its process group), with a Caller
(access_calls.py) for it and its callers' tokens; and `launch`, one run of `ember serve ARGS` that
either prints its start line (port 0: the port it bound) or exits (its status and log).

    g = Guarded.start(tmpdir, rules("match /secret/{id} { allow read: if false; }"))
    g.seed({"secret/s1": {"owner": "victim"}})       # as the admin
    out = g.caller.get("secret/s1", g.token("victim"))
    g.stop()
    with Guarded.running(rules_text, seed={...}) as g: ...   # in a temporary directory, stopped after
    launch(tmpdir, ["--host", "0.0.0.0", "--port", "0"])    # Launched(exited with status 2: ...)
"""
import contextlib
import os
import re
import secrets
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "rules"))
import servers  # noqa: E402
import wire  # noqa: E402
from access_calls import Caller  # noqa: E402
from access_outcome import plain_fields  # noqa: E402
from jwts import claims, hs  # noqa: E402

RULES_HEADER = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
RULES_FOOTER = "  }\n}\n"


def rules(body):
    """A whole rules file around the `match` blocks in `body` (under /databases/{database}/documents)."""
    return RULES_HEADER + body + RULES_FOOTER


def require_ember():
    """Skips under EMBER_SERVER_TESTS=emulator-only; fails (never skips) without the binary."""
    if os.environ.get("EMBER_SERVER_TESTS") == "emulator-only":
        pytest.skip("EMBER_SERVER_TESTS=emulator-only")
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)


def write_file(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w" if isinstance(text, str) else "wb") as f:
        f.write(text)
    return path


class Guarded:
    """One `ember serve --memory --rules` with its secret, admin token and a Caller for it."""

    def __init__(self, srv, secret, admin, tmpdir):
        self.srv, self.secret, self.admin, self.tmpdir = srv, secret, admin, tmpdir
        self.caller = Caller(srv.host, admin)

    @classmethod
    def start(cls, tmpdir, rules_text, jwks_text=None, extra_args=()):
        require_ember()
        secret = secrets.token_hex(32).encode()
        admin = "admin-" + secrets.token_hex(16)
        args = ["--rules", write_file(tmpdir, "access.rules", rules_text),
                "--jwt-secret-file", write_file(tmpdir, "jwt-secret", secret + b"\n"),   # trimmed
                "--admin-token-file", write_file(tmpdir, "admin-token", admin)]
        if jwks_text is not None:
            args += ["--jwks", write_file(tmpdir, "jwks.json", jwks_text)]
        try:
            srv = servers.start_ember(tmpdir, memory=True, extra_args=args + list(extra_args))
        except servers.StartError as e:
            pytest.fail(str(e), pytrace=False)
        return cls(srv, secret, admin, tmpdir)

    @classmethod
    @contextlib.contextmanager
    def running(cls, rules_text, seed=None, **start_args):
        """A started server (seeded with `seed` as the admin) in a temporary directory, stopped
        and the directory removed when the block ends."""
        with tempfile.TemporaryDirectory(prefix="ember-access-") as d:
            server = cls.start(d, rules_text, **start_args)
            try:
                if seed:
                    server.seed(seed)
                yield server
            finally:
                server.stop()

    def token(self, uid, **overrides):
        """An HS256 token for `uid` signed with this server's secret."""
        return hs(claims(uid, **overrides), self.secret)

    def seed(self, docs):
        """Writes {path: data} as the admin (set, no precondition); asserts it was applied."""
        out = self.caller.commit([wire.write("set", self.caller.docs, p, d) for p, d in docs.items()], self.admin)
        assert out.code == "OK", f"seeding as the admin: {out}"

    def admin_get(self, path):
        """The document's fields as plain values, or None if it does not exist (read as the admin)."""
        out = self.caller.get(path, self.admin)
        if out.code == "NOT_FOUND":
            return None
        assert out.code == "OK", f"admin get {path}: {out}"
        return plain_fields(out.responses[0])

    def log(self):
        return self.srv.log_tail(2000)

    def stop(self):
        self.caller.close()
        self.srv.stop()


START_LINE = re.compile(r"\bevent=start\b.*\bport=(\d+)")
EXIT_STATUS = re.compile(r"exited during start-up \(status (-?\d+)\)")
LAUNCH_SECONDS = 20


class Launched:
    """What `ember serve ARGS` did: started (srv: a servers.Server on the port its start line
    printed; stop it) or exited (status, and its log)."""

    def __init__(self, srv=None, status=None, log=""):
        self.srv, self.status, self.log = srv, status, log

    def __repr__(self):
        return f"Launched(started on port {self.srv.port})" if self.srv else \
            f"Launched(exited with status {self.status}: {self.log.strip()!r})"


def _start_line_seen(server):
    with open(server.log_path, "rb") as f:
        for line in f.read().decode("utf-8", "replace").splitlines():
            m = START_LINE.search(line)
            if m:
                server.port = int(m.group(1))
                return True
    return False


def launch(tmpdir, args, name="ember"):
    """Runs `ember serve --memory ARGS` (ARGS should hold --port) as ../servers.py runs a server
    (own process group, watchdog) until its start line or its exit, at most LAUNCH_SECONDS."""
    require_ember()
    log = os.path.join(tmpdir, f"{name}.log")
    try:
        srv = servers.Server("ember serve", [servers.EMBER_BIN, "serve", "--memory", "--database-port", "0", *args], 0, log,
                             _start_line_seen, LAUNCH_SECONDS)
    except servers.StartError as e:
        m = EXIT_STATUS.search(str(e))
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        if not m:
            pytest.fail(f"ember serve {' '.join(args)} neither started nor exited: {e}", pytrace=False)
        return Launched(status=int(m.group(1)), log=text)
    return Launched(srv=srv)
