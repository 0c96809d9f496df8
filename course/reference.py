"""A lesson's reference functions, importable: one home for the code of a lesson's graded functions.

``reference("9.5")`` runs the solution cells of ``course/lessons/9.5/lesson.py`` the way the trusted
verdict runs a reference (course/build_lessons.py's ``reference_copy`` in a test cell's namespace):
the lesson's trusted preamble (``course.grading.verdict.preamble``), then each solution cell's code
without its ``### BEGIN/END SOLUTION`` markers, in lesson order, in one fresh namespace. It returns
the graded functions (``graded_functions(lesson)``) as attributes of a namespace, docstrings kept.
The result is cached: every caller gets the same function objects, so a script can be checked to
use the lesson's reference rather than a copy of it (tests/test_dev_references.py).

    from course.reference import reference

    ref = reference("9.5")
    ref.train_step, ref.group_advantages, ref.clipped_grpo_loss

Instructor side (research scripts, benchmarks, record makers): a student's notebook defines these
functions itself.
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

from course.build_lessons import SOLUTION_MARKER, _cells, graded_functions, lesson_dir
from course.grading.verdict import preamble


@cache
def reference(lesson: str) -> SimpleNamespace:
    """The solved graded functions of ``lesson`` ("9.5"), by name."""
    ns: dict = {"__name__": f"lesson_{lesson.replace('.', '_')}_reference"}
    exec(compile(preamble(lesson), f"<lesson {lesson} preamble>", "exec"), ns)  # noqa: S102
    for cell in _cells(lesson_dir(lesson) / "lesson.py"):
        if cell["kind"] != "solution":
            continue
        code = "\n".join(ln for ln in cell["lines"] if not SOLUTION_MARKER.match(ln))
        where = f"<lesson {lesson} solution {cell['args'].get('id')}>"
        exec(compile(code, where, "exec"), ns)  # noqa: S102 - the course's own reference code
    return SimpleNamespace(**{name: ns[name] for name in graded_functions(lesson)})
