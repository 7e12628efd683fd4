"""What the Python benchmark scripts of bench/ share: each figure's target and verdict (from
bench/targets.json), percentiles, logging to stderr, a markdown table, and the end of a run (no
process of a server it started is left; the figures as JSON on request).

`python3 bench/benchlib.py` checks targets.json and lists its targets."""
import json
import os
import sys

TARGETS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets.json")
_targets = None


def targets():
    """bench/targets.json's entries by id, read once and checked: a malformed entry stops the run."""
    global _targets
    if _targets is None:
        with open(TARGETS_FILE, encoding="utf-8") as f:
            entries = json.load(f)["targets"]
        by_id = {}
        for e in entries:
            where = f"{TARGETS_FILE}: {e.get('id', e)}"
            if e.get("id") in by_id:
                raise ValueError(f"{where}: id given twice")
            if e.get("comparison") not in ("≤", "≥"):
                raise ValueError(f"{where}: comparison must be ≤ or ≥")
            if not isinstance(e.get("value"), (int, float)) or not e.get("unit") or not e.get("description"):
                raise ValueError(f"{where}: needs a numeric value, a unit and a description")
            if "ratio" in e and (e["ratio"] not in ("peer/ember", "ember/peer") or not e.get("peer")):
                raise ValueError(f"{where}: ratio must be peer/ember or ember/peer, with its peer named")
            by_id[e["id"]] = e
        _targets = by_id
    return _targets


def target(fig):
    """The entry of figure `fig` in bench/targets.json."""
    try:
        return targets()[fig]
    except KeyError:
        raise KeyError(f"no target {fig!r} in {TARGETS_FILE}") from None


def _number(x):
    return f"{x:,}" if isinstance(x, int) or float(x).is_integer() and abs(x) >= 1000 else f"{x:g}"


def target_text(fig):
    """The target as printed beside the figure: "≤ 300 µs", "≥ 50,000 docs/s", "≥ 10x (peer/ember)"."""
    e = target(fig)
    unit = "x" if e["unit"] == "x" else " " + e["unit"]
    text = f"{e['comparison']} {_number(e['value'])}{unit}"
    return text + f" ({e['ratio']})" if "ratio" in e else text


def target_value(fig):
    return target(fig)["value"]


def ratio(fig, measured, peer):
    """For a ratio target: peer/measured or measured/peer as targets.json says; None without both."""
    e = target(fig)
    try:
        return peer / measured if e["ratio"] == "peer/ember" else measured / peer
    except (TypeError, ZeroDivisionError):
        return None


def verdict(fig, measured, peer=None):
    """"met" or "MISSED" for figure `fig` measured as `measured` (Ember's value; with `peer`, the
    peer's value in the same run, for a ratio target), "n/a" when there is nothing to judge."""
    e = target(fig)
    x = ratio(fig, measured, peer) if "ratio" in e else measured
    if x is None or isinstance(x, str):
        return "n/a"
    try:
        ok = x <= e["value"] if e["comparison"] == "≤" else x >= e["value"]
    except TypeError:
        return "n/a"
    return "met" if ok else "MISSED"


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


if __name__ == "__main__":
    for fig, e in targets().items():
        print(f"{fig:<40} {e['bench']:<18} {target_text(fig):<24} {e['description']}")
