"""The instructor's cycle, one command per step, on top of nbgrader (see course/docs/INSTRUCTOR.md).

    course-admin release [LESSON ...]         build_lessons.py + nbgrader generate_assignment
    course-admin bundle [--out DIR]           the student bundle (folder + .tar.gz)
    course-admin collect SRC LESSON ... [--replace]
                                              workspaces or zips -> submitted/<student>/<lesson>/
    course-admin autograde LESSON [--student S] [--workers 2] [--timeout SECONDS]
                       [--notebook-timeout SECONDS] [--trusted-students] [--no-preflight]
    course-admin feedback LESSON              nbgrader generate_feedback (hidden tests redacted)
    course-admin export [--to grades.csv]     nbgrader export
    course-admin hub-collect LESSON           JupyterHub: exchange -> submitted/ (forgeries refused)
    course-admin solutions LESSON [--release] [--before-deadline]
                                              worked solutions after the due date

Each step prints the nbgrader command it runs. This file is the command line only; the grading
machinery is the package course/grading/:
- ``runner``: a class run on several cores, one nbgrader process and one private gradebook per
  student, merged into gradebook.db one student at a time; a student whose grading fails (or who
  scores 0) is recorded with a reason in autograded/report-<lesson>.json;
- ``sandbox``: every student's kernel runs in bubblewrap (no network, no view of the course, the
  gradebook or other students, memory/process/file limits); autograde refuses to run without it
  unless ``--trusted-students`` (UNSAFE, printed in the report);
- ``safety``: ``GuardedExecute`` (the verdict taken from the trusted tests), loaded by
  course/nbgrader_config.py;
- ``collect``: refuses symlinks, devices, escaping names, oversized notebooks, zip bombs, an id
  claimed twice and a silent replacement; the submission time is the collect run's.

``course-admin`` is on the PATH of the course's environment (``.venv/bin``); it runs these commands
for the course it was installed from and refuses inside another course folder (see ``admin``).
``python -m course.instructor ...`` from a course folder runs that folder's own code. Standard
library + nbgrader only.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from course.build_lessons import HIDDEN_BEGIN, HIDDEN_END
from course.grading.collect import collect, collect_report
from course.grading.common import BIN, db_url, nbgrader
from course.grading.runner import autograde
from course.grading.sandbox import unavailable_reason

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["BIN", "BUNDLE_FILES", "HIDDEN_BEGIN", "HIDDEN_END", "autograde",
           "bundle", "collect", "collect_report", "db_url", "nbgrader", "release",
           "unavailable_reason"]  # fmt: skip

# What a student receives. Never: source_notebooks/, course/, tests/, bench/, gradebook, submissions.
BUNDLE_FILES = [
    "release",
    "helpers",
    "notebook.sh",
    "baselm.sh",
    "scripts/ensure_env.sh",
    "scripts/torch_index.sh",
    "scripts/venv_follow_lock.py",
    "requirements.lock",
    "environment.yml",
    "pyproject.toml",
]
# The student's README is written for the bundle (no tests, no instructor files in it).
BUNDLE_README = "course/docs/STUDENT_README.md"
# the claims registry: lessons cite its ids [9.X-n]
BUNDLE_SOURCES = "course/docs/Module_9_Sources.md"


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
    # the student's pyproject declares only the student's command: course-admin's package (course/)
    # is not in the bundle
    pyproject = (dest / "pyproject.toml").read_text()
    admin = [ln for ln in pyproject.splitlines(keepends=True) if ln.startswith("course-admin =")]
    if len(admin) != 1:
        raise SystemExit("bundle: pyproject.toml must declare course-admin on one line")
    (dest / "pyproject.toml").write_text(pyproject.replace(admin[0], ""))
    shutil.copy2(root / BUNDLE_README, dest / "README.md")
    shutil.copy2(root / BUNDLE_SOURCES, dest / "Module_9_Sources.md")  # the ids the lessons cite
    tar = out / "rlvr-grpo-module9.tar.gz"
    with tarfile.open(tar, "w:gz") as tf:
        tf.add(dest, arcname=dest.name)
    print(f"student bundle: {dest} and {tar}")
    return tar


# ----------------------------------------------------------------------------------------------
# command line


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m course.instructor",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("release", help="build source notebooks and generate the releases")
    p.add_argument("lessons", nargs="*")
    p = sub.add_parser("bundle", help="make the student bundle")
    p.add_argument("--out", type=Path, default=ROOT / "dist")
    p = sub.add_parser("collect", help="copy students' notebooks into submitted/")
    p.add_argument("src", type=Path)
    p.add_argument("lessons", nargs="+")
    p.add_argument("--replace", action="store_true",
                   help="replace submissions that came from another source")  # fmt: skip
    p = sub.add_parser("autograde", help="autograde one student or the whole class")
    p.add_argument("lesson")
    p.add_argument("--student", action="append")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=int, default=None, help="per-cell limit (s), default: config")
    p.add_argument("--notebook-timeout", type=int, default=None, help="per-notebook limit (s)")
    p.add_argument("--trusted-students", action="store_true",
                   help="grade WITHOUT the sandbox: UNSAFE, only for code you trust")  # fmt: skip
    p.add_argument("--no-preflight", action="store_true",
                   help="skip grading the solution and the empty release first")  # fmt: skip
    p = sub.add_parser("feedback", help="generate feedback HTML (hidden tests redacted)")
    p.add_argument("lesson")
    p = sub.add_parser("export", help="export grades to CSV")
    p.add_argument("--to", default="grades.csv")
    p = sub.add_parser("hub-collect", help="collect from nbgrader's exchange (course/hub.py)")
    p.add_argument("lesson")
    p = sub.add_parser("solutions", help="worked solutions (course/grading/solutions.py)")
    p.add_argument("lesson")
    p.add_argument("--release", action="store_true", help="release them to the exchange")
    p.add_argument("--before-deadline", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "release":
        release(a.lessons)
    elif a.cmd == "bundle":
        bundle(a.out)
    elif a.cmd == "collect":
        collect(a.src, a.lessons, replace=a.replace)
    elif a.cmd == "autograde":
        report = autograde(a.lesson, a.student, a.workers, a.timeout, trusted=a.trusted_students,
                           notebook_timeout=a.notebook_timeout, check=not a.no_preflight)  # fmt: skip
        sys.exit(1 if report["failed"] else 0)
    elif a.cmd == "feedback":
        nbgrader("generate_feedback", a.lesson, "--force")
    elif a.cmd == "export":
        nbgrader("export", f"--CsvExportPlugin.filename={a.to}")
        print(f"grades: {a.to}")
    elif a.cmd == "hub-collect":
        from course import hub

        hub.collect(a.lesson, ROOT, *hub.exchange_settings(ROOT))
    elif a.cmd == "solutions":
        from course.grading.solutions import solutions

        solutions(a.lesson, ROOT, release=a.release, before_deadline=a.before_deadline)


def course_root(start: Path) -> Path | None:
    """The course folder ``start`` lies in (the first of it and its parents holding
    course/lessons/ and course/instructor.py), or None."""
    for folder in [start, *start.parents]:
        if (folder / "course" / "lessons").is_dir() and (
            folder / "course" / "instructor.py"
        ).is_file():
            return folder
    return None


def admin(argv: list[str] | None = None) -> None:
    """``course-admin``: these commands, for the course this code belongs to. An instructor standing
    in another course folder (last term's clone, or a folder a student handed in that calls itself
    a course) is told so and how to run that one's own code on purpose; it is never run for them:
    code found by walking up from the current folder is nobody's choice."""
    argv = list(sys.argv[1:] if argv is None else argv)
    own = course_root(ROOT)
    here = course_root(Path.cwd().resolve())
    if own is None:  # installed without its course folder (a copy in site-packages)
        print("error: this course-admin was installed without its course folder", file=sys.stderr)
        print("  fix: install the course in development mode (pip install -e <course folder>), or "
              "run python -m course.instructor from the course folder", file=sys.stderr)  # fmt: skip
        sys.exit(2)
    if here is not None and here != own:
        print(f"error: this course-admin belongs to the course in {own}, and you stand in "
              f"another course folder, {here}", file=sys.stderr)  # fmt: skip
        print(f"  fix: run that course's own code, if you trust it: cd {here} && python -m "
              f"course.instructor {' '.join(argv)}; or cd out of it", file=sys.stderr)  # fmt: skip
        sys.exit(2)
    main(argv)


if __name__ == "__main__":
    if __spec__ is None:  # run by path: the `course` imported above may be another checkout's
        args = " ".join(sys.argv[1:])
        sys.exit(f"run it as a module from the course root: python -m course.instructor {args}")
    main()
