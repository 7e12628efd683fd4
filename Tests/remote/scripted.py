"""A scripted Firestore server for the Python watch scenarios: the `EmberScriptedFirestore`
program (Tests/Support/ScriptedFirestoreTool) driven over its stdin and stdout, one JSON
command and one JSON answer per line. Every read from it is bounded; `stop()` ends it."""
import json
import os
import select
import signal
import subprocess
import threading


class ScriptedServer:
    def __init__(self, program, timeout=10):
        self.timeout = timeout
        self.proc = subprocess.Popen([program], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.port = self._answer()["port"]

    def _answer(self, timeout=None):
        ready, _, _ = select.select([self.proc.stdout], [], [], (timeout or self.timeout) + 5)
        if not ready:
            raise TimeoutError("the scripted server did not answer")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the scripted server ended")
        answer = json.loads(line)
        if "error" in answer:
            raise AssertionError(answer["error"])
        return answer

    def call(self, op, **arguments):
        self.proc.stdin.write(json.dumps(dict(op=op, **arguments)) + "\n")
        self.proc.stdin.flush()
        return self._answer(arguments.get("timeout"))

    def next_listen(self, timeout=10):
        return self.call("next_listen", timeout=timeout)

    def added(self):
        seen = self.next_listen()
        assert seen["seen"] == "add", seen
        return seen["target"]

    def send(self, *messages):
        self.call("send", messages=list(messages))

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.call("stop")
            except Exception:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)


def added(*ids):
    return {"added": list(ids)}


def current(*ids, token=None):
    return {"current": list(ids), "token": token}


def global_(read_time, token=None):
    return {"global": read_time, "token": token}


def doc(path, version, fields, into, out=()):
    return {"doc": path, "version": version, "fields": fields, "in": list(into), "out": list(out)}


def deleted(path, read_time, out):
    return {"deleted": path, "read_time": read_time, "out": list(out)}


def removed(*ids):
    return {"removed": list(ids), "code": 0}


def existence_filter(target, count):
    return {"filter": target, "count": count}


class Recorder:
    """A listener's snapshots, as "[id=v id=v*] cache=… pending=…" (* : a pending document;
    a missing document is left out)."""

    def __init__(self):
        self.snaps = []
        self.cv = threading.Condition()

    def __call__(self, docs, changes, read_time):
        parts = []
        for d in docs:
            if not d.exists:
                continue   # a document listener's snapshot of a missing document
            v = (d.to_dict() or {}).get("v", "-")
            parts.append(f"{d.id}={v}{'*' if d.metadata.has_pending_writes else ''}")
        line = f"[{' '.join(parts)}] cache={docs.metadata.from_cache} pending={docs.metadata.has_pending_writes}"
        with self.cv:
            self.snaps.append(line)
            self.cv.notify_all()

    def wait(self, count, timeout=10):
        with self.cv:
            self.cv.wait_for(lambda: len(self.snaps) >= count, timeout)
            assert len(self.snaps) >= count, f"expected {count} snapshots, got {self.snaps}"
            return list(self.snaps)
