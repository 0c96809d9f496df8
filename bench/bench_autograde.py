"""Autograder throughput, with and without the grading sandbox, and a class run.

1. Per lesson: one student submits the reference solutions (the source notebooks), so every cell
   runs as for a complete submission. Each lesson is graded by its own ``nbgrader autograde LESSON
   --student s`` process in a throwaway course (course/nbgrader_config.py, GuardedExecute), as
   ``course-admin autograde`` runs it, once with the bubblewrap sandbox
   (``--GuardedExecute.sandbox=bwrap``) and once without (``=none``), alternating, in the same
   process; wall-clock and CPU seconds (nbgrader and its kernel, children included) per lesson.
   Targets: at most 30 s a lesson on 2 cores; the sandbox costs at most 10 % more wall time.
2. A class run: ``--class-size`` students (default 20, reference submissions of ``--class-lesson``)
   graded by ``course.grading.runner.autograde`` on 2 workers, sandboxed.
Writes the ``autograde`` section of BENCHMARKS.md.

    python -m bench.bench_autograde [--reps 1] [--class-size 20] [--class-lesson 9.1] [--no-write] [LESSON ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import log, table, write_section

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGET_S = 30.0
TARGET_OVERHEAD = 0.10


def _nbgrader(root: Path, *args: str, code: Path = ROOT) -> tuple[float, float]:
    """Run nbgrader in the course ``root`` with the grading code of the checkout ``code`` (this
    checkout: the command the course runs, course/grading/nbgrader_cli.py; another: ``nbgrader``)."""
    from course.grading.common import NBGRADER

    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(code))
    cmd = NBGRADER if code == ROOT else [str(BIN / "nbgrader")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([*cmd, *args], cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(
            f"nbgrader {' '.join(args)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
        )
    return wall, cpu


def _course(tmp: Path, lessons: list[str], code: Path = ROOT) -> Path:
    """A throwaway course with the settings and source notebooks of the checkout ``code``."""
    course = tmp / "course"
    (course / "course").mkdir(parents=True)
    shutil.copy(code / "course" / "nbgrader_config.py", course / "course" / "nbgrader_config.py")
    shutil.copy(code / "nbgrader_config.py", course / "nbgrader_config.py")
    for lesson in lessons:
        shutil.copytree(code / "source_notebooks" / lesson, course / "source_notebooks" / lesson)
        _nbgrader(course, "generate_assignment", lesson, "--force", code=code)
    return course


def _submit(course: Path, lesson: str, student: str) -> None:
    sub = course / "submitted" / student / lesson
    sub.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb", sub / f"{lesson}.ipynb")
    (sub / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")


def run(lessons=None, reps: int = 1, class_size: int = 20, class_lesson: str = "9.1") -> str:
    from course.grading import runner, sandbox

    why = sandbox.unavailable_reason()
    if why:
        raise SystemExit(f"bench_autograde needs the sandbox: {why}")
    lessons = lessons or sorted(p.name for p in (ROOT / "source_notebooks").iterdir() if p.is_dir())
    rows, tot = [], {"bwrap": 0.0, "none": 0.0}
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        course = _course(Path(tmp), lessons)
        for lesson in lessons:
            _submit(course, lesson, "student")
            w: dict[str, list[float]] = {"bwrap": [], "none": []}
            c: dict[str, list[float]] = {"bwrap": [], "none": []}
            for k in range(reps):
                for mode in ("none", "bwrap") if k % 2 == 0 else ("bwrap", "none"):
                    wall, cpu = _nbgrader(course, "autograde", lesson, "--force", "--student",
                                          "student", f"--GuardedExecute.sandbox={mode}")  # fmt: skip
                    w[mode].append(wall)
                    c[mode].append(cpu)
            med = {m: statistics.median(v) for m, v in w.items()}
            cpu = {m: statistics.median(v) for m, v in c.items()}
            for m in med:
                tot[m] += med[m]
            over = med["bwrap"] / med["none"] - 1.0
            log(f"bench_autograde: {lesson}: sandboxed {med['bwrap']:.1f} s, "
                f"unsandboxed {med['none']:.1f} s ({over:+.0%})")  # fmt: skip
            rows.append([lesson, f"{med['bwrap']:.1f}", f"{med['none']:.1f}", f"{over:+.0%}",
                         f"{cpu['none']:.1f}", "yes" if med["bwrap"] <= TARGET_S else "NO"])  # fmt: skip
        over = tot["bwrap"] / tot["none"] - 1.0
        rows.append(["all (one after another)", f"{tot['bwrap']:.1f}", f"{tot['none']:.1f}",
                     f"{over:+.0%}", "", ""])  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        course = _course(Path(tmp), [class_lesson])
        for k in range(class_size):
            _submit(course, class_lesson, f"s{k:02d}")
        t0 = time.perf_counter()
        report = runner.autograde(class_lesson, workers=2, root=course)
        class_wall = time.perf_counter() - t0
        ok = sum(1 for r in report["students"].values()
                 if r.get("ok") and r.get("max_score") and r["score"] == r["max_score"])  # fmt: skip
    log(f"bench_autograde: class of {class_size} ({class_lesson}, 2 workers): {class_wall:.1f} s")
    load = os.getloadavg()[0]
    header = (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (load avg "
        f"{load:.1f} at the end), Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}. Run by `python -m bench.bench_autograde` "
        f"(median of {reps} run(s) per lesson and mode, the two modes alternating).\n\n"
        "One student submits the reference solution of each lesson; each lesson is graded by one "
        "`nbgrader autograde LESSON --student student` process (course settings, GuardedExecute), as "
        "`course-admin autograde` runs it, with the kernel in the bubblewrap sandbox "
        "(`--GuardedExecute.sandbox=bwrap`, the default) and without it (`=none`, what "
        "`--trusted-students` does). Wall clock includes nbgrader's start-up, the sanitising pass, "
        "the kernel start (in the sandbox: bubblewrap's namespaces and mounts, the seeded work "
        "directory), the grading-mode run of every cell, and the trusted verdict (the test cells "
        "run in a process of the grader that calls the kernel's functions through the plain-data "
        "channel, course/grading/verdict.py); CPU is the CPU seconds of nbgrader, its verdict "
        "process and its kernel (unsandboxed only: a sandboxed kernel is reaped inside its pid "
        "namespace, so its CPU time never reaches the grader's rusage). The sandbox cost is the ratio of the medians (negative: the sandboxed "
        "run was faster); on a busy machine, see the load average in the first line, a few percent "
        "either way is run-to-run noise. Where the sandboxed run is faster, the cause is not "
        "isolated (candidates: Jupyter's ipc transport instead of TCP over loopback, an empty "
        "HOME with no IPython profile or caches to read). Goal: the "
        f"sandbox costs at most {TARGET_OVERHEAD:.0%} more wall time.\n\n"
    )
    body = table(["lesson", "sandboxed wall s", "unsandboxed wall s", "sandbox cost",
                  "unsandboxed CPU s", f"sandboxed <= {TARGET_S:.0f} s"], rows)  # fmt: skip
    klass = (
        f"\n\n**Class run.** {class_size} students (the reference solution of {class_lesson}), "
        f"`course-admin autograde {class_lesson} --workers 2` (one nbgrader process and one "
        f"private gradebook per student, sandboxed, merged): {class_wall:.1f} s wall, "
        f"{class_wall / class_size:.1f} s per student; {ok}/{class_size} with full marks, "
        f"{len(report['failed'])} failed.\n"
    )
    return "## Autograder throughput\n\n" + header + body + klass


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_autograde")
    p.add_argument("lessons", nargs="*")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--class-size", type=int, default=20)
    p.add_argument("--class-lesson", default="9.1")
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args(argv)
    body = run(a.lessons or None, a.reps, a.class_size, a.class_lesson)
    print(body)
    if not a.no_write:
        write_section("autograde", body)


if __name__ == "__main__":
    main()
