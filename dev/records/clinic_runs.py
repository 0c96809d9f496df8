"""Generate lesson 9.4's diagnosis clinic: real CPU-lab runs with induced pathologies.

Each run is the GRU lab (helpers/gru_lab.py) with the instructor's reference functions
(dev/records/gru_lab_smoke.py), a profile change and a ``Perturbation``, or lesson 9.5's BaseLM lab
(its reference ``train_step``, ``BASELM`` with a change of verifier, truncation contract or KL
coefficient: ``BASELM_RUNS``). Its log keeps the dashboard
keys the clinic's definitions read, and its labels are what those definitions (the reference
``diagnose`` of lesson 9.4, read from the lesson's solution cell: one copy of the rule) find on it.
Every run also names what was induced (``intended``); the generator fails when a run does not show
an induced pathology or a healthy run shows any, so a label is never only a wish.

    python -m dev.records.clinic_runs            # run everything, write both files (about 8 min)
    python -m dev.records.clinic_runs --check    # relabel the committed logs with today's rule
    python -m dev.records.clinic_runs --relabel  # ...and write the new labels and scores
    python -m dev.records.clinic_runs --only h_stale_1   # rerun one run, keep the rest
    python -m dev.records.clinic_runs --interventions [--only NAME ...]   # the reruns (about 35 min)

Writes ``helpers/data/clinic_runs.json`` (the visible runs: seed 0, shown in the lesson and its
visible tests) and ``course/lessons/9.4/hidden/clinic_heldout.json`` (other seeds, other settings and
runs with two pathologies at once: only the trusted grader holds them, inlined into the hidden tests
by ``# @data``; it passes one log at a time to the student's function as plain data, never the
labels). Both carry each run's passport (config, its hash, versions, CPU) and ``scores``.
"""

from __future__ import annotations

import argparse
import dataclasses
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


# BaseLM runs (lesson 9.5's lab: a LoRA policy on BaseLM, its reference train_step, the lesson's
# ARITH_CONFIG and 250 steps), logged with the clinic's keys: the GRU lab's answers cannot outgrow
# their budget, BaseLM's free text can. name: (split, intended labels, changes to BASELM). BaseLM's
# per-token KL crosses the table's 0.3 in every run tried, the leashed ones included (seeds 0-2), so
# the held-out set keeps only the sloppy runs: with no-KL runs too, kl_blowup would show in more than
# half of the held-out runs, and the recall cell's "reported everywhere is not right in half" and
# "0.9 means every one" would no longer hold.
BASELM = {"verifier": "strict", "seed": 0, "k": 8, "max_new_tokens": 8, "lr": 5e-3, "kl_coef": 0.05,
          "prompts_per_step": 8, "steps": 250, "eval_every": 25, "eval_prompts": 32,
          "eval_samples": 8}  # fmt: skip
BASELM_FIXED = {
    "family": "arithmetic_choice",
    "n_train": 4000,
    "temperature": 1.0,
    "grad_clip": 1.0,
    "lora": {"r": 8, "alpha": 16, "target_modules": ["q_proj", "v_proj"], "seed": "the run's seed"},
    "torch_threads": 1,
    "train_step": "lesson 9.5's reference train_step (course.reference)",
    "training_tasks": "make_tasks(family, n_train, 'train', seed)",
    "eval_tasks": "make_tasks(family, eval_prompts, 'train', 10000 + seed) and "
    "make_tasks(family, eval_prompts, 'heldout', 0)",
    "eval_sampling": "temperature 1, generators seeded seed + 1 (training prompts) and seed + 2 "
    "(held out); greedy for heldout_greedy_acc",
}
"""What every BaseLM clinic run shares and the generator never varies (recorded as ``fixed`` in each
passport, beside the hashed ``config``)."""
BASELM_RUNS: dict[str, tuple[str, tuple[str, ...], dict]] = {
    "lm_sloppy": ("visible", ("reward_hacking", "length_growth"), {"verifier": "sloppy"}),
    # the masking contract: its hack shows only in the last steps, so only the growth counts as induced
    "lm_sloppy_mask": ("visible", ("length_growth",), {"verifier": "sloppy", "truncation": "mask"}),
    "lm_no_kl": ("visible", ("kl_blowup",), {"kl_coef": 0.0}),
    "h_lm_sloppy_1": ("heldout", ("reward_hacking", "length_growth"), {"verifier": "sloppy", "seed": 1}),
    "h_lm_sloppy_2": ("heldout", ("reward_hacking", "length_growth"), {"verifier": "sloppy", "seed": 2}),
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

# the same for a BaseLM run's settings (BASELM | its changes): no batch is reused and no verifier
# call fails there, so one_epoch and repair_verifier are never options
APPLY_BASELM = {
    "lower_lr": lambda c: c | {"lr": c["lr"] / 3},
    "one_epoch": lambda c: None,
    "kl_penalty": lambda c: c | {"kl_coef": c["kl_coef"] + 0.1},
    "larger_groups": lambda c: c | {"k": 2 * c["k"]},
    "patch_verifier": lambda c: c | {"verifier": "strict"} if c["verifier"] != "strict" else None,
    "repair_verifier": lambda c: None,
}  # fmt: skip


def applies(name: str, key: str) -> bool:
    """Whether intervention ``key`` changes run ``name``'s settings (else it is not an option)."""
    if name in BASELM_RUNS:
        return APPLY_BASELM[key](BASELM | BASELM_RUNS[name][2]) is not None
    return APPLY[key](*RUNS[name][2:]) is not None


def _token_logprobs(model, sample):
    """(N, T) log-probs of each completion token under ``model`` (teacher forcing) and the logits
    (N, T, V) that gave them; 0 and anything where the completion mask is 0."""
    import torch

    P, T = sample.prompt_ids.shape[1], sample.completion_ids.shape[1]
    with torch.no_grad():
        logits = model(input_ids=sample.input_ids, attention_mask=sample.attention_mask,
                       position_ids=sample.position_ids).logits[:, P - 1 : P + T - 1].float()  # fmt: skip
        logp = logits.log_softmax(-1).gather(-1, sample.completion_ids[..., None]).squeeze(-1)
    return logp * sample.completion_mask, logits  # (N, T), (N, T, V)


def mask_truncated(sample):
    """The rollout as a step sees it under the masking contract (TRL's mask_truncated_completions):
    the same texts, stop reasons and log-probs, with a truncated row's completion mask zeroed, so
    its log-prob is 0 under any model (no policy-gradient or KL term) while its reward, computed from
    its text, stays in its group."""
    import torch

    ended = torch.tensor([x == "eos" for x in sample.stop_reason])  # (N,)
    keep = ended[:, None].to(sample.completion_mask.dtype)  # (N, 1)
    return dataclasses.replace(sample, completion_mask=sample.completion_mask * keep)


def _one_baselm(name: str, intervention: str | None = None) -> dict:
    """One BaseLM run of BASELM_RUNS (lesson 9.5's loop and reference train_step) with the clinic's
    log: per step the rollout's rates and lengths, the policy's exact token entropy and k3 KL to the
    reference on the sampled tokens (before the step's update), the strict verifier's accuracy on the
    batch; every ``eval_every`` steps sampled and greedy accuracy and pass@4 (strict verifier) on
    ``eval_prompts`` training and held-out prompts. No epoch reuses a batch: the clipping keys and
    ratio_max_final are NaN.
    A truncated answer is scored as written and stays in the loss, as in lesson 9.5; with
    ``"truncation": "mask"`` its reward stays in its group and its tokens leave the loss."""
    import torch

    from course.reference import reference
    from helpers.baselm import baselm_dir, load_baselm
    from helpers.lora import add_lora
    from helpers.passport import make_passport
    from helpers.reference import load_reference
    from helpers.sampling import sample_groups
    from helpers.tasks import make_tasks
    from helpers.trainer import GRPOTrainer, TrainerConfig
    from helpers.verifiers import verify_arithmetic, verify_arithmetic_sloppy

    fx = BASELM_FIXED
    threads = torch.get_num_threads()  # restored at the end (a test calls this in its own process)
    torch.set_num_threads(fx["torch_threads"])
    split, intended, changes = BASELM_RUNS[name]
    c = BASELM | changes
    if intervention is not None:
        c = APPLY_BASELM[intervention](c)
        name = f"{name}+{intervention}"
    ref = reference("9.5")
    verifier = {"strict": verify_arithmetic, "sloppy": verify_arithmetic_sloppy}[c["verifier"]]
    base, tok = load_baselm()
    lora = fx["lora"]
    policy = add_lora(base, r=lora["r"], alpha=lora["alpha"],
                      target_modules=tuple(lora["target_modules"]), seed=c["seed"])  # fmt: skip
    reference_model = load_reference(load_baselm)
    config = TrainerConfig(k=c["k"], max_new_tokens=c["max_new_tokens"], lr=c["lr"],
                           kl_coef=c["kl_coef"], prompts_per_step=c["prompts_per_step"],
                           seed=c["seed"], grad_clip=fx["grad_clip"],
                           temperature=fx["temperature"])  # fmt: skip
    train = make_tasks(fx["family"], fx["n_train"], "train", c["seed"])
    trainer = GRPOTrainer(policy, reference_model, tok, train, verifier, train_step=ref.train_step,
                          config=config)  # fmt: skip
    seen: dict = {}
    sample_fn = trainer.sample

    def sample_and_measure(tasks):  # the rollout as the step draws it, measured before its update
        s = sample_fn(tasks)
        logp, logits = _token_logprobs(trainer.policy, s)
        ref_logp, _ = _token_logprobs(trainer.reference, s)
        mask = s.completion_mask.float()
        verdicts = [verifier.check(t, x) for t, x in zip(
            [tasks[g] for g in s.group.tolist()], s.texts, strict=True)]  # fmt: skip
        seen.update(
            tasks=tasks, sample=s,
            entropy=float(ref.token_entropy(logits, mask)),
            kl_ref=float(ref.kl_to_reference(logp, ref_logp, mask)),
            parse_fail_rate=float(np.mean([v.category == "parse_error" for v in verdicts])),
            verifier_error_rate=float(np.mean([v.category in ("timeout", "error") for v in verdicts])),
            accuracy=float(np.mean([verify_arithmetic(tasks[g], x) for g, x in zip(
                s.group.tolist(), s.texts, strict=True)])),
        )  # fmt: skip
        if c.get("truncation", "scored") == "mask":
            # the masking contract (TRL's mask_truncated_completions): the step sees the rollout with
            # a truncated row's completion mask zeroed, so it is scored as written and its reward stays
            # in its group's advantages, but its log-prob is 0 under both models: no policy-gradient
            # or KL term (the loss's mean over rows still counts it)
            s = mask_truncated(s)
            trainer.last_sample = s  # trainer.score keeps the rewards of this object
        return s

    trainer.sample = sample_and_measure
    n_eval = c["eval_prompts"]
    pools = {
        "train": make_tasks(fx["family"], n_eval, "train", 10_000 + c["seed"]),
        "heldout": make_tasks(fx["family"], n_eval, "heldout", 0),
    }
    steps_log = {k: [] for k in STEP_KEYS}
    evals_log = {k: [] for k in EVAL_KEYS}

    def evaluate(step: int) -> None:
        row = {"eval_step": float(step)}
        for tag, tasks in pools.items():
            gen = torch.Generator().manual_seed(c["seed"] + (1 if tag == "train" else 2))
            n = c["eval_samples"]
            with torch.no_grad():
                s = sample_groups(trainer.policy, tok, [t.prompt for t in tasks], n,
                                  max_new_tokens=c["max_new_tokens"], temperature=1.0, generator=gen)  # fmt: skip
                g = sample_groups(trainer.policy, tok, [t.prompt for t in tasks], 1,
                                  max_new_tokens=c["max_new_tokens"], temperature=0.0)  # fmt: skip
            ok = np.array([verify_arithmetic(tasks[i // n], x) for i, x in enumerate(s.texts)])
            hits = ok.reshape(len(tasks), n).sum(axis=1)
            row[f"{tag}_acc"] = float(ok.mean())
            row[f"{tag}_pass@4"] = float(np.mean([ref.pass_at_k(n, int(h), 4) for h in hits]))
            if tag == "heldout":
                row["heldout_greedy_acc"] = float(np.mean(
                    [verify_arithmetic(t, x) for t, x in zip(tasks, g.texts, strict=True)]))  # fmt: skip
        for k in EVAL_KEYS:
            evals_log[k].append(row[k])

    trainer.policy.eval()
    evaluate(0)
    for step in range(1, c["steps"] + 1):
        out = trainer.run_step()
        s = seen["sample"]
        grouped = trainer.last_rewards.view(len(seen["tasks"]), -1)
        row = {
            "step": float(step),
            "reward": out["reward"],
            "accuracy": seen["accuracy"],
            "informative_rate": float((grouped.max(1).values > grouped.min(1).values).float().mean()),
            "parse_fail_rate": seen["parse_fail_rate"],
            "verifier_error_rate": seen["verifier_error_rate"],
            "truncation_rate": sum(x == "length" for x in s.stop_reason) / len(s.stop_reason),
            "len_mean": float(s.completion_mask.sum(1).float().mean()),
            "entropy": seen["entropy"],
            "kl_ref": seen["kl_ref"],
            "clip_low_reused": math.nan,
            "clip_high_reused": math.nan,
            "ratio_max_final": math.nan,
            "skipped": float(out["skipped"] == out["groups"]),
        }  # fmt: skip
        for k in STEP_KEYS:
            steps_log[k].append(row[k])
        if step % c["eval_every"] == 0 or step == c["steps"]:
            evaluate(step)

    def clean(xs):
        return [None if math.isnan(x) else round(float(x), 6) for x in xs]

    passport = make_passport(c | {"lab": "baselm", "name": f"clinic/{name}"}, verifier=verifier)
    passport = {k: v for k, v in passport.items() if k != "extra"} | {"fixed": BASELM_FIXED}
    torch.set_num_threads(threads)
    passport["baselm_sha256"] = json.loads((baselm_dir() / "passport.json").read_text())[
        "weights_sha256"
    ]
    return {
        "name": name,
        "split": split,
        "intended": list(intended),
        "log": {"steps": {k: clean(v) for k, v in steps_log.items()},
                "evals": {k: clean(v) for k, v in evals_log.items()}},
        "passport": passport,
    }  # fmt: skip


def _one(name: str, intervention: str | None = None) -> dict:
    import torch

    if name in BASELM_RUNS:
        return _one_baselm(name, intervention)

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


def interventions(jobs: int, only: list[str] | None = None) -> int:
    """Each run that shows a label (of ``only``, if given), rerun once per intervention that changes
    its config: ``after`` {intervention: {"labels", "config_hash"}} in its record (the logs are not
    kept); the other runs keep their committed ``after``. Run a run's reruns on the machine that made
    the run: another CPU moves the trajectory."""
    assert set(APPLY) == set(APPLY_BASELM) == set(INTERVENTIONS), "INTERVENTIONS and APPLY disagree"
    runs = [r for p in (VISIBLE, HELDOUT) for r in json.loads(p.read_text())["runs"]]
    unknown = set(only or ()) - {r["name"] for r in runs}
    if unknown:
        raise SystemExit(f"no committed run named {sorted(unknown)}")
    todo = [
        (r["name"], key)
        for r in runs
        if r["labels"] and (only is None or r["name"] in only)
        for key in APPLY
        if applies(r["name"], key)
    ]
    print(f"{len(todo)} counterfactual runs on {jobs} processes")
    after: dict[str, dict] = {}
    with ProcessPoolExecutor(jobs) as ex:
        for name, key, res in ex.map(_after, todo):
            after.setdefault(name, {})[key] = res
            print(f"  {name:>16} + {key:<16} -> {res['labels'] or 'none'}", flush=True)
    for r in runs:
        if r["labels"] and r["name"] in after:
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
        return interventions(args.jobs, args.only)
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
        names = args.only or [*RUNS, *BASELM_RUNS]
        with ProcessPoolExecutor(args.jobs) as ex:
            fresh = dict(zip(names, ex.map(_one, names), strict=True))
        kept = {}
        if args.only:
            kept = {
                r["name"]: r for p in (VISIBLE, HELDOUT) for r in json.loads(p.read_text())["runs"]
            }
        runs = [fresh[n] if n in fresh else kept[n] for n in (*RUNS, *BASELM_RUNS)]
        problems = label(runs)
        write(runs)
    for r in runs:
        print(f"  {r['name']:>16} ({r['split']}): intended {r['intended']}, labels {r['labels']}")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
