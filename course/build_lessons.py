"""Build nbgrader source notebooks from the reviewable lesson sources in ``course/lessons/``.

Each lesson is one folder, ``course/lessons/9.1/``:

    lesson.py            the lecture, demos, solution cells and visible tests (percent format)
    hidden/<test id>.py  the hidden tests of that test cell (never built into any notebook)
    variants.py          planted bugs and valid alternatives (tests/grading/harness.py)
    contracts.md         each graded function's contract clauses and the tests that check them
    mutation.json        the mutation record of the hidden tests (tests/grading/mutation.py)

``lesson.py`` reads well in a diff. This script turns it into ``source_notebooks/9.1/9.1.ipynb`` with
the nbgrader cell metadata that the markers below ask for. ``--check`` fails when a notebook is out
of date.

Cell markers (a cell starts at a line beginning with ``# %%``):

    # %% [markdown]                      lecture text; each line starts with "# " (or is "#")
    # %%                                 an ordinary code cell (demo, plot, self-check)
    # %% [solution] id=p_info            graded answer cell: code between ### BEGIN/END SOLUTION
    # %% [tests] id=test_p_info points=2 locked autograder tests (visible); hidden/test_p_info.py
                                         holds its hidden tests
    # %% [written] id=q_verifier points=3  manually graded markdown answer; the source holds the
                                         model answer and the rubric, the release an empty answer
    # %% [locked] id=setup               read-only code cell (students cannot edit it)

In a hidden-test file, a line ``# @data NAME FILE.json`` becomes ``NAME = json.loads(...)`` holding
that file of the lesson's ``hidden/`` folder (data only the grader may read: lesson 9.4's held-out
clinic runs), and a line ``# @reference ID [ID ...]`` is replaced by the
code of those solution cells (markers and docstrings removed, comments lost) with every function
they define renamed ``_ref_<name>``: the differential tests compare the student's function with the
reference on random inputs, and this copy is made here so the reference is written once.

Trusted verdicts: a test cell of the source notebook holds only its visible tests. The whole cell
(visible tests, then ``### BEGIN HIDDEN TESTS``, the hidden file with its references expanded,
``### END HIDDEN TESTS``) is ``trusted_tests(lesson)[grade_id].code``, which
course/grading/verdict.py runs in the grader's own process against the student's functions, reached
as plain data through course/grading/boundary.py: hidden tests, references and expected values never
enter the student's kernel, its working directory or any file it can read.

Usage: python course/build_lessons.py [--check] [LESSON ...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS_DIR = ROOT / "course" / "lessons"
SOURCE_DIR = ROOT / "source_notebooks"

HEADER = re.compile(r"^# %%(?:\s+\[(?P<kind>\w+)\])?(?P<args>.*)$")
REFERENCE = re.compile(r"^(?P<indent>[ \t]*)# @reference (?P<ids>[\w ]+)$")
DATA = re.compile(r"^# @data (?P<name>\w+) (?P<file>[\w.-]+\.json)$")
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$")
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
FIGURE_MARKER = re.compile(r"<!--\s*fig\s*:[^>]*-->", re.I)  # = helpers.figures.ANY_MARKER (tested)
LESSONS = tuple(sorted(p.parent.name for p in LESSONS_DIR.glob("9.*/lesson.py")))  # "9.1" ...
# Names a trusted test cell may use besides the graded functions (tests/test_verdict.py checks it)
TRUSTED_PREAMBLE = {
    "*": "import json\nimport math\n\nimport numpy as np\n",
    "9.1": "import re\n\nfrom helpers.verifiers import parse_number, verify_numeric_answer\n",
    "9.4": "from helpers.clinic import INTERVENTIONS, LABELS, WINDOW, load_clinic_runs, load_log\n",
    "9.5": "import warnings\nfrom types import SimpleNamespace\n\nimport torch\n\n"
    "from helpers import standins as local_standins\nfrom helpers.tasks import Task\n"
    "from helpers.trainer import GRPOTrainer\n",
}
# Imports a lesson's tests make on first use, beyond the preamble's (9.5's stand-ins import
# transformers, about 2 s): ``verdict --wait`` makes them while the notebook still runs
# (tests/test_verdict.py checks that building every stand-in imports nothing more).
TRUSTED_WARM = {
    "9.5": "from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM\n"
    "import helpers.lora, helpers.policies, helpers.reference, helpers.tasks, helpers.trainer\n"
}
# A module of the student library whose public names (its __all__) a lesson's trusted tests call IN
# THE KERNEL: ``UniformLM(5)`` there builds the stand-in in the student's process and hands back a
# handle (course/grading/boundary.py's KernelModule and Live); the same code built here is
# ``local_standins``.
TRUSTED_KERNEL = {"9.5": "helpers.standins"}
HIDDEN_NOTE = "# (hidden tests: run by the grader, outside this notebook)"


def _parse_args(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split())


def _markdown(lines: list[str]) -> str:
    out = []
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    for line in lines:
        if line.startswith("# "):
            out.append(line[2:])
        elif line.strip() == "#":
            out.append("")
        else:
            raise ValueError(f"markdown line must start with '# ': {line!r}")
    return FIGURE_MARKER.sub("", "\n".join(out).strip("\n"))  # the markers stay in lesson.py


def _meta(kind: str, args: dict[str, str]) -> dict:
    gid = args.get("id")
    if kind in ("solution", "tests", "written", "locked") and not gid:
        raise ValueError(f"a [{kind}] cell needs id=NAME")
    base = {"schema_version": 3, "grade_id": gid}
    if kind == "solution":
        return base | {"solution": True, "grade": False, "locked": False}
    if kind == "tests":
        return base | {
            "solution": False,
            "grade": True,
            "locked": True,
            "points": float(args["points"]),
        }
    if kind == "written":
        return base | {
            "solution": True,
            "grade": True,
            "locked": False,
            "points": float(args["points"]),
        }
    if kind == "locked":
        return base | {"solution": False, "grade": False, "locked": True}
    raise ValueError(f"unknown cell kind {kind!r}")


def reference_copy(solutions: dict[str, str], ids: list[str], indent: str = "") -> str:
    """The solution cells ``ids`` as hidden-test code: functions renamed ``_ref_<name>``."""
    import ast

    trees = []
    for gid in ids:
        if gid not in solutions:
            raise ValueError(f"# @reference {gid}: no solution cell with that id above this line")
        code = "\n".join(ln for ln in solutions[gid].splitlines() if not SOLUTION_MARKER.match(ln))
        trees.append(ast.parse(code))
    names = {n.name for t in trees for n in t.body if isinstance(n, ast.FunctionDef)}

    class Rename(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            self.generic_visit(node)
            if node.name in names:
                node.name = "_ref_" + node.name
            if (
                node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(getattr(node.body[0], "value", None), ast.Constant)
                and isinstance(node.body[0].value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
            return node

        def visit_Name(self, node):
            if node.id in names:
                node.id = "_ref_" + node.id
            return node

    body = "\n".join(ast.unparse(Rename().visit(t)) for t in trees)
    head = f"# reference copy of {', '.join(ids)} (made by course/build_lessons.py)"
    return "\n".join(indent + ln if ln else ln for ln in [head, *body.splitlines()])


def _expand_references(body: str, solutions: dict[str, str], where: str) -> str:
    out, hidden = [], False
    for ln in body.splitlines():
        if HIDDEN_BEGIN in ln:
            hidden = True
        elif HIDDEN_END in ln:
            hidden = False
        m = REFERENCE.match(ln)
        if m:
            if not hidden:
                raise ValueError(
                    f"{where}: '# @reference' outside the hidden tests would show the solution"
                )
            out.append(reference_copy(solutions, m["ids"].split(), m["indent"]))
        else:
            out.append(ln)
    return "\n".join(out)


@dataclass
class TrustedTest:
    """One test cell as the trusted grader runs it."""

    grade_id: str
    points: float
    code: str  # visible tests, then the hidden tests with their references expanded
    hidden_line: int  # 1-based line of the hidden-tests marker in ``code`` (0: none)


def _parse(source: Path) -> list[dict]:
    """The cells of a lesson.py; a [tests] cell gets its hidden file's lines after its own, between
    the hidden-test markers (what nbgrader's convention and the trusted verdict read)."""
    cells = _cells(source)
    for c in cells:
        if HIDDEN_BEGIN in "\n".join(c["lines"]) or HIDDEN_END in "\n".join(c["lines"]):
            raise ValueError(f"{source}: hidden tests go in hidden/<test id>.py, not in lesson.py")
        if c["kind"] == "tests":
            hidden = source.parent / "hidden" / f"{c['args'].get('id')}.py"
            if hidden.is_file():
                lines = c["lines"]
                while lines and not lines[-1].strip():
                    lines.pop()
                body = [_data_line(hidden.parent, ln) for ln in hidden.read_text().splitlines()]
                if any(HIDDEN_BEGIN in ln or HIDDEN_END in ln for ln in body):
                    raise ValueError(f"{hidden}: the hidden-test markers are the build's; remove "
                                     "them from the file (a stray END would publish what follows)")  # fmt: skip
                c["lines"] = [*lines, HIDDEN_BEGIN, *body, HIDDEN_END]
    ids = {c["args"].get("id") for c in cells if c["kind"] == "tests"}
    for f in (source.parent / "hidden").glob("*.py"):
        if f.stem not in ids:
            raise ValueError(f"{f}: no [tests] cell with id={f.stem} in {source}")
    return cells


def _data_line(folder: Path, line: str) -> str:
    """``# @data NAME FILE.json`` as one line of code that holds the file (see the docstring)."""
    m = DATA.match(line)
    if not m:
        return line
    text = (folder / m["file"]).read_text()
    json.loads(text)  # fails here, at build time, on a broken file
    return f"{m['name']} = json.loads({text.strip()!r})"


def _cells(source: Path) -> list[dict]:
    cells, current = [], None
    for raw in source.read_text().splitlines():
        m = HEADER.match(raw)
        if m:
            if current:
                cells.append(current)
            current = {"kind": m["kind"] or "code", "args": _parse_args(m["args"]), "lines": []}
        elif current is not None:
            current["lines"].append(raw)
    if current:
        cells.append(current)
    return cells


def _visible(body: str) -> str:
    """A test cell without its hidden part (the marker line becomes HIDDEN_NOTE)."""
    lines = body.splitlines()
    if not any(HIDDEN_BEGIN in ln for ln in lines):
        return body
    start = next(i for i, ln in enumerate(lines) if HIDDEN_BEGIN in ln)
    end = next((i for i, ln in enumerate(lines) if HIDDEN_END in ln), len(lines) - 1)
    return "\n".join(lines[:start] + [HIDDEN_NOTE] + lines[end + 1 :]).strip("\n")


def lesson_dir(lesson: str) -> Path:
    """The folder of ``lesson`` ("9.2" -> course/lessons/9.2/)."""
    return LESSONS_DIR / lesson


def trusted_tests(lesson: str) -> dict[str, TrustedTest]:
    """The test cells of ``lesson`` as the trusted grader runs them, in notebook order."""
    source = lesson_dir(lesson) / "lesson.py"
    out, solutions = {}, {}
    for c in _parse(source):
        kind, args = c["kind"], c["args"]
        body = "\n".join(c["lines"]).strip("\n")
        if kind == "solution":
            solutions[args.get("id")] = body
        elif kind == "tests":
            code = _expand_references(body, solutions, f"{lesson} [tests] {args['id']}")
            lines = code.splitlines()
            hidden = next((i + 1 for i, ln in enumerate(lines) if HIDDEN_BEGIN in ln), 0)
            out[args["id"]] = TrustedTest(args["id"], float(args["points"]), code, hidden)
    return out


def graded_functions(lesson: str) -> list[str]:
    """The functions the solution cells of ``lesson`` define (what the tests may call)."""
    names = []
    for c in _parse(lesson_dir(lesson) / "lesson.py"):
        if c["kind"] == "solution":
            names += re.findall(r"^def (\w+)\(", "\n".join(c["lines"]), re.M)
    return names


def build(source: Path):
    """Parse one percent-format lesson into an nbgrader source notebook (an nbformat NotebookNode)."""
    import nbformat  # here, not at the top: the grader's verdict process needs none of it

    cells = _parse(source)
    trusted_tests(source.parent.name)  # '# @reference' outside the hidden part fails here
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    seen, solutions = set(), {}
    for c in cells:
        kind, args = c["kind"], c["args"]
        body = "\n".join(c["lines"]).strip("\n")
        if kind == "solution":
            solutions[args.get("id")] = body
        elif kind == "tests":
            body = _visible(body)
        if kind in ("markdown", "written"):
            cell = nbformat.v4.new_markdown_cell(_markdown(c["lines"]))
        else:
            cell = nbformat.v4.new_code_cell(body)
        if kind not in ("markdown", "code"):
            meta = _meta(kind, args)
            if meta["grade_id"] in seen:
                raise ValueError(f"{source}: duplicate id {meta['grade_id']}")
            seen.add(meta["grade_id"])
            cell.metadata["nbgrader"] = meta
        cells_id = f"{source.parent.name.replace('.', '-')}-{len(nb.cells):03d}"
        cell["id"] = cells_id
        nb.cells.append(cell)
    return nb


def target_for(source: Path) -> Path:
    lesson = source.parent.name  # "9.1"
    return SOURCE_DIR / lesson / f"{lesson}.ipynb"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lessons", nargs="*", help="lesson ids such as 9.1 (default: all)")
    ap.add_argument("--check", action="store_true", help="fail if a notebook is out of date")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.lessons) - set(LESSONS))
    if unknown:
        print(f"no lesson {', '.join(unknown)} (lessons: {', '.join(LESSONS)})", file=sys.stderr)
        return 2
    sources = [lesson_dir(ls) / "lesson.py" for ls in (args.lessons or LESSONS)]
    stale = []
    import nbformat

    for src in sources:
        text = nbformat.writes(build(src)) + "\n"
        dst = target_for(src)
        if args.check:
            if not dst.exists() or dst.read_text() != text:
                stale.append(str(dst.relative_to(ROOT)))
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text)
        print(f"built {dst.relative_to(ROOT)}")
    if stale:
        print("out of date (run: python course/build_lessons.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
