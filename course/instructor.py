"""The instructor's cycle, one command per step, on top of nbgrader (see course/INSTRUCTOR.md).

    python course/instructor.py release [LESSON ...]      build_lessons.py + nbgrader generate_assignment
    python course/instructor.py bundle [--out DIR]        the student bundle (folder + .tar.gz)
    python course/instructor.py collect SRC LESSON ...    workspaces or zips -> submitted/<student>/<lesson>/
    python course/instructor.py autograde LESSON [--student S] [--workers 2] [--timeout SECONDS]
    python course/instructor.py feedback LESSON           nbgrader generate_feedback (hidden tests redacted)
    python course/instructor.py export [--to grades.csv]  nbgrader export

Each step prints the nbgrader command it runs. What nbgrader alone does not do is here:
- a class run on several cores: students are sharded over worker processes, each with its OWN copy of
  the gradebook (sqlite does not like concurrent writers); the grades are then merged into
  gradebook.db one student at a time. A student whose grading still fails is recorded with a reason
  in autograded/report-<lesson>.json instead of stopping the class run.
- grading safety, loaded by course/nbgrader_config.py into every nbgrader run:
  ``GuardedExecute`` (restores numpy/math/builtins before each test cell, fails a test cell during
  which they were modified, survives a killed kernel or a runaway cell by restarting the kernel and
  re-running the cells before it) and ``RedactHiddenTests`` (feedback shows no hidden test and no
  hidden expected value).

Standard library + nbgrader only; run with the course venv (``.venv/bin/python``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# What a student receives. Never: source_notebooks/, course/, tests/, bench/, gradebook, submissions.
BUNDLE_FILES = [
    "release",
    "helpers",
    "notebook.sh",
    "baselm.sh",
    "scripts/ensure_env.sh",
    "requirements.txt",
    "environment.yml",
    "pyproject.toml",
]
# The student's README is written for the bundle (no tests, no instructor files in it).
BUNDLE_README = "course/STUDENT_README.md"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
STUDENT_ID = re.compile(r"[^A-Za-z0-9_.-]+")


# ----------------------------------------------------------------------------------------------
# running nbgrader


def nbgrader(*args: str, root: Path = ROOT, check: bool = True, quiet: bool = False, **kw):
    """Run one nbgrader command from the course root, echoing it (so the real command stays visible)."""
    if not quiet:
        print("$ nbgrader " + " ".join(args), flush=True)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    out = subprocess.run([str(BIN / "nbgrader"), *args], cwd=root, env=env, capture_output=True,
                         text=True, **kw)  # fmt: skip
    if check and out.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out


def db_url(root: Path) -> str:
    return f"sqlite:///{root / 'gradebook.db'}"


# ----------------------------------------------------------------------------------------------
# release and bundle


def release(lessons: list[str], root: Path = ROOT) -> None:
    cmd = [sys.executable, str(ROOT / "course" / "build_lessons.py"), *lessons]
    print("$ python course/build_lessons.py " + " ".join(lessons), flush=True)
    subprocess.run(cmd, check=True, cwd=root)
    for lesson in lessons or sorted(p.name for p in (root / "source_notebooks").iterdir()):
        nbgrader("generate_assignment", lesson, "--force", root=root)


def bundle(out: Path, root: Path = ROOT) -> Path:
    """Copy the student bundle to ``out/rlvr-grpo-module9/`` and pack it as a .tar.gz next to it."""
    dest = out / "rlvr-grpo-module9"
    if dest.exists():
        shutil.rmtree(dest)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
    for rel in BUNDLE_FILES:
        src = root / rel
        if not src.exists():
            raise SystemExit(f"bundle: {rel} is missing")
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest / rel, ignore=skip)
        else:
            shutil.copy2(src, dest / rel)
    shutil.copy2(root / BUNDLE_README, dest / "README.md")
    tar = out / "rlvr-grpo-module9.tar.gz"
    with tarfile.open(tar, "w:gz") as tf:
        tf.add(dest, arcname=dest.name)
    print(f"student bundle: {dest} and {tar}")
    return tar


# ----------------------------------------------------------------------------------------------
# collect


def _find_notebook(folder: Path, lesson: str) -> Path | None:
    name = f"{lesson}.ipynb"
    for cand in (folder / "workspace" / lesson / name, folder / lesson / name, folder / name):
        if cand.is_file():
            return cand
    hits = sorted(p for p in folder.rglob(name) if ".ipynb_checkpoints" not in p.parts)
    return hits[0] if hits else None


def _stamp(path: Path, when: float) -> None:
    stamp = dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    (path / "timestamp.txt").write_text(stamp)


def collect(src: Path, lessons: list[str], root: Path = ROOT) -> dict[str, list[str]]:
    """Copy each student's lesson notebooks into submitted/<student>/<lesson>/.

    ``src`` holds one entry per student: a folder (a copy of their course folder, with
    workspace/<lesson>/<lesson>.ipynb, or any folder holding <lesson>.ipynb) or a zip of one. The
    student id is the entry's name (zip: without .zip), reduced to letters, digits, '_', '.', '-'.
    Returns {student: [lessons collected]}.
    """
    got: dict[str, list[str]] = {}
    for entry in sorted(src.iterdir()):
        student = STUDENT_ID.sub("_", entry.stem if entry.suffix == ".zip" else entry.name)
        with tempfile.TemporaryDirectory() as tmp:
            folder, when = entry, None
            if entry.suffix == ".zip":
                with zipfile.ZipFile(entry) as zf:
                    for m in zf.infolist():  # extract only notebooks, never outside tmp
                        if m.filename.endswith(".ipynb") and ".." not in Path(m.filename).parts:
                            zf.extract(m, tmp)
                folder, when = Path(tmp), entry.stat().st_mtime
            elif not entry.is_dir():
                continue
            for lesson in lessons:
                nb = _find_notebook(folder, lesson)
                if nb is None:
                    continue
                dest = root / "submitted" / student / lesson
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy(nb, dest / f"{lesson}.ipynb")
                _stamp(dest, when or nb.stat().st_mtime)
                got.setdefault(student, []).append(lesson)
    for student, ls in got.items():
        print(f"collected {student}: {', '.join(ls)}")
    return got


# ----------------------------------------------------------------------------------------------
# autograde: one student, or a class sharded over worker processes with private gradebooks


def _ensure_assignment(lesson: str, root: Path) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url(root)) as gb:
        try:
            gb.find_assignment(lesson)
            return
        except MissingEntry:
            pass
    nbgrader("generate_assignment", lesson, "--force", root=root)


def _reason(out: subprocess.CompletedProcess) -> str:
    text = out.stdout + out.stderr
    for pattern, reason in [
        (r"DeadKernelError|Kernel died", "the kernel died"),
        (r"CellTimeoutError|Timeout waiting", "a cell exceeded the time limit"),
        (r"NotJSONError|Notebook does not appear to be JSON|Unreadable Notebook", "unreadable notebook"),
        (r"KeyError", "nbgrader could not match the notebook's cells (cells deleted?)"),
    ]:  # fmt: skip
        if re.search(pattern, text):
            return reason
    lines = [ln for ln in text.splitlines() if "[AutogradeApp | ERROR]" in ln or "Error" in ln]
    return lines[-1].strip() if lines else f"nbgrader exited with status {out.returncode}"


def _grade_one(lesson: str, student: str, root: Path, url: str, extra: list[str]) -> dict:
    out = nbgrader("autograde", lesson, "--force", "--student", student,
                   f"--CourseDirectory.db_url={url}", *extra, root=root, check=False, quiet=True)  # fmt: skip
    done = (root / "autograded" / student / lesson).is_dir()
    rec = {"student": student, "ok": out.returncode == 0 and done}
    if not rec["ok"]:
        rec["reason"] = _reason(out)
    events = sorted(set(re.findall(r"GRADING-SAFETY: (.*)", out.stdout + out.stderr)))
    if events:
        rec["safety_events"] = events
    return rec


def _merge(lesson: str, student: str, src_url: str, dst_url: str) -> None:
    """Copy one student's autograded results for one lesson from a worker gradebook into the main one."""
    import warnings

    from nbgrader.api import Gradebook

    with Gradebook(src_url) as src, Gradebook(dst_url) as dst, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy autoflush notices from nbgrader's own API
        sub = src.find_submission(lesson, student)
        dst.update_or_create_student(student)
        new = dst.update_or_create_submission(lesson, student, timestamp=sub.timestamp)
        for snb in sub.notebooks:
            dnb = dst.find_submission_notebook(snb.name, lesson, student)
            dnb.flagged = snb.flagged
            dnb.late_submission_penalty = snb.late_submission_penalty
            for g in snb.grades:
                d = dst.find_grade(g.name, snb.name, lesson, student)
                d.auto_score, d.needs_manual_grade = g.auto_score, g.needs_manual_grade
            for c in snb.comments:
                dst.find_comment(c.name, snb.name, lesson, student).auto_comment = c.auto_comment
        del new
        dst.db.commit()


def autograde(
    lesson: str,
    students: list[str] | None = None,
    workers: int = 2,
    timeout: int | None = None,
    root: Path = ROOT,
) -> dict:
    """Autograde ``students`` (default: everyone in submitted/ with this lesson) and write a report.

    Returns {"lesson", "graded": [...], "failed": [{"student", "reason"}], "safety_events": {...}}.
    """
    _ensure_assignment(lesson, root)
    if students is None:
        students = sorted(
            p.parent.name for p in (root / "submitted").glob(f"*/{lesson}") if p.is_dir()
        )
    extra = [f"--Execute.timeout={timeout}"] if timeout else []
    workers = max(1, min(workers, len(students)))
    print(f"$ nbgrader autograde {lesson} --force --student <id>   # {len(students)} students, "
          f"{workers} worker(s), private gradebooks merged into gradebook.db", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="autograde-") as tmp:
        shards = [students[k::workers] for k in range(workers)]
        urls = []
        for k in range(workers):
            shutil.copy(root / "gradebook.db", Path(tmp) / f"worker{k}.db")
            urls.append(f"sqlite:///{Path(tmp) / f'worker{k}.db'}")

        def run_shard(k: int) -> list[dict]:
            return [_grade_one(lesson, s, root, urls[k], extra) for s in shards[k]]

        with ThreadPoolExecutor(workers) as pool:
            results = [r for shard in pool.map(run_shard, range(workers)) for r in shard]
        owner = {s: urls[k] for k in range(workers) for s in shards[k]}
        for rec in results:  # sequential: one writer on gradebook.db
            if rec["ok"]:
                _merge(lesson, rec["student"], owner[rec["student"]], db_url(root))
    report = {
        "lesson": lesson,
        "graded": [r["student"] for r in results if r["ok"]],
        "failed": [
            {"student": r["student"], "reason": r["reason"]} for r in results if not r["ok"]
        ],
        "safety_events": {
            r["student"]: r["safety_events"] for r in results if r.get("safety_events")
        },
    }
    (root / "autograded").mkdir(exist_ok=True)
    (root / "autograded" / f"report-{lesson}.json").write_text(json.dumps(report, indent=2))
    print(f"graded {len(report['graded'])}, failed {len(report['failed'])}: "
          f"{root / 'autograded' / f'report-{lesson}.json'}")  # fmt: skip
    for f in report["failed"]:
        print(f"  FAILED {f['student']}: {f['reason']}")
    for s, ev in report["safety_events"].items():
        print(f"  grading-safety events for {s}: {'; '.join(ev)}")
    return report


# ----------------------------------------------------------------------------------------------
# grading safety: loaded by course/nbgrader_config.py into every nbgrader run


GUARD_SETUP = r"""
def _nbg_make_guard():
    import builtins, importlib, sys, types
    names = ["builtins", "math", "cmath", "operator", "numpy", "numpy.testing",
             "numpy.testing._private.utils", "numpy.linalg"] + EXTRA
    mods = {}
    for n in names:
        try:
            mods[n] = importlib.import_module(n)
        except Exception:
            pass
    snap = {n: dict(vars(m)) for n, m in mods.items()}
    funcs = [(f"{n}.{k}", v, v.__code__, v.__defaults__, v.__kwdefaults__)
             for n, d in snap.items() for k, v in d.items() if isinstance(v, types.FunctionType)]
    aliases = {"np": "numpy", "numpy": "numpy", "math": "math", "torch": "torch"}
    skip = {"_", "__", "___", "input", "raw_input"}
    def check(ns, fix):
        changed = []
        for n, m in mods.items():
            if sys.modules.get(n) is not m:
                changed.append(f"sys.modules[{n!r}]")
                if fix:
                    sys.modules[n] = m
            d = vars(m)
            for k, v in snap[n].items():
                if k not in skip and d.get(k, check) is not v:
                    changed.append(f"{n}.{k}")
                    if fix:
                        d[k] = v
        for name, f, code, defaults, kwdefaults in funcs:
            if f.__code__ is not code or f.__defaults__ is not defaults or f.__kwdefaults__ is not kwdefaults:
                changed.append(f"{name}.__code__")
                if fix:
                    f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
        for a, n in aliases.items():
            if n in mods and a in ns and ns[a] is not mods[n]:
                changed.append(f"the name {a!r}")
                if fix:
                    ns[a] = mods[n]
        return changed
    return check
import sys as _nbg_sys
_nbg_sys._nbgrader_guard = _nbg_make_guard()
del _nbg_make_guard, _nbg_sys
"""
GUARD_RESTORE = "import sys as _nbg_s\nprint('GUARD:' + repr(_nbg_s._nbgrader_guard(globals(), True)))\ndel _nbg_s"
GUARD_VERIFY = "import sys as _nbg_s\nprint('GUARD:' + repr(_nbg_s._nbgrader_guard(globals(), False)))\ndel _nbg_s"


def _make_safety_classes():
    """Build the nbgrader preprocessors lazily (nbgrader is imported only inside nbgrader runs)."""
    import ast

    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat import NotebookNode
    from nbformat.v4 import new_code_cell, new_output
    from nbgrader.preprocessors import Execute, NbGraderPreprocessor
    from nbgrader.utils import is_grade
    from traitlets import Integer

    class GuardedExecute(Execute):
        """nbgrader's Execute, hardened for a class run.

        - Before the first cell, a snapshot of numpy, numpy.testing, math, builtins (and torch when the
          notebook imports it) is taken in the kernel. Before every graded test cell those modules
          (and the names np, math, torch) are restored; after it, they are checked again: if they
          changed while the cell ran (the student's function patched them), the cell fails.
        - A cell that kills the kernel (os._exit, SIGKILL, a segfault) or runs past the time limit is
          given an error output, a fresh kernel is started, the cells before it are run again, and
          grading continues after it, so the student keeps the points the rest of the notebook earns.
          After ``max_restarts`` restarts the remaining cells are not run (an error in each).
        Events are logged as ``GRADING-SAFETY: ...`` (course/instructor.py puts them in its report).
        """

        max_restarts = Integer(3, help="kernel restarts allowed per notebook").tag(config=True)

        def _hidden(self, code: str, index: int) -> list[str]:
            cell, slot = new_code_cell(code), self.nb.cells[index]
            self.execute_cell(cell, index, store_history=False)
            self.nb.cells[index] = slot  # nbclient stores the executed cell at its index
            out = []
            for o in cell.outputs:
                if o.output_type == "stream" and o.name == "stdout":
                    out += re.findall(r"GUARD:(.*)", o.text)
                if o.output_type == "error":
                    out.append("ERROR")
            return out

        def _guard_changes(self, code: str, index: int) -> list[str] | None:
            found = self._hidden(code, index)
            if not found or found[0] == "ERROR":
                return None  # the guard itself is gone: fail closed
            return ast.literal_eval(found[0])

        def preprocess(self, nb, resources=None, km=None):
            from nbclient import NotebookClient

            NotebookClient.__init__(self, nb, km)
            self.reset_execution_trackers()
            self._check_assign_resources(resources)
            source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
            extra = (
                ["torch", "torch.testing"]
                if re.search(r"^\s*(import|from) torch", source, re.M)
                else []
            )
            setup = GUARD_SETUP.replace("EXTRA", repr(extra))
            skipped: set[int] = set()
            restarts = 0
            while True:
                current = None
                try:
                    with self.setup_kernel():
                        info = self.wait_for_reply(self.kc.kernel_info())
                        self.nb.metadata["language_info"] = info["content"]["language_info"]
                        self._hidden(setup, 0)
                        for index, cell in enumerate(self.nb.cells):
                            if index in skipped:
                                continue
                            current = index
                            self._run_cell(cell, resources, index)
                    break
                except (DeadKernelError, CellTimeoutError) as err:
                    if current is None:
                        raise
                    what = (
                        "exceeded the time limit"
                        if isinstance(err, CellTimeoutError)
                        else "killed the kernel"
                    )
                    self.log.warning(
                        "GRADING-SAFETY: cell %d %s; restarting the kernel", current, what
                    )
                    self._fail(self.nb.cells[current], "KernelRestarted",
                               f"this cell {what}; it was skipped and the notebook re-run without it")  # fmt: skip
                    skipped.add(current)
                    restarts += 1
                    if restarts > self.max_restarts:
                        for cell in self.nb.cells[current + 1 :]:
                            if cell.cell_type == "code":
                                self._fail(cell, "NotRun", "too many kernel restarts; not run")
                        break
                    self.km = self.kc = None
            self.set_widgets_metadata()
            return self.nb, self.resources

        def _fail(self, cell, ename: str, evalue: str) -> None:
            cell.outputs = [
                new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])
            ]

        def _run_cell(self, cell, resources, index) -> None:
            graded = cell.cell_type == "code" and is_grade(cell)
            if graded:
                changed = self._guard_changes(GUARD_RESTORE, index)
                if changed:
                    self.log.warning("GRADING-SAFETY: restored before %s: %s",
                                     cell.metadata.nbgrader.get("grade_id"), ", ".join(changed))  # fmt: skip
            self.preprocess_cell(cell, resources, index)
            if graded:
                changed = self._guard_changes(GUARD_VERIFY, index)
                if changed is None or changed:
                    what = (
                        "the grading guard was removed" if changed is None else ", ".join(changed)
                    )
                    self.log.warning("GRADING-SAFETY: %s modified during %s: cell failed",
                                     what, cell.metadata.nbgrader.get("grade_id"))  # fmt: skip
                    cell.outputs.append(new_output("error", ename="GradingEnvironmentModified",
                        evalue=f"modified while the tests ran: {what}", traceback=[]))  # fmt: skip

    class RedactHiddenTests(NbGraderPreprocessor):
        """For feedback: drop hidden tests from test cells, and turn a failure raised inside the hidden
        part into a message that holds neither its code nor its values."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code" or not is_grade(cell) or HIDDEN_BEGIN not in cell.source:
                return cell, resources
            lines = cell.source.splitlines()
            start = next(i for i, ln in enumerate(lines) if HIDDEN_BEGIN in ln)
            end = next((i for i, ln in enumerate(lines) if HIDDEN_END in ln), len(lines) - 1)
            visible = lines[:start] + ["# (hidden tests: not shown)"] + lines[end + 1 :]
            cell.source = "\n".join(visible)
            outputs = []
            for o in cell.get("outputs", []):
                if o.output_type == "error":
                    tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(o.get("traceback", [])))
                    m = re.search(r"Cell In\[\d+\], line (\d+)", tb)
                    in_hidden = m is None or int(m.group(1)) - 1 > start
                    if in_hidden and o.ename not in (
                        "KernelRestarted",
                        "NotRun",
                        "GradingEnvironmentModified",
                    ):
                        evalue = ("a hidden test failed. Hidden tests check the cases the docstring "
                                  "names: edge cases, conventions, input validation, types.")  # fmt: skip
                    else:
                        evalue = str(o.get("evalue", ""))
                    outputs.append(NotebookNode(output_type="error", ename=o.ename, evalue=evalue,
                                                traceback=[f"{o.ename}: {evalue}"]))  # fmt: skip
                elif o.output_type == "stream" and o.name == "stdout":
                    continue  # hidden tests may print; visible ones need not
                else:
                    outputs.append(o)
            cell.outputs = outputs
            return cell, resources

    return GuardedExecute, RedactHiddenTests


# ----------------------------------------------------------------------------------------------
# command line


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("release", help="build source notebooks and generate the releases")
    p.add_argument("lessons", nargs="*")
    p = sub.add_parser("bundle", help="make the student bundle")
    p.add_argument("--out", type=Path, default=ROOT / "dist")
    p = sub.add_parser("collect", help="copy students' notebooks into submitted/")
    p.add_argument("src", type=Path)
    p.add_argument("lessons", nargs="+")
    p = sub.add_parser("autograde", help="autograde one student or the whole class")
    p.add_argument("lesson")
    p.add_argument("--student", action="append")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=int, default=None, help="per-cell limit (s), default: config")
    p = sub.add_parser("feedback", help="generate feedback HTML (hidden tests redacted)")
    p.add_argument("lesson")
    p = sub.add_parser("export", help="export grades to CSV")
    p.add_argument("--to", default="grades.csv")
    a = ap.parse_args(argv)
    if a.cmd == "release":
        release(a.lessons)
    elif a.cmd == "bundle":
        bundle(a.out)
    elif a.cmd == "collect":
        collect(a.src, a.lessons)
    elif a.cmd == "autograde":
        report = autograde(a.lesson, a.student, a.workers, a.timeout)
        sys.exit(1 if report["failed"] else 0)
    elif a.cmd == "feedback":
        nbgrader("generate_feedback", a.lesson, "--force")
    elif a.cmd == "export":
        nbgrader("export", f"--CsvExportPlugin.filename={a.to}")
        print(f"grades: {a.to}")


if __name__ == "__main__":
    main()
