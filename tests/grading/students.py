"""Fake students for full nbgrader runs: release notebooks filled with reference answers, planted
bugs, valid alternatives, and submissions that attack or break the grader.

Every builder returns (notebook, expected) where expected maps each test cell id to the points the
submission has earned (the test cells' points where it deserves them, else 0).
"""

from __future__ import annotations

import copy
import re

import nbformat

from tests.grading.harness import ROOT, Lesson, Variant, VariantFile

STUB = re.compile(r"raise NotImplementedError\(\)")


def release_nb(lesson: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "release" / lesson / f"{lesson}.ipynb", as_version=4)


def _cell_index(nb, grade_id: str) -> int:
    for i, c in enumerate(nb.cells):
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return i
    raise KeyError(grade_id)


def filled(lesson: str, variants: list[Variant] = (), blank: set[str] = frozenset()):
    """The release with every solution cell answered by the reference, then ``variants`` appended to
    the cells of their functions; solution cells in ``blank`` keep the release stub."""
    info = Lesson.load(lesson)
    nb = release_nb(lesson)
    for gid in info.solution_cells:
        if gid in blank:
            continue
        code = info.reference_code(gid)
        for v in variants:
            if info.function_cell[v.function] == gid:
                code += "\n\n" + v.code
        nb.cells[_cell_index(nb, gid)].source = code
    return nb


def expected_points(lesson: str, failing: set[str]) -> dict[str, float]:
    info = Lesson.load(lesson)
    return {t: (0.0 if t in failing else p) for t, p in info.points.items()}


def class_for(lesson: str, harness_results: dict) -> dict[str, tuple]:
    """The basic fake class of a lesson: reference, planted bugs (the first bug of every function),
    valid alternatives (all of them at once). Expected failures come from the in-kernel harness."""
    info = Lesson.load(lesson)
    vf = VariantFile.load(lesson)
    bugs, valids, seen = [], [], set()
    for v in vf.variants:
        if v.kind == "valid":
            valids.append(v)
        elif v.function not in seen:
            seen.add(v.function)
            bugs.append(v)
    fail = set()
    for v in bugs:
        fail |= {c for c, f in harness_results[v.name].items() if f}
    del info
    return {
        "alice_reference": (filled(lesson), expected_points(lesson, set())),
        "bob_bugs": (filled(lesson, bugs), expected_points(lesson, fail)),
        "carol_alternatives": (filled(lesson, valids), expected_points(lesson, set())),
    }


# --- submissions that attack or break the grader (written for any lesson) ------------------------

MONKEYPATCH = """
import builtins, math, numpy as np, numpy.testing
np.testing.assert_allclose = lambda *a, **k: None
np.testing.assert_array_equal = lambda *a, **k: None
numpy.testing._private.utils.assert_allclose = lambda *a, **k: None
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.all = lambda *a, **k: True
math.isclose = lambda *a, **k: True
builtins.AssertionError = type("Quiet", (Exception,), {})
_real_type = builtins.type
class _T(_real_type):
    def __call__(cls, *a):
        return _real_type(*a)
"""

LIAR = """
import numpy as _np
class _LieArray(_np.ndarray):
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False
class _LieFloat(float):
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False
    __hash__ = float.__hash__
class _LieStr(str):
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False
    __hash__ = str.__hash__
"""


def _functions(lesson: str) -> dict[str, str]:
    info = Lesson.load(lesson)
    return dict(info.function_cell)


def attacker(lesson: str, kind: str):
    """A submission of ``kind``; returns (notebook, expected points per test cell)."""
    info = Lesson.load(lesson)
    sols = list(info.solution_cells)
    first, middle = sols[0], sols[len(sols) // 2]
    first_test, middle_test = info.cell_test[first], info.cell_test[middle]
    dependents = {t for t, fns in VariantFile.load(lesson).depends.items()
                  if any(info.function_cell[f] in (first, middle) for f in fns)}  # fmt: skip
    nb = filled(lesson)
    if kind == "loop":  # never returns, and swallows the interrupt
        i = _cell_index(nb, middle)
        nb.cells[i].source += (
            "\nimport time\nwhile True:\n    try:\n        time.sleep(0.05)\n"
            "    except KeyboardInterrupt:\n        pass\n"
        )
        return nb, expected_points(lesson, {middle_test} | dependents_of(lesson, middle))
    if kind == "kill":  # os._exit in one cell, SIGKILL in another
        nb.cells[_cell_index(nb, first)].source += "\nimport os\nos._exit(3)\n"
        nb.cells[
            _cell_index(nb, middle)
        ].source += "\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
        return nb, expected_points(lesson, {first_test, middle_test} | dependents)
    if kind == "syntax":
        nb.cells[_cell_index(nb, middle)].source += "\ndef broken(:\n    pass\n"
        return nb, expected_points(lesson, {middle_test} | dependents_of(lesson, middle))
    if kind == "tamper_cells":  # deletes one test cell, empties another, with a bug in the first
        bug = next(v for v in VariantFile.load(lesson).variants
                   if v.kind == "bug" and info.function_cell[v.function] == first)  # fmt: skip
        nb = filled(lesson, [bug])
        nb.cells[_cell_index(nb, middle_test)].source = "pass  # tests? what tests"
        del nb.cells[_cell_index(nb, first_test)]
        return nb, expected_points(lesson, {first_test} | dependents_of(lesson, first))
    if kind == "redefine_after":  # stub answer, correct function defined only after its test
        nb = filled(lesson, blank={first})
        i = _cell_index(nb, first_test)
        nb.cells.insert(i + 1, nbformat.v4.new_code_cell(info.reference_code(first)))
        # the trusted verdict calls the notebook's functions after it has run: the last
        # definition is the one graded
        return nb, expected_points(lesson, set())
    if kind == "monkeypatch":  # stubs everywhere, assertion helpers disabled at the top
        nb = filled(lesson, blank=set(sols))
        nb.cells.insert(1, nbformat.v4.new_code_cell(MONKEYPATCH))
        # and a function that patches the helpers while the tests run
        nb.cells[_cell_index(nb, middle)].source = re.sub(
            r"(\n\s*)raise NotImplementedError\(\)",
            r"\1import numpy as _n, math as _m\1_n.testing.assert_allclose = lambda *a, **k: None"
            r"\1_m.isclose = lambda *a, **k: True\1_n.allclose = lambda *a, **k: True\1return None",
            nb.cells[_cell_index(nb, middle)].source,
        )
        return nb, expected_points(lesson, set(info.test_cells))
    if kind == "liar":  # every function returns an object that equals anything
        nb = filled(lesson, blank=set(sols))
        nb.cells.insert(1, nbformat.v4.new_code_cell(LIAR))
        for k, gid in enumerate(sols):
            i = _cell_index(nb, gid)
            lie = "_np.zeros(4).view(_LieArray)" if k % 2 == 0 else "_LieFloat(0.0)"
            nb.cells[i].source = STUB.sub(
                f"import numpy as _np\n    return {lie}", nb.cells[i].source
            )
        return nb, expected_points(lesson, set(info.test_cells))
    if kind == "warns":  # correct, but every function emits a library-style warning first
        nb = filled(lesson)
        for gid in sols:
            i = _cell_index(nb, gid)
            nb.cells[i].source = re.sub(
                r'^(def \w+\(.*?\).*?:\n(?:\s+""".*?"""\n)?)',
                lambda m: (
                    m.group(1)
                    + "    import warnings\n    warnings.warn('slow path', RuntimeWarning)\n"
                ),
                nb.cells[i].source,
                flags=re.S | re.M,
            )
        return nb, expected_points(lesson, set())
    if kind == "logs":  # correct, but every function reports through logging (stderr) and print
        nb = filled(lesson)
        for gid in sols:
            i = _cell_index(nb, gid)
            nb.cells[i].source = re.sub(
                r'^(def \w+\(.*?\).*?:\n(?:\s+""".*?"""\n)?)',
                lambda m: (
                    m.group(1)
                    + "    import logging, sys\n    logging.basicConfig(level=logging.INFO)\n"
                    + "    logging.getLogger('mine').info('computing')\n"
                    + "    print('progress', file=sys.stderr)\n"
                ),
                nb.cells[i].source,
                flags=re.S | re.M,
            )
        return nb, expected_points(lesson, set())
    raise ValueError(kind)


def dependents_of(lesson: str, solution_id: str) -> set[str]:
    info = Lesson.load(lesson)
    fns = {f for f, g in info.function_cell.items() if g == solution_id}
    return {t for t, d in VariantFile.load(lesson).depends.items() if d & fns}


ATTACKS = [
    "loop",
    "kill",
    "syntax",
    "tamper_cells",
    "redefine_after",
    "monkeypatch",
    "liar",
    "warns",
    "logs",
]


def copy_nb(nb):
    return copy.deepcopy(nb)
