"""Training step: one simplified-GRPO step of the course trainer vs one TRL ``GRPOTrainer`` step.

Both sides train the same model (BaseLM, or a random model of its configuration) with the same
LoRA (r=8, alpha=16, q/v), on the same prompts, K, completion budget, temperature, loss type
("grpo": per-token clipped surrogate, mean over each completion, then over completions; k3 KL to
the reference per token), AdamW with the same learning rate and gradient clipping, fp32, no
gradient checkpointing, no dropout. The course step is ``grpo_token_step`` below: lesson 9.5's
reference functions (``group_advantages``, ``clipped_grpo_loss``, ``kl_to_reference``, taken from
the lesson by ``course.reference``, never copied here) around the course sampler and a
completion-only forward, so the timing is of the lesson's reference step. Differences that are the
point of the comparison:

- The course step takes the old-policy log-probs from the sampler's stored behaviour log-probs
  (valid here: temperature 1, no top-k/top-p, dropout off, one update per batch), and its
  forward passes compute the LM head only over the completion columns. TRL (num_iterations=1)
  also skips the old-policy forward.
- TRL computes its reference log-probs by disabling the adapters of the same model; the course
  uses a separate frozen copy. Same work per step.

One difference that is not: the lesson's advantages divide by the population std plus 1e-6 (a
degenerate group gets zeros); TRL's ``scale_rewards="group"`` divides by the sample std plus 1e-4.
That scales a group's advantages by about sqrt((K - 1) / K) (0.94 at K = 8): the same work. The
"Training step" timings in BENCHMARKS.md are of this step (re-measured after an earlier inline copy
that used TRL's scale was replaced by the lesson's functions).

Timing: both trainers live in one process. A TRL callback runs one course step after every TRL
step (outside TRL's step window), so the two alternate A, B, A, B. Medians of wall and CPU time.
Run: ``python -m bench.bench_step [--quick]``.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import math
import pstats
import time
import warnings

import torch

from bench.common import log, machine, spread, table, write_section
from course.reference import reference

K, PROMPTS_PER_STEP, MAX_NEW, LR, BETA = 8, 2, 16, 1e-3, 0.05


# --- the course step (instructor side) -----------------------------------------------------------


def token_logprobs(model, sample) -> torch.Tensor:
    """(N, T) log pi(token) of each completion token, teacher-forced; LM head on T columns only."""
    T = sample.completion_ids.shape[1]
    logits = model(
        input_ids=sample.input_ids,
        attention_mask=sample.attention_mask,
        position_ids=sample.position_ids,
        logits_to_keep=T + 1,
    ).logits[:, :-1]  # (N, T, V): column j predicts completion token j
    return logits.float().log_softmax(-1).gather(-1, sample.completion_ids[..., None])[..., 0]


def grpo_token_step(trainer, tasks) -> dict:
    """Loss type "grpo" with a k3 per-token KL, all groups kept (as TRL does), one update: lesson
    9.5's ``group_advantages``, ``clipped_grpo_loss`` and ``kl_to_reference``."""
    ref95 = reference("9.5")
    s = trainer.sample(tasks)
    r = trainer.score(tasks, s)
    adv = ref95.group_advantages(r.view(-1, s.k)).reshape(-1)  # (N,)
    m = s.completion_mask.float()  # (N, T)
    logp = token_logprobs(trainer.policy, s)  # (N, T)
    with torch.no_grad():
        ref = token_logprobs(trainer.reference, s)  # (N, T)
    # old log-probs = the sampler's stored behaviour log-probs
    loss, _ = ref95.clipped_grpo_loss(
        logp, s.logprobs, ref, adv, m, clip_eps=0.2, kl_coef=trainer.config.kl_coef
    )
    trainer.update(loss)
    informative = r.view(-1, s.k).std(1) > 0
    return {
        "reward": r.mean(),
        "kl": ref95.kl_to_reference(logp.detach(), ref, m),
        "entropy": -(s.logprobs * m).sum() / m.sum(),
        "skipped": int((~informative).sum()),
        "groups": len(tasks),
    }


# --- building both sides ---------------------------------------------------------------------


def reward_of(task, text) -> float:
    from helpers.verifiers import verify_arithmetic, verify_format

    return float((verify_format if task.family == "format" else verify_arithmetic)(task, text))


def train_tasks():
    from helpers.tasks import make_tasks

    return make_tasks("arithmetic_choice", 32, "train", seed=1) + make_tasks(
        "format", 32, "train", seed=1
    )


def course_trainer(base, tok, tasks, k=K, max_new=MAX_NEW, seed=0):
    from helpers.lora import add_lora
    from helpers.trainer import GRPOTrainer, TrainerConfig

    reference = copy.deepcopy(base).eval().requires_grad_(False)
    policy = add_lora(copy.deepcopy(base), r=8, alpha=16, seed=seed)
    cfg = TrainerConfig(
        k=k, max_new_tokens=max_new, lr=LR, kl_coef=BETA, prompts_per_step=PROMPTS_PER_STEP,
        seed=seed, grad_clip=1.0,
    )  # fmt: skip
    return GRPOTrainer(
        policy, reference, tok, tasks, reward_of, train_step=grpo_token_step, config=cfg
    )


def trl_trainer(base, tok, tasks, steps, callbacks=(), **overrides):
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    by_prompt = {t.prompt: t for t in tasks}

    def reward(prompts, completions, **_):
        return [reward_of(by_prompt[p], c) for p, c in zip(prompts, completions, strict=True)]

    ds = Dataset.from_list([{"prompt": t.prompt} for t in tasks])
    settings = dict(
        output_dir="/tmp/bench_trl", use_cpu=True, report_to="none", save_strategy="no",
        max_steps=steps, per_device_train_batch_size=K * PROMPTS_PER_STEP, num_generations=K,
        max_completion_length=MAX_NEW, temperature=1.0, top_k=0, top_p=1.0,
        loss_type="grpo", beta=BETA, scale_rewards="group", num_iterations=1, epsilon=0.2,
        learning_rate=LR, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        max_grad_norm=1.0, bf16=False, gradient_checkpointing=False, disable_dropout=True,
        logging_steps=1, seed=0, dataloader_num_workers=0, disable_tqdm=True,
    )  # fmt: skip
    args = GRPOConfig(**{**settings, **overrides})
    peft_cfg = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "v_proj"])
    return GRPOTrainer(
        model=copy.deepcopy(base), reward_funcs=reward, args=args, train_dataset=ds,
        processing_class=tok, peft_config=peft_cfg, callbacks=list(callbacks),
    )  # fmt: skip


# --- measurement ------------------------------------------------------------------------------


def measure(base, tok, steps: int, warmup: int = 1, **trl_overrides) -> dict:
    """Alternate TRL steps (timed by a callback) and course steps; returns timings."""
    from transformers import TrainerCallback

    tasks = train_tasks()
    ours = course_trainer(base, tok, tasks)
    rec = {"trl": {"wall": [], "cpu": []}, "course": {"wall": [], "cpu": []}, "course_gen": []}

    class Alternate(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t0, self.c0 = time.perf_counter(), time.process_time()

        def on_step_end(self, args, state, control, **kw):
            wall, cpu = time.perf_counter() - self.t0, time.process_time() - self.c0
            if state.global_step > warmup:
                rec["trl"]["wall"].append(wall)
                rec["trl"]["cpu"].append(cpu)
            c0, t0 = time.process_time(), time.perf_counter()
            row = ours.run_step()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if state.global_step > warmup:
                rec["course"]["wall"].append(wall)
                rec["course"]["cpu"].append(cpu)
                rec["course_gen"].append(row["gen_s"])

    trl = trl_trainer(base, tok, tasks, steps + warmup, callbacks=[Alternate()], **trl_overrides)
    trl.train()
    return rec


def profile(base, tok, steps: int = 3) -> dict[str, list[tuple[str, float]]]:
    """cProfile of a few steps of each: cumulative seconds per step in the parts that matter."""
    tasks = train_tasks()
    ours = course_trainer(base, tok, tasks)
    ours.run_step()  # warm-up
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(steps):
        ours.run_step()
    pr.disable()
    course = _parts(
        pr,
        steps,
        [
            ("step total", "trainer.py", "run_step"),
            ("sampling (sample_groups)", "sampling.py", "sample_groups"),
            ("  of which the decoding loop (_decode)", "sampling.py", "_decode"),
            ("verifier", "trainer.py", "score"),
            ("policy + reference log-probs (forwards)", "bench_step.py", "token_logprobs"),
            ("backward + clip + AdamW (update)", "trainer.py", "update"),
            ("  of which backward", "_tensor.py", "backward"),
            ("  of which AdamW", "adamw.py", "adamw"),
        ],
    )
    trl = trl_trainer(base, tok, tasks, steps + 1)
    pr = cProfile.Profile()
    trl.train  # noqa: B018
    pr.enable()
    trl.train()
    pr.disable()
    trl_parts = _parts(
        pr,
        steps + 1,
        [
            ("step total (training_step)", "trainer.py", "training_step"),
            ("generate + score (_generate_and_score_completions)", "grpo_trainer.py",
             "_generate_and_score_completions"),
            ("  of which model.generate", "utils.py", "generate"),
            ("  of which reference log-probs", "grpo_trainer.py", "_get_per_token_logps_and_entropies"),
            ("loss forward (_compute_loss)", "grpo_trainer.py", "_compute_loss"),
            ("backward (accelerator.backward)", "accelerator.py", "backward"),
            ("optimizer step", "optimizer.py", "step"),
            ("trainer loop total (train)", "trainer.py", "train"),
        ],
    )  # fmt: skip
    return {"course": course, "trl": trl_parts}


def _parts(pr: cProfile.Profile, steps: int, wanted) -> list[tuple[str, float]]:
    st = pstats.Stats(pr)
    out = []
    for label, file, func, *_ in wanted:
        best = 0.0
        for (fname, _line, fn), (_cc, _nc, _tt, ct, _callers) in st.stats.items():
            if fn == func and fname.endswith(file):
                best = max(best, ct)
        out.append((label, best / steps))
    return out


def run(quick: bool = False) -> str:
    from bench.common import load_model

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    base, tok, source = load_model()
    steps = 4 if quick else 10
    log(f"bench_step: {source}; {steps} alternating steps each")
    rec = measure(base, tok, steps)
    med = {n: {k: _med(v) for k, v in rec[n].items()} for n in ("trl", "course")}
    log(f"  course {spread(rec['course']['cpu'])} ms cpu, trl {spread(rec['trl']['cpu'])} ms cpu")
    log("  TRL with its own defaults for precision and memory (bf16, gradient checkpointing)")
    rec_def = measure(base, tok, max(2, steps // 2), bf16=True, gradient_checkpointing=True)
    prof = profile(base, tok, steps=2 if quick else 3)
    rows = [
        ["course `GRPOTrainer.run_step` + `grpo_token_step`", spread(rec["course"]["wall"]),
         spread(rec["course"]["cpu"]), "1.00"],
        ["TRL `GRPOTrainer` step", spread(rec["trl"]["wall"]), spread(rec["trl"]["cpu"]),
         f"{med['trl']['cpu'] / med['course']['cpu']:.2f}"],
        ["(separate run) course step", spread(rec_def["course"]["wall"]),
         spread(rec_def["course"]["cpu"]), "1.00"],
        ["(separate run) TRL step with its defaults `bf16=True, gradient_checkpointing=True`",
         spread(rec_def["trl"]["wall"]), spread(rec_def["trl"]["cpu"]),
         f"{_med(rec_def['trl']['cpu']) / _med(rec_def['course']['cpu']):.2f}"],
    ]  # fmt: skip
    ratio_wall = med["trl"]["wall"] / med["course"]["wall"]
    ratio_cpu = med["trl"]["cpu"] / med["course"]["cpu"]
    gen_share = _med(rec["course_gen"]) / med["course"]["wall"]
    ratio_defaults = _med(rec_def["trl"]["cpu"]) / _med(rec_def["course"]["cpu"])
    body = [
        "## Training step",
        "",
        f"Machine: {machine()}. Model: {source}. Run by `python -m bench.bench_step`.",
        "",
        f"One step = {PROMPTS_PER_STEP} prompts x K={K} completions, at most {MAX_NEW} new tokens, "
        "temperature 1, LoRA r=8 on q/v, loss type `grpo` (token-level clipped surrogate, "
        f"mean per completion then over completions), k3 KL with beta={BETA}, AdamW lr={LR}, "
        "grad clip 1.0, fp32, no gradient checkpointing, 1 torch thread. "
        f"{len(rec['course']['cpu'])} steps of each, alternating (TRL step, course step, ...) in "
        "one process after a warm-up step; median [quartiles] in ms.",
        "",
        table(["step", "wall ms", "CPU ms", "TRL / course (CPU)"], rows),
        "",
        f"**Course step is {ratio_cpu:.2f}x faster than TRL's by CPU time "
        f"({ratio_wall:.2f}x by wall clock); goal >= 2x: "
        f"{'met' if min(ratio_cpu, ratio_wall) >= 2 else 'see the note below'}.** Sampling is "
        f"{100 * gen_share:.0f}% of the course step's wall time.",
        "",
        "**Why not 2x.** With matched settings both steps do the same work: sample "
        f"{PROMPTS_PER_STEP}x{K} completions with the LoRA policy, a teacher-forced policy forward "
        "with gradients and a reference forward over the same tokens, one backward, one AdamW "
        "step on the adapters. On this 1.6M-parameter model every one of those is a few "
        "milliseconds of per-call work inside the model (see the profiles below), not TRL "
        "bookkeeping: TRL's extra cost is `generate`'s overhead over the course sampler "
        "(about 1.1-1.2x, see Sampler), the entropy it computes for logging, and its data "
        f"pipeline, about {100 * (ratio_cpu - 1):.0f}% in all here. The course step saves no forward TRL does not also save "
        "(with `num_iterations=1` TRL also skips the old-policy forward; the course step reuses "
        "the sampler's stored behaviour log-probs for the ratio, and TRL recomputes nothing "
        "either). So 2x is not reachable on this hardware without cutting work the algorithm "
        "needs. Against TRL as configured out of the box (bf16 autocast on a CPU without bf16 "
        "matrix units, gradient checkpointing: a second policy forward during backward) the "
        f"course step is {ratio_defaults:.1f}x faster on this CPU, which is what a student would "
        "see (how much depends on the CPU: bf16 autocast costs most where there are no bf16 "
        "matrix units).",
        "",
        "Where the time goes (cProfile, cumulative seconds per step; the profiler's own overhead "
        "inflates Python-heavy parts, so read shares, not absolute values):",
        "",
        table(["course step part", "s / step"], [[a, f"{b:.3f}"] for a, b in prof["course"]]),
        "",
        table(["TRL step part", "s / step"], [[a, f"{b:.3f}"] for a, b in prof["trl"]]),
    ]
    return "\n".join(body)


def _med(xs):
    import statistics

    return statistics.median(xs) if xs else math.nan


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--no-write", action="store_true", help="print, do not update BENCHMARKS.md")
    a = p.parse_args(argv)
    body = run(a.quick)
    print(body)
    if not a.no_write:
        write_section("training-step", body)


if __name__ == "__main__":
    main()
