"""Every lesson: the source notebook runs top to bottom, the committed release is what nbgrader
generates, the release leaks no solution or hidden test, and autograding gives the source full marks
and the untouched release zero."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course.build_lessons import LESSONS, trusted_tests
from tests.conftest import ROOT
from tests.nbgrader_course import Course
from tests.test_figures import check_figures

SOLUTION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", re.S)


def source_nb(lesson: str) -> Path:
    return ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb"


def release_nb(lesson: str) -> Path:
    return ROOT / "release" / lesson / f"{lesson}.ipynb"


def protected_lines(lesson: str) -> set[str]:
    """Non-trivial lines that exist only inside solution regions, hidden-test regions or written
    answers of the source; a line that also stands in the public part (a question repeated in an
    answer, a visible assert repeated in a hidden test) is not a secret."""
    nb = nbformat.read(source_nb(lesson), as_version=4)
    secret, public = set(), set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if (
            cell.cell_type == "markdown"
            and meta.get("solution")
            and "BEGIN SOLUTION" not in cell.source
        ):
            regions, rest = [cell.source], ""  # nbgrader replaces the whole answer cell
        else:
            regions = HIDDEN.findall(cell.source) + SOLUTION.findall(cell.source)
            rest = HIDDEN.sub("", SOLUTION.sub("", cell.source))
        for region in regions:
            secret.update(line.strip() for line in region.splitlines())
        public.update(line.strip() for line in rest.splitlines())
    for test in trusted_tests(lesson).values():  # the hidden tests the grader alone runs
        for region in HIDDEN.findall(test.code):
            secret.update(line.strip() for line in region.splitlines())
    return {s for s in secret - public if len(s) >= 12 and not s.startswith("#")}


@pytest.mark.parametrize("lesson", LESSONS)
def test_source_notebook_runs_top_to_bottom(lesson, tmp_path, monkeypatch):
    nb = nbformat.read(source_nb(lesson), as_version=4)
    os.environ.setdefault("COURSE_SMOKE", "1")
    figures = tmp_path / "figures.jsonl"  # helpers/figures.py: what each quoted figure printed
    monkeypatch.setenv("COURSE_FIGURES", str(figures))
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(source_nb(lesson).parent)}})  # fmt: skip
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]  # fmt: skip
    assert not errors
    check_figures(lesson, figures)


@pytest.mark.parametrize("lesson", LESSONS)
def test_release_is_regenerated_identically(lesson, tmp_path):
    course = Course(tmp_path / "course", [lesson])
    fresh = course.release(lesson) / f"{lesson}.ipynb"
    assert json.loads(fresh.read_text()) == json.loads(release_nb(lesson).read_text()), (
        f"release/{lesson} is stale: run nbgrader generate_assignment {lesson} --force"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_release_leaks_no_solution_or_hidden_test(lesson):
    released = release_nb(lesson).read_text()
    cells = nbformat.read(release_nb(lesson), as_version=4).cells
    lines = {line.strip() for c in cells for line in c.source.splitlines()}
    leaked = sorted(protected_lines(lesson) & lines)
    assert not leaked, f"release/{lesson} contains solution or hidden-test lines: {leaked[:5]}"
    assert "BEGIN SOLUTION" not in released and "BEGIN HIDDEN TESTS" not in released


# "The source gets every point and the untouched release zero" is the preflight's own check
# (course/grading/runner.py), which every class run of tests/test_autograder.py makes before it
# grades, one per lesson (test_every_lesson_has_a_class_run_with_its_preflight there).


def test_a_lesson_folder_keeps_hidden_tests_out_of_lesson_py(tmp_path):
    """Hidden tests live in hidden/<test id>.py: the build joins them to their cell (markers around
    them, after the visible asserts) only for the trusted verdict, refuses the markers in lesson.py,
    and refuses a hidden file whose test cell does not exist."""
    from course.build_lessons import HIDDEN_BEGIN, HIDDEN_END, _parse, _visible

    (tmp_path / "hidden").mkdir()
    src = tmp_path / "lesson.py"
    src.write_text("# %% [tests] id=test_f points=1\nassert f(1) == 2\n\n\n# %%\nx = 1\n")
    (tmp_path / "hidden" / "test_f.py").write_text("assert f(2) == 3\n")
    cell = _parse(src)[0]
    assert cell["lines"] == ["assert f(1) == 2", HIDDEN_BEGIN, "assert f(2) == 3", HIDDEN_END]
    assert "f(2)" not in _visible("\n".join(cell["lines"]))
    src.write_text(f"# %% [tests] id=test_f points=1\nassert f(1) == 2\n{HIDDEN_BEGIN}\n")
    with pytest.raises(ValueError, match="hidden tests go in hidden/"):
        _parse(src)
    src.write_text("# %% [tests] id=test_f points=1\nassert f(1) == 2\n")
    (tmp_path / "hidden" / "test_f.py").write_text(f"assert f(2) == 3\n{HIDDEN_END}\nsecret = 1\n")
    with pytest.raises(ValueError, match="markers are the build's"):
        _parse(src)
    src.write_text("# %% [tests] id=test_g points=1\nassert g(1) == 2\n")
    with pytest.raises(ValueError, match="no \\[tests\\] cell with id=test_f"):
        _parse(src)
