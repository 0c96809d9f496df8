"""The student's command: list the lessons, open one in JupyterLab, hand it in, check the machine.

    course list                                  the lessons
    course open 9.2 [--fresh] [--no-browser] [--port N] [--setup-only]
    course submit 9.2 [--as NAME]                check the visible tests, write submit/NAME.zip
    course doctor [--port N]                     what stands between this machine and a lesson
    course baselm [ARGS ...]                     set up BaseLM (ARGS go to: python -m helpers.baselm build)

``./notebook.sh`` runs this same program and keeps its own spelling: ``./notebook.sh`` lists,
``./notebook.sh 9.2 [--fresh ...]`` opens, ``./notebook.sh 9.2 --submit [--as NAME]`` hands in,
``./notebook.sh --doctor`` checks. ``course`` is on the PATH of the course's environment
(``.venv/bin/course``), which the first ``./notebook.sh`` creates.

Your copy of a lesson lives in ``workspace/<lesson>/`` and is never overwritten: ``--fresh``
archives it (``workspace/archive/<lesson>-<time>/``) before starting from the release again.
COURSE_RELEASE_DIR, COURSE_WORKSPACE and COURSE_SUBMIT_DIR move those folders; COURSE_VENV the
environment.

Until it needs the course's environment, this runs on any Python 3.8 or newer with the standard
library only: listing the lessons, a wrong lesson name or a wrong option is answered before
anything is installed. ``open`` and ``submit`` then make the environment (``scripts/ensure_env.sh``:
Python 3.11 and the locked packages, once) and carry on inside it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from helpers import student_lab, submission

ROOT = Path(__file__).resolve().parents[1]
NEEDS_BASELM = {"9.5"}  # lessons that load the BaseLM artifact
DEFAULT_PORT = 8888
IN_ENV = "COURSE_IN_ENV"  # set when this program re-starts itself inside the prepared environment


class Refused(SystemExit):
    """A problem the student can fix: printed as 'error: ...' and 'fix: ...'."""

    def __init__(self, message: str, fix: str = "", code: int = 2) -> None:
        print(f"error: {message}", file=sys.stderr)
        if fix:
            print(f"  fix: {fix}", file=sys.stderr)
        super().__init__(code)


def _dir(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable) or ROOT / default)


def release_dir() -> Path:
    return _dir("COURSE_RELEASE_DIR", "release")


def workspace_dir() -> Path:
    return _dir("COURSE_WORKSPACE", "workspace")


def submit_dir() -> Path:
    return _dir("COURSE_SUBMIT_DIR", "submit")


def venv_dir() -> Path:
    return _dir("COURSE_VENV", ".venv")


def _version_key(name: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def lessons() -> list[str]:
    """The released lessons (a folder of release/ holding a notebook), in version order."""
    rel = release_dir()
    found = (
        [
            d.name
            for d in rel.iterdir()
            if d.is_dir() and not d.name.startswith(".") and any(d.glob("*.ipynb"))
        ]
        if rel.is_dir()
        else []
    )
    return sorted(found, key=_version_key)


def title(lesson: str) -> str:
    """The first '# ' heading of the lesson's notebook ('' when it has none or cannot be read)."""
    for nb in sorted((release_dir() / lesson).glob("*.ipynb")):
        try:
            cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            return ""
        for cell in cells:
            if cell.get("cell_type") != "markdown":
                continue
            source = cell.get("source", "")
            for line in (source if isinstance(source, str) else "".join(source)).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
        return ""
    return ""


def list_lessons() -> int:
    names = lessons()
    if not names:
        raise Refused(f"no lessons in {release_dir()}",
                      "extract the course bundle again (its release/ folder holds the lessons)")  # fmt: skip
    print("Module 9 - RLVR & GRPO. Lessons:")
    for name in names:
        print(f"  {name:<5} {title(name)}")
    print()
    print(f"Open one with: ./notebook.sh <lesson>   (e.g. ./notebook.sh {names[0]})")
    return 0


def check_lesson(lesson: str) -> None:
    names = lessons()
    if lesson not in names:
        raise Refused(f"there is no lesson '{lesson}'.",
                      f"pick one of: {' '.join(names)} (run ./notebook.sh to list them)")  # fmt: skip


def check_port(port: str, lesson: str) -> int:
    if not re.fullmatch(r"[0-9]{1,5}", port) or not 1 <= int(port) <= 65535:
        raise Refused(f"--port must be a number between 1 and 65535, got '{port}'",
                      f"./notebook.sh {lesson or '9.1'} --port 8890")  # fmt: skip
    return int(port)


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# ----------------------------------------------------------------------------------------------
# the environment


def restarted() -> bool:
    """Whether this process is this command re-started inside the environment: the marker holds
    this very process id (an exec keeps it; a kernel, a terminal or any later command started from
    JupyterLab has another, so a marker they inherit means nothing to them)."""
    return os.environ.get(IN_ENV) == str(os.getpid())


def enter_environment(argv: list[str]) -> None:
    """Make the course's environment if needed, then go on inside it: when this process is not the
    environment's Python, re-start this command there (it does not return then)."""
    if restarted():
        os.environ.pop(IN_ENV)  # nothing started from here inherits it
        return
    ensure = ROOT / "scripts" / "ensure_env.sh"
    if not ensure.is_file():
        raise Refused(f"{ensure} is missing", "extract the course bundle again")
    sys.stdout.flush()
    done = subprocess.run(["bash", "-c", 'source "$1"', "./notebook.sh", str(ensure)])
    if done.returncode != 0:
        raise SystemExit(done.returncode)  # ensure_env.sh printed the problem and its fix
    venv = venv_dir()
    python = venv / "bin" / "python"
    is_311 = "import sys; sys.exit(sys.version_info[:2] != (3, 11))"
    if subprocess.run([str(python), "-c", is_311], capture_output=True).returncode != 0:
        raise Refused(f"{venv} is not a Python 3.11 environment",
                      f"remove it and let the next start make it again: rm -rf {shlex.quote(str(venv))} && "
                      "./notebook.sh 9.1", 3)  # fmt: skip
    os.environ["PATH"] = os.pathsep.join([str(python.parent), os.environ.get("PATH", "")])
    if Path(sys.prefix).resolve() == venv.resolve():
        return  # already the environment's Python (the console script .venv/bin/course)
    env = dict(os.environ, **{IN_ENV: str(os.getpid())})
    # this checkout's helpers, whichever checkout the environment was installed from
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    os.execve(str(python), [str(python), "-P", "-m", "helpers.cli", *argv], env)


# ----------------------------------------------------------------------------------------------
# the commands


def open_lesson(lesson: str, port: str, fresh: bool, browser: bool, setup_only: bool,
                argv: list[str]) -> int:  # fmt: skip
    check_lesson(lesson)
    port_number = check_port(port, lesson)
    workspace = workspace_dir()
    dest = workspace / lesson
    if not restarted():  # the copy is made once, before the environment re-start
        if fresh and dest.is_dir():
            stamp = time.strftime("%Y%m%d-%H%M%S")
            archive = workspace / "archive" / f"{lesson}-{stamp}"
            n = 1
            while archive.exists() or archive.is_symlink():  # two --fresh in one second
                n += 1
                archive = workspace / "archive" / f"{lesson}-{stamp}-{n}"
            archive.parent.mkdir(parents=True, exist_ok=True)
            dest.rename(archive)
            print(f"==> archived your previous copy to {archive}")
        dest.mkdir(parents=True, exist_ok=True)
        copied = 0
        for src in sorted((release_dir() / lesson).iterdir()):
            if src.name.startswith("."):
                continue  # checkpoints and other hidden entries are not part of the lesson
            target = dest / src.name
            if target.exists() or target.is_symlink():
                continue  # never overwrite the student's work
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, target)
            copied += 1
        if copied:
            print(f"==> your copy of lesson {lesson}: {dest}")
        else:
            print(
                f"==> continuing your copy of lesson {lesson}: {dest} (use --fresh to start over)"
            )
    notebooks = sorted(p.name for p in dest.glob("*.ipynb"))
    own = submission.notebook_name(lesson)
    notebook = own if own in notebooks else (notebooks or [""])[0]
    if setup_only:
        print(dest / notebook)
        return 0
    # the copy exists: from here on, a re-start inside the environment only carries on
    enter_environment(argv)
    if lesson in NEEDS_BASELM:
        done = subprocess.run([sys.executable, "-P", "-m", "helpers.baselm", "build"])
        if done.returncode != 0:
            raise Refused(f"BaseLM, which lesson {lesson} loads, could not be set up",
                          "read the message above, then: ./notebook.sh --doctor", 5)  # fmt: skip
    if not port_is_free(port_number):
        raise Refused(f"port {port_number} is busy (another Jupyter server?)",
                      f"stop that server, or pick another port: ./notebook.sh {lesson} --port "
                      f"{port_number + 1 if port_number < 65535 else 8890}", 4)  # fmt: skip
    config = student_lab.write_config(workspace / ".jupyter-student", exchange=False)
    student_lab.write_settings_defaults(Path(sys.prefix))
    env = dict(os.environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(filter(None, [str(config), env.get("JUPYTER_CONFIG_PATH")]))  # fmt: skip
    # -P: the lesson folder is the working folder, and none of its files may shadow jupyter's
    args = [sys.executable, "-P", "-m", "jupyter", "lab", f"--ServerApp.root_dir={dest}",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port_number}",
            "--ServerApp.port_retries=0", f"--LabApp.default_url=/lab/tree/{notebook}"]  # fmt: skip
    if not browser:
        args.append("--no-browser")
    if hasattr(os, "getuid") and os.getuid() == 0:
        args.append("--allow-root")  # containers and CI run as root
    print(
        f"==> starting JupyterLab on port {port_number} (Ctrl-C to stop; your work stays in {dest})"
    )
    sys.stdout.flush()
    os.chdir(dest)
    os.execve(sys.executable, args, env)
    return 0  # not reached


def submit(lesson: str, name: str, argv: list[str]) -> int:
    check_lesson(lesson)
    workspace = workspace_dir()
    notebook = workspace / lesson / submission.notebook_name(lesson)
    if not notebook.is_file():
        raise Refused(f"you have no copy of lesson {lesson} yet (nothing to submit)",
                      f"open it first: ./notebook.sh {lesson}")  # fmt: skip
    name_file = workspace / ".student-name"
    if not name:
        try:
            name = name_file.read_text(encoding="utf-8").strip()
        except OSError:
            name = ""
    if not name:
        raise Refused("say who you are, once: the zip is named after you",
                      f"./notebook.sh {lesson} --submit --as firstname.lastname")  # fmt: skip
    if not submission.is_student_id(name):
        raise Refused(f"--as '{name}': use letters, digits, '.', '_' or '-' (no spaces), starting "
                      "with a letter or digit, not ending with '_'", f"./notebook.sh {lesson} --submit --as ada.lovelace")  # fmt: skip
    workspace.mkdir(parents=True, exist_ok=True)
    name_file.write_text(name + "\n", encoding="utf-8")
    enter_environment(argv)
    print(
        f"==> checking lesson {lesson} (nbgrader validate runs your notebook and its visible tests)"
    )
    sys.stdout.flush()
    log = workspace / ".validate.log"
    with open(log, "w", encoding="utf-8") as err:
        done = subprocess.run([sys.executable, "-P", "-m", "helpers.submission", notebook.name],
                              cwd=notebook.parent, stdout=subprocess.PIPE, stderr=err, text=True)  # fmt: skip
    if done.returncode != 0:
        print("\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]),
              file=sys.stderr)  # fmt: skip
        raise Refused(f"nbgrader could not check {notebook} (is it a valid notebook?)",
                      f"open it with ./notebook.sh {lesson}, or start over with ./notebook.sh "
                      f"{lesson} --fresh", 3)  # fmt: skip
    lines = done.stdout.rstrip("\n").splitlines()
    if lines[-1:] == ["PASSED"]:
        print("    all visible tests pass (hidden tests run when your instructor grades)")
    else:
        print("\n".join(lines))
        print(
            "    warning: some visible tests fail; the zip is written anyway (you can submit again)"
        )
    dest = submit_dir() / (name + ".zip")
    for got in submission.write_zip(workspace, dest):
        print(f"    {got}/" + submission.notebook_name(got))
    print(f"==> wrote {dest} (every lesson in your workspace, latest version)")
    print("    send this file to your instructor; submitting again replaces it")
    return 0


def doctor(port: str) -> int:
    from helpers import doctor as checks

    return checks.main(["--port", str(check_port(port, ""))])


def baselm(args: list[str], argv: list[str]) -> int:
    enter_environment(argv)
    return subprocess.run([sys.executable, "-P", "-m", "helpers.baselm", "build", *args]).returncode


# ----------------------------------------------------------------------------------------------
# the command line: `course <command>`, and notebook.sh's own spelling


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's usage line, then the fix, as every other error
        self.print_usage(sys.stderr)
        raise Refused(message, f"{self.prog} --help")


def _parser() -> argparse.ArgumentParser:
    plain = __doc__.replace("``", "")
    ap = _Parser(prog="course", description=plain.split("\n\n")[0], allow_abbrev=False,
                 formatter_class=argparse.RawDescriptionHelpFormatter,
                 epilog="\n\n".join(plain.split("\n\n")[1:4]))  # fmt: skip
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")  # none: list
    sub.add_parser("list", help="the lessons (also: course with no command)", allow_abbrev=False)
    p = sub.add_parser("open", help="open a lesson in JupyterLab (your copy is never overwritten)",
                       allow_abbrev=False)  # fmt: skip
    p.add_argument("lesson")
    p.add_argument("--fresh", action="store_true", help="archive your copy and start again")
    p.add_argument("--no-browser", action="store_true", help="print the URL instead of opening it")
    p.add_argument("--port", default=str(DEFAULT_PORT), help=f"JupyterLab's port ({DEFAULT_PORT})")
    p.add_argument("--setup-only", action="store_true", help="make the copy, start nothing")
    p = sub.add_parser("submit", help="check the visible tests, then write submit/<NAME>.zip",
                       allow_abbrev=False)  # fmt: skip
    p.add_argument("lesson")
    p.add_argument(
        "--as", dest="name", default="", help="your name (remembered after the first time)"
    )
    p = sub.add_parser("doctor", help="check Python, the environment, BaseLM, the port, the disk",
                       allow_abbrev=False)  # fmt: skip
    p.add_argument("--port", default=str(DEFAULT_PORT))
    sub.add_parser("baselm", help="set up BaseLM; the rest goes to python -m helpers.baselm build",
                   add_help=False)  # fmt: skip
    return ap


def from_notebook_sh(argv: list[str]) -> list[str]:
    """notebook.sh's spelling as a ``course`` command: no lesson lists, ``--doctor`` checks, a
    lesson opens, ``--submit`` hands in; ``--help`` is notebook.sh's own. Its errors name
    ./notebook.sh."""
    lesson, opts, mode, name, port = "", [], "open", None, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--port", "--as"):
            if i + 1 >= len(argv):
                raise Refused(f"{a} needs a value" if a == "--port" else "--as needs your name",
                              "./notebook.sh 9.1 --port 8890" if a == "--port"
                              else "./notebook.sh 9.1 --submit --as ada.lovelace")  # fmt: skip
            port, name = (argv[i + 1], name) if a == "--port" else (port, argv[i + 1])
            i += 2
            continue
        if a.startswith("--port="):
            port = a.split("=", 1)[1]
        elif a.startswith("--as="):
            name = a.split("=", 1)[1]
        elif a in ("--fresh", "--no-browser", "--setup-only"):
            opts.append(a)
        elif a == "--submit":
            mode = "submit"
        elif a == "--doctor":
            mode = "doctor"
        elif a in ("-h", "--help"):
            return ["--notebook-sh-help"]
        elif a.startswith("-"):
            raise Refused(f"unknown option {a}", "see ./notebook.sh --help")
        elif lesson:
            raise Refused(f"one lesson at a time (got {lesson} and {a})", f"./notebook.sh {lesson}")
        else:
            lesson = a
        i += 1
    if port is not None and lesson and mode != "doctor":
        check_port(port, lesson)  # checked whatever the mode, as notebook.sh always did
    # "--as=NAME", "--port=N": a value that starts with '-' stays a value (and is refused as one)
    port_args = [f"--port={port}"] if port is not None else []
    if mode == "doctor":
        return ["doctor", *port_args]
    if not lesson:
        return ["list"]
    if mode == "submit":
        return ["submit", lesson, *([f"--as={name}"] if name is not None else [])]
    return ["open", lesson, *opts, *port_args]


NOTEBOOK_SH_HELP = """\
Open a lesson of Module 9 in JupyterLab.

  ./notebook.sh                 list the lessons
  ./notebook.sh 9.2             open lesson 9.2 (first use: creates .venv, installs, builds BaseLM
                                if the lesson needs it)
  ./notebook.sh 9.2 --fresh     archive your current copy (timestamped) and start from the release
  ./notebook.sh 9.2 --no-browser --port 8890    headless: print the URL instead of opening it
  ./notebook.sh 9.2 --setup-only                prepare the copy, do not start JupyterLab
  ./notebook.sh 9.2 --submit --as ada.lovelace  check 9.2 (nbgrader validate: the visible tests),
                                then write submit/ada.lovelace.zip for your instructor
                                (your name is remembered: next time ./notebook.sh 9.3 --submit)
  ./notebook.sh --doctor [--port N]   something wrong? check Python, the environment, BaseLM,
                                the port and the disk; each problem comes with its fix

Your copy of a lesson lives in workspace/<lesson>/ and is never overwritten; release/ is only read.
COURSE_RELEASE_DIR, COURSE_WORKSPACE, COURSE_SUBMIT_DIR and COURSE_VENV move those folders.
The same commands, once the environment exists: .venv/bin/course list | open | submit | doctor.
"""


def main(argv: list[str] | None = None, notebook_sh: bool = False) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--notebook-sh"]:
        notebook_sh, argv = True, argv[1:]
    if notebook_sh:
        argv = from_notebook_sh(argv)
        if argv == ["--notebook-sh-help"]:
            print(NOTEBOOK_SH_HELP, end="")
            return 0
    if argv[:1] == ["baselm"]:  # everything after it is BaseLM's own, options included
        return baselm(argv[1:], argv)
    args = _parser().parse_args(argv)
    if args.command in (None, "list"):
        return list_lessons()
    if args.command == "doctor":
        return doctor(args.port)
    if args.command == "submit":
        return submit(args.lesson, args.name, argv)
    return open_lesson(args.lesson, args.port, args.fresh, not args.no_browser, args.setup_only,
                       argv)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
