"""Fixtures of the server tests: the two servers (one each per session) and clients for them.

- `emulator`, `ember`: "127.0.0.1:PORT" of the Firestore emulator and of `ember serve` (on a
  fresh file in a temporary directory), started once per session, stopped at its end; neither
  can outlive the run (servers.py).
- `make_client(host, project=None)`: a google-cloud-firestore client for `host`, on a project of
  its own unless one is named; closed after the test.

EMBER_SERVER_TESTS=emulator-only runs only what needs no `ember serve` (the emulator side, to
develop the scenarios); otherwise a missing server binary fails the tests that need it.
EMBER_SERVER_STORE=postgres starts the `ember` server on the run's PostgreSQL instead of a file.
Every test is bounded (TEST_SECONDS): a hung call ends the run with every thread's traceback.
"""
import faulthandler
import os
import sys
import tempfile
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servers  # noqa: E402

MODE = os.environ.get("EMBER_SERVER_TESTS", "all")
EMULATOR_ONLY = MODE == "emulator-only"
# Where the `ember` fixture's server keeps its documents: its SQLite file, or "postgres".
STORE = os.environ.get("EMBER_SERVER_STORE", "sqlite")
TEST_SECONDS = 240


def pytest_configure(config):
    if MODE not in ("all", "emulator-only"):
        raise pytest.UsageError(f"EMBER_SERVER_TESTS={MODE!r}: expected 'all' (the default) or 'emulator-only'")


def pytest_collection_modifyitems(config, items):
    if not EMULATOR_ONLY:
        return
    skip = pytest.mark.skip(reason="EMBER_SERVER_TESTS=emulator-only")
    for item in items:
        if "ember" in getattr(item, "fixturenames", ()) or item.module.__name__ == "test_multiprocess":
            item.add_marker(skip)


def pytest_report_header(config):
    return [f"server tests: EMBER_SERVER_TESTS={MODE}, EMBER_SERVER_STORE={STORE}, EMBER_BIN={servers.EMBER_BIN}"]


@pytest.fixture(autouse=True)
def _bounded():
    faulthandler.dump_traceback_later(TEST_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="session")
def server_tmpdir():
    with tempfile.TemporaryDirectory(prefix="ember-server-tests-") as d:
        yield d


def _start(start, tmpdir, hint):
    """start(tmpdir), or the test fails (not skips) with the reason and `hint`."""
    try:
        return start(tmpdir), None
    except servers.StartError as e:
        return None, f"{e}\n{hint}"


@pytest.fixture(scope="session")
def emulator(server_tmpdir):
    srv, why = _start(servers.start_emulator, server_tmpdir, "(the differential tests need gcloud's Firestore emulator)")
    if why:
        pytest.fail(why, pytrace=False)
    yield srv.host
    srv.stop()


def _start_ember(tmpdir):
    """`ember serve` on its file, or with EMBER_SERVER_STORE=postgres on the run's PostgreSQL
    (servers.start_ember reads it): the same suites against a PostgreSQL-backed server."""
    if STORE == "postgres" and not os.environ.get("EMBER_TEST_POSTGRES_URL"):
        raise servers.StartError("EMBER_SERVER_STORE=postgres needs EMBER_TEST_POSTGRES_URL (run under Tests/scripts/with_postgres.py)")
    return servers.start_ember(tmpdir)


@pytest.fixture(scope="session")
def ember(server_tmpdir):
    srv, why = _start(_start_ember, server_tmpdir, "(EMBER_SERVER_TESTS=emulator-only runs only the emulator side)")
    if why:
        pytest.fail(why, pytrace=False)
    yield srv.host
    srv.stop()


def new_project():
    return "demo-" + uuid.uuid4().hex[:12]


@pytest.fixture
def make_client():
    made = []

    def make(host, project=None):
        db = servers.client(host, project or new_project())
        made.append(db)
        return db

    yield make
    for db in made:
        db.close()
