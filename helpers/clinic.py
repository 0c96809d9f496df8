"""Lesson 9.4's diagnosis clinic: the saved logs of real CPU-lab runs with induced pathologies.

The instructor's generator (``dev.records.clinic_runs``, in the repository, not in the bundle) runs the
GRU lab (``helpers.gru_lab``) with a profile change and a ``Perturbation`` per run, and lesson 9.5's
BaseLM lab (free-text answers, which can outgrow their budget) with a changed verifier, truncation
contract or KL coefficient, keeps the dashboard keys below, and labels each run with the lesson's definitions. This module only reads the visible runs; the held-out runs the
grader uses are not part of the student library.

A log is plain data::

    {"steps": {key: [float, ...] one per RL step, "step": the step numbers 1, 2, ...},
     "evals": {key: [float, ...] one per evaluation, "eval_step": 0, 10, ..., 60}}

(a GRU-lab run: 60 steps, an evaluation every 10; a BaseLM run: 250 steps, an evaluation every 25)

step keys: reward, accuracy (the patched rule, correctness, on the training batch: an audit beside
the reward), informative_rate, parse_fail_rate, verifier_error_rate, truncation_rate, len_mean,
entropy, kl_ref, clip_low_reused, clip_high_reused, ratio_max_final, skipped; eval keys: train_acc,
train_pass@4, heldout_acc, heldout_pass@4, heldout_greedy_acc. A metric that was not measured at a
step (the update statistics of a skipped step, reused clipping with one epoch, and in a BaseLM run,
which never reuses a batch, the clipping keys and ratio_max_final) is NaN. In a BaseLM run ``entropy`` and ``kl_ref`` are
the policy's exact token entropy and the k3 estimate on the sampled tokens, both measured on the
step's rollout before its update, and ``accuracy`` and the evaluations use the strict final-answer
verifier (``helpers.verifiers.verify_arithmetic``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

CLINIC_RUNS = Path(__file__).resolve().parent / "data" / "clinic_runs.json"
LABELS = ("entropy_collapse", "kl_blowup", "stale_rollouts", "reward_hacking",
          "signal_starvation", "verifier_failure", "length_growth")  # fmt: skip
"""The clinic's fixed vocabulary: one label per pathology the lesson defines."""
WINDOW = 5
"""Steps in the trailing window (and in the baseline at the start) of every definition."""
INTERVENTIONS = {
    "lower_lr": ("the RL learning rate divided by 3", "slower progress per step; more steps to the same reward"),
    "one_epoch": ("one update epoch per rollout batch (no reuse)", "more generation per update"),
    "kl_penalty": ("a KL term to the reference, beta raised by 0.1", "the policy may move less far; one more coefficient to tune"),
    "larger_groups": ("twice as many completions per prompt (G)", "twice the generation per step"),
    "patch_verifier": ("the verifier scores correctness again (its default weights)", "a stricter verifier to build and audit"),
    "repair_verifier": ("the verifier service stops failing calls", "engineering time; the steps trained during the fault are spent"),
}  # fmt: skip
"""The clinic's interventions: key -> (what it changes in the lab run, what it costs). Each clinic
run that shows a label was rerun once per intervention that changes its config (``after`` in its
record: the labels the rerun shows)."""

__all__ = [
    "CLINIC_RUNS",
    "INTERVENTIONS",
    "LABELS",
    "WINDOW",
    "load_clinic_runs",
    "load_log",
    "mean_f1",
    "single_metric_baseline",
]


def load_log(log: dict) -> dict:
    """A stored log with its nulls back as NaN (JSON has no NaN); lists of floats."""
    return {
        part: {k: [math.nan if x is None else float(x) for x in v] for k, v in log[part].items()}
        for part in ("steps", "evals")
    }


def load_clinic_runs(path: str | Path = CLINIC_RUNS) -> list[dict]:
    """The clinic's runs: each {"name", "log", "labels" ({label: first visible step}), "intended"
    (what was induced), "passport"}; ``labels`` are what the lesson's definitions find."""
    doc = json.loads(Path(path).read_text())
    return [r | {"log": load_log(r["log"])} for r in doc["runs"]]


def mean_f1(diagnose: Callable[[dict], list[dict]], runs: list[dict]) -> float:
    """Mean over LABELS of the F1 of ``diagnose``'s label sets against each run's ``labels`` (runs as
    ``load_clinic_runs`` gives them); a label that no run has and no finding names scores 1."""
    scores = []
    found = [{f["label"] for f in diagnose(r["log"])} for r in runs]
    for lab in LABELS:
        tp = sum(lab in got and lab in r["labels"] for got, r in zip(found, runs, strict=True))
        fp = sum(lab in got and lab not in r["labels"] for got, r in zip(found, runs, strict=True))
        fn = sum(lab not in got and lab in r["labels"] for got, r in zip(found, runs, strict=True))
        scores.append(1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def single_metric_baseline(log: dict) -> list[dict]:
    """The clinic's strawman: each label from ONE metric, the first condition of its definition (entropy
    halved, KL, reused clipping, reward up, informative rate, verifier errors, mean length up) with the
    same window and threshold, and no second check (no held-out pass@k, no audit accuracy, no parse
    failures, no truncation)."""
    s = {k: np.asarray(v, dtype=np.float64) for k, v in log["steps"].items()}

    def window(x: np.ndarray, t: int) -> float:
        v = x[t - WINDOW + 1 : t + 1]
        v = v[~np.isnan(v)]
        return float(v.mean()) if v.size else math.nan

    start = WINDOW - 1
    rules = {
        "entropy_collapse": lambda t: window(s["entropy"], t) < 0.5 * window(s["entropy"], start),
        "kl_blowup": lambda t: window(s["kl_ref"], t) > 0.3,
        "stale_rollouts": lambda t: window(s["clip_low_reused"] + s["clip_high_reused"], t) > 0.04,
        "reward_hacking": lambda t: window(s["reward"], t) >= window(s["reward"], start) + 0.02,
        "signal_starvation": lambda t: window(s["informative_rate"], t) < 0.2,
        "verifier_failure": lambda t: window(s["verifier_error_rate"], t) >= 0.05,
        "length_growth": lambda t: window(s["len_mean"], t) >= 1.2 * window(s["len_mean"], start),
    }
    out = []
    for label, holds in rules.items():
        t = next((t for t in range(start, len(s["step"])) if holds(t)), None)
        if t is not None:
            out.append({"label": label, "step": int(s["step"][t]), "metrics": []})
    return out
