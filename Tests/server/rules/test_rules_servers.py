"""`ember serve --rules` decides every rules case as the Firestore emulator does, over gRPC.

Responsible for: running every case of cases.py over gRPC (grpc_rules.py) against the emulator
started with --rules=differential.rules and against `ember serve --memory --rules` with the same
file, and checking recorded (differential_cases.json) == emulator == ember for each case, with
one table of every mismatch. Both servers get the same requests, collection-group queries
(`"group": true` cases: RunQuery and Listen query targets with allDescendants, under the
documents root) included.

Tokens: the emulator gets unsigned JWTs (`alg: none`) and is seeded as `Bearer owner`; ember gets
the same claims signed HS256 with the secret in --jwt-secret-file and is seeded with the token in
--admin-token-file. One server of each runs all the cases; before each case the data goes back
to the seed (grpc_rules.RulesServer.reset).

    .venv-server/bin/python -m pytest -q -p no:cacheprovider Tests/server/rules/test_rules_servers.py

The emulator half (test_emulator_over_grpc_decides_as_recorded) runs on its own. The ember half
fails, never skips, while $EMBER_BIN is missing or `ember serve --help` lists no --rules;
EMBER_SERVER_TESTS=emulator-only skips it (as ../conftest.py does). Both skip without the emulator.
"""
import json
import os
import secrets
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import grpc_rules  # noqa: E402
import servers  # noqa: E402
from cases import CASES, unpack  # noqa: E402
from record_rules_cases import OUT, RULES  # noqa: E402
from tokens import PROJECT, hs256_token, unsigned_token  # noqa: E402

ALL = [unpack(c) for c in CASES]
HELP_SECONDS = 20


def run_all(server):
    """{case name: outcome} for every case, each on freshly seeded data."""
    outcomes = {}
    for case in ALL:
        server.reset()
        outcomes[case["name"]] = server.run(case)
    return outcomes


def recorded():
    with open(OUT) as f:
        return {c["name"]: c["expected"] for c in json.load(f)["cases"]}


def disagreements(columns):
    """The cases on which the columns ({title: {case: outcome}}) differ, as table lines."""
    titles = list(columns)
    width = max(len(c["name"]) for c in ALL)
    lines = [f"  {c['name']:<{width}}  " + "  ".join(f"{columns[t].get(c['name'], 'missing'):<8}" for t in titles)
             for c in ALL if len({columns[t].get(c["name"], "missing") for t in titles}) > 1]
    if lines:
        lines.insert(0, f"{len(lines)} of {len(ALL)} cases differ:\n  {'case':<{width}}  "
                        + "  ".join(f"{t:<8}" for t in titles))
    return lines


def ember_rules_missing():
    """Why `ember serve` cannot run the rules cases here, or None."""
    why = servers.ember_missing()
    if why:
        return why
    try:
        helped = subprocess.run([servers.EMBER_BIN, "serve", "--help"], capture_output=True, text=True,
                                timeout=HELP_SECONDS)
    except subprocess.TimeoutExpired:
        return f"`{servers.EMBER_BIN} serve --help` did not end within {HELP_SECONDS} s"
    if "--rules" not in helped.stdout + helped.stderr:
        return (f"`{servers.EMBER_BIN} serve --help` lists no --rules: this ember cannot enforce "
                "security rules yet (issue 14: --rules, --jwt-secret-file, --admin-token-file), so the "
                "ember half of the rules differential cannot run")
    return None


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="ember-rules-") as d:
        yield d


@pytest.fixture(scope="module")
def emulator_outcomes(workdir):
    why = servers.emulator_missing()
    if why:
        pytest.skip(why)
    srv = servers.start_emulator(workdir, project=PROJECT, extra_args=[f"--rules={RULES}"])
    try:
        clear = f"http://{srv.host}/emulator/v1/projects/{PROJECT}/databases/(default)/documents"
        server = grpc_rules.RulesServer(srv.host, unsigned_token, "owner", clear_url=clear)
        try:
            return run_all(server)
        finally:
            server.close()
    finally:
        srv.stop()


def test_emulator_over_grpc_decides_as_recorded(emulator_outcomes):
    assert len(ALL) >= 100
    assert any(c.get("group") and c["method"] == "list" for c in ALL), "no collection-group query case"
    assert any(c.get("group") and c["method"] == "listen" for c in ALL), "no collection-group listen case"
    expected = recorded()
    assert list(expected) == [c["name"] for c in ALL], \
        f"cases.py and {OUT} list different cases: run record_rules_cases.py"
    table = disagreements({"recorded": expected, "emulator": emulator_outcomes})
    assert not table, "\n".join(table)


def test_ember_serve_decides_as_the_emulator(emulator_outcomes, workdir):
    if os.environ.get("EMBER_SERVER_TESTS") == "emulator-only":
        pytest.skip("EMBER_SERVER_TESTS=emulator-only")
    why = ember_rules_missing()
    if why:
        pytest.fail(why, pytrace=False)
    secret = secrets.token_hex(32)                 # no newline in either file
    admin = "admin-" + secrets.token_hex(16)
    secret_file, admin_file = os.path.join(workdir, "jwt-secret"), os.path.join(workdir, "admin-token")
    for path, text in ((secret_file, secret), (admin_file, admin)):
        with open(path, "w") as f:
            f.write(text)
    try:
        srv = servers.start_ember(workdir, memory=True, extra_args=[
            "--rules", RULES, "--jwt-secret-file", secret_file, "--admin-token-file", admin_file])
    except servers.StartError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        server = grpc_rules.RulesServer(srv.host, lambda auth: hs256_token(auth, secret.encode()), admin)
        try:
            ember = run_all(server)
        finally:
            server.close()
    finally:
        srv.stop()
    table = disagreements({"recorded": recorded(), "emulator": emulator_outcomes, "ember": ember})
    assert not table, "\n".join(table) + f"\n(ember's log: {srv.log_tail(1500)})"
