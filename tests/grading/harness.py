"""Run a lesson's graded test cells against variants of its graded functions, in one kernel.

A variant file ``tests/grading/<lesson>.py`` is plain Python split into sections by headers:

    # %% bug FUNCTION: what is wrong (the pitfall the lesson names)
    # %% valid FUNCTION: how this correct version differs from the reference
    # %% depends TEST_CELL: FUNCTION [FUNCTION ...]

FUNCTION is a graded function (a ``def`` in a ``[solution]`` cell of the source notebook). A section's
code redefines it (and only it). ``depends`` says that a test cell exercises FUNCTION through another
graded function that calls it (``expected_draws`` calls ``p_info``): a bug in FUNCTION may then also
fail that cell, and nowhere else.

``run_variants`` executes the source notebook once (as the autograder would, NBGRADER_EXECUTION set),
then for each variant: execs its code, re-runs every graded test cell (visible and hidden tests, as in
the source), records which cells fail (an error output, or stderr that the course's IgnorePattern does
not drop: exactly nbgrader's rule), and restores the reference by re-running the solution cells.
The kernel runs in the grading sandbox (course/grading/sandbox.py) wherever it can start.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.grading import sandbox

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
HEADER = re.compile(r"^# %% (bug|valid|depends) ([\w.]+): ?(.*)$")
DEF = re.compile(r"^def (\w+)\(", re.M)
SOLUTION_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*\n", re.M)


@dataclass
class Variant:
    kind: str  # "bug" or "valid"
    function: str
    description: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.function}: {self.description}"


@dataclass
class Lesson:
    """The graded structure of one source notebook."""

    lesson: str
    nb: nbformat.NotebookNode
    solution_cells: dict[str, int]  # solution grade_id -> cell index
    test_cells: dict[str, int]  # test grade_id -> cell index
    function_cell: dict[str, str]  # function name -> solution grade_id
    cell_test: dict[str, str]  # solution grade_id -> the test cell that follows it
    points: dict[str, float]  # test grade_id -> points

    @classmethod
    def load(cls, lesson: str) -> Lesson:
        nb = nbformat.read(ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb", as_version=4)
        sol, tests, fcell, ctest, pts = {}, {}, {}, {}, {}
        pending: list[str] = []
        for i, c in enumerate(nb.cells):
            meta = c.metadata.get("nbgrader", {})
            if c.cell_type != "code" or not meta:
                continue
            gid = meta["grade_id"]
            if meta.get("solution"):
                sol[gid] = i
                pending.append(gid)
                for name in DEF.findall(c.source):
                    fcell[name] = gid
            elif meta.get("grade"):
                tests[gid] = i
                pts[gid] = float(meta["points"])
                for s in pending:
                    ctest[s] = gid
                pending = []
        return cls(lesson, nb, sol, tests, fcell, ctest, pts)

    def test_of(self, function: str) -> str:
        return self.cell_test[self.function_cell[function]]

    def reference_code(self, grade_id: str) -> str:
        """A solution cell's source as a student would write it: the markers removed."""
        return SOLUTION_MARKER.sub("", self.nb.cells[self.solution_cells[grade_id]].source)


@dataclass
class VariantFile:
    lesson: str
    variants: list[Variant]
    depends: dict[str, set[str]] = field(default_factory=dict)  # test cell -> functions

    @classmethod
    def load(cls, lesson: str) -> VariantFile:
        path = HERE / f"{lesson}.py"
        variants, depends, current = [], {}, None
        for line in path.read_text().splitlines():
            m = HEADER.match(line)
            if m:
                kind, name, rest = m.groups()
                if kind == "depends":
                    depends[name] = set(rest.split())
                    current = None
                else:
                    current = Variant(kind, name, rest.strip(), "")
                    variants.append(current)
            elif line.startswith("# %%"):
                raise ValueError(f"{path.name}: malformed header {line!r}")
            elif current is not None:
                current.code += line + "\n"
        return cls(lesson, variants, depends)

    def may_fail(self, lesson: Lesson, v: Variant) -> tuple[set[str], set[str]]:
        """(cells that must fail, cells that may also fail) for a bug variant."""
        must = {lesson.test_of(v.function)}
        extra = {t for t, fns in self.depends.items() if v.function in fns} - must
        return must, extra


def lessons_with_variants() -> list[str]:
    return sorted(p.stem for p in HERE.glob("9.*.py"))


def ignore_pattern() -> re.Pattern:
    """The IgnorePattern of the course's nbgrader settings (stderr matching it is not a failure)."""
    text = (ROOT / "course" / "nbgrader_config.py").read_text()
    m = re.search(r"c\.IgnorePattern\.pattern = r\"(.*)\"", text)
    return re.compile(m.group(1) if m else r"(?!x)x")


def cell_failed(cell, pattern: re.Pattern) -> bool:
    for o in cell.get("outputs", []):
        if o.output_type == "error":
            return True
        if o.output_type == "stream" and o.name == "stderr" and not pattern.search(o.text):
            return True
    return False


def run_variants(lesson: str, variants: list[Variant], timeout: int = 120) -> dict:
    """Execute the lesson once, then every variant; returns {"baseline": {...}, name: {cell: failed}}."""
    info = Lesson.load(lesson)
    nb = info.nb
    pattern = ignore_pattern()
    env = dict(os.environ, NBGRADER_EXECUTION="autograde")
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(ROOT / "source_notebooks" / lesson)}})  # fmt: skip
    if sandbox.unavailable_reason() is None:  # the kernel runs as in a class run: sandboxed
        client.kernel_manager_class = sandbox.kernel_manager_class(
            sandbox.Limits(), [ROOT / "release" / lesson]
        )
    results: dict[str, dict[str, bool]] = {}

    def run_tests() -> dict[str, bool]:
        out = {}
        for gid, idx in info.test_cells.items():
            cell = nbformat.v4.new_code_cell(nb.cells[idx].source)
            client.execute_cell(cell, idx)
            out[gid] = cell_failed(cell, pattern)
        return out

    def run_code(code: str, idx: int) -> None:
        cell = nbformat.v4.new_code_cell(code)
        client.execute_cell(cell, idx)
        if cell_failed(cell, pattern):
            raise RuntimeError(f"{lesson}: code failed to run:\n{code}\n{cell.outputs}")

    old_env = os.environ.copy()
    os.environ.update(env)
    try:
        with client.setup_kernel(env=env):
            for idx, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    client.execute_cell(cell, idx)
            results["baseline"] = {
                g: cell_failed(nb.cells[i], pattern) for g, i in info.test_cells.items()
            }
            for v in variants:
                run_code(v.code, 0)
                results[v.name] = run_tests()
                for idx in info.solution_cells.values():  # restore the reference
                    run_code(nb.cells[idx].source, idx)
            results["restored"] = run_tests()
    finally:
        os.environ.clear()
        os.environ.update(old_env)
    return results
