"""The same google-cloud-firestore scripts (scenarios.py) against the Firestore emulator and
`ember serve`: documents, query results and their order, aggregation values, errors (code and
message) and listener event sequences must be equal.

- test_same_as_the_emulator[name]: the scenario on the emulator, then on ember serve.
- test_emulator_is_deterministic[name]: the scenario twice on the emulator (other project, other
  prefix): a difference there is a scenario that lets something run-dependent (a time, an order
  that is not promised) into its result, and must be fixed in the scenario.

Each run has a project and a collection prefix of its own; both are replaced by <project> and
<p> in the result, which is compared as canonical JSON text.
"""
import difflib
import json
import os
import traceback
import uuid

import pytest

import servers
from conftest import new_project
from scenarios import SCENARIOS

NAMES = sorted(SCENARIOS)
_emulator_results = {}


def _replace(v, subs):
    if isinstance(v, str):
        for old, new in subs:
            v = v.replace(old, new)
        return v
    if isinstance(v, dict):
        return {_replace(k, subs): _replace(x, subs) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_replace(x, subs) for x in v]
    return v


def run(host, name):
    """The scenario's result on the server at `host`, as indented canonical JSON."""
    project, prefix = new_project(), "p" + uuid.uuid4().hex[:8] + "_"
    db = servers.client(host, project)
    try:
        result = SCENARIOS[name](db, prefix)
    finally:
        db.close()
    result = _replace(result, [(prefix, "<p>"), (project, "<project>")])
    return json.dumps(result, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False)


def emulator_result(host, name):
    if name not in _emulator_results:
        _emulator_results[name] = run(host, name)
    return _emulator_results[name]


def diff(expected, got, a, b):
    lines = difflib.unified_diff(expected.splitlines(), got.splitlines(), a, b, lineterm="", n=4)
    return "\n".join(lines)


def scenario_traceback(e):
    """The frames of an exception that are in this directory's files (the scenario's lines)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith(here)]
    return "".join(traceback.format_list(frames)) + f"{type(e).__name__}: {str(e)[:2000]}"


@pytest.mark.parametrize("name", NAMES)
def test_same_as_the_emulator(name, emulator, ember):
    expected = emulator_result(emulator, name)
    raised = None
    try:
        got = run(ember, name)
    except Exception as e:  # noqa: BLE001
        raised = scenario_traceback(e)
    if raised:
        pytest.fail(f"{name} raised on ember serve (not on the emulator):\n{raised}", pytrace=False)
    if got != expected:
        pytest.fail(f"ember serve differs from the emulator in {name}:\n"
                    + diff(expected, got, "emulator", "ember serve"), pytrace=False)


@pytest.mark.parametrize("name", NAMES)
def test_emulator_is_deterministic(name, emulator):
    first = emulator_result(emulator, name)
    second = run(emulator, name)
    if second != first:
        pytest.fail(f"{name} gives different results on two emulator runs (fix its normalization):\n"
                    + diff(first, second, "run 1", "run 2"), pytrace=False)
