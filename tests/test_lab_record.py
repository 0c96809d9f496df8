"""The BaseLM lab's figures in the claims registry come from the committed record, which one
command produced (``python course/make_baselm_lab_record.py``); the record carries what is needed
to judge it (weights hash, seeds, CPU, versions, paired intervals)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "course"))
import make_baselm_lab_record as mlr  # noqa: E402

from helpers.baselm import SHIPPED_DIR  # noqa: E402
from helpers.stats import paired_difference  # noqa: E402

RECORD = json.loads(mlr.OUT.read_text())


def registry_row(rid: str) -> str:
    text = (ROOT / "course" / "Module_9_Sources.md").read_text()
    m = re.search(rf"^\| {re.escape(rid)} \|.*$", text, re.M)
    assert m, rid
    return m.group(0)


def test_record_is_of_the_shipped_baselm_and_names_its_machine():
    shipped = json.loads((SHIPPED_DIR / "passport.json").read_text())
    assert RECORD["baselm_weights_sha256"] == shipped["weights_sha256"]
    assert RECORD["command"] == "python course/make_baselm_lab_record.py"
    assert RECORD["machine"]["cpu"] and RECORD["versions"]["torch"].startswith("2.13.0")
    assert set(RECORD["runs"]) == set(mlr.RUNS + mlr.SWEEP)


def test_every_rate_carries_a_consistent_paired_interval():
    for name, run in RECORD["runs"].items():
        for v, x in run["rates"].items():
            n = run["n_heldout"]
            # the counts reproduce the interval: rebuild outcomes with the same margins
            kept = round(x["before"] * n) - x["lost"]
            before = [1] * kept + [1] * x["lost"] + [0] * x["gained"]
            after = [1] * kept + [0] * x["lost"] + [1] * x["gained"]
            pad = n - len(before)
            d = paired_difference(before + [0] * pad, after + [0] * pad)
            assert (round(d.low, 4), round(d.high, 4)) == tuple(x["ci95"]), (name, v)
            assert d.excludes_zero == x["excludes_zero"] and abs(d.after - x["after"]) < 1e-9


def test_registry_row_quotes_the_record():
    row = registry_row("9.5-11")
    missing = [p for p in mlr.figures(RECORD) if p not in row]
    assert not missing, f"9.5-11 does not quote the record: {missing}"


def test_initial_pass_rates_are_in_the_data_passport():
    ipr = RECORD["runs"]["arith_main"]["initial_pass_rate"]
    assert ipr and ipr["k"] == 8 and sum(ipr["histogram"]) == ipr["prompts"]


def test_lab_timing_is_recorded_and_in_benchmarks():
    t = RECORD["timing"]
    assert t["required_seconds"] > 0 and t["kernel_peak_rss_mb"] > 0
    assert t["optional_seconds"], "the optional exercises are timed separately"
    assert all("optional" in h.lower() for h in t["optional_seconds"])
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert mlr.timing_table(RECORD) in text, (
        "BENCHMARKS.md's BaseLM lab section is not the record's: rerun python course/make_baselm_lab_record.py"
    )
