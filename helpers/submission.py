"""A hand-in, as the student makes it and the instructor reads it.

- ``STUDENT_ID`` and ``student_id``: the one rule for a student's id. ``course submit --as NAME``
  accepts a name only if it already is an id; the instructor's collect step reduces an entry's name
  to one (and refuses what reduces to nothing).
- ``ZIP_LAYOUT`` and ``write_zip``: the zip ``course submit`` writes, ``workspace/<lesson>/<lesson>.ipynb``
  for every lesson in the student's workspace; collect looks there first.
- ``summary``: what ``course submit`` prints about a notebook's visible tests. nbgrader's
  ``Validator`` (the code behind ``nbgrader validate``) gives the cells as data,
  ``{"failed" | "changed" | "type_changed": [{"source", "error", "raw_error"}, ...]}``; the summary
  is ``PASSED`` when every visible test passes, else one line per cell: its first line and last error.

    python -m helpers.submission 9.2.ipynb     the summary of one notebook (exit status 0 either
                                               way; a notebook nbgrader cannot read exits non-zero)

Standard library only at import: the course command imports it before the environment exists.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

# An id: letters, digits, '_', '.', '-', starting with a letter or a digit (never '.', '-' or '_':
# no hidden file, no command-line option, no empty name) and not ending with '_' (which the
# reduction below strips: an id is exactly a name the reduction leaves as it is).
STUDENT_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9.-])?")
_NOT_IN_ID = re.compile(r"[^A-Za-z0-9_.-]+")
ZIP_LAYOUT = "workspace/{lesson}/{lesson}.ipynb"


def notebook_name(lesson: str) -> str:
    """A lesson's notebook, as released and as the student's copy: the lesson's name + .ipynb."""
    return lesson + ".ipynb"


def is_student_id(name: str) -> bool:
    return STUDENT_ID.fullmatch(name) is not None


def student_id(name: str) -> str | None:
    """``name`` reduced to an id (each run of other characters becomes '_', then leading and
    trailing '_' go), or None when nothing usable is left ('', '..', '.hidden', '-rf')."""
    sid = _NOT_IN_ID.sub("_", name).strip("_")
    return sid if is_student_id(sid) else None


def write_zip(workspace: Path, dest: Path) -> list[str]:
    """Every ``workspace/<lesson>/<lesson>.ipynb`` (never a symlink) into ``dest``, written beside
    it first and then moved into place, so a reader never sees half a zip. Returns the lessons."""
    workspace, dest = Path(workspace), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    lessons = []
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
        for nb in sorted(workspace.glob("*/*.ipynb")):
            if nb.stem == nb.parent.name and nb.is_file() and not nb.is_symlink():
                zf.write(nb, ZIP_LAYOUT.format(lesson=nb.stem))
                lessons.append(nb.stem)
    part.replace(dest)
    return lessons


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
                     "as released: ./notebook.sh <lesson> --fresh archives your copy, starts a clean one")  # fmt: skip
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


def main(argv: list[str] | None = None) -> int:
    from nbgrader.validator import Validator

    (path,) = sys.argv[1:] if argv is None else argv
    print("\n".join(summary(Validator().validate(path))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
