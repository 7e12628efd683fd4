"""Process-level checks: the seed example, clean exits with pending callbacks, and the package
installed into a fresh venv and imported from another directory."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PKG = HERE.parent
ROOT = PKG.parent.parent


def run(args, cwd, timeout=60):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_seed_example_runs(tmp_path):
    p = run([sys.executable, str(PKG / "examples" / "realtime_updates.py")], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Received document snapshot: SF" in out
    assert "Current cities in California:" in out
    assert "New city: LA" in out and "Modified city: LA" in out and "Removed city: LA" in out
    assert out.strip().endswith("done")


def test_demo_runs(tmp_path):
    p = run([sys.executable, str(PKG / "examples" / "demo.py")], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Local data" in p.stdout and "Server data" in p.stdout and "done" in p.stdout


def test_exit_while_callbacks_pending_30_times(tmp_path):
    for i in range(30):
        p = run([sys.executable, str(HERE / "exit_while_pending.py")], cwd=tmp_path, timeout=30)
        assert p.returncode == 0, f"run {i}: rc={p.returncode} stderr={p.stderr[-2000:]}"
        assert p.stderr == "", f"run {i}: {p.stderr[-2000:]}"


def test_import_from_another_directory(tmp_path):
    p = run([sys.executable, "-c", "import ember, os; print(ember._ember.__file__); "
             "print(os.path.exists(os.path.join(os.path.dirname(ember._ember.__file__), 'libember.so')))"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1] == "True"


@pytest.mark.skipif(os.environ.get("EMBER_SKIP_VENV_TEST") == "1", reason="EMBER_SKIP_VENV_TEST=1")
def test_fresh_venv_install(tmp_path):
    venv = tmp_path / "venv"
    p = run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    py = venv / "bin" / "python"
    p = run([str(py), "-m", "pip", "install", "-q", str(PKG)], cwd=tmp_path, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import ember; db = ember.Client(); r = db.document('a/b'); r.set({'x': 1}).wait(5); "
            "print(r.get().to_dict()); db.close(); print(ember._ember.__file__)")
    p = run([str(py), "-c", code], cwd=elsewhere)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "{'x': 1}"
    assert str(venv) in p.stdout.splitlines()[1]
    assert "libember.so" in os.listdir(Path(p.stdout.splitlines()[1]).parent)
