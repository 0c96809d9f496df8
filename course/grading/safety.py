"""Grading safety inside nbgrader: ``GuardedExecute``, nbgrader's Execute for a class of strangers.
Loaded by course/nbgrader_config.py.

What is decided where (see course/docs/INSTRUCTOR.md, "Threat model"):
- In the sandboxed kernel (course/grading/sandbox.py): the student's notebook runs, cell by cell,
  and defines the graded functions. A test cell holds only the visible tests; they run there too
  (the student sees them pass or fail) and decide nothing.
- In the grader, outside the kernel: every test cell (visible and hidden tests) runs in a process
  of its own (course/grading/verdict.py) that calls the kernel's functions with plain data
  (course/grading/boundary.py). Its verdict is the only error a graded cell keeps: the kernel's
  own errors and results in graded cells are dropped, so nothing the kernel publishes can pass or
  fail a test.
- Survival: a cell that kills the kernel or runs past its limit is skipped and the notebook re-run
  without it; a graded call that does so gets a fresh kernel and the remaining tests; output is
  capped per cell and per notebook.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from functools import partial
from pathlib import Path


def _cap_memory(limit: int) -> None:
    """In the verdict's child process, where ``prlimit`` is missing: cap its address space."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class _Replay(Exception):
    """A trusted call ran past its limit: replace the kernel, re-run the notebook, go on."""


def make_safety_classes():
    """Build the nbgrader preprocessors lazily (nbgrader is imported only inside nbgrader runs)."""
    from jupyter_core.utils import run_sync
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.v4 import new_output
    from nbgrader.preprocessors import Execute
    from nbgrader.utils import is_grade
    from traitlets import Bool, Integer, Unicode

    from course.grading import sandbox as sbx

    class GuardedExecute(Execute):
        """nbgrader's Execute, hardened for a class run of strangers.

        - The kernel runs in the bubblewrap sandbox (``sandbox = "bwrap"``, the default) with the
          limits below; ``sandbox = "none"`` runs it unsandboxed (only for trusted work).
        - Test cells run in the kernel as the student wrote them (visible tests only), then the
          trusted verdict (course/grading/verdict.py) runs every test cell in a process of its own
          against the kernel's functions; its result is the only error a graded cell keeps.
        - A cell that kills the kernel (os._exit, SIGKILL, a segfault, the memory limit) or runs
          past the time limit is given an error output, a fresh kernel is started, the cells before
          it are run again, and grading continues after it. After ``max_restarts`` restarts, or past
          ``notebook_timeout``, the remaining cells are not run (an error in each).
        Events are logged as ``GRADING-SAFETY: ...`` (course/grading/runner.py puts them in its report).
        """

        max_restarts = Integer(3, help="kernel restarts allowed per notebook").tag(config=True)
        notebook_timeout = Integer(1800, help="wall seconds for a whole notebook").tag(config=True)
        sandbox = Unicode("bwrap", help='"bwrap" (default) or "none" (UNSAFE)').tag(config=True)
        memory_mb = Integer(sbx.Limits.memory_mb, help="address-space cap (MiB)").tag(config=True)
        max_processes = Integer(sbx.Limits.processes, help="RLIMIT_NPROC").tag(config=True)
        file_mb = Integer(sbx.Limits.file_mb, help="largest file (MiB)").tag(config=True)
        workdir_mb = Integer(sbx.Limits.workdir_mb, help="work dir tmpfs (MiB)").tag(config=True)
        tmp_mb = Integer(sbx.Limits.tmp_mb, help="/tmp tmpfs (MiB)").tag(config=True)
        output_cell_kb = Integer(1024, help="output kept per cell while it runs (KiB)").tag(
            config=True
        )
        output_notebook_kb = Integer(8192, help="output kept per notebook (KiB)").tag(config=True)
        message_kb = Integer(16384, help="largest kernel message read (KiB)").tag(config=True)
        verdict_memory_mb = Integer(4096, help="address-space cap of the trusted tests' process "
                                    "(MiB)").tag(config=True)  # fmt: skip
        skip_demos = Bool(True, help="leave out the lesson's own demo cells that no graded "
                          "code needs (course/grading/demos.py)").tag(config=True)  # fmt: skip
        verdict_zygote = Unicode(
            "",
            help="socket of a warm verdict process for this lesson "
            "(course/grading/zygote.py; runner.autograde sets it for a class "
            "run); empty: each verdict process makes its own imports",
        ).tag(config=True)

        def _use_sandbox(self, resources) -> None:
            if self.sandbox == "none":
                self.log.warning("GRADING-SAFETY: sandbox off (trusted students): UNSAFE")
                return
            if self.sandbox != "bwrap":
                raise ValueError(
                    f'GuardedExecute.sandbox must be "bwrap" or "none", not {self.sandbox!r}'
                )
            reason = sbx.unavailable_reason()
            if reason:
                raise RuntimeError(f"grading sandbox unavailable: {reason}")
            limits = sbx.Limits(self.memory_mb, self.max_processes, self.file_mb, 1024,
                                    self.workdir_mb, self.tmp_mb)  # fmt: skip
            lesson = ((resources or {}).get("nbgrader") or {}).get("assignment")
            root = Path(self.config.get("CourseDirectory", {}).get("root", ".") or ".")
            dirs = [root / "release" / lesson] if lesson else []
            self.kernel_manager_class = sbx.kernel_manager_class(limits, dirs)
            self.log.info("SANDBOX-LIMITS: %s", json.dumps(limits.__dict__))
            if not sbx.process_cap_binds(limits.processes):  # root, and no pids cgroup
                self.log.warning("GRADING-SAFETY: grading as root and no pids cgroup can be "
                                 "made here: the process cap (%d) does not bind (see "
                                 "INSTRUCTOR.md)", limits.processes)  # fmt: skip

        def preprocess(self, nb, resources=None, km=None):
            from nbclient import NotebookClient

            NotebookClient.__init__(self, nb, km)
            self.reset_execution_trackers()
            self._check_assign_resources(resources)
            if km is None:
                self._use_sandbox(resources)
            lesson = ((resources or {}).get("nbgrader") or {}).get("assignment")
            verdicts: dict[str, dict] = {}
            self._verdict_rounds = 0  # a later round's kernel may know hidden arguments
            skipped: set[int] = set()
            deadline = time.monotonic() + self.notebook_timeout
            per_cell = self.timeout
            self._verdict_proc = None
            self._demo_skip = self._demos_to_skip(resources)
            try:
                self._run_rounds(lesson, verdicts, skipped, deadline, per_cell, resources)
            finally:
                self._end_verdict_process()
            self._drop_server()
            self.timeout = per_cell
            self._apply_verdicts(verdicts)
            self.set_widgets_metadata()
            return self.nb, self.resources

        def _demos_to_skip(self, resources) -> set[int]:
            """The submission's cells that need not run (course/grading/demos.py), judged against
            the course's release notebook of this lesson; each gets a line of output saying so.
            None of them when ``skip_demos`` is off, the release notebook is not there or the
            analysis fails."""
            from course.grading import demos

            nbg = (resources or {}).get("nbgrader") or {}
            lesson, name = nbg.get("assignment"), nbg.get("notebook")
            if not self.skip_demos or not lesson or not name:
                return set()
            root = Path(self.config.get("CourseDirectory", {}).get("root", ".") or ".")
            release = root / "release" / lesson / f"{name}.ipynb"
            try:
                lesson_cells = json.loads(release.read_text(encoding="utf-8"))["cells"]
            except (OSError, ValueError, KeyError, TypeError) as err:
                self.log.warning("GRADING-SAFETY: every cell runs: no release notebook to tell "
                                 "the lesson's demo cells by (%s)", err)  # fmt: skip
                return set()
            try:
                out = demos.skippable(self.nb.cells, demos.lesson_cells(lesson_cells))
            except Exception as err:  # noqa: BLE001 (never a reason not to grade: run them all)
                self.log.warning("GRADING-SAFETY: every cell runs: the demo-cell analysis "
                                 "failed (%s: %s)", type(err).__name__, err)  # fmt: skip
                return set()
            for i in out:
                self.nb.cells[i].outputs = [new_output("stream", name="stdout", text=demos.NOTE)]
                self.nb.cells[i].execution_count = None
            self.log.info("DEMO-SKIP: %d of %d code cells not run (lesson demo cells no graded "
                          "code needs)", len(out),
                          sum(c.cell_type == "code" for c in self.nb.cells))  # fmt: skip
            return out

        def _run_rounds(self, lesson, verdicts, skipped, deadline, per_cell, resources) -> None:
            """Run the notebook, then its verdict, on one kernel after another until every test
            cell has a verdict (or the restarts or the time are spent)."""
            final: int | None = None  # after too many restarts: run the cells before this one once
            restarts = 0
            while True:
                current = None
                self._warm_verdict(lesson)
                try:
                    # output counted afresh for each kernel: a re-run overwrites the outputs
                    self._out_cell, self._out_total, self._out_cut = {}, 0, set()
                    with self.setup_kernel():
                        info = self.wait_for_reply(self.kc.kernel_info())
                        self.nb.metadata["language_info"] = info["content"]["language_info"]
                        self._server = self._install_server(deadline)
                        for index, cell in enumerate(self.nb.cells):
                            if final is not None and index >= final:
                                break
                            if index in skipped or index in self._demo_skip:
                                continue
                            left = deadline - time.monotonic()
                            if left <= 0:
                                self.log.warning("GRADING-SAFETY: notebook time limit (%d s) reached "
                                                 "at cell %d", self.notebook_timeout, index)  # fmt: skip
                                for i, c in enumerate(self.nb.cells[index:], index):
                                    if c.cell_type == "code" and i not in self._demo_skip:
                                        self._fail(
                                            c,
                                            "NotRun",
                                            "the notebook's time limit was reached; not run",
                                        )
                                break
                            current = index
                            self.timeout = (
                                max(1, int(min(per_cell, left))) if per_cell else int(left)
                            )
                            self.preprocess_cell(cell, resources, index)
                        if self._verdict(lesson, verdicts, skipped, deadline, final):
                            raise _Replay()  # a call timed out or the kernel died: a fresh one
                    break
                except _Replay:
                    restarts += 1
                    self.log.warning("GRADING-SAFETY: a graded call ran past the time limit or "
                                     "killed the kernel; restarting the kernel")  # fmt: skip
                    if restarts > self.max_restarts or final is not None:
                        break
                    self.km = self.kc = None
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
                    if final is not None:
                        break
                    if restarts > self.max_restarts:
                        for i, cell in enumerate(self.nb.cells[current + 1 :], current + 1):
                            if cell.cell_type == "code" and i not in self._demo_skip:
                                self._fail(cell, "NotRun", "too many kernel restarts; not run")
                        final = current  # one last kernel: the cells before, then their verdict
                    self.km = self.kc = None

        async def async_start_new_kernel_client(self):
            """nbclient's, with ZeroMQ's MAXMSGSIZE set on the client's context before its sockets
            exist (an option set after connecting does nothing): a kernel message over
            ``message_kb`` is dropped before it is parsed, whatever the student prints."""
            import zmq

            km = self.km
            make, cap = km.client, self.message_kb * 1024

            def client(**kw):
                kc = make(**kw)
                kc.context.setsockopt(zmq.MAXMSGSIZE, cap)
                return kc

            km.client = client
            try:
                return await super().async_start_new_kernel_client()
            finally:
                km.client = make  # self.km may be gone if the client failed to start

        # nbclient's sync wrapper is bound to its own coroutine function: wrap ours the same way
        start_new_kernel_client = run_sync(async_start_new_kernel_client)

        def _update_display_id(self, display_id, msg):
            """Display updates count against the notebook's output cap too (nbclient applies them
            without going through ``output``)."""
            data = (msg.get("content") or {}).get("data") or {}
            size = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in data.values())
            copies = sum(len(ix) for ix in self._display_id_map.get(display_id, {}).values())
            size *= max(1, copies)  # the update is written into every output with that id
            if self._out_total + size > self.output_notebook_kb * 1024:
                return None
            self._out_total += size
            return super()._update_display_id(display_id, msg)

        def output(self, outs, msg, display_id, cell_index):
            """nbclient's output handler, bounded: past ``output_cell_kb`` in a cell or
            ``output_notebook_kb`` in the notebook, outputs are dropped and one marker says so."""
            content = msg.get("content") or {}
            size = len(str(content.get("text", ""))) + sum(
                len(v) if isinstance(v, str) else len(json.dumps(v))
                for v in (content.get("data") or {}).values()
            ) + sum(len(str(t)) for t in content.get("traceback", []) or [])  # fmt: skip
            used = self._out_cell.get(cell_index, 0)
            if (used + size > self.output_cell_kb * 1024
                    or self._out_total + size > self.output_notebook_kb * 1024):  # fmt: skip
                if cell_index not in self._out_cut:
                    self._out_cut.add(cell_index)
                    self.log.warning("GRADING-SAFETY: output of cell %d truncated", cell_index)
                    outs.append(new_output("stream", name="stdout", text=(
                        "\n[... output truncated by the grader: this cell printed more than "
                        f"{self.output_cell_kb} KiB, or the notebook more than "
                        f"{self.output_notebook_kb} KiB]\n")))  # fmt: skip
                return None
            self._out_cell[cell_index] = used + size
            self._out_total += size
            return super().output(outs, msg, display_id, cell_index)

        def _verdict(self, lesson: str, verdicts: dict, skipped: set, deadline: float,
                     final: int | None = None) -> bool:  # fmt: skip
            """Run the trusted tests (course/grading/verdict.py) against this kernel, in a process
            of their own with bounded memory; fill ``verdicts``; True when the kernel must be
            replaced (a call timed out, or the kernel died) and test cells are left."""
            pending = []
            for index, cell in enumerate(self.nb.cells):
                if cell.cell_type != "code" or not is_grade(cell):
                    continue
                gid = cell.metadata.nbgrader.get("grade_id")
                if gid in verdicts:
                    continue
                if final is not None and index >= final:
                    verdicts[gid] = {
                        "passed": False,
                        "message": "too many kernel restarts; not run",
                    }
                    continue
                if index in skipped:  # the cell itself killed the kernel or ran past its limit
                    err = next((o for o in cell.outputs if o.output_type == "error"), None)
                    verdicts[gid] = {"passed": False, "message": err.evalue if err else "not run"}
                    continue
                pending.append(gid)
            if not pending:
                return False
            left = max(5, int(deadline - time.monotonic()))
            per_cell = min(self.timeout or 120, left)
            proc = self._take_verdict_process(lesson)
            request = {"connection_file": self.km.connection_file, "cells": pending,
                       "timeout": per_cell, "hidden_seen": bool(self._verdict_rounds),
                       "server": getattr(self, "_server", None)}  # fmt: skip
            self._verdict_rounds += 1
            limit = min(per_cell * len(pending) + 60, max(60, deadline - time.monotonic() + 60))
            try:  # its stderr (warnings the student's code issued, a test's prints) is not kept
                out = proc.communicate(json.dumps(request) + "\n", timeout=limit)[0]
            except (subprocess.TimeoutExpired, OSError):  # OSError: it died before reading the
                proc.kill()  # request (its memory cap, a signal)
                try:  # a verdict forked from the class's warm process ends with its client: its
                    out = proc.communicate(timeout=30)[0]  # output ends then too
                except subprocess.TimeoutExpired:
                    out = ""
            finally:  # never left running (an interrupt in communicate included)
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            out = out or ""
            timed_out = False
            for line in out.splitlines()[: len(pending) + 1]:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "error" in rec:
                    # The channel could not be installed in the kernel: the notebook broke what it
                    # needs (threading, sockets, ...) or the environment is broken. Fail closed:
                    # every cell left earns nothing (the preflight canary, which grades the
                    # instructor's solution first, tells a broken environment apart).
                    self.log.warning("GRADING-SAFETY: the trusted verdict could not reach the "
                                     "kernel: %s", str(rec["error"])[:300])  # fmt: skip
                    for gid in pending:
                        verdicts.setdefault(gid, {
                            "passed": False,
                            "message": "the grader could not call your functions: the notebook "
                            "left its kernel unable to serve them (did it connect to, replace or "
                            "stop the kernel's grading server, or break the IPython kernel?)"})  # fmt: skip
                    return False
                if rec.get("grade_id") in pending:
                    verdicts[rec["grade_id"]] = rec
                    timed_out = timed_out or bool(rec.get("timeout"))
            if not timed_out:
                for gid in pending:  # fail closed: a cell without a verdict earns nothing
                    verdicts.setdefault(gid, {"passed": False,
                                              "message": "the grader could not run this test"})  # fmt: skip
            return timed_out and any(g not in verdicts for g in pending)

        def _install_server(self, deadline: float) -> str | None:
            """The kernel's grading server (course/grading/boundary.py), installed now, before the
            notebook's cells run: a notebook that then uses up its kernel's memory or threads
            cannot stop it from starting. None when it could not be (the verdict process then
            tries again after the notebook, and fails closed if that fails too). Within the
            notebook's time limit: a module the submission ships that shadows one the server
            imports (numpy.py) runs here, and can at most stop its own server."""
            from course.grading.boundary import ChannelError, install_server

            self._drop_server()
            try:
                left = max(5.0, deadline - time.monotonic())
                return install_server(self.km.connection_file, timeout=min(60.0, left))
            except (ChannelError, Exception) as err:  # noqa: BLE001
                self.log.warning("GRADING-SAFETY: the grading channel was not installed before "
                                 "the notebook ran: %s", str(err)[:300])  # fmt: skip
                return None

        def _drop_server(self) -> None:
            """Remove the last kernel's server socket if nothing connected to it (unsandboxed, it
            sits in a folder that outlives the kernel; a connected server removes its own name,
            and a sandbox's ipc folder, which the grader does not see by that path, goes with the
            sandbox)."""
            path, self._server = getattr(self, "_server", None), None
            if path:
                try:
                    if stat.S_ISSOCK(os.lstat(path).st_mode):
                        os.unlink(path)
                except OSError:
                    pass

        def _spawn_verdict(self, lesson: str) -> subprocess.Popen:
            """The trusted tests' process (course/grading/verdict.py ``--wait``), with bounded
            memory: it imports what the lesson's tests need, then waits for its request, so the
            imports run while the notebook does. In a class run (``verdict_zygote`` set by
            runner.autograde) it is a fork of a process that made those imports once for the whole
            class (course/grading/zygote.py), reached through a small client process that stands
            for it here (fed, read, timed out and killed as the verdict itself would be)."""
            from course.grading.zygote import ROOT, verdict_env

            cap = self.verdict_memory_mb * 1024 * 1024
            prlimit = shutil.which("prlimit")  # else the cap is set in the child (below)
            if self.verdict_zygote and os.path.exists(self.verdict_zygote):
                what = ["course.grading.zygote", "client", lesson, self.verdict_zygote, str(cap)]
            else:
                what = ["course.grading.verdict", lesson, "--wait"]
            cmd = [*([prlimit, f"--as={cap}", "--"] if prlimit else []),
                   sys.executable, "-m", *what]  # fmt: skip
            return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, env=verdict_env(),
                                    cwd=ROOT,
                                    preexec_fn=None if prlimit else partial(_cap_memory, cap))  # fmt: skip

        def _warm_verdict(self, lesson: str | None) -> None:
            """Have a waiting verdict process for the kernel about to run (one that was started
            for an earlier kernel and never asked is used again)."""
            proc = getattr(self, "_verdict_proc", None)
            if lesson and (proc is None or proc.poll() is not None):
                self._verdict_proc = self._spawn_verdict(lesson)

        def _take_verdict_process(self, lesson: str) -> subprocess.Popen:
            proc = getattr(self, "_verdict_proc", None)
            self._verdict_proc = None
            if proc is None or proc.poll() is not None:
                proc = self._spawn_verdict(lesson)
            return proc

        def _end_verdict_process(self) -> None:
            proc = getattr(self, "_verdict_proc", None)
            self._verdict_proc = None
            if proc is not None:
                proc.kill()
                try:
                    proc.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    pass

        def _apply_verdicts(self, verdicts: dict) -> None:
            """The graded cells' outputs: what the kernel printed (no error, no result: the kernel
            decides nothing), then the trusted verdict as the only error, when it failed."""
            for cell in self.nb.cells:
                if cell.cell_type != "code" or not is_grade(cell):
                    continue
                gid = cell.metadata.nbgrader.get("grade_id")
                v = verdicts.get(gid) or {
                    "passed": False,
                    "message": "not graded: too many kernel restarts or the notebook's time limit",
                }
                keep = [o for o in cell.outputs if o.output_type in ("stream", "display_data")]
                if not v.get("passed"):
                    msg = str(v.get("message") or "failed")
                    keep.append(new_output("error", ename="TestFailed", evalue=msg,
                                           traceback=[f"TestFailed: {msg}"]))  # fmt: skip
                cell.outputs = keep

        def _fail(self, cell, ename: str, evalue: str) -> None:
            cell.outputs = [
                new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])
            ]

    return GuardedExecute
