"""Collect students' notebooks into submitted/<student>/<lesson>/, refusing tricks.

Refused, each with a message naming the reason (and nothing of it copied):
- a student entry (folder or zip) whose name gives no safe id (empty, ".", "..", a leading dot);
- a student folder that is a symlink, a notebook that is a symlink (or lies under one);
- a zip member whose name is absolute or escapes (".."), that is a symlink, a device, a fifo;
- a notebook larger than ``NOTEBOOK_CAP_MB`` (also a zip member's declared or actual size);
- a zip that cannot be read.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from course.grading.common import ROOT

STUDENT_ID = re.compile(r"[^A-Za-z0-9_.-]+")
NOTEBOOK_CAP_MB = 20  # a lesson notebook with outputs is < 2 MB


def student_id(name: str) -> str | None:
    sid = STUDENT_ID.sub("_", name).strip("_")
    if not sid or sid.startswith(".") or set(sid) <= {"."}:
        return None
    return sid


def _find_notebook(folder: Path, lesson: str, refuse) -> Path | None:
    """The student's <lesson>.ipynb in ``folder`` (workspace/<lesson>/ first), never via a symlink."""
    name = f"{lesson}.ipynb"
    preferred = [folder / "workspace" / lesson / name, folder / lesson / name, folder / name]
    hits = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != ".ipynb_checkpoints")
        if name in filenames:
            hits.append(Path(dirpath) / name)
    hits.sort(key=lambda p: (preferred.index(p) if p in preferred else len(preferred), str(p)))
    for nb in hits:
        if nb.is_symlink():
            refuse(f"{nb.relative_to(folder)} is a symlink")
            continue
        if not nb.is_file():
            refuse(f"{nb.relative_to(folder)} is not a regular file")
            continue
        if nb.stat().st_size > NOTEBOOK_CAP_MB * 2**20:
            refuse(f"{nb.relative_to(folder)} is larger than {NOTEBOOK_CAP_MB} MB")
            continue
        return nb
    return None


def _unzip(entry: Path, dest: Path, refuse) -> bool:
    """Extract the regular .ipynb members of ``entry`` into ``dest``; False if the zip is unreadable."""
    try:
        zf = zipfile.ZipFile(entry)
    except (zipfile.BadZipFile, OSError) as err:
        refuse(f"unreadable zip ({err})")
        return False
    with zf:
        for m in zf.infolist():
            if not m.filename.endswith(".ipynb"):
                continue
            p = PurePosixPath(m.filename.replace("\\", "/"))
            mode = m.external_attr >> 16
            if p.is_absolute() or ".." in p.parts or re.match(r"^[A-Za-z]:", m.filename):
                refuse(f"zip member {m.filename!r} has a name that escapes the folder")
            elif stat.S_ISLNK(mode):
                refuse(f"zip member {m.filename!r} is a symlink")
            elif (
                stat.S_ISCHR(mode)
                or stat.S_ISBLK(mode)
                or stat.S_ISFIFO(mode)
                or stat.S_ISSOCK(mode)
            ):
                refuse(f"zip member {m.filename!r} is a device or special file")
            elif m.file_size > NOTEBOOK_CAP_MB * 2**20:
                refuse(f"zip member {m.filename!r} is larger than {NOTEBOOK_CAP_MB} MB")
            else:
                with zf.open(m) as f:
                    data = f.read(NOTEBOOK_CAP_MB * 2**20 + 1)
                if len(data) > NOTEBOOK_CAP_MB * 2**20:
                    refuse(f"zip member {m.filename!r} is larger than {NOTEBOOK_CAP_MB} MB")
                    continue
                out = dest.joinpath(*p.parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
    return True


def _stamp(path: Path, when: float) -> None:
    stamp = dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    (path / "timestamp.txt").write_text(stamp)


def collect_report(
    src: Path, lessons: list[str], root: Path = ROOT
) -> tuple[dict[str, list[str]], list[str]]:
    """Copy each student's lesson notebooks into submitted/<student>/<lesson>/.

    ``src`` holds one entry per student: a folder (a copy of their course folder, with
    workspace/<lesson>/<lesson>.ipynb, or any folder holding <lesson>.ipynb) or a zip of one. The
    student id is the entry's name (zip: without .zip), reduced to letters, digits, '_', '.', '-'.
    Returns ({student: [lessons collected]}, [refusal messages]).
    """
    got: dict[str, list[str]] = {}
    refused: list[str] = []
    for entry in sorted(src.iterdir()):
        raw = entry.stem if entry.suffix == ".zip" else entry.name

        def refuse(why: str, raw=raw) -> None:
            refused.append(f"{raw}: {why}")

        sid = student_id(raw)
        if sid is None:
            refuse("no safe student id can be made from this name")
            continue
        if entry.is_symlink():
            refuse("the entry is a symlink")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder, when = entry, None
            if entry.suffix == ".zip" and entry.is_file():
                if not _unzip(entry, Path(tmp), refuse):
                    continue
                folder, when = Path(tmp), entry.stat().st_mtime
            elif not entry.is_dir():
                continue
            for lesson in lessons:
                nb = _find_notebook(folder, lesson, refuse)
                if nb is None:
                    continue
                dest = root / "submitted" / sid / lesson
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(nb, dest / f"{lesson}.ipynb")
                _stamp(dest, when or nb.stat().st_mtime)
                got.setdefault(sid, []).append(lesson)
    return got, refused


def collect(src: Path, lessons: list[str], root: Path = ROOT) -> dict[str, list[str]]:
    got, refused = collect_report(src, lessons, root)
    for student, ls in got.items():
        print(f"collected {student}: {', '.join(ls)}")
    for msg in refused:
        print(f"REFUSED {msg}")
    return got
