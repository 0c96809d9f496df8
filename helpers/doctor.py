"""What stands between this machine and an open lesson: each check says ok, or the problem and its fix.

    ./notebook.sh --doctor [--port N]     (or: course doctor; or: python3 helpers/doctor.py)

Checks, in the order a first ``./notebook.sh 9.1`` meets them: the course's files are all there;
Python 3.11 can be found (the candidates ``scripts/ensure_env.sh`` tries: $PYTHON, python3.11,
python3, python); the course's environment (.venv, or $COURSE_VENV) runs, is Python 3.11, holds
the locked packages (its stamp matches requirements.lock) and imports them; the BaseLM artifact
(lesson 9.5) is complete and its weights hash matches its passport; the port JupyterLab will use
is free; the workspace is writable and the disk has room for a first install.

Standard library only, and runs on any Python 3.8 or newer: the doctor must work when the course's
own environment is the thing that is broken. Exit status 0 when nothing is wrong, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CANDIDATES = ("python3.11", "python3", "python")  # after $PYTHON, as scripts/ensure_env.sh
INSTALL_BYTES = 3 * 1024**3  # a first student install is about 2 GB; ask for some room beyond it
# the packages a lesson imports first; a venv that cannot import these cannot open a lesson
IMPORTS = "import helpers, numpy, torch, transformers, matplotlib, jupyterlab, nbgrader"


class Report:
    def __init__(self) -> None:
        self.problems = 0

    def ok(self, what: str, detail: str) -> None:
        print(f"  ok       {what}: {detail}")

    def note(self, what: str, detail: str) -> None:
        print(f"  note     {what}: {detail}")

    def problem(self, what: str, detail: str, fix: str) -> None:
        self.problems += 1
        print(f"  PROBLEM  {what}: {detail}")
        for i, line in enumerate(fix.splitlines()):
            print(f"           {'fix: ' if i == 0 else '     '}{line}")


def _run(cmd: list[str], timeout: float) -> tuple[int, str]:
    """(exit status, last line of stdout+stderr); 127 when it cannot start, 124 on a timeout."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return 127, "not found"
    except PermissionError:
        return 126, "not executable"
    except OSError as e:  # a broken interpreter link, a wrong architecture, ...
        return 126, f"{type(e).__name__}: {e}"
    except subprocess.TimeoutExpired:
        return 124, f"no answer within {timeout:.0f} s"
    out = (p.stdout + p.stderr).strip().splitlines()
    return p.returncode, out[-1] if out else ""


def _version(python: str) -> str | None:
    code, out = _run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], 30)
    return out if code == 0 else None


def check_files(r: Report) -> None:
    what = "course files"
    missing = [
        f for f in ("notebook.sh", "scripts/ensure_env.sh", "requirements.lock", "pyproject.toml")
        if not (ROOT / f).is_file()
    ]  # fmt: skip
    release = Path(os.environ.get("COURSE_RELEASE_DIR") or ROOT / "release")
    lessons = sorted(p.parent.name for p in release.glob("*/*.ipynb"))
    if not lessons:
        missing.append(f"{release.name}/ (the lessons)")
    if missing:
        r.problem(what, f"missing {', '.join(missing)} in {ROOT}",
                  "extract the course bundle again (or, in a git clone: git checkout -- .)")  # fmt: skip
    else:
        r.ok(what, f"lessons {' '.join(sorted(set(lessons)))}")


def check_python(r: Report) -> str | None:
    what = "Python 3.11"
    tried = []
    for cand in [os.environ.get("PYTHON", ""), *CANDIDATES]:
        if not cand:
            continue
        path = shutil.which(cand)
        if path is None:
            tried.append(f"{cand} (not found)")
            continue
        v = _version(path)
        if v is not None and v.startswith("3.11."):
            r.ok(what, f"{path} ({v})")
            return path
        tried.append(f"{cand} ({v or 'does not run'})")
    r.problem(
        what,
        "not found; tried " + ", ".join(tried),
        "install Python 3.11 (python.org, pyenv, or: apt install python3.11 python3.11-venv;\n"
        "on macOS: brew install python@3.11), or point PYTHON at one:\n"
        "PYTHON=/path/to/python3.11 ./notebook.sh 9.1",
    )
    return None


def _stamp(lock: str) -> str:
    """The hash scripts/ensure_env.sh records: sha256 over the lock and pyproject.toml, 16 hex."""
    h = hashlib.sha256()
    for f in (ROOT / lock, ROOT / "pyproject.toml"):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def check_venv(r: Report) -> str | None:
    """The environment's python when it is healthy, else None."""
    venv = Path(os.environ.get("COURSE_VENV") or ROOT / ".venv")
    what = f"environment {venv}"
    py = venv / "bin" / "python"
    rebuild = f"rm -rf {shlex.quote(str(venv))} && ./notebook.sh 9.1   (reinstalls from requirements.lock)"
    if not venv.exists():
        r.note(what, "not created yet: the first ./notebook.sh creates it (a few minutes)")
        return None
    if not os.path.lexists(py):
        r.problem(what, "has no bin/python (an interrupted or foreign venv)", rebuild)
        return None
    v = _version(str(py))
    if v is None:
        target = os.path.realpath(py)
        r.problem(what, f"bin/python does not run (it points at {target}: was that Python removed "
                  "or upgraded?)", rebuild)  # fmt: skip
        return None
    if not v.startswith("3.11."):
        r.problem(what, f"is Python {v}, the course needs 3.11", rebuild)
        return None
    stamp = (
        (venv / ".course-stamp").read_text().strip() if (venv / ".course-stamp").is_file() else ""
    )
    try:
        want = f"student {_stamp('requirements.lock')}"
    except OSError:
        want = ""
    if not stamp:
        r.problem(what, "no install stamp: the install never finished", rebuild)
        return None
    if want and not stamp.endswith(want):
        r.note(what, "the lock changed since it was installed: the next ./notebook.sh updates it")
    code, out = _run([str(py), "-c", IMPORTS], 180)
    if code != 0:
        r.problem(what, f"cannot import the course's packages ({out})", rebuild)
        return None
    r.ok(what, f"Python {v}, {stamp.split()[0]} packages import")
    return str(py)


def check_baselm(r: Report, py: str | None) -> None:
    what = "BaseLM (lesson 9.5)"
    fix = "./baselm.sh   (installs the shipped build after a hash check)"
    if py is None:
        where = Path(os.environ.get("BASELM_DIR") or ROOT / "artifacts" / "baselm")
        if (where / "passport.json").is_file():
            r.note(what, f"{where} is there; its hash is checked once the environment works")
        else:
            r.note(what, f"not built yet ({where}); ./notebook.sh 9.5 builds it")
        return
    code, out = _run([py, "-c", "from helpers.baselm import check_artifact, baselm_dir; "
                      "ok, why = check_artifact(); print(('OK ' if ok else 'NO ') + str(baselm_dir()) "
                      "+ ': ' + why)"], 300)  # fmt: skip
    if code == 0 and out.startswith("OK "):
        r.ok(what, out[3:])
    elif code == 0 and out.startswith("NO ") and "no artifact directory" in out:
        # not installed yet is the state of every new course folder: lessons 9.1-9.4 do not need it
        r.note(what, f"{out[3:]}: not installed yet (only lesson 9.5 needs it); fix when you "
               f"get there: {fix}")  # fmt: skip
    elif code == 0 and out.startswith("NO "):
        r.problem(what, out[3:], fix)
    else:
        r.problem(what, f"the check itself failed ({out})", fix)


def check_port(r: Report, port: int) -> None:
    what = f"port {port}"
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        r.problem(what, f"in use ({e.strerror}; another Jupyter server?)",
                  f"stop that server (jupyter server list; jupyter server stop {port}),\n"
                  f"or use another port: ./notebook.sh 9.1 --port {port + 1 if port < 65535 else 8890}")  # fmt: skip
    else:
        r.ok(what, "free")
    finally:
        s.close()


def check_disk(r: Report, venv_ready: bool) -> None:
    workspace = Path(os.environ.get("COURSE_WORKSPACE") or ROOT / "workspace")
    what = "workspace"
    probe = workspace if workspace.exists() else workspace.parent
    if not os.access(probe, os.W_OK):
        r.problem(what, f"{probe} is not writable: your copies of the lessons go there",
                  f"make it writable (chmod u+w {probe}) or run the course from a folder you own")  # fmt: skip
    else:
        r.ok(what, f"{workspace} writable")
    if not venv_ready:
        free = shutil.disk_usage(ROOT).free
        if free < INSTALL_BYTES:
            r.problem("disk", f"{free / 1024**3:.1f} GB free where the environment goes; a first "
                      "install needs about 2 GB", "free some space, then run ./notebook.sh 9.1")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8888, help="the port JupyterLab will use (8888)")
    args = ap.parse_args(argv)
    if not 1 <= args.port <= 65535:
        ap.error(f"--port must be between 1 and 65535, got {args.port}")
    print(f"Checking the course at {ROOT}")
    r = Report()
    check_files(r)
    check_python(r)
    py = check_venv(r)
    check_baselm(r, py)
    check_port(r, args.port)
    check_disk(r, py is not None)
    if r.problems:
        print(
            f"{r.problems} problem(s); fix them in the order shown, then run ./notebook.sh --doctor again"
        )
        return 1
    print("Nothing wrong found. Open a lesson: ./notebook.sh 9.1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
