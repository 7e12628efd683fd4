#!/usr/bin/env python3
"""Runs a command with a PostgreSQL of its own: a new cluster in a temporary directory, on a free
loopback port, removed when the command ends, whatever happens.

    with_postgres.py COMMAND [ARG...]

The command gets EMBER_TEST_POSTGRES_URL (postgresql://ember@127.0.0.1:PORT/ember, trust
authentication) and EMBER_TEST_POSTGRES_BIN (the server's bin directory). The server runs in the
foreground as this script's child, with a parent-death signal: if this script is killed (even
with SIGKILL), the kernel kills the server too. PostgreSQL refuses to run as root: as root, the
cluster belongs to the `postgres` user (Debian's package creates it) and the server runs as it.
"""
import ctypes
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PR_SET_PDEATHSIG = 1


def bin_dir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    try:
        return subprocess.check_output(["pg_config", "--bindir"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("with_postgres: no PostgreSQL server found (make deps installs it)")


def as_owner(owner):
    """A preexec function: drop root to `owner` when running as root, then die with the parent
    (the parent-death signal is set after setuid, which clears it)."""
    def run():
        if owner is not None:
            os.setgid(owner.pw_gid)
            os.setgroups([])
            os.setuid(owner.pw_uid)
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    return run


def stop_on_signals():
    """SIGTERM and SIGINT end the script through its `finally` (the cluster is removed)."""
    def raise_exit(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # once: a second signal must not cut the cleanup short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, raise_exit)
    signal.signal(signal.SIGINT, raise_exit)


def remove_stale_clusters():
    """Removes the directories of earlier runs killed with SIGKILL (their server died with them)."""
    for d in glob.glob(os.path.join(tempfile.gettempdir(), "ember-pg-*")):
        pid_file = os.path.join(d, "data", "postmaster.pid")
        try:
            pid = int(open(pid_file).readline())
            os.kill(pid, 0)
            continue   # still running: another run's
        except (OSError, ValueError):
            pass
        if time.time() - os.path.getmtime(d) > 60:
            shutil.rmtree(d, ignore_errors=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    stop_on_signals()
    remove_stale_clusters()
    bindir = bin_dir()
    owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
    root = tempfile.mkdtemp(prefix="ember-pg-")
    data = os.path.join(root, "data")
    server = None
    command = None
    try:
        if owner is not None:
            os.chown(root, owner.pw_uid, owner.pw_gid)
        subprocess.run([os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "ember", "-E", "UTF8",
                        "--locale=C", "--no-sync"], check=True, stdout=subprocess.DEVNULL, preexec_fn=as_owner(owner),
                       timeout=120)
        port = free_port()
        log = open(os.path.join(root, "server.log"), "w")
        if owner is not None:
            os.chown(log.name, owner.pw_uid, owner.pw_gid)
        server = subprocess.Popen([os.path.join(bindir, "postgres"), "-D", data, "-p", str(port),
                                   "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={root}",
                                   "-c", "max_connections=200"],
                                  stdout=log, stderr=subprocess.STDOUT, preexec_fn=as_owner(owner))
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run([os.path.join(bindir, "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", "ember"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if ready.returncode == 0:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                sys.stderr.write(open(log.name).read())
                sys.exit("with_postgres: the server did not start")
            time.sleep(0.1)
        subprocess.run([os.path.join(bindir, "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "ember", "-d", "postgres",
                        "-q", "-c", "CREATE DATABASE ember"], check=True, timeout=60)
        env = dict(os.environ, EMBER_TEST_POSTGRES_URL=f"postgresql://ember@127.0.0.1:{port}/ember",
                   EMBER_TEST_POSTGRES_BIN=bindir)
        # The command stays in this script's process group (a watchdog above stops the whole
        # group) and dies with this script.
        command = subprocess.Popen(sys.argv[1:], env=env, preexec_fn=as_owner(None))
        return command.wait()
    finally:
        if command is not None and command.poll() is None:
            command.kill()
            command.wait()
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGQUIT)   # immediate shutdown
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
