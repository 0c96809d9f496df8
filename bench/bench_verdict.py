"""The trusted verdict's cost: grading with today's code against grading with an earlier commit's
(the in-kernel verdict), side by side in one run.

1. Per lesson: one student submits the reference solution; ``nbgrader autograde LESSON --student
   s`` grades it in the bubblewrap sandbox, once with this checkout's grading code and once with
   the code of ``--base`` (a git worktree of that commit, same venv, same helpers), and once with
   this checkout's code started as ``nbgrader`` ("plain", to separate the verdict's cost from the
   course command's shorter start-up), rotating, median of ``--reps``. Goal (issue 22): plain at
   most 1.2x the base's wall time per lesson.
2. A class: ``--class-size`` reference submissions of ``--class-lesson`` graded by
   ``course.grading.runner.autograde`` on 2 workers, with each code (today's runs the preflight
   canary first, which the base does not have; its time is included). Goal: not slower.
3. The estimate for 300 students x 5 lessons on 2 cores: 300 x (sum of the per-lesson medians) / 2,
   for each code (perfect sharding over 2 workers assumed; the class run shows how close it is).
Writes the ``verdict`` section of BENCHMARKS.md.

    python -m bench.bench_verdict [--base ca232ae] [--reps 3] [--class-size 20] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
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
GOAL = 1.2


def _env(code: Path) -> dict:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(code))


def _course(tmp: Path, code: Path, lessons: list[str]) -> Path:
    return bench_autograde._course(tmp, lessons, code)


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
        return sum(g.auto_score for g in auto), sum(g.max_score for g in auto) or -1


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
    if score != top:  # a grading that failed the reference solution is not a timing of grading
        raise SystemExit(f"autograde {lesson} with {code} gave the reference {score}/{top}")
    return wall, used


def _class(tmp: Path, code: Path, lesson: str, size: int, plain: bool) -> tuple[float, int]:
    """(wall s, students with full marks) of ``runner.autograde`` on 2 workers; ``plain``: each
    student's grader started as ``nbgrader`` (what the base does) instead of the course's command."""
    course = _course(tmp, code, [lesson])
    for k in range(size):
        _submit(course, code, lesson, f"s{k:02d}")
    patch = f"common.NBGRADER = [{str(BIN / 'nbgrader')!r}]\n" if plain else ""
    prog = (
        "import json, sys\nfrom course.grading import common, runner\n" + patch +
        f"r = runner.autograde({lesson!r}, workers=2, root=__import__('pathlib').Path({str(course)!r}))\n"
        "print('FULL', sum(1 for s in r['students'].values() if s.get('score') == s.get('max_score')))\n"
    )  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", prog], cwd=code, env=_env(code),
                         capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t0
    full = [ln for ln in out.stdout.splitlines() if ln.startswith("FULL ")]
    if out.returncode != 0 or not full:
        raise SystemExit(
            f"class run with {code} failed:\n{out.stdout[-1500:]}\n{out.stderr[-1500:]}"
        )
    return wall, int(full[0].split()[1])


def _tested(code: Path, lesson: str) -> str:
    """ "cells/points" of the autograded test cells of ``lesson`` in the checkout ``code`` (the
    lessons changed between the base and today: a ratio compares what each grades)."""
    tests = [m for m, _ in _cells(code, lesson) if m]
    return f"{len(tests)}/{sum(m.get('points', 0) for m in tests):g}"


def _cells(code: Path, lesson: str) -> list[tuple[dict | None, str]]:
    """(nbgrader metadata of an autograded test cell, else None; source) of every code cell of
    the source notebook in the checkout ``code``."""
    import json

    nb = json.loads((code / "source_notebooks" / lesson / f"{lesson}.ipynb").read_text())
    out = []
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            m = c.get("metadata", {}).get("nbgrader", {})
            out.append(
                (m if m.get("grade") and not m.get("solution") else None, "".join(c["source"]))
            )
    return out


def _test_ids(code: Path, lesson: str) -> set[str]:
    return {m["grade_id"] for m, _ in _cells(code, lesson) if m}


def _split(old: Path, lesson: str, reps: int) -> dict:
    """Where a lesson's grading time went when the lesson grew (more test cells, more demo cells):
    each checkout's notebook run cell by cell in one plain kernel (no sandbox; the same for both),
    and today's verdict timed per test cell. Seconds, medians over ``reps``: ``demo`` = (today's
    non-test cells) - (the base's); ``new_visible`` = today's test cells the base does not have, run
    in the kernel; ``new_verdict`` / ``old_verdict`` = today's verdict for the test cells the base
    does not have / has."""
    from jupyter_client.manager import start_new_kernel

    from course.grading.boundary import Channel, install_server
    from course.grading.verdict import run_lesson, trusted_tests

    base_ids = _test_ids(old, lesson)
    env = dict(os.environ, NBGRADER_EXECUTION="autograde")
    got: dict[str, list[float]] = {}
    for _ in range(reps):
        for name, code in (("base", old), ("today", ROOT)):
            km, kc = start_new_kernel(kernel_name="python3", env=env,
                                      cwd=str(code / "source_notebooks" / lesson))  # fmt: skip
            try:
                server = install_server(km.connection_file, timeout=60) if name == "today" else None
                t = {"demo": 0.0, "new_visible": 0.0, "new_verdict": 0.0, "old_verdict": 0.0}
                for meta, src in _cells(code, lesson):
                    gid = meta and meta["grade_id"]
                    t0 = time.perf_counter()
                    kc.execute_interactive(src, timeout=600, output_hook=lambda m: None)
                    dt = time.perf_counter() - t0
                    if gid is None:
                        t["demo"] += dt
                    elif name == "today" and gid not in base_ids:
                        t["new_visible"] += dt
                if name == "today":
                    ch = Channel(km.connection_file, timeout=120, server=server)
                    for gid in trusted_tests(lesson):
                        t0 = time.perf_counter()
                        failed = [v for v in run_lesson(ch, lesson, cells=[gid]) if not v.passed]
                        if failed:  # a verdict that fails the reference is not a timing of it
                            raise SystemExit(f"split {lesson}: the reference failed {failed}")
                        key = "old_verdict" if gid in base_ids else "new_verdict"
                        t[key] += time.perf_counter() - t0
                    ch.close()
                for k, v in t.items():
                    got.setdefault(f"{name}_{k}", []).append(v)
            finally:
                kc.stop_channels()
                km.shutdown_kernel(now=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    return {"demo": med["today_demo"] - med["base_demo"], "new_visible": med["today_new_visible"],
            "new_verdict": med["today_new_verdict"], "old_verdict": med["today_old_verdict"]}  # fmt: skip


def _row(name: str, wall: dict, cpu: dict, tested: str = "") -> list[str]:
    ratio = wall["plain"] / wall["base"]
    return [name, tested, f"{wall['base']:.1f}", f"{wall['plain']:.1f}", f"{ratio:.2f}x",
            "yes" if ratio <= GOAL else "NO", f"{wall['today']:.1f}",
            f"{wall['today'] / wall['base']:.2f}x", f"{cpu['base']:.1f}", f"{cpu['plain']:.1f}",
            f"{cpu['today']:.1f}", f"{cpu['today'] / cpu['base']:.2f}x"]  # fmt: skip


def run(base: str, reps: int, class_size: int, class_lesson: str, lessons: list[str]) -> str:
    from course.grading import sandbox

    why = sandbox.unavailable_reason()
    if why:
        raise SystemExit(f"bench_verdict needs the sandbox: {why}")
    with tempfile.TemporaryDirectory(prefix="bench-verdict-") as tmp:
        tmp = Path(tmp)
        old = tmp / "code-base"  # the base commit's checkout (courses live beside it, not in it)
        subprocess.run(["git", "worktree", "add", "--detach", str(old), base], cwd=ROOT,
                       check=True, capture_output=True)  # fmt: skip
        # Same helpers for both: the venv's own (this checkout's, an editable install), which is
        # what the sandboxed kernel imports; the base's copy would be mounted in its sandbox while
        # the kernel looks for this one (every cell of the base would fail on `import helpers`).
        try:
            shutil.rmtree(old / "helpers")
            from course.grading.common import NBGRADER

            plain = [str(BIN / "nbgrader")]
            # contender: (checkout, command that starts nbgrader); "plain" = today's grading code
            # started as the base starts it, so today/plain is the start-up saving alone and
            # plain/base the verdict's own cost
            who = {"base": (old, plain), "plain": (ROOT, plain), "today": (ROOT, NBGRADER)}
            courses = {k: _course(tmp / f"grade-{k}", c, lessons) for k, (c, _) in who.items()}
            rows = []
            splits: list[str] = []
            tot = dict.fromkeys(who, 0.0)
            cpu = dict.fromkeys(who, 0.0)
            for lesson in lessons:
                for k, (c, _) in who.items():
                    _submit(courses[k], c, lesson, "student")
                walls: dict[str, list[float]] = {k: [] for k in who}
                cpus: dict[str, list[float]] = {k: [] for k in who}
                order = list(who)
                for r in range(reps):
                    for k in order[r % 3 :] + order[: r % 3]:  # a rotating start
                        wall, used = _grade(courses[k], who[k][0], lesson, who[k][1])
                        walls[k].append(wall)
                        cpus[k].append(used)
                med = {k: statistics.median(v) for k, v in walls.items()}
                mcpu = {k: statistics.median(v) for k, v in cpus.items()}
                for k in med:
                    tot[k] += med[k]
                    cpu[k] += mcpu[k]
                log(f"bench_verdict: {lesson}: " + ", ".join(
                    f"{k} {med[k]:.1f} s ({mcpu[k]:.1f} s CPU)" for k in who))  # fmt: skip
                tested = f"{_tested(old, lesson)} -> {_tested(ROOT, lesson)}"
                rows.append(_row(lesson, med, mcpu, tested))
                if _test_ids(old, lesson) != _test_ids(ROOT, lesson):
                    sp = _split(old, lesson, reps)
                    added = sp["demo"] + sp["new_visible"] + sp["new_verdict"]
                    like = med["plain"] - added
                    splits.append(
                        f"**{lesson} grew** (its test cells differ from the base's): of plain's "
                        f"{med['plain']:.1f} s, about {added:.1f} s is what the base did not grade at "
                        f"all: {sp['demo']:.1f} s more demo cells, {sp['new_visible']:.1f} s the new "
                        f"test cells' visible tests in the kernel, {sp['new_verdict']:.1f} s their "
                        f"verdict (the base's test cells take {sp['old_verdict']:.1f} s of today's "
                        f"verdict). Like for like, plain less that is {like:.1f} s, "
                        f"{like / med['base']:.2f}x the base "
                        f"({'within' if like / med['base'] <= GOAL else 'over'} the {GOAL}x goal). "
                        "The split is measured in one plain kernel per checkout, outside the "
                        f"sandbox (median of {reps}), so it is an estimate of the sandboxed "
                        "difference, not a part of it measured in place."
                    )
                    log(f"bench_verdict: {lesson} split {sp}")
            rows.append(_row("all", tot, cpu))
            klass = {}
            for k in who:
                klass[k] = _class(tmp / f"class-{k}", who[k][0], class_lesson, class_size,
                                  plain=k == "plain")  # fmt: skip
                log(f"bench_verdict: class of {class_size} ({k}): {klass[k][0]:.1f} s")
                if klass[k][1] != class_size:  # a class run that did not grade is not a timing
                    log(f"bench_verdict: the {k} class run gave {klass[k][1]} of {class_size} "
                        "reference submissions full marks: its time is not reported")  # fmt: skip
            if klass["today"][1] != class_size or klass["plain"][1] != class_size:
                raise SystemExit("bench_verdict: today's class run did not grade every reference "
                                 "submission full marks")  # fmt: skip
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                           capture_output=True)  # fmt: skip
    est = {k: 300 * tot[k] / 2 / 3600 for k in tot}
    est_cpu = {k: 300 * cpu[k] / 2 / 3600 for k in cpu}
    header = (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (load avg "
        f"{os.getloadavg()[0]:.1f} at the end), Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}. Run by `python -m bench.bench_verdict --base {base}` "
        f"(median of {reps} per lesson and code, alternating).\n\n"
        f"Base: commit `{base}`, where the test cells (hidden tests included) ran inside the "
        "student's kernel behind the in-kernel guard. Today: every lesson is graded by the "
        "trusted verdict (the test cells run in the grader's process, the student's functions "
        "called through the plain-data channel, course/grading/boundary.py; 9.5's stand-ins live "
        "in the kernel, addressed by handle, with remote autograd). "
        "Both sandboxed, same venv, same helpers (this checkout's), one reference submission per "
        "lesson, which must get full marks from both (checked: a grading that fails the "
        "reference is not a timing). "
        "Three contenders: **base**; **plain**, today's grading code started as `nbgrader` "
        "(as the base is started); **today**, today's code started as the course starts it "
        "(`python -m course.grading.nbgrader_cli`: nbgrader with its one slow optional import, "
        "the IRI grammar jsonschema loads through jupyter-events, deferred to first use; the "
        "grading itself is the same program). plain/base is the trusted verdict's own cost; "
        "today/plain is the start-up saving, which the base would get as well if it used that "
        f"command. Goal (issue 22): plain at most {GOAL}x the base per lesson. Today's verdict "
        "process starts with the kernel and makes its imports (torch; transformers for 9.5) "
        "while the notebook runs: that shortens the wall time, not the CPU time, so both are "
        "shown (CPU: the machine's busy seconds during the grading, from /proc/stat: nbgrader, "
        "the kernel and the verdict process, and whatever else ran). The lessons themselves "
        "changed since the base (second column: where today grades more, as 9.4's diagnosis "
        "clinic does, the ratio includes the added tests, not only the verdict's cost).\n\n"
    )
    body = table(["lesson", "test cells/points base -> today", "base wall s", "plain wall s", "plain/base", f"<= {GOAL}x",
                  "today wall s", "today/base", "base CPU s", "plain CPU s", "today CPU s",
                  "today/base CPU"], rows)  # fmt: skip

    def ratio(k: str) -> str:
        if klass["base"][1] != class_size:
            return (f"no ratio: the base's class run gave {klass['base'][1]}/{class_size} full "
                    "marks, so its time does not measure grading")  # fmt: skip
        return f"{klass[k][0] / klass['base'][0]:.2f}x the base"

    tail = (
        "".join(f"\n\n{t}" for t in splits)
        + f"\n\n**Class run.** {class_size} reference submissions of {class_lesson}, "
        "`runner.autograde` on 2 workers (today's and plain's include the preflight's two canary "
        "gradings, side by side on the 2 workers, which the base does not run): "
        f"base {klass['base'][0]:.1f} s ({klass['base'][1]}/{class_size} full marks); "
        f"plain {klass['plain'][0]:.1f} s ({klass['plain'][1]}/{class_size}), {ratio('plain')}; "
        f"today {klass['today'][0]:.1f} s ({klass['today'][1]}/{class_size}), "
        f"{ratio('today')}. Goal: today not slower than the base.\n\n"
        "**300 students x 5 lessons on 2 cores** (300 x the sum of the per-lesson medians / 2 "
        f"workers): base {est['base']:.1f} h, plain {est['plain']:.1f} h, today "
        f"{est['today']:.1f} h; from the CPU seconds instead (both cores busy all the time): "
        f"base {est_cpu['base']:.1f} h, today {est_cpu['today']:.1f} h. Every demo cell of a "
        "notebook still runs when it is graded (the autograded notebook shows the student's "
        "outputs); the verdict itself is a small part of each lesson's time.\n"
    )
    return "## Trusted verdict: cost against the in-kernel verdict\n\n" + header + body + tail


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_verdict")
    p.add_argument("lessons", nargs="*")
    p.add_argument("--base", default="ca232ae")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--class-size", type=int, default=20)
    p.add_argument("--class-lesson", default="9.1")
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args(argv)
    lessons = a.lessons or sorted(p.name for p in (ROOT / "source_notebooks").iterdir())
    body = run(a.base, a.reps, a.class_size, a.class_lesson, lessons)
    print(body)
    if not a.no_write:
        write_section("verdict", body)


if __name__ == "__main__":
    main()
