"""The tree's REST writes on a durable `ember serve --path <file>`: what was acknowledged stays.

Responsible for: (a) SIGKILL of the server under a client writing sequentially (PUTs and POSTs):
after a restart on the same file every write answered 2xx is there with its value, and nothing
is there that was not written (at most the one request in flight when the server died); twice
in a row. (b) a storage fault (Tests/faultfs/faultfs.c as LD_PRELOAD, as test_hardening.py
uses it): while the file system fails, REST writes are answered an error status (never 2xx),
the server keeps running and answering reads, a stream hears nothing of a refused write, and
once the fault is gone writes succeed again; after a restart every acknowledged write is there,
and a refused one is there exactly when the running server showed it (logged either way).
Servers are started and stopped by servers.py (their process group, under a watchdog); every
wait is bounded.
"""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import servers  # noqa: E402
from rtdb_http import Conn, EventStream, call, database_port  # noqa: E402

FAULTFS = os.path.join(servers.ROOT, "Tests", "faultfs", "faultfs.c")


def require_ember():
    why = servers.ember_missing()
    if why:
        pytest.fail(why)


def start(run_dir, store, env=None):
    """`ember serve --path <store> --database-port 0` (its log in `run_dir`), and its tree port."""
    os.makedirs(run_dir, exist_ok=True)
    srv = servers.start_ember(run_dir, store_path=store, env=env)
    try:
        return srv, database_port(srv)
    except BaseException:
        srv.stop()
        raise


def sigkill(srv):
    """SIGKILL to the server's process (its pid), then the group reaped and the watchdog ended."""
    os.kill(srv.process.pid, signal.SIGKILL)
    srv.process.wait(10)
    srv.stop()


class Writer(threading.Thread):
    """Sequential writes in namespace `ns` on one kept-alive connection until stopped or the
    connection fails: PUT /w/<i> = {"i": i, ...} and POST /p = i in turn. Records each write
    answered 2xx (`acked`), the one sent when the connection failed (`in_flight`), and what
    ended it (`error`)."""

    def __init__(self, port, ns, first=0):
        super().__init__(daemon=True)
        self.port, self.ns, self.i = port, ns, first
        self.acked_puts, self.acked_posts = {}, {}
        self.in_flight = None
        self.refused = []
        self.error = None
        self.stopping = threading.Event()

    def run(self):
        try:
            c = Conn(self.port, timeout=10)
        except OSError as e:
            self.error = e
            return
        try:
            while not self.stopping.is_set():
                i = self.i
                if i % 2 == 0:
                    self.in_flight = ("put", i)
                    r = c.call("PUT", f"/w/{i}.json", {"ns": self.ns}, {"i": i, "pad": "x" * (i % 50)})
                    ok = 200 <= r.status < 300
                    if ok:
                        assert r.json["i"] == i
                        self.acked_puts[str(i)] = {"i": i, "pad": "x" * (i % 50)}
                else:
                    self.in_flight = ("post", i)
                    r = c.call("POST", "/p.json", {"ns": self.ns}, i)
                    ok = 200 <= r.status < 300
                    if ok:
                        self.acked_posts[r.json["name"]] = i
                if not ok:
                    self.refused.append((i, r.status, r.body))
                self.in_flight = None
                self.i += 1
        except Exception as e:      # the server died under the request
            self.error = e
        finally:
            c.close()

    @property
    def acked(self):
        return len(self.acked_puts) + len(self.acked_posts)


def check_all_there(port, ns, puts, posts, in_flight):
    """Every acknowledged write is stored with its value; nothing else is, but the writes in flight."""
    stored_w = call(port, "GET", "/w.json", {"ns": ns}).json or {}
    stored_p = call(port, "GET", "/p.json", {"ns": ns}).json or {}
    if isinstance(stored_w, list):
        stored_w = {str(i): v for i, v in enumerate(stored_w) if v is not None}
    missing_w = {k: v for k, v in puts.items() if stored_w.get(k) != v}
    missing_p = {k: v for k, v in posts.items() if stored_p.get(k) != v}
    assert not missing_w and not missing_p, (
        f"acknowledged writes lost after SIGKILL: {len(missing_w)} PUTs {sorted(missing_w)[:10]}, "
        f"{len(missing_p)} POSTs {sorted(missing_p.items())[:10]}")
    extra_w = {k for k in stored_w if k not in puts}
    extra_p = {k: v for k, v in stored_p.items() if k not in posts}
    allowed_w = {str(i) for kind, i in in_flight if kind == "put"}
    allowed_p = {i for kind, i in in_flight if kind == "post"}
    assert extra_w <= allowed_w, f"PUTs stored that were never sent: {sorted(extra_w - allowed_w)}"
    assert set(extra_p.values()) <= allowed_p and len(extra_p) <= len(allowed_p), \
        f"POSTs stored that were never sent: {extra_p} (in flight: {in_flight})"
    for k in extra_w:
        assert stored_w[k] == {"i": int(k), "pad": "x" * (int(k) % 50)}
    return len(extra_w) + len(extra_p)


def test_acknowledged_writes_survive_sigkill_under_a_writing_client(tmp_path):
    require_ember()
    store = str(tmp_path / "data.ember")
    ns = "d" + uuid.uuid4().hex[:10]
    puts, posts, in_flight = {}, {}, []
    next_i = 0
    for round_ in range(2):
        srv, port = start(str(tmp_path / f"run{round_}"), store)
        try:
            # What earlier rounds acknowledged is there before more is written.
            check_all_there(port, ns, puts, posts, in_flight)
            w = Writer(port, ns, first=next_i)
            w.start()
            deadline = time.monotonic() + 60
            while w.acked < 150 + 50 * round_ and w.is_alive() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert w.is_alive() and w.error is None, f"the writer stopped early: {w.error} {w.refused[:3]}"
            sigkill(srv)
            w.join(30)
            assert not w.is_alive(), "the writer did not notice the server's death"
        finally:
            srv.stop()
        assert not w.refused, f"writes refused before the kill: {w.refused[:5]}"
        assert w.error is not None, "the server was killed while the client wrote: its request must fail"
        puts.update(w.acked_puts)
        posts.update(w.acked_posts)
        if w.in_flight:
            in_flight.append(w.in_flight)
        next_i = w.i + 1
    srv, port = start(str(tmp_path / "final"), store)
    try:
        extra = check_all_there(port, ns, puts, posts, in_flight)
        print(f"{len(puts)} PUTs and {len(posts)} POSTs acknowledged, all there; "
              f"{extra} of the {len(in_flight)} writes in flight at the kills stored too")
        # The restarted server writes on.
        r = call(port, "PUT", "/after.json", {"ns": ns}, 1)
        assert r.status == 200, r
    finally:
        srv.stop()


def build_shim(tmp_path):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.fail(f"no C compiler ({cc}) to build the fault shim")
    shim = str(tmp_path / "faultfs.so")
    subprocess.run([cc, "-std=gnu99", "-shared", "-fPIC", "-O1", "-o", shim, FAULTFS, "-ldl"], check=True, timeout=120)
    return shim


@pytest.mark.parametrize("fault", ["EIO", "ENOSPC", "EROFS"])
def test_a_storage_fault_refuses_rest_writes_and_passes(tmp_path, fault):
    require_ember()
    shim = build_shim(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    store = str(data / "data.ember")
    env = dict(os.environ, LD_PRELOAD=shim, EMBER_FAULT_DIR=str(data))
    ns = "f" + uuid.uuid4().hex[:10]
    p = {"ns": ns}
    big = "x" * 100_000
    srv, port = start(str(tmp_path / "run1"), store, env=env)
    attempts = []        # (what, method, path, body, status, answer)
    try:
        assert call(port, "PUT", "/ok.json", p, {"v": 1}).status == 200
        with EventStream(port, "/.json", p) as stream:
            assert stream.put_or_patch() == ("put", "/", {"ok": {"v": 1}})
            (data / ".fault").write_text(fault)
            try:
                for what, method, path, body in [("big PUT", "PUT", "/bad/big.json", big),
                                                  ("small PUT", "PUT", "/bad/small.json", 7),
                                                  ("PATCH", "PATCH", "/bad.json", {"patched": True}),
                                                  ("POST", "POST", "/bad/list.json", "pushed"),
                                                  ("DELETE", "DELETE", "/ok.json", None),
                                                  ("increment", "PUT", "/bad/n.json", {".sv": {"increment": 1}})]:
                    r = call(port, method, path, p, body if body is not None else b"", timeout=30)
                    attempts.append((what, method, path, body, r.status, r.body[:200]))
                    assert r.status >= 400, f"{what} answered {r.status} while the disk fails with {fault}: {r}"
                    assert r.json.get("error"), r
                    assert srv.process.poll() is None, f"the server exited (status {srv.process.returncode}):\n{srv.log_tail()}"
                # Reads go on while writes fail.
                r = call(port, "GET", "/.json", p)
                assert r.status == 200, r
                shown_during = r.json
            finally:
                (data / ".fault").unlink()
            for a in attempts:
                print(f"{fault}: {a[0]} {a[1]} {a[2]} -> {a[4]} {a[5]!r}")
            # The fault is gone: writes succeed at once.
            r = call(port, "PUT", "/after.json", p, {"v": 2})
            assert r.status == 200, f"a write after the fault was removed: {r}\n{srv.log_tail()}"
            r = call(port, "POST", "/after_list.json", p, "pushed")
            assert r.status == 200, r
            pushed = r.json["name"]
            # The stream heard nothing of the refused writes: its next event is the first write after.
            assert stream.put_or_patch() == ("put", "/after", {"v": 2})
            assert stream.put_or_patch() == ("put", f"/after_list/{pushed}", "pushed")
            shown_after = call(port, "GET", "/.json", p).json
        assert srv.process.poll() is None, srv.log_tail()
        assert "event=storage_error" in srv.log_tail(200000), srv.log_tail()
    finally:
        srv.stop()
    srv, port = start(str(tmp_path / "run2"), store)           # without the shim
    try:
        stored = call(port, "GET", "/.json", p).json
        print(f"{fault}: during the fault the server showed {trim(shown_during)}; after a restart: {trim(stored)}")
        assert stored.get("after") == {"v": 2} and stored.get("after_list") == {pushed: "pushed"}
        assert stored.get("ok") == shown_after.get("ok")
        for what, method, path, body, status, _ in attempts:
            applied = present(stored, path) != (method == "DELETE")
            print(f"{fault}: the {what} answered {status} is {'APPLIED' if applied else 'not applied'} after the restart")
        # A refused write is stored exactly when the running server showed it: nothing a reader
        # saw vanishes, nothing it did not see appears.
        assert trim(stored) == trim(shown_after), "the restarted server differs from what the running one showed"
        r = call(port, "PUT", "/bad/small.json", p, 8)
        assert r.status == 200 and call(port, "GET", "/bad/small.json", p).json == 8
    finally:
        srv.stop()
    # A storage fault is the server's failure (5xx), not the caller's: a 4xx tells the client its
    # request is wrong, and a 401 makes firebase-admin's google-auth refresh and re-send it twice
    # (TREE-SERVER.md §1.1, §1.4, §2.6).
    wrong = [(what, status, body) for what, _, _, _, status, body in attempts if not 500 <= status < 600]
    assert not wrong, f"storage fault {fault} answered with a client status: {wrong}"


def present(tree, path):
    node = tree
    for seg in path[1:-len(".json")].split("/"):
        if not isinstance(node, dict) or seg not in node:
            return False
        node = node[seg]
    return node is not None


def trim(v):
    """`v` with long strings shortened (for messages)."""
    if isinstance(v, dict):
        return {k: trim(c) for k, c in v.items()}
    if isinstance(v, str) and len(v) > 40:
        return v[:10] + f"...({len(v)} chars)"
    return v
