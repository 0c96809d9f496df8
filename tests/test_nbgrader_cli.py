"""The course's nbgrader command (course/grading/nbgrader_cli.py) is nbgrader with one import
deferred: the same program, the same jsonschema verdicts, and the grammar not built at start-up."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from course.grading.common import BIN, NBGRADER, nbgrader_env

pytest.importorskip("rfc3987_syntax")

# Strings for jsonschema's "iri" and "iri-reference" formats: hand-picked edge cases plus random
# ones from an alphabet that reaches every branch of the grammar (schemes, authority, ports,
# percent escapes, IPv6 literals, non-ASCII characters, spaces and brackets that are refused).
CASES = [
    "http://example.org/x", "https://例え.テスト/パス?q=1#frag", "mailto:ada@example.org",
    "urn:isbn:0451450523", "//host/path", "relative/path", "", " ", "http://[::1]:80/",
    "http://[::1", "http://exa mple.org", "ftp://user:pw@host:21/a%20b", "http://host:port/",
    "%zz", "a:b:c", "#", "?x", "http://ex.org/%E2%82%AC", "\u00e9t\u00e9:x",
]  # fmt: skip
ALPHABET = "ab:/?#[]@!$&'()*+,;=%-._~09 é€\u3042"
rng = random.Random(20261204)
CASES += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 14))) for _ in range(300)]

PROBE = """
import json, sys
if sys.argv[1] == "deferred":
    from course.grading.nbgrader_cli import defer_slow_imports
    assert defer_slow_imports()
import jsonschema, nbformat  # what nbgrader imports at start-up
built_at_start = "rfc3987_syntax.syntax_helpers" in sys.modules
checker = jsonschema.FormatChecker()
cases = json.loads(sys.stdin.read())
verdicts = [[checker.conforms(c, "iri"), checker.conforms(c, "iri-reference")] for c in cases]
print(json.dumps({"built_at_start": built_at_start, "verdicts": verdicts,
                  "real": type(sys.modules["rfc3987_syntax"]).__name__ == "module"}))
"""


def _probe(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], input=json.dumps(CASES),
                         env=nbgrader_env(), capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def test_deferred_import_gives_the_same_format_verdicts_and_skips_the_start_up_cost():
    plain, deferred = _probe("plain"), _probe("deferred")
    assert plain["built_at_start"], "the probe no longer sees the slow import: retire the stand-in"
    assert not deferred["built_at_start"]
    assert deferred["real"], "after first use the real module takes the stand-in's place"
    assert deferred["verdicts"] == plain["verdicts"]
    flat = [v for pair in plain["verdicts"] for v in pair]
    assert any(flat) and not all(flat), "the cases must include IRIs that pass and that fail"


def test_the_course_command_is_nbgrader(tmp_path):
    env = nbgrader_env()

    def both(*args: str) -> list[subprocess.CompletedProcess]:
        return [subprocess.run([*cmd, *args], cwd=tmp_path, env=env, capture_output=True,
                               text=True) for cmd in (NBGRADER, [str(BIN / "nbgrader")])]  # fmt: skip

    ours, theirs = both("--version")
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    # the course's command really defers the import (nbgrader's own script does not)
    profiled = [subprocess.run([*cmd, "--version"], cwd=tmp_path, capture_output=True, text=True,
                               env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
                for cmd in (NBGRADER, [str(BIN / "nbgrader")])]  # fmt: skip
    assert "rfc3987_syntax.syntax_helpers" not in profiled[0].stderr
    assert "rfc3987_syntax.syntax_helpers" in profiled[1].stderr
    assert ours.stdout == theirs.stdout and "nbgrader version" in ours.stdout
    ours, theirs = both("autograde", "no-such-lesson", "--student", "x")  # fails, the same way
    assert ours.returncode == theirs.returncode != 0
