"""The trusted verdict's benchmark cannot drift from its record, and what it says about the goal
follows from the numbers (bench/bench_verdict.py: ``measure`` writes bench/records/verdict.json,
``render`` turns it into BENCHMARKS.md's section)."""

from __future__ import annotations

import json
import subprocess

import pytest

from bench import bench_verdict as bv
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads(bv.RECORD.read_text())


def test_benchmarks_md_is_the_record_rendered(record):
    text = (ROOT / "BENCHMARKS.md").read_text()
    section = text.split("<!-- bench:verdict:begin -->")[1].split("<!-- bench:verdict:end -->")[0]
    assert bv.render(record).strip() == section.strip(), (
        "BENCHMARKS.md's verdict section is not bench/records/verdict.json rendered: run "
        "python -m bench.bench_verdict --render (or measure again)"
    )


def test_the_record_is_complete_and_from_a_committed_tree(record):
    assert not record["today"]["dirty"], "measure on a committed tree (the record names its commit)"
    assert record["reps"] >= 5, "at least 5 repetitions: the section reports their range"
    lessons = sorted(p.name for p in (ROOT / "source_notebooks").iterdir() if p.is_dir())
    assert sorted(record["lessons"]) == lessons
    for lesson, row in record["lessons"].items():
        for kind in ("wall", "cpu"):
            assert set(row[kind]) == set(bv.WHO), lesson
            assert all(len(v) == record["reps"] and min(v) > 0 for v in row[kind].values()), lesson
    # class runs of the lightest lesson, the one with the most test cells and the heaviest, each
    # with wall and CPU time
    assert {k["lesson"] for k in record["classes"]} >= {"9.1", "9.4", "9.5"}
    for lesson, row in record["lessons"].items():  # graded as a class is: demo cells left out
        assert row["left_out"]["base"][0] == 0 and row["left_out"]["plain"][0] > 0, lesson
        assert row["left_out"]["plain"] == row["left_out"]["today"], lesson
    assert record["load_before"][0] < 1.0, "measured on a busy machine"
    for k in record["classes"]:
        runs = k["runs"]
        # the class: 20 students on 2 workers (9.5 may be smaller); 2 runs per contender
        assert k["size"] >= (20 if k["lesson"] in ("9.1", "9.4") else 10), k["lesson"]
        assert all(sum(r["who"] == w for r in runs) >= 2 for w in {r["who"] for r in runs})
        assert {r["who"] for r in runs} == set(bv.class_contenders(record["lessons"][k["lesson"]]))
        assert all(r["forks"] is None if r["who"] == "base" else r["forks"] >= k["size"] + 2
                   for r in runs), k["lesson"]  # fmt: skip
        assert all(r["full"] == k["size"] and r["cpu"] > 0 for r in runs), k["lesson"]


def test_the_record_left_out_the_cells_todays_rule_leaves_out(record):
    """The record names its commit; grading code changed after it must still leave out exactly
    the cells the record's gradings did (else: measure again)."""
    from course.grading import demos

    for lesson, row in record["lessons"].items():
        nb = json.loads((ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb").read_text())
        rel = json.loads((ROOT / "release" / lesson / f"{lesson}.ipynb").read_text())
        left = demos.skippable(nb["cells"], demos.lesson_cells(rel["cells"]))
        assert row["left_out"]["plain"][0] == len(left), lesson


def test_the_record_comes_from_this_history(record):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for commit in (record["today"]["commit"], record["base"]["commit"]):
        got = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=ROOT,
                             capture_output=True)  # fmt: skip
        if got.returncode == 128 and b"shallow" in got.stderr:
            pytest.skip("shallow clone")
        assert got.returncode == 0, f"{commit} is not in this checkout's history"


def _row(base: list[float], plain: list[float]) -> dict:
    today = [p * 0.9 for p in plain]
    return {"tested": {"base": "3/10", "today": "3/10"},
            "wall": {"base": base, "plain": plain, "today": today},
            "cpu": {"base": base, "plain": plain, "today": today}}  # fmt: skip


def _synthetic(rows: dict) -> dict:
    rec = {"command": "python -m bench.bench_verdict", "date": "2026-12-05 15:00 UTC",
           "machine": {"cpu": "x86_64", "cores": 2, "python": "3.11.7"},
           "load_before": [0.1, 0.2, 0.3], "load_after": [1.0, 1.1, 1.2],
           "base": {"name": "ca232ae", "commit": "ca232ae" + "0" * 33},
           "today": {"commit": "d" * 40, "dirty": False}, "reps": 5, "goal": 1.2, "lessons": rows}  # fmt: skip
    rec["classes"] = [{"lesson": "9.1", "size": 20, "runs": [
        {"who": "base", "wall": 80.0, "cpu": 150.0, "full": 20},
        {"who": "today", "wall": 78.0, "cpu": 140.0, "full": 20},
        {"who": "today", "wall": 82.0, "cpu": 140.0, "full": 20},
        {"who": "base", "wall": 79.0, "cpu": 150.0, "full": 20}]}]  # fmt: skip
    return rec


@pytest.mark.parametrize(
    "plain, says",
    [
        ([10.2, 10.5, 11.0, 11.5, 11.9], "within"),  # every repetition under 1.2x
        ([11.0, 11.5, 11.8, 12.5, 13.0], "within at the median (2 of 5 repetitions over)"),
        ([10.5, 10.6, 11.0, 12.05, 11.9], "within at the median (1 of 5 repetitions over)"),
        ([10.5, 10.6, 11.0, 12.004, 11.9], "within"),  # 1.2004x: 1.200 at three decimals
        # the median itself at 1.2004x: 1.200 at three decimals, as a repetition's would be
        ([10.5, 12.004, 12.004, 12.5, 13.0], "within at the median (2 of 5 repetitions over)"),
        ([12.5, 13.0, 13.5, 11.0, 14.0], "OVER"),
        ([9.5, 10.2, 10.0, 9.9, 10.4], "within; no measurable difference"),
    ],
)
def test_the_goal_column_follows_the_paired_ratios(plain, says):
    rec = _synthetic({"9.1": _row([10.0] * 5, plain)})
    line = next(ln for ln in bv.render(rec).splitlines() if ln.startswith("| 9.1 |"))
    assert f"| {says} |" in line, line


def test_one_rule_at_three_decimals_for_the_table_the_notes_and_the_class_runs():
    # a single repetition at 1.2004x is not over: no note, and plain does not join the class run
    row = _row([10.0] * 5, [10.0, 10.0, 10.0, 10.0, 12.004])
    assert bv.class_contenders(row) == ("base", "today")
    assert "**9.5**: plain/base" not in bv.render(_synthetic({"9.5": row}))
    row["cpu"]["plain"] = [12.004] * 5  # a CPU median at 1.2004x: not over either
    assert bv.class_contenders(row) == ("base", "today")
    row["wall"]["plain"] = [10.0, 10.0, 12.0, 12.3, 12.5]  # median 1.2, 2 repetitions over
    assert bv.class_contenders(row) == ("base", "plain", "today")
    text = bv.render(_synthetic({"9.5": row}))
    assert "within the 1.2x goal at the median (2 of 5 repetitions over) in wall time" in text, text


def test_a_grown_lesson_is_compared_like_for_like():
    row = _row([10.0] * 5, [16.0] * 5)
    row["split"] = {"demo": [0.5] * 5, "new_in_kernel": [1.5] * 5, "new_cells": ["test_x"]}
    text = bv.render(_synthetic({"9.4": row}))
    # 16 / (10 + 0.5 + 1.5) = 1.33x: over the goal, like for like
    assert (
        "plain against each repetition's base plus the median of that work: 1.33x (1.33-1.33), "
        "OVER the 1.2x goal in wall time." in text
    ), text


def test_cells_left_out_are_counted_where_the_table_and_the_estimate_say_so():
    rows = {"9.1": _row([10.0] * 5, [10.5] * 5), "9.4": _row([10.0] * 5, [11.0] * 5)}
    rows["9.1"]["left_out"] = {"base": [0, 40, 34], "plain": [33, 40, 34], "today": [33, 40, 34]}
    rows["9.4"]["left_out"] = {"base": [0, 54, 33], "plain": [32, 54, 33], "today": [32, 54, 33]}
    text = bv.render(_synthetic(rows))
    assert "| lesson | test cells/points base -> today; code cells run base -> plain |" in text
    assert "| 9.1 | 3/10 -> 3/10; code cells run 40 -> 7 |" in text, text
    assert "| 9.4 | 3/10 -> 3/10; code cells run 54 -> 22 |" in text, text
    assert "Plain and today leave out the lesson's own demo cells" in text
    assert (
        "leave out 65 of the 94 code cells of the 2 reference notebooks (every lesson's "
        "non-graded code cells but one, its imports);" in text
    )
    assert "Every demo cell of a notebook still runs" not in text
    rows["9.4"]["left_out"]["plain"] = [31, 54, 33]  # one more demo ran: no such claim
    text = bv.render(_synthetic(rows))
    assert "leave out 64 of the 94 code cells of the 2 reference notebooks;" in text
    # without cells left out (an older record): no column, no claim
    for r in rows.values():
        del r["left_out"]
    text = bv.render(_synthetic(rows))
    assert "code cells run" not in text and "Every demo cell of a notebook still runs" in text


def test_a_grown_lesson_is_compared_like_for_like_in_its_class_run_too():
    row = _row([10.0] * 5, [13.0] * 5)
    row["split"] = {"demo": [0.5] * 5, "new_in_kernel": [1.5] * 5, "new_cells": ["test_x"]}
    row["left_out"] = {"base": [0, 54, 33], "plain": [32, 54, 33], "today": [32, 54, 33]}
    rec = _synthetic({"9.4": row})
    rec["classes"] = [{"lesson": "9.4", "size": 20, "runs": [
        {"who": "base", "wall": 80.0, "cpu": 150.0, "full": 20, "forks": None},
        {"who": "plain", "wall": 110.0, "cpu": 200.0, "full": 20, "forks": 22},
        {"who": "today", "wall": 100.0, "cpu": 180.0, "full": 20, "forks": 22},
        {"who": "today", "wall": 100.0, "cpu": 180.0, "full": 20, "forks": 22},
        {"who": "plain", "wall": 110.0, "cpu": 200.0, "full": 20, "forks": 22},
        {"who": "base", "wall": 80.0, "cpu": 150.0, "full": 20, "forks": None}]}]  # fmt: skip
    text = bv.render(rec)
    # single grading: 13 / (10 + 0.5 + 1.5) = 1.08x like for like, 1.30x as measured
    assert "plus the median of that work: 1.08x (1.08-1.08), within the 1.2x goal" in text, text
    # class: 100 / (80 + 20 x 2.0 / 2) = 1.00x, as measured 1.25x
    assert (
        "today/base 1.25x (1.25-1.25), SLOWER as measured; like for like, 1.00x (1.00-1.00)" in text
    )
    assert "each base run plus 20 x 2.0 s spread evenly over 2 workers" in text
    # plain: wall 110 / 100 = 1.10x; CPU 200 / (150 + 20 x 2.0) = 1.05x
    assert "CPU: the base's plus 20 x 2.0 kernel seconds), wall 1.10x (1.10-1.10)" in text
    # plain/base is not the verdict's own cost when plain leaves demo cells out
    assert "less what leaving out demo cells saves" in text
    del row["left_out"]
    assert "less what leaving out demo cells saves" not in bv.render(rec)
    assert "CPU 1.05x (1.05-1.05), within the 1.2x goal." in text, text


def test_no_measurable_difference_needs_both_wall_and_cpu_on_both_sides_of_one():
    row = _row([10.0] * 5, [9.5, 10.2, 10.0, 9.9, 10.4])  # wall ratios span 1.00x
    assert "| within; no measurable difference |" in bv.render(_synthetic({"9.1": row}))
    row["cpu"]["plain"] = [10.6, 10.8, 11.0, 10.9, 11.2]  # CPU always dearer: a measured cost
    line = next(ln for ln in bv.render(_synthetic({"9.1": row})).splitlines()
                if ln.startswith("| 9.1"))  # fmt: skip
    assert "| within |" in line and "no measurable" not in line, line


def test_class_use_counts_the_canaries_as_gradings():
    assert bv.class_use(20, "base", 10.0, 100.0) == pytest.approx(1.0)
    assert bv.class_use(20, "today", 10.0, 110.0) == pytest.approx(1.0)  # 22 gradings
    assert bv.class_use(20, "base", 10.0, 125.0) == pytest.approx(0.8)


def test_the_wall_estimate_scales_each_lesson_by_a_class_runs_use():
    rec = _synthetic({"9.1": _row([12.0] * 5, [12.0] * 5)})  # today's single grading 10.8 s
    rec["classes"][0]["runs"] = [{"who": w, "wall": t, "cpu": 150.0, "full": 20}
                                 for w, t in (("base", 120.0), ("today", 132.0), ("today", 132.0),
                                              ("base", 120.0))]  # fmt: skip
    text = bv.render(rec)
    # base: 20 x 12 / 2 / 120 = 100% -> 300 x 12 / 2 / 3600 = 0.5 h; today: 22 x 10.8 / 2 / 132
    # = 90% -> 300 x 10.8 / 0.9 / 2 / 3600 = 0.5 h
    assert "9.1 base 100%, today 90%" in text, text
    assert "): base 0.5 h, today 0.5 h." in text, text
    assert "unreliable" not in text


def test_ratios_are_paired_by_repetition():
    # each repetition's plain is 1.10x its own base; unpaired medians or sorted lists would differ
    row = _row([10.0, 12.0, 10.0, 12.0, 10.0], [11.0, 13.2, 11.0, 13.2, 11.0])
    line = next(
        ln for ln in bv.render(_synthetic({"9.1": row})).splitlines() if ln.startswith("| 9.1")
    )
    assert "| 1.10x (1.10-1.10) | within |" in line, line


def test_the_estimates_follow_the_medians():
    rec = _synthetic({"9.1": _row([10.0] * 5, [12.0] * 5)})
    text = bv.render(rec)
    # CPU: 300 x 10 s / 2 cores / 3600 = 0.4 h (base), 300 x 12 / 2 / 3600 = 0.5 h (plain)
    assert "base 0.4 h, plain 0.5 h, today 0.5 h" in text, text
    assert "300 students x 1 lessons" in text


def test_a_slower_class_run_is_called_slower():
    rec = _synthetic({"9.1": _row([10.0] * 5, [10.0] * 5)})
    rec["classes"][0]["runs"] = [{"who": w, "wall": t, "cpu": 150.0, "full": 20}
                            for w, t in (("base", 80.0), ("today", 95.0), ("today", 96.0),
                                         ("base", 81.0))]  # fmt: skip
    assert "SLOWER" in bv.render(rec)


def test_a_class_runs_cpu_per_student_enters_the_class_estimate():
    rec = _synthetic({"9.1": _row([10.0] * 5, [12.0] * 5)})
    for run in rec["classes"][0]["runs"]:
        run["forks"] = None if run["who"] == "base" else 22
    text = bv.render(rec)
    # per student: base 150 / 20 = 7.5, today 140 / 20 = 7.0 CPU s; the class estimates:
    # 300 x 7.5 / 2 / 3600 = 0.31 -> 0.3 h and 300 x 7.0 / 2 / 3600 = 0.29 -> 0.3 h
    assert "per student base 7.5, today 7.0 CPU s" in text, text
    assert "forked 22, 22 verdicts from the class's warm process" in text, text
    assert (
        "per-student CPU for 9.1 and the single gradings' for the others: base 0.3 h, today 0.3 h"
        in text
    )


def test_plain_in_a_class_run_is_judged_against_the_goal():
    rec = _synthetic({"9.5": _row([10.0] * 5, [13.0] * 5)})
    k = rec["classes"][0]
    k["lesson"] = "9.5"
    k["runs"] += [{"who": "plain", "wall": 90.0, "cpu": 200.0, "full": 20, "forks": 22},
                  {"who": "plain", "wall": 91.0, "cpu": 170.0, "full": 20, "forks": 22}]  # fmt: skip
    text = bv.render(rec)
    # plain/base wall 90/80 = 1.125, 91/79 = 1.15; CPU 200/150 = 1.33, 170/150 = 1.13
    assert (
        "plain/base: wall 1.14x (1.12-1.15), within the 1.2x goal; CPU 1.23x (1.13-1.33), " in text
    ), text
    assert "CPU 1.23x (1.13-1.33), OVER the 1.2x goal." in text, text


def test_an_old_record_with_one_class_still_renders_without_the_warm_process():
    rec = _synthetic({"9.1": _row([10.0] * 5, [10.0] * 5)})
    rec["class"] = rec.pop("classes")[0]
    text = bv.render(rec)
    assert "**Class run, 9.1.**" in text and "zygote" not in text and "One lesson only" in text


def test_the_verdicts_start_up_is_set_against_what_plain_adds():
    row = _row([10.0, 12.0, 9.0, 10.0, 11.0], [14.0, 17.0, 13.0, 16.0, 15.0])  # over the goal
    row["verdict_imports"] = "import torch\nfrom transformers import LlamaConfig\n"
    row["verdict_warm_cpu"] = [3.0, 3.1, 3.4, 4.5, 5.0]  # median 3.4, mean 3.8
    text = bv.render(_synthetic({"9.5": row}))
    assert "**9.5**: plain/base" in text and "imports torch and transformers" in text, text
    # paired differences 4, 5, 4, 6, 4: median 4.0 (the difference of the medians would be 5.0);
    # 3.4 / 4.0 = 85%; (plain_i - 3.4) / base_i = 1.06, 1.13, 1.07, 1.26, 1.05: median 1.07x (the
    # ratio of the medians would be 1.16x)
    assert "median of 5) takes 3.4 CPU s; plain adds 4.0 CPU s to the base" in text, text
    assert "so the start-up is about 85% of it" in text, text
    assert (
        "as a class run's fork does, plain/base would be 1.07x (1.05-1.26) in CPU (the start-up "
        "held at its median)." in text
    ), text
    row["verdict_warm_cpu"] = [5.0] * 5  # more than plain adds (other meter): no share stated
    text = bv.render(_synthetic({"9.5": row}))
    assert "takes 5.0 CPU s" in text and "% of it" not in text, text
    row["cpu"]["plain"] = list(row["cpu"]["base"])  # plain adds nothing: nothing to set against
    text = bv.render(_synthetic({"9.5": row}))
    assert "**9.5**: plain/base" in text and "start-up alone" not in text, text
    del row["verdict_warm_cpu"]  # an older record: rendered without the sentence
    row["cpu"]["plain"] = [14.0, 17.0, 13.0, 16.0, 15.0]
    text = bv.render(_synthetic({"9.5": row}))
    assert "**9.5**: plain/base" in text and "start-up alone" not in text, text
