"""ember.Client(host=..., ssl=..., auth_token=..., ssl_ca_file=...) without a
server: every refusal is a typed exception (InvalidArgumentError, a ValueError, for a host that
is not "host:port", an unreadable CA file, a token that is no header value), and a client of an
unreachable host opens (TLS by default),
keeps its writes pending and its tree local. Clients of a running `ember serve` are tested in
Tests/remote (make test-remote)."""
import time

import pytest

import ember

UNREACHABLE = "127.0.0.1:9"   # the discard port: nothing listens there


@pytest.mark.parametrize("host, message", [
    ("127.0.0.1\x00:8080", "must not contain a NUL character"),
    ("", "host is empty"),
    ("localhost", "no port"),
    ("127.0.0.1:0", "the port must be a number in 1-65535"),
    ("127.0.0.1:99999", "the port must be a number in 1-65535"),
    ("::1:8080", "IPv6 address in brackets"),
    ("[::1]", "no port"),
    ("http://127.0.0.1:8080", "without a scheme or a path"),
    ("127.0.0.1 :8080", "a space or a control character"),
    # A list of servers (a client that moves on when one fails): each entry is read the same.
    ("127.0.0.1:8080,", "an entry is empty"),
    ("127.0.0.1:8080,,127.0.0.1:8081", "an entry is empty"),
    ("127.0.0.1:8080,127.0.0.1", "no port"),
    ("127.0.0.1:8080,db.example.com:8080", "is not an IP address"),
    (",".join(["127.0.0.1:8080"] * 17), "at most 16"),
])
def test_a_host_that_is_not_host_colon_port_is_refused(host, message):
    with pytest.raises(ember.InvalidArgumentError) as e:
        ember.Client(host=host, ssl=False)
    assert message in str(e.value)
    assert isinstance(e.value, ValueError) and e.value.code == 3


def test_a_list_of_servers_opens_and_writes_stay_pending_while_none_answers():
    with ember.Client(host=f"{UNREACHABLE},[::1]:9,localhost:9", ssl=False) as db:
        db.collection("c").document("d").set({"n": 1})
        snap = db.collection("c").document("d").get(source=ember.Source.CACHE)
        assert snap.metadata.has_pending_writes and snap.to_dict() == {"n": 1}


def test_tls_is_the_default_and_bad_tls_or_token_settings_are_refused(tmp_path):
    # TLS (the system's roots) and a token open: the connection is made in the background.
    ember.Client(host=UNREACHABLE, auth_token="header.payload.signature").close()
    with pytest.raises(ember.InvalidArgumentError) as e:
        ember.Client(host=UNREACHABLE, ssl_ca_file=tmp_path / "missing.pem")
    assert "Cannot read the trusted certificates file" in str(e.value)
    for token in ["", "two words", "x" * 20_000]:
        with pytest.raises(ember.InvalidArgumentError):
            ember.Client(host=UNREACHABLE, auth_token=token)
    with pytest.raises(ember.InvalidArgumentError):
        ember.Client(host=UNREACHABLE, auth_token=b"bytes")
    with pytest.raises(ValueError):
        ember.Client(host=UNREACHABLE, auth_token="nul\0inside")
    # Without a host, ssl means nothing.
    ember.Client(ssl=True).close()


@pytest.mark.parametrize("kwargs", [
    {"host": b"127.0.0.1:8080", "ssl": False},
    {"host": 8080, "ssl": False},
    {"host": "127.0.0.1:8080", "ssl": "no"},
    {"host": "127.0.0.1:8080", "ssl": False, "project": "my-project"},
    {"host": "127.0.0.1:8080", "ssl": False, "database": "other"},
])
def test_wrong_types_and_other_databases_are_refused(kwargs):
    with pytest.raises(ember.InvalidArgumentError):
        ember.Client(**kwargs)


def test_an_unreachable_host_opens_and_writes_stay_pending(tmp_path):
    path = str(tmp_path / "app.ember")
    with ember.Client(host=UNREACHABLE, ssl=False, project="demo-ember", database="(default)", path=path) as db:
        assert UNREACHABLE in repr(db)
        assert db.is_persistent
        # The tree syncs with the in-process backend: acknowledged without the server.
        db.reference("posts/p1").set({"title": "Hi"}).wait(5)
        assert db.reference("posts/p1").get() == {"title": "Hi"}
        db.disable_network()                       # writes return at once, pending
        result = db.collection("cities").document("SF").set({"name": "SF"})
        assert result.update_time is None
        snap = db.collection("cities").document("SF").get(source=ember.Source.CACHE)
        assert snap.to_dict() == {"name": "SF"} and snap.metadata.has_pending_writes
    # Reopened (still no server): the write is still queued in the file.
    with ember.Client(host=UNREACHABLE, ssl=False, path=path) as db:
        snap = db.collection("cities").document("SF").get(source=ember.Source.CACHE)
        assert snap.to_dict() == {"name": "SF"} and snap.metadata.has_pending_writes


def test_a_write_while_the_server_is_unreachable_returns_pending_after_the_bounded_wait(tmp_path, monkeypatch):
    # Online (network enabled) but no server: the write is queued, not an error. It waits
    # REMOTE_WRITE_WAIT for an acknowledgement, then returns pending instead of blocking.
    monkeypatch.setattr(ember.Client, "REMOTE_WRITE_WAIT", 0.5)
    with ember.Client(host=UNREACHABLE, ssl=False, path=str(tmp_path / "app.ember")) as db:
        started = time.monotonic()
        result = db.collection("cities").document("LA").set({"name": "LA"})
        assert time.monotonic() - started < 5
        assert result.update_time is None and not result.done
        with pytest.raises(ember.DeadlineExceededError):
            result.wait(0.1)
        snap = db.collection("cities").document("LA").get(source=ember.Source.CACHE)
        assert snap.to_dict() == {"name": "LA"} and snap.metadata.has_pending_writes
