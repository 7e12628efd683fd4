"""The test of the test runner: a server started by servers.py is gone however its starter ends.

A child process starts the server, prints its process group and kills itself with SIGKILL (no
cleanup code runs); the child is left unreaped (a zombie) while the group is checked from here,
as under a container init that never calls wait(). The watchdog must stop the whole group."""
import os
import subprocess
import sys
import time

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
