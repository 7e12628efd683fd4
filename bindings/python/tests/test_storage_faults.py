"""Storage failures are never acknowledged.

Two ways to make the disk fail under a running Ember:
- a real full disk: a 2 MiB tmpfs (mounted by the test where the process may mount one, i.e.
  as root, as on this project's machines and CI);
- an LD_PRELOAD shim (Tests/faultfs/faultfs.c, built here with the C compiler) that fails
  write/pwrite/fsync on the database files with ENOSPC, EIO or EROFS while a flag file exists; the
  writer runs in a child process with the shim, the checks reopen the file without it.

Each write either fails visibly (the call or wait() raises the code's class) or is in the file
after a reopen; writes work again, without a restart, once the fault is gone.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import pytest

import ember

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_SOURCE = os.path.join(HERE, "..", "..", "..", "Tests", "faultfs", "faultfs.c")
PAD = "x" * 4000


def _write(ref, i):
    """One 4 KB write, waited for. Returns 'ok' or the class name of the error it raised."""
    try:
        ref.set({"i": i, "pad": PAD}).wait(timeout=30)
        return "ok"
    except ember.EmberError as e:
        return type(e).__name__


def _check_reopened(path, outcomes, collection="docs", copy_to=None):
    """Every acknowledged write is in the file; no refused one is. With `copy_to`, the files are
    first copied there as they are (what a crash would leave), to reopen them on a disk with room."""
    if copy_to is not None:
        os.makedirs(copy_to, exist_ok=True)
        for suffix in ("", "-wal"):
            if os.path.exists(path + suffix):
                shutil.copyfile(path + suffix, os.path.join(copy_to, "app.ember" + suffix))
        path = os.path.join(copy_to, "app.ember")
    with ember.Client(path=path) as db:
        got = {d.id: d.to_dict() for d in db.collection(collection).get()}
    for i, outcome in outcomes.items():
        key = "d%04d" % int(i)
        if outcome == "ok":
            assert key in got, f"write {i} was acknowledged but is gone after reopening"
            assert got[key] == {"i": int(i), "pad": PAD}
        else:
            assert key not in got, f"write {i} raised {outcome} but is in the file"


# ---------------------------------------------------------------- a real full disk (tmpfs)

@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the LD_PRELOAD tests below cover the failures)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + r.stderr.strip())
    try:
        yield str(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.parametrize("persistence", [True, False])
def test_full_disk_writes_fail_visibly_and_acknowledged_ones_survive(small_tmpfs, persistence):
    path = os.path.join(small_tmpfs, "app.ember")
    ballast = os.path.join(small_tmpfs, "ballast")
    with open(ballast, "wb") as f:
        f.write(b"\0" * (512 * 1024))
    outcomes = {}
    events = []
    lock = threading.Lock()
    db = ember.Client(path=path, persistence=persistence)
    try:
        def on_snapshot(docs, changes, read_time):
            with lock:
                events.extend((c.type.name, c.document.id) for c in changes)
        watch = db.collection("docs").on_snapshot(on_snapshot)
        for i in range(1200):
            outcomes[i] = _write(db.collection("docs").document("d%04d" % i), i)
        failed = [i for i, o in outcomes.items() if o != "ok"]
        assert failed, "2 MiB cannot hold 1,200 writes of 4 KB: some must fail"
        assert {outcomes[i] for i in failed} == {"ResourceExhaustedError"}
        # Later writes keep failing while the disk is full...
        assert _write(db.collection("docs").document("late"), 0) == "ResourceExhaustedError"
        # ...and work again, without a restart, once space returns.
        os.remove(ballast)
        for i in range(1200, 1210):
            outcomes[i] = _write(db.collection("docs").document("d%04d" % i), i)
            assert outcomes[i] == "ok"
        if not persistence:
            # A memory cache applies the write locally first: a refused one is rolled back
            # with the events of a rejected write (added, then removed).
            with lock:
                kinds = [k for k, d in events if d == "d%04d" % failed[0]]
            assert kinds == ["ADDED", "REMOVED"], kinds
        # Nothing acknowledged left the local view.
        have = {d.id for d in db.collection("docs").get(source=ember.Source.CACHE)} if persistence else \
            {d.id for d in db.collection("docs").get()}
        assert {"d%04d" % i for i, o in outcomes.items() if o == "ok"} <= have
        watch.unsubscribe()
    finally:
        db.close()
    # Closing checkpoints the WAL into the main file, which needs room the 2 MiB disk may no longer
    # have: the files are reopened as they are, from a copy on a disk with room.
    _check_reopened(path, outcomes, copy_to=os.path.join(os.path.dirname(small_tmpfs), "copy"))


def test_removed_database_file_refuses_writes(tmp_path):
    path = str(tmp_path / "app.ember")
    with ember.Client(path=path) as db:
        assert _write(db.collection("docs").document("d0000"), 0) == "ok"
        os.remove(path)
        # Writing on would go to an unlinked file, lost at close: refused instead.
        assert _write(db.collection("docs").document("d0001"), 1) == "DataLossError"
        assert _write(db.collection("docs").document("d0002"), 2) == "DataLossError"


# ---------------------------------------------------------------- injected failures (LD_PRELOAD)

@pytest.fixture(scope="module")
def faultfs(tmp_path_factory):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.fail(f"no C compiler ({cc}) to build the fault shim")
    out = str(tmp_path_factory.mktemp("faultfs") / "faultfs.so")
    subprocess.run([cc, "-std=gnu99", "-shared", "-fPIC", "-O1", "-o", out, SHIM_SOURCE, "-ldl"], check=True)
    return out


CHILD = textwrap.dedent("""
    import json, os, sys
    import ember
    path, flag, persistence = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    PAD = "x" * 4000
    def write(db, i):
        try:
            db.collection("docs").document("d%04d" % i).set({"i": i, "pad": PAD}).wait(timeout=30)
            return "ok"
        except ember.EmberError as e:
            return type(e).__name__
    out = {}
    db = ember.Client(path=path, persistence=persistence)
    for i in range(350):
        if i == 100:
            open(flag, "w").write("ENOSPC")
        if i == 150:
            open(flag, "w").write("EIO")
        if i == 200:
            open(flag, "w").write("EROFS")
        if i == 250:
            os.remove(flag)
        out[i] = write(db, i)
    db.close()
    print(json.dumps(out))
""")


@pytest.mark.parametrize("persistence", [True, False])
def test_injected_write_failures_are_reported_and_nothing_acknowledged_is_lost(tmp_path, faultfs, persistence):
    d = tmp_path / "db"
    d.mkdir()
    path = str(d / "app.ember")
    env = dict(os.environ, LD_PRELOAD=faultfs, EMBER_FAULT_DIR=str(d))
    r = subprocess.run([sys.executable, "-c", CHILD, path, str(d / ".fault"), "1" if persistence else "0"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    outcomes = {int(k): v for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}
    assert all(outcomes[i] == "ok" for i in range(100)), outcomes
    assert all(outcomes[i] == "ok" for i in range(250, 350)), outcomes
    assert {outcomes[i] for i in range(100, 150)} == {"ResourceExhaustedError"}, outcomes
    assert {outcomes[i] for i in range(150, 200)} == {"UnavailableError"}, outcomes
    assert {outcomes[i] for i in range(200, 250)} == {"PermissionDeniedError"}, outcomes
    _check_reopened(path, outcomes)
