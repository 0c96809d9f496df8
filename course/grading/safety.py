"""Grading safety inside nbgrader: ``GuardedExecute`` (sandboxed kernel, tamper guard, a verdict
that is not the kernel's alone, survival of killed kernels and runaway cells, a notebook time limit)
and ``RedactHiddenTests`` (feedback without hidden tests). Loaded by course/nbgrader_config.py.

What is decided where (see course/INSTRUCTOR.md, "Threat model"):
- Outside the kernel, by the grader: a graded cell fails if the kernel's execute reply says error,
  if any error output was published, or if the guard's check does not come back with this run's
  secret token. An ``execute_result`` published before an error (``sys.displayhook("ok")``) no
  longer counts as a result: nbgrader's ``determine_grade`` stops at the first execute_result, so
  execute_results are dropped from a failed graded cell.
- Inside the kernel, before every graded test cell: numpy/math/builtins/torch, the IPython shell
  (run_cell, showtraceback, ... and the kernel's own methods), its event hooks and input/AST
  transformers, sys.displayhook/excepthook, trace and profile functions are restored from a snapshot
  taken before the student's first cell; test cells run with store_history=False and their source
  is purged from linecache afterwards, so a later student cell cannot read them.
- In feedback: besides the hidden part of each test cell, any output line of ANY cell that repeats
  a hidden-test line is removed (whatever the kernel did to obtain it).
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

from course.build_lessons import HIDDEN_BEGIN, HIDDEN_END, HIDDEN_NOTE  # one delimiter, one note

# The guard lives in the kernel under a name drawn per notebook (NAME, TOKEN are replaced): code
# that replaces a guard it finds by the well-known name replaces nothing.
GUARD_SETUP = r"""
def _nbg_make_guard():
    import builtins, importlib, linecache, sys, threading, types
    names = ["builtins", "math", "cmath", "operator", "numpy", "numpy.testing",
             "numpy.testing._private.utils", "numpy.linalg", "linecache", "threading"] + EXTRA
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
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    classes = [c for obj in (shell, kernel, getattr(shell, "events", None),
                             getattr(shell, "displayhook", None)) if obj is not None
               for c in type(obj).__mro__ if c is not object]
    cls_snap = [(c, dict(vars(c))) for c in classes]
    inst = [o for o in (shell, kernel, getattr(shell, "events", None)) if o is not None]
    inst_snap = [(o, {k: v for k, v in vars(o).items() if callable(v)}) for o in inst]
    events = {k: list(v) for k, v in shell.events.callbacks.items()}
    lists = {a: list(getattr(shell, a)) for a in ("input_transformers_cleanup",
             "input_transformers_post", "ast_transformers") if hasattr(shell, a)}
    hooks = {"displayhook": sys.displayhook,
             "stdout": sys.stdout, "stderr": sys.stderr}
    lib = (sys.prefix, sys.base_prefix)
    def _library(f):  # a hook that library code registered (matplotlib's inline backend)
        code = getattr(f, "__code__", None) or getattr(getattr(f, "__func__", None), "__code__", None)
        return code is not None and code.co_filename.startswith(lib)
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
        for c, d in cls_snap:
            now = vars(c)
            for k in set(d) | set(now):
                if k not in ("__dict__", "__weakref__", "__doc__") and now.get(k, check) is not d.get(k, check):
                    changed.append(f"{c.__name__}.{k}")
                    if fix:
                        try:
                            setattr(c, k, d[k]) if k in d else delattr(c, k)
                        except Exception:
                            pass
        for o, d in inst_snap:
            for k, v in list(vars(o).items()):
                if (k in d and v is not d[k]) or (k not in d and callable(getattr(type(o), k, None))):
                    changed.append(f"{type(o).__name__}().{k}")
                    if fix:
                        if k in d:
                            vars(o)[k] = d[k]
                        else:
                            del vars(o)[k]
        for k, v in shell.events.callbacks.items():
            bad = [f for f in v if f not in events.get(k, []) and not _library(f)]
            if bad:
                changed.append(f"event hook {k}")
                if fix:
                    v[:] = [f for f in v if f not in bad]
        for a, v in lists.items():
            if getattr(shell, a) != v:
                changed.append(f"shell.{a}")
                if fix:
                    getattr(shell, a)[:] = v
        for a, v in hooks.items():
            if getattr(sys, a) is not v:
                changed.append(f"sys.{a}")
                if fix:
                    setattr(sys, a, v)
        if sys.gettrace() is not None or sys.getprofile() is not None:
            changed.append("sys.settrace/setprofile")
            if fix:
                sys.settrace(None)
                sys.setprofile(None)
        for a, n in aliases.items():
            if n in mods and a in ns and ns[a] is not mods[n]:
                changed.append(f"the name {a!r}")
                if fix:
                    ns[a] = mods[n]
        return changed
    def purge():
        for k, v in list(linecache.cache.items()):
            if any("BEGIN HIDDEN TESTS" in ln for ln in (v[2] if len(v) > 2 else [])):
                del linecache.cache[k]
    check.purge = purge
    return check
import sys as _nbg_sys
setattr(_nbg_sys, "NAME", _nbg_make_guard())
del _nbg_make_guard, _nbg_sys
"""
GUARD_RESTORE = "import sys as _nbg_s\nprint('TOKEN:' + repr(getattr(_nbg_s, 'NAME')(globals(), True)))\ndel _nbg_s"
GUARD_VERIFY = (
    "import sys as _nbg_s\ngetattr(_nbg_s, 'NAME').purge()\n"
    "print('TOKEN:' + repr(getattr(_nbg_s, 'NAME')(globals(), False)))\ndel _nbg_s"
)


class _Replay(Exception):
    """A trusted call ran past its limit: replace the kernel, re-run the notebook, go on."""


def make_safety_classes():
    """Build the nbgrader preprocessors lazily (nbgrader is imported only inside nbgrader runs)."""
    from jupyter_core.utils import run_sync
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat import NotebookNode
    from nbformat.v4 import new_code_cell, new_output
    from nbgrader.preprocessors import Execute, NbGraderPreprocessor
    from nbgrader.utils import is_grade
    from traitlets import Integer, Unicode

    from course.grading import sandbox as sbx

    class GuardedExecute(Execute):
        """nbgrader's Execute, hardened for a class run of strangers.

        - The kernel runs in the bubblewrap sandbox (``sandbox = "bwrap"``, the default) with the
          limits below; ``sandbox = "none"`` runs it unsandboxed (only for trusted work).
        - Before the first cell, a snapshot of numpy, numpy.testing, math, builtins (and torch when the
          notebook imports it), the IPython shell and its hooks is taken in the kernel. Before every
          graded test cell they are restored; after it, they are checked again: if they changed
          while the cell ran (the student's function patched them), the cell fails.
        - A graded cell fails when it published an error (or the reply said error); then an
          execute_result it published does not count (``determine_grade`` would stop at it).
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

        def _hidden(self, code: str, index: int) -> list[str]:
            code = code.replace("NAME", self._guard_name).replace("TOKEN", self._guard_token)
            cell, slot = new_code_cell(code), self.nb.cells[index]
            self._uncapped = True  # the guard's own answer is never cut by the output caps
            try:
                self.execute_cell(cell, index, store_history=False)
            finally:
                self._uncapped = False
            self.nb.cells[index] = slot  # nbclient stores the executed cell at its index
            out = []
            for o in cell.outputs:
                if o.output_type == "stream" and o.name == "stdout":
                    out += re.findall(re.escape(self._guard_token) + r":(.*)", o.text)
                if o.output_type == "error":
                    out.append("ERROR")
            return out

        def _guard_changes(self, code: str, index: int) -> list[str] | None:
            found = self._hidden(code, index)
            if len(found) != 1 or found[0] == "ERROR":
                return None  # the guard is gone or its answer was forged: fail closed
            try:
                return ast.literal_eval(found[0])
            except (ValueError, SyntaxError):
                return None

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

        def preprocess(self, nb, resources=None, km=None):
            from nbclient import NotebookClient

            NotebookClient.__init__(self, nb, km)
            self.reset_execution_trackers()
            self._check_assign_resources(resources)
            if km is None:
                self._use_sandbox(resources)
            lesson = ((resources or {}).get("nbgrader") or {}).get("assignment")
            from course.build_lessons import TRUSTED_VERDICT

            self._trusted = lesson in TRUSTED_VERDICT
            verdicts: dict[str, dict] = {}
            self._guard_name = "_g" + secrets.token_hex(8)
            self._guard_token = "T" + secrets.token_hex(8)
            source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
            extra = (
                ["torch", "torch.testing"]
                if re.search(r"^\s*(import|from) torch", source, re.M)
                else []
            )
            setup = GUARD_SETUP.replace("EXTRA", repr(extra))
            skipped: set[int] = set()
            final: int | None = None  # after too many restarts: run the cells before this one once
            restarts = 0
            deadline = time.monotonic() + self.notebook_timeout
            per_cell = self.timeout
            while True:
                current = None
                try:
                    # output counted afresh for each kernel: a re-run overwrites the outputs
                    self._out_cell, self._out_total, self._out_cut = {}, 0, set()
                    with self.setup_kernel():
                        info = self.wait_for_reply(self.kc.kernel_info())
                        self.nb.metadata["language_info"] = info["content"]["language_info"]
                        if not self._trusted:
                            self._hidden(setup, 0)
                        for index, cell in enumerate(self.nb.cells):
                            if final is not None and index >= final:
                                break
                            if index in skipped:
                                continue
                            left = deadline - time.monotonic()
                            if left <= 0:
                                self.log.warning("GRADING-SAFETY: notebook time limit (%d s) reached "
                                                 "at cell %d", self.notebook_timeout, index)  # fmt: skip
                                for c in self.nb.cells[index:]:
                                    if c.cell_type == "code":
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
                            self._run_cell(cell, resources, index)
                        if self._trusted and self._verdict(
                            lesson, verdicts, skipped, deadline, final
                        ):
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
                        for cell in self.nb.cells[current + 1 :]:
                            if cell.cell_type == "code":
                                self._fail(cell, "NotRun", "too many kernel restarts; not run")
                        if not self._trusted:
                            break
                        final = current  # one last kernel: the cells before, then their verdict
                    self.km = self.kc = None
            self.timeout = per_cell
            if self._trusted:
                self._apply_verdicts(verdicts)
            self.set_widgets_metadata()
            return self.nb, self.resources

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
            if getattr(self, "_uncapped", False):
                return super().output(outs, msg, display_id, cell_index)
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
            limit_as = f"--as={self.verdict_memory_mb * 1024 * 1024}"
            cmd = [*(["prlimit", limit_as, "--"] if shutil.which("prlimit") else []),
                   sys.executable, "-m", "course.grading.verdict", lesson,
                   self.km.connection_file, "--cells", ",".join(pending),
                   "--timeout", str(per_cell)]  # fmt: skip
            root = str(Path(__file__).resolve().parents[2])
            env = {k: v for k, v in os.environ.items() if not k.startswith("NBGRADER_")}
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
            try:  # its stderr (warnings the student's code issued, a test's prints) is not kept
                out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env, cwd=root,
                                     timeout=min(per_cell * len(pending) + 60,
                                                 max(60, deadline - time.monotonic() + 60)),
                                     ).stdout  # fmt: skip
            except subprocess.TimeoutExpired as err:
                out = (
                    (err.stdout or b"").decode()
                    if isinstance(err.stdout, bytes)
                    else (err.stdout or "")
                )
            timed_out = False
            for line in out.splitlines()[: len(pending) + 1]:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "error" in rec:  # the grader's failure, not the student's: no grade at all
                    raise RuntimeError(f"the trusted verdict could not reach the kernel: "
                                       f"{str(rec['error'])[:300]}")  # fmt: skip
                if rec.get("grade_id") in pending:
                    verdicts[rec["grade_id"]] = rec
                    timed_out = timed_out or bool(rec.get("timeout"))
            if not timed_out:
                for gid in pending:  # fail closed: a cell without a verdict earns nothing
                    verdicts.setdefault(gid, {"passed": False,
                                              "message": "the grader could not run this test"})  # fmt: skip
            return timed_out and any(g not in verdicts for g in pending)

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

        def _run_cell(self, cell, resources, index) -> None:
            graded = cell.cell_type == "code" and is_grade(cell) and not self._trusted
            if not graded:
                self.preprocess_cell(cell, resources, index)
                return
            gid = cell.metadata.nbgrader.get("grade_id")
            changed = self._guard_changes(GUARD_RESTORE, index)
            if changed:
                self.log.warning("GRADING-SAFETY: restored before %s: %s", gid, ", ".join(changed))
            restore_failed = changed is None
            # store_history=False: the test's source does not reach In/_ih/the history database
            self.execute_cell(cell, index, store_history=False)
            changed = self._guard_changes(GUARD_VERIFY, index)
            if restore_failed or changed is None or changed:
                what = (
                    "the grading guard was removed or its answer forged"
                    if restore_failed or changed is None
                    else ", ".join(changed)
                )
                self.log.warning("GRADING-SAFETY: %s modified during %s: cell failed", what, gid)
                cell.outputs.append(new_output("error", ename="GradingEnvironmentModified",
                    evalue=f"modified while the tests ran: {what}", traceback=[]))  # fmt: skip
            if any(o.output_type == "error" for o in cell.outputs):
                # a failed cell has no result: determine_grade would award an earlier execute_result
                if any(o.output_type == "execute_result" for o in cell.outputs):
                    self.log.warning("GRADING-SAFETY: result published before an error in %s", gid)
                cell.outputs = [o for o in cell.outputs if o.output_type != "execute_result"]

    class RedactHiddenTests(NbGraderPreprocessor):
        """For feedback: drop hidden tests from test cells, turn a failure raised inside the hidden
        part into a message that holds neither its code nor its values, and remove from the outputs
        of every cell any line that repeats a hidden-test line."""

        def preprocess(self, nb, resources):
            hidden, public = set(), []
            for c in nb.cells:
                if c.cell_type != "code":
                    continue
                for region in re.findall(
                    re.escape(HIDDEN_BEGIN) + r"(.*?)(?:" + re.escape(HIDDEN_END) + r"|\Z)",
                    c.source,
                    re.S,
                ):
                    hidden |= {s.strip() for s in region.splitlines() if len(s.strip()) >= 8}
                public.append(re.sub(re.escape(HIDDEN_BEGIN) + r".*?(?:" + re.escape(HIDDEN_END)
                                     + r"|\Z)", "", c.source, flags=re.S))  # fmt: skip
            public_text = "\n".join(public)
            self._hidden_lines = {s for s in hidden if s not in public_text}
            return super().preprocess(nb, resources)

        def _scrub(self, text: str) -> str:
            if not self._hidden_lines or not isinstance(text, str):
                return text
            lines = text.splitlines(keepends=True)
            out = [
                "[a line of a hidden test was removed]\n"
                if any(h in ln for h in self._hidden_lines)
                else ln
                for ln in lines
            ]
            return "".join(out)

        def _scrub_outputs(self, cell) -> None:
            for o in cell.get("outputs", []):
                if "text" in o:
                    o.text = self._scrub(o.text)
                for key, val in (o.get("data") or {}).items():
                    if isinstance(val, str):
                        o.data[key] = self._scrub(val)
                    elif isinstance(val, list):
                        o.data[key] = [self._scrub(v) for v in val]
                if o.output_type == "error":
                    o.evalue = self._scrub(str(o.get("evalue", "")))
                    o.traceback = [self._scrub(t) for t in o.get("traceback", [])]

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code":
                return cell, resources
            if not is_grade(cell) or HIDDEN_BEGIN not in cell.source:
                self._scrub_outputs(cell)
                return cell, resources
            lines = cell.source.splitlines()
            start = next(i for i, ln in enumerate(lines) if HIDDEN_BEGIN in ln)
            end = next((i for i, ln in enumerate(lines) if HIDDEN_END in ln), len(lines) - 1)
            visible = lines[:start] + [HIDDEN_NOTE] + lines[end + 1 :]
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
                        evalue = self._scrub(str(o.get("evalue", "")))
                    outputs.append(NotebookNode(output_type="error", ename=o.ename, evalue=evalue,
                                                traceback=[f"{o.ename}: {evalue}"]))  # fmt: skip
                elif o.output_type == "stream" and o.name == "stdout":
                    continue  # hidden tests may print; visible ones need not
                else:
                    outputs.append(o)
            cell.outputs = outputs
            self._scrub_outputs(cell)
            return cell, resources

    return GuardedExecute, RedactHiddenTests
