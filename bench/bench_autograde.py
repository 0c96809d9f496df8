"""Autograder throughput: ``nbgrader autograde`` of one student's lessons, per lesson.

The student submits the reference solutions (the source notebooks), so every cell runs as for a
complete submission. Each lesson is graded by its own ``nbgrader autograde LESSON --student s``
process in a throwaway course (course/nbgrader_config.py, GuardedExecute included), as
``course/instructor.py autograde`` runs it; wall-clock and CPU seconds (of nbgrader and its kernel,
children included) are reported per lesson, with the machine load. Target: at most 30 s a lesson on
2 cores. Writes the ``autograde`` section of BENCHMARKS.md.

    python -m bench.bench_autograde [--reps 1] [--no-write] [LESSON ...]
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


def _nbgrader(root: Path, *args: str) -> tuple[float, float, int]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        [str(BIN / "nbgrader"), *args], cwd=root, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(
            f"nbgrader {' '.join(args)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
        )
    return wall, cpu, out.returncode


def run(lessons: list[str] | None = None, reps: int = 1) -> str:
    lessons = lessons or sorted(p.name for p in (ROOT / "source_notebooks").iterdir() if p.is_dir())
    rows, walls = [], []
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        course = Path(tmp)
        (course / "course").mkdir()
        shutil.copy(
            ROOT / "course" / "nbgrader_config.py", course / "course" / "nbgrader_config.py"
        )
        shutil.copy(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
        for lesson in lessons:
            shutil.copytree(
                ROOT / "source_notebooks" / lesson, course / "source_notebooks" / lesson
            )
            _nbgrader(course, "generate_assignment", lesson, "--force")
            sub = course / "submitted" / "student" / lesson
            sub.mkdir(parents=True)
            shutil.copy(
                ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb", sub / f"{lesson}.ipynb"
            )
            (sub / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")
            w, c = [], []
            for _ in range(reps):
                wall, cpu, _ = _nbgrader(
                    course, "autograde", lesson, "--force", "--student", "student"
                )
                w.append(wall)
                c.append(cpu)
            wall, cpu = statistics.median(w), statistics.median(c)
            walls.append(wall)
            log(f"bench_autograde: {lesson}: wall {wall:.1f} s, CPU {cpu:.1f} s")
            rows.append([lesson, f"{wall:.1f}", f"{cpu:.1f}", "yes" if wall <= TARGET_S else "NO"])
    load = os.getloadavg()[0]
    rows.append(["all (one after another)", f"{sum(walls):.1f}", "", ""])
    header = (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (load avg "
        f"{load:.1f} at the end), Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}. Run by `python -m bench.bench_autograde` "
        f"(median of {reps} run(s) per lesson).\n\n"
        "One student submits the reference solution of each lesson; each lesson is graded by one "
        "`nbgrader autograde LESSON --student student` process (course settings, GuardedExecute), as "
        "`course/instructor.py autograde` runs it. Wall clock includes nbgrader's start-up, the "
        "sanitising pass, the kernel start and the grading-mode run of every cell; CPU is the CPU "
        "seconds of nbgrader and its kernel. A class run grades two students at a time on 2 cores.\n\n"
    )
    return (
        "## Autograder throughput\n\n"
        + header
        + table(["lesson", "wall s", "CPU s", f"<= {TARGET_S:.0f} s"], rows)
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_autograde")
    p.add_argument("lessons", nargs="*")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args(argv)
    body = run(a.lessons or None, a.reps)
    print(body)
    if not a.no_write:
        write_section("autograde", body)


if __name__ == "__main__":
    main()
