"""The BaseLM lab's figures in the claims registry come from the committed record, which one
command produced (``python -m dev.records.baselm_lab``); the record carries what is needed
to judge it (weights hash, seeds, CPU, versions, paired intervals). The lab runs with three seeds
(LoRA seed of every run; trainer seed of every run but the format smoke run, which keeps 0);
the contrasts the lesson teaches must hold for each of them on the recording machine (issue 13)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dev import current_command
from dev.records import baselm_lab as mlr
from helpers.baselm import SHIPPED_DIR
from helpers.stats import holm, paired_difference, paired_p_value

ROOT = Path(__file__).resolve().parent.parent

RECORD = json.loads(mlr.OUT.read_text())


def registry_row(rid: str) -> str:
    text = (ROOT / "course" / "docs" / "Module_9_Sources.md").read_text()
    m = re.search(rf"^\| {re.escape(rid)} \|.*$", text, re.M)
    assert m, rid
    return m.group(0)


def test_record_is_of_the_shipped_baselm_and_names_its_machine():
    shipped = json.loads((SHIPPED_DIR / "passport.json").read_text())
    assert RECORD["baselm_weights_sha256"] == shipped["weights_sha256"]
    # the command that made it (the record keeps it; dev.MOVED maps a moved script to today's)
    assert current_command(RECORD["command"]) == mlr.COMMAND
    assert RECORD["machine"]["cpu"] and RECORD["versions"]["torch"].startswith("2.13.0")
    assert RECORD["seeds"]["trainer_and_lora"] == list(mlr.SEEDS)
    assert set(RECORD["runs"]) == {str(s) for s in mlr.SEEDS}
    for runs in RECORD["runs"].values():
        assert set(runs) == set(mlr.RUNS + mlr.SWEEP)


def _rates(run):
    yield from run["rates"].items()
    if "audit" in run:
        yield "exact (audit)", run["audit"]["exact"]


def test_every_rate_carries_a_consistent_paired_interval():
    for seed, runs in RECORD["runs"].items():
        for name, run in runs.items():
            for v, x in _rates(run):
                n = run["n_heldout"]
                # the counts reproduce the interval: rebuild outcomes with the same margins
                kept = round(x["before"] * n) - x["lost"]
                before = [1] * kept + [1] * x["lost"] + [0] * x["gained"]
                after = [1] * kept + [0] * x["lost"] + [1] * x["gained"]
                pad = n - len(before)
                d = paired_difference(before + [0] * pad, after + [0] * pad)
                assert (round(d.low, 4), round(d.high, 4)) == tuple(x["ci95"]), (seed, name, v)
                assert d.excludes_zero == x["excludes_zero"] and abs(d.after - x["after"]) < 1e-9


def test_secondary_family_is_the_no_kl_and_k_sweep_contrasts_with_holm_over_all_of_them():
    """The Holm family is every secondary interval the registry reports (beta = 0 and K = 2, 8, 16
    on every seed), its p-values agree with the recorded intervals (p < 0.05 exactly where the
    interval excludes 0), and Holm runs over the whole family at once."""
    fam = mlr.secondary_contrasts(RECORD)
    assert [(s, c) for s, c, *_ in fam] == [
        (str(s), c) for s in mlr.SEEDS for c in ("beta = 0", "K=2", "K=8", "K=16")
    ]
    for seed, c, x, p, _ in fam:
        n = RECORD["runs"][seed]["arith_main"]["n_heldout"]
        assert p == paired_p_value(n, x["gained"], x["lost"])
        assert (p < 0.05) == x["excludes_zero"], (seed, c, p)
    assert [h for *_, h in fam] == holm([p for *_, p, _ in fam], mlr.HOLM_ALPHA)
    for seed, runs in RECORD["runs"].items():  # the p-values agree with every recorded interval
        for name, run in runs.items():
            for v, x in _rates(run):
                p = paired_p_value(run["n_heldout"], x["gained"], x["lost"])
                if abs(p - 0.05) > 1e-6:
                    assert (p < 0.05) == x["excludes_zero"], (seed, name, v)


def test_registry_row_quotes_the_record():
    row = registry_row("9.5-11")
    missing = [p for p in mlr.figures(RECORD) if p not in row]
    assert not missing, f"9.5-11 does not quote the record: {missing}"


def test_format_smoke_trainer_seed_is_the_one_the_record_names():
    """The format smoke run's trainer seed is fixed in the lesson (only its LoRA seed follows
    COURSE_LAB_SEED); figures() names it, so the two must agree."""
    text = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    m = re.search(r"fmt_cfg = TrainerConfig\((.*?)\)", text, re.S)
    assert m, "the lesson's format smoke config"
    assert re.search(rf"\bseed={mlr.FORMAT_TRAINER_SEED}\b", m.group(1)), m.group(1)
    assert "lora_seed" not in m.group(1)


def test_initial_pass_rates_are_in_the_data_passport():
    for runs in RECORD["runs"].values():
        ipr = runs["arith_main"]["initial_pass_rate"]
        assert ipr and ipr["k"] == 8 and sum(ipr["histogram"]) == ipr["prompts"]


def test_the_recorded_contrasts_hold_for_every_seed():
    """Issue 13's bar, checked on the committed record: held-out learning of at least 0.15 with a
    paired interval above 0; the sloppy run exploited (the sloppy rule pays more than the patched
    rule, and exploiting completions are found) while the patched rule's pass rate stalls or
    falls (its paired interval does not lie above 0); the patched run shows no exploit."""
    for seed, r in RECORD["runs"].items():
        main = r["arith_main"]["rates"]["strict"]
        assert main["diff"] >= 0.15 and main["ci95"][0] > 0, seed
        assert r["arith_main"]["n_heldout"] >= 190
        sloppy = r["arith_sloppy"]["audit"]
        assert sloppy["exploit_rate"] > 0.1 and sloppy["exploit_examples"], seed
        assert sloppy["sloppy_after"] > sloppy["exact"]["after"] + 0.1, seed
        assert sloppy["exact"]["ci95"][0] <= 0, f"seed {seed}: the intended rate rose measurably"
        patched = r["arith_patched"]["audit"]
        assert patched["exploit_rate"] < 0.02, seed
        assert patched["exact"]["diff"] >= 0.15 and patched["exact"]["ci95"][0] > 0, seed


def test_the_lesson_quotes_the_record():
    text = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    flat = " ".join(line.lstrip("# ").strip() for line in text.splitlines())
    missing = [p for p in mlr.lesson_phrases(RECORD) if p not in flat]
    assert not missing, f"lesson 9.5 does not quote the record: {missing}"


def test_lab_timing_is_recorded_and_in_benchmarks():
    t = RECORD["timing"]
    assert t["required_seconds"] > 0 and t["kernel_peak_rss_mb"] > 0
    assert t["optional_seconds"], "the optional exercises are timed separately"
    assert all("optional" in h.lower() for h in t["optional_seconds"])
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert mlr.timing_table(RECORD) in text, (
        "BENCHMARKS.md's BaseLM lab section is not the record's: rerun python -m dev.records.baselm_lab"
    )
