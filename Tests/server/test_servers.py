"""The test of the test runner: a server started by servers.py is gone however its starter ends,
and starts again on another port when its port was taken before it could bind it.

A child process starts the server, prints its process group and kills itself with SIGKILL (no
cleanup code runs); the child is left unreaped (a zombie) while the group is checked from here,
as under a container init that never calls wait(). The watchdog must stop the whole group."""
import os
import socket
import subprocess
import sys
import time

import pytest

import servers

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = """
import os, signal, sys, tempfile
sys.path.insert(0, {here!r})
import servers
srv = servers.{start}(tempfile.mkdtemp(prefix="ember-hygiene-"))
print(srv.pgid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def starter_killed(start, env=None):
    p = subprocess.Popen([sys.executable, "-c", CHILD.format(here=HERE, start=start)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)
    out = p.stdout.read()                  # end of file: the child is dead (and not reaped yet)
    try:
        pgid = int(out.strip().splitlines()[0])
    except (ValueError, IndexError):
        p.wait()
        raise AssertionError(f"the child did not start {start}: {out[-3000:]}")
    deadline = time.monotonic() + 25
    while servers.group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.25)
    left = servers.group_members(pgid)
    p.wait()
    if left:
        for pid in (int(m.split()[0]) for m in left):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
    assert not left, f"{start}: group {pgid} still runs 25 s after its starter was killed: {left}"


def test_emulator_dies_with_its_starter(emulator):
    starter_killed("start_emulator")


def test_ember_dies_with_its_starter(ember):
    starter_killed("start_ember", env=dict(os.environ, EMBER_BIN=servers.EMBER_BIN))


def _port_held_by_a_bound_socket():
    # Bound, not listening: the server's bind fails, and nothing answers in its place.
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    return s


def test_a_server_whose_port_was_taken_starts_on_another(ember, tmp_path, monkeypatch):
    # free_port() releases its port before the server binds it; when something takes it in
    # between, the server exits with EADDRINUSE and is started again on another port.
    held = _port_held_by_a_bound_socket()
    picked = []
    real_free_port = servers.free_port

    def first_the_taken_port():
        picked.append(held.getsockname()[1] if not picked else real_free_port())
        return picked[-1]

    monkeypatch.setattr(servers, "free_port", first_the_taken_port)
    try:
        srv = servers.start_ember(str(tmp_path), memory=True)
        try:
            assert len(picked) == 2 and srv.port == picked[1] != picked[0]
        finally:
            srv.stop()
    finally:
        held.close()


def test_a_start_up_failure_other_than_a_taken_port_is_not_retried(monkeypatch):
    calls = []

    def fails(port):
        calls.append(port)
        raise servers.StartError("ember serve exited during start-up (status 2):\nunknown option --nope")

    with pytest.raises(servers.StartError, match="unknown option"):
        servers._on_a_free_port(fails)
    assert len(calls) == 1


def test_a_port_taken_every_time_gives_up_after_the_bound(monkeypatch):
    calls = []

    def taken(port):
        calls.append(port)
        raise servers.StartError("java.net.BindException: Address already in use")

    with pytest.raises(servers.StartError, match="Address already in use"):
        servers._on_a_free_port(taken)
    assert len(calls) == servers.PORT_ATTEMPTS
