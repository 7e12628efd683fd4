"""Shared fixtures: a fresh in-memory client per test, and an event recorder for listeners."""
import threading
import time

import pytest

import ember


@pytest.fixture
def db():
    client = ember.Client()
    yield client
    client.close()


class Recorder:
    """Collects (docs, changes, read_time) events; wait(n) blocks until n have arrived."""

    def __init__(self):
        self.events = []
        self.errors = []
        self.cv = threading.Condition()

    def __call__(self, docs, changes, read_time):
        with self.cv:
            self.events.append((docs, changes, read_time))
            self.cv.notify_all()

    def on_error(self, exc):
        with self.cv:
            self.errors.append(exc)
            self.cv.notify_all()

    def wait(self, n, timeout=5.0):
        end = time.monotonic() + timeout
        with self.cv:
            while len(self.events) < n:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} events, got {len(self.events)}: {self.summary()}")
                self.cv.wait(left)
        return self.events[n - 1]

    def quiet(self, seconds=0.05):
        time.sleep(seconds)
        return len(self.events)

    def summary(self):
        out = []
        for docs, changes, _ in self.events:
            out.append(([d.id for d in docs], [(c.type.name, c.document.id, c.old_index, c.new_index) for c in changes],
                        docs[0].metadata if isinstance(docs, list) and docs else getattr(docs, "metadata", None)))
        return out


@pytest.fixture
def recorder():
    return Recorder()
