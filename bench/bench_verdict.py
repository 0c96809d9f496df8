"""The trusted verdict's cost: grading with today's code against grading with an earlier commit's
(the in-kernel verdict), side by side in one run.

1. Per lesson: one student submits the reference solution; ``nbgrader autograde LESSON --student
   student`` grades it in the bubblewrap sandbox, once with the code of ``--base`` (a git worktree
   of that commit, same venv, same helpers), once with this checkout's grading code started as
   ``nbgrader`` ("plain", as the base is started) and once as the course starts it ("today"),
   rotating, ``--reps`` times. Goal: plain at most 1.2x the base per lesson. Each
   repetition's three gradings run back to back, so a repetition's plain/base ratio is a paired
   ratio: the record keeps every one, and the section gives their median and range.
   Plain and today leave out each lesson's demo cells that no graded code needs
   (course/grading/demos.py); the base ran every cell. The record keeps how many code cells each
   contender's grading left out (``left_out``: the cells whose only output is the note).
2. Where a lesson's tests differ from the base's (9.4 gained the diagnosis clinic): both
   notebooks run cell by cell in one plain kernel, and the test cells the base lacks are run there
   in full, visible and hidden tests together, as the base would have run them. ``like for
   like`` estimates the base grading today's notebook (the base plus that extra work and today's
   extra demo time, which the base would run; for a class run, that work x the class size spread
   evenly over 2 workers, kernel seconds taken as CPU seconds) and compares plain and today with
   it; the measured ratios are given too.
   Per lesson also: the CPU time of the verdict process's start-up alone (a fresh process that
   makes its imports, reads the tests and exits, ``--reps`` times), set against what plain adds.
3. Classes: for each LESSON[:SIZE] of ``--class-lesson`` (default 9.1, 9.4 and 9.5), SIZE (default
   ``--class-size``) reference submissions graded by ``course.grading.runner.autograde`` on 2
   workers, base and today alternating ``--class-reps`` times, wall and CPU time (today's
   includes the preflight's canary gradings, which the base does not run, and forks every verdict
   from one warm process per class, course/grading/zygote.py). Goal: not slower.
4. The estimate for 300 students x 5 lessons on 2 cores, from the CPU seconds (both cores busy all
   the time: the throughput bound) and from the wall seconds scaled by the class run's measured use
   of the 2 workers.

The measurements go to ``bench/records/verdict.json`` (machine, load, both commits, every
repetition); the ``verdict`` section of BENCHMARKS.md is rendered from that record by ``render``,
and tests/test_bench_verdict.py checks that the two agree.

    python -m bench.bench_verdict [--base ca232ae] [--reps 5] [--class-size 20]
        [--class-lesson 9.1,9.4,9.5:12] [--no-write]
"""

from __future__ import annotations

import argparse
import json
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

from bench import bench_autograde
from bench.common import log, table, write_section

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RECORD = ROOT / "bench" / "records" / "verdict.json"
GOAL = 1.2
WHO = ("base", "plain", "today")
# The class runs: 9.1 (the lightest lesson: today's verdict has the least to amortise), 9.4 (the
# most test cells, twice the base's) and 9.5 (the heaviest: torch and transformers in every verdict
# process unless a warm one is forked).
CLASSES = "9.1,9.4,9.5:12"


def _env(code: Path) -> dict:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(code))


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def _check_imports(code: Path) -> None:
    """The grading code a contender runs is its own checkout's: with ``_env(code)`` the package
    ``course.grading`` must come from ``code`` (the venv's editable install points at this
    checkout, so a base run could otherwise silently grade with today's code)."""
    out = subprocess.run(
        [sys.executable, "-c", "import course.grading as g; print(g.__file__)"],
        cwd=tempfile.gettempdir(), env=_env(code), capture_output=True, text=True,
    )  # fmt: skip
    where = Path(out.stdout.strip() or "?").resolve()
    if out.returncode != 0 or not where.is_relative_to(code.resolve()):
        raise SystemExit(f"bench_verdict: with {code} the grading code comes from {where}")


def _submit(course: Path, code: Path, lesson: str, student: str) -> None:
    sub = course / "submitted" / student / lesson
    sub.mkdir(parents=True, exist_ok=True)
    shutil.copy(code / "source_notebooks" / lesson / f"{lesson}.ipynb", sub / f"{lesson}.ipynb")
    (sub / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")


def _cpu() -> float:
    """Busy CPU seconds of the whole machine so far (/proc/stat: every state but idle and iowait).
    The sandboxed kernel is not a waited-for descendant of this process, so its own accounting
    (RUSAGE_CHILDREN) would miss it; the machine's count includes it, and anything else running."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    busy = sum(fields[:8]) - fields[3] - fields[4]  # user..steal, less idle and iowait
    return busy / os.sysconf("SC_CLK_TCK")


def _full_marks(course: Path, lesson: str) -> tuple[float, float]:
    """(score, max) of the autograded test cells of the one student's submission."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission(lesson, "student")
        # the autograded cells only (written answers wait for manual grading)
        auto = [g for nb in sub.notebooks for g in nb.grades if g.auto_score is not None]
        return sum(g.auto_score for g in auto), sum(g.max_score for g in auto)


def left_out(course: Path, lesson: str, student: str = "student") -> tuple[int, int, int]:
    """(code cells the grading left out, code cells, of which not graded) of an autograded
    notebook: a cell left out (course/grading/demos.py) carries its note as its only output."""
    from course.grading.demos import NOTE, graded

    nb = json.loads((course / "autograded" / student / lesson / f"{lesson}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    notes = sum(
        [o.get("output_type") for o in c.get("outputs", [])] == ["stream"]
        and "".join(c["outputs"][0].get("text", "")) == NOTE
        for c in code
    )
    ungraded = sum(not graded(c) for c in code)
    return notes, len(code), ungraded


def _grade(course: Path, code: Path, lesson: str, cmd: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one ``nbgrader autograde`` started by ``cmd`` (CPU: nbgrader, the
    sandboxed kernel and the verdict process together)."""
    c0, t0 = _cpu(), time.perf_counter()
    out = subprocess.run([*cmd, "autograde", lesson, "--force", "--student", "student"],
                         cwd=course, env=_env(code), capture_output=True, text=True)  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"autograde {lesson} with {code} failed:\n{out.stdout[-1500:]}")
    wall, used = time.perf_counter() - t0, _cpu() - c0
    score, top = _full_marks(course, lesson)
    if not top or score != top:  # a grading that failed the reference is not a timing of grading
        raise SystemExit(f"autograde {lesson} with {code} gave the reference {score}/{top}")
    return wall, used


def over_goal(ratio: float, goal: float = GOAL) -> bool:
    """A ratio is over the goal when it is above it at three decimals (1.2004x is not over 1.2x):
    the one rule for a repetition, a median, the table, the notes and the class runs."""
    return round(ratio, 3) > goal


def class_contenders(row: dict | None) -> tuple[str, ...]:
    """Who runs a lesson's class run: plain joins base and today where the lesson's single
    gradings are over the goal (any repetition in wall time, or the median in CPU time)."""
    over = row is not None and (over_goal(max(_paired(row, "plain", "base")))
                                or over_goal(_med(_paired(row, "plain", "base", "cpu"))))  # fmt: skip
    return ("base", "plain", "today") if over else ("base", "today")


def _class(tmp: Path, code: Path, lesson: str, size: int,
           cmd: list[str]) -> tuple[float, float, int, int | None]:  # fmt: skip
    """(wall s, CPU s, students with full marks, verdicts forked from the class's warm process or
    None where the runner has none) of ``runner.autograde`` on 2 workers, each student's grader
    started by ``cmd`` (today's runner forks every verdict from one warm process,
    course/grading/zygote.py; the base's has none)."""
    course = bench_autograde._course(tmp, [lesson], code)
    for k in range(size):
        _submit(course, code, lesson, f"s{k:02d}")
    prog = (
        "import json, pathlib\nfrom course.grading import common, runner\n"
        f"common.NBGRADER = {cmd!r}\n"
        f"r = runner.autograde({lesson!r}, workers=2, root=pathlib.Path({str(course)!r}))\n"
        "print('FULL', sum(1 for s in r['students'].values()\n"
        "                  if s.get('ok') and s.get('max_score') and s['score'] == s['max_score']))\n"
        "print('FORKS', r.get('verdict_forks', -1))\n"
    )  # fmt: skip
    c0, t0 = _cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, "-c", prog], cwd=code, env=_env(code),
                         capture_output=True, text=True)  # fmt: skip
    wall, used = time.perf_counter() - t0, _cpu() - c0
    full = [ln for ln in out.stdout.splitlines() if ln.startswith("FULL ")]
    if out.returncode != 0 or not full:
        raise SystemExit(
            f"class run with {code} failed:\n{out.stdout[-1500:]}\n{out.stderr[-1500:]}"
        )
    forks = int(next(ln for ln in out.stdout.splitlines() if ln.startswith("FORKS ")).split()[1])
    return wall, used, int(full[0].split()[1]), None if forks < 0 else forks


def _cells(code: Path, lesson: str) -> list[tuple[dict | None, str]]:
    """(nbgrader metadata of an autograded test cell, else None; source) of every code cell of
    the source notebook in the checkout ``code``."""
    nb = json.loads((code / "source_notebooks" / lesson / f"{lesson}.ipynb").read_text())
    out = []
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            m = c.get("metadata", {}).get("nbgrader", {})
            out.append(
                (m if m.get("grade") and not m.get("solution") else None, "".join(c["source"]))
            )
    return out


def _tested(code: Path, lesson: str) -> str:
    """ "cells/points" of the autograded test cells of ``lesson`` in the checkout ``code``."""
    tests = [m for m, _ in _cells(code, lesson) if m]
    return f"{len(tests)}/{sum(m.get('points', 0) for m in tests):g}"


def _test_ids(code: Path, lesson: str) -> set[str]:
    return {m["grade_id"] for m, _ in _cells(code, lesson) if m}


HEAVY = ("torch", "transformers")  # the imports a verdict process may make that cost seconds


def _verdict_imports(lesson: str) -> str:
    """What the lesson's verdict process imports before its tests (verdict.warm's code)."""
    from course.build_lessons import TRUSTED_WARM
    from course.grading.verdict import preamble

    return preamble(lesson) + TRUSTED_WARM.get(lesson, "")


def _warm_cpu(code: Path, lesson: str) -> float:
    """CPU seconds of a fresh process that starts as the lesson's verdict process does (Python,
    ``course.grading.verdict``), makes its imports and reads the lesson's tests (``verdict.warm``)
    and exits at once (no interpreter teardown, which the real process pays), run alone: the fixed
    start-up a single grading pays for running the tests outside the kernel (a class run pays it
    once, in its warm process). Its own CPU time (RUSAGE_CHILDREN: all its threads; it starts no
    process of its own), not the machine's; the ``prlimit`` wrapper the grader adds is left out.
    ``warm`` swallows errors, so the program checks that the heavy imports were made."""
    from course.grading.zygote import verdict_env

    heavy = [m for m in HEAVY if m in _verdict_imports(lesson)]
    prog = ("import os, sys\nfrom course.grading.verdict import one_thread, warm\n"
            f"one_thread()\nwarm({lesson!r})\n"
            f"os._exit(0 if all(m in sys.modules for m in {heavy!r}) else 3)\n")  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", prog], cwd=code, env=verdict_env(),
                         capture_output=True)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"bench_verdict: {lesson}'s verdict start-up did not import {heavy}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _execute(kc, src: str, what: str) -> float:
    """Seconds to run ``src`` in the kernel; stop the benchmark unless it ran without error."""
    t0 = time.perf_counter()
    reply = kc.execute_interactive(src, timeout=600, output_hook=lambda m: None)
    dt = time.perf_counter() - t0
    if reply["content"]["status"] != "ok":
        c = reply["content"]
        raise SystemExit(f"bench_verdict: {what} failed: {c.get('ename')}: {c.get('evalue')}")
    return dt


def _split(old: Path, lesson: str, reps: int) -> dict:
    """What the base would have spent on today's version of a grown lesson, measured in one plain
    kernel per checkout (no sandbox, no verdict process): ``demo`` = seconds of today's non-test
    cells less the base's; ``new_in_kernel`` = today's test cells the base lacks, run in full
    (visible and hidden tests, with the lesson's trusted imports) in today's kernel after its
    notebook, which is how the base ran every test cell. Lists, one value per repetition."""
    from jupyter_client.manager import start_new_kernel

    from course.grading.verdict import kernel_names, preamble, trusted_tests

    base_ids, today_ids = _test_ids(old, lesson), _test_ids(ROOT, lesson)
    if not base_ids <= today_ids:
        raise SystemExit(f"bench_verdict: {lesson} lost test cells since the base "
                         f"({sorted(base_ids - today_ids)}): no like-for-like estimate")  # fmt: skip
    tests = trusted_tests(lesson)
    imports = preamble(lesson)
    if kernel_names(lesson):  # the stand-ins the tests call in the kernel, imported there
        from course.build_lessons import TRUSTED_KERNEL

        imports += f"from {TRUSTED_KERNEL[lesson]} import {', '.join(kernel_names(lesson))}\n"
    env = dict(os.environ, NBGRADER_EXECUTION="autograde")
    got: dict[str, list[float]] = {"base_demo": [], "today_demo": [], "new_in_kernel": []}
    for _ in range(reps):
        for name, code in (("base", old), ("today", ROOT)):
            km, kc = start_new_kernel(kernel_name="python3", env=env,
                                      cwd=str(code / "source_notebooks" / lesson))  # fmt: skip
            try:
                demo = 0.0
                for meta, src in _cells(code, lesson):
                    dt = _execute(kc, src, f"{name}'s {lesson} cell")
                    demo += dt if meta is None else 0.0
                got[f"{name}_demo"].append(demo)
                if name == "today":
                    _execute(kc, imports, f"{lesson}'s trusted imports")
                    got["new_in_kernel"].append(
                        sum(
                            _execute(kc, tests[gid].code, f"{lesson} test {gid} in the kernel")
                            for gid in sorted(today_ids - base_ids)
                        )  # fmt: skip
                    )
            finally:
                kc.stop_channels()
                km.shutdown_kernel(now=True)
    return {
        "demo": [t - b for t, b in zip(got["today_demo"], got["base_demo"], strict=True)],
        "new_in_kernel": got["new_in_kernel"],
        "new_cells": sorted(today_ids - base_ids),
    }


def parse_classes(spec: str, size: int) -> list[tuple[str, int]]:
    """``"9.1,9.5:12"`` -> [("9.1", size), ("9.5", 12)]: the class runs, each LESSON[:SIZE]."""
    out = []
    for item in filter(None, spec.split(",")):
        lesson, _, n = item.partition(":")
        out.append((lesson, int(n) if n else size))
    return out


def measure(base: str, reps: int, class_size: int, class_lesson: str, class_reps: int,
            lessons: list[str]) -> dict:  # fmt: skip
    """Run everything; the record (plain data) that ``render`` turns into the section."""
    from course.grading import sandbox
    from course.grading.common import NBGRADER

    why = sandbox.unavailable_reason()
    if why:
        raise SystemExit(f"bench_verdict needs the sandbox: {why}")
    classes = parse_classes(class_lesson, class_size)
    from helpers.passport import cpu_model

    rec: dict = {
        "command": f"python -m bench.bench_verdict --base {base} --reps {reps} --class-size "
        f"{class_size} --class-lesson {class_lesson} --class-reps {class_reps}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "base": {"name": base, "commit": _git("rev-parse", base)},
        "today": {"commit": _git("rev-parse", "HEAD"), "dirty": bool(_git(
            "status", "--porcelain", "--", ".", ":!BENCHMARKS.md", ":!bench/records"))},
        "reps": reps, "goal": GOAL, "lessons": {},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-verdict-") as tmp:
        tmp = Path(tmp)
        old = tmp / "code-base"  # the base commit's checkout (courses live beside it, not in it)
        subprocess.run(["git", "worktree", "add", "--detach", str(old), base], cwd=ROOT,
                       check=True, capture_output=True)  # fmt: skip
        try:
            # Same helpers for both: the venv's own (this checkout's, an editable install), which is
            # what the sandboxed kernel imports; the base's copy would be mounted in its sandbox while
            # the kernel looks for this one (every cell of the base would fail on `import helpers`).
            shutil.rmtree(old / "helpers")
            _check_imports(old)
            _check_imports(ROOT)
            plain = [str(BIN / "nbgrader")]
            # contender: (checkout, command that starts nbgrader)
            who = {"base": (old, plain), "plain": (ROOT, plain), "today": (ROOT, NBGRADER)}
            courses = {k: bench_autograde._course(tmp / f"grade-{k}", lessons, c)
                       for k, (c, _) in who.items()}  # fmt: skip
            for lesson in lessons:
                for k, (c, _) in who.items():
                    _submit(courses[k], c, lesson, "student")
                row: dict = {"tested": {"base": _tested(old, lesson), "today": _tested(ROOT, lesson)},
                             "wall": {k: [] for k in who}, "cpu": {k: [] for k in who}}  # fmt: skip
                for r in range(reps):
                    for k in WHO[r % 3 :] + WHO[: r % 3]:  # a rotating start
                        wall, used = _grade(courses[k], who[k][0], lesson, who[k][1])
                        row["wall"][k].append(round(wall, 3))
                        row["cpu"][k].append(round(used, 3))
                        row.setdefault("left_out", {})[k] = left_out(courses[k], lesson)
                log(f"bench_verdict: {lesson}: " + ", ".join(
                    f"{k} {statistics.median(row['wall'][k]):.1f} s" for k in who))  # fmt: skip
                if _test_ids(old, lesson) != _test_ids(ROOT, lesson):
                    row["split"] = {k: v if k == "new_cells" else [round(x, 3) for x in v]
                                    for k, v in _split(old, lesson, reps).items()}  # fmt: skip
                    log(f"bench_verdict: {lesson} split {row['split']}")
                row["verdict_imports"] = _verdict_imports(lesson)
                row["verdict_warm_cpu"] = [round(_warm_cpu(ROOT, lesson), 3) for _ in range(reps)]
                rec["lessons"][lesson] = row
            rec["classes"] = []
            for c_lesson, c_size in classes:
                # plain joins the class run of a lesson whose single gradings are over the goal:
                # the class run is how the course grades, and where that lesson is judged
                order = class_contenders(rec["lessons"].get(c_lesson))
                runs = []
                for r in range(class_reps):
                    for k in order if r % 2 == 0 else order[::-1]:
                        wall, used, full, forks = _class(tmp / f"class-{c_lesson}-{k}-{r}",
                                                         who[k][0], c_lesson, c_size, who[k][1])  # fmt: skip
                        log(f"bench_verdict: class of {c_size} on {c_lesson} ({k}): "
                            f"{wall:.1f} s, {used:.1f} CPU s, {full} full, {forks} forks")  # fmt: skip
                        if full != c_size:  # a class run that did not grade is not a timing
                            raise SystemExit(f"bench_verdict: the {k} class run gave {full} of "
                                             f"{c_size} reference submissions full marks")  # fmt: skip
                        if k != "base" and (forks or 0) < c_size + 2:
                            raise SystemExit(f"bench_verdict: the {k} class run forked {forks} "
                                             f"verdicts for {c_size} students and 2 canaries: "
                                             "its warm verdict process was not used")  # fmt: skip
                        runs.append({"who": k, "wall": round(wall, 3), "cpu": round(used, 3),
                                     "full": full, "forks": forks})  # fmt: skip
                rec["classes"].append({"lesson": c_lesson, "size": c_size, "runs": runs})
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                           capture_output=True)  # fmt: skip
    rec["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return rec


# --- the section, from the record --------------------------------------------------------------


def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def _paired(rec_row: dict, num: str, den: str, kind: str = "wall") -> list[float]:
    """The per-repetition ratios num/den (each repetition's gradings ran back to back)."""
    return [a / b for a, b in zip(rec_row[kind][num], rec_row[kind][den], strict=True)]


def _range(xs: list[float]) -> str:
    return f"{_med(xs):.2f}x ({min(xs):.2f}-{max(xs):.2f})"


def _warm_share(r: dict) -> str:
    """How the verdict process's start-up (``_warm_cpu``) compares with the CPU time plain adds."""
    warm = r.get("verdict_warm_cpu")
    base, plain = r["cpu"]["base"], r["cpu"]["plain"]
    added = _med([p - b for p, b in zip(plain, base, strict=True)])
    if not warm or added <= 0:
        return ""
    w = _med(warm)
    less = [(p - w) / b for p, b in zip(plain, base, strict=True)]
    return (
        f" Its start-up alone (a fresh process that starts as the verdict does, makes those imports, "
        f"reads the tests and exits; that process's own CPU time, run alone, median of {len(warm)}) "
        f"takes {w:.1f} CPU s; plain adds {added:.1f} CPU s to the base (median of the paired "
        f"differences; the machine's CPU time, a different meter)"
        + (f", so the start-up is about {w / added:.0%} of it" if w <= added else "")
        + f". Had the verdict process started with it done, as a class run's fork does, plain/base "
        f"would be {_range(less)} in CPU (the start-up held at its median)."
    )


def verdict_on_goal(ratios: list[float], goal: float, cpu: list[float] | None = None) -> str:
    """How a set of paired ratios stands against ``goal`` (``over_goal``, for each repetition and
    for their median alike); "no measurable difference" is added only where the standing is within
    the goal and the repetitions fall on both sides of 1, in wall time and (when given) in CPU
    time."""
    over = sum(over_goal(x, goal) for x in ratios)
    if not over:
        on = "within"
    elif not over_goal(_med(ratios), goal):
        on = f"within at the median ({over} of {len(ratios)} repetitions over)"
    else:
        return "OVER"
    if all(min(xs) <= 1.0 <= max(xs) for xs in ([ratios] if cpu is None else [ratios, cpu])):
        on += "; no measurable difference"
    return on


def _standing(ratios: list[float], goal: float, cpu: list[float] | None = None) -> str:
    """``verdict_on_goal`` as a phrase: "within the 1.2x goal (no measurable difference)"."""
    v = verdict_on_goal(ratios, goal, cpu).split("; ")
    head, _, count = v[0].partition(" at the median ")  # "within at the median (2 of 5 ...)"
    return (f"{head} the {goal}x goal" + (f" at the median {count}" if count else "")
            + (f" ({v[1]})" if len(v) > 1 else ""))  # fmt: skip


def _slower(ratios: list[float]) -> str:
    """A class run's ratios against the base, in words (goal: not slower)."""
    if min(ratios) <= 1.0 <= max(ratios):
        return "no measurable difference"
    return "not slower" if _med(ratios) <= 1.0 else "SLOWER"


def class_use(size: int, who: str, one_wall: float, class_wall: float) -> float:
    """How well a class run used its 2 workers: the share of a perfect split (every grading as
    long as a single one, two at a time) that it reached. The runs other than the base also grade
    the preflight's 2 canaries, which count as gradings here."""
    n = size + (0 if who == "base" else 2)
    return n * one_wall / 2 / class_wall


def render(rec: dict) -> str:
    """The ``verdict`` section of BENCHMARKS.md, every figure computed from ``rec``."""
    goal, reps = rec["goal"], rec["reps"]
    lessons = rec["lessons"]
    # today leaves cells out where plain did on some lesson and the base on none
    skipping = all("left_out" in r for r in lessons.values()) and (
        any(r["left_out"]["plain"][0] for r in lessons.values())
        and not any(r["left_out"]["base"][0] for r in lessons.values())
    )
    rows = []
    for lesson, r in lessons.items():
        w = {k: _med(v) for k, v in r["wall"].items()}
        c = {k: _med(v) for k, v in r["cpu"].items()}
        pb = _paired(r, "plain", "base")
        lo = r.get("left_out")
        rows.append([
            lesson, f"{r['tested']['base']} -> {r['tested']['today']}"
            + (f"; code cells run {lo['base'][1] - lo['base'][0]} -> "
               f"{lo['plain'][1] - lo['plain'][0]}" if skipping else ""),
            f"{w['base']:.1f}", f"{w['plain']:.1f}", f"{w['today']:.1f}",
            _range(pb), verdict_on_goal(pb, goal, _paired(r, "plain", "base", "cpu")),
            _range(_paired(r, "plain", "base", "cpu")), _range(_paired(r, "today", "base")),
            f"{c['base']:.1f}", f"{c['plain']:.1f}", f"{c['today']:.1f}",
        ])  # fmt: skip
    tot = {k: sum(_med(r["wall"][k]) for r in lessons.values()) for k in WHO}
    cpu = {k: sum(_med(r["cpu"][k]) for r in lessons.values()) for k in WHO}
    rows.append(["all (sum of medians)", "", f"{tot['base']:.1f}", f"{tot['plain']:.1f}",
                 f"{tot['today']:.1f}", f"{tot['plain'] / tot['base']:.2f}x", "",
                 f"{cpu['plain'] / cpu['base']:.2f}x", f"{tot['today'] / tot['base']:.2f}x",
                 f"{cpu['base']:.1f}", f"{cpu['plain']:.1f}", f"{cpu['today']:.1f}"])  # fmt: skip
    m = rec["machine"]
    today = rec["today"]["commit"][:7] + (
        " with uncommitted changes" if rec["today"]["dirty"] else ""
    )
    header = (
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average (1, 5, 15 "
        f"min) {', '.join(f'{x:.1f}' for x in rec['load_before'])} before, "
        f"{', '.join(f'{x:.1f}' for x in rec['load_after'])} after; {rec['date']}. "
        f"Run by `{rec['command']}` on commit `{today}`; recorded in "
        "`bench/records/verdict.json`, this section rendered from it (tests/test_bench_verdict.py "
        "checks they agree).\n\n"
        f"Base: commit `{rec['base']['name']}` (`{rec['base']['commit'][:12]}`), where the test "
        "cells (hidden tests included) ran inside the student's kernel behind the in-kernel guard. "
        "Today: the test cells run in the grader's own process and call the student's functions "
        "through the plain-data channel (course/grading/boundary.py; 9.5's stand-ins live in the "
        "kernel, addressed by handle, with remote autograd). Both sandboxed, same venv, same "
        "helpers (this checkout's), one reference submission per lesson, which must get full "
        "marks every time (checked: a grading that fails the reference is not a timing). Three "
        "contenders: **base**; **plain**, today's grading code started as `nbgrader`, as the base "
        "is; **today**, today's code started as the course starts it (`python -m "
        "course.grading.nbgrader_cli`, which defers nbgrader's one slow optional import; the "
        "grading is the same program). plain/base is what grading a lesson costs against the "
        "base, both started alike: the trusted verdict's own cost"
        + (
            ", less what leaving out demo cells saves (below; this record does not measure the "
            "two apart)"
            if skipping
            else ""
        )
        + f"; the goal (at most {goal}x the base per lesson) is about it; today/plain is the "
        "start-up saving (compare the two columns), which the base would get too with the same "
        "command. "
        + (
            "Plain and today leave out the lesson's own demo cells that no graded code needs "
            "(course/grading/demos.py: a cell the student wrote or changed always runs, and so "
            "does a demo cell whose names a running cell may read); the base ran every cell "
            "(second column). "
            if skipping
            else ""
        )
        + f"{reps} repetitions per lesson; in each, the three gradings run back to back from a "
        "rotating start, so each repetition gives a paired ratio; the table gives the median of "
        "the paired ratios and their range (lowest-highest) over the repetitions; a repetition, or "
        "their median, is over the goal when its ratio is above it at three decimals. Where the "
        "ranges of both the wall and the CPU ratios span 1.00x, the goal column adds no "
        "measurable difference. "
        "Wall and CPU are both shown: "
        "today's verdict process makes its imports (torch; transformers for 9.5) while the "
        "notebook runs, which hides them from the wall time where a core is free, but not from "
        "the CPU time (CPU: the "
        "machine's busy seconds during the grading, /proc/stat: nbgrader, the kernel, the verdict "
        "process and anything else that ran). The lessons changed since the base (second column): "
        "where today grades more, the ratio includes the added tests.\n\n"
    )
    if max(rec["load_before"][:2]) > 0.5:
        header += (
            f"**The machine was not idle shortly before the start** (load "
            f"{rec['load_before'][0]:.1f} over 1 minute, {rec['load_before'][1]:.1f} over 5): the "
            "CPU figures count every process's busy time, so they may include other work.\n\n"
        )
    body = table(["lesson", "test cells/points base -> today"
                  + ("; code cells run base -> plain" if skipping else ""), "base wall s", "plain wall s",
                  "today wall s", "plain/base wall (range)", f"goal {goal}x",
                  "plain/base CPU (range)", "today/base wall (range)", "base CPU s",
                  "plain CPU s", "today CPU s"], rows)  # fmt: skip
    notes = []
    for lesson, r in lessons.items():
        pb, pbc = _paired(r, "plain", "base"), _paired(r, "plain", "base", "cpu")
        sp = r.get("split")
        if sp:
            extra = [d + n for d, n in zip(sp["demo"], sp["new_in_kernel"], strict=True)]
            # the extra work was measured apart from the gradings: its median, added to each base
            fair = [p / (b + _med(extra)) for p, b in zip(r["wall"]["plain"], r["wall"]["base"],
                                                          strict=True)]  # fmt: skip
            notes.append(
                f"**{lesson} grew**: {len(sp['new_cells'])} test cell(s) the base lacks "
                f"({', '.join(sp['new_cells'])}). Run as the base ran test cells (in full, inside "
                f"the kernel, after the notebook) they take {_med(sp['new_in_kernel']):.1f} s, and "
                f"today's demo cells take {abs(_med(sp['demo'])):.1f} s "
                f"{'more' if _med(sp['demo']) >= 0 else 'less'} than the base's (one plain "
                f"kernel per checkout, outside the sandbox, median of {len(extra)}). Like for like "
                "(an estimate of the base grading today's notebook, which would run both), plain "
                f"against each repetition's base plus the median of that work: {_range(fair)}, "
                f"{_standing(fair, goal)} in wall time."
                + (
                    " The rest is the trusted verdict's own cost on all the lesson's test cells "
                    "(not split further here)."
                    if _med(fair) > 1.0
                    else ""
                )
            )
        elif over_goal(max(pb), goal) or over_goal(_med(pbc), goal):
            heavy = [m for m in HEAVY if m in r.get("verdict_imports", "")]
            notes.append(
                f"**{lesson}**: plain/base {_range(pb)} wall and {_range(pbc)} CPU: "
                f"{_standing(pb, goal, pbc)} in wall time, {_standing(pbc, goal)} in CPU time."
                + (f" Its verdict process imports {' and '.join(heavy)} for the tests' own "
                   "references, which the kernel has imported already." if heavy else "")
                + _warm_share(r)
                + (" In a class run those imports are made once per class (below)."
                   if heavy and any(c["lesson"] == lesson for c in rec.get("classes", []))
                   else "")
            )  # fmt: skip
    classes = rec.get("classes") or ([rec["class"]] if "class" in rec else [])
    klass, per_student = "", {}
    for k in classes:
        who_ran = [w for w in WHO if any(x["who"] == w for x in k["runs"])]
        kw = {w: [x["wall"] for x in k["runs"] if x["who"] == w] for w in who_ran}
        kc = {w: [x["cpu"] for x in k["runs"] if x["who"] == w and "cpu" in x] for w in who_ran}
        kr = [t / b for t, b in zip(kw["today"], kw["base"], strict=True)]
        sp = lessons.get(k["lesson"], {}).get("split")
        if sp:  # what the base would add on today's notebook, per student, spread over 2 workers
            add = _med(sp["demo"]) + _med(sp["new_in_kernel"])
            fair_base = {"wall": [b + k["size"] * add / 2 for b in kw["base"]]}
            kr_fair = [t / b for t, b in zip(kw["today"], fair_base["wall"], strict=True)]
        text = (
            f"\n\n**Class run, {k['lesson']}.** {k['size']} reference submissions, "
            f"`runner.autograde` on 2 workers, {', '.join(who_ran)} in turn, "
            f"{len(kw['base'])} run(s) each; every student got full marks in every run. Wall: "
            + ", ".join(f"{w} {', '.join(f'{x:.1f}' for x in kw[w])} s" for w in who_ran)
            + f"; today/base {_range(kr)}, "
            + _slower(kr)
            + (
                f" as measured; like for like, {_range(kr_fair)}, {_slower(kr_fair)} (an estimate: "
                f"each base run plus {k['size']} x {add:.1f} s spread evenly over 2 workers, the "
                "work the base would add on today's notebook, its new test cells and today's "
                "extra demo time, measured in one kernel above)"
                if sp
                else ""
            )
            + " (goal: not slower)."
        )
        forks = [x.get("forks") for x in k["runs"] if x["who"] != "base"]
        if forks and all(f is not None for f in forks):
            text += (
                f" The runs other than the base forked {', '.join(str(f) for f in forks)} "
                f"verdicts from the class's warm process (course/grading/zygote.py): "
                f"{k['size']} students and the preflight's 2 canary gradings, which the base "
                "does not run."
            )
        elif "classes" not in rec:
            text += (
                " Today's include the preflight's two canary gradings, which the base does not run."
            )
        if all(kc[w] and len(kc[w]) == len(kc["base"]) for w in who_ran):
            per_student[k["lesson"]] = {w: _med(kc[w]) / k["size"] for w in who_ran}
            ps = per_student[k["lesson"]]
            text += (
                " CPU: "
                + ", ".join(f"{w} {', '.join(f'{x:.0f}' for x in kc[w])} s" for w in who_ran)
                + "; per student "
                + ", ".join(f"{w} {ps[w]:.1f}" for w in who_ran)
                + " CPU s (a class run's own work included: for plain and today the warm-up and "
                "the 2 canary gradings, which a larger class spreads thinner)"
            )
            one_cpu = lessons.get(k["lesson"], {}).get("cpu")
            if one_cpu:
                text += "; a single grading above: " + ", ".join(
                    f"{w} {_med(one_cpu[w]):.1f}" for w in who_ran
                )
            text += "."
            if one_cpu and ps["base"] > 1.2 * _med(one_cpu["base"]):
                text += (
                    f" The base's CPU per student is {ps['base'] / _med(one_cpu['base']) - 1:.0%} "
                    "above its single grading here, today's "
                    f"{ps['today'] / _med(one_cpu['today']) - 1:+.0%}: the base runs the tests in "
                    "the kernel, which this lesson sets to 2 torch threads, so two students "
                    "graded at once ask for 4 threads on 2 cores; today's tests run in the "
                    "verdict process on 1 thread. Part of the class-run ratios below is likely "
                    "that thread setting rather than the boundary (the base was not measured "
                    "with 1 thread)."
                )
            if "plain" in who_ran:
                pw = [t / b for t, b in zip(kw["plain"], kw["base"], strict=True)]
                pc = [t / b for t, b in zip(kc["plain"], kc["base"], strict=True)]
                text += (
                    f" Grading as the class is graded, both started alike, plain/base: wall "
                    f"{_range(pw)}, {_standing(pw, goal, pc)}; CPU {_range(pc)}, "
                    f"{_standing(pc, goal)}"
                )
                if sp:
                    pwf = [t / b for t, b in zip(kw["plain"], fair_base["wall"], strict=True)]
                    pcf = [t / (b + k["size"] * add) for t, b in zip(kc["plain"], kc["base"],
                                                                    strict=True)]  # fmt: skip
                    text += (
                        f"; like for like (an estimate as above; CPU: the base's plus {k['size']} x "
                        f"{add:.1f} kernel seconds), wall "
                        f"{_range(pwf)}, {_standing(pwf, goal, pcf)}; CPU {_range(pcf)}, "
                        f"{_standing(pcf, goal)}"
                    )
                text += "."
        klass += text
    if len(classes) == 1 and "classes" not in rec:
        klass += f" One lesson only ({classes[0]['lesson']})."
    k = classes[0] if classes else None
    kw = (
        {w: [x["wall"] for x in k["runs"] if x["who"] == w] for w in ("base", "today")} if k else {}
    )
    one = lessons.get(k["lesson"]) if k else None
    est_cpu = {w: 300 * cpu[w] / 2 / 3600 for w in WHO}
    in_class = sorted(per_student.keys() & lessons.keys())
    if in_class:  # as a class run grades: the class runs' per-student CPU where measured
        for w in ("base", "today"):
            cls = sum(per_student[ls][w] if ls in in_class else _med(r["cpu"][w])
                      for ls, r in lessons.items())  # fmt: skip
            est_cpu[f"class_{w}"] = 300 * cls / 2 / 3600
    est = ""
    if one:
        # how well each class run used its 2 workers (class_use); a lesson without a class run
        # takes the first class's
        uses = {}
        for c in classes:
            c_one = lessons.get(c["lesson"])
            if c_one:
                cw = {w: [x["wall"] for x in c["runs"] if x["who"] == w] for w in ("base", "today")}
                uses[c["lesson"]] = {w: class_use(c["size"], w, _med(c_one["wall"][w]),
                                                  _med(cw[w])) for w in ("base", "today")}  # fmt: skip
        first = uses[k["lesson"]]
        est_wall = {w: 300 * sum(_med(r["wall"][w]) / uses.get(ls, first)[w]
                                 for ls, r in lessons.items()) / 2 / 3600
                    for w in ("base", "today")}  # fmt: skip
        est = (
            " From the wall times instead, each lesson's single grading scaled by how well a class "
            "run used its 2 workers (the share of a perfect split, size x one grading / 2, that it "
            "reached, the preflight's canaries counted as gradings: "
            + "; ".join(
                f"{ls} base {u['base']:.0%}, today {u['today']:.0%}" for ls, u in uses.items()
            )  # fmt: skip
            + (f"; the other lessons take {k['lesson']}'s" if set(lessons) - set(uses) else "")
            + (
                "; above 100%: the single gradings were slowed by something the class run was "
                "not, so this estimate is unreliable"
                if max(v for u in uses.values() for v in u.values()) > 1
                else ""
            )
            + f"): base {est_wall['base']:.1f} h, today {est_wall['today']:.1f} h."
        )
    tail = (
        "".join(f"\n\n{t}" for t in notes)
        + klass
        + f"\n\n**300 students x {len(lessons)} lessons on 2 cores.** From the CPU seconds (300 x the sum of the "
        "per-lesson median CPU seconds / 2 cores: both cores busy all the time, the throughput "
        f"bound): base {est_cpu['base']:.1f} h, plain {est_cpu['plain']:.1f} h, today "
        f"{est_cpu['today']:.1f} h"
        + (
            f"; as a class run grades, with the class runs' per-student CPU for "
            f"{' and '.join(in_class)} and the single gradings' for the others: base "
            f"{est_cpu['class_base']:.1f} h, today {est_cpu['class_today']:.1f} h (today's "
            "includes the warm-up and canaries of a class of the measured size, spread over "
            "fewer students than 300: an estimate)"
            if in_class
            else ""
        )
        + "."
        + est
        + (
            f" Plain and today leave out {sum(r['left_out']['plain'][0] for r in lessons.values())}"
            f" of the {sum(r['left_out']['plain'][1] for r in lessons.values())} code cells of the "
            f"{len(lessons)} reference notebooks"
            + (
                " (every lesson's non-graded code cells but one, its imports)"
                if all(
                    len(r["left_out"]["plain"]) > 2
                    and r["left_out"]["plain"][0] == r["left_out"]["plain"][2] - 1
                    for r in lessons.values()
                )
                else ""
            )
            + "; the autograded notebook and the feedback show a one-line note in their place, "
            "not the student's plots, and `GuardedExecute.skip_demos = False` runs them all.\n"
            if skipping
            else " Every demo cell of a notebook still runs when it is graded (the autograded "
            "notebook shows the student's outputs).\n"
        )
    )
    return "## Trusted verdict: cost against the in-kernel verdict\n\n" + header + body + tail


def run(quick: bool = False, write: bool = True) -> str:
    """Measure with the defaults (``quick``: one repetition, classes of 4 on 9.1 and 9.4 and 12 on
    9.5, one run each: a smoke check of this code whose figures are not kept) and render;
    ``write`` keeps the record."""
    lessons = sorted(p.name for p in (ROOT / "source_notebooks").iterdir() if p.is_dir())
    rec = measure("ca232ae", 1 if quick else 5, 4 if quick else 20, CLASSES, 1 if quick else 2,
                  lessons)  # fmt: skip
    if write and not quick:
        RECORD.parent.mkdir(exist_ok=True)
        RECORD.write_text(json.dumps(rec, indent=1) + "\n")
    return render(rec)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_verdict")
    p.add_argument("lessons", nargs="*")
    p.add_argument("--base", default="ca232ae")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--class-size", type=int, default=20)
    p.add_argument("--class-lesson", default=CLASSES,
                   help="the class runs: LESSON[:SIZE],... (SIZE: --class-size)")  # fmt: skip
    p.add_argument("--class-reps", type=int, default=2)
    p.add_argument("--render", action="store_true",
                   help="only render the section from the committed record")  # fmt: skip
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args(argv)
    if a.render:
        rec = json.loads(RECORD.read_text())
    else:
        lessons = a.lessons or sorted(
            p.name for p in (ROOT / "source_notebooks").iterdir() if p.is_dir()
        )
        rec = measure(a.base, a.reps, a.class_size, a.class_lesson, a.class_reps, lessons)
        if not a.no_write:
            RECORD.parent.mkdir(exist_ok=True)
            RECORD.write_text(json.dumps(rec, indent=1) + "\n")
    body = render(rec)
    print(body)
    if not a.no_write:
        write_section("verdict", body)


if __name__ == "__main__":
    main()
