"""The fast tier (`./test.sh --fast`) leaves out exactly the end-to-end files it names, and those
names are real files: a renamed file would otherwise slip into (or out of) the fast tier unseen."""

from __future__ import annotations

from tests.conftest import END_TO_END, ROOT


def test_every_end_to_end_name_is_a_test_file():
    files = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert END_TO_END <= files, sorted(END_TO_END - files)
    assert files - END_TO_END, "no fast test left"


def test_the_fast_tier_deselects_the_marker_the_conftest_sets():
    script = (ROOT / "test.sh").read_text()
    assert '-m "not slow and not browser and not e2e"' in script
    toml = (ROOT / "pyproject.toml").read_text()
    assert '"e2e: ' in toml
