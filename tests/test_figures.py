"""Figures the text quotes come from the code (helpers/figures.py): every ``<!--fig:KEY-->``
marker in a lesson's text or in the claims registry names a ``quote("KEY", ...)`` in that lesson's
code, every quote is quoted somewhere, the student's notebooks show no marker, and (called from
tests/test_lessons.py, which runs each lesson) the number written before each marker is the text
the code produced on this run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

from course.build_lessons import FIGURE_MARKER, LESSONS
from helpers.figures import ANY_MARKER, MARKER, quote, strip_markers
from tests.conftest import ROOT

REGISTRY = ROOT / "course" / "docs" / "Module_9_Sources.md"
QUOTE_CALL = re.compile(r"""quote\(\s*f?["'](9\.[1-5]:[^"']+)["']""")


def quoted_patterns(source: str) -> list[re.Pattern]:
    """The keys a lesson's code quotes, as patterns: an f-string's ``{...}`` matches any name."""
    out = []
    for key in QUOTE_CALL.findall(source):
        parts = re.split(r"\{[^}]*\}", key)
        out.append(re.compile("[A-Za-z0-9_]+".join(map(re.escape, parts))))
    return out


def lesson_source(lesson: str) -> str:
    return (ROOT / "course" / "lessons" / lesson / "lesson.py").read_text()


def markers(lesson: str) -> list[tuple[str, str, str]]:
    """(where, quoted text, key) of every marker of ``lesson``: in its lesson.py and in the
    registry (any row: a key names its lesson)."""
    out = []
    for where, text in (("lesson.py", lesson_source(lesson)), ("registry", REGISTRY.read_text())):
        for m in MARKER.finditer(text):
            if m["key"].startswith(lesson + ":"):
                out.append((where, m["text"], m["key"]))
    return out


def check_figures(lesson: str, figures_file: Path) -> None:
    """After a run of ``lesson`` with COURSE_FIGURES=figures_file: every quoted number is what
    the code produced."""
    seen: dict[str, set[str]] = {}
    if figures_file.exists():
        for line in figures_file.read_text().splitlines():
            row = json.loads(line)
            seen.setdefault(row["key"], set()).add(row["text"])
    twice = {key: sorted(texts) for key, texts in seen.items() if len(texts) > 1}
    assert not twice, f"figures quoted with different values on one run: {twice}"
    got = {key: texts.pop() for key, texts in seen.items()}
    wrong = [(where, key, text, got.get(key)) for where, text, key in markers(lesson)
             if got.get(key) != text]  # fmt: skip
    assert not wrong, (
        "numbers in the text that are not what the code printed on this run "
        f"(where, key, text, code): {wrong}"
    )


def test_every_marker_is_well_formed_and_names_a_quote_in_its_lesson():
    texts = {lesson: lesson_source(lesson) for lesson in LESSONS}
    texts["registry"] = REGISTRY.read_text()
    for where, text in texts.items():
        bad = [m.group(0) for m in ANY_MARKER.finditer(text)
               if not MARKER.fullmatch(m.group(0)) and not any(
                   x.end() == m.end() for x in MARKER.finditer(text))]  # fmt: skip
        assert not bad, f"{where}: markers that name no key: {bad}"
    for lesson in LESSONS:
        patterns = quoted_patterns(texts[lesson])
        keys = {key for _, _, key in markers(lesson)}
        for where, _, key in markers(lesson):
            assert any(p.fullmatch(key) for p in patterns), (
                f"{where}: no cell of {lesson} quotes {key}"
            )
        orphans = [p.pattern for p in patterns if not any(p.fullmatch(k) for k in keys)]
        assert not orphans, f"{lesson}: figures quoted by code that no text shows: {orphans}"
    assert any(markers(lesson) for lesson in LESSONS), "no figure is tied to its code"


def test_no_marker_reaches_a_student_notebook():
    for lesson in LESSONS:
        for folder in ("source_notebooks", "release"):
            nb = nbformat.read(ROOT / folder / lesson / f"{lesson}.ipynb", as_version=4)
            left = [c.source[:80] for c in nb.cells if ANY_MARKER.search(c.source)]
            assert not left, f"{folder}/{lesson}: markers left in {left}"


def test_the_build_and_the_library_strip_the_same_markers():
    assert FIGURE_MARKER.pattern == ANY_MARKER.pattern and FIGURE_MARKER.flags == ANY_MARKER.flags
    assert strip_markers("first 38<!--fig:9.1:x--> steps") == "first 38 steps"
    assert strip_markers("38<!-- Fig: 9.1:x --> steps") == "38 steps"  # mistyped: still stripped
    assert not MARKER.search("38<!-- Fig: 9.1:x -->")  # ... and refused by the well-formed check


def test_quote_formats_records_and_refuses_bad_keys(tmp_path, monkeypatch):
    out = tmp_path / "figures.jsonl"
    monkeypatch.setenv("COURSE_FIGURES", str(out))
    assert quote("9.4:mode", 0.004512, ".4f") == "0.0045" and quote("9.1:n", 38) == "38"
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {"key": "9.4:mode", "text": "0.0045"}, {"key": "9.1:n", "text": "38"}]  # fmt: skip
    for bad in ("steps", "9.6:x", "9.1:", "9.1:a-b"):
        try:
            quote(bad, 1)
        except ValueError:
            continue
        raise AssertionError(bad)
    check_text = "falls for 38<!--fig:9.1:n--> steps, min 0.0045<!--fig:9.4:mode-->, (-0.018<!--fig:9.4:d-->)"
    assert [(m["text"], m["key"]) for m in MARKER.finditer(check_text)] == [
        ("38", "9.1:n"), ("0.0045", "9.4:mode"), ("-0.018", "9.4:d")]  # fmt: skip


def test_a_drifted_number_fails_the_check(tmp_path, monkeypatch):
    lesson = next(lesson for lesson in LESSONS if markers(lesson))
    out = tmp_path / "figures.jsonl"
    rows = [{"key": key, "text": text} for _, text, key in markers(lesson)]
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    check_figures(lesson, out)  # the text as it is
    out.write_text("\n".join(json.dumps(r) for r in rows[1:]) + "\n")
    with out.open("a") as f:  # the first figure printed with another value
        f.write(json.dumps({"key": rows[0]["key"], "text": rows[0]["text"] + "1"}) + "\n")
    try:
        check_figures(lesson, out)
    except AssertionError as err:
        assert rows[0]["key"] in str(err)
    else:
        raise AssertionError("a changed figure passed the check")
    with out.open("a") as f:  # and printed twice, once right and once wrong
        f.write(json.dumps({"key": rows[0]["key"], "text": rows[0]["text"]}) + "\n")
    try:
        check_figures(lesson, out)
    except AssertionError as err:
        assert "different values" in str(err)
    else:
        raise AssertionError("a figure quoted twice with two values passed the check")
