"""What the Python benchmark scripts of bench/ share: percentiles, logging to stderr, a markdown
table, and the end of a run (no process of a server it started is left; the figures as JSON on
request)."""
import json
import sys


def pct(xs, p):
    """The p-th percentile of xs (nearest rank); None when there is no sample."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def markdown_table(head, rows):
    """`head` and `rows` (tuples of strings) as a markdown table, each column padded to its widest."""
    w = [max(len(r[i]) for r in list(rows) + [head]) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(head)) + " |",
             "|" + "|".join("-" * (x + 2) for x in w) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |")
    return "\n".join(lines)


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
