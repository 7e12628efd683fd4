"""Several processes share one `ember serve` (issue 11): 3 listening while 2 write, every listener
converges to the final state; and a listener whose stream is cut (the server restarted on its
file) resumes with its token and misses nothing, deletes included.

Runs the server binary at $EMBER_BIN (default .build/debug/ember) with the google-cloud-firestore
client of this venv."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("EMBER_BIN", os.path.join(ROOT, ".build", "debug", "ember"))
CLIENT = os.path.join(HERE, "multiprocess_client.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(path, port):
    if not os.path.exists(BIN):
        pytest.fail(f"ember serve binary not found at {BIN} (swift build --product ember)")
    p = subprocess.Popen([BIN, "serve", "--path", path, "--port", str(port), "--database-port", "0"], stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return p
        except OSError:
            if p.poll() is not None:
                pytest.fail("ember serve exited: " + p.stderr.read())
            time.sleep(0.05)
    p.kill()
    pytest.fail("ember serve did not start")


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        os.killpg(p.pid, sig)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)


def client(*args):
    return subprocess.Popen([sys.executable, CLIENT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p, timeout=120):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return p.returncode, out.strip(), err[-2000:]


@pytest.fixture
def store():
    with tempfile.TemporaryDirectory() as d:
        yield os.path.join(d, "data.ember")


def test_three_listeners_two_writers_converge(store):
    port = free_port()
    server = start_server(store, port)
    host = f"127.0.0.1:{port}"
    prefix = "mp" + uuid.uuid4().hex[:8]
    n = 40
    try:
        listeners = [client("listen", host, prefix, str(n)) for _ in range(3)]
        time.sleep(1.0)
        writers = [client("write", host, prefix, str(w), str(n)) for w in range(2)]
        for w in writers:
            code, out, err = finish(w)
            assert code == 0 and out == "wrote", err
        for l in listeners:
            code, out, err = finish(l)
            assert (code, out) == (0, "converged"), err or out
    finally:
        stop(server)


def test_listener_resumes_after_the_server_restarts(store):
    port = free_port()
    server = start_server(store, port)
    host = f"127.0.0.1:{port}"
    prefix = "rs" + uuid.uuid4().hex[:8]
    n = 20
    try:
        code, out, err = finish(client("write", host, prefix, "0", str(n)))
        assert code == 0, err
        listener = client("listen", host, prefix, str(n))
        time.sleep(2.0)
        # Cut every stream: the listener reconnects (with its resume token) once the server is back.
        stop(server)
        server = start_server(store, port)
        code, out, err = finish(client("write", host, prefix, "1", str(n)))
        assert code == 0, err
        code, out, err = finish(listener)
        assert (code, out) == (0, "converged"), err or out
    finally:
        stop(server)
