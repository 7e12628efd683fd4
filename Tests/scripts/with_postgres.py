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


class Cluster:
    """A PostgreSQL cluster of its own: initdb in a temporary directory, a server on a free
    loopback port (started, stopped and started again on the same port, for fault tests), a
    database `ember`, removed by `close()` whatever state it is in.

        with Cluster() as pg:
            pg.url        # postgresql://ember@127.0.0.1:PORT/ember
            pg.stop(); pg.start()
    """

    def __init__(self):
        remove_stale_clusters()
        self.bindir = bin_dir()
        self.owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        self.root = tempfile.mkdtemp(prefix="ember-pg-")
        self.data = os.path.join(self.root, "data")
        self.server = None
        try:
            if self.owner is not None:
                os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
            subprocess.run([os.path.join(self.bindir, "initdb"), "-D", self.data, "-A", "trust", "-U", "ember", "-E", "UTF8",
                            "--locale=C", "--no-sync"], check=True, stdout=subprocess.DEVNULL, preexec_fn=as_owner(self.owner),
                           timeout=120)
            self.port = free_port()
            self.start()
            subprocess.run([os.path.join(self.bindir, "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "ember",
                            "-d", "postgres", "-q", "-c", "CREATE DATABASE ember"], check=True, timeout=60)
        except BaseException:
            self.close()
            raise

    @property
    def url(self):
        return f"postgresql://ember@127.0.0.1:{self.port}/ember"

    def start(self):
        """Starts the server (again) on the cluster's port and waits until it accepts connections."""
        log = open(os.path.join(self.root, "server.log"), "a")
        if self.owner is not None:
            os.chown(log.name, self.owner.pw_uid, self.owner.pw_gid)
        # setpriv (util-linux) drops to the owner and sets the parent-death signal, with no Python
        # in the forked child: the caller may have threads (gRPC's), which make a preexec_fn abort.
        drop = ["--reuid", str(self.owner.pw_uid), "--regid", str(self.owner.pw_gid), "--clear-groups"] if self.owner else []
        self.server = subprocess.Popen(["setpriv", *drop, "--pdeathsig", "KILL", "--",
                                        os.path.join(self.bindir, "postgres"), "-D", self.data, "-p", str(self.port),
                                        "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.root}",
                                        "-c", "max_connections=200"],
                                       stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run([os.path.join(self.bindir, "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port),
                                    "-U", "ember"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if ready.returncode == 0:
                return
            if self.server.poll() is not None or time.monotonic() > deadline:
                sys.stderr.write(open(os.path.join(self.root, "server.log")).read())
                raise RuntimeError("with_postgres: the server did not start")
            time.sleep(0.1)

    def stop(self, sig=signal.SIGQUIT):
        """Stops the server: SIGQUIT is an immediate shutdown (as a crash: recovery at the next
        start), SIGINT a fast one (clients disconnected, a checkpoint)."""
        if self.server is None or self.server.poll() is not None:
            return
        self.server.send_signal(sig)
        try:
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()

    def close(self):
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    stop_on_signals()
    try:
        with Cluster() as pg:
            env = dict(os.environ, EMBER_TEST_POSTGRES_URL=pg.url, EMBER_TEST_POSTGRES_BIN=pg.bindir)
            # The command stays in this script's process group (a watchdog above stops the whole
            # group) and dies with this script.
            command = subprocess.Popen(sys.argv[1:], env=env, preexec_fn=as_owner(None))
            try:
                return command.wait()
            finally:
                if command.poll() is None:
                    command.kill()
                    command.wait()
    except RuntimeError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    sys.exit(main())
