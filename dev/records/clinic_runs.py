"""Generate lesson 9.4's diagnosis clinic: real CPU-lab runs with induced pathologies.

Each run is the GRU lab (helpers/gru_lab.py) with the instructor's reference functions
(dev/records/gru_lab_smoke.py), a profile change and a ``Perturbation``. Its log keeps the dashboard
keys the clinic's definitions read, and its labels are what those definitions (the reference
``diagnose`` of lesson 9.4, read from the lesson's solution cell: one copy of the rule) find on it.
Every run also names what was induced (``intended``); the generator fails when a run does not show
an induced pathology or a healthy run shows any, so a label is never only a wish.

    python -m dev.records.clinic_runs            # run everything, write both files (about 4 min)
    python -m dev.records.clinic_runs --check    # relabel the committed logs with today's rule
    python -m dev.records.clinic_runs --relabel  # ...and write the new labels and scores
    python -m dev.records.clinic_runs --only h_stale_1   # rerun one run, keep the rest

Writes ``helpers/data/clinic_runs.json`` (the visible runs: seed 0, shown in the lesson and its
visible tests) and ``course/lessons/9.4/hidden/clinic_heldout.json`` (other seeds, other settings and
runs with two pathologies at once: only the trusted grader holds them, inlined into the hidden tests
by ``# @data``; it passes one log at a time to the student's function as plain data, never the
labels). Both carry each run's passport (config, its hash, versions, CPU) and ``scores``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from course.build_lessons import _cells, reference_copy
from helpers.clinic import (
    INTERVENTIONS,
    LABELS,
    WINDOW,
    load_log,
    mean_f1,
    single_metric_baseline,
)

ROOT = Path(__file__).resolve().parents[2]
VISIBLE = ROOT / "helpers" / "data" / "clinic_runs.json"
HELDOUT = ROOT / "course" / "lessons" / "9.4" / "hidden" / "clinic_heldout.json"
STEP_KEYS = ("step", "reward", "accuracy", "informative_rate", "parse_fail_rate",
             "verifier_error_rate", "truncation_rate", "len_mean", "entropy", "kl_ref",
             "clip_low_reused", "clip_high_reused", "ratio_max_final", "skipped")  # fmt: skip
EVAL_KEYS = ("eval_step", "train_acc", "train_pass@4", "heldout_acc", "heldout_pass@4",
             "heldout_greedy_acc")  # fmt: skip

HEALTHY = {"lr": 1e-3, "num_iterations": 1, "kl_coef": 0.05}
# name: (split, intended labels, profile changes, perturbation)
RUNS: dict[str, tuple[str, tuple[str, ...], dict, dict]] = {
    "healthy": ("visible", (), HEALTHY | {"seed": 0}, {}),
    "smoke": ("visible", ("entropy_collapse", "stale_rollouts"), {"seed": 0}, {}),
    "kl_blowup": ("visible", ("kl_blowup",), {"seed": 0, "lr": 6e-3, "max_grad_norm": 0.0}, {}),
    "stale": ("visible", ("stale_rollouts",), HEALTHY | {"seed": 0, "num_iterations": 8}, {}),
    "hack": ("visible", ("reward_hacking",),
             {"seed": 0, "num_iterations": 1, "w_correct": 0.0, "w_consistent": 1.0}, {}),
    "easy_prompts": ("visible", ("signal_starvation",),
                     HEALTHY | {"seed": 0, "p_clean": 1.0, "p_carry_drop": 0.0}, {}),
    "verifier_fault": ("visible", ("verifier_failure",), HEALTHY | {"seed": 0},
                       {"verifier_fault_step": 25, "verifier_fault_rate": 0.3}),
    # held out: other seeds, other settings of the same pathologies, and two at once
    "h_healthy_1": ("heldout", (), HEALTHY | {"seed": 1}, {}),
    "h_healthy_2": ("heldout", (), HEALTHY | {"seed": 2}, {}),
    "h_healthy_3": ("heldout", (), HEALTHY | {"seed": 3, "kl_coef": 0.1}, {}),
    "h_collapse_1": ("heldout", ("entropy_collapse",), {"seed": 1}, {}),
    "h_collapse_2": ("heldout", ("entropy_collapse",), {"seed": 2, "kl_coef": 0.05}, {}),
    "h_stale_1": ("heldout", ("stale_rollouts",), HEALTHY | {"seed": 1, "num_iterations": 6}, {}),
    "h_stale_2": ("heldout", ("stale_rollouts",), HEALTHY | {"seed": 2, "num_iterations": 8}, {}),
    "h_kl_1": ("heldout", ("kl_blowup",), {"seed": 1, "lr": 6e-3, "max_grad_norm": 0.0}, {}),
    "h_kl_2": ("heldout", ("kl_blowup",), {"seed": 2, "lr": 5e-3, "max_grad_norm": 0.0}, {}),
    "h_hack_1": ("heldout", ("reward_hacking",),
                 {"seed": 1, "num_iterations": 1, "w_correct": 0.0, "w_consistent": 1.0}, {}),
    "h_hack_2": ("heldout", ("reward_hacking",),
                 {"seed": 2, "num_iterations": 1, "w_correct": 0.0, "w_consistent": 1.0}, {}),
    "h_easy_1": ("heldout", ("signal_starvation",),
                 HEALTHY | {"seed": 1, "p_clean": 1.0, "p_carry_drop": 0.0}, {}),
    "h_easy_2": ("heldout", ("signal_starvation",),
                 HEALTHY | {"seed": 2, "p_clean": 1.0, "p_carry_drop": 0.0}, {}),
    "h_fault_1": ("heldout", ("verifier_failure",), HEALTHY | {"seed": 1},
                  {"verifier_fault_step": 15, "verifier_fault_rate": 0.5}),
    "h_fault_2": ("heldout", ("verifier_failure",), HEALTHY | {"seed": 2},
                  {"verifier_fault_step": 35, "verifier_fault_rate": 0.2}),
    "h_stale_fault": ("heldout", ("stale_rollouts", "verifier_failure"),
                      HEALTHY | {"seed": 3, "num_iterations": 8},
                      {"verifier_fault_step": 30, "verifier_fault_rate": 0.3}),
    "h_easy_fault": ("heldout", ("signal_starvation", "verifier_failure"),
                     HEALTHY | {"seed": 3, "p_clean": 1.0, "p_carry_drop": 0.0},
                     {"verifier_fault_step": 20, "verifier_fault_rate": 0.4}),
}  # fmt: skip


def reference_diagnose():
    """Lesson 9.4's reference ``diagnose`` (its solution cell), and the names it defines."""
    cells = _cells(ROOT / "course" / "lessons" / "9.4" / "lesson.py")
    solutions = {c["args"]["id"]: "\n".join(c["lines"]) for c in cells if c["kind"] == "solution"}
    ns = {"np": np, "math": math, "LABELS": LABELS, "WINDOW": WINDOW}
    exec(reference_copy(solutions, ["diagnose"]), ns)  # noqa: S102 - our own lesson source
    return ns["_ref_diagnose"], LABELS


def _default(key: str):
    from helpers.gru_lab import LabProfile

    return getattr(LabProfile(), key)


def _lower_lr(c: dict, q: dict):
    return c | {"lr": c.get("lr", _default("lr")) / 3}, q


def _one_epoch(c: dict, q: dict):
    return (
        (c | {"num_iterations": 1}, q)
        if c.get("num_iterations", _default("num_iterations")) > 1
        else None
    )


def _kl_penalty(c: dict, q: dict):
    return c | {"kl_coef": c.get("kl_coef", _default("kl_coef")) + 0.1}, q


def _larger_groups(c: dict, q: dict):
    return c | {"group_size": 2 * c.get("group_size", _default("group_size"))}, q


def _patch_verifier(c: dict, q: dict):
    weights = {k: _default(k) for k in ("w_correct", "w_consistent", "w_format")}
    return (c | weights, q) if any(c.get(k, v) != v for k, v in weights.items()) else None


def _repair_verifier(c: dict, q: dict):
    return (
        (c, {k: v for k, v in q.items() if not k.startswith("verifier_fault")})
        if q.get("verifier_fault_rate", 0.0) > 0
        else None
    )


# each of helpers.clinic.INTERVENTIONS as a change to a run's (profile changes, perturbation): the
# same run again, from the same seed, with that one thing done differently; None when it would
# change nothing (the intervention is then not an option for that run)
APPLY = {
    "lower_lr": _lower_lr,
    "one_epoch": _one_epoch,
    "kl_penalty": _kl_penalty,
    "larger_groups": _larger_groups,
    "patch_verifier": _patch_verifier,
    "repair_verifier": _repair_verifier,
}  # fmt: skip


def _one(name: str, intervention: str | None = None) -> dict:
    import torch

    from dev.records.gru_lab_smoke import REFERENCE_FNS
    from helpers.gru_lab import LabProfile, Perturbation, run_lab

    torch.manual_seed(0)
    split, intended, changes, pert = RUNS[name]
    if intervention is not None:
        changes, pert = APPLY[intervention](changes, pert)
        name = f"{name}+{intervention}"
    result = run_lab(LabProfile(name=f"clinic/{name}", **changes),
                     perturbation=Perturbation(**pert), progress=False, **REFERENCE_FNS)  # fmt: skip
    h = result.history

    def clean(xs):
        return [None if math.isnan(x) else round(float(x), 6) for x in xs]

    log = {
        "steps": {k: clean(h[k]) for k in STEP_KEYS},
        "evals": {k: clean(h[k]) for k in EVAL_KEYS},
    }
    passport = {k: v for k, v in result.passport.items() if k != "extra"}
    return {
        "name": name,
        "split": split,
        "intended": list(intended),
        "log": log,
        "passport": passport,
    }


def label(runs: list[dict]) -> list[str]:
    """Set each run's ``labels`` ({label: onset step}) from the reference rule; the problems."""
    diagnose, _ = reference_diagnose()
    problems = []
    for r in runs:
        found = {f["label"]: f["step"] for f in diagnose(load_log(r["log"]))}
        r["labels"] = dict(sorted(found.items()))
        missing = set(r["intended"]) - set(found)
        if missing:
            problems.append(f"{r['name']}: induced {sorted(missing)} but the rule does not see it")
        if not r["intended"] and found:
            problems.append(f"{r['name']}: meant to be healthy, the rule finds {sorted(found)}")
    return problems


def scores(part: list[dict]) -> dict:
    """Mean per-label F1 of the reference and of the single-metric baseline on ``part``, twice: against
    the labels (what the definitions find: the reference scores 1 by construction, so that column
    only measures the baseline) and against what was induced (``intended``: the reference's other
    labels count as false alarms there, so this is the score of the definitions as a detector of
    the causes), with how many labels were not induced."""
    diagnose, _ = reference_diagnose()
    logs = [load_log(r["log"]) for r in part]
    by_rule = [{"log": g, "labels": r["labels"]} for g, r in zip(logs, part, strict=True)]
    by_cause = [
        {"log": g, "labels": dict.fromkeys(r["intended"])} for g, r in zip(logs, part, strict=True)
    ]
    return {
        "reference_mean_f1": round(mean_f1(diagnose, by_rule), 4),
        "single_metric_baseline_mean_f1": round(mean_f1(single_metric_baseline, by_rule), 4),
        "reference_mean_f1_vs_induced": round(mean_f1(diagnose, by_cause), 4),
        "single_metric_baseline_mean_f1_vs_induced": round(mean_f1(single_metric_baseline, by_cause), 4),
        "labels": sum(len(r["labels"]) for r in part),
        "labels_not_induced": sum(len(set(r["labels"]) - set(r["intended"])) for r in part),
    }  # fmt: skip


def write(runs: list[dict]) -> None:
    _, labels = reference_diagnose()
    for split, path in (("visible", VISIBLE), ("heldout", HELDOUT)):
        part = [r for r in runs if r["split"] == split]
        doc = {
            "about": "lesson 9.4's diagnosis clinic; made by python -m dev.records.clinic_runs",
            "labels": list(labels),
            "scores": scores(part),
            "runs": part,
        }
        path.write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
        print(f"{path.relative_to(ROOT)}: {len(part)} runs, scores {doc['scores']}")


def _after(job: tuple[str, str]) -> tuple[str, str, dict]:
    name, key = job
    r = _one(name, key)
    diagnose, _ = reference_diagnose()
    labels = {f["label"]: f["step"] for f in diagnose(load_log(r["log"]))}
    return name, key, {"labels": dict(sorted(labels.items())),
                       "config_hash": r["passport"]["config_hash"]}  # fmt: skip


def interventions(jobs: int) -> int:
    """Each run that shows a label, rerun once per intervention that changes its config: ``after``
    {intervention: {"labels", "config_hash"}} in its record (the logs are not kept)."""
    assert set(APPLY) == set(INTERVENTIONS), "helpers.clinic.INTERVENTIONS and APPLY disagree"
    runs = [r for p in (VISIBLE, HELDOUT) for r in json.loads(p.read_text())["runs"]]
    todo = [(r["name"], key) for r in runs if r["labels"] for key in APPLY
            if APPLY[key](*RUNS[r["name"]][2:]) is not None]  # fmt: skip
    print(f"{len(todo)} counterfactual runs on {jobs} processes")
    after: dict[str, dict] = {}
    with ProcessPoolExecutor(jobs) as ex:
        for name, key, res in ex.map(_after, todo):
            after.setdefault(name, {})[key] = res
            print(f"  {name:>16} + {key:<16} -> {res['labels'] or 'none'}", flush=True)
    for r in runs:
        if r["labels"]:
            r["after"] = dict(sorted(after[r["name"]].items()))
    write(runs)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dev.records.clinic_runs", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument(
        "--check", action="store_true", help="relabel the committed logs; fail on a change"
    )
    ap.add_argument(
        "--relabel", action="store_true", help="rewrite labels and scores from the committed logs"
    )
    ap.add_argument(
        "--interventions",
        action="store_true",
        help="rerun every run that shows a label once per intervention; store the labels after",
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--only", nargs="+", metavar="NAME", help="rerun these runs, keep the others as committed"
    )
    args = ap.parse_args(argv)
    if args.interventions:
        return interventions(args.jobs)
    if args.check or args.relabel:
        docs = {p: json.loads(p.read_text()) for p in (VISIBLE, HELDOUT)}
        runs = [r for d in docs.values() for r in d["runs"]]
        before = {r["name"]: r["labels"] for r in runs}
        problems = label(runs)
        if args.relabel:
            write(runs)
        else:
            problems += [f"{r['name']}: labels {before[r['name']]} -> {r['labels']}"
                         for r in runs if r["labels"] != before[r["name"]]]  # fmt: skip
            for p, d in docs.items():
                now = scores([r for r in runs if r["split"] == d["runs"][0]["split"]])
                if d["scores"] != now:
                    problems.append(f"{p.name}: scores {d['scores']} -> {now}")
    else:
        names = args.only or list(RUNS)
        with ProcessPoolExecutor(args.jobs) as ex:
            fresh = dict(zip(names, ex.map(_one, names), strict=True))
        kept = {}
        if args.only:
            kept = {
                r["name"]: r for p in (VISIBLE, HELDOUT) for r in json.loads(p.read_text())["runs"]
            }
        runs = [fresh[n] if n in fresh else kept[n] for n in RUNS]
        problems = label(runs)
        write(runs)
    for r in runs:
        print(f"  {r['name']:>16} ({r['split']}): intended {r['intended']}, labels {r['labels']}")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
