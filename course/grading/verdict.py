"""The trusted verdict: a lesson's test cells (visible and hidden tests) run in the grader's own
process, against the student's functions reached through course/grading/boundary.py.

    python -m course.grading.verdict LESSON CONNECTION_FILE [--cells ID,ID] [--timeout S]
    python -m course.grading.verdict LESSON --wait     (the request comes on stdin, see ``main``)

prints one JSON line per test cell, ``{"grade_id", "passed", "message", "timeout"}`` (the cells
whose visible tests failed first, then the others as their hidden tests finish), and stops after a
cell whose call ran past the time limit (the kernel is busy: the caller,
``GuardedExecute``, replaces it and asks again for the cells that are left). The kernel never sees a
test's source, a reference or an expected value: it receives function names and arguments.

What a student is told (``message``): for the visible tests, the assertion's own message (its source
is in the student's notebook); for the hidden tests, which contract clause failed (the
``# contract:`` tags of the hidden test, see tests/test_contracts.py), what the student's function
raised or returned that could not be used, and never the test's text or its expected values.

Two phases: the visible part of every cell runs first, then the hidden parts, each in its cell's
namespace. A visible failure's message carries what the student's function returned or raised;
once a hidden test has called the kernel, the kernel holds hidden arguments and could put them into
such a message, so every message after that point (and in a later round, ``--hidden-seen``) is
given in the hidden form.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from dataclasses import asdict, dataclass

from course.build_lessons import (
    TRUSTED_KERNEL,
    TRUSTED_PREAMBLE,
    TRUSTED_WARM,
    TrustedTest,
    graded_functions,
    trusted_tests,
)
from course.grading.boundary import (
    CallTimeout,
    Channel,
    ChannelBroken,
    ChannelError,
    KernelModule,
    Remote,
)

CONTRACT = re.compile(r"^\s*# contract: (.*)$")


@dataclass
class Verdict:
    grade_id: str
    passed: bool
    message: str = ""
    timeout: bool = False  # the kernel must be replaced (a call timed out, or the kernel died)


def _failing_line(err: BaseException, filename: str) -> int:
    """The line of the test cell's own top-level code that was running: the OUTERMOST frame of
    the test file, so a helper defined among the visible tests but called by a hidden test counts
    as hidden."""
    for frame, lineno in traceback.walk_tb(err.__traceback__):
        if frame.f_code.co_filename == filename:
            return lineno
    return 0


def _clause(test: TrustedTest, line: int) -> str:
    lines = test.code.splitlines()
    for i in range(min(line, len(lines)) - 1, test.hidden_line - 1, -1):
        m = CONTRACT.match(lines[i])
        if m:
            return m.group(1).strip()
    return ""


def explain(err: BaseException, test: TrustedTest, filename: str, hidden_seen: bool = False) -> str:
    """What the student may read about a failed test cell (``hidden_seen``: the kernel may already
    hold hidden arguments, so nothing it returned or raised is quoted)."""
    line = _failing_line(err, filename)
    hidden = bool(test.hidden_line) and line > test.hidden_line
    if hidden_seen and not hidden:
        fn = getattr(err, "course_function", None)
        if getattr(err, "course_student", False) and fn:
            return f"a visible test failed: {fn} raised {type(err).__name__}"
        return (
            f"a visible test failed: {type(err).__name__} (run the visible tests in your notebook)"
        )
    where = "a hidden test" if hidden else "a visible test"
    clause = _clause(test, line) if hidden else ""
    about = f" (contract clause: {clause})" if clause else ""
    fn = getattr(err, "course_function", None)
    if hidden:
        # Only names the grader chose: no message text (a hidden test's assertion message holds
        # its inputs and expected values; the student's own exception message could carry the
        # hidden arguments home), no text the kernel sent.
        if getattr(err, "course_student", False) and fn:
            what = f"{fn} raised {type(err).__name__}"
        elif isinstance(err, ChannelError):
            what = getattr(err, "public", "the grading channel failed")
        else:
            what = f"{type(err).__name__} in the test's checks of your answer"
    elif getattr(err, "course_student", False) and fn:
        what = f"{fn} raised {type(err).__name__}: {str(err)[:300]}"
    elif isinstance(err, ChannelError):
        what = str(err)[:400]
    else:
        what = f"{type(err).__name__}: {str(err)[:600]}"
    return f"{where} failed{about}: {what}"


def preamble(lesson: str) -> str:
    """The imports a lesson's trusted tests (and their reference copies) may use."""
    return TRUSTED_PREAMBLE["*"] + TRUSTED_PREAMBLE.get(lesson, "")


def one_thread() -> None:
    """Run the trusted tests' numerics on one thread. Their own work is small (stand-in models of a
    few thousand weights, references of a few rows) and alternates with the kernel's, call by call:
    a second torch (OpenMP) thread only spins on a core the kernel is waiting for, and costs
    both wall and CPU time on 9.5 (measured in the commit that made this change; the grading cost
    is in BENCHMARKS.md, "Trusted verdict"). Covers torch imported before or after the call (the
    environment variable is read when torch starts)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def warm(lesson: str) -> None:
    """Import what the lesson's tests will import (torch, transformers, helpers...) and read its
    tests, before any kernel is reached: ``--wait`` does this while the notebook is still running."""
    try:  # only ever a head start: what fails here fails again, reported, when the tests run
        exec(preamble(lesson) + TRUSTED_WARM.get(lesson, ""), {"__name__": "__course_warm__"})
        if lesson in TRUSTED_KERNEL:
            kernel_names(lesson)
        trusted_tests(lesson)
        graded_functions(lesson)
    except Exception:  # noqa: BLE001
        pass


def kernel_names(lesson: str) -> list[str]:
    """The names a lesson's trusted tests call in the kernel (``TRUSTED_KERNEL``'s module)."""
    module = TRUSTED_KERNEL.get(lesson)
    if module is None:
        return []
    import importlib

    return list(importlib.import_module(module).__all__)


def _namespace(channel: Channel, functions: list[str], lesson: str) -> dict:
    """A test cell's globals: the preamble, the kernel's stand-ins, the graded functions."""
    ns: dict = {"__name__": "__course_test__"}
    exec(preamble(lesson), ns)
    if lesson in TRUSTED_KERNEL:
        kernel = KernelModule(channel, TRUSTED_KERNEL[lesson])
        for name in kernel_names(lesson):
            ns[name] = getattr(kernel, name)
    for name in functions:
        ns[name] = Remote(channel, name)
    return ns


def _parts(test: TrustedTest) -> tuple[str, str]:
    """(visible code, hidden code padded with blank lines so its line numbers are the cell's)."""
    if not test.hidden_line:
        return test.code, ""
    lines = test.code.splitlines()
    cut = test.hidden_line - 1
    return "\n".join(lines[:cut]), "\n" * cut + "\n".join(lines[cut:])


def _run(channel: Channel, test: TrustedTest, code: str, ns: dict, timeout: float,
         hidden_seen: bool) -> Verdict | None:  # fmt: skip
    """Run ``code`` (a part of ``test``) in ``ns``; a failed Verdict, or None when it passed."""
    filename = f"<tests {test.grade_id}>"
    channel.deadline = time.monotonic() + timeout
    try:
        exec(compile(code, filename, "exec"), ns)
    except CallTimeout:
        msg = (
            f"a call of your function ran past the time limit ({timeout:.0f} s for this test cell)"
        )
        return Verdict(test.grade_id, False, msg, timeout=True)
    except ChannelBroken:  # the kernel died (or closed the channel) during this cell
        msg = "the kernel died while your function ran (a crash, os._exit, or the memory limit)"
        return Verdict(test.grade_id, False, msg, timeout=True)
    except BaseException as err:  # noqa: BLE001 - every failure of a test is a failed test
        return Verdict(test.grade_id, False, explain(err, test, filename, hidden_seen))
    finally:
        channel.deadline = None
    return None


def run_lesson(channel: Channel, lesson: str, cells: list[str] | None = None,
               timeout: float = 120.0, hidden_seen: bool = False):  # fmt: skip
    """Yield the verdict of each test cell (all, or ``cells``): first every cell's visible tests,
    then the hidden tests of the cells whose visible tests passed; stop after a timeout."""
    tests = trusted_tests(lesson)
    functions = graded_functions(lesson)
    started = []
    for gid in cells or list(tests):
        if gid not in tests:
            yield Verdict(gid, False, f"no test cell {gid!r} in lesson {lesson}")
            continue
        ns = _namespace(channel, functions, lesson)
        failed = _run(channel, tests[gid], _parts(tests[gid])[0], ns, timeout, hidden_seen)
        if failed:
            yield failed
            if failed.timeout:
                return
        else:
            started.append((gid, ns))
    while started:
        gid, ns = started.pop(0)  # its namespace (and the kernel objects it holds) freed after
        hidden = _parts(tests[gid])[1]
        failed = _run(channel, tests[gid], hidden, ns, timeout, True) if hidden else None
        del ns
        yield failed or Verdict(gid, True)
        if failed and failed.timeout:
            return


def main(argv: list[str] | None = None) -> int:
    """Run the tests and print the verdicts. With ``--wait`` the process first imports what the
    lesson needs (``warm``), then reads one request line on stdin, a JSON object
    ``{"connection_file", "cells", "timeout", "hidden_seen", "server"}`` (the caller,
    GuardedExecute, starts it when a kernel starts, installs the kernel's grading server before the
    notebook runs and sends the request, with that server's socket, when the notebook has run; a
    request without ``server`` installs it now); end of input or a request that is not one stops
    it without a verdict."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lesson")
    ap.add_argument("connection_file", nargs="?")
    ap.add_argument("--cells", default="", help="comma-separated test cell ids (default: all)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per test cell")
    ap.add_argument("--hidden-seen", action="store_true",
                    help="hidden tests already ran against this notebook (an earlier kernel): "
                    "quote nothing the kernel sends in any message")  # fmt: skip
    ap.add_argument(
        "--wait", action="store_true", help="import first, then read the request (JSON) from stdin"
    )
    args = ap.parse_args(argv)
    if not args.wait and not args.connection_file:
        ap.error("a connection file is needed (or --wait)")
    # The verdicts go to the original stdout; everything else this process prints (a test, a
    # library, a value of the student's) goes to stderr, so nothing can forge a verdict line.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    one_thread()
    cells = [c for c in args.cells.split(",") if c] or None
    connection_file, timeout, hidden_seen = args.connection_file, args.timeout, args.hidden_seen
    server = None
    if args.wait:
        warm(args.lesson)
        one_thread()  # torch, when warm imported it
        try:
            req = json.loads(sys.stdin.readline() or "null")
            connection_file = str(req["connection_file"])
            cells = [str(c) for c in req.get("cells") or []] or None
            timeout = float(req.get("timeout", timeout))
            hidden_seen = bool(req.get("hidden_seen"))
            server = None if req.get("server") is None else str(req["server"])
        except (ValueError, TypeError, KeyError):
            return 0  # no request (the caller no longer needs this process)
    try:
        channel = Channel(connection_file, timeout=timeout, server=server)
    except (ChannelError, Exception) as err:  # noqa: BLE001
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}), file=out, flush=True)
        return 2
    try:
        for v in run_lesson(channel, args.lesson, cells, timeout, hidden_seen):
            print(json.dumps(asdict(v)), file=out, flush=True)
    finally:
        channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
