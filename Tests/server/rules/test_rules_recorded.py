"""The recorded rules outcomes are still what the emulator decides.

Responsible for: re-running every case of cases.py against the emulator (with its own
emulator, started with --rules) and comparing with Tests/EmberRulesTests/Resources/
differential_cases.json, which the Swift DifferentialTests check EmberRules against. A changed
case, rule or emulator shows up here; rerun record_rules_cases.py to update the file.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_rules_cases as rec  # noqa: E402


def test_emulator_agrees_with_the_recorded_outcomes():
    why = rec.servers.emulator_missing()
    if why:
        pytest.skip(why)
    got = rec.record()
    with open(rec.OUT) as f:
        recorded = json.load(f)
    assert len(got["cases"]) >= 30
    changed = [f"{g['name']}: emulator {g['expected']}, recorded {r['expected']}"
               for g, r in zip(got["cases"], recorded["cases"]) if g != r]
    assert changed == [] and len(got["cases"]) == len(recorded["cases"]), "\n".join(changed)
