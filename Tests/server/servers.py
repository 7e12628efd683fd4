"""Start and stop the servers the server tests compare: the Cloud Firestore emulator and
`ember serve`. Each runs in its own process group under a watchdog that kills the group when
this process's end of a pipe closes, so nothing outlives the test run (even a SIGKILLed one)."""
import os
import shutil
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMBER_BIN = os.environ.get("EMBER_BIN", os.path.join(ROOT, ".build", "debug", "ember"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds, alive):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            if not alive():
                return False
            time.sleep(0.1)
    return False


class Guarded:
    """`command` in a new session, killed (TERM, then KILL) when `stop()` runs or this process dies."""

    def __init__(self, command, port, ready_seconds, log_path):
        self.port = port
        self.read_end, self.write_end = os.pipe()
        quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in command)
        # The watchdog's stdin is the pipe's read end; end of file (stop(), or this process dying
        # in any way) makes it stop the command's process group. (dash's kill takes no "--".)
        script = (f"setsid {quoted} >{log_path} 2>&1 </dev/null & E=$!; echo $E; "
                  "while read line; do :; done; kill -TERM -$E 2>/dev/null; "
                  "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do kill -0 -$E 2>/dev/null || exit 0; sleep 0.5; done; "
                  "kill -KILL -$E 2>/dev/null")
        self.watchdog = subprocess.Popen(["sh", "-c", script], stdin=self.read_end, stdout=subprocess.PIPE, text=True)
        os.close(self.read_end)
        self.pid = int(self.watchdog.stdout.readline().strip())
        self.log_path = log_path
        if not wait_port(port, ready_seconds, lambda: self.watchdog.poll() is None and _alive(self.pid)):
            log = open(log_path).read()[-3000:] if os.path.exists(log_path) else ""
            self.stop()
            raise RuntimeError(f"{command[0]} did not start on port {port}: {log}")

    @property
    def host(self):
        return f"127.0.0.1:{self.port}"

    def stop(self):
        if self.write_end is not None:
            os.close(self.write_end)
            self.write_end = None
            try:
                self.watchdog.wait(15)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def emulator_available():
    return shutil.which("gcloud") is not None


def start_emulator(tmp):
    port = free_port()
    return Guarded(["gcloud", "beta", "emulators", "firestore", "start", f"--host-port=127.0.0.1:{port}",
                    "--project=demo-ember", "--quiet"], port, 90, os.path.join(tmp, "emulator.log"))


def start_ember(tmp, memory=False):
    if not os.path.exists(EMBER_BIN):
        raise RuntimeError(f"the ember binary is missing at {EMBER_BIN}: swift build --product ember")
    port = free_port()
    store = ["--memory"] if memory else ["--path", os.path.join(tmp, "data.ember")]
    return Guarded([EMBER_BIN, "serve", *store, "--port", str(port)], port, 30, os.path.join(tmp, "ember.log"))


def client(host, project="demo-ember"):
    """A google-cloud-firestore client for `host` (as FIRESTORE_EMULATOR_HOST makes it)."""
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
