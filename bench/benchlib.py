"""What the Python benchmark scripts of bench/ share: percentiles, logging to stderr, and the end
of a run (no process of a server it started is left; the figures as JSON on request)."""
import json
import sys


def pct(xs, p):
    """The p-th percentile of xs (nearest rank); None when there is no sample."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def finish(servers, started, json_path, results):
    """Prints how many servers the run started and which of their processes are left, and writes
    `results` to json_path when given."""
    left = [x for srv in started for x in servers.group_members(srv.pgid)]
    print(f"servers started: {len(started)}; processes of theirs left: {left or 'none'}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1, default=str)
