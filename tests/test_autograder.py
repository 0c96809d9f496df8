"""The autograder, proven right.

- Planted bugs are caught and valid alternatives pass: every graded function of every lesson has
  variants in course/lessons/<lesson>/variants.py; each lesson's graded test cells (visible + hidden) are run
  against each variant in one kernel (tests/grading/harness.py). A bug must fail its function's test
  cell and no other (except declared dependants); a valid alternative must fail none.
- Full nbgrader runs on fake classes, through course/instructor.py: the sharded class run (2 workers,
  private gradebooks, merged) gives the same grades as nbgrader's own sequential run, and submissions
  that loop, kill their kernel, break their syntax, delete or edit test cells, redefine a function
  after its test, monkeypatch numpy/math/builtins, return lying objects, or warn on stderr get exactly
  the points they earned; an unreadable notebook is recorded with a reason.
- Feedback holds no hidden test; the student bundle holds no solution and no hidden test; collect
  and export work.
(Full marks for the reference and zero for the untouched release: tests/test_lessons.py.)
"""

from __future__ import annotations

import ast
import copy
import csv
import html
import json
import os
import re
import shutil
import tarfile
import zipfile

import nbformat
import pytest

from course import instructor
from course.build_lessons import LESSONS
from tests.conftest import ROOT
from tests.grading import students as S
from tests.grading.harness import (
    Lesson,
    VariantFile,
    cells_reached,
    lessons_with_variants,
    run_variants,
)
from tests.nbgrader_course import TRUSTED, Course
from tests.test_lessons import protected_lines

HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", re.S)
HEADER_ONLY = re.compile(r"(except|try|else|finally|elif|if|for|while|with)\b[^=#]{0,30}:")
_RESULTS: dict[str, dict] = {}
# Lessons whose variants run against every test cell; the others against the cells each variant can
# reach (tests/grading/harness.py, cells_reached): 9.4 and 9.5 hold 189 variants and their test cells
# are the slowest (the full run took 16 min of the suite). The full lessons check the rule on 131
# variants (test_a_variant_fails_only_cells_it_can_reach); COURSE_EVERY_CELL=1 runs all lessons in full.
EVERY_CELL = {"9.1", "9.2", "9.3"}


def every_cell(lesson: str) -> bool:
    return lesson in EVERY_CELL or os.environ.get("COURSE_EVERY_CELL") == "1"


def harness(lesson: str) -> dict:
    if lesson not in _RESULTS:
        _RESULTS[lesson] = run_variants(
            lesson, VariantFile.load(lesson).variants, every_cell=every_cell(lesson)
        )
    return _RESULTS[lesson]


def hidden_lines(lesson: str) -> set[str]:
    """Lines of 12+ characters (comments included) that the source holds only inside hidden tests:
    a line that also appears elsewhere in the lesson (a visible test, a solution) reveals nothing."""
    from course.build_lessons import trusted_tests

    nb = nbformat.read(ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb", as_version=4)
    lines = {  # the hidden tests as the grader runs them (no notebook holds them)
        s
        for t in trusted_tests(lesson).values()
        for region in HIDDEN.findall(t.code)
        for s in (ln.strip() for ln in region.splitlines())
        if len(s) >= 12
    }
    public = "\n".join(HIDDEN.sub("", c.source) for c in nb.cells)
    # a bare statement header ("except ValueError:", "for _case in range(48):") is Python syntax
    # that any library printed by a student also holds: it reveals nothing of a test
    return {s for s in lines if s not in public and not HEADER_ONLY.fullmatch(s)}


# ---------------------------------------------------------------------------------------------
# coverage and the in-kernel variant runs


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_graded_function_has_bugs_and_a_valid_alternative(lesson):
    assert lesson in lessons_with_variants(), (
        f"lesson {lesson} has no course/lessons/{lesson}/variants.py: add planted bugs (>= 3 per graded "
        "function) and valid alternatives (>= 1) for it"
    )
    info, vf = Lesson.load(lesson), VariantFile.load(lesson)
    for v in vf.variants:
        assert v.function in info.function_cell, f"{lesson}: variant for unknown function {v.name}"
    for fn in info.function_cell:
        bugs = [v for v in vf.variants if v.function == fn and v.kind == "bug"]
        valid = [v for v in vf.variants if v.function == fn and v.kind == "valid"]
        if any(
            info.function_cell[f] == info.function_cell[fn] for f in info.function_cell if f != fn
        ):
            # several functions share a solution cell and a test cell (rloo): count them together
            cell_fns = [
                f for f in info.function_cell if info.function_cell[f] == info.function_cell[fn]
            ]
            bugs = [v for v in vf.variants if v.function in cell_fns and v.kind == "bug"]
        assert len(bugs) >= 3, f"{lesson}.{fn}: only {len(bugs)} planted bugs"
        assert valid, f"{lesson}.{fn}: no valid alternative"


@pytest.mark.parametrize("lesson", LESSONS)
def test_planted_bugs_are_caught_only_where_they_are_and_valid_answers_pass(lesson):
    if lesson not in lessons_with_variants():
        pytest.skip(f"no variants for {lesson} (the coverage test fails for it)")
    info, vf = Lesson.load(lesson), VariantFile.load(lesson)
    res = harness(lesson)
    assert not any(res["baseline"].values()), f"the reference fails: {res['baseline']}"
    assert not any(res["restored"].values()), "the reference was not restored after the variants"
    # each variant is graded with the cells a class run would leave out of its notebook
    # (course/grading/demos.py): the reference's, less the demos it makes needed, which the
    # harness runs first (res["demos_run"]; on 9.5, one planted bug whose train_step stores into
    # its trainer argument: the demos that call a student function that writes run)
    missed, strays, false_fails = [], [], []
    for v in vf.variants:
        failed = {c for c, f in res[v.name].items() if f}
        if v.kind == "valid":
            if failed:
                false_fails.append((v.name, sorted(failed)))
            continue
        must, extra = vf.may_fail(info, v)
        if not must & failed:  # a function with several test cells loses points in at least one
            missed.append(v.name)
        if failed - must - extra:
            strays.append((v.name, sorted(failed - must - extra)))
    bugs = [v for v in vf.variants if v.kind == "bug"]
    valids = [v for v in vf.variants if v.kind == "valid"]
    print(f"\n{lesson}: caught {len(bugs) - len(missed)}/{len(bugs)} planted bugs; "
          f"false fails {len(false_fails)}/{len(valids)} valid alternatives")  # fmt: skip
    assert not missed, f"{lesson}: planted bugs not caught by their test cell: {missed}"
    assert not strays, f"{lesson}: bugs that fail other functions' test cells: {strays}"
    assert not false_fails, f"{lesson}: valid alternatives that lose points: {false_fails}"


@pytest.mark.parametrize("lesson", sorted(EVERY_CELL))
def test_a_variant_fails_only_cells_it_can_reach(lesson):
    """The rule that lets 9.4 and 9.5 skip cells, checked where every cell ran: each variant's
    failing cells are among the cells it can reach, and every variant of these lessons only binds
    names (so none falls back to running everything)."""
    info, vf = Lesson.load(lesson), VariantFile.load(lesson)
    res = harness(lesson)
    assert every_cell(lesson)
    for v in vf.variants:
        reached = cells_reached(info, v.code)
        assert reached is not None, f"{v.name}: the variant does more than bind names"
        assert set(res[v.name]) == set(info.test_cells)  # it ran everywhere
        failed = {c for c, f in res[v.name].items() if f}
        assert failed <= set(reached), (
            f"{v.name}: fails {sorted(failed - set(reached))} it cannot reach"
        )


def test_cells_reached_follows_solutions_and_falls_back_on_side_effects():
    info = Lesson.load("9.1")
    own = info.tests_of(next(iter(info.function_cell)))
    f = next(iter(info.function_cell))
    assert set(own) <= set(cells_reached(info, f"def {f}(*a, **k):\n    return None\n"))
    assert cells_reached(info, "def not_a_graded_name():\n    pass\n") == []
    for side_effect in [
        "import numpy as np\nnp.mean = len\n",
        "print('x')\n",
        "d = {}\nd['k'] = 1\n",
    ]:
        assert cells_reached(info, side_effect) is None, side_effect


# ---------------------------------------------------------------------------------------------
# full nbgrader runs on fake classes


def _submit(course: Course, lesson: str, student: str, nb) -> None:
    dest = course.root / "submitted" / student / lesson
    dest.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, str):
        (dest / f"{lesson}.ipynb").write_text(nb)
    else:
        nbformat.write(nb, dest / f"{lesson}.ipynb")
    (dest / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")


def _code_scores(course: Course, lesson: str) -> dict[str, dict[str, float]]:
    tests = set(Lesson.load(lesson).test_cells)
    return {
        s: {c: v for c, v in per.items() if c in tests} for s, per in course.scores(lesson).items()
    }


def _demo_reader(lesson: str, nb):
    """The reference, with its first graded function wrapped so that every call reads a name the
    lesson's last demo cell that assigns one binds (the demo must then run when graded) and one
    demo cell changed (it must run, as the student changed it). Returns (notebook, the demo's
    index, the changed cell's index)."""
    from course.grading import demos

    nb = copy.deepcopy(nb)
    release = nbformat.read(ROOT / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    left = demos.skippable(nb.cells, demos.lesson_cells(release.cells))
    named = [
        (i, stmt.targets[0].id)
        for i in sorted(left)
        for stmt in ast.parse(nb.cells[i].source).body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
    ]
    demo, name = named[-1]
    sol = next(c for c in nb.cells if c.cell_type == "code"
               and c.metadata.get("nbgrader", {}).get("solution"))  # fmt: skip
    fn = re.search(r"^def (\w+)\(", sol.source, re.M).group(1)
    sol.source += (
        f"\n\nimport functools\n_mine = {fn}\n\n\n@functools.wraps(_mine)\n"
        f"def {fn}(*args, **kwargs):\n    {name}  # a demo's name, read at every call\n"
        "    return _mine(*args, **kwargs)\n"
    )
    changed = min(left)
    nb.cells[changed].source += "\nprint('a demo cell I changed')"
    return nb, demo, changed


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Lesson 9.2 graded twice: the sharded class run and nbgrader's own sequential run."""
    lesson = "9.2"
    res = harness(lesson)
    roster = S.class_for(lesson, res)
    for kind in S.ATTACKS:
        roster[f"x_{kind}"] = S.attacker(lesson, kind)
    reader, _, _ = _demo_reader(lesson, roster["alice_reference"][0])
    roster["dora_reads_a_demo"] = (reader, roster["alice_reference"][1])
    sharded = Course(tmp_path_factory.mktemp("sharded") / "course", [lesson])
    sequential = Course(tmp_path_factory.mktemp("sequential") / "course", [lesson])
    for course in (sharded, sequential):
        course.release(lesson)
    for student, (nb, _) in roster.items():
        _submit(sharded, lesson, student, nb)
    _submit(sharded, lesson, "zz_corrupt", "{ this is not a notebook")
    for student in ["alice_reference", "bob_bugs", "x_kill", "x_liar"]:
        _submit(sequential, lesson, student, roster[student][0])
    report = instructor.autograde(lesson, workers=2, timeout=10, root=sharded.root, trusted=TRUSTED)
    sequential.nbgrader("autograde", lesson, "--force", "--Execute.timeout=10", check=False)
    return lesson, roster, sharded, sequential, report


def test_class_run_gives_every_student_the_points_earned(graded_class):
    lesson, roster, sharded, _, report = graded_class
    got = _code_scores(sharded, lesson)
    wrong = {s: (got.get(s), want) for s, (_, want) in roster.items() if got.get(s) != want}
    assert not wrong, f"students graded wrongly (got, expected): {wrong}"
    assert report["failed"] == [
        {"student": "zz_corrupt", "reason": report["failed"][0]["reason"]}
    ], report["failed"]
    assert "notebook" in report["failed"][0]["reason"] or "JSON" in report["failed"][0]["reason"]
    assert sorted(report["graded"]) == sorted(roster)
    # the preflight's two canaries (solution full marks, release zero) ran before the class
    assert report["preflight"] == "passed"
    assert report["verdict_forks"] >= len(roster) + 2, report["verdict_forks"]
    saved = json.loads((sharded.root / "autograded" / f"report-{lesson}.json").read_text())
    assert saved["failed"] == report["failed"]


def test_demo_cells_are_left_out_unless_graded_code_reads_them_or_the_student_changed_them(
    graded_class,
):
    """GuardedExecute leaves out the lesson's demo cells (course/grading/demos.py), the reference's
    all but the imports; a demo whose name a graded function reads runs (dora's full marks, above,
    say the function found it), and so does a demo cell the student changed."""
    from course.grading import demos
    from course.grading.demos import NOTE

    lesson, roster, sharded, _, _ = graded_class

    def noted(student: str) -> set[int]:
        nb = nbformat.read(
            sharded.root / "autograded" / student / lesson / f"{lesson}.ipynb", as_version=4
        )
        return {i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                and [o.get("text") for o in c.outputs] == [NOTE]}, nb  # fmt: skip

    ref, _ = noted("alice_reference")
    ungraded = [i for i, c in enumerate(roster["alice_reference"][0].cells)
                if c.cell_type == "code" and not demos.graded(c)]  # fmt: skip
    assert ref == set(ungraded[1:])
    _, demo, changed = _demo_reader(lesson, roster["alice_reference"][0])
    dora, nb = noted("dora_reads_a_demo")
    assert demo in ref and demo not in dora and changed not in dora
    assert "a demo cell I changed" in "".join(o.get("text", "") for o in nb.cells[changed].outputs)
    assert dora < ref


def test_sharded_class_run_matches_nbgraders_sequential_run(graded_class):
    lesson, _, sharded, sequential, _ = graded_class
    seq, par = sequential.scores(lesson), sharded.scores(lesson)
    assert seq, "the sequential run graded nobody"
    for student, per in seq.items():
        assert par[student] == per, f"{student}: sharded {par[student]} != sequential {per}"


def test_feedback_shows_no_hidden_test(graded_class):
    lesson, _, sharded, _, _ = graded_class
    sharded.nbgrader("generate_feedback", lesson, "--force")
    files = sorted((sharded.root / "feedback").glob(f"*/{lesson}/{lesson}.html"))
    assert len(files) >= 10
    hidden = hidden_lines(lesson)
    for f in files:
        text = html.unescape(re.sub(r"<[^>]+>", "", f.read_text()))
        student = f.parent.parent.name
        own = "\n".join(c.source for c in nbformat.read(
            sharded.root / "submitted" / student / lesson / f"{lesson}.ipynb", as_version=4).cells)  # fmt: skip
        leaked = [ln for ln in hidden if ln in text and ln not in own]  # not the student's own code
        assert not leaked, f"{f.parent.parent.name}'s feedback shows hidden tests: {leaked[:3]}"
    bob = html.unescape(re.sub(r"<[^>]+>", "", (sharded.root / "feedback" / "bob_bugs" / lesson /
                                               f"{lesson}.html").read_text()))  # fmt: skip
    from course.build_lessons import HIDDEN_NOTE

    assert HIDDEN_NOTE.strip("# ()") in bob and "failed" in bob


def test_export_writes_every_student(graded_class):
    lesson, roster, sharded, _, _ = graded_class
    sharded.nbgrader("export", "--CsvExportPlugin.filename=grades.csv")
    rows = list(csv.DictReader((sharded.root / "grades.csv").open()))
    assert {r["student_id"] for r in rows if r["assignment"] == lesson} >= set(roster)


def test_every_lesson_has_a_class_run_with_its_preflight():
    """The class runs here are where each lesson's source is shown to get every point and its
    untouched release zero (the preflight, before any student): 9.2 in graded_class, the others in
    test_fake_class_of_other_lessons, which would skip a lesson without variants."""
    assert set(lessons_with_variants()) == set(LESSONS)
    # a lesson with no autograded cell would pass a preflight (0 of 0 points) and prove nothing
    assert all(Lesson.load(lesson).test_cells for lesson in LESSONS)


@pytest.mark.parametrize("lesson", [ls for ls in LESSONS if ls != "9.2"])
def test_fake_class_of_other_lessons(lesson, tmp_path):
    if lesson not in lessons_with_variants():
        pytest.skip(f"no variants for {lesson}")
    roster = S.class_for(lesson, harness(lesson))
    course = Course(tmp_path / "course", [lesson])
    course.release(lesson)
    for student, (nb, _) in roster.items():
        _submit(course, lesson, student, nb)
    report = instructor.autograde(lesson, workers=2, root=course.root, trusted=TRUSTED)
    assert not report["failed"] and report["preflight"] == "passed"
    # every verdict (the two preflight canaries' and each student's) a fork of the warm process
    assert report["verdict_forks"] >= len(roster) + 2, report["verdict_forks"]
    got = _code_scores(course, lesson)
    for student, (_, want) in roster.items():
        assert got[student] == want, f"{student}: got {got[student]}, expected {want}"


# ---------------------------------------------------------------------------------------------
# settings, bundle, collect


def test_config_has_a_reasonable_timeout_and_working_ignore_pattern():
    text = (ROOT / "course" / "nbgrader_config.py").read_text()
    timeout = int(re.search(r"c\.Execute\.timeout = (\d+)", text).group(1))
    assert 60 <= timeout <= 300
    assert "c.IgnorePattern.enabled = True" in text, "IgnorePattern does nothing unless enabled"
    assert "c.OverwriteCells.add_missing_cells = True" in text


def test_student_bundle_has_no_solution_or_hidden_test(tmp_path):
    tar = instructor.bundle(tmp_path)
    root = tmp_path / "rlvr-grpo-module9"
    names = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    for rel in instructor.BUNDLE_FILES:
        assert (root / rel).exists(), rel
    readme = (root / "README.md").read_text()
    assert "./notebook.sh 9.1" in readme.split("\n\n", 3)[1], "the README opens with notebook.sh"
    assert "test.sh" not in readme and "course/" not in readme, (
        "the bundle's README is the student's"
    )
    assert (root / "helpers" / "data" / "gru_lab_smoke.json").exists(), "lessons 9.4/9.5 read it"
    assert (root / "helpers" / "data" / "baselm" / "model.safetensors").exists(), (
        "the shipped BaseLM"
    )
    assert "| 9.5-11 |" in (root / "Module_9_Sources.md").read_text(), (
        "the registry the lessons cite"
    )
    for banned in (
        "source_notebooks/",
        "course/",
        "tests/",
        "bench/",
        "gradebook.db",
        "submitted/",
    ):
        assert not any(n.startswith(banned) or f"/{banned}" in n for n in names), banned
    # Notebooks: no line of a solution or hidden test. Other files (helpers/ may share idioms such
    # as "with torch.inference_mode():" with a solution): no graded function, no long protected line.
    protected = set().union(*(protected_lines(ls) for ls in LESSONS))
    graded = {f for ls in LESSONS for f in Lesson.load(ls).function_cell}
    for p in root.rglob("*"):
        if p.is_file() and p.suffix in (".ipynb", ".py", ".md", ".sh", ".txt", ".yml", ".toml"):
            text = p.read_text(errors="ignore")
            if p.suffix == ".ipynb":
                text = "\n".join(c.source for c in nbformat.read(p, as_version=4).cells)
            lines = {ln.strip() for ln in text.splitlines()}  # whole lines, not substrings
            if p.suffix == ".ipynb":  # release/9.X/9.X.ipynb
                leaked = sorted(protected_lines(p.stem) & lines)
            else:
                leaked = [ln for ln in protected & lines if len(ln) >= 40]
                leaked += [f"def {f}(" for f in graded if re.search(rf"^\s*def {f}\(", text, re.M)]
            assert not leaked, f"{p.relative_to(root)} leaks: {leaked[:3]}"
            assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text, p
    with tarfile.open(tar) as tf:
        assert len([m for m in tf.getmembers() if m.isfile()]) == len(names)


def test_collect_from_workspaces_and_zips(tmp_path):
    src = tmp_path / "inbox"
    nb = ROOT / "release" / "9.2" / "9.2.ipynb"
    ws = src / "ann" / "workspace" / "9.2"
    ws.mkdir(parents=True)
    shutil.copy(nb, ws / "9.2.ipynb")
    with zipfile.ZipFile(src / "Ben Smith.zip", "w") as zf:
        zf.write(nb, "course/workspace/9.2/9.2.ipynb")
        zf.writestr("../evil.ipynb", "{}")
    course = tmp_path / "course"
    got = instructor.collect(src, ["9.1", "9.2"], root=course)
    assert got == {"ann": ["9.2"], "Ben_Smith": ["9.2"]}
    for s in got:
        assert (course / "submitted" / s / "9.2" / "9.2.ipynb").read_bytes() == nb.read_bytes()
        assert "UTC" in (course / "submitted" / s / "9.2" / "timestamp.txt").read_text()
    assert not (tmp_path / "evil.ipynb").exists()
