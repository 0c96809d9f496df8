"""Probe: GRPO+LoRA on shipped BaseLM, arithmetic_choice: which settings show held-out learning.
usage: python -m dev.baselm_lab_settings.lab NAME key=value ...   (see DEFAULTS)
Writes /tmp/baselm_lab_settings/runs/NAME.json

The step is lesson 9.5's reference ``train_step`` itself (``course.reference``: the lesson's
solution cells, run as the trusted verdict runs them), not a copy; ``adv=mean`` runs that same step
with its ``group_advantages`` replaced by ``mean_only_advantages`` (no std division).
"""

import json
import math
import re
import sys
import time
import types
import warnings

import torch

torch.set_num_threads(1)
from course.reference import reference  # noqa: E402
from helpers.baselm import load_baselm  # noqa: E402
from helpers.lora import add_lora  # noqa: E402
from helpers.reference import load_reference  # noqa: E402
from helpers.stats import paired_difference  # noqa: E402
from helpers.tasks import make_tasks  # noqa: E402
from helpers.trainer import GRPOTrainer, TrainerConfig  # noqa: E402
from helpers.verifiers import verify_arithmetic, verify_arithmetic_sloppy  # noqa: E402

OUT_DIR = "/tmp/baselm_lab_settings/runs"
DEFAULTS = dict(
    lr=1e-3,
    k=8,
    pps=4,
    steps=80,
    kl=0.05,
    clip=1.0,
    T=1.0,
    mnt=8,
    modules="q_proj,v_proj",
    r=8,
    alpha=16,
    seed=0,
    lora_seed=0,
    verifier="strict",
    n_train=256,
    n_held=200,
    n_trgreedy=150,
    time_limit=330.0,
    eval_every=0,
    adv="std",
)


train_step = reference("9.5").train_step  # adv=std: the lesson's step


def mean_only_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """adv=mean (Dr. GRPO-style): r - group mean, no std division; a degenerate group gets 0."""
    return rewards - rewards.mean(-1, keepdim=True)


def with_advantages(step, advantages):
    """The reference ``step`` with the ``group_advantages`` it calls replaced by ``advantages``."""
    scope = {**step.__globals__, "group_advantages": advantages}
    return types.FunctionType(step.__code__, scope, step.__name__, step.__defaults__)


STEPS = {"std": train_step, "mean": with_advantages(train_step, mean_only_advantages)}


def unique(ts):
    seen, out = set(), []
    for t in ts:
        if t.prompt not in seen:
            seen.add(t.prompt)
            out.append(t)
    return out


def category(t, c):
    o1, o2 = t.meta["options"]
    s = c.strip()
    if s == str(o1):
        return "first"
    if s == str(o2):
        return "second"
    if re.fullmatch(rf"{o1}\s*or\s*{o2}\.?", s) or re.fullmatch(rf"{o2}\s*or\s*{o1}\.?", s):
        return "echo"
    nums = re.findall(r"\d+", s)
    if len(nums) == 1:
        return "othernum"
    if len(nums) > 1:
        return "multi"
    return "nonum"


def greedy(trainer, tasks, mnt):
    _, rows = trainer.evaluate(tasks, max_new_tokens=mnt, return_samples=True)
    comps = [c for _, c, _ in rows]
    strict = [verify_arithmetic(t, c) for t, c in zip(tasks, comps)]
    sloppy = [verify_arithmetic_sloppy(t, c) for t, c in zip(tasks, comps)]
    cats = {}
    for t, c in zip(tasks, comps):
        k = category(t, c)
        cats[k] = cats.get(k, 0) + 1
    # correctness split by position of the correct option
    cf = [s for t, s in zip(tasks, strict) if t.meta["options"][0] == int(t.answer)]
    cs = [s for t, s in zip(tasks, strict) if t.meta["options"][1] == int(t.answer)]
    hack = sum(1 for a, b in zip(strict, sloppy) if b == 1 and a == 0)
    return dict(
        comps=comps,
        strict=strict,
        sloppy=sloppy,
        cats=cats,
        pass_strict=sum(strict) / len(strict),
        pass_sloppy=sum(sloppy) / len(sloppy),
        pass_correct_first=sum(cf) / max(1, len(cf)),
        pass_correct_second=sum(cs) / max(1, len(cs)),
        sloppy_only=hack / len(strict),
    )


def main():
    name = sys.argv[1]
    cfg = dict(DEFAULTS)
    for kv in sys.argv[2:]:
        k, v = kv.split("=", 1)
        cfg[k] = type(DEFAULTS[k])(v) if not isinstance(DEFAULTS[k], float) else float(v)
    t_start = time.time()
    base, tok = load_baselm()
    policy = add_lora(
        base,
        r=cfg["r"],
        alpha=cfg["alpha"],
        target_modules=tuple(cfg["modules"].split(",")),
        seed=cfg["lora_seed"],
    )
    ref = load_reference(load_baselm)
    train = make_tasks("arithmetic_choice", cfg["n_train"], "train", cfg["seed"])
    held = unique(make_tasks("arithmetic_choice", cfg["n_held"] + 40, "heldout", 0))[
        : cfg["n_held"]
    ]
    trg = unique(train)[: cfg["n_trgreedy"]]
    tc = TrainerConfig(
        k=cfg["k"],
        max_new_tokens=cfg["mnt"],
        temperature=cfg["T"],
        lr=cfg["lr"],
        kl_coef=cfg["kl"],
        prompts_per_step=cfg["pps"],
        seed=cfg["seed"],
        grad_clip=(None if cfg["clip"] <= 0 else cfg["clip"]),
    )
    verifier = verify_arithmetic if cfg["verifier"] == "strict" else verify_arithmetic_sloppy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(
            policy, ref, tok, train, verifier, train_step=STEPS[cfg["adv"]], config=tc
        )
    ntrain = sum(p.numel() for p in policy.parameters() if p.requires_grad)
    EVAL_MNT = 8
    hb = greedy(trainer, held, EVAL_MNT)
    tb = greedy(trainer, trg, EVAL_MNT)
    t0 = time.time()
    hist = []
    curve = []
    for i in range(cfg["steps"]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = trainer.run_step()
        hist.append({k: row[k] for k in ("reward", "kl", "entropy", "skipped", "grad_norm")})
        if cfg["eval_every"] and (i + 1) % cfg["eval_every"] == 0:
            g = greedy(trainer, held[:100], EVAL_MNT)
            curve.append((i + 1, g["pass_strict"], g["cats"]))
            print(f"  step {i + 1}: held100 {g['pass_strict']:.2f} cats {g['cats']}", flush=True)
        if time.time() - t0 > cfg["time_limit"]:
            print(f"time limit at step {i + 1}", flush=True)
            break
    train_s = time.time() - t0
    ha = greedy(trainer, held, EVAL_MNT)
    ta = greedy(trainer, trg, EVAL_MNT)
    d = paired_difference(hb["strict"], ha["strict"])
    dt = paired_difference(tb["strict"], ta["strict"])
    ds = paired_difference(hb["sloppy"], ha["sloppy"])

    def m(key, a, b):
        return sum(h[key] for h in hist[a:b] if not math.isnan(h[key])) / max(
            1, sum(1 for h in hist[a:b] if not math.isnan(h[key]))
        )

    res = dict(
        name=name,
        cfg=cfg,
        trainable=ntrain,
        steps_run=len(hist),
        train_s=round(train_s, 1),
        total_s=round(time.time() - t_start, 1),
        held=dict(
            before=hb["pass_strict"],
            after=ha["pass_strict"],
            diff=d.diff,
            low=d.low,
            high=d.high,
            n=d.n,
            gained=d.gained,
            lost=d.lost,
        ),
        held_sloppy=dict(
            before=hb["pass_sloppy"],
            after=ha["pass_sloppy"],
            diff=ds.diff,
            low=ds.low,
            high=ds.high,
        ),
        train=dict(
            before=tb["pass_strict"],
            after=ta["pass_strict"],
            diff=dt.diff,
            low=dt.low,
            high=dt.high,
            n=dt.n,
        ),
        cats_before=hb["cats"],
        cats_after=ha["cats"],
        train_cats_after=ta["cats"],
        pos_before=(hb["pass_correct_first"], hb["pass_correct_second"]),
        pos_after=(ha["pass_correct_first"], ha["pass_correct_second"]),
        sloppy_only_before=hb["sloppy_only"],
        sloppy_only_after=ha["sloppy_only"],
        reward_first10=m("reward", 0, 10),
        reward_last10=m("reward", -10, None),
        kl_last10=m("kl", -10, None),
        ent_first10=m("entropy", 0, 10),
        ent_last10=m("entropy", -10, None),
        skipped_frac=sum(h["skipped"] for h in hist) / (len(hist) * cfg["pps"]),
        examples_after=[(t.prompt, c) for t, c in zip(held[:10], ha["comps"][:10])],
        hack_examples=[
            (t.prompt, c)
            for t, c, a, b in zip(held, ha["comps"], ha["strict"], ha["sloppy"])
            if b == 1 and a == 0
        ][:8],
        curve=curve,
        hist=hist,
        held_after_strict=ha["strict"],
        held_before_strict=hb["strict"],
    )
    import os

    os.makedirs(OUT_DIR, exist_ok=True)
    json.dump(res, open(f"{OUT_DIR}/{name}.json", "w"), indent=1)
    print(
        f"{name}: steps {len(hist)} train {train_s:.0f}s | held {hb['pass_strict']:.3f}->{ha['pass_strict']:.3f} "
        f"d {d.diff:+.3f} [{d.low:+.3f},{d.high:+.3f}] | train {tb['pass_strict']:.3f}->{ta['pass_strict']:.3f} "
        f"| sloppy {hb['pass_sloppy']:.3f}->{ha['pass_sloppy']:.3f} sloppy-only {hb['sloppy_only']:.3f}->{ha['sloppy_only']:.3f}"
    )
    print(
        f"  cats before {hb['cats']} after {ha['cats']}; pos(first,second) {res['pos_before']} -> {res['pos_after']}"
    )
    print(
        f"  reward {res['reward_first10']:.2f}->{res['reward_last10']:.2f} kl_last {res['kl_last10']:.3f} ent {res['ent_first10']:.2f}->{res['ent_last10']:.2f} skipped {res['skipped_frac']:.2f}"
    )
    print("  ex:", res["examples_after"][:4])
    if res["hack_examples"]:
        print("  hack:", res["hack_examples"][:4])


if __name__ == "__main__":
    main()
