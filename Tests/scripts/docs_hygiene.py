#!/usr/bin/env python3
"""Keeps Ember's prose and comments undated, mapped, linked and short (run by `make test-docs`).

Rules, each violation printed as `file:line: reason` (exit status 1 if there is any):

  dated     README.md, ARCHITECTURE.md, CONTRIBUTING.md, docs/**/*.md, Sources/**/*.swift and
            include/*.h (code and comments alike) carry no date (2026-11-28, 2026/11/28,
            28.11.2026, November 28, 2026, Nov 2026, 2026-11; an RFC 3339 timestamp such as
            2024-05-01T12:00:00Z is a value, and 1970-01-01 the Unix epoch, not dates), no issue
            or pull-request number ("issue 12", "issues 28 and 29", "#12", an "issue" that ends a
            line before the number) and no diary phrase (DIARY below; in markdown also
            MARKDOWN_DIARY; not inside markdown code or a source file's string literals: data).
            bench/RESULTS.md and CHANGELOG.md are the dated logs: exempt.
  mapped    every target declared in Package.swift (.target, .testTarget, .executableTarget,
            .systemLibrary, .binaryTarget, .plugin, .macro) has an ARCHITECTURE.md entry: a heading
            line "### `TargetName`" (more text may follow the name).
  linked    relative links in README.md, ARCHITECTURE.md, CONTRIBUTING.md, CHANGELOG.md,
            docs/**/*.md and bench/RESULTS.md name files or directories that exist in the
            repository (http:, https:, mailto: and other schemes, and pure #anchors, are skipped;
            a link's own #anchor is not checked; links inside code are not links).
  short     README.md <= 12,000 bytes, ARCHITECTURE.md <= 20,000, each docs/**/*.md <= 10,000.

README.md, ARCHITECTURE.md, CONTRIBUTING.md and CHANGELOG.md must exist.

Usage: Tests/scripts/docs_hygiene.py [ROOT]   (ROOT: the repository, default the one holding this
file). Its own test is Tests/scripts/test_docs_hygiene.py.
"""
import glob
import os
import re
import sys
from urllib.parse import unquote

REQUIRED = ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "CHANGELOG.md")
SIZE_LIMITS = {"README.md": 12_000, "ARCHITECTURE.md": 20_000}
DOCS_LIMIT = 10_000

# Phrases that tell the story of the work instead of the state of the code. Chosen against the
# tree: "as of" alone is Firestore's own wording (a read as of a time), "used to" alone is a
# participle ("the order used to sort"), "recently" is in "least-recently-used", "no longer" is in
# Firestore's error text and in state descriptions of the code: those are left to the forms below.
DIARY = [
    r"this session", r"last session", r"next session", r"previous session",
    r"today", r"yesterday", r"tonight",
    r"we decided", r"we found", r"we now", r"it turned out",
    r"as of (?:now|today|writing|this writing|this commit|this change|this session)",
    r"(?:we|it|this|they|Ember) used to",
    r"previously", r"until now", r"up to now", r"so far in this",
    r"now fixed", r"was fixed", r"fixed in commit",
]
# Markdown only: in prose these tell a change; in the sources they describe states ("no longer
# valid" is an error message Firestore's clients match).
MARKDOWN_DIARY = [r"no longer", r"used to (?:be|do|have|take|need|wait|run|send|keep)"]

MONTHS = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
          r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)")
YEAR = r"(?:19|20)\d{2}"
DATES = [
    # ISO date, not the date part of an RFC 3339 timestamp (a value in an example), not the epoch.
    re.compile(rf"(?<![\w-])(?!1970-01-01)(?:{YEAR})-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\dT])"),
    # ISO year-month.
    re.compile(rf"(?<![\w.-]){YEAR}-(?:0[1-9]|1[0-2])(?![\w-])"),
    re.compile(rf"(?<![\w/.]){YEAR}/(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])(?![\w/])"),
    re.compile(rf"(?<![\w/.])(?:0?[1-9]|[12]\d|3[01])[/.](?:0?[1-9]|1[0-2])[/.]{YEAR}(?![\w/.])"),
    re.compile(rf"\b{MONTHS}\.?\s+(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?,?\s+{YEAR}\b"),
    re.compile(rf"\b(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?\s+{MONTHS}\.?,?\s+{YEAR}\b"),
    re.compile(rf"\b{MONTHS}\.?,?\s+{YEAR}\b"),
]
ISSUE_REFS = [
    re.compile(r"\b(?:issues?|pull requests?|PRs?)\s*#?\d+", re.I),
    # "#12" as a reference: not C's #if, Swift's #selector, a raw string's #"..."#, an anchor
    # (page#L12, &#12;) or a format flag (%#x).
    re.compile(r"(?<![\w&#/%\"'\\])#\d+\b"),
]
ISSUE_AT_END = re.compile(r"\b(?:issues?|pull requests?|PRs?)\s*$", re.I)
NUMBER_AT_START = re.compile(r"^\s*(?:///?|/?\*+|#+|<!--|-|>)?\s*#?\d+\b")

TARGET_DECL = re.compile(
    r"\.(?:target|testTarget|executableTarget|systemLibrary|binaryTarget|plugin|macro)\(\s*name:\s*\"([^\"]+)\"")
ARCH_HEADING = re.compile(r"^###\s+`([^`]+)`(?:\s.*)?$")

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def rel(root, path):
    return os.path.relpath(path, root)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def files(root, pattern):
    return sorted(p for p in glob.glob(os.path.join(root, pattern), recursive=True) if os.path.isfile(p))


def markdown_lines(text):
    """(line number, line with code spans blanked, line as written, in a fenced block) per line."""
    out, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is not None:
            out.append((n, "", line, True))
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            out.append((n, "", line, True))
            continue
        out.append((n, CODE_SPAN.sub(lambda c: " " * len(c.group(0)), line), line, False))
    return out


def check_dated(root, path, out):
    """Dates, issue numbers and diary phrases in one file."""
    text = read(path)
    md = path.endswith(".md")
    diary = [re.compile(rf"\b{p}\b", re.I) for p in DIARY + (MARKDOWN_DIARY if md else [])]
    lines = markdown_lines(text) if md else [(n, STRING_LITERAL.sub('""', l), l, False)
                                             for n, l in enumerate(text.split("\n"), 1)]
    name = rel(root, path)
    for i, (n, prose, whole, _) in enumerate(lines):
        for rx in DATES:
            m = rx.search(whole)
            if m:
                out.append((name, n, f"a date ({m.group(0)!r}): say what is true, not when"))
                break
        for rx in ISSUE_REFS:
            m = rx.search(whole)
            if m:
                out.append((name, n, f"an issue number ({m.group(0)!r}): say the fact itself"))
                break
        else:
            if ISSUE_AT_END.search(whole) and i + 1 < len(lines) and NUMBER_AT_START.match(lines[i + 1][2]):
                out.append((name, n, "an issue number (across the line break): say the fact itself"))
        for rx in diary:
            m = rx.search(prose)
            if m:
                out.append((name, n, f"a diary phrase ({m.group(0)!r}): describe the code as it is"))
                break


def check_mapped(root, out):
    """Every Package.swift target has its `### \\`Name\\`` heading in ARCHITECTURE.md."""
    package = os.path.join(root, "Package.swift")
    if not os.path.isfile(package):
        return
    text = read(package)
    arch = os.path.join(root, "ARCHITECTURE.md")
    entries = set()
    if os.path.isfile(arch):
        for line in read(arch).split("\n"):
            m = ARCH_HEADING.match(line)
            if m:
                entries.add(m.group(1))
    seen = set()
    for m in TARGET_DECL.finditer(text):
        target = m.group(1)
        if target in seen or target in entries:
            seen.add(target)
            continue
        seen.add(target)
        line = text.count("\n", 0, m.start()) + 1
        out.append(("Package.swift", line, f"target {target} has no ARCHITECTURE.md entry (a line \"### `{target}`\")"))


def check_linked(root, path, out):
    """Relative links in one markdown file resolve to files or directories in the repository."""
    name = rel(root, path)
    here = os.path.dirname(path)
    real_root = os.path.realpath(root)
    for n, prose, whole, fenced in markdown_lines(read(path)):
        if fenced:
            continue
        targets = [m.group(1) for m in LINK.finditer(prose)]
        m = REF_DEF.match(prose)
        if m:
            targets.append(m.group(1))
        for t in targets:
            t = t.strip()
            if t.startswith("<") and t.endswith(">"):
                t = t[1:-1].strip()
            if not t or t.startswith("#") or SCHEME.match(t):
                continue
            file_part = unquote(t.split("#", 1)[0].split("?", 1)[0])
            if not file_part:
                continue
            full = os.path.join(root, file_part.lstrip("/")) if file_part.startswith("/") else os.path.join(here, file_part)
            full = os.path.realpath(full)
            if full != real_root and not full.startswith(real_root + os.sep):
                out.append((name, n, f"link {t!r} leaves the repository"))
            elif not os.path.exists(full):
                out.append((name, n, f"link {t!r} names nothing that exists"))


def check_short(root, out):
    limits = dict(SIZE_LIMITS)
    for p in files(root, "docs/**/*.md"):
        limits[rel(root, p)] = DOCS_LIMIT
    for name, limit in sorted(limits.items()):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            size = os.path.getsize(path)
            if size > limit:
                out.append((name, 1, f"{size:,} bytes, over its limit of {limit:,}"))


def check(root):
    """Every violation under `root`, as (file, line, reason), sorted."""
    root = os.path.abspath(root)
    out = []
    for name in REQUIRED:
        if not os.path.isfile(os.path.join(root, name)):
            out.append((name, 1, "missing"))
    dated = [os.path.join(root, n) for n in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md")]
    dated += files(root, "docs/**/*.md") + files(root, "Sources/**/*.swift") + files(root, "include/*.h")
    for p in dated:
        if os.path.isfile(p):
            check_dated(root, p, out)
    check_mapped(root, out)
    linked = [os.path.join(root, n) for n in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "CHANGELOG.md",
                                              os.path.join("bench", "RESULTS.md"))]
    linked += files(root, "docs/**/*.md")
    for p in linked:
        if os.path.isfile(p):
            check_linked(root, p, out)
    check_short(root, out)
    return sorted(set(out), key=lambda v: (v[0], v[1], v[2]))


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    violations = check(root)
    for f, line, reason in violations:
        print(f"{f}:{line}: {reason}")
    if violations:
        print(f"docs hygiene: {len(violations)} violation(s)", file=sys.stderr)
        return 1
    print("docs hygiene: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
