#!/usr/bin/env python3
"""The test of docs_hygiene.py: synthetic repositories in which each rule must fire, and must stay
quiet on what looks like a violation but is not. Runs with plain `python3` (unittest) or pytest.
Usage: Tests/scripts/test_docs_hygiene.py"""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_hygiene  # noqa: E402

PACKAGE = '''// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "Demo",
    products: [.library(name: "Lib", targets: ["Lib"])],
    dependencies: [.package(url: "https://example.com/x", from: "1.0.0")],
    targets: [
        .target(name: "Lib", dependencies: [.product(name: "XProduct", package: "x")]),
        .systemLibrary(name: "CLib", providers: [.apt(["libz-dev"])]),
        .executableTarget(
            name: "Tool", dependencies: ["Lib"]),
        .testTarget(name: "LibTests", dependencies: ["Lib"]),
    ]
)
'''
ARCHITECTURE = "# Architecture\n\n### `Lib`\n\n### `CLib` (the system's zlib)\n\n### `Tool`\n\n### `LibTests`\n"


class Repo:
    """A temporary repository that passes every rule until a test changes it."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="docs-hygiene-")
        self.root = self.tmp.name
        self.write("README.md", "# Demo\n\nSee [the architecture](ARCHITECTURE.md) and [docs](docs/).\n")
        self.write("ARCHITECTURE.md", ARCHITECTURE)
        self.write("CONTRIBUTING.md", "# Contributing\n\n`make check` before every change.\n")
        self.write("CHANGELOG.md", "# Changelog\n\n## 0.1.0 (2026-11-28)\n\nFirst release, issue 3.\n")
        self.write("Package.swift", PACKAGE)
        self.write("docs/semantics.md", "# Semantics\n\nBack to [the README](../README.md#demo).\n")
        self.write("Sources/Lib/Lib.swift", "/// Responsible for: the library.\npublic struct Lib {}\n")
        self.write("include/lib.h", "#ifndef LIB_H\n#define LIB_H\n#endif\n")
        self.write("bench/RESULTS.md", "# Results\n\n## 2026-11-28\n\np50 9 us (issue 12).\n")

    def write(self, name, text):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def remove(self, name):
        os.remove(os.path.join(self.root, name))

    def violations(self):
        return docs_hygiene.check(self.root)

    def close(self):
        self.tmp.cleanup()


class HygieneTest(unittest.TestCase):
    def setUp(self):
        self.repo = Repo()
        self.addCleanup(self.repo.close)

    def assertClean(self):
        self.assertEqual(self.repo.violations(), [])

    def assertFires(self, name, line, reason_start):
        v = self.repo.violations()
        self.assertTrue(any(f == name and n == line and r.startswith(reason_start) for f, n, r in v),
                        f"expected {name}:{line}: {reason_start}..., got {v}")

    def swift(self, comment_lines):
        self.repo.write("Sources/Lib/Lib.swift", "".join(f"/// {c}\n" for c in comment_lines) + "public struct Lib {}\n")

    # -- the baseline

    def test_baseline_is_clean(self):
        self.assertClean()

    # -- dated: dates

    def test_dates_fire(self):
        for text in ("measured 2026-11-28 on the VM", "(2026/11/28)", "on 28.11.2026", "November 28, 2026",
                     "28 November 2026", "Nov 2026", "in 2026-11 the queue"):
            with self.subTest(text=text):
                self.repo.write("README.md", f"# Demo\n\n{text}\n")
                self.assertFires("README.md", 3, "a date")

    def test_dates_fire_in_swift_comments_and_headers(self):
        self.swift(["Fixed on 2026-11-27."])
        self.assertFires("Sources/Lib/Lib.swift", 1, "a date")
        self.swift(["fine"])
        self.repo.write("include/lib.h", "/* ABI change of 2026-11-20: ember_open gained a flag. */\n")
        self.assertFires("include/lib.h", 1, "a date")

    def test_date_like_values_stay_quiet(self):
        self.swift(['{"$timestamp": "2024-05-01T12:00:00.000001Z"}  RFC 3339, UTC; days since 1970-01-01',
                    "version 1.2.3, Swift 6.0, 2048 bytes, 1,000 listeners, 10/20 ms, May be nil."])
        self.repo.write("docs/semantics.md", "# Semantics\n\n`2024-05-01T12:00:00Z` sorts before 2024-05-01T12:00:01Z.\n")
        self.assertClean()

    def test_dated_logs_are_exempt(self):
        # CHANGELOG.md and bench/RESULTS.md in the baseline carry dates and issue numbers.
        self.assertClean()

    # -- dated: issue numbers

    def test_issue_numbers_fire(self):
        for text in ("the fix for issue 12", "Issues 28 and 29 add the tree", "see issue #4", "(#12)",
                     "pull request 7", "PR #8"):
            with self.subTest(text=text):
                self.swift([text])
                self.assertFires("Sources/Lib/Lib.swift", 1, "an issue number")

    def test_issue_number_across_a_line_break_fires(self):
        self.swift(["the server's checks (see the report of issue", "11) apply here"])
        self.assertFires("Sources/Lib/Lib.swift", 1, "an issue number")

    def test_issue_like_code_stays_quiet(self):
        self.repo.write("Sources/Lib/Lib.swift",
                        '#if canImport(Glibc)\nimport Glibc\n#endif\n'
                        'let s = #"raw "quoted" text"#\nlet t = #selector(f)\n'
                        '/// The token was issued 5 s ago; the issuer is checked; an issue of tissue 3.\n'
                        'let u = "#\\(n)"  // a format: %#x, &#38;, page#L12\n')
        self.assertClean()

    # -- dated: diary phrases

    def test_diary_phrases_fire(self):
        for text in ("Added this session.", "What works today", "We decided to keep it.", "as of this writing",
                     "It used to block.", "previously the queue was shared", "until now"):
            with self.subTest(text=text):
                self.repo.write("ARCHITECTURE.md", ARCHITECTURE + f"\n{text}\n")
                self.assertFires("ARCHITECTURE.md", 11, "a diary phrase")

    def test_markdown_only_phrases(self):
        self.repo.write("docs/semantics.md", "# Semantics\n\nThe writer no longer waits.\n")
        self.assertFires("docs/semantics.md", 3, "a diary phrase")
        self.repo.write("docs/semantics.md", "# Semantics\n\nThe error is `no longer valid`.\n\n```\nit is no longer valid\n```\n")
        self.assertClean()
        self.swift(['throw invalid("The referenced transaction has expired or is no longer valid.")'])
        self.assertClean()

    def test_string_literals_are_data(self):
        self.repo.write("Sources/Lib/Lib.swift", 'let reason = "not today"\nlet key = "views/today" // a key\n')
        self.assertClean()
        self.repo.write("Sources/Lib/Lib.swift", 'let reason = "x" // fixed today\n')
        self.assertFires("Sources/Lib/Lib.swift", 1, "a diary phrase")

    def test_code_words_stay_quiet(self):
        self.swift(["The order used to sort results; the backend's state as of the op.",
                    "Removes least-recently-used documents; rows recently read.",
                    "The session's queue; documents the server sent so far; it turns out to be there."])
        self.assertClean()

    # -- mapped

    def test_every_target_needs_its_heading(self):
        self.repo.write("ARCHITECTURE.md", "# Architecture\n\n### `Lib`\n\n## `Tool`\n\n### Tool\n\n### `LibTests`\n")
        v = self.repo.violations()
        self.assertEqual(sorted(r for f, _, r in v if f == "Package.swift"),
                         ['target CLib has no ARCHITECTURE.md entry (a line "### `CLib`")',
                          'target Tool has no ARCHITECTURE.md entry (a line "### `Tool`")'])
        self.assertFires("Package.swift", 10, "target Tool")   # the line of `.executableTarget(`

    def test_products_and_dependencies_are_not_targets(self):
        names = {r.split()[1] for f, _, r in self.repo.violations() if f == "Package.swift"}
        self.assertEqual(names, set())

    # -- linked

    def test_broken_links_fire(self):
        self.repo.write("README.md", "# Demo\n\n[a](docs/missing.md) and ![b](img/logo.png)\n\n[ref]: nowhere.md\n")
        self.assertFires("README.md", 3, "link 'docs/missing.md'")
        self.assertFires("README.md", 3, "link 'img/logo.png'")
        self.assertFires("README.md", 5, "link 'nowhere.md'")

    def test_links_out_of_the_repository_fire(self):
        self.repo.write("docs/semantics.md", "# Semantics\n\nSee [the semantics](../../shared/SEMANTICS.md).\n")
        self.assertFires("docs/semantics.md", 3, "link '../../shared/SEMANTICS.md' leaves the repository")

    def test_links_in_every_linked_file(self):
        for name in ("CONTRIBUTING.md", "CHANGELOG.md", "bench/RESULTS.md", "docs/semantics.md"):
            with self.subTest(name=name):
                self.repo.write(name, "# X\n\n[gone](gone.md)\n")
                self.assertFires(name, 3, "link 'gone.md'")
                self.repo.write(name, "# X\n")

    def test_good_links_stay_quiet(self):
        self.repo.write("README.md", "# Demo\n\n[arch](ARCHITECTURE.md#code-map) [web](https://example.com/x.md) "
                                     "[mail](mailto:a@b.c) [top](#demo) [dir](Sources/Lib) [root](/docs/semantics.md) "
                                     "[spaced](<docs/semantics.md>) [titled](docs/semantics.md \"Semantics\")\n\n"
                                     "`[code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n")
        self.assertClean()

    # -- short

    def test_size_limits(self):
        self.repo.write("README.md", "x" * 12_000)
        self.repo.write("ARCHITECTURE.md", ARCHITECTURE + "x" * (20_000 - len(ARCHITECTURE)))
        self.repo.write("docs/semantics.md", "x" * 10_000)
        self.assertClean()
        self.repo.write("README.md", "x" * 12_001)
        self.repo.write("ARCHITECTURE.md", ARCHITECTURE + "x" * (20_001 - len(ARCHITECTURE)))
        self.repo.write("docs/semantics.md", "x" * 10_001)
        self.assertFires("README.md", 1, "12,001 bytes, over its limit of 12,000")
        self.assertFires("ARCHITECTURE.md", 1, "20,001 bytes, over its limit of 20,000")
        self.assertFires("docs/semantics.md", 1, "10,001 bytes, over its limit of 10,000")

    # -- required files, output and exit status

    def test_required_files(self):
        self.repo.remove("CONTRIBUTING.md")
        self.assertFires("CONTRIBUTING.md", 1, "missing")

    def test_main_prints_file_line_reason_and_exits_1(self):
        self.swift(["issue 9"])
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = docs_hygiene.main(["docs_hygiene.py", self.repo.root])
        self.assertEqual(status, 1)
        self.assertEqual(out.getvalue(), "Sources/Lib/Lib.swift:1: an issue number ('issue 9'): say the fact itself\n")

    def test_main_exits_0_when_clean(self):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(docs_hygiene.main(["docs_hygiene.py", self.repo.root]), 0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
