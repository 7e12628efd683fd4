"""Fixtures of the mixed-language client tests (README.md): the programs they run and a bound
per test. Every path comes from the Makefile's `test-remote` (EMBER_BIN, EMBER_C_CLIENT,
EMBER_SWIFT_CLIENT); a missing program fails the test that needs it (it is never skipped)."""
import faulthandler
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Tests", "server"))   # servers.py: ember serve under a watchdog
TEST_SECONDS = 300


@pytest.fixture(autouse=True)
def _bounded():
    faulthandler.dump_traceback_later(TEST_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _program(variable, default, hint):
    path = os.environ.get(variable, default)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"{variable}: no program at {path} ({hint}; `make test-remote` builds it)", pytrace=False)
    return path


@pytest.fixture
def c_client():
    return _program("EMBER_C_CLIENT", os.path.join(ROOT, ".build", "remote", "c_client"), "Tests/remote/c_client.c")


@pytest.fixture
def c_tree_client():
    return _program("EMBER_C_TREE_CLIENT", os.path.join(ROOT, ".build", "remote", "c_tree_client"), "Tests/remote/c_tree_client.c")


@pytest.fixture
def swift_client():
    return _program("EMBER_SWIFT_CLIENT", os.path.join(ROOT, ".build", "debug", "EmberHostClient"),
                    "swift build --product EmberHostClient")


@pytest.fixture
def python_client():
    return [sys.executable, os.path.join(HERE, "python_client.py")]
