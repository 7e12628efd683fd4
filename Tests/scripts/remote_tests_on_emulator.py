#!/usr/bin/env python3
"""EmberRemoteTests against the Firestore emulator (issue 12: the same scenarios against the
emulator), run by `make test-swift` after the suites (the test bundle built).

Starts `gcloud beta emulators firestore start --host-port=127.0.0.1:PORT --project=demo-ember` with
Tests/server/servers.py (its own process group under a watchdog: it cannot outlive this process),
runs `swift test --skip-build --filter EmberRemoteTests` (less the tree's classes, which never use
a Firestore server) with EMBER_REMOTE_TEST_PORT=PORT (each test
then uses a project of its own there; the two that restart an in-process ember serve skip with
their reason), bounded by SWIFT_TEST_SECONDS, and exits with its status.
Without the emulator installed it prints why and exits 0 (as the Swift emulator tests skip).

Usage: Tests/scripts/remote_tests_on_emulator.py [scratch-path]   (after `swift build --build-tests`)
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

# EmberRemoteTests' classes that never use a Firestore server (the tree over ember serve's tree port).
TREE_ONLY = "RemoteTreeTests|RealtimeClientTests|DatabaseHostTests|OnDisconnectTests"

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "server"))
import servers  # noqa: E402

SCRATCH = sys.argv[1] if len(sys.argv) > 1 else ".build"
SWIFT = os.environ.get("SWIFT", "swift")
SWIFT_TEST_SECONDS = 900


def main():
    why = servers.emulator_missing()
    if why:
        print(f"SKIPPED: EmberRemoteTests against the Firestore emulator: {why}", flush=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="ember-remote-emulator-") as tmp:
        emulator = servers.start_emulator(tmp)
        try:
            print(f"== EmberRemoteTests against the Firestore emulator on {emulator.host}", flush=True)
            env = dict(os.environ, EMBER_REMOTE_TEST_PORT=str(emulator.port))
            # The tree's classes talk to an in-process ember serve only (the emulator has no tree):
            # the main run has them; running them twice only doubles their exposure to timing.
            command = [SWIFT, "test", "--skip-build", "--scratch-path", SCRATCH, "--filter", "EmberRemoteTests",
                       "--skip", TREE_ONLY]
            p = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, start_new_session=True)
            try:
                out, _ = p.communicate(timeout=SWIFT_TEST_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
                print(out)
                print(f"FAILED: {' '.join(command)} still running after {SWIFT_TEST_SECONDS} s (killed)\n"
                      f"emulator log:\n{emulator.log_tail()}")
                return 1
            print(out, end="")
            summary = re.findall(r"Executed \d+ tests?, with \d+ tests? skipped and \d+ failures?.*", out)
            if p.returncode != 0:
                print(f"FAILED: EmberRemoteTests against the emulator (status {p.returncode})\n"
                      f"emulator log:\n{emulator.log_tail()}")
                return 1
            if not summary:
                print("FAILED: no XCTest summary in the output (were the tests built? make test-swift builds them)")
                return 1
            print(f"== against the emulator: {summary[-1]} (the skipped ones restart an in-process ember serve)")
            return 0
        finally:
            emulator.stop()


if __name__ == "__main__":
    sys.exit(main())
