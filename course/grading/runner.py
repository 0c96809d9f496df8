"""The class run: every student graded by its own ``nbgrader autograde`` process, in the sandbox,
against its own copy of the gradebook; the copies are merged into gradebook.db one at a time.

One student cannot stop or change anyone else's grading: its kernel runs in the sandbox (no view of
host processes, of the course, of the gradebook, of other students), its nbgrader process writes
only a private gradebook copy and a private TMPDIR, and the process group is killed after a wall
limit. A student whose grading fails (or who scores 0) is listed with a reason in
``autograded/report-<lesson>.json``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course.grading import common, sandbox, zygote
from course.grading.common import ROOT, db_url, nbgrader, nbgrader_env

UNSAFE = ("NONE (--trusted-students): student code ran with the instructor's rights, network and "
          "files; UNSAFE for work from strangers")  # fmt: skip
# The nbgrader process of one student is killed after notebook_timeout + this (its own limit fires
# first; this is the backstop for a grader that hangs).
BACKSTOP_S = 300


def _ensure_assignment(lesson: str, root: Path) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url(root)) as gb:
        try:
            gb.find_assignment(lesson)
            return
        except MissingEntry:
            pass
    nbgrader("generate_assignment", lesson, "--force", root=root)


def _printable(text: str) -> str:
    """Text a student's kernel may have chosen, safe for the instructor's terminal and report."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", "?", text)


def _reason(text: str, returncode: int) -> str:
    for pattern, reason in [
        (r"grading sandbox unavailable: (.*)", None),
        (r"DeadKernelError|Kernel died", "the kernel died"),
        (r"CellTimeoutError|Timeout waiting", "a cell exceeded the time limit"),
        (r"NotJSONError|Notebook does not appear to be JSON|Unreadable Notebook", "unreadable notebook"),
        (r"KeyError", "nbgrader could not match the notebook's cells (cells deleted?)"),
    ]:  # fmt: skip
        m = re.search(pattern, text)
        if m:
            return reason or m.group(0)
    lines = [ln for ln in text.splitlines() if "[AutogradeApp | ERROR]" in ln or "Error" in ln]
    return lines[-1].strip() if lines else f"nbgrader exited with status {returncode}"


def _errors(nb_path: Path) -> list[str]:
    """One line per cell with an error output in the autograded notebook (what the student's code
    ran into: PermissionError, read-only file system, no network, MemoryError, ...)."""
    try:
        nb = json.loads(nb_path.read_text())
    except (OSError, ValueError):
        return []
    out = []
    for i, c in enumerate(nb.get("cells", [])):
        errs = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
        if not errs:
            continue
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {i}"
        e = errs[0]
        out.append(_printable(f"{gid}: {e.get('ename')}: {str(e.get('evalue', ''))[:160]}"))
    return out[:40]


def _score(url: str, lesson: str, student: str) -> tuple[float, float] | None:
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(url) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sub = gb.find_submission(lesson, student)
        except MissingEntry:
            return None
        return float(sub.code_score), float(sub.max_code_score)


def _unsafe_files(folder: Path) -> str | None:
    """Why a submission folder must not be graded (nbgrader would follow a symlink), or None."""
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            return f"the submission holds a symlink ({p.relative_to(folder)}): refused, not graded"
        if not (p.is_file() or p.is_dir()):
            return f"the submission holds a special file ({p.relative_to(folder)}): refused"
    return None


def _grade_one(lesson: str, student: str, root: Path, url: str, extra: list[str],
               wall_s: int) -> dict:  # fmt: skip
    """One student's nbgrader process: own session, own TMPDIR, killed (whole group) at ``wall_s``."""
    folder = root / "submitted" / student / lesson
    why = _unsafe_files(folder) if not folder.is_symlink() else "the submission folder is a symlink"
    if why:
        return {"student": student, "ok": False, "reason": why}
    # a short prefix: the sandbox's Unix sockets live under it, and a socket path has at most
    # 107 bytes (a long student id would make the kernel or the grading channel fail to start)
    tmp = tempfile.mkdtemp(prefix=f"g{hashlib.sha256(student.encode()).hexdigest()[:8]}-")
    env = nbgrader_env(root, TMPDIR=tmp)
    cmd = [*common.NBGRADER, "autograde", lesson, "--force", "--student", student,
           f"--CourseDirectory.db_url={url}", *extra]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
    try:
        text, _ = proc.communicate(timeout=wall_s)
        killed = False
    except subprocess.TimeoutExpired:
        killed = True
        text = ""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind (trusted mode included)
        except ProcessLookupError:
            pass
        if killed:
            text = proc.communicate()[0] or ""
        shutil.rmtree(tmp, ignore_errors=True)
    done = (root / "autograded" / student / lesson).is_dir()
    rec: dict = {"student": student, "ok": proc.returncode == 0 and done and not killed}
    if killed:
        rec["reason"] = f"grading ran past {wall_s} s and was stopped"
    elif not rec["ok"]:
        rec["reason"] = _printable(_reason(text, proc.returncode))
    if rec["ok"]:
        score = _score(url, lesson, student)
        if score is not None:
            rec["score"], rec["max_score"] = score
    limits = re.findall(r"SANDBOX-LIMITS: (\{.*\})", text)
    if limits:
        rec["limits"] = json.loads(limits[-1])
    events = sorted(set(re.findall(r"GRADING-SAFETY: (.*)", text)))
    if events:
        rec["safety_events"] = events
    errors = _errors(root / "autograded" / student / lesson / f"{lesson}.ipynb") if done else []
    if errors:
        rec["errors"] = errors
    if rec["ok"] and rec.get("score") == 0:
        rec["reason"] = "0 points: " + ("; ".join(errors[:3]) if errors else "no test passed")
    return rec


def _merge(lesson: str, student: str, src_url: str, dst_url: str) -> None:
    """Copy one student's autograded results for one lesson from a private gradebook into the main one."""
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


# Canary students: names a real student id can never take (course/grading/collect.py maps every
# character outside [A-Za-z0-9_.-] to "_"), graded in a private gradebook and removed afterwards.
CANARIES = {"canary+solution": "source_notebooks", "canary+empty": "release"}


def preflight(lesson: str, root: Path, extra: list[str], wall_s: int,
              workers: int = 2) -> str | None:  # fmt: skip
    """Grade the instructor's solution and the untouched release in the same sandbox with the same
    settings as the class (side by side when there are two workers); None when they score full
    marks and zero, else why the class must not be graded (an environment where the sandbox
    cannot import ``helpers`` grades every student as if they had written nothing)."""

    def canary(sid: str, folder: str) -> str | None:
        dest = root / "submitted" / sid / lesson
        try:
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy(root / folder / lesson / f"{lesson}.ipynb", dest / f"{lesson}.ipynb")
            now = dt.datetime.now(dt.UTC)
            (dest / "timestamp.txt").write_text(now.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
            with tempfile.TemporaryDirectory(prefix="canary-") as tmp:
                shutil.copy(root / "gradebook.db", Path(tmp) / "c.db")
                rec = _grade_one(
                    lesson, sid, root, f"sqlite:///{Path(tmp) / 'c.db'}", extra, wall_s
                )
        finally:
            for top in ("submitted", "autograded", "feedback"):
                shutil.rmtree(root / top / sid, ignore_errors=True)
        score, top = rec.get("score"), rec.get("max_score")
        if not rec["ok"] or score is None:
            return f"{sid}: grading failed ({rec.get('reason')})"
        if sid == "canary+solution" and not top:
            return "the instructor's solution had no points to earn (no autograded test cell?)"
        if sid == "canary+solution" and score != top:
            errs = "; ".join(rec.get("errors", [])[:3]) or "no error shown"
            return f"the instructor's solution scored {score:g}/{top:g} ({errs})"
        if sid == "canary+empty" and score != 0:
            return f"the untouched release scored {score:g}/{top:g} (it must score 0)"
        return None

    with ThreadPoolExecutor(max(1, min(workers, len(CANARIES)))) as pool:
        found = list(pool.map(lambda kv: canary(*kv), CANARIES.items()))
    problems = [p for p in found if p]
    if not problems:
        return None
    return ("preflight failed, no student was graded: " + "; ".join(problems) + ". Fix: check "
            "that the sandbox can import helpers and the lesson's data (./baselm.sh for 9.5), "
            "that release/ was generated from today's source_notebooks/ "
            "(python -m course.instructor release), and the grader's settings; then grade again.")  # fmt: skip


def autograde(
    lesson: str,
    students: list[str] | None = None,
    workers: int = 2,
    timeout: int | None = None,
    root: Path = ROOT,
    trusted: bool = False,
    notebook_timeout: int | None = None,
    check: bool = True,
) -> dict:
    """Autograde ``students`` (default: everyone in submitted/ with this lesson) and write a report.

    ``timeout``: seconds per cell (default: the config's 120); ``notebook_timeout``: per notebook
    (default 1800). ``trusted=True`` grades without the sandbox (refused otherwise when the sandbox
    cannot start). ``check=True`` runs ``preflight`` first and stops (SystemExit) when the
    instructor's solution does not get full marks or the release does not get zero. Returns the report: {"lesson", "sandbox", "graded": [...], "failed": [{"student",
    "reason"}], "zero": [{"student", "reason"}], "students": {id: record}, "safety_events": {...}}.
    """
    if not trusted:
        why = sandbox.unavailable_reason()
        if why:
            raise SystemExit(f"autograde refuses to run untrusted code without its sandbox: {why}")
    _ensure_assignment(lesson, root)
    if students is None:
        students = sorted(
            p.parent.name for p in (root / "submitted").glob(f"*/{lesson}") if p.is_dir()
        )
    extra = [f"--GuardedExecute.sandbox={'none' if trusted else 'bwrap'}"]
    if timeout:
        extra.append(f"--Execute.timeout={timeout}")
    nb_limit = notebook_timeout or 1800
    if notebook_timeout:
        extra.append(f"--GuardedExecute.notebook_timeout={notebook_timeout}")
    students = [s for s in students if s not in CANARIES]
    workers = max(1, min(workers, len(students) or 1))
    mode = UNSAFE if trusted else "bubblewrap"
    # one warm verdict process for the class: the tests' imports made once, not per student
    with zygote.warm_process(lesson) as (sock, warm_status):
        extra = [*extra, f"--GuardedExecute.verdict_zygote={sock}"]
        if check:
            print(f"preflight: grading the solution and the untouched release of {lesson} "
                  "in the same sandbox", flush=True)  # fmt: skip
            why = preflight(lesson, root, extra, nb_limit + BACKSTOP_S, workers)
            if why:
                raise SystemExit(why)
            print("preflight: solution full marks, release zero", flush=True)
        print(f"$ nbgrader autograde {lesson} --force --student <id>   # {len(students)} students, "
              f"{workers} worker(s), a private gradebook each, merged into gradebook.db; "
              f"sandbox: {mode}", flush=True)  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="autograde-") as tmp:
            urls = {}
            for k, s in enumerate(students):
                shutil.copy(root / "gradebook.db", Path(tmp) / f"s{k}.db")
                urls[s] = f"sqlite:///{Path(tmp) / f's{k}.db'}"

            done = [0]
            lock = threading.Lock()

            def run(s: str) -> dict:
                t0 = time.monotonic()
                rec = _grade_one(lesson, s, root, urls[s], extra, nb_limit + BACKSTOP_S)
                with lock:
                    done[0] += 1
                    what = (f"{rec['score']:g}/{rec['max_score']:g}" if "score" in rec
                            else f"FAILED: {rec.get('reason')}")  # fmt: skip
                    print(f"  [{done[0]}/{len(students)}] {s}: {what} ({time.monotonic() - t0:.0f} s)",
                          flush=True)  # fmt: skip
                return rec

            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(run, students))
            for rec in results:  # sequential: one writer on gradebook.db
                if rec["ok"]:
                    _merge(lesson, rec["student"], urls[rec["student"]], db_url(root))
        verdict_forks, stopped = warm_status()
    if stopped or (results and not verdict_forks):
        print("  note: the class's warm verdict process was not used (each verdict made its own "
              f"imports; the grades are not affected): {stopped or 'no verdict asked it'}",
              flush=True)  # fmt: skip
    report = {
        "lesson": lesson,
        "sandbox": mode,
        "limits": next((r["limits"] for r in results if r.get("limits")), {}),
        "verdict_forks": verdict_forks,  # verdicts forked from the class's warm process
        # "passed": the solution got full marks and the release zero before any student
        "preflight": "passed" if check else "skipped",
        "graded": [r["student"] for r in results if r["ok"]],
        "failed": [
            {"student": r["student"], "reason": r["reason"]} for r in results if not r["ok"]
        ],
        "zero": [
            {"student": r["student"], "reason": r["reason"]}
            for r in results
            if r["ok"] and r.get("score") == 0
        ],
        "students": {
            r["student"]: {k: v for k, v in r.items() if k not in ("student", "limits")}
            for r in results
        },
        "safety_events": {
            r["student"]: r["safety_events"] for r in results if r.get("safety_events")
        },
    }
    (root / "autograded").mkdir(exist_ok=True)
    (root / "autograded" / f"report-{lesson}.json").write_text(json.dumps(report, indent=2))
    print(f"graded {len(report['graded'])}, failed {len(report['failed'])}: "
          f"{root / 'autograded' / f'report-{lesson}.json'}")  # fmt: skip
    if trusted:
        print(f"  SANDBOX: {UNSAFE}")
    for f in report["failed"]:
        print(f"  FAILED {f['student']}: {f['reason']}")
    for s, ev in report["safety_events"].items():
        print(f"  grading-safety events for {s}: {'; '.join(ev)}")
    return report
