"""A class on JupyterHub: the nbgrader exchange, the students' Jupyter settings, a checked collect.

Used by deploy/jupyterhub/ (the install script and jupyterhub_config.py), by
``python -m course.instructor hub-collect`` and by tests/test_hub.py. Standard library + nbgrader only.

The exchange follows nbgrader's documented layout (``c.Exchange.root``, world-writable, one folder per
course id): ``<root>/<course>/outbound/<lesson>/`` (released, world-readable), ``inbound/`` (2733:
students may write into it but not list it; each submission is named
``<student>+<lesson>+<timestamp>+<random>``), ``feedback/`` (711: a student reaches only the file
named by the hash of their own submission).

nbgrader's own collect only *warns* when a submission in inbound/ is named after one student but
owned by another Unix user (``nbgrader submit --student=alice`` run by mallory). ``collect`` here
refuses it: the forged entry is moved out of inbound/ into ``<course>/refused/`` and named in the
report, then ``nbgrader collect --update`` copies the rest.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
from pathlib import Path

from helpers import student_lab

COURSE_ID = "rlvr-grpo-module9"
EXCHANGE_ROOT = "/srv/nbgrader/exchange"

# What a student does not get (the Assignments tab and Validate stay): one list, in helpers.
STUDENT_DISABLED_LAB, STUDENT_DISABLED_SERVER = student_lab.disabled(exchange=True)


def prepare_exchange(root: str | Path = EXCHANGE_ROOT) -> Path:
    """Create the exchange root with the permissions nbgrader documents (``chmod 777``, no sticky
    bit: nbgrader creates the course folders with their own modes on the first release)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o777)
    return root


def write_jupyter_config(
    dest: Path,
    exchange_root: str | Path,
    course_id: str = COURSE_ID,
    course_root: str | Path | None = None,
    student: bool = True,
) -> Path:
    """A Jupyter config folder (put it on ``JUPYTER_CONFIG_PATH``) for a student or the instructor:

    - ``nbgrader_config.py``: the exchange root and the course id (and, for the instructor, the
      course directory);
    - for a student, ``labconfig/page_config.json`` and ``jupyter_server_config.json`` switch off
      the Formgrader, Create Assignment and Course List (the Assignments tab and Validate remain).
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Written by course/hub.py: the nbgrader exchange of this JupyterHub.",
        "c = get_config()  # noqa: F821",
        f"c.Exchange.root = {str(exchange_root)!r}",
        f"c.CourseDirectory.course_id = {course_id!r}",
    ]
    if course_root is not None:
        lines.append(f"c.CourseDirectory.root = {str(course_root)!r}")
    (dest / "nbgrader_config.py").write_text("\n".join(lines) + "\n")
    if student:
        student_lab.write_config(dest, exchange=True)
    for p in [dest, *dest.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return dest


def exchange_settings(course_root: Path) -> tuple[str, str]:
    """(exchange root, course id) as nbgrader reads them from the config files of ``course_root``
    and the Jupyter config path (JUPYTER_CONFIG_PATH, ~/.jupyter, /etc/jupyter)."""
    from nbgrader.apps.nbgraderapp import NbGraderApp

    cwd = os.getcwd()
    os.chdir(course_root)
    try:
        app = NbGraderApp()
        app.load_config_file()
        cfg = app.config
    finally:
        os.chdir(cwd)
    root = cfg.Exchange.root if "root" in cfg.Exchange else EXCHANGE_ROOT
    course = cfg.CourseDirectory.course_id if "course_id" in cfg.CourseDirectory else COURSE_ID
    return str(root), str(course)


def _owner(path: Path) -> str:
    uid = path.lstat().st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def forged_submissions(lesson: str, exchange_root: str | Path, course_id: str = COURSE_ID):
    """Entries of inbound/ for ``lesson`` whose claimed student is not the Unix owner (or that are
    not plain folders): [(entry, claimed, owner or why)]."""
    inbound = Path(exchange_root) / course_id / "inbound"
    bad = []
    for entry in sorted(inbound.iterdir()):
        parts = entry.name.split("+")
        if len(parts) < 3 or parts[1] != lesson:
            continue
        claimed = parts[0]
        if entry.is_symlink() or not stat.S_ISDIR(entry.lstat().st_mode):
            bad.append((entry, claimed, "not a plain folder"))
            continue
        owner = _owner(entry)
        if owner != claimed:
            bad.append((entry, claimed, owner))
            continue
        for p in entry.rglob("*"):
            if p.is_symlink() or _owner(p) != claimed:
                bad.append((entry, claimed, f"{p.relative_to(entry)} is a symlink or not theirs"))
                break
    return bad


def collect(
    lesson: str,
    course_root: Path,
    exchange_root: str | Path,
    course_id: str = COURSE_ID,
    run=None,
) -> dict:
    """Refuse forged submissions, then ``nbgrader collect --update`` the rest.

    Returns {"refused": [{"entry", "claimed", "owner"}], "collected": [student, ...]}.
    ``run`` is the nbgrader runner (default: course.grading.common.nbgrader).
    """
    if run is None:
        from course.grading.common import nbgrader as run
    refused_dir = Path(exchange_root) / course_id / "refused"
    refused = []
    for entry, claimed, owner in forged_submissions(lesson, exchange_root, course_id):
        refused_dir.mkdir(mode=0o700, exist_ok=True)
        os.chmod(refused_dir, 0o700)
        shutil.move(str(entry), str(refused_dir / entry.name))
        refused.append({"entry": entry.name, "claimed": claimed, "owner": owner})
        print(f"REFUSED {entry.name}: claims to be {claimed}'s, but belongs to {owner}")
    run(
        "collect",
        lesson,
        "--update",
        f"--Exchange.root={exchange_root}",
        f"--CourseDirectory.course_id={course_id}",
        root=course_root,
    )
    sub = Path(course_root) / "submitted"
    got = sorted(p.parent.name for p in sub.glob(f"*/{lesson}") if p.is_dir())
    print(f"collected {lesson}: {', '.join(got) or 'nobody'}")
    return {"refused": refused, "collected": got}
