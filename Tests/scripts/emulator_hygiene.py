#!/usr/bin/env python3
"""The test of the test runner (issue 10, item 7).

A test process that started the Firestore emulator must leave none of its processes
(gcloud -> bash -> java, ~250 MB) behind, however it ends. This runs the fixture test
EmulatorLifecycleTests once per way out and checks the emulator's process group from outside:

- normal:   the test process ends normally without stopping the emulator;
- fail:     a failed assertion;
- crash:    the process kills itself with SIGKILL;
- unreaped: SIGKILL, and its parent does not reap it (a zombie, as under a container's init that
            never calls wait()): a watchdog that polls `kill -0 <pid>` never sees such a process end.

Usage: Tests/scripts/emulator_hygiene.py [scratch-path]   (after `swift build --build-tests`)
"""
import os, re, shutil, signal, subprocess, sys, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRATCH = sys.argv[1] if len(sys.argv) > 1 else ".build"
FILTER = "EmberCoreTests.EmulatorLifecycleTests/testEmulatorProcessGroupIsGoneAfterEveryWayOut"


def live_members(pgid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            out.append(f"{entry} {stat[:stat.rindex(')') + 1]}")
    return out


def wait_gone(pgid, seconds=20.0):
    deadline = time.monotonic() + seconds
    while True:
        left = live_members(pgid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.25)


def fixture_env(mode):
    env = dict(os.environ)
    env["EMBER_EMULATOR_LIFECYCLE"] = mode
    return env


def run_through_swift_test(mode):
    cmd = ["swift", "test", "--skip-build", "--scratch-path", SCRATCH, "--filter", FILTER]
    p = subprocess.run(cmd, cwd=ROOT, env=fixture_env(mode), capture_output=True, text=True, timeout=300)
    return p.stdout + p.stderr, None


def run_unreaped():
    """Starts the xctest bundle directly and lets it die (SIGKILL) without reaping it."""
    bundle = os.path.join(ROOT, SCRATCH, "debug", "EmberPackageTests.xctest")
    p = subprocess.Popen([bundle, FILTER], cwd=ROOT, env=fixture_env("crash"),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = []
    for line in p.stdout:                       # ends when the process is gone (pipe closed)
        out.append(line)
    # p is now a zombie: not reaped until p.wait() below, after the check.
    return "".join(out), p


def main():
    if shutil.which("gcloud") is None:
        print("emulator hygiene: gcloud is not on PATH, nothing to check (the differential tests skip too)")
        return 0
    failures = 0
    for mode in ("normal", "fail", "crash", "unreaped"):
        output, child = run_unreaped() if mode == "unreaped" else run_through_swift_test(mode)
        m = re.search(r"EMULATOR_PGID=(\d+)", output)
        if not m:
            print(output[-3000:])
            print(f"FAIL emulator hygiene ({mode}): the fixture did not start the emulator")
            failures += 1
            if child:
                child.wait()
            continue
        pgid = int(m.group(1))
        left = wait_gone(pgid)
        if child:
            child.wait()
        if left:
            print(f"FAIL emulator hygiene ({mode}): group {pgid} still runs 20 s after the test process ended:")
            print("\n".join(left))
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            failures += 1
        else:
            print(f"ok emulator hygiene ({mode}): group {pgid} gone")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
