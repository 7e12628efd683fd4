"""The tree of several `ember serve` instances on one PostgreSQL (docs/scale-out.md): a REST
write on one instance is read and streamed on the other, firebase_admin transactions through
both lose no update, rules set through one decide on the other, and an instance started later
replays the tree. The PostgreSQL is the test run's own (EMBER_TEST_POSTGRES_URL, set by
Tests/scripts/with_postgres.py; make test-server runs under it)."""
import os
import threading
import uuid

import pytest

import servers
from tree.rtdb_http import EventStream, call, database_port

firebase_admin = pytest.importorskip("firebase_admin", reason="firebase-admin is installed by the Makefile's server venv")
from firebase_admin import db  # noqa: E402

ADMIN = {"Authorization": "Bearer owner"}


def start(tmp_path, name):
    url = os.environ.get("EMBER_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("EMBER_TEST_POSTGRES_URL is not set: run under Tests/scripts/with_postgres.py (make test-server does)",
                    pytrace=False)
    (tmp_path / name).mkdir()
    return servers.start_ember(str(tmp_path / name), memory=True, extra_args=("--postgres", url))


@pytest.fixture
def pair(tmp_path):
    a = start(tmp_path, "a")
    try:
        b = start(tmp_path, "b")
    except BaseException:
        a.stop()
        raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def ns():
    return "t" + uuid.uuid4().hex[:12]


def test_a_rest_write_on_one_instance_is_read_and_streamed_on_the_other(pair, tmp_path):
    a, b = (database_port(s) for s in pair)
    n = ns()
    with EventStream(b, "/room.json", {"ns": n}) as events:
        assert events.next() == ("put", {"path": "/", "data": None})
        assert call(a, "PUT", "/room/x.json", {"ns": n}, body={"t": 1}).status == 200
        assert events.next() == ("put", {"path": "/x", "data": {"t": 1}})
        # A write of several locations travels whole: one patch event, as on one server.
        assert call(a, "PATCH", "/room.json", {"ns": n}, body={"y": 2, "z": 3}).status == 200
        assert events.next() == ("patch", {"path": "/", "data": {"y": 2, "z": 3}})
    assert call(b, "GET", "/room.json", {"ns": n}).json == {"x": {"t": 1}, "y": 2, "z": 3}
    # An instance started afterwards replays the tree.
    c = start(tmp_path, "c")
    try:
        assert call(database_port(c), "GET", "/room.json", {"ns": n}).json == {"x": {"t": 1}, "y": 2, "z": 3}
    finally:
        c.stop()


def test_transactions_through_two_instances_lose_no_update(pair):
    n = ns()
    apps = []
    try:
        refs = []
        for i, s in enumerate(pair):
            os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"127.0.0.1:{database_port(s)}"
            app = firebase_admin.initialize_app(options={"databaseURL": f"https://{n}.firebaseio.com", "projectId": "demo-ember"},
                                                name=f"{n}-{i}")
            apps.append(app)
            refs.append(db.reference("/counter", app=app))
        errors = []

        def work(ref):
            try:
                for _ in range(15):
                    ref.transaction(lambda v: (v or 0) + 1)
            except Exception as e:   # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(refs[i % 2],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors, errors
        assert [r.get() for r in refs] == [60, 60]
    finally:
        for app in apps:
            firebase_admin.delete_app(app)


def test_rules_set_through_one_instance_decide_on_the_other(pair):
    a, b = (database_port(s) for s in pair)
    n = ns()
    assert call(b, "PUT", "/open.json", {"ns": n}, body=1).status == 200
    rules = {"rules": {".read": True, "open": {".write": False}}}
    assert call(a, "PUT", "/.settings/rules.json", {"ns": n}, body=rules, headers=ADMIN).status == 200
    r = call(b, "PUT", "/open.json", {"ns": n}, body=2)
    assert r.status == 401, r
    assert call(b, "GET", "/open.json", {"ns": n}).json == 1
    assert call(b, "GET", "/.settings/rules.json", {"ns": n}, headers=ADMIN).json == rules
