"""The server killed (SIGKILL) while two clients write and listen, then restarted on the same port
and file (issue 12): no acknowledged write is lost, the writes queued while it was down are
applied exactly once, the listeners converge to the server's state, and after the resume the
server sends the Swift client's listener about what changed, not the whole collection again.

The clients are `EmberHostClient kill-writer` (Sources/EmberHostClient/KillWriter.swift: it also
sets the base documents and reports the documents the server sent) and `c_client kill-writer`
(Tests/remote/c_client.c); their output is described there and in README.md. They print
CLOCK_MONOTONIC times, the clock of `time.monotonic_ns()` here, so each write is placed against
the kill:

- acknowledged before the kill began: on the server right after the restart, applied once;
- made after the server was dead (queued, the server never saw it): applied exactly once;
- made before and acknowledged after: it may have been in flight, committed by the server and
  sent again after the restart (docs/remote.md: exactly once holds only for writes the server
  never saw; Firebase's SDKs behave the same), so its increment is applied once or twice.

Every process is bounded: the server under servers.py's watchdog, each client killed by its pid
past CLIENT_SECONDS; every wait on its output has a bound."""
import os
import signal
import subprocess
import threading
import time
import uuid

import ember
import servers
from test_mixed import CLIENT_SECONDS, start_ember, tmpdir_  # noqa: F401 (fixture)

BASE = 400           # documents in the collection before the writes (a full resend is at least this)
WRITES = 200         # d0..d199 (Swift), c0..c199 (C): one increment each
PACE_MS = 20         # one write every 20 ms: about 4 s of writes
KILL_AFTER_ACKS = 60
PAUSE_SECONDS = 1.0  # the server stays down this long (the client keeps writing: queued)
SLACK = 10           # documents the listener may be sent beyond those changed after the kill


class Output:
    """A process's stdout lines, read as they come by a thread (None at the end of output)."""

    def __init__(self, p):
        self.p = p
        self.lines = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)          # end of output
            self.cond.notify_all()

    def wait_for(self, what, predicate, timeout):
        """Waits (at most `timeout` s) until predicate(lines) is true; fails with the output."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate([l for l in self.lines if l is not None]):
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1] is None):
                    raise AssertionError(f"{what}: not seen in {timeout} s; output:\n" + "\n".join(
                        l for l in self.lines[-40:] if l is not None))
                self.cond.wait(left)

    def snapshot(self):
        with self.cond:
            return [l for l in self.lines if l is not None]


def fields(lines, word):
    return [l.split()[1:] for l in lines if l.split()[:1] == [word]]


def server_documents(host, collection):
    with ember.Client(host=host, ssl=False) as db:
        return {d.id: d.to_dict() for d in db.collection(collection).get()}


def check_writes(who, lines, prefix, docs, kill_began, dead, restarting):
    """One client's writes against the server's final documents: every write acknowledged and
    there; applied once when acknowledged before the kill or made after the server was dead;
    once or twice when possibly in flight. Returns (acked before the kill, in flight, queued)."""
    writes = {int(i): int(t) for i, t in fields(lines, "write")}
    acks = {int(i): int(t) for i, t in fields(lines, "ack")}
    assert sorted(writes) == list(range(WRITES)) and sorted(acks) == list(range(WRITES)), f"{who}: every write acknowledged"
    acked_before = {i for i, t in acks.items() if t < kill_began}
    queued = [i for i, t in writes.items() if dead < t < restarting]
    assert queued, f"{who}: no write was made while the server was down"
    n = {int(k[len(prefix):]): v["n"] for k, v in docs.items() if k.startswith(prefix)}
    assert sorted(n) == list(range(WRITES)), f"{who}: every write is on the server"
    assert all(docs[f"{prefix}{i}"]["i"] == i for i in range(WRITES))
    once = [i for i in range(WRITES) if i in acked_before or writes[i] > dead]
    assert {i: n[i] for i in once if n[i] != 1} == {}, f"{who}: applied more than once (or not at all)"
    in_flight = [i for i in range(WRITES) if i not in once]
    assert all(n[i] in (1, 2) for i in in_flight), {i: n[i] for i in in_flight}
    # Its listener converged to the server's documents.
    final = {int(k[len(prefix):]): int(v) for k, v in fields(lines, "final") if k.startswith(prefix)}
    assert final == n, f"{who}: the listener's last snapshot differs from the server's documents"
    assert fields(lines, "offline") and fields(lines, "online"), f"{who}: the listener never went offline and back"
    twice = sum(1 for i in in_flight if n[i] == 2)
    print(f"\n{who}: acknowledged before the kill {len(acked_before)}, queued while down {len(queued)}, "
          f"possibly in flight {len(in_flight)} (applied twice: {twice})")
    return acked_before, in_flight, queued


def test_server_killed_while_clients_write_and_listen(tmpdir_, swift_client, c_client):
    port = servers.free_port()
    path = os.path.join(tmpdir_, "server.ember")
    collection = f"kill-{uuid.uuid4().hex[:10]}"
    server = start_ember(tmpdir_, port, path)
    clients = []
    try:
        swift = subprocess.Popen([swift_client, "kill-writer", server.host, collection, str(BASE), str(WRITES),
                                  str(PACE_MS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        clients.append(swift)
        swift_out = Output(swift)
        swift_out.wait_for("the Swift listener's first answer", lambda ls: fields(ls, "listening"), 60)
        c = subprocess.Popen([c_client, "kill-writer", server.host, collection, "c", str(WRITES), str(PACE_MS),
                              str(BASE + 2 * WRITES)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        clients.append(c)
        c_out = Output(c)
        swift_out.wait_for(f"{KILL_AFTER_ACKS} acknowledgements",
                           lambda ls: len(fields(ls, "ack")) >= KILL_AFTER_ACKS, 60)
        c_out.wait_for("the C client's first acknowledgement", lambda ls: fields(ls, "ack"), 60)

        kill_began = time.monotonic_ns()
        os.killpg(server.pgid, signal.SIGKILL)
        server.process.wait(10)
        dead = time.monotonic_ns()
        server.stop()                                     # the watchdog; the group is gone already
        for who, out in (("swift", swift_out), ("c", c_out)):
            assert len(fields(out.snapshot(), "write")) < WRITES, f"{who}: the writes ended before the kill"

        time.sleep(PAUSE_SECONDS)
        restarting = time.monotonic_ns()
        server = start_ember(tmpdir_, port, path)

        # Acknowledged before the kill: on the server as soon as it is back.
        docs = server_documents(server.host, collection)
        for who, out, prefix in (("swift", swift_out, "d"), ("c", c_out, "c")):
            acked = {int(i) for i, t in fields(out.snapshot(), "ack") if int(t) < kill_began}
            lost = sorted(i for i in acked if f"{prefix}{i}" not in docs)
            assert not lost, f"{who}: acknowledged before the kill, missing after the restart: {lost}"

        results = {}
        for who, p, out in (("swift", swift, swift_out), ("c", c, c_out)):
            status, err = finish_client(p)
            lines = out.snapshot()
            assert status == 0, (f"{who} client status {status}\n" + "\n".join(lines[-30:]) +
                                 f"\n{err}\nserver log:\n{server.log_tail()}")
            assert lines[-1] == "done"
            results[who] = lines
        clients = []

        docs = server_documents(server.host, collection)
        assert sorted(k for k in docs if k.startswith("b")) == sorted(f"b{k}" for k in range(BASE))
        assert len(docs) == BASE + 2 * WRITES
        acked_before, in_flight, _ = check_writes("swift", results["swift"], "d", docs, kill_began, dead, restarting)
        c_acked_before, c_in_flight, _ = check_writes("c", results["c"], "c", docs, kill_began, dead, restarting)
        assert fields(results["swift"], "base") == [[str(BASE)]]

        # The resume: what the server sent the Swift listener after its stream was lost, against
        # what changed since: each write of either client not acknowledged before the kill
        # changes one document (sent once at the resume or when it commits); one possibly in
        # flight may change it twice (committed before the kill, unseen, and again after the
        # restart). A write acknowledged just before the kill whose change had not reached the
        # listener yet is in the slack.
        lines = results["swift"]
        sent_after = int(fields(lines, "received")[0][0]) - int(fields(lines, "offline")[0][0])
        changed = (WRITES - len(acked_before)) + (WRITES - len(c_acked_before))
        bound = changed + len(in_flight) + len(c_in_flight) + SLACK
        full = BASE + len(acked_before) + len(c_acked_before)
        print(f"swift listener: sent after the resume {sent_after} for {changed} changed documents "
              f"(bound {bound}; a full resend would be >= {full})")
        assert bound < full, "the scenario cannot tell a resume from a full resend"
        assert sent_after <= bound, f"{sent_after} documents sent after the resume, more than the {bound} changed"
    finally:
        for p in clients:
            p.kill()
            p.wait()
        server.stop()


def finish_client(p, timeout=CLIENT_SECONDS):
    """Waits for a client (killed by its pid past `timeout`): (status, stderr). Its stdout is read
    by Output's thread."""
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return p.returncode, p.stderr.read() + f"\n(killed after {timeout} s)"
    return p.returncode, p.stderr.read()
