"""Grading policy: stderr is shown, never graded (course/grading/stderr_policy.py)."""

from __future__ import annotations

import nbformat
from nbgrader.utils import determine_grade

from course.grading.stderr_policy import PREFIX, StderrShownNotGraded
from tests.conftest import ROOT


def _graded_cell(outputs):
    cell = nbformat.v4.new_code_cell("f()")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 2, "grade_id": "t",
                                 "locked": True, "schema_version": 3}  # fmt: skip
    cell.outputs = outputs
    return cell


def test_logging_on_stderr_keeps_the_points_and_stays_visible():
    log = nbformat.v4.new_output("stream", name="stderr", text="INFO:mine:computing\n")
    cell = _graded_cell([log])
    assert determine_grade(cell)[0] == 0, "nbgrader alone gives 0 for stderr: the policy is needed"
    cell, _ = StderrShownNotGraded().preprocess_cell(cell, {}, 0)
    assert determine_grade(cell) == (2, 2)
    assert (
        cell.outputs[0].name == "stdout"
        and cell.outputs[0].text == PREFIX + "INFO:mine:computing\n"
    )


def test_an_error_still_fails_the_cell():
    err = nbformat.v4.new_output("error", ename="AssertionError", evalue="wrong", traceback=[])
    warn = nbformat.v4.new_output("stream", name="stderr", text="UserWarning: slow\n")
    cell, _ = StderrShownNotGraded().preprocess_cell(_graded_cell([warn, err]), {}, 0)
    assert determine_grade(cell) == (0, 2)


def test_the_course_config_runs_the_policy_before_grading():
    text = (ROOT / "course" / "nbgrader_config.py").read_text()
    order = text[text.index("c.Autograde.autograde_preprocessors") :]
    assert (
        order.index("GuardedExecute")
        < order.index("StderrShownNotGraded")
        < order.index("SaveAutoGrades")
    )
