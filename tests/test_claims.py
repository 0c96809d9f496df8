"""The claims registry (course/docs/Module_9_Sources.md) and the lessons cite each other: every registry
id is cited in the lesson text as ``[9.X-n]`` where the claim is made, and every such citation in a
lesson names an id that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "course" / "docs" / "Module_9_Sources.md"
LESSONS = sorted((ROOT / "course" / "lessons").glob("9.*/lesson.py"))
ID_ROW = re.compile(r"^\| (9\.[1-5]-\d+) \|", re.M)
CITATION = re.compile(r"\[(9\.[1-5]-\d+)\]")


def registry_ids() -> list[str]:
    return ID_ROW.findall(REGISTRY.read_text())


def citations() -> dict[str, set[str]]:
    return {p.parent.name: set(CITATION.findall(p.read_text())) for p in LESSONS}


def test_registry_ids_are_unique():
    ids = registry_ids()
    assert len(ids) > 50 and len(ids) == len(set(ids))


def test_every_registry_id_is_cited_in_its_lesson():
    cited = citations()
    missing = [i for i in registry_ids() if i not in cited[i.split("-")[0]]]
    assert not missing, f"registry ids never cited as [id] in their lesson: {missing}"


def test_every_citation_exists_in_the_registry():
    ids = set(registry_ids())
    unknown = {lesson: sorted(c - ids) for lesson, c in citations().items() if c - ids}
    assert not unknown, f"lessons cite ids the registry does not have: {unknown}"


def test_the_pattern_finds_what_it_should():
    assert CITATION.findall("as reported [9.1-4] and [9.5-11]; not 9.2-3") == ["9.1-4", "9.5-11"]
    assert ID_ROW.findall("| 9.3-2 | a claim |\n| # | header |") == ["9.3-2"]


# The course's authoring documents, by the names they had while it was written ("seed 000", "the
# module specification", "the 9.5 fragment", reviews): no text a student reads may cite them
# (tests/test_bundle.py runs the same pattern over every file of the bundle).
AUTHORING_JARGON = re.compile(r"seed 00\d|module specification|\bfragments?\b|expert review", re.I)


def test_the_registry_names_no_authoring_document():
    """The registry ships to students: it cites papers, libraries and cells, never the course's
    authoring documents."""
    found = [
        line[:80] for line in REGISTRY.read_text().splitlines() if AUTHORING_JARGON.search(line)
    ]
    assert not found, found
    assert "How to read the status column" in REGISTRY.read_text()
