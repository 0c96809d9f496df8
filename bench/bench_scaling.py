"""Scaling: sampler and training-step time as the group size K and the completion length double.

Sampler: ``sample_group`` on one lab prompt, exactly T new tokens (EOS disallowed), K rows.
Step:    one course step (``bench.bench_step.grpo_token_step``, 1 prompt per step) with K and
         ``max_new_tokens`` = T; completions may stop early at EOS, so the mean length is shown.
Grid: K in 2, 4, 8, 16 at T=32; T in 16, 32, 64 at K=8. Settings interleaved (each round visits
every setting), median CPU time.

What the algorithm predicts. With the KV cache, sampling T tokens costs one prefill plus T-1
decode forwards; a decode forward over K rows costs a fixed per-call part (Python and kernel
launches: the model's ~30 modules) plus a part proportional to K (and, in attention, to the
context length). So time should grow about linearly in T (doubling T: x2 plus a little for the
longer context) and much less than linearly in K while the fixed part dominates. An uncached loop
would grow quadratically in T. The step adds two teacher-forced forwards and a backward over
K x (P+T) tokens: one call each, so they grow with the token count only once it outweighs the
per-call part.
Run: ``python -m bench.bench_scaling [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings

import torch

from bench.common import load_model, log, machine, table, write_section

KS, TS = (2, 4, 8, 16), (16, 32, 64)


def grid():
    return [(k, 32) for k in KS] + [(8, t) for t in TS if t != 32]


def run(quick: bool = False) -> str:
    from bench.bench_sampler import lab_prompts
    from bench.bench_step import course_trainer, train_tasks
    from helpers.sampling import sample_group

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    model, tok, source = load_model()
    prompt = lab_prompts(1)[0]
    V = model.get_output_embeddings().weight.shape[0]
    no_eos = torch.ones(V, dtype=torch.bool)
    no_eos[tok.eos_token_id] = False
    g = torch.Generator().manual_seed(0)
    tasks = [t for t in train_tasks() if t.family == "arithmetic_choice"]
    trainers = {kt: course_trainer(model, tok, tasks, k=kt[0], max_new=kt[1]) for kt in grid()}
    for tr in trainers.values():
        tr.config.prompts_per_step = 1
    reps = 3 if quick else 7
    log(f"bench_scaling: {source}; {reps} rounds over {len(grid())} settings")
    samp = {kt: [] for kt in grid()}
    step = {kt: [] for kt in grid()}
    lens = {kt: [] for kt in grid()}
    for r in range(reps + 1):  # round 0 is the warm-up
        for kt in grid():
            k, t = kt
            c0 = time.process_time()
            sample_group(
                model, tok, prompt, k, max_new_tokens=t, allowed_tokens=no_eos, generator=g
            )
            c1 = time.process_time()
            trainers[kt].run_step()
            c2 = time.process_time()
            if r:
                samp[kt].append(c1 - c0)
                step[kt].append(c2 - c1)
                lens[kt].append(float(trainers[kt].last_sample.lengths.float().mean()))
    med = {kt: (statistics.median(samp[kt]), statistics.median(step[kt])) for kt in grid()}

    def growth(pairs):
        """Per-doubling factors and the fitted exponent b in time ~ x^b."""
        xs = [x for x, _ in pairs]
        ys = [y for _, y in pairs]
        f = [ys[i + 1] / ys[i] for i in range(len(ys) - 1)]
        lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
        mx, my = statistics.mean(lx), statistics.mean(ly)
        b = sum((a - mx) * (c - my) for a, c in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
        return " -> ".join(f"x{v:.2f}" for v in f), b

    rows = [
        [k, t, f"{1e3 * med[(k, t)][0]:.1f}", f"{1e6 * med[(k, t)][0] / (k * t):.0f}",
         f"{1e3 * med[(k, t)][1]:.1f}", f"{statistics.mean(lens[(k, t)]):.1f}"]
        for k, t in grid()
    ]  # fmt: skip
    sk = growth([(k, med[(k, 32)][0]) for k in KS])
    st = growth([(t, med[(8, t)][0]) for t in TS])
    tk = growth([(k, med[(k, 32)][1]) for k in KS])
    tt = growth([(t, med[(8, t)][1]) for t in TS])
    fits = [
        ["sampler vs K (T=32)", sk[0], f"{sk[1]:.2f}", "well below 1 (per-call cost dominates)"],
        ["sampler vs T (K=8)", st[0], f"{st[1]:.2f}", "about 1 (one forward per token)"],
        ["step vs K (T=32)", tk[0], f"{tk[1]:.2f}", "below 1; rises toward 1 as K grows"],
        ["step vs T (K=8)", tt[0], f"{tt[1]:.2f}", "about 1 if completions reach T"],
    ]
    body = [
        "## Scaling",
        "",
        f"Machine: {machine()}. Model: {source}. Run by `python -m bench.bench_scaling`.",
        "",
        f"One lab prompt, median CPU time over {reps} interleaved rounds, 1 torch thread. The "
        "sampler draws exactly T tokens (EOS disallowed); the step (course trainer + "
        "`grpo_token_step`, 1 prompt) uses `max_new_tokens=T` and may stop earlier at EOS "
        "(mean completion length shown).",
        "",
        table(["K", "T", "sampler ms", "sampler us / token", "step ms", "step mean length"], rows),
        "",
        table(
            ["series", "factor per doubling", "fitted exponent b (time ~ x^b)", "predicted"], fits
        ),  # fmt: skip
    ]
    return "\n".join(body)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--no-write", action="store_true", help="print, do not update BENCHMARKS.md")
    a = p.parse_args(argv)
    body = run(a.quick)
    print(body)
    if not a.no_write:
        write_section("scaling", body)


if __name__ == "__main__":
    main()
