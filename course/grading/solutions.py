"""Worked solutions after the deadline: ``nbgrader generate_solution`` without the hidden tests.

``python -m course.instructor solutions LESSON [--release]`` writes
``solutions/<lesson>-solution/<lesson>-solution.ipynb``: the whole lesson (its explanations), every
graded function's reference code with the lesson's comments, and the model answers of the written
questions, each solution cell headed by a short "Worked solution" note. The visible tests stay
(students may run them); hidden tests are replaced by one comment line, and the mark scheme is
cleared. With ``--release`` it goes to the exchange as the assignment ``<lesson>-solution``, which
students fetch from the Assignments tab like a lesson.

It refuses to run before the lesson's due date (set with ``nbgrader db assignment add LESSON
--duedate=...``) and when no due date is set, unless ``before_deadline=True``.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

from course.build_lessons import HIDDEN_BEGIN, HIDDEN_END, HIDDEN_NOTE
from course.grading.common import ROOT, db_url, nbgrader

SOLUTION_MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
HIDDEN_REGION = re.compile(
    r"^([ \t]*)" + re.escape(HIDDEN_BEGIN) + r".*?(?:" + re.escape(HIDDEN_END) + r"[^\n]*|\Z)",
    re.S | re.M,
)


def due_date(lesson: str, root: Path = ROOT) -> dt.datetime | None:
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url(root)) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            due = gb.find_assignment(lesson).duedate
        except MissingEntry:
            return None
    return due if due is None or due.tzinfo else due.replace(tzinfo=dt.UTC)


def check_deadline(lesson: str, root: Path = ROOT, now: dt.datetime | None = None) -> None:
    due = due_date(lesson, root)
    now = now or dt.datetime.now(dt.UTC)
    if due is None:
        raise SystemExit(
            f"solutions: lesson {lesson} has no due date, so it cannot be after it. Set one "
            f"(nbgrader db assignment add {lesson} --duedate='2026-12-01 23:59:00 UTC') or pass "
            "--before-deadline to release anyway."
        )
    if now < due:
        raise SystemExit(f"solutions: lesson {lesson} is due {due:%Y-%m-%d %H:%M %Z}; it is "
                         f"{now:%Y-%m-%d %H:%M %Z}. Pass --before-deadline to release anyway.")  # fmt: skip


def worked(nb):
    """The solution notebook (in place): markers gone, hidden tests and mark schemes removed."""
    import nbformat

    cells = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        cell.source = HIDDEN_REGION.sub(lambda m: m.group(1) + HIDDEN_NOTE, cell.source)
        cell.source = SOLUTION_MARKERS.sub("", cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if meta.get("solution"):
            what = "model answer" if cell.cell_type == "markdown" else "reference implementation"
            gid = meta.get("grade_id", "")
            cells.append(nbformat.v4.new_markdown_cell(
                f"**Worked solution ({what}, `{gid}`).** Compare it with your own answer; the "
                "tests below it are the visible ones (the hidden tests are not shown)."))  # fmt: skip
        if meta.get("task"):
            meta.pop("task")
        cells.append(cell)
    nb.cells = cells
    return nb


def solutions(
    lesson: str, root: Path = ROOT, release: bool = False, before_deadline: bool = False
) -> Path:
    """Write (and optionally release) the worked solution of ``lesson``; returns its path."""
    import nbformat

    if not before_deadline:
        check_deadline(lesson, root)
    # nbgrader's generate_solution (header/footer, locked cells, outputs and mark scheme cleared);
    # the course's notebooks are not executed here (the reference runs in tests/test_lessons.py).
    nbgrader("generate_solution", lesson, "--force", "--Execute.enabled=False",
             "--CourseDirectory.solution_directory=solution", root=root)  # fmt: skip
    raw = root / "solution" / lesson / f"{lesson}.ipynb"
    nb = worked(nbformat.read(raw, as_version=4))
    name = f"{lesson}-solution"
    out = root / "solutions" / name / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    shutil.rmtree(root / "solution" / lesson)  # nbgrader's copy still holds the hidden tests
    if not any((root / "solution").iterdir()):
        (root / "solution").rmdir()
    print(f"worked solution: {out}")
    if release:
        nbgrader("release_assignment", name, "--force",
                 "--CourseDirectory.release_directory=solutions", root=root)  # fmt: skip
        print(f"released {name} to the exchange (students: Assignments tab, Fetch)")
    return out
