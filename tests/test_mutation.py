"""The hidden tests' strength, measured by mutation testing (tests/grading/mutation.py).

The full run (`python -m tests.grading.mutation`, every cosmic-ray mutant of every graded reference)
is slow evidence: its result is committed in course/lessons/<lesson>/mutation.json and
tests/grading/MUTATION.md. Here:
- the committed records are current: they hold exactly the mutants of today's references, each
  graded, and every function reaches the goal (90%) once the argued equivalents are set aside;
- every argued equivalent names a mutant that the record says survives;
- a seeded sample of mutants per lesson is graded again now, in the autograder's kernel, and gets
  the committed status (a killed mutant is still killed: the tests did not get weaker).
"""

from __future__ import annotations

import pytest

from tests.grading import mutation as M
from tests.grading.harness import lessons_with_variants

LESSONS = lessons_with_variants()
SAMPLE = {"9.5": 6}  # mutants re-graded per lesson (9.5's kernel is the slowest to start and run)


@pytest.fixture(scope="module")
def current():
    return {lesson: M.mutants(lesson) for lesson in LESSONS}


def _committed(lesson: str, current) -> list[M.Mutant]:
    rec = M.load(lesson)
    assert rec is not None, (
        f"no course/lessons/{lesson}/mutation.json: run python -m tests.grading.mutation {lesson}"
    )
    ms = [M.Mutant(**m, code="") for m in rec["mutants"]]
    now = {m.key for m in current[lesson]}
    then = {m.key for m in ms}
    assert now == then, (
        f"course/lessons/{lesson}/mutation.json is stale ({len(now - then)} new mutants, "
        f"{len(then - now)} gone): the reference changed; run python -m tests.grading.mutation {lesson}"
    )
    return ms


@pytest.mark.parametrize("lesson", LESSONS)
def test_committed_record_is_current_and_meets_the_goal(lesson, current):
    ms = _committed(lesson, current)
    pending = [m.key for m in ms if m.status == "pending"]
    assert not pending, f"{lesson}: mutants never graded: {pending[:5]}"
    problems = M.apply_equivalents(lesson, ms)
    assert not problems, "\n".join(problems)
    low = {f: s for f, s in M.scores(ms).items() if s["score"] < M.GOAL}
    assert not low, f"below {M.GOAL:.0%}: " + ", ".join(
        f"{f} {s['killed']}/{s['mutants'] - s['equivalent']}" for f, s in low.items()
    )


def test_report_matches_the_records():
    assert M.REPORT.read_text() == M.report(LESSONS), (
        "tests/grading/MUTATION.md is stale: run python -m tests.grading.mutation --report"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_sample_of_mutants_gets_its_committed_status(lesson, current):
    committed = {m.key: m for m in _committed(lesson, current)}
    M.apply_equivalents(lesson, list(committed.values()))
    import random

    pool = current[lesson]
    sample = random.Random(f"sample-{lesson}").sample(pool, SAMPLE.get(lesson, 12))
    M.grade(lesson, sample, progress=False)
    M.apply_equivalents(lesson, sample, complete=False)
    wrong = [
        f"{m.key} ({m.function} line {m.line}: {m.before} -> {m.after}): now {m.status}, "
        f"committed {committed[m.key].status}"
        for m in sample
        if (m.status == "killed") != (committed[m.key].status == "killed")
    ]
    assert not wrong, "\n".join(wrong)
