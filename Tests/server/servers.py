"""Starting and stopping the two servers the server tests compare, and clients for them.

Responsible for: the Cloud Firestore emulator (`gcloud beta emulators firestore start`, a
gcloud -> bash -> java process group of ~250 MB) and `ember serve`, each from start to stop, so
that neither ever outlives the test run; and google-cloud-firestore clients pointed at either.

    srv = start_emulator(tmpdir)          # bounded wait (60 s) until it answers
    db = client(srv.host, project="demo-x")
    ...
    srv.stop()                            # SIGTERM to the group, SIGKILL after 10 s

Each server runs in its own session (so its own process group, pgid == pid) and is stopped by
that group id. Beside it runs a small watchdog (`sh`) whose stdin is the read end of a pipe whose
only write end this process holds (Python pipes are close-on-exec): when this process closes it
in stop(), or dies in any way (pytest killed, SIGKILL, even left unreaped as a zombie), the
watchdog reads end of file and stops the group itself. The same design as the Swift suite's
Tests/EmberCoreTests/Emulator/FirestoreEmulator.swift, checked by Tests/scripts/emulator_hygiene.py.
"""
import os
import shutil
import signal
import socket
import subprocess
import uuid
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMBER_BIN = os.environ.get("EMBER_BIN", os.path.join(ROOT, ".build", "debug", "ember"))

EMULATOR_START_SECONDS = 60
EMBER_START_SECONDS = 30
STOP_GRACE_SECONDS = 10

# The watchdog: ignores the terminal's signals (a Ctrl-C reaches pytest, whose death then closes
# the pipe), reads the group id from its stdin, waits for end of file, then stops the group: TERM,
# KILL after a bound.
_WATCHDOG = (
    "trap '' INT HUP QUIT; read pg || exit 0; case $pg in ''|*[!0-9]*) exit 0;; esac; "
    "while read line; do :; done; "
    "kill -TERM -$pg 2>/dev/null; "
    "i=0; while [ $i -lt 20 ]; do kill -0 -$pg 2>/dev/null || exit 0; sleep 0.5; i=$((i+1)); done; "
    "kill -KILL -$pg 2>/dev/null; exit 0"
)


class StartError(RuntimeError):
    pass


def free_port():
    """A port nothing listens on now (bound to port 0 on 127.0.0.1, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_members(pgid):
    """The live (not zombie) processes of group `pgid`, as 'pid (comm)' strings, read from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        close = stat.rindex(")")
        fields = stat[close + 2:].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            out.append(stat[:close + 1])
    return out


class Server:
    """One command in its own process group, under a watchdog, with a log file.

    `ready` is called (with this object) until it returns True, at most `ready_seconds`; the
    constructor raises StartError (after stopping everything) if the process exits first or the
    time runs out."""

    def __init__(self, name, command, port, log_path, ready, ready_seconds, env=None):
        self.name = name
        self.command = command
        self.port = port
        self.log_path = log_path
        self._stopped = False
        self._log = open(log_path, "wb")
        # The watchdog starts first and learns the group id once the server runs.
        read_end, self._pipe = os.pipe()
        try:
            self.watchdog = subprocess.Popen(["sh", "-c", _WATCHDOG], stdin=read_end, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, start_new_session=True)
        finally:
            os.close(read_end)
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log,
                                            stderr=subprocess.STDOUT, start_new_session=True, env=env)
        except OSError as e:
            os.close(self._pipe)
            self.watchdog.wait()
            self._log.close()
            raise StartError(f"{name}: cannot run {command[0]}: {e}") from None
        self.pgid = self.process.pid
        os.write(self._pipe, f"{self.pgid}\n".encode())
        deadline = time.monotonic() + ready_seconds
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise StartError(f"{name} exited during start-up (status {self.process.returncode}):\n"
                                 f"{' '.join(command)}\n{self.log_tail()}")
            try:
                if ready(self):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise StartError(f"{name} did not answer on port {port} within {ready_seconds} s:\n"
                                 f"{' '.join(command)}\n{self.log_tail()}")
            time.sleep(0.2)

    @property
    def host(self):
        return f"127.0.0.1:{self.port}"

    def log_tail(self, n=3000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return "(no log)"

    def stop(self):
        """SIGTERM to the group, SIGKILL to what is left after STOP_GRACE_SECONDS; then the
        watchdog. Idempotent; returns once no live process of the group remains."""
        if self._stopped:
            return
        self._stopped = True
        try:
            os.killpg(self.pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None and not group_members(self.pgid):
                break
            time.sleep(0.1)
        else:
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            pass
        os.close(self._pipe)                 # the watchdog finds the group gone and exits
        try:
            self.watchdog.wait(15)
        except subprocess.TimeoutExpired:
            self.watchdog.kill()
            self.watchdog.wait()
        self._log.close()


def _port_accepts(server):
    socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
    return True


def _emulator_answers(server):
    # The emulator accepts connections a moment before it serves; its root answers "Ok".
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=2) as r:
        return r.status == 200 and r.read().startswith(b"Ok")


PORT_ATTEMPTS = 3


def port_was_taken(error):
    """Whether a StartError says the server could not bind its port (EADDRINUSE in its log)."""
    text = str(error)
    return "Address already in use" in text or "address already in use" in text


def _on_a_free_port(start):
    """`start(port)` on a free port, again on another one (at most PORT_ATTEMPTS in all) when the
    server exits because its port was taken in the meantime: free_port() releases the port before
    the server binds it, and any process (a client's outgoing connection among them) may take it
    in between. Any other start-up failure is raised at once."""
    for attempt in range(PORT_ATTEMPTS):
        try:
            return start(free_port())
        except StartError as e:
            if attempt + 1 == PORT_ATTEMPTS or not port_was_taken(e):
                raise


def emulator_missing():
    """Why the emulator cannot run here, or None."""
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        return "`gcloud` is not on PATH"
    sdk = os.path.dirname(os.path.dirname(os.path.realpath(gcloud)))
    if not os.path.isdir(os.path.join(sdk, "platform", "cloud-firestore-emulator")):
        return f"the Firestore emulator is not installed under {sdk}: gcloud components install cloud-firestore-emulator"
    if shutil.which("java") is None:
        return "`java` (17 or later) is not on PATH"
    return None


def start_emulator(tmpdir, project="demo-ember", extra_args=()):
    why = emulator_missing()
    if why:
        raise StartError(why)
    env = dict(os.environ, CLOUDSDK_CORE_DISABLE_PROMPTS="1", CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="1")
    env.pop("FIRESTORE_EMULATOR_HOST", None)
    return _on_a_free_port(lambda port: Server(
        "the Firestore emulator",
        ["gcloud", "beta", "emulators", "firestore", "start", f"--host-port=127.0.0.1:{port}",
         f"--project={project}", "--quiet", *extra_args],
        port, os.path.join(tmpdir, "emulator.log"), _emulator_answers, EMULATOR_START_SECONDS, env))


def ember_missing():
    """Why `ember serve` cannot run here, or None."""
    if not os.path.isfile(EMBER_BIN):
        return (f"the ember server binary is missing at {EMBER_BIN} "
                "(build it with `swift build --product ember`, or run `make test-server`; "
                "EMBER_BIN names another binary)")
    if not os.access(EMBER_BIN, os.X_OK):
        return f"{EMBER_BIN} is not executable"
    return None


def fresh_postgres_database():
    """A new, empty database on the run's PostgreSQL (EMBER_TEST_POSTGRES_URL and _BIN, set by
    Tests/scripts/with_postgres.py): its URL."""
    import urllib.parse
    url = os.environ["EMBER_TEST_POSTGRES_URL"]
    name = "e" + uuid.uuid4().hex[:16]
    psql = os.path.join(os.environ["EMBER_TEST_POSTGRES_BIN"], "psql")
    subprocess.run([psql, url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, timeout=60,
                   stdout=subprocess.DEVNULL)
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def start_ember(tmpdir, memory=False, extra_args=(), env=None, nofile=None, store_path=None):
    """`ember serve` on a free port, its log in `tmpdir`; the store in `tmpdir` too unless
    `store_path` names it (or EMBER_SERVER_STORE=postgres puts it on the run's PostgreSQL); `env` replaces its environment, `nofile` sets its descriptor limit
    (through the shell's ulimit, soft and hard)."""
    why = ember_missing()
    if why:
        raise StartError(why)
    store = ["--memory"] if memory else ["--path", store_path or os.path.join(tmpdir, "data.ember")]
    if os.environ.get("EMBER_SERVER_STORE") == "postgres" and "--postgres" not in extra_args:
        # The same server on a fresh database of the run's PostgreSQL (as a fresh file would be).
        store = ["--memory", "--postgres", fresh_postgres_database()]

    def command(port):
        argv = [EMBER_BIN, "serve", *store, "--port", str(port), "--database-port", "0", *extra_args]
        if nofile is None:
            return argv
        return ["sh", "-c", f'ulimit -n {int(nofile)} && exec "$0" "$@"', *argv]
    return _on_a_free_port(lambda port: Server(
        "ember serve", command(port), port, os.path.join(tmpdir, "ember.log"), _port_accepts, EMBER_START_SECONDS, env=env))


def client(host, project="demo-ember"):
    """A google-cloud-firestore client for `host` ("127.0.0.1:PORT"), made exactly as
    FIRESTORE_EMULATOR_HOST makes it (insecure channel, "Bearer owner"). The client reads the
    variable once, in its constructor; it is set only for that call."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore
    old = os.environ.get("FIRESTORE_EMULATOR_HOST")
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    try:
        return firestore.Client(project=project, credentials=AnonymousCredentials())
    finally:
        if old is None:
            del os.environ["FIRESTORE_EMULATOR_HOST"]
        else:
            os.environ["FIRESTORE_EMULATOR_HOST"] = old
