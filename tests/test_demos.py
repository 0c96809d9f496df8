"""The demo cells grading leaves out (course/grading/demos.py).

The rule is checked against execution: on generated notebooks (demo cells that bind names by
assignment, augmented assignment, loops, defs, classes, lambdas, imports, ``exec``, walrus, ``with``
and comprehensions, that store through aliases and call the student's functions; student and lesson
cells that read them at once, in functions, defaults, class bodies, comprehensions, f-strings and
through ``globals()``, ``eval`` and ``__main__``), running the notebook without the cells
``skippable`` names must leave every cell that is not a demo, and every function and value they
define, exactly as running the whole notebook does. Then the rules named in the module's docstring,
one by one, and on the five lessons: every demo cell but the imports is left out of the reference.
The real nbgrader path (GuardedExecute) is tested in tests/test_autograder.py.
"""

from __future__ import annotations

import json
import random
import re
import time

import pytest

from course.build_lessons import LESSONS
from course.grading import demos
from tests.conftest import ROOT

NAMES = ["a", "b", "c", "d", "e"]

# A demo cell binds X (reading Y, an earlier name, in some of them).
DEMO = [
    "X = {k}",
    "X = Y + {k}",
    "X = {k}\nX += Y",
    "def X():\n    return Y + {k}",
    "def X(v=Y):\n    return v + {k}",
    "for X in range({k}, {k} + 2):\n    pass",
    "if {k} % 2:\n    X = {k}",
    "try:\n    X = Y * {k}\nexcept NameError:\n    X = -{k}",
    "X = [Y for Y in range({k})][-1]",
    "class X:\n    v = Y + {k}",
    "with open(__file__ if '__file__' in dir() else '/dev/null') as X:\n    pass",
    "X = lambda: Y + {k}",
    "import math as X",
    "X = {{'v': {k}}}\nX['v'] += 1",
    "(X := {k})",
    "print(Y, {k})",
    "X = sum(Y for _ in range(2))",
    "exec('X = {k}')",  # a binding only the text shows
    "o = D\no['v'] = {k}",  # a store into an object another cell made, through an alias
    "for o in [D]:\n    o['v'] = {k}",
    "D['v'] = {k}",
    "def X():\n    D['v'] = {k}\nX()",  # a function of the demo's that changes D
    "setx({k})",  # calls the student's function that sets a global
    "X = vars(Y) if isinstance(Y, type) else {k}",
    "L.append({k})",  # a method call on the student's list
    "sample()",  # draws from the student's generator
    "with suppress(NameError):\n    X = Y + {k}",
    "o = [D]\no[0]['v'] = {k}",  # an alias inside a literal
    "(o, p), q = (D, 1), 2\no['v'] = {k}",
    "def X(v=(Z := {k})):\n    return v",  # a binding in a default
    "import math as X\nX = {k}",
]
# A student cell reads X (bound by some demo, or by nothing) in some way; R and F are its own names.
STUDENT = [
    "R = X",
    "def F():\n    return X",
    "def F(v=X):\n    return v",
    "F = lambda: X",
    "R = [X for _ in range(2)]",
    "R = [v for v in [X]]",
    "R = f'{{X}}'",
    "R = globals()['X']",
    "R = getattr(__import__('__main__'), 'X', None)",
    "X = 1\nR = X",
    "for X in range(2):\n    R = X",
    "if True:\n    X = 3\nR = X",
    "try:\n    R = X\nexcept NameError:\n    R = None",
    "class F:\n    v = X",
    "def F():\n    global X\n    X = 7\n    return X",
    "def F():\n    global X\n    X += 1\n    return 0",
    "def F():\n    global X\n    del X\n    return 0",
    "def F():\n    X = 2\n    return X",
    "R = 0\nR += X",
    "del X\nR = 1",
    "R = eval('X')",
    "R = {{v: X for v in range(2)}}",
    "def F():\n    def g():\n        return X\n    return g()",
    "D = {{'v': 0}}",
    "R = D['v']",
    "def F():\n    return D['v']",
    "def setx(v):\n    global X\n    X = v",
    "R = [_ for _ in [X]]",
    "X += 1\nR = X",
    "L = []",
    "R = len(L)",
    "import random\nrng = random.Random(0)",
    "def sample():\n    return rng.random()",
    "R = sample()",
    "from contextlib import suppress\nwith suppress(ZeroDivisionError):\n    X = 1 / 0\nR = X",
    "R = Z",
]


def _cell(src: str, graded: bool = False) -> dict:
    meta = {"nbgrader": {"grade_id": "s", "solution": True, "grade": False}} if graded else {}
    return {"cell_type": "code", "source": src, "metadata": meta, "outputs": []}


def _lesson(sources: set[str], others: set[str] = frozenset()) -> demos.LessonCells:
    """A lesson whose demo cells are ``sources`` and whose other code cells are ``others`` (the
    rest of a notebook is the student's)."""
    return demos.LessonCells(frozenset(sources), frozenset(sources) | frozenset(others))


def _generated_lesson(cells: list[dict]) -> demos.LessonCells:
    return _lesson({c["source"].strip() for c in cells if c.get("_demo")},
                   {c["source"].strip() for c in cells if c.get("_lesson")})  # fmt: skip


def _run(cells: list[dict], left_out: set[int]) -> tuple[list, dict]:
    """Each student or lesson cell's outcome and the value of its R (its F is called only at the
    end, since a call may change a global), then the value (or error) of every F() and R at the
    end, calls in a fixed order; a class is compared by its own attributes."""
    ns: dict = {"__name__": "__main__"}
    seen = []
    for i, c in enumerate(cells):
        if i in left_out:
            continue
        try:
            exec(compile(c["source"], f"<cell {i}>", "exec"), ns)  # noqa: S102
            seen.append((i, None, "" if c.get("_demo") else _repr(ns.get(c["_names"][0]))))
        except Exception as err:  # noqa: BLE001
            seen.append((i, type(err).__name__, None))
    end = {}
    for name in sorted(k for k in ns if k[0] in "RF"):
        v = ns[name]
        try:
            end[name] = _repr(v() if callable(v) and not isinstance(v, type) else v)
        except Exception as err:  # noqa: BLE001
            end[name] = type(err).__name__
    return [s for s in seen if not cells[s[0]].get("_demo")], end


def _repr(v) -> str:
    if isinstance(v, type):  # a class: its own attributes
        v = {k: a for k, a in vars(v).items() if not k.startswith("__")}
    return re.sub(r" at 0x[0-9a-f]+", "", repr(v))  # the same function, wherever it lives


def _notebook(rng: random.Random) -> list[dict]:
    cells = []
    for n in range(rng.randint(4, 14)):
        if rng.random() < 0.6:
            x, y = rng.choice(NAMES), rng.choice(NAMES)
            src = rng.choice(DEMO).format(k=rng.randint(1, 9)).replace("X", x).replace("Y", y)
            cells.append({**_cell(src), "_demo": True})
        else:
            x = rng.choice(NAMES)
            src = rng.choice(STUDENT).format().replace("X", x)
            src = src.replace("R", f"R{n}").replace("F", f"F{n}")
            # a cell of the lesson's that runs (its imports, a test cell), or the student's
            kind = rng.choice(["lesson", "graded", "own"])
            cells.append({**_cell(src, graded=kind == "graded"), "_names": (f"R{n}", f"F{n}"),
                          "_lesson": kind == "lesson"})  # fmt: skip
    return cells


@pytest.mark.parametrize("seed", range(1000))
def test_leaving_out_what_skippable_names_changes_nothing_a_student_cell_sees(seed):
    rng = random.Random(seed)
    cells = _notebook(rng)
    lesson = _generated_lesson(cells)
    left = demos.skippable(cells, lesson)
    assert all(cells[i].get("_demo") for i in left)
    full, skip = _run(cells, set()), _run(cells, left)
    assert skip == full, "\n\n".join(
        f"[{i}{' left out' if i in left else ''}]\n{c['source']}" for i, c in enumerate(cells)
    )


def test_the_generated_notebooks_leave_cells_out():
    """The property above is not vacuous: most generated notebooks leave a demo out, and many
    keep a demo that is a candidate because a cell that runs needs it."""
    left_any = kept_any = 0
    for seed in range(1000):
        cells = _notebook(random.Random(seed))
        lesson = _generated_lesson(cells)
        left = demos.skippable(cells, lesson)
        n_cand = sum(
            bool(c.get("_demo")) and demos.bound_names(c["source"]) is not None for c in cells
        )
        left_any += bool(left)
        kept_any += len(left) < n_cand
    assert left_any > 400 and kept_any > 250


def _nb(*cells: str | tuple[str, bool]) -> list[dict]:
    return [_cell(c) if isinstance(c, str) else _cell(c[0], c[1]) for c in cells]


@pytest.mark.parametrize(
    "demo, student, left",
    [
        ("x = 1", "def f():\n    return 2", True),
        ("x = 1", "def f():\n    return x", False),  # read later, in a function body
        ("x = 1", "y = x", False),  # read when it runs
        ("x = 1", "x = 2\ny = x", True),  # bound by the cell itself before the read
        ("x = 1", "if c:\n    x = 2\ny = x", False),  # maybe bound: the demo's x may be read
        ("x = 1", "y = [x for x in range(3)]", True),  # the comprehension's own x
        ("x = 1", "y = f'{x}'", False),
        ("x = 1", "y = globals()['x']", False),
        ("x = 1", "y = getattr(m, 'x')", True),  # an attribute of m, not a global
        ("x = 1", "import __main__\ny = getattr(__main__, 'x')", False),
        ("x = 1", "from __main__ import x as y", False),
        ("x = 1", "import sys\ny = sys.modules['__main__'].x", False),
        ("x = 1", "%time y = x", False),  # a magic: every identifier in it
        ("x = 1", "y = x +", False),  # does not parse: every identifier in it
        ("x = 1", "y = z +", True),
        ("x = 1", "def f():\n    x = 3\n    return x", True),  # a local x
        ("x = 1", "def f():\n    global x\n    x = 3", True),  # binds x, never reads it
        ("x = 1", "def f():\n    global x\n    x += 3", False),
        ("CONFIG['eps'] = 1", "y = 2", False),  # stores into an object it did not make
        ("from math import *", "y = 2", False),
        ("import math", "y = math.pi", False),
        ("import math", "y = 2", True),
        ("print(1)", "y = 2", True),
        ("x = 1", "class C:\n    v = x", False),
        ("x = 1", "def f(v=x):\n    return v", False),  # a default: read when the def runs
        ("ns = make()", "for ns.i in range(2):\n    pass", False),  # a target that reads ns
        ("r = 1", "def f(r):\n    r -= 1\n    return r", True),  # the parameter, not the global
        ("r = 1", "def f():\n    global r\n    r -= 1", False),
        ("x = 1", "x += 1", False),  # reads x first
        # a cell whose analysis fails reads every identifier of its text; nothing raises
        ("x = 1", "def f():\n        return x\n    y = 2", False),  # IndentationError
        ("x = 1", "x?\n" * 500, False),  # too many lines for IPython to transform
        ("x = 1", "y = " + "+".join(["x"] * 3000), False),  # deeper than the recursion limit
        (
            "x = 1",
            "z = 1  # x\n" + "w = 0\n" * (demos.MAX_CELL // 6),
            False,
        ),  # over MAX_CELL: not parsed
        # a candidate must show every name it binds and change nothing it did not make
        ("%%time\nx = 3", "y = x", False),  # a magic runs its text as code: not a candidate
        ("exec('x = 5')", "def f():\n    return x", False),
        ("o = CFG['opt']\no['lr'] = 2", "y = 2", False),  # a store through an alias
        ("for p in model.ps:\n    p.frozen = True", "y = 2", False),
        ("setattr(model, 'lr', 2)", "y = 2", False),
        ("def s():\n    CFG['lr'] = 2\ns()", "y = 2", False),  # a function that writes
        ("o = {}\no['lr'] = 2", "y = 2", True),  # a store into an object it made
        ("fig, ax = make()\nax.title = 't'", "y = 2", True),  # a call's result is new
        ("x = vars(obj)", "y = 2", True),  # vars with an argument reads no global
        ("x = [v for _ in range(2)]", "y = 2", True),  # ``_`` is a name like any other
        # a demo that reads what the student made could change it: it runs
        ("x = 1\nprint(W)", "W = [1]", False),
        ("x = 1\nprint(W)", "W = 5", True),  # a constant cannot be changed
        ("x = 1\nfit(3)", "def fit(v):\n    global W\n    W = v", False),  # a writer
        ("x = 1\nfit(3)", "def fit(v):\n    return v", True),
        # a student function that uses the student's generator or list changes it when called
        ("x = 1\nsample()", "rng = make()\ndef sample():\n    return rng.normal()", False),
        ("x = 1\nsample()", "def sample():\n    return 4", True),
        # reads the analysis finds in strings
        ("x = 1", "y = df.query('v < @x')", False),
        ("x = 1", "q = 'v < @x'\ny = df.query(q)", False),  # the text in a variable
        ("x = 1", "y = typing.get_type_hints(g)", False),  # a string annotation 'x'
        ("x = 1", "y = inspect.currentframe().f_back.f_locals['x']", False),
        ("x = 1", "y = builtins.eval(src)", False),
        ("x = 1", "y = pd.eval(f'v < @x')", False),
        ("x = 1\nmodel.eval()", "y = 2", True),  # a method called eval, on no string
        ("x = 1\nr = t.evaluate(h, n=8, s=True)", "y = 2", True),
        ("d = {k: {'a': 0} for k in ks}\nd['x']['a'] += 1", "y = 2", True),  # its own dict
        ("x = 1", "from sys import modules\ny = modules['__main__'].x", False),
        ("x = 1", "y = f.__globals__['x']", False),
        # a with body may stop early: what it binds is not surely bound after it
        ("x = 1", "with suppress(OSError):\n    x = load()\ny = x", False),
        # stores through aliases in every form the assignment can take
        ("o = [CFG]\no[0]['lr'] = 2", "y = 2", False),
        ("(a, b), c = (CFG, 1), 2\na['lr'] = 2", "y = 2", False),
        ("*_, o = 1, CFG\no['lr'] = 2", "y = 2", False),
        ("o = {}\nimport o\no.lr = 2", "y = 2", False),
        ("(a, b), c = ({}, 1), 2\na['lr'] = 2", "y = 2", True),
        # what a def or class statement runs at once is read and bound too
        ("def g(v=(x := 1)):\n    return v", "y = x", False),
        ("def g(v=setattr(m, 'a', 1)):\n    return v", "y = 2", False),
        ("class C(Base, metaclass=M):\n    pass", "y = 2", True),
        ("a = {}\na[(x := 0)] = 1", "y = x", False),
        # a demo that rebinds a graded function's name: the verdict calls what it made
        ("f = wrap(f)", "def f():\n    return 1", False),
    ],
)
def test_each_rule(demo, student, left):
    cells = _nb("import os", demo, (student, True))
    got = demos.skippable(cells, _lesson({"import os", demo}))
    assert (1 in got) is left


@pytest.mark.parametrize("student", ["y = Out[3]", "y = _", "y = _12", "y = In[-1]"])
def test_a_cell_that_reads_ipythons_history_keeps_every_cell(student):
    cells = _nb("x = 1", "z = 2", (student, True))
    assert demos.skippable(cells, _lesson({"x = 1", "z = 2"})) == set()
    # ``_`` bound by the cell itself before the read is an ordinary name; read before, history
    cells = _nb("x = 1", "z = 2", ("for _ in range(2):\n    y = _", True))
    assert demos.skippable(cells, _lesson({"x = 1", "z = 2"})) == {0, 1}
    cells = _nb("x = 1", "z = 2", ("y = _\nfor _ in range(2):\n    pass", True))
    assert demos.skippable(cells, _lesson({"x = 1", "z = 2"})) == set()


@pytest.mark.parametrize(
    "student",
    [
        "f = " + "lambda: " * 60 + "0",  # nested scopes: each read once
        "if c:\n"
        + "".join("    " * (d + 1) + f"def f{d}():\n" for d in range(40))
        + "    " * 41
        + "pass",
        ("f = " + "lambda: " * 900 + "0\n") * 72,  # 64 KiB of deep nesting
        "x?\n" * 500,  # IPython's transformation, line by line
        "y = " + "+".join(["x"] * 3000),  # deeper than the recursion limit
        "x = %time f()\n" * 60 + "y = 1",
    ],
)
def test_hostile_cells_are_analysed_quickly_and_raise_nothing(student):
    cells = _nb("x = 1", "w = 2", (student, True))
    t0 = time.perf_counter()
    demos.skippable(cells, _lesson({"x = 1", "w = 2"}))
    assert time.perf_counter() - t0 < 5


def test_many_cells_count_toward_the_size_the_analysis_reads():
    cells = _nb("x = 1") + [_cell("")] * (demos.MAX_TOTAL // 100 + 1)
    assert demos.skippable(cells, _lesson({"x = 1"})) == set()
    assert demos.skippable(_nb("x = 1") + [_cell("")] * 50, _lesson({"x = 1"})) == {0}


def test_an_analysis_past_its_time_runs_every_cell(monkeypatch):
    monkeypatch.setattr(demos, "MAX_SECONDS", -1.0)
    assert demos.skippable(_nb("x = 1", "y = 2"), _lesson({"x = 1"})) == set()


def test_a_demo_that_may_change_an_object_by_a_method_call_runs_when_the_object_is_read():
    # L is made by a lesson cell that runs (not the student's): the call may change it
    cells = _nb("L = []", "x = 1\nL.append(2)", ("def f():\n    return len(L)", True))
    lesson = _lesson({"x = 1\nL.append(2)"}, {"L = []"})
    assert demos.skippable(cells, lesson) == set()
    # nobody reads L: left out; a module's function is not the notebook's object
    cells = _nb(
        "L = []", "x = 1\nL.append(2)", "np.random.seed(0)", ("def f():\n    return 1", True)
    )
    lesson = _lesson({"x = 1\nL.append(2)", "np.random.seed(0)"}, {"L = []", "import numpy as np"})
    assert demos.skippable(_nb("import numpy as np") + cells, lesson) == {2, 3}


def test_a_malformed_notebook_leaves_nothing_out_and_raises_nothing():
    bad = [
        {"cell_type": "code", "source": "x = 1", "metadata": {"nbgrader": ["x"]}},
        {"cell_type": "code", "source": None, "metadata": {}},
        {"cell_type": "code", "source": ["x", 1], "metadata": []},
    ]
    for cell in bad:
        assert demos.skippable([_cell("x = 1"), cell], _lesson({"x = 1"})) == set()


def test_chained_functions_over_many_cells_stop_at_the_time_budget(monkeypatch):
    cells = [_cell(f"def f{i}():\n    return f{i + 1}()", True) for i in range(3000)]
    cells += [_cell("s = []\ndef f3000():\n    return s", True), _cell("x = 1")]
    monkeypatch.setattr(demos, "MAX_SECONDS", 0.5)
    t0 = time.perf_counter()
    assert demos.skippable(cells, _lesson({"x = 1"})) == set()
    assert time.perf_counter() - t0 < 5


def test_a_demo_runs_when_a_demo_that_runs_reads_it():
    cells = _nb("x = 1", "y = x + 1", "z = 3", ("def f():\n    return y", True))
    assert demos.skippable(cells, _lesson({"x = 1", "y = x + 1", "z = 3"})) == {2}


def test_a_changed_or_new_cell_always_runs():
    cells = _nb("x = 1", "x = 2  # mine", "w = 5")
    assert demos.skippable(cells, _lesson({"x = 1"})) == {0}
    # the lesson's source up to leading and trailing whitespace
    assert demos.skippable(_nb("\n x = 1 \n"), _lesson({"x = 1"})) == {0}


def test_a_notebook_over_the_size_the_analysis_reads_runs_every_cell():
    cells = _nb("x = 1", "y = 2")
    assert demos.skippable(cells, _lesson({"x = 1"})) == {0}
    big = "z = 0  # " + "." * demos.MAX_CELL
    cells += [_cell(big)] * (demos.MAX_TOTAL // demos.MAX_CELL)
    assert demos.skippable(cells, _lesson({"x = 1"})) == set()


def test_lesson_cells_tells_demos_from_graded_cells():
    cells = [
        _cell("x = 1"),
        _cell("def f(): ...", graded=True),
        {"cell_type": "markdown", "source": "y = 2", "metadata": {}},
        {**_cell("assert f"), "metadata": {"nbgrader": {"grade": True, "grade_id": "t"}}},
        {**_cell("task"), "metadata": {"nbgrader": {"task": True, "grade_id": "k"}}},
    ]
    got = demos.lesson_cells(cells)
    assert got.demos == {"x = 1"} and got.code == {"x = 1", "def f(): ...", "assert f", "task"}


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_leaves_out_every_demo_but_its_imports(lesson):
    """The reference of each lesson, as graded: every non-graded code cell but the first (the
    imports every graded function needs) is left out (what BENCHMARKS.md and INSTRUCTOR.md say). A lesson change that makes a graded function
    read a demo's name shows here (and the harness then grades the variants with it run)."""
    nb = json.loads((ROOT / "release" / lesson / f"{lesson}.ipynb").read_text())
    src = json.loads((ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb").read_text())
    left = demos.skippable(src["cells"], demos.lesson_cells(nb["cells"]))
    code = [i for i, c in enumerate(src["cells"]) if c["cell_type"] == "code"]
    ungraded = [i for i in code if not demos.graded(src["cells"][i])]
    assert left == set(ungraded[1:])
    # the one that runs is the notebook's first code cell, its imports
    assert ungraded[0] == code[0]
    assert "\nimport " in "\n" + "".join(src["cells"][code[0]]["source"])
