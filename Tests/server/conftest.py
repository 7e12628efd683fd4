import tempfile

import pytest

import servers


@pytest.fixture(scope="session")
def tmpdir_session():
    with tempfile.TemporaryDirectory() as d:
        yield d


@pytest.fixture(scope="session")
def ember_server(tmpdir_session):
    s = servers.start_ember(tmpdir_session)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def emulator(tmpdir_session):
    if not servers.emulator_available():
        pytest.fail("gcloud's Firestore emulator is required for the differential tests")
    s = servers.start_emulator(tmpdir_session)
    yield s
    s.stop()
