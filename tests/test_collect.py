"""Collect cannot be tricked: id collisions, replaced submissions, zip bombs, back-dated files.

Every case is generated here (no real class run): small inboxes of folders and zips are collected
into a throwaway course folder, and each refusal must name its reason and what to do next.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import struct
import time
import zipfile
from pathlib import Path

import pytest
from nbgrader.utils import parse_utc

from course.grading import collect as C

LESSON = "9.2"
NB = f"{LESSON}.ipynb"
T1 = dt.datetime(2030, 3, 1, 9, 0, 0, tzinfo=dt.UTC)
T2 = dt.datetime(2030, 3, 2, 9, 0, 0, tzinfo=dt.UTC)


def notebook(who: str) -> bytes:
    """A small notebook whose text says whose it is, so that sources can be told apart."""
    cell = {"cell_type": "markdown", "metadata": {}, "source": f"work of {who}"}
    return json.dumps(
        {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    ).encode()


def make_entry(inbox: Path, name: str, who: str) -> Path:
    """A student entry: ``name`` ending in '/' is a folder, in '.zip' a zip."""
    inbox.mkdir(parents=True, exist_ok=True)
    if name.endswith("/"):
        ws = inbox / name.rstrip("/") / "workspace" / LESSON
        ws.mkdir(parents=True)
        (ws / NB).write_bytes(notebook(who))
        return ws.parent.parent
    with zipfile.ZipFile(inbox / name, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"course/workspace/{LESSON}/{NB}", notebook(who))
    return inbox / name


def submitted(course: Path, sid: str) -> Path:
    return course / "submitted" / sid / LESSON


def stamp_of(course: Path, sid: str) -> dt.datetime:
    text = (submitted(course, sid) / "timestamp.txt").read_text()
    return dt.datetime.strptime(text, C.STAMP_FORMAT).replace(tzinfo=dt.UTC)


# ----------------------------------------------------------------------------------------------
# 1. one student id, two sources


@pytest.mark.parametrize(
    "names, sid",
    [
        (["alice/", "alice.zip"], "alice"),
        (["Alice!.zip", "Alice_.zip"], "Alice"),
        (["Ben Smith/", "Ben_Smith.zip"], "Ben_Smith"),
        (["_carol_/", "carol/", "carol.zip"], "carol"),
        (["dan (1).zip", "dan_1/"], "dan_1"),
        (["Eve/", "eve.zip"], "Eve"),  # differ only in case: one student on most file systems
        (["frank?/", "frank*/"], "frank"),
    ],
)
def test_an_id_claimed_by_two_sources_is_refused_for_both(tmp_path, names, sid):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    for i, name in enumerate(names):
        make_entry(inbox, name, f"source {i}")
    make_entry(inbox, "zoe/", "zoe")  # an honest student in the same run
    got, refused = C.collect_report(inbox, [LESSON], root=course)
    assert got == {"zoe": [LESSON]}, (got, refused)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["zoe"]
    assert len(refused) == 1, refused
    msg = refused[0]
    for name in names:
        assert repr(name.rstrip("/")) in msg, f"{name!r} is not named in: {msg}"
    assert "nothing was collected" in msg and "Rename" in msg and "separate runs" in msg, msg


def test_a_symlink_claiming_an_id_also_blocks_the_real_entry(tmp_path):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    make_entry(inbox, "gina/", "gina")
    make_entry(tmp_path / "elsewhere", "gina_/", "someone else")
    (inbox / "gina!").symlink_to(tmp_path / "elsewhere" / "gina_")
    got, refused = C.collect_report(inbox, [LESSON], root=course)
    assert got == {} and not (course / "submitted").exists(), (got, refused)
    assert "'gina'" in refused[0] and "'gina!'" in refused[0], refused


# ----------------------------------------------------------------------------------------------
# 1b. a later run never silently replaces a submission from another source


def test_a_later_run_does_not_replace_another_sources_submission(tmp_path):
    course = tmp_path / "course"
    make_entry(tmp_path / "week1", "alice/", "alice")
    got, refused = C.collect_report(tmp_path / "week1", [LESSON], root=course, now=T1)
    assert got == {"alice": [LESSON]} and not refused
    rec = json.loads((submitted(course, "alice") / C.RECORD).read_text())
    assert (
        rec["source"] == str((tmp_path / "week1" / "alice").resolve()) and rec["kind"] == "folder"
    )

    # A zip named like her, in another inbox (or the same one, a week later).
    for inbox in ["week2", "week1"]:
        make_entry(tmp_path / inbox, "alice.zip", "mallory")
        if inbox == "week1":
            (tmp_path / "week1" / "alice").rename(tmp_path / "alice-away")
        got, refused = C.collect_report(tmp_path / inbox, [LESSON], root=course, now=T2)
        assert got == {}, (inbox, got, refused)
        assert (submitted(course, "alice") / NB).read_bytes() == notebook("alice")
        assert stamp_of(course, "alice") == T1
        msg = "\n".join(refused)
        assert "alice.zip" in msg and "already holds a submission" in msg, msg
        assert "rename it" in msg and "--replace" in msg, msg

    # On purpose: --replace.
    got, refused = C.collect_report(tmp_path / "week2", [LESSON], root=course, replace=True, now=T2)
    assert got == {"alice": [LESSON]} and not refused, refused
    assert (submitted(course, "alice") / NB).read_bytes() == notebook("mallory")
    assert stamp_of(course, "alice") == T2
    rec = json.loads((submitted(course, "alice") / C.RECORD).read_text())
    assert (
        rec["source"] == str((tmp_path / "week2" / "alice.zip").resolve()) and rec["kind"] == "zip"
    )
    assert sorted(p.name for p in submitted(course, "alice").iterdir()) == sorted(
        [NB, "timestamp.txt", C.RECORD]
    )
    assert [p.name for p in (course / "submitted" / "alice").iterdir()] == [LESSON]


def test_the_same_source_again_keeps_its_time_unless_its_notebook_changed(tmp_path):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    ws = make_entry(inbox, "ann/", "ann") / "workspace" / LESSON
    make_entry(inbox, "bob.zip", "bob")
    assert C.collect_report(inbox, [LESSON], root=course, now=T1)[0] == {
        "ann": [LESSON],
        "bob": [LESSON],
    }
    got, refused = C.collect_report(inbox, [LESSON], root=course, now=T2)
    assert got == {"ann": [LESSON], "bob": [LESSON]} and not refused, refused
    assert stamp_of(course, "ann") == T1 and stamp_of(course, "bob") == T1  # nothing new came

    (ws / NB).write_bytes(notebook("ann, second try"))
    got, refused = C.collect_report(inbox, [LESSON], root=course, now=T2)
    assert got == {"ann": [LESSON], "bob": [LESSON]} and not refused, refused
    assert (submitted(course, "ann") / NB).read_bytes() == notebook("ann, second try")
    assert stamp_of(course, "ann") == T2 and stamp_of(course, "bob") == T1


@pytest.mark.parametrize("before", ["hub-collect", "no record", "edited by hand", "bad record"])
def test_a_submission_without_a_matching_record_is_not_replaced(tmp_path, before):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    make_entry(inbox, "cleo/", "cleo")
    dest = submitted(course, "cleo")
    if before != "hub-collect":
        C.collect_report(inbox, [LESSON], root=course, now=T1)
        if before == "no record":  # as an older collect left it
            (dest / C.RECORD).unlink()
        elif before == "edited by hand":
            (dest / NB).write_bytes(notebook("changed since"))
        else:
            (dest / C.RECORD).write_text("{not json")
    else:  # nbgrader collect writes the notebook and timestamp.txt, and no record
        dest.mkdir(parents=True)
        (dest / NB).write_bytes(notebook("changed since"))
        (dest / "timestamp.txt").write_text("2030-02-01 09:00:00.000000 UTC")
    (inbox / "cleo" / "workspace" / LESSON / NB).write_bytes(notebook("cleo, new"))
    kept = {p.name: p.read_bytes() for p in dest.iterdir()}
    got, refused = C.collect_report(inbox, [LESSON], root=course, now=T2)
    assert got == {} and {p.name: p.read_bytes() for p in dest.iterdir()} == kept
    assert "another source" in refused[0] and "--replace" in refused[0], refused
    got, refused = C.collect_report(inbox, [LESSON], root=course, replace=True, now=T2)
    assert got == {"cleo": [LESSON]} and (dest / NB).read_bytes() == notebook("cleo, new")


# ----------------------------------------------------------------------------------------------
# 2. zip bombs


def zeros(zf: zipfile.ZipFile, name: str, mib: int) -> None:
    """A member of ``mib`` MiB of zeros, written in chunks (a few hundred KB in the zip)."""
    chunk = bytes(2**20)
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with zf.open(info, "w") as f:
        for _ in range(mib):
            f.write(chunk)


def lie_about_sizes(path: Path, declared: int) -> None:
    """Rewrite every member's uncompressed size, in its local and its central header."""
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    count, _, start = struct.unpack("<HII", data[end + 10 : end + 20])
    at = start
    for _ in range(count):
        assert data[at : at + 4] == b"PK\x01\x02"
        n, m, k = struct.unpack("<HHH", data[at + 28 : at + 34])
        local = struct.unpack("<I", data[at + 42 : at + 46])[0]
        struct.pack_into("<I", data, at + 24, declared)
        struct.pack_into("<I", data, local + 22, declared)
        at += 46 + n + m + k
    path.write_bytes(bytes(data))


def lie_about_count(path: Path, count: int) -> None:
    """Rewrite the member count in the zip's end record."""
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, count, count)
    path.write_bytes(bytes(data))


def bomb_many_members(path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"course/workspace/{LESSON}/{NB}", notebook("bomb"))
        for i in range(C.ZIP_MEMBER_CAP + 1):
            zf.writestr(f"junk/{i}.txt", "x")


def bomb_many_members_count_lies(path: Path) -> None:
    bomb_many_members(path)
    lie_about_count(path, 3)


def bomb_many_notebooks(path: Path) -> None:
    """Notebooks each under the per-notebook cap, together far past the zip's cap."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"course/workspace/{LESSON}/{NB}", notebook("bomb"))
        for i in range(C.ZIP_TOTAL_CAP_MB // (C.NOTEBOOK_CAP_MB - 1) + 1):
            zeros(zf, f"copies/{i}/{NB}", C.NOTEBOOK_CAP_MB - 1)


def bomb_one_huge_member(path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zeros(zf, f"course/workspace/{LESSON}/{NB}", 200)


def bomb_declared_size_lies(path: Path) -> None:
    """One notebook that declares 1 KB and inflates to 40 MiB."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zeros(zf, f"course/workspace/{LESSON}/{NB}", 40)
    lie_about_sizes(path, 1000)


def bomb_many_small_liars(path: Path) -> None:
    """Members that each declare 1 KB (3 KB in all) and together inflate to 90 MiB."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(3):
            zeros(zf, f"copies/{i}/{NB}", 30)
    lie_about_sizes(path, 1000)


@pytest.mark.parametrize(
    "build, needle",
    [
        (bomb_many_members, "members (more than 1000)"),
        (bomb_many_members_count_lies, "members (more than 1000)"),
        (bomb_many_notebooks, f"more than {C.ZIP_TOTAL_CAP_MB} MB"),
        (bomb_one_huge_member, f"larger than {C.NOTEBOOK_CAP_MB} MB"),
        (bomb_declared_size_lies, "cannot be read (Bad CRC-32"),
        (bomb_many_small_liars, "cannot be read (Bad CRC-32"),
    ],
)
def test_zip_bombs_are_refused_before_they_fill_the_disk(tmp_path, monkeypatch, build, needle):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    inbox.mkdir()
    build(inbox / "mallory.zip")
    assert (inbox / "mallory.zip").stat().st_size < 2**20, "the bomb should be small"
    make_entry(inbox, "zoe/", "zoe")

    written = []  # every byte extraction writes, wherever it goes
    real_open = open

    class Counting:
        def __init__(self, f):
            self.f = f

        def write(self, b):
            written.append(len(b))
            return self.f.write(b)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def counting_open(file, mode="r", *a, **k):
        f = real_open(file, mode, *a, **k)
        return Counting(f) if "w" in mode else f

    monkeypatch.setattr(C, "open", counting_open, raising=False)
    start = time.monotonic()
    got, refused = C.collect_report(inbox, [LESSON], root=course)
    assert time.monotonic() - start < 10
    assert got == {"zoe": [LESSON]}, (got, refused)
    assert sum(written) <= (C.ZIP_TOTAL_CAP_MB + 1) * 2**20, f"{sum(written)} bytes extracted"
    msg = "\n".join(refused)
    assert msg.startswith("mallory: ") and needle in msg, msg
    assert "Ask the student" in msg or "ask the student" in msg, msg
    assert not (course / "submitted" / "mallory").exists()


def test_a_zip_within_the_caps_is_collected(tmp_path):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    inbox.mkdir()
    with zipfile.ZipFile(inbox / "ida.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"course/workspace/{LESSON}/{NB}", notebook("ida"))
        for i in range(C.ZIP_MEMBER_CAP - 2):
            zf.writestr(f"course/data/{i}.txt", "x")
        zeros(zf, f"old/{NB}", C.NOTEBOOK_CAP_MB - 1)  # after course/ in the search order
    got, refused = C.collect_report(inbox, [LESSON], root=course)
    assert got == {"ida": [LESSON]} and not refused, refused
    assert (submitted(course, "ida") / NB).read_bytes() == notebook("ida")


# ----------------------------------------------------------------------------------------------
# 3. the submission time is the collect run's, never a file's


@pytest.mark.parametrize("shape", ["folder", "zip"])
def test_a_back_dated_notebook_does_not_set_the_submission_time(tmp_path, shape):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    old = dt.datetime(2001, 1, 1, tzinfo=dt.UTC).timestamp()
    if shape == "folder":
        entry = make_entry(inbox, "hal/", "hal")
        nb = entry / "workspace" / LESSON / NB
        os.utime(nb, (old, old))
        for p in [nb.parent, nb.parent.parent, entry]:
            os.utime(p, (old, old))
    else:
        inbox.mkdir()
        entry = inbox / "hal.zip"
        with zipfile.ZipFile(entry, "w") as zf:
            info = zipfile.ZipInfo(f"course/workspace/{LESSON}/{NB}", (1999, 12, 31, 23, 59, 58))
            zf.writestr(info, notebook("hal"))
        os.utime(entry, (old, old))
    before = dt.datetime.now(dt.UTC)
    got, refused = C.collect_report(inbox, [LESSON], root=course)
    after = dt.datetime.now(dt.UTC)
    assert got == {"hal": [LESSON]} and not refused, refused
    text = (submitted(course, "hal") / "timestamp.txt").read_text()
    assert text.endswith(" UTC"), text
    when = parse_utc(text).replace(tzinfo=dt.UTC)  # read as nbgrader reads it
    assert before.replace(microsecond=0) <= when <= after, (text, before, after)
    rec = json.loads((submitted(course, "hal") / C.RECORD).read_text())
    assert rec["submitted_at"] == text


def test_one_run_gives_every_student_the_same_time(tmp_path):
    inbox, course = tmp_path / "inbox", tmp_path / "course"
    for name in ["a1/", "a2.zip", "a3/"]:
        make_entry(inbox, name, name)
    got, _ = C.collect_report(inbox, [LESSON], root=course)  # the run's own clock, not now=
    assert sorted(got) == ["a1", "a2", "a3"]
    assert len({stamp_of(course, s) for s in got}) == 1, "one run, one submission time"
