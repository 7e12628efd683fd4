#!/usr/bin/env python3
"""Prints scenarios' results (the JSON the differential tests compare) from one server.

    show_scenario.py [--host 127.0.0.1:PORT | --ember | --emulator] [NAME ...]

--host uses a running server; --ember starts `ember serve` ($EMBER_BIN, a fresh --memory store);
--emulator (the default) starts the Firestore emulator. No NAME: every scenario.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servers  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
from test_differential import run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--host")
    g.add_argument("--ember", action="store_true")
    g.add_argument("--emulator", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    unknown = [n for n in args.names if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenarios {unknown}; known: {', '.join(sorted(SCENARIOS))}")
    with tempfile.TemporaryDirectory(prefix="ember-show-") as tmp:
        srv = None
        if args.host is None:
            srv = servers.start_ember(tmp, memory=True) if args.ember else servers.start_emulator(tmp)
        try:
            for name in args.names or sorted(SCENARIOS):
                print(f"== {name}")
                print(run(args.host or srv.host, name), flush=True)
        finally:
            if srv:
                srv.stop()


if __name__ == "__main__":
    main()
