"""A client that cannot reach its server says why. TLS is on by default with a host;
against a plaintext server each failed attempt is one stderr line naming the address, TLS on,
the cause and the next retry, and `ssl=False`; a write that is not acknowledged in time
returns pending and says so through the "ember" logger; wait_for_pending_writes() keeps
waiting (Firestore's behaviour) unless given a timeout. Everything listens on 127.0.0.1 only
and every wait is bounded."""
import logging
import socket
import threading
import time

import pytest

import ember

# What a plaintext HTTP/2 server (`ember serve` without --tls-cert) sends first: its SETTINGS.
H2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


class PlaintextServer:
    """Accepts connections on a loopback port, answers each with a plaintext HTTP/2 SETTINGS
    frame and closes it: to a TLS client, a server that does not speak TLS."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            with conn:
                try:
                    conn.settimeout(1)
                    conn.sendall(H2_SETTINGS)
                    conn.recv(4096)
                except OSError:
                    pass

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def plaintext_server():
    server = PlaintextServer()
    yield server
    server.stop()


def closed_port():
    """A loopback port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stderr_lines(capfd, prefix, count=1, timeout=10.0):
    """The first `count` stderr lines starting with `prefix`, waiting at most `timeout` s."""
    seen = ""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        seen += capfd.readouterr().err
        lines = [line for line in seen.splitlines() if line.startswith(prefix)]
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    pytest.fail(f"fewer than {count} stderr lines starting {prefix!r} in {timeout} s; stderr: {seen!r}")


def test_tls_by_default_against_a_plaintext_server_says_why_and_names_ssl_false(
        plaintext_server, capfd, caplog, monkeypatch):
    monkeypatch.setattr(ember.Client, "REMOTE_WRITE_WAIT", 1.0)
    host = f"127.0.0.1:{plaintext_server.port}"
    with caplog.at_level(logging.WARNING, logger="ember"):
        with ember.Client(host=host) as db:                  # ssl defaults to True
            started = time.monotonic()
            result = db.collection("cities").document("SF").set({"name": "SF"})
            assert time.monotonic() - started < 5
            assert result.update_time is None and not result.done
            line = stderr_lines(capfd, f"ember: could not reach the server at {host} (TLS on): ")[0]
            assert "1 failed attempt" in line
            assert "WRONG_VERSION_NUMBER" in line            # the cause, from the TLS library
            assert "retrying in " in line
            assert "may not speak TLS" in line and "ssl=False" in line
            # Offline-style waits: bounded only when asked.
            with pytest.raises(ember.DeadlineExceededError):
                db.wait_for_pending_writes(timeout=0.3)
            # A second write while still unanswered: no second warning.
            db.collection("cities").document("LA").set({"name": "LA"})
    warnings = [r.getMessage() for r in caplog.records if r.name == "ember"]
    assert len(warnings) == 1, warnings
    assert host in warnings[0] and "returns pending" in warnings[0] and "ssl=False" in warnings[0]


def test_a_refused_connection_names_the_cause_and_retries_with_a_backoff(capfd, monkeypatch):
    monkeypatch.setattr(ember.Client, "REMOTE_WRITE_WAIT", 0.2)
    host = f"127.0.0.1:{closed_port()}"
    with ember.Client(host=host, ssl=False) as db:
        db.collection("cities").document("SF").set({"name": "SF"})
        prefix = f"ember: could not reach the server at {host} (TLS off): "
        first, second = stderr_lines(capfd, prefix, count=2)[:2]
        assert first.startswith(prefix + "1 failed attempt since it last answered")
        assert "refused" in first.lower()
        assert "ssl=" not in first                           # no TLS hint for a refused connection
        # The next attempt is told too, counted; then no more than about one line a second.
        assert "failed attempts since it last answered" in second
        time.sleep(3)
        later = [line for line in capfd.readouterr().err.splitlines() if line.startswith(prefix)]
        assert len(later) <= 4, later
