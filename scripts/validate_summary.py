"""What `./notebook.sh X --submit` prints about a notebook's visible tests.

It asks nbgrader's ``Validator`` (the code behind ``nbgrader validate``) for the cells as data,
``{"failed" | "changed" | "type_changed": [{"source", "error", "raw_error"}, ...]}``, instead of
parsing the command's human-readable text. Prints ``PASSED`` as its last line when every visible
test passes, else a short summary: one line per cell, its first line and its last error.
Exit status 0 either way; an exception (a notebook nbgrader cannot read) exits non-zero.

    python scripts/validate_summary.py 9.2.ipynb
"""

from __future__ import annotations

import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ERROR_LINE = re.compile(r"\s*\w*(Error|Exception)\b")


def summary(result: dict) -> list[str]:
    failed = result.get("failed", [])
    changed = result.get("changed", []) + result.get("type_changed", [])
    if not failed and not changed:
        return ["PASSED"]
    lines = []
    if changed:
        lines.append(f"    THE CONTENTS OF {len(changed)} TEST CELL(S) HAVE CHANGED! They are graded "
                     "as released: ./notebook.sh <lesson> --fresh keeps your copy, starts a clean one")  # fmt: skip
    if failed:
        lines.append(f"    VALIDATION FAILED ON {len(failed)} CELL(S)!")
    for kind, cell in [("changed", c) for c in changed] + [("failed", c) for c in failed]:
        first = next((ln.strip() for ln in cell.get("source", "").splitlines() if ln.strip()), "?")
        raw = ANSI.sub("", cell.get("raw_error") or cell.get("error") or "")
        errors = [ln.strip() for ln in raw.splitlines() if ERROR_LINE.match(ln)]
        err = re.sub(r"\s+Traceback \(most recent call last\)$", "", errors[-1]) if errors else ""
        if "You did not provide a response" in raw:
            err = "no answer written yet"
        lines.append(f"      {first[:70]}  ->  {err[:70] or kind}")
    return lines[:14]


def main(path: str) -> None:
    from nbgrader.validator import Validator

    print("\n".join(summary(Validator().validate(path))))


if __name__ == "__main__":
    main(sys.argv[1])
