"""Collect students' notebooks into submitted/<student>/<lesson>/, refusing tricks.

Each entry of the inbox is one student: a folder, or a zip of one. The student id is the entry's
name (a zip's without ".zip"), reduced by ``student_id`` (helpers/submission.py: the one id rule,
which the student's ``course submit --as`` applies too) to letters, digits, '_', '.' and '-',
starting with a letter or a digit.

Refused, each with a message naming the reason and what to do next (and nothing of it copied):

- an entry whose name gives no safe id (empty, ".", "..", a leading dot or dash);
- an entry, a student folder or a notebook that is a symlink (or lies under one);
- a student id claimed by two or more entries in one run, for example ``alice/`` and
  ``alice.zip``, or ``Alice!.zip`` and ``Alice_.zip`` (both become ``Alice``). Ids that differ
  only in upper/lower case (``Ann`` and ``ann``) count as the same id here too. Nothing is copied
  from any of those entries: rename one, or collect them in separate runs on purpose;
- a zip member whose name is absolute or escapes (".."), that is a symlink, a device, a fifo;
- a notebook larger than ``NOTEBOOK_CAP_MB`` (for a zip member: its declared or its actual size);
- a zip bomb. Before anything is extracted, a zip is refused whole when it has more than
  ``ZIP_MEMBER_CAP`` members, or when the notebooks it would extract declare more than
  ``ZIP_TOTAL_CAP_MB`` in all. While extracting, members are read in chunks and the bytes are
  counted: a member that gives more than it declared, or a running total past the cap, or a member
  that fails its CRC check (as one whose declared size lies does), stops the zip and refuses it;
- a zip that cannot be read.

Replacing an earlier submission. Each collected lesson gets ``.collect.json`` beside its notebook:
the entry it came from (its resolved path), the notebook's path inside it, the notebook's SHA-256
and the submission time. (course/nbgrader_config.py has nbgrader ignore dot files, so the record
is neither graded nor copied on.) A later run may write submitted/<id>/<lesson>/ again only when
that folder is absent, or when its record names the same entry and its notebook still has the
recorded SHA-256. If the same entry gives the same notebook again, nothing changes (the first
submission time stays). Anything else there (a submission from another entry, one from hub-collect,
one collected before records were kept, or a record that no longer matches its notebook) is refused
and left as it is, unless the run was asked to replace on purpose (``replace=True``,
``course-admin collect --replace``).

Submission time. ``timestamp.txt`` holds the time of the collect run, in UTC, in nbgrader's format
(``2024-05-01 12:00:00.000000 UTC``); one time for the whole run. It never comes from a file's
modification time: a student sets those (``touch -d``, or the times stored in a zip). (hub-collect
keeps the time nbgrader's exchange recorded when the student submitted.)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from course.grading.common import ROOT
from helpers.submission import ZIP_LAYOUT, student_id

NOTEBOOK_CAP_MB = 20  # a lesson notebook with outputs is < 2 MB
ZIP_MEMBER_CAP = 1000  # members of one zip (all of them, not only notebooks)
ZIP_TOTAL_CAP_MB = 64  # bytes one zip may extract, in all
RECORD = ".collect.json"
STAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # what nbgrader itself writes in timestamp.txt
_CHUNK = 2**16
_MB = 2**20
# What reading a damaged, encrypted or lying zip raises (a bad CRC is a BadZipFile).
_READ_ERRORS = (
    zipfile.BadZipFile,
    OSError,
    ValueError,
    EOFError,
    RuntimeError,
    NotImplementedError,
    zlib.error,
)


def _find_notebook(folder: Path, lesson: str, refuse) -> Path | None:
    """The student's <lesson>.ipynb in ``folder`` (workspace/<lesson>/ first), never via a symlink."""
    name = f"{lesson}.ipynb"
    layout = folder / ZIP_LAYOUT.format(lesson=lesson)  # what course submit writes
    preferred = [layout, folder / lesson / name, folder / name]
    hits = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != ".ipynb_checkpoints")
        if name in filenames:
            hits.append(Path(dirpath) / name)
    hits.sort(key=lambda p: (preferred.index(p) if p in preferred else len(preferred), str(p)))
    for nb in hits:
        if nb.is_symlink():
            refuse(f"{nb.relative_to(folder)} is a symlink; submit the notebook itself")
            continue
        if not nb.is_file():
            refuse(f"{nb.relative_to(folder)} is not a regular file; submit the notebook itself")
            continue
        if nb.stat().st_size > NOTEBOOK_CAP_MB * _MB:
            refuse(
                f"{nb.relative_to(folder)} is larger than {NOTEBOOK_CAP_MB} MB; ask the student "
                "to clear large outputs (Kernel > Restart & Clear Output) and submit again"
            )
            continue
        return nb
    return None


def _zip_entry_count(entry: Path) -> int | None:
    """The member count the zip's end record declares, read before zipfile parses the whole central
    directory (a zip of millions of tiny members would take that long and that much memory).
    None when the end record cannot be found: zipfile then decides whether the zip is readable."""
    try:
        with open(entry, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - (22 + 0xFFFF)))
            tail = f.read()
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or len(tail) - at < 22:
                return None
            count = struct.unpack("<H", tail[at + 10 : at + 12])[0]
            loc = at - 20
            if count == 0xFFFF and loc >= 0 and tail[loc : loc + 4] == b"PK\x06\x07":
                f.seek(struct.unpack("<Q", tail[loc + 8 : loc + 16])[0])
                end64 = f.read(56)
                if end64[:4] == b"PK\x06\x06" and len(end64) == 56:
                    count = struct.unpack("<Q", end64[32:40])[0]
            return count
    except OSError:
        return None


class _ZipRefused(Exception):
    """The zip is refused whole; the message says why and what to do."""


def _too_big_zip(why: str) -> _ZipRefused:
    return _ZipRefused(
        f"{why}; nothing was extracted from this zip. Ask the student to zip only their course "
        "folder's notebooks (or collect that student's folder instead)"
    )


def _unzip(entry: Path, dest: Path, refuse) -> bool:
    """Extract the regular .ipynb members of ``entry`` into ``dest``; False if the zip is refused
    whole (unreadable, or a zip bomb), in which case ``dest`` is left empty."""
    count = _zip_entry_count(entry)
    if count is not None and count > ZIP_MEMBER_CAP:
        refuse(str(_too_big_zip(f"the zip has {count} members (more than {ZIP_MEMBER_CAP})")))
        return False
    try:
        zf = zipfile.ZipFile(entry)
    except _READ_ERRORS as err:
        refuse(f"unreadable zip ({err}); ask the student to zip their folder again and resubmit")
        return False
    try:
        with zf:
            _extract(zf, dest, refuse)
    except _ZipRefused as err:
        refuse(str(err))
    except _READ_ERRORS as err:
        refuse(
            f"a member of the zip cannot be read ({err}); nothing was taken from this zip. Ask "
            "the student to zip their folder again (a plain zip, no password) and resubmit"
        )
    else:
        return True
    return False  # the caller's temporary folder, and what was extracted into it, is removed


def _extract(zf: zipfile.ZipFile, dest: Path, refuse) -> None:
    members = zf.infolist()
    if len(members) > ZIP_MEMBER_CAP:
        raise _too_big_zip(f"the zip has {len(members)} members (more than {ZIP_MEMBER_CAP})")
    cap, total = NOTEBOOK_CAP_MB * _MB, ZIP_TOTAL_CAP_MB * _MB
    todo = []
    for m in members:
        if not m.filename.endswith(".ipynb"):
            continue
        p = PurePosixPath(m.filename.replace("\\", "/"))
        mode = m.external_attr >> 16
        if p.is_absolute() or ".." in p.parts or re.match(r"^[A-Za-z]:", m.filename):
            refuse(f"zip member {m.filename!r} has a name that escapes the folder; skipped")
        elif stat.S_ISLNK(mode):
            refuse(f"zip member {m.filename!r} is a symlink; skipped (zip the notebook itself)")
        elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            refuse(f"zip member {m.filename!r} is a device or special file; skipped")
        elif m.is_dir():
            continue
        elif m.file_size > cap:
            refuse(
                f"zip member {m.filename!r} is larger than {NOTEBOOK_CAP_MB} MB; skipped (ask "
                "the student to clear large outputs and submit again)"
            )
        else:
            todo.append((m, p))
    declared = sum(m.file_size for m, _ in todo)
    if declared > total:
        raise _too_big_zip(
            f"the zip's notebooks declare {declared / _MB:.0f} MB in all "
            f"(more than {ZIP_TOTAL_CAP_MB} MB)"
        )
    done = 0
    for m, p in todo:
        out = dest.joinpath(*p.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        got = 0
        with zf.open(m) as f, open(out, "wb") as w:
            while chunk := f.read(_CHUNK):
                got += len(chunk)
                done += len(chunk)
                if got > m.file_size or got > cap:
                    raise _ZipRefused(
                        f"zip member {m.filename!r} gives more bytes than it declares "
                        f"({m.file_size}); the zip is damaged or built to lie, and nothing was "
                        "taken from it. Ask the student to zip their folder again and resubmit"
                    )
                if done > total:
                    raise _too_big_zip(f"the zip extracts to more than {ZIP_TOTAL_CAP_MB} MB")
                w.write(chunk)


def _stamp(path: Path, when: dt.datetime) -> str:
    stamp = when.astimezone(dt.UTC).strftime(STAMP_FORMAT)
    (path / "timestamp.txt").write_text(stamp)
    return stamp


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _record(dest: Path, lesson: str) -> dict | None:
    """The folder's collect record, if it is one and still matches the notebook beside it."""
    try:
        rec = json.loads((dest / RECORD).read_text())
        nb = dest / f"{lesson}.ipynb"
        if (
            isinstance(rec, dict)
            and isinstance(rec.get("source"), str)
            and not nb.is_symlink()
            and nb.is_file()
            and rec.get("sha256") == _sha256(nb)
        ):
            return rec
    except (OSError, ValueError):
        pass
    return None


def _write(dest: Path, lesson: str, nb: Path, rec: dict, when: dt.datetime) -> None:
    """Put the notebook, timestamp.txt and the record in place of ``dest`` (built beside it first,
    so that a failure half-way never leaves a mixed folder)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{lesson}.collect-", dir=dest.parent))
    try:
        shutil.copyfile(nb, stage / f"{lesson}.ipynb")
        rec["submitted_at"] = _stamp(stage, when)
        (stage / RECORD).write_text(json.dumps(rec, indent=1) + "\n")
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{lesson}.replaced-", dir=dest.parent))
            dest.rename(old / lesson)
            stage.rename(dest)
            shutil.rmtree(old)
        else:
            stage.rename(dest)
    finally:
        if stage.exists():
            shutil.rmtree(stage)


def _claims(entries: list[Path]) -> dict[str, list[Path]]:
    """Entries that claim each student id (case folded), counting every folder, zip and symlink."""
    claims: dict[str, list[Path]] = {}
    for entry in entries:
        if not (entry.is_symlink() or entry.is_dir() or entry.suffix == ".zip"):
            continue  # a stray file: ignored, as before
        sid = student_id(entry.stem if entry.suffix == ".zip" else entry.name)
        if sid is not None:
            claims.setdefault(sid.casefold(), []).append(entry)
    return claims


def collect_report(
    src: Path,
    lessons: list[str],
    root: Path = ROOT,
    *,
    replace: bool = False,
    now: dt.datetime | None = None,
) -> tuple[dict[str, list[str]], list[str]]:
    """Copy each student's lesson notebooks into submitted/<student>/<lesson>/.

    ``src`` holds one entry per student: a folder (a copy of their course folder, with
    workspace/<lesson>/<lesson>.ipynb, or any folder holding <lesson>.ipynb) or a zip of one. The
    student id is the entry's name (zip: without .zip), reduced to letters, digits, '_', '.', '-'.
    ``replace`` allows replacing a submission that came from another source (see the module
    docstring). ``now`` is the submission time (default: the time of this call).
    Returns ({student: [lessons collected]}, [refusal messages]).
    """
    when = now or dt.datetime.now(dt.UTC)
    got: dict[str, list[str]] = {}
    refused: list[str] = []
    entries = sorted(src.iterdir())
    claims = _claims(entries)
    for entry in entries:
        raw = entry.stem if entry.suffix == ".zip" else entry.name

        def refuse(why: str, raw=raw) -> None:
            refused.append(f"{raw}: {why}")

        sid = student_id(raw)
        if sid is None:
            refuse("no safe student id can be made from this name; rename it to the student's id")
            continue
        rivals = claims.get(sid.casefold(), [entry])
        if len(rivals) > 1:
            if entry == rivals[0]:
                names = ", ".join(repr(e.name) for e in rivals)
                refused.append(
                    f"{sid}: {len(rivals)} entries claim this student id ({names}); nothing was "
                    "collected from any of them. Rename the one that is not this student's, or, "
                    "if all are theirs, collect them in separate runs on purpose (a later run "
                    "replaces the earlier submission only with --replace)"
                )
            continue
        if entry.is_symlink():
            refuse("the entry is a symlink; copy the student's folder or zip itself into the inbox")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder, kind = entry, "folder"
            if entry.suffix == ".zip" and entry.is_file():
                if not _unzip(entry, Path(tmp), refuse):
                    continue
                folder, kind = Path(tmp), "zip"
            elif not entry.is_dir():
                continue
            source = str(entry.resolve())
            for lesson in lessons:
                nb = _find_notebook(folder, lesson, refuse)
                if nb is None:
                    continue
                sub = root / "submitted" / sid
                dest = sub / lesson
                if sub.is_symlink() or dest.is_symlink():
                    refuse(
                        f"{lesson}: submitted/{sid}/{lesson} lies under a symlink; not written. "
                        "Remove the symlink from submitted/ and collect again"
                    )
                    continue
                sha = _sha256(nb)
                if dest.exists():
                    before = _record(dest, lesson)
                    same = before is not None and before["source"] == source
                    if same and before.get("sha256") == sha:
                        got.setdefault(sid, []).append(lesson)  # unchanged: time stays as it was
                        continue
                    if not same and not replace:
                        was = (
                            f"from {before['source']!r}"
                            if before
                            else "from another source (hub-collect, an older collect, or "
                            "changed by hand)"
                        )
                        refuse(
                            f"{lesson}: submitted/{sid}/{lesson}/ already holds a submission {was}"
                            f"; it was not replaced by {entry.name!r}. If {entry.name!r} is not "
                            f"{sid}'s, rename it; to replace that submission on purpose, collect "
                            "again with --replace"
                        )
                        continue
                rec = {
                    "source": source,
                    "kind": kind,
                    "notebook": nb.relative_to(folder).as_posix(),
                    "sha256": sha,
                }
                _write(dest, lesson, nb, rec, when)
                got.setdefault(sid, []).append(lesson)
    return got, refused


def collect(
    src: Path, lessons: list[str], root: Path = ROOT, *, replace: bool = False
) -> dict[str, list[str]]:
    got, refused = collect_report(src, lessons, root, replace=replace)
    for student, ls in got.items():
        print(f"collected {student}: {', '.join(ls)}")
    for msg in refused:
        print(f"REFUSED {msg}")
    return got
