"""The same google-cloud-firestore scripts (scenarios.py) against the Firestore emulator and
`ember serve`: documents, query results and their order, aggregation values, error classes and
listener event sequences must be equal."""
import json
import uuid

import pytest

import servers
from scenarios import SCENARIOS


def run(host, name, prefix):
    db = servers.client(host)
    try:
        return json.loads(json.dumps(SCENARIOS[name](db, prefix), sort_keys=True, default=str))
    finally:
        db.close()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_answers_as_the_emulator(name, emulator, ember_server):
    prefix = "t" + uuid.uuid4().hex[:6] + "-"
    expected = run(emulator.host, name, prefix)
    got = run(ember_server.host, name, prefix)
    if got != expected:
        pytest.fail("ember serve differs from the emulator:\n emulator: " + json.dumps(expected, sort_keys=True)
                    + "\n ember:    " + json.dumps(got, sort_keys=True))
