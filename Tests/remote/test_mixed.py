"""Swift, C and Python client processes on one `ember serve` (issue 12): each sets its document
in two rounds and sees the others' in its listener, its own going pending -> acknowledged each
round; and a durable C client written to while the server is down, restarted while it is still
down, sends its queued writes once the server is up, each applied exactly once.

The server is the built binary ($EMBER_BIN) on a free port, in its own process group under
servers.py's watchdog (it cannot outlive the run); every client process is waited for with a bound
and killed by its pid when it overstays."""
import os
import selectors
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

import ember
import servers

CLIENT_SECONDS = 120


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def start_ember(tmpdir, port, path=None):
    """`ember serve` on `port` (durable at `path`, else in memory), ready when the port accepts."""
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)
    store = ["--path", path] if path else ["--memory"]
    return servers.Server("ember serve", [servers.EMBER_BIN, "serve", *store, "--port", str(port), "--database-port", "0"], port,
                          os.path.join(tmpdir, f"ember-{port}-{time.monotonic_ns()}.log"), _accepts,
                          servers.EMBER_START_SECONDS)


def _accepts(server):
    socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
    return True


def finish(p, timeout=CLIENT_SECONDS):
    """Waits for a client process (killed by its pid past `timeout`): (status, stdout, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += f"\n(killed after {timeout} s)"
    return p.returncode, out, err


def read_line(p, timeout):
    """The next line of a process's stdout, waiting at most `timeout` s ('' on timeout or exit)."""
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    try:
        if not sel.select(timeout):
            return ""
        return p.stdout.readline()
    finally:
        sel.close()


@pytest.fixture
def tmpdir_():
    with tempfile.TemporaryDirectory(prefix="ember-remote-tests-") as d:
        yield d


def test_swift_c_and_python_clients_see_each_others_writes(tmpdir_, swift_client, c_client, python_client):
    server = start_ember(tmpdir_, servers.free_port())
    try:
        collection = unique("mixed")
        names = "swift,c,python"
        commands = {
            "swift": [swift_client, server.host, collection, "swift", names],
            "c": [c_client, server.host, collection, "c", names],
            "python": [*python_client, server.host, collection, "python", names],
        }
        procs = {n: subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for n, cmd in commands.items()}
        results = {n: finish(p) for n, p in procs.items()}
        for n, (status, out, err) in results.items():
            assert status == 0, f"{n} client: status {status}\n{out}\n{err}\nserver log:\n{server.log_tail()}"
            lines = out.splitlines()
            # Its own document: the local write (pending), then the acknowledgement, in each round.
            assert lines[0] == "pending true,false,true,false", f"{n} client: {out}"
            # Every client's second round, its own and the two other languages' writes.
            assert sorted(lines[1:4]) == sorted(f"saw {m} 2" for m in names.split(",")), f"{n} client: {out}"
            assert lines[-1] == "done"
        with ember.Client(host=server.host, ssl=False) as db:
            docs = {d.id: d.to_dict() for d in db.collection(collection).get()}
        assert {k: (v["round"], v["lang"]) for k, v in docs.items()} == {
            "swift": (2, "swift"), "c": (2, "c"), "python": (2, "python")}
    finally:
        server.stop()


def test_durable_client_restarted_while_the_server_is_down_sends_its_queued_writes_once(tmpdir_, c_client):
    port = servers.free_port()
    host = f"127.0.0.1:{port}"
    collection = unique("queued")
    client_file = os.path.join(tmpdir_, "client.ember")
    n = 3

    # No server: the writes are queued in the client's file, and the process ends.
    status, out, err = finish(subprocess.Popen([c_client, "queue", host, client_file, collection, str(n)],
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    assert status == 0 and out.strip() == f"queued {2 * n}", f"{out}\n{err}"

    # Restarted while the server is still down; it waits for its queue to drain.
    drain = subprocess.Popen([c_client, "drain", host, client_file], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert read_line(drain, 30).strip() == "waiting", "the drain client did not open"
        time.sleep(1.0)
        assert drain.poll() is None, "nothing can be acknowledged while the server is down"
        server = start_ember(tmpdir_, port, os.path.join(tmpdir_, "server.ember"))
    except BaseException:
        drain.kill()
        drain.wait()
        raise
    try:
        status, out, err = finish(drain)
        assert status == 0 and out.strip() == "drained", f"{status}\n{out}\n{err}\nserver log:\n{server.log_tail()}"
        with ember.Client(host=host, ssl=False) as db:
            docs = {d.id: d.to_dict() for d in db.collection(collection).get()}
        assert docs == {"counter": {"n": n}, **{f"d{i}": {"i": i} for i in range(n)}}, \
            "every queued write reached the server, each increment applied exactly once"
    finally:
        server.stop()
