"""Run a lesson's graded test cells against variants of its graded functions, in one kernel.

A variant file ``course/lessons/<lesson>/variants.py`` is plain Python split into sections by headers:

    # %% bug FUNCTION: what is wrong (the pitfall the lesson names)
    # %% valid FUNCTION: how this correct version differs from the reference
    # %% depends TEST_CELL: FUNCTION [FUNCTION ...]
    # %% equivalent FUNCTION: KEY before -> after   (then comment lines: why no test can kill it)

FUNCTION is a graded function (a ``def`` in a ``[solution]`` cell of the source notebook). A section's
code redefines it (and only it). ``depends`` says that a test cell exercises FUNCTION through another
graded function that calls it (``expected_draws`` calls ``p_info``): a bug in FUNCTION may then also
fail that cell, and nowhere else. ``equivalent`` argues that a mutant of FUNCTION's reference that
the mutation run (tests/grading/mutation.py) leaves alive computes the same contract; KEY is the
mutant's key from that run and the comment lines below the header are the argument.

``run_variants`` executes the source notebook once (as the autograder would: NBGRADER_EXECUTION set,
and the lesson's demo cells that course/grading/demos.py leaves out are left out here too; a variant
or mutant that reads a name of one of them has it run first, as a class run grading that variant
would, and is reported in ``demos_run``),
then for each variant: execs its code in the kernel, runs the test cells through the trusted verdict
(course/grading/verdict.py: the tests run here, the functions are called in the kernel), records
which cells fail, and restores the reference by re-running the solution cells. ``every_cell=False``
runs, for a variant that only binds names (``def``, ``class``, ``name = ...``, imports), only the
test cells those names can reach (``cells_reached``); a cell left out names none of them, directly
or through a solution that does, so it runs the reference's code and passes as it did in the
baseline. tests/test_autograder.py runs 9.1-9.3 in full and checks that rule on them.
The kernel runs in the grading sandbox (course/grading/sandbox.py) wherever it can start.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.build_lessons import LESSONS, lesson_dir, trusted_tests
from course.grading import sandbox

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
HEADER = re.compile(r"^# %% (bug|valid|depends|equivalent) ([\w.]+): ?(.*)$")
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
    # solution grade_id -> every test cell before the next solution
    cell_tests: dict[str, list[str]]
    points: dict[str, float]  # test grade_id -> points
    test_code: dict[str, str]  # test grade_id -> its code as graded (visible + hidden tests)

    @classmethod
    def load(cls, lesson: str) -> Lesson:
        nb = nbformat.read(ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb", as_version=4)
        sol, tests, fcell, ctest, ctests, pts = {}, {}, {}, {}, {}, {}
        pending: list[str] = []
        last: list[str] = []  # the solution cells the latest test cells follow
        for i, c in enumerate(nb.cells):
            meta = c.metadata.get("nbgrader", {})
            if c.cell_type != "code" or not meta:
                continue
            gid = meta["grade_id"]
            if meta.get("solution"):
                sol[gid] = i
                pending.append(gid)
                last = []
                for name in DEF.findall(c.source):
                    fcell[name] = gid
            elif meta.get("grade"):
                tests[gid] = i
                pts[gid] = float(meta["points"])
                for s in pending:
                    ctest[s] = gid
                last = last or pending
                for s in last:
                    ctests.setdefault(s, []).append(gid)
                pending = []
        code = {gid: t.code for gid, t in trusted_tests(lesson).items()}
        return cls(lesson, nb, sol, tests, fcell, ctest, ctests, pts, code)

    def test_of(self, function: str) -> str:
        return self.cell_test[self.function_cell[function]]

    def tests_of(self, function: str) -> list[str]:
        """Every test cell of ``function``: the ones between its solution cell and the next (lesson
        9.4's ``diagnose`` has four, one per kind of credit)."""
        return self.cell_tests[self.function_cell[function]]

    def reference_code(self, grade_id: str) -> str:
        """A solution cell's source as a student would write it: the markers removed."""
        return SOLUTION_MARKER.sub("", self.nb.cells[self.solution_cells[grade_id]].source)


@dataclass
class VariantFile:
    lesson: str
    variants: list[Variant]
    depends: dict[str, set[str]] = field(default_factory=dict)  # test cell -> functions
    equivalent: dict[str, str] = field(default_factory=dict)  # mutant key -> argument
    equivalent_function: dict[str, str] = field(default_factory=dict)  # mutant key -> function

    @classmethod
    def load(cls, lesson: str) -> VariantFile:
        path = lesson_dir(lesson) / "variants.py"
        variants, depends, current = [], {}, None
        equivalent, eq_fn, eq_key = {}, {}, None
        for line in path.read_text().splitlines():
            m = HEADER.match(line)
            if m:
                kind, name, rest = m.groups()
                current = eq_key = None
                if kind == "depends":
                    depends[name] = set(rest.split())
                elif kind == "equivalent":
                    eq_key = rest.split()[0] if rest.split() else ""
                    if not eq_key or eq_key in equivalent:
                        raise ValueError(f"{path}: equivalent needs a new mutant key: {line!r}")
                    equivalent[eq_key], eq_fn[eq_key] = "", name
                else:
                    current = Variant(kind, name, rest.strip(), "")
                    variants.append(current)
            elif line.startswith("# %%"):
                raise ValueError(f"{path}: malformed header {line!r}")
            elif eq_key is not None:
                if line.strip():
                    equivalent[eq_key] += line.strip().removeprefix("#").strip() + " "
            elif current is not None:
                current.code += line + "\n"
        return cls(lesson, variants, depends, {k: v.strip() for k, v in equivalent.items()}, eq_fn)

    def may_fail(self, lesson: Lesson, v: Variant) -> tuple[set[str], set[str]]:
        """(the cells of which at least one must fail, cells that may also fail) for a bug variant."""
        must = set(lesson.tests_of(v.function))
        extra = {t for t, fns in self.depends.items() if v.function in fns} - must
        return must, extra


def lessons_with_variants() -> list[str]:
    return [ls for ls in LESSONS if (lesson_dir(ls) / "variants.py").is_file()]


def cell_failed(cell) -> bool:
    """nbgrader's verdict under the course's settings: an error output fails the cell; stderr does
    not (course/grading/stderr_policy.py turns it into output before grading)."""
    return any(o.output_type == "error" for o in cell.get("outputs", []))


class GradingKernel:
    """One kernel that has executed a lesson's source notebook as the autograder would.

    ``with GradingKernel("9.2") as k:`` starts the kernel (sandboxed wherever the sandbox can
    start), runs every cell with NBGRADER_EXECUTION=autograde and records ``k.baseline`` (graded
    test cell -> failed). ``k.try_code(code, cells)`` execs ``code`` (a variant of a solution cell),
    re-runs the given test cells and returns {cell: failed}; ``k.restore()`` puts the reference
    back. A cell that runs past ``timeout`` seconds raises ``nbclient.exceptions.CellTimeoutError``
    and a kernel that dies raises ``DeadKernelError``; either way the caller counts the cell as
    failed (as a class run would) and starts a new GradingKernel. (An interrupt is not tried: a
    sandboxed kernel spinning in a loop does not always get the signal, and the kernel is shut down
    when the context exits anyway.)
    """

    def __init__(self, lesson: str, timeout: int = 120):
        self.lesson, self.info, self.timeout = lesson, Lesson.load(lesson), timeout
        self.env = dict(os.environ, NBGRADER_EXECUTION="autograde")
        nb = self.info.nb
        self.client = NotebookClient(
            nb, timeout=timeout, kernel_name="python3", allow_errors=True, interrupt_on_timeout=False,
            resources={"metadata": {"path": str(ROOT / "source_notebooks" / lesson)}},
        )  # fmt: skip
        if sandbox.unavailable_reason() is None:  # the kernel runs as in a class run: sandboxed
            self.client.kernel_manager_class = sandbox.kernel_manager_class(
                sandbox.Limits(), [ROOT / "release" / lesson]
            )
        self.baseline: dict[str, bool] = {}
        self.demos_run: list[list[int]] = []  # per variant tried: the left-out demos it needed
        self.cell_seconds: dict[str, float] = {}
        self.messages: dict[str, str] = {}  # test grade_id -> the trusted verdict's message
        self._channel = None

    def __enter__(self) -> GradingKernel:
        import time

        self._old_env = os.environ.copy()
        os.environ.update(self.env)
        self._ctx = self.client.setup_kernel(env=self.env)
        self._ctx.__enter__()
        nb, test_index = self.info.nb, {i: g for g, i in self.info.test_cells.items()}
        self.left_out = demos_left_out(self.lesson, nb)
        for idx, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and idx not in self.left_out:
                t0 = time.perf_counter()
                self.client.execute_cell(cell, idx)
                if idx in test_index:
                    self.cell_seconds[test_index[idx]] = time.perf_counter() - t0
        self.baseline = self.run_tests()
        return self

    def __exit__(self, *exc) -> None:
        if self._channel is not None:
            self._channel.close()
        try:
            self._ctx.__exit__(*exc)
        except Exception:  # a dead kernel cannot be shut down cleanly; nothing is left to save
            pass
        finally:
            os.environ.clear()
            os.environ.update(self._old_env)

    def run_tests(self, cells: list[str] | None = None) -> dict[str, bool]:
        """The autograder's verdict: the test cells run here, the functions called in the kernel
        through the plain-data channel (course/grading/verdict.py). A call past the time limit
        raises CellTimeoutError, as a cell past its limit does."""
        from nbclient.exceptions import CellTimeoutError

        from course.grading.boundary import Channel
        from course.grading.verdict import run_lesson

        if self._channel is None:
            self._channel = Channel(self.client.km.connection_file, timeout=self.timeout)
        out = {}
        for v in run_lesson(self._channel, self.lesson, list(self.info.test_cells) if cells is None else cells,
                            self.timeout):  # fmt: skip
            if v.timeout:
                raise CellTimeoutError(v.message)
            out[v.grade_id] = not v.passed
            self.messages[v.grade_id] = v.message
        return out

    def run_code(self, code: str, idx: int = 0) -> bool:
        """Exec ``code``; True when it ran without an error (or stderr nbgrader would count)."""
        cell = nbformat.v4.new_code_cell(code)
        self.client.execute_cell(cell, idx)
        return not cell_failed(cell)

    def try_code(self, code: str, cells: list[str] | None = None) -> dict[str, bool] | None:
        """Run the variant ``code`` and then the test cells; None when the code itself fails."""
        self._run_demos_read_by(code)
        if not self.run_code(code):
            return None
        return self.run_tests(cells)

    def _run_demos_read_by(self, code: str) -> None:
        """A class run decides what to leave out on the submission it grades: a variant that
        reads a name of a demo left out here would have that demo run. Run such demos now (in
        notebook order, after the rest, and for every later variant too: not what a class run
        does when a later cell rebinds what they bind or read; ``run_variants`` reports them in
        ``demos_run``)."""
        left = demos_left_out(self.lesson, self.info.nb, extra=code)
        for idx in sorted(self.left_out - left):
            self.client.execute_cell(self.info.nb.cells[idx], idx)
        self.demos_run.append(sorted(self.left_out - left))
        self.left_out &= left

    def restore(self) -> None:
        for gid, idx in self.info.solution_cells.items():
            if not self.run_code(self.info.nb.cells[idx].source, idx):
                raise RuntimeError(f"{self.lesson}: the reference cell {gid} failed to run again")


def demos_left_out(lesson: str, nb, extra: str | None = None) -> set[int]:
    """The cells of ``nb`` a class run would leave out (GuardedExecute.skip_demos, on by default),
    judged against the lesson's release notebook as the grader judges them; ``extra``: with this
    code as one more cell of the student's at the end (a variant)."""
    from course.grading import demos

    cells = list(nb.cells) + ([nbformat.v4.new_code_cell(extra)] if extra is not None else [])
    return demos.skippable(cells, _lesson_cells(lesson))


@functools.cache
def _lesson_cells(lesson: str):
    from course.grading import demos

    release = nbformat.read(ROOT / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    return demos.lesson_cells(release.cells)


def _names(code: str) -> set[str]:
    """Every name and attribute name ``code`` mentions."""
    tree = ast.parse(code)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }


def bound_names(code: str) -> set[str] | None:
    """The names a cell binds at top level (and any its functions declare ``global``), or None when
    it does anything else at top level (a call, an attribute or item assignment: a side effect
    that may reach any cell)."""
    tree = ast.parse(code)
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            bound |= {n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return None
            bound |= {t.id for t in targets}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return None
    return bound


def cells_reached(info: Lesson, code: str) -> list[str] | None:
    """The test cells a variant's ``code`` can change: those that mention a name it binds, or a
    name a solution cell binds whose code mentions one of them (to a fixed point). None: all."""
    reach = bound_names(code)
    if reach is None:
        return None
    solutions = [(bound_names(info.reference_code(g)), _names(info.reference_code(g)))
                 for g in info.solution_cells]  # fmt: skip
    grown = True
    while grown:
        grown = False
        for binds, mentions in solutions:
            if binds is None:
                return None
            if mentions & reach and not binds <= reach:
                reach |= binds
                grown = True
    return [t for t in info.test_cells if _names(info.test_code[t]) & reach]


def run_variants(lesson: str, variants: list[Variant], timeout: int = 120,
                 every_cell: bool = True) -> dict:  # fmt: skip
    """Execute the lesson once, then every variant; returns {"baseline": {...}, name: {cell: failed}}
    (with ``every_cell=False``, only the cells ``cells_reached`` names for that variant)."""
    results: dict[str, dict[str, bool]] = {}
    with GradingKernel(lesson, timeout) as k:
        results["baseline"] = k.baseline
        for v in variants:
            got = k.try_code(v.code, None if every_cell else cells_reached(k.info, v.code))
            if got is None:
                raise RuntimeError(f"{lesson}: code failed to run:\n{v.code}")
            results[v.name] = got
            k.restore()
        results["restored"] = k.run_tests()
        # the variants that needed a demo left out of the reference's grading, and which
        results["demos_run"] = {
            v.name: cells for v, cells in zip(variants, k.demos_run, strict=True) if cells
        }
    return results
