"""Lesson 9.4's diagnosis clinic: the committed runs show what their labels say.

The labels are the lesson's definitions (the reference ``diagnose``) applied to each log. This file
checks them three ways: the generator's ``--check`` relabels every committed log with the lesson's
rule; an independent reading below (written without the reference) confirms that each label's
condition holds at its onset step and at no earlier step; and one run is regenerated here and must
match its committed log. The held-out runs must never reach anything a student receives.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dev.records import clinic_runs as gen
from helpers.clinic import LABELS, WINDOW, load_clinic_runs, mean_f1, single_metric_baseline
from tests.conftest import ROOT

VISIBLE = load_clinic_runs(gen.VISIBLE)
HELDOUT = load_clinic_runs(gen.HELDOUT)
RUNS = VISIBLE + HELDOUT


def _window(xs: list[float], i: int) -> float:
    vals = [x for x in xs[i - WINDOW + 1 : i + 1] if not math.isnan(x)]
    return sum(vals) / len(vals) if vals else math.nan


def _holds(log: dict, label: str, i: int, _window=_window) -> bool:
    """The lesson's table at row i, read independently of the reference (``_window``: the window
    mean, replaceable to try another order of summation)."""
    s, e = log["steps"], log["evals"]
    step = s["step"][i]
    if label == "entropy_collapse":
        held = [p for p, at in zip(e["heldout_pass@4"], e["eval_step"], strict=True) if at <= step]
        return _window(s["entropy"], i) < 0.5 * _window(s["entropy"], WINDOW - 1) and (
            held[-1] < 0.9 * held[0]
        )
    if label == "kl_blowup":
        return _window(s["kl_ref"], i) > 0.3
    if label == "stale_rollouts":
        both = [a + b for a, b in zip(s["clip_low_reused"], s["clip_high_reused"], strict=True)]
        return _window(both, i) > 0.04
    if label == "reward_hacking":
        return (
            _window(s["reward"], i) >= _window(s["reward"], WINDOW - 1) + 0.02
            and _window(s["accuracy"], i) <= _window(s["accuracy"], WINDOW - 1) - 0.1
        )
    if label == "signal_starvation":
        return _window(s["informative_rate"], i) < 0.2
    if label == "verifier_failure":
        both = [a + b for a, b in zip(s["verifier_error_rate"], s["parse_fail_rate"], strict=True)]
        return _window(both, i) >= 0.05
    if label == "length_growth":
        return _window(s["len_mean"], i) >= 1.2 * _window(s["len_mean"], WINDOW - 1) and (
            _window(s["truncation_rate"], i) >= _window(s["truncation_rate"], WINDOW - 1) + 0.2
        )
    raise KeyError(label)


ALL = {**gen.RUNS, **gen.BASELM_RUNS}  # name: (split, intended, ...), GRU-lab runs then BaseLM


def test_the_library_has_every_pathology_healthy_runs_and_two_at_once():
    names = [r["name"] for r in RUNS]
    want = [n for split in ("visible", "heldout") for n, v in ALL.items() if v[0] == split]
    assert names == want, "the committed runs are not the generator's list"
    for part, runs in (("visible", VISIBLE), ("held-out", HELDOUT)):
        induced = {lab for r in runs for lab in r["intended"]}
        assert induced == set(LABELS), f"{part}: induced {sorted(induced)}"
        assert any(not r["labels"] for r in runs), f"{part}: no healthy run"
    assert sum(len(r["intended"]) == 2 for r in HELDOUT) >= 2
    assert len({r["passport"]["config"]["seed"] for r in HELDOUT}) >= 3  # other seeds than 0
    assert {r["passport"]["config"]["seed"] for r in VISIBLE} == {0}


@pytest.mark.parametrize("run", RUNS, ids=[r["name"] for r in RUNS])
def test_every_label_is_true_of_its_run_from_its_onset_and_not_before(run):
    log, labels = run["log"], run["labels"]
    assert set(run["intended"]) <= set(labels), "an induced pathology is not visible"
    if not run["intended"]:
        assert not labels, "a healthy run must show nothing"
    steps = log["steps"]["step"]
    for label in LABELS:
        first = next(
            (steps[i] for i in range(WINDOW - 1, len(steps)) if _holds(log, label, i)), None
        )
        assert labels.get(label) == first, (
            f"{label}: onset {labels.get(label)}, the table says {first}"
        )


def test_passports_record_what_was_induced():
    for r in RUNS:
        if r["name"] in gen.BASELM_RUNS:
            split, intended, changes = gen.BASELM_RUNS[r["name"]]
            assert r["split"] == split and r["intended"] == list(intended)
            assert r["passport"]["config"] == gen.BASELM | changes | {
                "lab": "baselm", "name": f"clinic/{r['name']}"}  # fmt: skip
            assert r["passport"]["verifier"]["name"] == {
                "strict": "arithmetic", "sloppy": "arithmetic_sloppy"}[r["passport"]["config"]["verifier"]]  # fmt: skip
            continue
        split, intended, changes, pert = gen.RUNS[r["name"]]
        cfg = r["passport"]["config"]
        assert r["split"] == split and r["intended"] == list(intended)
        assert all(cfg[k] == v for k, v in changes.items()), r["name"]
        if pert:
            assert all(cfg["perturbation"][k] == v for k, v in pert.items()), r["name"]
        else:
            assert "perturbation" not in cfg, r["name"]
        assert r["passport"]["config_hash"] and r["passport"]["versions"]["torch"]


def test_the_generator_relabels_the_committed_logs_identically(capsys):
    assert gen.main(["--check"]) == 0, capsys.readouterr().out


SUMS = {
    "forward": sum,
    "reverse": lambda v: sum(reversed(v)),
    "fsum": math.fsum,
    "pairwise": lambda v: float(np.sum(np.asarray(v, dtype=np.float64))),
}


def _onsets(log: dict, total) -> dict[str, int]:
    """Every label's first step by the independent reading, with window sums taken by ``total``."""

    def window(xs, i):
        vals = [x for x in xs[i - WINDOW + 1 : i + 1] if not math.isnan(x)]
        return total(vals) / len(vals) if vals else math.nan

    out = {}
    for lab in LABELS:
        rows = range(WINDOW - 1, len(log["steps"]["step"]))
        i = next((i for i in rows if _holds(log, lab, i, window)), None)
        if i is not None:
            out[lab] = log["steps"]["step"][i]
    return out


@pytest.mark.parametrize("order", sorted(SUMS))
def test_no_label_depends_on_the_order_of_summation(order):
    """A valid solution may sum a window in any order; a window mean at a threshold (the logs are
    rounded to 6 decimals, the rates are multiples of 1/8, so ties occur) must not decide a label
    differently then: every committed label and onset is the same under four orders of summation."""
    for r in RUNS:
        assert _onsets(r["log"], SUMS[order]) == r["labels"], r["name"]


def test_the_rates_are_eighths_so_their_ties_are_exact():
    for r in RUNS:
        v = [a for a in r["log"]["steps"]["informative_rate"] if not math.isnan(a)]
        assert all(a * 8 == round(a * 8) for a in v), r["name"]


def test_baselm_lengths_and_truncation_are_64ths_so_their_window_sums_are_exact():
    """contracts.md (diagnose): 64 completions per BaseLM step, so both are multiples of 1/64."""
    lm = [r for r in RUNS if r["name"] in gen.BASELM_RUNS]
    assert lm
    for r in lm:
        cfg = r["passport"]["config"]
        assert cfg["k"] * cfg["prompts_per_step"] == 64, r["name"]
        assert r["passport"]["fixed"] == gen.BASELM_FIXED, r["name"]
        for key in ("len_mean", "truncation_rate"):
            assert all(a * 64 == round(a * 64) for a in r["log"]["steps"][key]), (r["name"], key)


def test_length_growth_shows_only_in_the_baselm_runs_whose_verifier_pays_length():
    """Lesson 9.4.6: the GRU lab's answers cannot grow; among the BaseLM runs only the sloppy ones
    (the sum anywhere pays) show length growth, and each shows it before its reward hacking."""
    for r in RUNS:
        sloppy = r["name"] in gen.BASELM_RUNS and r["passport"]["config"]["verifier"] == "sloppy"
        assert ("length_growth" in r["labels"]) == sloppy, r["name"]
        if sloppy:
            assert r["labels"]["length_growth"] < r["labels"]["reward_hacking"], r["name"]


def test_the_baseline_fails_every_diagnose_cell_and_three_rules_earn_two():
    """INSTRUCTOR.md: the single-metric baseline fails all four cells; the three one-metric rules,
    done exactly, find some of the held-out labels (the count the guide states) and pass precision
    and steps only."""
    from course.build_lessons import trusted_tests
    from helpers.clinic import load_log

    cells = {k: t.code for k, t in trusted_tests("9.4").items() if k.startswith("test_diagnose")}

    def outcome(fn) -> dict[str, bool]:
        out = {}
        for name, code in cells.items():
            ns = {"np": np, "math": math, "json": json, "WINDOW": WINDOW, "LABELS": LABELS,
                  "load_clinic_runs": load_clinic_runs, "load_log": load_log, "diagnose": fn}  # fmt: skip
            try:
                exec(code, ns)  # noqa: S102 - the course's own trusted test code
                out[name] = True
            except Exception:  # noqa: BLE001 - any error fails a cell, as in grading
                out[name] = False
        return out

    assert not any(outcome(single_metric_baseline).values())
    three = ("kl_blowup", "stale_rollouts", "signal_starvation")

    def three_rules(log):
        return [{"label": lab, "step": step, "metrics": []} for lab, step in _onsets(log, sum).items()
                if lab in three]  # fmt: skip

    found = sum(len(set(r["labels"]) & set(three)) for r in HELDOUT)
    total = sum(len(r["labels"]) for r in HELDOUT)
    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    assert f"exactly finds {found} of the {total} held-out labels" in text
    passed = outcome(three_rules)
    assert passed == {k: k in ("test_diagnose_precision", "test_diagnose_steps") for k in cells}, (
        passed
    )


def test_stale_rollouts_is_on_exactly_in_the_runs_that_reuse_a_batch():
    """The lesson and the guide say so: here the definition separates reuse from none."""
    for r in RUNS:
        reused = r["passport"]["config"].get("num_iterations", 1) > 1
        assert ("stale_rollouts" in r["labels"]) == reused, r["name"]
        if reused:
            assert r["labels"]["stale_rollouts"] == WINDOW, r["name"]


def test_scores_the_reference_and_the_single_metric_baseline():
    doc = json.loads(gen.HELDOUT.read_text())
    ref, _ = gen.reference_diagnose()
    assert mean_f1(ref, HELDOUT) == 1.0  # the labels are the definitions: 1 by construction
    base = mean_f1(single_metric_baseline, HELDOUT)
    assert doc["scores"]["single_metric_baseline_mean_f1"] == round(base, 4)
    assert base < 0.9, "the single-metric baseline must score clearly below the reference"


def test_held_out_runs_reach_nothing_a_student_receives():
    visible_text = gen.VISIBLE.read_text()
    student = [
        gen.VISIBLE,
        *(ROOT / "release" / "9.4").rglob("*"),
        *(ROOT / "source_notebooks" / "9.4").rglob("*"),
    ]
    for r in HELDOUT:
        needle = json.dumps(r["log"]["steps"]["reward"][:8])[1:-1].replace(" ", "")
        for path in student:
            if path.is_file():
                text = path.read_text(errors="ignore").replace(" ", "")
                assert r["name"] not in text and needle not in text, (
                    f"{r['name']} leaks into {path}"
                )
    assert not {r["name"] for r in HELDOUT} & {r["name"] for r in json.loads(visible_text)["runs"]}


@pytest.mark.slow
def test_one_run_regenerates_with_what_its_label_says():
    """The generator on this machine, judged by the pattern its label names, not by the committed
    values: another CPU (or ATEN_CPU_CAPABILITY=default) takes another float path, the sampled tokens
    differ and the trajectory with them. The fault starts at step 25: the label must appear there or
    within one window after, and the profile must be the committed one."""
    name = "verifier_fault"
    new = gen._one(name)
    old = next(r for r in json.loads(gen.VISIBLE.read_text())["runs"] if r["name"] == name)
    assert new["passport"]["config_hash"] == old["passport"]["config_hash"]
    gen.label([new])
    fault = gen.RUNS[name][3]["verifier_fault_step"]
    assert set(new["intended"]) <= set(new["labels"])
    assert fault <= new["labels"]["verifier_failure"] < fault + WINDOW
    assert not any(
        v
        for v, s in zip(
            new["log"]["steps"]["verifier_error_rate"], new["log"]["steps"]["step"], strict=True
        )
        if s < fault
    )


def test_the_instructor_guide_quotes_the_record():
    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    held = json.loads(gen.HELDOUT.read_text())["scores"]
    vis = json.loads(gen.VISIBLE.read_text())["scores"]
    base = held["single_metric_baseline_mean_f1"]
    assert f"scores a mean per-label F1 of {base:.2f} on the held-out runs" in text
    assert (
        f"{held['labels_not_induced']} of the {held['labels']} held-out labels were not induced"
        in text
    )
    assert (
        f"the reference scores a mean per-label F1 of {held['reference_mean_f1_vs_induced']:.2f} on"
        f" the held-out runs and the single-metric baseline"
        f" {held['single_metric_baseline_mean_f1_vs_induced']:.2f}"
        f" ({vis['reference_mean_f1_vs_induced']:.2f} and"
        f" {vis['single_metric_baseline_mean_f1_vs_induced']:.2f} on the seed-0 runs)" in text
    )
    counts = [sum(lab in r["labels"] for r in HELDOUT) for lab in LABELS]
    assert f"each label shows in {min(counts)} to {max(counts)} of them" in text
    assert max(counts) < 10, "recall >= 0.9 no longer means every run: reword the guide and cell"
    recall = (
        ROOT / "course" / "lessons" / "9.4" / "hidden" / "test_diagnose_recall.py"
    ).read_text()
    assert f"show each label in {min(counts)} to {max(counts)} runs" in recall
    assert max(counts) < 0.5 * len(HELDOUT), "a label in most runs: the recall floor is buyable"
    contract = ROOT / "course" / "lessons" / "9.4" / "hidden" / "test_diagnose_contract.py"
    assert "and 120 generated logs" in text and "for _case in range(120):" in contract.read_text()
    assert f"runs the GRU lab {len(gen.RUNS)} times" in text
    assert f"and the BaseLM lab {len(gen.BASELM_RUNS)} times" in text
    seeds = sorted({r["passport"]["config"]["seed"] for r in HELDOUT})
    assert f"(seeds {seeds[0]}-{seeds[-1]}," in text and seeds == list(
        range(seeds[0], seeds[-1] + 1)
    )


def test_the_syllabus_row_of_9_4_counts_its_points_and_the_hours_add_up():
    import re

    text = (ROOT / "course" / "docs" / "SYLLABUS.md").read_text()
    lesson = (ROOT / "course" / "lessons" / "9.4" / "lesson.py").read_text()
    points = sum(int(p) for p in re.findall(r"^# %% \[tests\] id=\w+ points=(\d+)", lesson, re.M))
    row = next(ln for ln in text.splitlines() if ln.startswith("| 9.4 "))
    assert "`diagnose`, `should_stop`, `choose_intervention`" in row and f"({points})" in row
    spans = [
        tuple(map(float, m)) for m in re.findall(r"\| (\d+(?:\.\d+)?)-(\d+(?:\.\d+)?) h", text)
    ]
    low, high = sum(a for a, _ in spans), sum(b for _, b in spans)
    assert len(spans) == 5 and f"Estimated time: {low:g}-{high:g} hours" in " ".join(text.split())


FIELDS = {  # what each intervention may change (helpers.clinic.INTERVENTIONS says it in words)
    "lower_lr": ({"lr"}, False),
    "one_epoch": ({"num_iterations"}, False),
    "kl_penalty": ({"kl_coef"}, False),
    "larger_groups": ({"group_size"}, False),
    "patch_verifier": ({"w_correct", "w_consistent", "w_format"}, False),
    "repair_verifier": (set(), True),
}


def test_each_intervention_changes_what_it_names_and_nothing_else():
    from helpers.clinic import INTERVENTIONS
    from helpers.gru_lab import LabProfile

    assert set(gen.APPLY) == set(INTERVENTIONS) == set(FIELDS)
    base = LabProfile()
    for name, (_, _, changes, pert) in gen.RUNS.items():
        full = {k: changes.get(k, getattr(base, k)) for k in vars(base)}
        for key, (fields, perturbation) in FIELDS.items():
            out = gen.APPLY[key](changes, pert)
            if out is None:
                continue
            c2, p2 = out
            new = {k: c2.get(k, getattr(base, k)) for k in vars(base)}
            assert {k for k in full if full[k] != new[k]} <= fields, (name, key)
            assert (p2 != pert) == perturbation, (name, key)
    assert gen.APPLY["lower_lr"]({"lr": 6e-3}, {})[0]["lr"] == 2e-3
    assert gen.APPLY["larger_groups"]({}, {})[0]["group_size"] == 2 * base.group_size


def test_every_run_with_a_label_has_the_reruns_of_every_intervention_that_changes_it():
    for r in RUNS:
        if not r["labels"]:
            assert "after" not in r, r["name"]
            continue
        want = {k for k in gen.APPLY if gen.applies(r["name"], k)}
        assert set(r["after"]) == want, r["name"]
        for res in r["after"].values():
            assert set(res) == {"labels", "config_hash"} and set(res["labels"]) <= set(LABELS)


def test_a_rerun_whose_settings_are_a_committed_run_shows_that_runs_labels():
    """stale + one_epoch is the healthy run's settings, verifier_fault + repair_verifier too: the
    rerun and the committed run must agree (both were made on one machine), for every such pair."""
    committed = {r["name"]: r for r in RUNS}
    pairs = 0
    for r in RUNS:
        if r["name"] in gen.BASELM_RUNS:
            continue  # no BaseLM rerun has the settings of a committed run
        for key in r.get("after", {}):
            changes, pert = gen.APPLY[key](*gen.RUNS[r["name"]][2:])
            for other, (_, _, c, p) in gen.RUNS.items():
                if c == changes and p == pert:
                    pairs += 1
                    assert r["after"][key]["labels"] == committed[other]["labels"], (r["name"], key)
    assert pairs >= 2


def test_the_instructor_guide_quotes_the_counterfactual_record():
    from helpers.clinic import INTERVENTIONS

    src = (ROOT / "course" / "lessons" / "9.4" / "lesson.py").read_text()
    body = src[
        src.index("def choose_intervention") : src.index(
            "### END SOLUTION", src.index("def choose_intervention")
        )
    ]
    ns = {"INTERVENTIONS": INTERVENTIONS, "WINDOW": WINDOW}
    exec(body.replace("### BEGIN SOLUTION", ""), ns)  # noqa: S102 - the lesson's own reference
    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    shown = [r for r in RUNS if r["labels"]]
    reruns = sum(len(r["after"]) for r in shown)
    assert f"reruns each of the {len(shown)} runs that show a label" in text
    assert f"{reruns} reruns in all" in text
    held = [r for r in HELDOUT if r["labels"]]
    ok = sum(ns["choose_intervention"](r["labels"], r["after"]) is not None for r in held)
    assert f"{ok} of the {len(held)} runs with a label have an acceptable intervention" in text
    by = {
        r["name"]: ns["choose_intervention"](r["labels"], r["after"]) for r in RUNS if r["labels"]
    }
    assert by["stale"] == "one_epoch" and "lower_lr" in {by["h_stale_1"], by["h_stale_2"]}


@pytest.mark.slow
def test_one_counterfactual_regenerates_with_its_settings_and_what_it_shows():
    """Rerun verifier_fault with its fault repaired, here: the settings hash is the committed one
    (machine-independent), and the rerun shows no verifier failure, the pattern the repair names.
    That it shows no label at all holds on this float path (AVX512, the committed rerun's) but not
    on every one: under ATEN_CPU_CAPABILITY=default the same settings cross the entropy-collapse
    line at step 60, the last step, so the whole label set is compared only on the record's path."""
    import os

    import torch

    name, key, res = gen._after(("verifier_fault", "repair_verifier"))
    run = next(r for r in VISIBLE if r["name"] == name)
    old = run["after"][key]
    assert res["config_hash"] == old["config_hash"]
    assert old["labels"] == {} and "verifier_failure" not in res["labels"]
    same_path = torch.backends.cpu.get_cpu_capability() == run["passport"]["machine"][
        "torch_cpu_capability"
    ] and not os.environ.get("ATEN_CPU_CAPABILITY")
    if same_path:
        assert res["labels"] == {}


def test_the_prose_about_the_reruns_is_what_the_records_show():
    """Lesson 9.4.6 and INSTRUCTOR.md: the KL term ends the visible hack but not the held-out ones,
    the patched verifier ends every hack with a collapse; h_stale_1 is a tie of two full fixes with
    six reuse epochs; an accepted choice can leave (h_stale_fault) or advance (h_hack_2) a problem."""
    by = {r["name"]: r for r in RUNS}
    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    assert "reward_hacking" not in by["hack"]["after"]["kl_penalty"]["labels"]
    for name in ("h_hack_1", "h_hack_2"):
        assert "reward_hacking" in by[name]["after"]["kl_penalty"]["labels"], name
    for name in ("hack", "h_hack_1", "h_hack_2"):
        after = by[name]["after"]["patch_verifier"]["labels"]
        assert "reward_hacking" not in after and "entropy_collapse" in after, name
    s1 = by["h_stale_1"]
    assert s1["after"]["lower_lr"]["labels"] == s1["after"]["one_epoch"]["labels"] == {}
    reuse = gen.RUNS["h_stale_1"][2]["num_iterations"]
    assert {6: "six"}[reuse] + " times" in text
    assert "verifier_failure" in by["h_stale_fault"]["after"]["one_epoch"]["labels"]
    old, new = (
        by["h_hack_2"]["labels"]["reward_hacking"],
        by["h_hack_2"]["after"]["kl_penalty"]["labels"]["reward_hacking"],
    )
    assert f"moves the hack from step {old} to {new}" in text


def test_each_intervention_sets_the_value_its_menu_names():
    from helpers.gru_lab import LabProfile

    base = LabProfile()
    for name, (_, _, changes, pert) in gen.RUNS.items():
        get = {k: changes.get(k, getattr(base, k)) for k in vars(base)}
        out = {k: f(changes, pert) for k, f in gen.APPLY.items()}
        assert out["lower_lr"][0]["lr"] == get["lr"] / 3, name
        assert out["kl_penalty"][0]["kl_coef"] == get["kl_coef"] + 0.1, name
        assert out["larger_groups"][0]["group_size"] == 2 * get["group_size"], name
        if out["one_epoch"] is not None:
            assert out["one_epoch"][0]["num_iterations"] == 1, name
        if out["patch_verifier"] is not None:
            for k in ("w_correct", "w_consistent", "w_format"):
                assert out["patch_verifier"][0][k] == getattr(base, k), name
        if out["repair_verifier"] is not None:
            assert not any(k.startswith("verifier_fault") for k in out["repair_verifier"][1]), name


def test_each_baselm_intervention_sets_the_value_its_menu_names_and_nothing_else():
    """APPLY_BASELM, the menu on a BaseLM run's settings: one_epoch and repair_verifier are never
    options (no batch is reused, no call fails), patch_verifier only where the verifier is sloppy."""
    want = {"lower_lr": {"lr"}, "kl_penalty": {"kl_coef"}, "larger_groups": {"k"},
            "patch_verifier": {"verifier"}}  # fmt: skip
    assert set(gen.APPLY_BASELM) == set(gen.APPLY)
    for name, (_, _, changes) in gen.BASELM_RUNS.items():
        c = gen.BASELM | changes
        out = {k: f(c) for k, f in gen.APPLY_BASELM.items()}
        assert out["one_epoch"] is None and out["repair_verifier"] is None, name
        assert (out["patch_verifier"] is None) == (c["verifier"] == "strict"), name
        for key, fields in want.items():
            if out[key] is not None:
                assert {k for k in c if c[k] != out[key][k]} == fields and set(out[key]) == set(c), (
                    name, key)  # fmt: skip
        assert out["lower_lr"]["lr"] == c["lr"] / 3 and out["larger_groups"]["k"] == 2 * c["k"]
        assert out["kl_penalty"]["kl_coef"] == c["kl_coef"] + 0.1


def test_the_length_rule_alone_finds_what_the_table_finds_on_these_runs():
    """Lesson 9.4.6 says the library does not test length growth's second condition: the length
    half of the single-metric baseline flags the same runs as the table, at the same step or one
    step earlier (lm_sloppy_mask: its truncation lags its length by one step)."""
    offsets = []
    for r in RUNS:
        alone = {f["label"]: f["step"] for f in single_metric_baseline(r["log"])}
        assert ("length_growth" in alone) == ("length_growth" in r["labels"]), r["name"]
        if "length_growth" in alone:
            offsets.append(r["labels"]["length_growth"] - alone["length_growth"])
    assert set(offsets) == {0, 1}


def test_a_short_baselm_run_logs_the_clinic_keys_on_the_rollout_grid(monkeypatch):
    """dev.records.clinic_runs._one_baselm, shortened (4 steps, 2 prompts x 4 completions, a budget
    of 2 tokens, so that every answer is cut): every step and evaluation key of the log format, NaN
    only in the keys a BaseLM run never measures, lengths and truncation of the true rollout (the
    masking view the step sees has zero lengths there), the masking contract in the config,
    BASELM_FIXED in the passport, torch's thread count restored, the same log from a second run."""
    import torch

    short = {"steps": 4, "eval_every": 2, "eval_prompts": 3, "eval_samples": 4, "k": 4,
             "prompts_per_step": 2, "max_new_tokens": 2}  # fmt: skip
    monkeypatch.setattr(gen, "BASELM", gen.BASELM | short)
    threads = torch.get_num_threads()
    first, second = gen._one_baselm("lm_sloppy_mask"), gen._one_baselm("lm_sloppy_mask")
    assert torch.get_num_threads() == threads
    assert first["log"] == second["log"]
    steps, evals = first["log"]["steps"], first["log"]["evals"]
    assert tuple(steps) == gen.STEP_KEYS and tuple(evals) == gen.EVAL_KEYS
    assert steps["step"] == [1, 2, 3, 4] and evals["eval_step"] == [0, 2, 4]
    for key, v in steps.items():
        never = key in ("clip_low_reused", "clip_high_reused", "ratio_max_final")
        assert all((x is None) == never for x in v), key
    assert steps["truncation_rate"] == [1.0] * 4 and steps["len_mean"] == [2.0] * 4
    for key in ("accuracy", "parse_fail_rate"):
        assert all(x * 8 == round(x * 8) for x in steps[key]), key
    assert all(x * 2 == round(x * 2) for x in steps["informative_rate"])
    cfg = first["passport"]["config"]
    assert cfg["truncation"] == "mask" and cfg["verifier"] == "sloppy" and cfg["steps"] == 4
    assert first["passport"]["fixed"] == gen.BASELM_FIXED
    assert first["passport"]["verifier"]["name"] == "arithmetic_sloppy"


def test_the_masking_view_drops_truncated_rows_from_the_loss_and_keeps_their_text():
    """gen.mask_truncated on a real rollout of a tiny transformer: a truncated row's completion mask
    is zero, so lesson 9.5's completion_log_prob gives it 0 under any model (no policy-gradient and
    no KL term); a row that ended keeps its mask and log-prob; texts and stop reasons are the same, so
    its reward (computed from the text) stays in the group."""
    import torch

    from course.reference import reference
    from helpers.sampling import sample_groups
    from helpers.standins import tiny_lm

    model, tok = tiny_lm(0)
    s = sample_groups(model, tok, ["1+2=", "30+4="], 16, max_new_tokens=60,
                      generator=torch.Generator().manual_seed(0))  # fmt: skip
    cut = torch.tensor([x == "length" for x in s.stop_reason])
    assert cut.any() and (~cut).any(), "the rollout needs both kinds of rows"
    v = gen.mask_truncated(s)
    assert v.texts == s.texts and v.stop_reason == s.stop_reason
    assert torch.equal(v.completion_mask[~cut], s.completion_mask[~cut])
    assert not v.completion_mask[cut].any()
    logp = reference("9.5").completion_log_prob
    with torch.no_grad():
        full = logp(model, s.input_ids, s.attention_mask, s.prompt_len, s.position_ids)
        seen = logp(model, v.input_ids, v.attention_mask, v.prompt_len, v.position_ids)
    assert torch.all(seen[cut] == 0) and torch.allclose(seen[~cut], full[~cut])
    assert torch.all(full[cut] != 0)


def test_lm_sloppy_masks_length_growth_is_thin_as_the_guide_says():
    """INSTRUCTOR.md: the definition holds at 18 of lm_sloppy_mask's 246 steps (two stretches; 105
    in lm_sloppy), and its hack shows only in the last 5 steps, so only length growth is induced."""
    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    held = {}
    for r in VISIBLE:
        if r["name"] in ("lm_sloppy", "lm_sloppy_mask"):
            log, steps = r["log"], r["log"]["steps"]["step"]
            held[r["name"]] = [int(steps[i]) for i in range(WINDOW - 1, len(steps))
                               if _holds(log, "length_growth", i)]  # fmt: skip
    mask = held["lm_sloppy_mask"]
    runs = [s for i, s in enumerate(mask) if i == 0 or mask[i - 1] != s - 1]
    ends = [s for i, s in enumerate(mask) if i == len(mask) - 1 or mask[i + 1] != s + 1]
    stretches = ", ".join(f"{a}-{b}" for a, b in zip(runs, ends, strict=True))
    mk = next(r for r in VISIBLE if r["name"] == "lm_sloppy_mask")
    last = mk["log"]["steps"]["step"][-1]
    n = len(mk["log"]["steps"]["step"]) - WINDOW + 1  # the steps at which a full window exists
    assert (
        f"The definition holds at {len(mask)} of its {n} steps (steps {stretches.replace(', ', ' and ')};"
        f" `lm_sloppy`: {len(held['lm_sloppy'])})" in text
    )
    assert mk["labels"]["reward_hacking"] > last - WINDOW and mk["intended"] == ["length_growth"]
    assert "its reward hacking shows only in the last 5 steps" in text


def test_the_baselm_runs_use_lesson_9_5s_arithmetic_settings():
    """The lessons call the BaseLM clinic runs lesson 9.5's arithmetic-choice run with one change:
    BASELM's training settings are 9.5's ARITH_CONFIG (and its 250 steps)."""
    import re

    src = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    block = src[src.index("ARITH_CONFIG = TrainerConfig(") :].split(")\n", 1)[0]
    values = dict(re.findall(r"(\w+)=([\w.\-]+),", block))
    for key in ("k", "max_new_tokens", "lr", "kl_coef", "prompts_per_step"):
        assert float(values[key]) == gen.BASELM[key], key
    assert float(values["temperature"]) == gen.BASELM_FIXED["temperature"]
    assert float(values["grad_clip"]) == gen.BASELM_FIXED["grad_clip"]
    assert re.search(r'"arith": 8 if SMOKE else (\d+)', src).group(1) == str(gen.BASELM["steps"])
    assert "N_TRAIN = 4000" in src and gen.BASELM_FIXED["n_train"] == 4000


def test_the_guide_and_lesson_quote_the_baselm_records():
    """INSTRUCTOR.md's BaseLM sentences (the KL figures, the reruns) are what the records show."""
    from course.reference import reference

    choose = reference("9.4").choose_intervention
    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    by = {r["name"]: r for r in RUNS}
    kl = {
        n: np.asarray(by[n]["log"]["steps"]["kl_ref"])
        for n in ("lm_sloppy", "lm_sloppy_mask", "lm_no_kl")
    }
    windows = np.convolve(kl["lm_sloppy"], np.ones(WINDOW) / WINDOW, "valid")
    above = int((np.convolve(kl["lm_no_kl"], np.ones(WINDOW) / WINDOW, "valid") > 0.3).sum())
    t = by["lm_no_kl"]["labels"]["kl_blowup"]
    main = by["lm_sloppy"]["after"]["patch_verifier"]["labels"]["kl_blowup"]
    assert (
        f"(median per-token KL {np.median(kl['lm_sloppy']):.2f} in `lm_sloppy`, three windows in four"
        f" above 0.3; `lm_sloppy_mask` {np.median(kl['lm_sloppy_mask']):.2f})"
        in text
        and round(float((windows > 0.3).mean()), 2) == 0.75
    )
    assert f"drifts less (median {np.median(kl['lm_no_kl']):.2f})" in text
    assert (
        f"its window is above 0.3 at {above} of {len(windows)} steps, in three short episodes (two set"
        f" off by a single step whose KL is above 1), first at step {t};" in text
    )
    over = np.nonzero(np.convolve(kl["lm_no_kl"], np.ones(WINDOW) / WINDOW, "valid") > 0.3)[0]
    episodes = np.split(over, np.nonzero(np.diff(over) > 1)[0] + 1)  # window start rows
    big = [bool((kl["lm_no_kl"][e[0] : e[-1] + WINDOW] > 1).any()) for e in episodes]
    assert len(episodes) == 3 and sum(big) == 2 and int(over[0]) + WINDOW == t
    mk = by["lm_sloppy_mask"]
    assert (
        f"The KL term ends `lm_sloppy`'s hack but moves `lm_sloppy_mask`'s hack from step"
        f" {mk['labels']['reward_hacking']} to {mk['after']['kl_penalty']['labels']['reward_hacking']}"
        f" and its growth from {mk['labels']['length_growth']} to"
        f" {mk['after']['kl_penalty']['labels']['length_growth']}." in text
    )
    assert "reward_hacking" not in by["lm_sloppy"]["after"]["kl_penalty"]["labels"]
    assert f"crosses at step {main}." in text
    for name in ("lm_sloppy", "lm_sloppy_mask", "h_lm_sloppy_1"):
        assert set(by[name]["after"]["patch_verifier"]["labels"]) == {"kl_blowup"}, name
        assert choose(by[name]["labels"], by[name]["after"]) == "patch_verifier", name
    h2 = by["h_lm_sloppy_2"]
    assert set(h2["after"]["kl_penalty"]["labels"]) == {"kl_blowup"}
    assert choose(h2["labels"], h2["after"]) == "kl_penalty"
    assert (
        choose(h2["labels"], {"patch_verifier": h2["after"]["patch_verifier"]}) == "patch_verifier"
    )
    assert set(by["h_lm_sloppy_1"]["after"]["kl_penalty"]["labels"]) >= set(
        by["h_lm_sloppy_1"]["labels"]
    )
    old, new = (by["lm_sloppy"]["labels"]["length_growth"],
                by["lm_sloppy"]["after"]["kl_penalty"]["labels"]["length_growth"])  # fmt: skip
    assert f"brings the length growth forward (step {old} to {new})" in text
    assert all("kl_blowup" in res["labels"] for res in by["lm_no_kl"]["after"].values())
    assert choose(by["lm_no_kl"]["labels"], by["lm_no_kl"]["after"]) is None


def test_the_hidden_nan_case_reaches_the_baselm_runs():
    """test_diagnose_contract's NaN case takes _held[-2:] as the runs whose answers grow."""
    assert all(
        r["name"] in gen.BASELM_RUNS and "length_growth" in r["labels"] for r in HELDOUT[-2:]
    )
    hidden = ROOT / "course" / "lessons" / "9.4" / "hidden" / "test_diagnose_contract.py"
    assert "for _name, _log in _held[:6] + _held[-2:]:" in hidden.read_text()


def test_lm_sloppys_length_onset_is_an_exact_truncation_tie():
    """contracts.md (diagnose): at step 109 the truncation window equals the start + 0.2 exactly."""
    r = next(r for r in VISIBLE if r["name"] == "lm_sloppy")
    t, trunc = r["labels"]["length_growth"], r["log"]["steps"]["truncation_rate"]
    i = r["log"]["steps"]["step"].index(t)
    assert (
        t == 109
        and f"length growth (step {t})"
        in (ROOT / "course" / "lessons" / "9.4" / "contracts.md").read_text()
    )
    assert np.mean(trunc[i - WINDOW + 1 : i + 1]) == np.mean(trunc[:WINDOW]) + 0.2 == 69 / 64 / 5
