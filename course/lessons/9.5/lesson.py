# %% [markdown]
# # 9.5 From formulas to a reproducible run
#
# Lessons 9.1-9.4 took the loop apart: the verifier contract, the group advantage, the clipped
# objective, the normalisation choices and the dashboard. This lesson puts it back together as a
# **run**: a loop that you start, that writes down what it is before its first update, and that
# someone else can rerun and compare. You implement the step in torch, train two small policies on
# your CPU, and audit what they learned.
#
# **After this lesson you can**
# 1. write the data-and-verifier passport and the rollout-and-update passport of a run, and let the
#    run write them itself, next to its results;
# 2. say what resource levels A, B and C are for, and why no "recipe" of $G,\epsilon,\beta$,
#    temperature and learning rate transfers between set-ups;
# 3. implement group advantages, completion-masked log-probabilities, a KL estimator, the simplified
#    and the clipped GRPO loss, and one training step, in torch;
# 4. run the CPU lab (a GRU policy) and show, from its dashboard, a run whose training accuracy rises
#    while entropy, pass@4 and held-out transfer fall;
# 5. run the BaseLM lab (LoRA policy, frozen reference): a format smoke test, the arithmetic-choice
#    run, and a sloppy-verifier audit in which the reward is the only thing that changes;
# 6. prepare (not run) the level-B branch with a 0.6B model and TRL.
#
# **Two labs, two objectives.** The GRU lab uses the canonical clipped objective of lesson 9.2
# (DeepSeekMath's: old-policy ratios, several epochs per batch). The BaseLM lab uses the course's
# *simplified* loop: one update per fresh batch, so every ratio is 1 and the update is the group-relative REINFORCE core
# $-\widehat A_i\log\pi_\theta(o_i)$ plus a KL leash. Both are "GRPO" in the literature; each run's
# passport says which one it is.
#
# **Time** (measured when the instructor recorded the lab [9.5-11], on the course's 2-core CPU;
# other work on the machine would only have made it slower): the required part takes about 145 s of
# computation (GRU lab about 20 s, each 250-step BaseLM run about 40 s), the optional BaseLM
# experiments 39 s and 12 s; a laptop that is busy with other work can take several times as long.
# With `COURSE_SMOKE=1` every run is shortened; under the autograder the labs are skipped and only
# the graded tests run.

# %%
import gc
import itertools
import json
import math
import os
import tempfile
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import torch
from tqdm.auto import tqdm

from helpers import gru_lab, selfcheck
from helpers.figures import quote
from helpers.baselm import baselm_dir, check_artifact, load_baselm
from helpers.diagnostics import Dashboard
from helpers.diagnostics import warnings as dashboard_warnings
from helpers.lab_audit import EXPLOIT_KINDS, both_orders_heldout, count_kinds, one_answer_judge
from helpers.lora import adapter_state, add_lora, base_state_hash, describe_trainable
from helpers.passport import config_hash, diff_passports, make_passport, save_passport, tensor_hash
from helpers.plots import plot_dashboard, plot_history
from helpers.policies import build_gru_policy
from helpers.reference import fingerprint, load_reference
from helpers.runtime import GRADING, SMOKE
from helpers.sampling import sample_groups
from helpers.standins import AbsPosLM, UniformLM, param_state, tiny_lm, tiny_trainer
from helpers.stats import paired_difference, wilson_interval
from helpers.tasks import Task, format_pool_tasks, is_heldout, make_tasks
from helpers.trainer import GRPOTrainer, TrainerConfig
from helpers.verifiers import (
    Verdict,
    Verifier,
    last_number,
    verify_arithmetic,
    verify_arithmetic_sloppy,
    verify_format,
)

np.set_printoptions(precision=4, suppress=True)
torch.set_num_threads(min(2, os.cpu_count() or 1))  # the course's laptop: 2 cores

# Where this lesson's runs write their passports and histories: ./runs next to your notebook.
# (A copy run inside the course's source_notebooks or release folder writes to a temporary folder,
# so that executing them never adds files to the course tree.)
RUN_DIR = Path.cwd() / "runs"
if Path.cwd().parent.name in ("source_notebooks", "release"):
    RUN_DIR = Path(tempfile.gettempdir()) / "rlvr-9.5-runs"
RUN_DIR.mkdir(parents=True, exist_ok=True)

BASELM_OK, BASELM_WHY = check_artifact()
RUN_LABS = not GRADING  # the autograder only runs the graded cells' tests (30 s per lesson)
print(f"SMOKE={SMOKE}  GRADING={GRADING}  runs are saved in {RUN_DIR}")
print(f"BaseLM artifact at {baselm_dir()}: {BASELM_WHY}")
if not BASELM_OK:
    print(
        "  -> the BaseLM lab below needs it. Fix: run ./baselm.sh from the repository root "
        "(./notebook.sh 9.5 does it on first use), then restart this notebook.\n"
        "     Or set BUILD_BASELM_HERE = True in the next cell to install it from here (seconds)."
    )


# %%
BUILD_BASELM_HERE = False  # set True to install the missing BaseLM artifact from this notebook
if BUILD_BASELM_HERE and not BASELM_OK and not GRADING:
    from helpers import baselm

    baselm.build()  # installs the shipped build into artifacts/baselm/ after checking its hash
    BASELM_OK, BASELM_WHY = check_artifact()
    print("BaseLM:", BASELM_WHY)

# %% [markdown]
# ## 9.5.1 Data and verifier passport
#
# A run is reproducible only if the *question* it answers is fixed before the first update. The
# data-and-verifier passport is that question written down. Before any weight moves, record
# [9.5-1]:
#
# | field | what it pins down |
# |---|---|
# | prompt provenance, split rule | where the prompts come from; how train and evaluation are kept apart |
# | reference-answer provenance, licence | who computed each answer, and whether you may use it |
# | verifier version (its own passport) | the exact reward rule: extraction, canonicalisation, tolerances |
# | false-positive / false-negative rates | measured on a manually reviewed sample, not assumed to be zero |
# | initial pass-rate distribution | per prompt, before training: how much signal the groups will carry |
# | answer format and chat template | what the policy sees and is asked to emit |
# | stopping rules, length and execution limits | EOS, `max_new_tokens`, time/memory limits of the checker |
# | ambiguous or damaged examples | the rule applied to them, and how many there were |
#
# Code tasks add the container image, compiler, dependencies, network policy, time and memory
# limits, and whether the tests are deterministic; formal mathematics adds the proof kernel version
# and the allowed axioms; numerical tasks add canonicalisation and tolerances. If the run filters
# prompts (dynamic sampling, a difficulty curriculum), the passport keeps the **original stream**:
# accepted *and* rejected prompts, each with its rejection reason. Otherwise a reader cannot tell
# which distribution the result is about.
#
# **A manual review in miniature.** False-positive and false-negative rates are measured, not
# assumed. Below: ten hand-labelled completions of one arithmetic-choice prompt. The label is the
# *intended* property ("the completion commits to the correct option"); one completion is ambiguous
# and is set aside by a stated rule. Both of the BaseLM lab's verifiers (strict and sloppy) score them.

# %%
REVIEW_TASK = Task(
    prompt="Q: 23+58=? Options: 79 or 81. A:",
    answer="81",
    family="arithmetic_choice",
    meta={"a": 23, "b": 58, "options": (79, 81), "split": "review"},
)
# (completion, intended label): 1 = commits to the correct option, 0 = does not, None = ambiguous
REVIEW = [
    (" 81", 1),
    (" 79", 0),
    (" 81.", 1),
    (" The answer is 81", 1),
    (" 81 (not 79)", 1),  # commits to 81, then mentions the other option
    (" 79 or 81", 0),  # echoes both options: no decision
    (" 810", 0),
    (" 18", 0),
    ("", 0),
    (" eighty-one", None),  # right in words, but the task asks for a number: ambiguous -> set aside
]


def review_rates(verifier, task=REVIEW_TASK, review=REVIEW) -> dict:
    """False-positive and false-negative rates of ``verifier`` on the labelled review sample.

    FP rate = P(reward 1 | label 0), FN rate = P(reward 0 | label 1); ambiguous items excluded.
    """
    rows = [(c, y, verifier(task, c)) for c, y in review if y is not None]
    neg = [r for _, y, r in rows if y == 0]
    pos = [r for _, y, r in rows if y == 1]
    return {
        "n_reviewed": len(review),
        "n_ambiguous": sum(y is None for _, y in review),
        "false_positive_rate": sum(r == 1.0 for r in neg) / len(neg),
        "false_negative_rate": sum(r == 0.0 for r in pos) / len(pos),
    }


print(f"{'completion':<22}{'label':>6}{'strict':>8}{'sloppy':>8}")
for c, y in REVIEW:
    s, l = verify_arithmetic(REVIEW_TASK, c), verify_arithmetic_sloppy(REVIEW_TASK, c)
    flag = "" if y is None or (s == y and l == y) else "  <- disagrees with the label"
    print(f"{c!r:<22}{str(y):>6}{s:>8.0f}{l:>8.0f}{flag}")
for v, key in ((verify_arithmetic, "strict"), (verify_arithmetic_sloppy, "sloppy")):
    rates = review_rates(v)
    print(f"{v.name}: FP rate {quote(f'9.5:review_fp_{key}', rates['false_positive_rate'])}, "
          f"FN rate {quote(f'9.5:review_fn_{key}', rates['false_negative_rate'])}", rates)

# %% [markdown]
# The strict final-answer verifier reads the **last** integer: it accepts `" 79 or 81"` (a false
# positive: no decision was made) and rejects `" 81 (not 79)"` (a false negative). The sloppy
# substring verifier accepts anything containing `81`, including `" 810"`. Neither rate is zero, and
# the two verifiers fail on different completions. These rates belong in the passport, with the size
# of the sample they were measured on (here 9 items: a demonstration, not an estimate you could
# rely on) [9.5-2].
#
# The function below assembles the data-and-verifier passport; every BaseLM run in this lesson
# calls it and saves the result next to its history.


# %%
def data_passport(
    family: str, train: list[Task], heldout: list[Task], verifier, seed: int, initial=None
) -> dict:
    """The data-and-verifier passport of a run (section 9.5.1), as a JSON-able dict."""
    train_prompts, held_prompts = {t.prompt for t in train}, {t.prompt for t in heldout}
    return {
        "prompts": {
            "generator": f"helpers.tasks.make_tasks({family!r}, n, split, seed={seed})",
            "split_rule": (
                "format item i is held out iff i % 7 == 3"
                if family == "format"
                else "operand pair (a, b) is held out iff (3a + 5b) % 7 == 0"
            )
            + " (seed-independent)",
            "n_train": len(train),
            "n_heldout": len(heldout),
            "train_hash": config_hash([[t.prompt, t.answer] for t in train]),
            "heldout_hash": config_hash([[t.prompt, t.answer] for t in heldout]),
            "train_heldout_overlap": len(train_prompts & held_prompts),
        },
        "reference_answers": {
            "provenance": "computed by the task generator (a + b, or the JSON item); no external data",
            "licence": "generated by the course code; no third-party data",
        },
        "verifier": verifier.passport,
        "review": review_rates(verifier) if family == "arithmetic_choice" else None,
        "initial_pass_rate": initial,
        "answer_format": "plain continuation of the prompt (BaseLM is a base model: no chat template)",
        "stopping": "<eos>, or max_new_tokens (stop_reason 'length'); truncated completions are scored as written",
        "ambiguous_examples": "review items that are right in substance but off-format are set aside and counted",
        "prompt_filtering": "none: every drawn prompt is used; all-equal groups are logged as skips",
    }


_demo = data_passport(
    "arithmetic_choice",
    make_tasks("arithmetic_choice", 64, "train", 0),
    make_tasks("arithmetic_choice", 32, "heldout", 0),
    verify_arithmetic,
    seed=0,
)
assert _demo["prompts"]["train_heldout_overlap"] == 0, "train and held-out prompts must not overlap"
print(json.dumps(_demo, indent=1)[:1500], "...")

# %% [markdown]
# ## 9.5.2 Rollout and update passport
#
# The second passport answers: *could someone recompute this step's loss without regenerating the
# outputs?* A rollout batch must hold, per completion:
#
# - prompt identifier and prompt tokens; completion tokens and the **action mask** (which tokens the
#   policy emitted, EOS included, padding excluded);
# - log-probabilities under the **actual old (behaviour) policy**, after temperature, top-k/top-p and
#   any allowed-token mask; the generator's checkpoint/version, decoding parameters and random seed;
# - reward components (not only their sum), parse result and stop reason; length before and after
#   truncation; reference log-probs when the loss needs them; group id and the number of completions
#   per prompt.
#
# The **update passport** adds how the loss was built from that batch: reward centring and scaling
# (std with $n$ or $n-1$, where $\varepsilon$ enters), `loss_type` and its exact denominator, the
# importance-ratio level (token or sequence), clip ranges, iterations per batch, KL and entropy
# coefficients (and the KL estimator), global batch size and gradient accumulation.
#
# **Generator and trainer can disagree.** Even with one checkpoint, the distribution that sampled a
# token and the one the trainer rescores can differ (library versions, precision, logit processors,
# templates). Measure the mismatch; do not assume it is zero. The demo uses the lab's GRU policy and
# grammar: a rollout record, then a teacher-forced rescoring that reproduces the stored log-probs,
# and two rescorings that do not (the temperature pitfall of the BaseLM lab among them).

# %%
lab_tok = gru_lab.make_tokenizer()
grammar = gru_lab.Grammar(lab_tok)
gru, _ = build_gru_policy(lab_tok, d_embed=16, d_hidden=32, seed=0)  # untrained: a diverse sampler
demo_tasks = [gru_lab.make_task(23, 18), gru_lab.make_task(31, 45)]


def rollout_record(tasks, sample, scores, seed) -> dict:
    """Everything needed to recompute a loss on this batch without regenerating (JSON-able)."""
    return {
        "prompt_ids": [t.prompt for t in tasks],
        "prompt_tokens": sample.prompt_ids.tolist(),
        "completion_tokens": sample.completion_ids.tolist(),
        "action_mask": sample.completion_mask.tolist(),
        "old_logprobs": sample.logprobs.tolist(),
        "generator": {"policy": "GRUPolicy (untrained demo)", "weights": tensor_hash(
            torch.cat([p.detach().flatten() for p in gru.parameters()]))},
        "decoding": {**sample.decoding, "seed": seed},
        "reward_components": {k: v.tolist() for k, v in scores.items()},
        "stop_reason": sample.stop_reason,
        "lengths": sample.lengths.tolist(),
        "group": sample.group.tolist(),
        "completions_per_prompt": sample.k,
    }


s07 = sample_groups(gru, lab_tok, [t.prompt for t in demo_tasks], 4, max_new_tokens=9,
                    temperature=0.7, allowed_tokens=grammar,
                    generator=torch.Generator().manual_seed(7))
record = rollout_record(demo_tasks, s07, gru_lab.score(gru_lab.LAB_VERIFIER, demo_tasks, s07), 7)
print("completions:", s07.texts)
print("stop reasons:", s07.stop_reason, " decoding:", record["decoding"])
save_passport(record, RUN_DIR / "demo_rollout_record.json")

# %% [markdown]
# Numerical check: rescore the stored tokens by teacher forcing, (i) with the behaviour processing
# (grammar mask, temperature 0.7), (ii) at temperature 1 (the scorer was not changed when the
# sampler was), (iii) with the raw softmax (no grammar mask). Only (i) reproduces the stored
# log-probs; (ii) and (iii) would make every "ratio" differ from 1 before any update [9.5-3].

# %%
mask07 = s07.completion_mask.float()
with torch.no_grad():
    variants = {
        "(i) behaviour: mask + T=0.7": gru_lab.behaviour_logits(gru, s07, grammar, 0.7),
        "(ii) mask + T=1.0": gru_lab.behaviour_logits(gru, s07, grammar, 1.0),
        "(iii) raw softmax, T=0.7": gru(s07.input_ids[:, :-1]).logits[:, s07.prompt_len - 1 :]
        / 0.7,
    }
for name, logits in variants.items():
    lp = gru_lab.token_logprobs(logits, s07.completion_ids, mask07)
    ratio = torch.exp(lp - s07.logprobs)[mask07 > 0]
    print(f"{name:<30} max |logp - stored| = {float(((lp - s07.logprobs) * mask07).abs().max()):.2e}"
          f"   ratio range [{float(ratio.min()):.3f}, {float(ratio.max()):.3f}]")
lp_i = gru_lab.token_logprobs(variants["(i) behaviour: mask + T=0.7"], s07.completion_ids, mask07)
assert float(((lp_i - s07.logprobs) * mask07).abs().max()) < 1e-5

# %% [markdown]
# The trainer of the BaseLM lab guards against (ii): its simplified step rescores with the
# untempered policy, so a rollout temperature other than 1 makes the step off-policy, and the
# trainer says so when it is configured.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _tiny, _tok = tiny_lm(seed=0)
    GRPOTrainer(add_lora(_tiny), load_reference(tiny_lm(seed=0)[0]), _tok, make_tasks("format", 2),
                verify_format, train_step=lambda trainer, tasks: {},
                config=TrainerConfig(temperature=0.7))
print("trainer warning:", *[str(w.message) for w in caught])

# %% [markdown]
# **The update passport of this lesson's BaseLM runs.** Written once here and stored in every
# BaseLM run's passport (next to the trainer's config, the verifier passport and the data passport):

# %%
UPDATE_CONTRACT = {
    "objective": "simplified GRPO (the course's BaseLM loop): group-relative REINFORCE core + KL leash, no ratio/clip",
    "reward_centering": "group mean",
    "reward_scaling": "population std of the group (divide by K), eps = 1e-6 added to the std",
    "degenerate_groups": "all-equal rewards: the group is dropped from the loss (a skip); no update if all are",
    "logp_unit": "sequence: SUM of completion-token log-probs (prompt and padding excluded)",
    "loss": "-(A * logp).mean() + kl_coef * KL.mean(), means over the rows of informative groups",
    "kl_estimator": "k3 on sequence log-probs: exp(d) - d - 1, d = ref_logp - logp (>= 0); its value "
    "estimates KL(pi || ref), its on-policy gradient grad KL(ref || pi); no ratio weighting",
    "importance_ratio": "none: one optimizer step per fresh batch, so old = current at the gradient",
    "clip": None,
    "iterations_per_batch": 1,
    "entropy_coef": 0.0,
    "entropy_diagnostic": "mean of -behaviour log-prob over completion tokens of informative rows",
    "batch": "prompts_per_step groups of k completions; no gradient accumulation",
    "reference": "a second BaseLM, frozen; fingerprint checked after training",
}
print(json.dumps(UPDATE_CONTRACT, indent=1))

# %% [markdown]
# ## 9.5.3 Resource profiles, and why there is no universal recipe
#
# | level | hardware | what runs | what it is for |
# |---|---|---|---|
# | **A** | any CPU | NumPy reference functions and verifier tests (9.1-9.4), synthetic groups, comparisons of normalisation, clipping and sequence ratios; in this lesson the GRU lab and the BaseLM lab (a 1.6M-parameter transformer the course ships and `./baselm.sh` installs; `--rebuild` pretrains it on your machine) | understanding; required; no downloaded language model |
# | **B** | a free Colab T4 | a ~0.6B model (Qwen3-0.6B), LoRA, short completions, few generations per prompt, an explicit smoke configuration | watching the data path of a production trainer (TRL), not reproducing a report |
# | **C** | several GPUs, optional | a larger model, long completions, a separate rollout engine, reproducible infrastructure | real training; cost grows with completion length, $G$, rollout reuse and verification expense |
#
# **Do not copy a recipe.** $G$, $\epsilon$, $\beta$, the temperature and the learning rate of a
# published run (R1's or anyone's) were tuned together with that run's model size, reward scale,
# sequence length, batch size, optimiser and loss normalisation. Change one of these and the
# others mean something else [9.5-5]. The simplest example: the reduction's denominator multiplies the
# gradient. For one response of length $|o|$ with advantage $A$,
#
# $$\nabla_\theta\Big(-A\sum_{t}\log\pi_\theta(o_t)\Big) = |o|\cdot\nabla_\theta\Big(-\frac{A}{|o|}\sum_{t}\log\pi_\theta(o_t)\Big),$$
#
# so moving from a per-response token mean to a sequence sum multiplies the step by $|o|$ under SGD,
# and re-weights long against short responses under any optimiser [9.5-4]. Autograd check on
# random per-token logits:

# %%
_g = torch.Generator().manual_seed(0)
print(f"{'|o|':>5}{'||grad|| sum':>15}{'||grad|| mean':>15}{'ratio':>9}")
for L in (4, 16, 64, 256):
    theta = torch.randn(L, 11, generator=_g, requires_grad=True)  # (|o|, V) logits of one response
    toks = torch.randint(0, 11, (L,), generator=_g)
    lp = theta.log_softmax(-1)[torch.arange(L), toks]  # (|o|,)
    g_sum = torch.autograd.grad(-1.0 * lp.sum(), theta, retain_graph=True)[0]
    g_mean = torch.autograd.grad(-1.0 * lp.mean(), theta)[0]
    r = float(g_sum.norm() / g_mean.norm())
    print(f"{L:>5}{float(g_sum.norm()):>15.4f}{float(g_mean.norm()):>15.4f}{r:>9.1f}")
    assert math.isclose(r, L, rel_tol=1e-5)

# %% [markdown]
# The same holds for the KL leash: this lesson's BaseLM loop applies k3 to *summed* sequence
# log-probs (the course's teaching choice), so its $\beta$ acts on a length-sensitive quantity and a
# $\beta$ tuned for per-token KL would not mean the same thing here. Each run's update passport
# names its unit and denominator for exactly this reason.
#
# ## Your implementation, part 1: advantages, KL, the clipped loss (graded)
#
# **Assessment step 9.5.A5 (graded code, 9 points):** part 1 here. Everything below is torch. Each function's docstring is
# its contract: shapes, dtypes and conventions. The labs that follow call *your* functions: nothing
# graded lives in `helpers/`.
#
# **How you are graded.** Each graded function has one test cell: the visible asserts you can run
# now, and hidden tests that run only when the course grades your notebook. The hidden tests check
# every promise of the docstring (shapes, dtypes, the errors it names, degenerate and empty inputs,
# that your inputs are left unmodified) and compare your function with the course's on seeded random
# inputs, with the tolerances the docstring or the test states. A test cell earns its points when it
# runs without an error. What your code prints, to stdout or stderr (`print`, `logging`, warnings),
# never costs points: the feedback shows it, marked `[stderr]`.
#
# ### 1. `group_advantages` (2 points)
#
# The BaseLM lab's contract, in torch: centre by the group mean, scale by the group's **population** std
# (divide by $K$) plus $\varepsilon=10^{-6}$, and return exact zeros for a degenerate (all-equal)
# group. The naive formula turns such a group into NaN (0/0 when $\varepsilon=0$) or, worse, into
# rounding noise divided by $\varepsilon$. Detect the group by **equality** (`max == min`), as in
# lesson 9.2, not by "std == 0": a std computed in floating point can leave rounding residue on a
# constant row (torch's own `std` does so on a single float32 row of seven 0.1s, and a two-pass std
# written by hand on rows of 0.1, 0.3 or 1.2: about 1e-8 to 1e-7), and residue / (residue + eps) is an
# advantage of up to about 0.1, not 0 [9.5-19]:

# %%
_r = torch.tensor([1.0, 1.0, 1.0, 1.0])
print("naive (r - mean) / std on an all-correct group:", (_r - _r.mean()) / _r.std(unbiased=False))
for _v in (0.1, 0.3, 1.2):
    _r = torch.full((7,), _v)  # float32, one degenerate group of K = 7
    _sd = _r.std(unbiased=False)
    print(f"seven {_v}s: torch std {float(_sd):.1e}, max |(r - mean) / (std + 1e-6)| = "
          f"{float(((_r - _r.mean()) / (_sd + 1e-6)).abs().max()):.3f}, max == min: {bool(_r.max() == _r.min())}")
assert float(torch.full((7,), 1.2).std(unbiased=False)) > 0  # the residue the std == 0 guard misses


# %% [solution] id=group_advantages
def group_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Group-relative advantages A_i = (r_i - mean(r)) / (std(r) + eps), per group.

    Args:
        rewards: torch float tensor of shape (K,) for one group or (B, K) for B groups (the last
            dimension is the group). An integer tensor is treated as float32.
        eps: added to the std, outside the square root.

    Returns:
        A new tensor with the shape of ``rewards`` and its floating dtype (float32 for integer
        input). The input is not modified.

    Conventions:
        - std is the POPULATION std (divide by K: ``unbiased=False`` / ``correction=0``).
        - A degenerate group (all its rewards equal: detect it by max == min, not by std == 0, which
          rounding can miss) gets exact zeros.
        - Rows are normalised independently.

    Raises:
        TypeError if ``rewards`` is not a torch.Tensor; ValueError if it is not 1-D or 2-D or K == 0.
    """
    ### BEGIN SOLUTION
    if not isinstance(rewards, torch.Tensor):
        raise TypeError(f"rewards must be a torch.Tensor, got {type(rewards).__name__}")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError(
            f"rewards must have shape (K,) or (B, K) with K >= 1, got {tuple(rewards.shape)}"
        )
    r = rewards if rewards.is_floating_point() else rewards.float()
    mean = r.mean(dim=-1, keepdim=True)  # (B, 1) or (1,)
    std = r.std(dim=-1, keepdim=True, unbiased=False)  # population std
    adv = (r - mean) / (std + eps)
    flat = r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)  # degenerate group
    return torch.where(flat, torch.zeros_like(adv), adv)
    ### END SOLUTION


# %% [tests] id=test_group_advantages points=2
_out = group_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0]), eps=0.0)
assert type(_out) is torch.Tensor, f"return a torch.Tensor, got {type(_out).__name__}"
_got = np.array(_out.detach().cpu().numpy(), dtype=np.float64)
assert _got.shape == (4,), f"the output must have the input's shape (4,), got {_got.shape}"
assert np.allclose(_got, [math.sqrt(3)] + [-1 / math.sqrt(3)] * 3, atol=1e-6), (
    f"one success in K=4 must give [1.732, -0.577, -0.577, -0.577], got {_got}: "
    "use the POPULATION std (unbiased=False)"
)
_got = np.array(group_advantages(torch.ones(6)).numpy(), dtype=np.float64)
assert np.all(_got == 0.0), (
    f"an all-equal group must give exact zeros, got {_got}: detect it by max == min"
)
_got = np.array(
    group_advantages(torch.tensor([[1.0, 0.0], [0.5, 0.5]]), eps=0.0).numpy(), dtype=np.float64
)
assert np.allclose(_got, [[1.0, -1.0], [0.0, 0.0]]), f"(B, K) input: normalise each row; got {_got}"

# %% [markdown]
# ### 2. `kl_estimate` (2 points)
#
# The KL leash needs $\mathrm{KL}(\pi_\theta\,\|\,\pi_{\text{ref}})=\mathbb E_{x\sim\pi_\theta}\big[\log\pi_\theta(x)-\log\pi_{\text{ref}}(x)\big]$
# estimated from samples $x$ drawn from $\pi_\theta$. With $d=\log\pi_{\text{ref}}(x)-\log\pi_\theta(x)$
# (a log-ratio, *reference over policy*), three per-sample estimators are common:
#
# | name | value | mean over $x\sim\pi_\theta$ | sign |
# |---|---|---|---|
# | $k_1$ | $-d$ | exactly KL (unbiased) | can be negative |
# | $k_2$ | $d^2/2$ | KL only to second order (biased) | $\ge 0$ |
# | $k_3$ | $e^{d}-d-1$ | exactly KL (unbiased, since $\mathbb E[e^d]=1$) | $\ge 0$ |
#
# $k_3$ is unbiased because $\mathbb E_{\pi_\theta}[\pi_{\text{ref}}/\pi_\theta]=\sum_x\pi_{\text{ref}}(x)=1$,
# and non-negative because $e^d\ge 1+d$ [9.5-6]. This table is about the **value** (what a logged
# `kl` means). What the leash *does* is decided by the **gradient**, a different contract, taken up
# right after the graded cell. Numerical check on a 6-outcome distribution, 400 000 samples:

# %%
_g = torch.Generator().manual_seed(1)
p_pol = torch.softmax(torch.randn(6, generator=_g, dtype=torch.float64), 0)
p_ref = torch.softmax(torch.randn(6, generator=_g, dtype=torch.float64), 0)
exact = float((p_pol * (p_pol / p_ref).log()).sum())
x = torch.multinomial(p_pol, 400_000, replacement=True, generator=_g)
d = p_ref.log()[x] - p_pol.log()[x]
est = {"k1": -d, "k2": d**2 / 2, "k3": d.exp() - d - 1}
print(f"exact KL = {exact:.5f}")
for name, v in est.items():
    se = float(v.std() / math.sqrt(len(v)))
    print(f"{name}: mean {float(v.mean()):.5f} (+- {se:.5f}), min {float(v.min()):+.3f}")
assert abs(float(est["k1"].mean()) - exact) < 5 * float(est["k1"].std()) / math.sqrt(len(x))
assert abs(float(est["k3"].mean()) - exact) < 5 * float(est["k3"].std()) / math.sqrt(len(x))
assert float(est["k3"].min()) >= 0 and float(est["k1"].min()) < 0


# %% [solution] id=kl_estimate
def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, estimator: str = "k3") -> torch.Tensor:
    """Per-sample estimate of KL(policy || reference) from samples drawn from the policy.

    Args:
        logp: log pi_theta(x) of sampled x, any shape; may carry gradient. Keep it (do not detach):
            the leash acts through this gradient, whose direction depends on the estimator (k1: mean
            zero; k2: grad KL(pi_theta || pi_ref); k3: grad KL(pi_ref || pi_theta), on-policy).
        ref_logp: log pi_ref(x) of the same x, the same shape.
        estimator: "k1" (-d), "k2" (d**2 / 2) or "k3" (exp(d) - d - 1), with d = ref_logp - logp.

    Returns:
        A tensor of the inputs' shape: one estimate per sample (no reduction).

    Raises:
        ValueError for an unknown estimator or different shapes.
    """
    ### BEGIN SOLUTION
    if logp.shape != ref_logp.shape:
        raise ValueError(f"shapes differ: {tuple(logp.shape)} vs {tuple(ref_logp.shape)}")
    log_ratio = ref_logp - logp  # log(pi_ref / pi_theta)
    if estimator == "k1":
        return -log_ratio
    if estimator == "k2":
        return 0.5 * log_ratio**2
    if estimator == "k3":
        return torch.exp(log_ratio) - log_ratio - 1
    raise ValueError(f"unknown estimator {estimator!r}; choose 'k1', 'k2' or 'k3'")
    ### END SOLUTION


# %% [tests] id=test_kl_estimate points=2
_lp, _ref = torch.tensor([-1.0, -2.0, -0.7]), torch.tensor([-2.0, -1.0, -0.7])
_out = kl_estimate(_lp, _ref, "k3")
assert type(_out) is torch.Tensor and tuple(_out.shape) == (3,), (
    "one estimate per sample, shape (3,)"
)
_got = np.array(_out.detach().numpy(), dtype=np.float64)
assert np.allclose(_got, [math.exp(-1), math.e - 2, 0.0], atol=1e-6), (
    f"k3 with d = ref_logp - logp = [-1, 1, 0] is exp(d) - d - 1 = [0.3679, 0.7183, 0], got {_got}: "
    "check the direction of d (reference minus policy)"
)
_got = np.array(kl_estimate(_lp, _ref, "k1").detach().numpy(), dtype=np.float64)
assert np.allclose(_got, [1.0, -1.0, 0.0], atol=1e-6), (
    f"k1 = logp - ref_logp = [1, -1, 0], got {_got}"
)

# %% [markdown]
# ### Value and gradient: what the KL term pulls towards
#
# A loss uses $k(x)$ with the sample $x$ held fixed and differentiates it through $\log\pi_\theta(x)$
# (no gradient flows through the sampler). With $x\sim\pi_\theta$ and $\nabla$ meaning
# $\nabla_\theta$, the three estimators' gradients are
#
# - $\nabla k_1=\nabla\log\pi_\theta(x)$, whose mean is $\sum_x\nabla\pi_\theta(x)=0$: **no leash at
#   all** in expectation, only noise;
# - $\nabla k_2=(\log\pi_\theta-\log\pi_{\text{ref}})\nabla\log\pi_\theta$, mean
#   $\sum_x(\log\pi_\theta-\log\pi_{\text{ref}})\nabla\pi_\theta=\nabla\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$:
#   the biased value has the gradient of the direction it approximates;
# - $\nabla k_3=(1-\pi_{\text{ref}}/\pi_\theta)\nabla\log\pi_\theta$, mean
#   $-\sum_x\pi_{\text{ref}}\nabla\log\pi_\theta=\nabla\mathrm{KL}(\pi_{\text{ref}}\|\pi_\theta)$: the
#   unbiased value of $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$ has the gradient of the **other**
#   direction.
#
# After the first epoch on a reused batch the samples come from $\pi_{\text{old}}\ne\pi_\theta$, and
# then even the value is biased: $\mathbb E_{\pi_{\text{old}}}[k_3]\ne\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$.
# Weighting by the ratio $\rho=\pi_\theta/\pi_{\text{old}}$ (old detached) repairs the value,
# $\mathbb E_{\pi_{\text{old}}}[\rho k_3]=\mathbb E_{\pi_\theta}[k_3]$, and gives the gradient
# $\mathbb E_{\pi_\theta}[k_3\nabla\log\pi_\theta+\nabla k_3]=\nabla\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$
# even on-policy, where $\rho$'s value is 1 but its gradient is not 0 [9.5-14]. Exact check: every
# expectation below is an enumeration over 5 outcomes of a softmax, and both KL directions are
# differentiated by central finite differences (no sampling noise at all):

# %%
_g = torch.Generator().manual_seed(2)
theta_old = torch.randn(5, generator=_g, dtype=torch.float64)  # logits of the sampling policy
log_ref5 = torch.randn(5, generator=_g, dtype=torch.float64).log_softmax(0)  # frozen reference


def kl_directions(theta: torch.Tensor) -> tuple[float, float]:
    """(KL(pi_theta || pi_ref), KL(pi_ref || pi_theta)) for pi_theta = softmax(theta), exactly."""
    lp = theta.log_softmax(0)
    return float((lp.exp() * (lp - log_ref5)).sum()), float(
        (log_ref5.exp() * (log_ref5 - lp)).sum()
    )


def fd_grad(f, theta: torch.Tensor, h: float = 1e-6) -> torch.Tensor:
    """Central finite differences of a scalar function of the logits."""
    eye = torch.eye(len(theta), dtype=theta.dtype)
    return torch.tensor(
        [(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in eye], dtype=theta.dtype
    )


def expected_value_and_grad(theta, sampler_logits, estimator, weighted=False):
    """E_{x ~ softmax(sampler_logits)}[k(x)] and its gradient w.r.t. theta, x held fixed, enumerated.
    weighted: multiply k by rho = pi_theta(x) / pi_sampler(x), the sampler detached."""
    th = theta.clone().requires_grad_(True)
    logp, log_s = th.log_softmax(0), sampler_logits.log_softmax(0).detach()
    k = kl_estimate(logp, log_ref5, estimator)
    if weighted:
        k = k * torch.exp(logp - log_s)
    value = (log_s.exp() * k).sum()  # the sampler's probabilities are constants
    return float(value.detach()), torch.autograd.grad(value, th)[0]


def compare(theta, sampler_logits, label):
    grad_fwd = fd_grad(lambda t: kl_directions(t)[0], theta)  # grad KL(pi_theta || pi_ref)
    grad_rev = fd_grad(lambda t: kl_directions(t)[1], theta)  # grad KL(pi_ref || pi_theta)
    print(f"{label}: KL(pi||ref) = {kl_directions(theta)[0]:.4f}")
    print(
        f"  {'estimator':<10}{'E[k]':>9}{'|E grad - grad KL(pi||ref)|':>30}{'|E grad - grad KL(ref||pi)|':>30}"
    )
    out = {}
    for est, w in (("k1", False), ("k2", False), ("k3", False), ("k3", True)):
        v, g_ = expected_value_and_grad(theta, sampler_logits, est, weighted=w)
        name = "rho*k3" if w else est
        out[name] = (v, float((g_ - grad_fwd).abs().max()), float((g_ - grad_rev).abs().max()), g_)
        print(f"  {name:<10}{v:>9.4f}{out[name][1]:>30.2e}{out[name][2]:>30.2e}")
    return out


on = compare(theta_old, theta_old, "on-policy (samples from pi_theta)")
assert float(on["k1"][3].abs().max()) < 1e-12  # E[grad k1] = 0
assert on["k2"][1] < 1e-8 and on["k3"][2] < 1e-8 and on["rho*k3"][1] < 1e-8
assert on["k3"][1] > 0.05  # k3's gradient is NOT the gradient of the KL it estimates
theta_new = theta_old + 0.5 * torch.randn(5, generator=_g, dtype=torch.float64)  # after updates
off = compare(theta_new, theta_old, "off-policy (samples from pi_old, reused batch)")
assert abs(off["k3"][0] - kl_directions(theta_new)[0]) > 0.1  # the value is biased
assert abs(off["rho*k3"][0] - kl_directions(theta_new)[0]) < 1e-12  # ... unless weighted
assert off["rho*k3"][1] < 1e-8 and min(off["k3"][1:3]) > 0.05  # plain k3: neither direction

# %% [markdown]
# **What the course's losses pull towards.** Both divergences are $\ge 0$ and vanish only at
# $\pi_\theta=\pi_{\text{ref}}$, so each is a leash towards the reference; they punish different
# departures. $\mathrm{KL}(\pi_{\text{ref}}\|\pi_\theta)$ grows fast when the policy takes mass away
# from outcomes the reference likes (mass-covering); $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$
# when the policy puts mass where the reference has little. Read the course's three uses with that in
# mind:
#
# - **BaseLM lab (`grpo_loss`, part 2):** $k_3$ on whole-sequence log-probs of a fresh batch, one
#   step per batch, so every sample is on-policy, but `train_step` computes the loss, its KL term and
#   the logged `kl` on the rows of **informative groups only**. Those rows are $\pi_\theta$'s samples
#   *conditioned on their group being mixed*, a selection by reward: the logged `kl` estimates
#   $\mathbb E[k_3\mid\text{informative}]$, not $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$, and the
#   leash's gradient is not an unbiased estimate of $\nabla\mathrm{KL}(\pi_{\text{ref}}\|\pi_\theta)$
#   either; degenerate groups get no leash at all. With $K$ large almost every row of a prompt with
#   $0<p<1$ is in a mixed group and the selection fades (cell below). The logged `entropy` is the
#   same kind of number: the mean surprisal of the sampled tokens on those rows. TRL puts the KL term
#   on every row, informative or not.
# - **GRU lab (`clipped_grpo_loss`):** per-token $k_3$ without a ratio. In the first epoch it pulls
#   along $\nabla\mathrm{KL}(\pi_{\text{ref}}\|\pi_\theta)$ of each token's distribution, its sampled
#   prefix held fixed (a per-token leash does not differentiate how $\theta$ changes which prefixes
#   occur). In the reused epochs the samples are $\pi_{\text{old}}$'s and the term is biased in value
#   and gradient. The lab's profile sets $\beta=0$, so there it is a diagnostic only.
# - **Level B (TRL):** TRL 1.16 multiplies the per-token $k_3$ by the token ratio when
#   `use_bias_correction_kl=True`, its default; the gradient is then per token that of
#   $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$, on every pass. Level B sets it to `False` on purpose,
#   so that TRL computes exactly the course's objective (the course's equivalence proof against TRL
#   covers both settings); its T4 profile has $\beta=0$, where the flag changes nothing [9.5-15].
#
# A student who writes `kl_coef * k1` gets a leash whose expected pull is zero; one who detaches
# `logp` inside the KL gets no pull at all. The logged value looks the same in both cases.

# %%
# The selection, exactly: three outcomes, the reward pays outcome 0. A row is in an informative
# group iff the other K - 1 draws of its group include an outcome of the other reward.
pi_toy, ref_toy = np.array([0.8, 0.15, 0.05]), np.array([0.3, 0.5, 0.2])
paid = np.array([True, False, False])
d_toy = np.log(ref_toy) - np.log(pi_toy)
k3_toy = np.exp(d_toy) - d_toy - 1  # (3,) per outcome
p_paid = pi_toy[paid].sum()
print(f"KL(pi || ref) = {quote('9.5:toy_kl', pi_toy @ np.log(pi_toy / ref_toy), '.3f')} = E[k3] "
      f"= {pi_toy @ k3_toy:.3f};  H(pi) = {quote('9.5:toy_entropy', -pi_toy @ np.log(pi_toy), '.3f')}")
for K in (2, 8):
    w = np.where(paid, 1 - p_paid ** (K - 1), 1 - (1 - p_paid) ** (K - 1))  # P(mixed | this row)
    cond = pi_toy * w / (pi_toy @ w)  # (3,) the outcome of a row, given its group is informative
    if K == 2:  # the same by enumerating every group of two
        groups = list(itertools.product(range(3), repeat=2))
        mixed = [g for g in groups if paid[g[0]] != paid[g[1]]]
        num = sum(np.prod(pi_toy[list(g)]) * k3_toy[list(g)].mean() for g in mixed)
        assert math.isclose(num / sum(np.prod(pi_toy[list(g)]) for g in mixed), cond @ k3_toy)
    surprisal = quote(f"9.5:toy_surprisal_K{K}", cond @ -np.log(pi_toy), ".3f")
    print(f"K = {K}: E[k3 | informative] = {quote(f'9.5:toy_k3_K{K}', cond @ k3_toy, '.3f')}, "
          f"E[surprisal | informative] = {surprisal}")
    assert cond @ k3_toy > pi_toy @ k3_toy  # here the selected rows overstate the KL

# %% [markdown]
# With $K=2$ the informative rows report a KL of 0.803<!--fig:9.5:toy_k3_K2--> for a policy whose KL
# is 0.535<!--fig:9.5:toy_kl-->, and a mean surprisal of 1.197<!--fig:9.5:toy_surprisal_K2--> for an
# entropy of 0.613<!--fig:9.5:toy_entropy-->: a mixed group over-represents the rare, unpaid
# outcomes, which are exactly where $\pi_\theta$ and $\pi_{\text{ref}}$ differ most here. At $K=8$
# the gap shrinks (0.571<!--fig:9.5:toy_k3_K8-->). So read the BaseLM dashboard's `kl` and `entropy`
# as "on the rows that trained", and compare runs at the same $K$ only.

# %% [markdown]
# ### 3. `clipped_grpo_loss`: the GRU lab's objective (3 points)
#
# Canonical GRPO (DeepSeekMath's token-level form, lesson 9.2), written as a loss to **minimise**:
#
# $$\mathcal L=\frac1N\sum_{i=1}^{N}\frac{1}{|o_i|}\sum_{t=1}^{|o_i|}\Big(-\min\big[\rho_{i,t}\widehat A_i,\ \operatorname{clip}(\rho_{i,t},1-\epsilon,1+\epsilon)\widehat A_i\big]+\beta\,k_3(i,t)\Big),\qquad \rho_{i,t}=\exp\big(\log\pi_\theta-\log\pi_{\text{old}}\big),$$
#
# with $|o_i|$ the number of active tokens of response $i$ (a response with none contributes 0) and
# $k_3$ per token between the current policy and the reference [9.5-7]. The lab passes these arguments:
# `new_logp` (with gradient), `old_logp` (stored at sampling), `ref_logp`, all (N, T); `advantages`
# (N,); `mask` (N, T) float 0/1. Numerical check of the clip branches, before you write it: for
# $\widehat A>0$ the gradient vanishes once $\rho>1+\epsilon$; for $\widehat A<0$ once $\rho<1-\epsilon$.

# %%
for A_, rho_ in [(1.0, 1.1), (1.0, 1.3), (-1.0, 0.9), (-1.0, 0.7), (-1.0, 1.3)]:
    lr_ = torch.tensor(math.log(rho_), requires_grad=True)
    obj = torch.minimum(lr_.exp() * A_, lr_.exp().clamp(0.8, 1.2) * A_)
    (g_,) = torch.autograd.grad(-obj, lr_)
    print(f"A={A_:+.0f} rho={rho_:.1f}: d loss / d logp = {float(g_):+.3f}  (formula: "
          f"{0.0 if (A_ > 0 and rho_ > 1.2) or (A_ < 0 and rho_ < 0.8) else -A_ * rho_:+.3f})")


# %% [solution] id=clipped_grpo_loss
def clipped_grpo_loss(
    new_logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float,
    kl_coef: float,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Clipped GRPO loss (to minimise), token terms averaged per response, then over responses.

    Args:
        new_logp: (N, T) log-probs of the sampled tokens under the current policy (with grad).
        old_logp: (N, T) the same under the old (behaviour) policy, stored at sampling; constant.
        ref_logp: (N, T) the same under the reference policy; constant.
        advantages: (N,) one advantage per response, applied to all of its tokens; constant.
        mask: (N, T) float, 1.0 on the response's tokens (EOS included), 0.0 on padding. Values of
            the log-prob tensors at masked positions are arbitrary finite numbers (float32 100.0
            included): mask them out BEFORE exp and k3, since exp(100) is inf in float32 and
            inf * 0 is NaN.
        clip_eps: epsilon of the symmetric clip range [1 - eps, 1 + eps].
        kl_coef: beta, the weight of the per-token k3 term (k3 of ``new_logp`` vs ``ref_logp``).

    Returns:
        (loss, metrics): ``loss`` a 0-dim tensor; per token
        ``pg = -min(rho * A, clip(rho, 1 - eps, 1 + eps) * A)`` with ``rho = exp(new - old)``, and
        ``term = pg + kl_coef * k3``; loss = mean over the N responses of (sum of the response's
        masked terms / its number of active tokens, at least 1). ``metrics`` holds Python floats
        "pg" and "kl": the same two-stage mean of ``pg`` and of ``k3`` alone. Masked positions
        contribute nothing to the value or the gradient.
    """
    ### BEGIN SOLUTION
    active = mask > 0  # (N, T) bool
    zero = torch.zeros_like(new_logp)
    # garbage at masked positions is replaced by 0 before any exp (where() also blocks its gradient)
    new_a = torch.where(active, new_logp, zero)
    ratio = torch.exp(new_a - torch.where(active, old_logp, zero))  # (N, T), 1 where masked
    A = advantages[:, None]  # (N, 1)
    pg_loss1 = -ratio * A
    pg_loss2 = -torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A
    pg = torch.maximum(pg_loss1, pg_loss2)  # (N, T) = -min(rho A, clip(rho) A)
    kl = kl_estimate(new_a, torch.where(active, ref_logp, zero), "k3")  # (N, T), 0 where masked
    per_token = pg + kl_coef * kl
    n_tok = mask.sum(dim=1).clamp(min=1)  # (N,)

    def two_stage(x):
        return ((x * mask).sum(dim=1) / n_tok).mean()

    loss = two_stage(per_token)
    metrics = {"pg": float(two_stage(pg.detach())), "kl": float(two_stage(kl.detach()))}
    return loss, metrics
    ### END SOLUTION


# %% [tests] id=test_clipped_grpo_loss points=3
# ratios row 0: [1.5, 0.9, (pad)], A = +1; row 1: [0.5, 1.5, 1.0], A = -2; eps = 0.2
_rho = torch.tensor([[1.5, 0.9, 7.0], [0.5, 1.5, 1.0]], dtype=torch.float64)
_m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
_new = _rho.log().clone().requires_grad_(True)
_zero = torch.zeros(2, 3, dtype=torch.float64)
_A = torch.tensor([1.0, -2.0], dtype=torch.float64)
_res = clipped_grpo_loss(_new, _zero, _new.detach(), _A, _m, clip_eps=0.2, kl_coef=0.1)
assert isinstance(_res, tuple) and len(_res) == 2, "return a pair (loss, metrics)"
_loss, _met = _res
assert type(_loss) is torch.Tensor and _loss.ndim == 0, "the loss must be a 0-dim tensor"
# row 0: (-1.2 - 0.9) / 2 = -1.05; row 1: (1.6 + 3.0 + 2.0) / 3 = 2.2; mean = 0.575
assert math.isclose(float(_loss.detach()), 0.575, abs_tol=1e-9), (
    f"expected 0.575 (row means -1.05 and 2.2), got {float(_loss.detach())}: average each response's own "
    "tokens first, then over responses; clip per advantage sign; masked tokens excluded"
)

# %% [markdown]
# ### 4. The lab's diagnostics (2 points)
#
# The dashboard of the GRU lab needs four measurements, all over **active tokens only** (mask 1):
# the mean token entropy of the behaviour distribution (tokens the grammar forbids have logit
# $-\infty$, probability 0, and contribute $0\cdot\log 0 := 0$); the unbiased pass@$k$ from $c$
# successes among $n$ samples, $1-\binom{n-c}{k}/\binom{n}{k}$ (1 when $n-c<k$); the two clip
# fractions (ratio below $1-\epsilon$ with $\widehat A<0$; above $1+\epsilon$ with $\widehat A>0$:
# the tokens whose clipped branch is in force); and the mean $k_3$ to the reference. You met these
# in lesson 9.4 in NumPy; here they take and return what `helpers.gru_lab` documents. The module's
# convention for an **empty measurement** (no active token) is the same as in 9.4 and in
# `train_step` below: return NaN, never 0.0. Nothing was measured, and a 0 would claim "no
# entropy", "no clipping" or "no drift".


# %% [solution] id=lab_diagnostics
def token_entropy(logits: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean entropy (nats) of softmax(logits) over active tokens. logits (N, T, V), may hold -inf;
    mask (N, T) float 0/1. Returns a Python float (NaN when no token is active)."""
    ### BEGIN SOLUTION
    n = float(mask.sum())
    if n == 0:
        return math.nan  # nothing measured
    logp = logits.log_softmax(dim=-1)  # (N, T, V)
    p = logp.exp()
    H = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(dim=-1)  # (N, T)
    return float((H * mask).sum() / n)
    ### END SOLUTION


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from c successes among n samples: 1 - C(n-c, k) / C(n, k); a Python float."""
    ### BEGIN SOLUTION
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))
    ### END SOLUTION


def clip_fractions(
    ratio: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *, clip_eps: float
) -> tuple[float, float]:
    """(low, high) fractions of active tokens: low = ratio < 1 - eps with A < 0; high = ratio >
    1 + eps with A > 0. ratio (N, T), advantages (N,), mask (N, T) float 0/1. Python floats
    (both NaN when no token is active)."""
    ### BEGIN SOLUTION
    n = float(mask.sum())
    if n == 0:
        return math.nan, math.nan  # nothing measured
    A = advantages[:, None]  # (N, 1)
    low = ((ratio < 1 - clip_eps) & (A < 0)).float()
    high = ((ratio > 1 + clip_eps) & (A > 0)).float()
    return float((low * mask).sum() / n), float((high * mask).sum() / n)
    ### END SOLUTION


def kl_to_reference(logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean per-token k3 estimate of KL(policy || reference) over active tokens; logp and ref_logp
    (N, T) are log-probs of tokens sampled from the policy; mask (N, T). Values at masked positions
    are arbitrary finite numbers (float32 -100.0 included): mask them out before exp, as in
    ``clipped_grpo_loss``. A Python float (NaN when no token is active)."""
    ### BEGIN SOLUTION
    n = float(mask.sum())
    if n == 0:
        return math.nan  # nothing measured
    lr_ = torch.where(mask > 0, ref_logp - logp, 0.0)  # log(pi_ref / pi_theta), 0 where masked
    k3 = torch.exp(lr_) - lr_ - 1
    return float((k3 * mask).sum() / n)
    ### END SOLUTION


# %% [tests] id=test_lab_diagnostics points=2
_lg = torch.tensor([[[0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]]])  # (1, 2, 3)
_h = token_entropy(_lg, torch.tensor([[1.0, 1.0]]))
assert type(_h) is float, f"return a Python float, got {type(_h).__name__}"
assert math.isclose(_h, (math.log(2) + math.log(3)) / 2, rel_tol=1e-6), (
    f"entropies log 2 (a -inf logit is probability 0) and log 3, mean 0.8959; got {_h}"
)
assert math.isclose(pass_at_k(4, 1, 2), 0.5, rel_tol=1e-12), (
    "pass@2 with 1 success in 4 is 1 - 3/6 = 0.5"
)

# %% [markdown]
# ## 9.5.4 Lab, part 1: the CPU loop with a GRU policy
#
# The module's core practice route: a small but genuine autoregressive model (embedding, GRU,
# language-model head) answers `"a+b="` token by token under the grammar `T,O;S<eos>` (T: sum of the
# tens digits, O: sum of the ones digits, S: the answer). The versioned verifier reports correctness,
# intermediate consistency ($S=10T+O$) and format **separately** and sums them with weights
# 1, 0.1, 0.1. Each step: a frozen copy of the policy becomes the **old** policy and samples $G=6$
# completions for each of 8 prompts (its log-probs are stored at sampling, after the grammar mask);
# the current policy takes 4 clipped update epochs on that batch; a frozen **reference** (the
# weights after pretraining) gives the KL diagnostic. Every 10 steps a fresh generation measures
# accuracy, pass@4, coverage and concentration on the 24 training prompts and on 48 held-out
# operand pairs never seen in training.
#
# `helpers.gru_lab.run_lab` owns the plumbing; it calls **your** functions for everything graded:
# `group_advantages` (on (B, G) rewards), `clipped_grpo_loss`, and the four diagnostics. The
# profile is fixed (`gru_lab.PROFILES["smoke"]`): it is tuned to show a failure, with a small
# prompt pool, a high learning rate, 4 epochs per batch and $\beta=0$.

# %%
LAB_FNS = dict(
    advantages_fn=group_advantages,
    loss_fn=clipped_grpo_loss,
    entropy_fn=token_entropy,
    pass_at_k_fn=pass_at_k,
    clip_fraction_fn=clip_fractions,
    kl_fn=kl_to_reference,
)
LAB_PROFILE = "tiny" if SMOKE else "smoke"
print("profile:", gru_lab.PROFILES[LAB_PROFILE])
lab = None
if not RUN_LABS:
    print("GRU lab skipped: the autograder does not run the labs.")
else:
    try:
        t0 = time.perf_counter()
        lab = gru_lab.run_lab(LAB_PROFILE, **LAB_FNS)
        print(f"GRU lab ({LAB_PROFILE}) finished in {time.perf_counter() - t0:.1f} s")
    except NotImplementedError:
        print("The GRU lab needs your functions above: implement them, then rerun this cell.")


# %% [markdown]
# The run writes its own passport: the profile, the verifier passport, library versions, the git
# commit, the reference-weight hashes at start and end, and the qualified names of the functions
# that were injected (yours). It is saved next to the history.


# %%
def split_lab_history(history: dict) -> tuple[dict, dict]:
    """The lab history as (per-step columns, per-evaluation columns with 'step' = eval_step)."""
    n_steps = len(history["step"])
    steps = {k: v for k, v in history.items() if len(v) == n_steps and k != "eval_step"}
    evals = {k: v for k, v in history.items() if len(v) == len(history["eval_step"])}
    evals = {"step": evals.pop("eval_step"), **evals}
    return steps, evals


if lab is not None:
    lab_dir = RUN_DIR / f"gru_lab_{LAB_PROFILE}"
    save_passport(lab.passport, lab_dir / "passport.json")
    (lab_dir / "history.json").write_text(json.dumps(lab.history) + "\n")
    p = lab.passport
    print("saved to", lab_dir)
    print("config_hash", p["config_hash"], "| verifier", p["verifier"]["name"], p["verifier"]["version"],
          p["verifier"]["config_hash"], "| git", p["git"])
    print(
        "reference unchanged:",
        p["extra"]["reference_hash_start"] == p["extra"]["reference_hash_end"],
    )
    print("max |stored old logp - rescored| =", p["extra"]["old_logp_maxdiff"])
    print("injected:", json.dumps(p["extra"]["callables"], indent=1))

# %% [markdown]
# **The dashboard.** Per rollout step: reward and its components, truncation, length, entropy of
# the behaviour policy, KL to the reference, clip fractions (over all update epochs, and over the
# reused epochs alone, epoch 1 onward: epoch 0 runs at ratio 1 and clips nothing), the largest
# ratio before each update and after the last one (`ratio_max_final`), informative rate, and
# `skipped` (1 where no update ran: every group degenerate with no KL term, or no token left in the
# loss; the update axes have a gap there, not a 0). Per evaluation point (fresh generation): the same policy on training prompts and on
# held-out combinations.

# %%
if lab is not None:
    lab_steps, lab_evals = split_lab_history(lab.history)
    keep = ["reward", "correct", "consistent", "format", "entropy", "kl_ref", "clip_low",
            "clip_high", "clip_low_reused", "clip_high_reused", "ratio_max", "ratio_max_final",
            "informative_rate", "skipped", "truncation_rate", "len_mean", "time_s"]
    display_fig = plot_dashboard(
        {k: lab_steps[k] for k in ["step", *keep]}, title="GRU lab: per rollout step",
        labels={"entropy": "entropy (exact, behaviour logits)"},
    )
    display(display_fig)
    k = gru_lab.PROFILES[LAB_PROFILE].pass_k
    ekeys = ["train_acc", "heldout_acc", f"train_pass@{k}", f"heldout_pass@{k}", "train_entropy",
             "train_coverage", "train_concentration", "heldout_greedy_acc"]
    display(plot_history({k2: lab_evals[k2] for k2 in ["step", *ekeys]}, keys=ekeys, ncols=4,
                         title="GRU lab: fresh-generation evaluation (x = RL step)",
                         labels={"train_entropy": "train_entropy (exact)"}))

# %% [markdown]
# **Does the dashboard detect the failure?** The pattern to look for has five parts, read between the
# first and the last evaluation: training accuracy up; entropy down; pass@4 down; successes
# concentrated on fewer training prompts; held-out transfer down. `failure_pattern` checks them,
# and the dashboard's own stopping-rule checks flag the entropy fall from the per-step columns.
# With the course's reference functions the smoke profile shows all five [9.5-10].

# %%
if lab is not None:
    fp = lab.failure_pattern()
    h = lab.history
    for key in ("train_acc", "train_entropy", f"train_pass@{k}", "train_coverage", "train_concentration",
                "heldout_greedy_acc", f"heldout_pass@{k}"):
        print(f"{key:>22}: {h[key][0]:.3f} -> {h[key][-1]:.3f}")
    print("failure pattern:", fp)
    print(
        "dashboard flags:",
        dashboard_warnings({"reward": lab_steps["reward"], "entropy": lab_steps["entropy"]}),
    )
    if LAB_PROFILE == "smoke":
        assert all(fp.values()), "the smoke profile should show all five warning signs"
    print("first-step samples:", lab.samples["step_1"][:4])
    print("last-step samples: ", lab.samples[f"step_{gru_lab.PROFILES[LAB_PROFILE].steps}"][:4])

# %% [markdown]
# **Reproducibility check.** The smoke profile is deterministic: the same profile and functions give
# the same history on the same CPU build (one thread, seeded generators). The course ships the
# history its reference functions produced (`helpers/data/gru_lab_smoke.json`). With functions that
# compute the same numbers in the same order, on the CPU and torch float-kernel path that made the
# shipped history (its passport's `machine` entry names them; the cell prints it), your run matches it
# to the last digit (a step skipped in both, NaN in both, counts as a match). On another CPU the float rounding differs; so does a different but correct
# formula (another summation order, a hand-written std) in the last bits of float32. Either way a
# sampled token then flips and the histories part ways. That is a property of RL loops, not an
# error: judge your run by its failure pattern, and the match by where it starts.

# %%
SMOKE_FILE = gru_lab.SMOKE_HISTORY  # shipped with helpers/


def compare_histories(new: dict, old: dict, rtol: float = 1e-6) -> list[str]:
    """Keys whose values differ (beyond rtol) between two lab histories; timing keys ignored."""
    out = []
    for key in sorted(set(new) | set(old)):
        if key == "time_s":
            continue
        a, b = new.get(key), old.get(key)
        if a is None or b is None or len(a) != len(b):
            out.append(f"{key}: missing or of another length")
            continue
        bad = [
            i
            for i, (x, y) in enumerate(zip(a, b))
            if not (math.isnan(x) and math.isnan(y))  # no update ran in either: a match
            and not math.isclose(x, y, rel_tol=rtol, abs_tol=1e-9)
        ]
        if bad:
            out.append(
                f"{key}: first differs at index {bad[0]} ({a[bad[0]]:.6g} vs {b[bad[0]]:.6g})"
            )
    return out


if lab is None or LAB_PROFILE != "smoke":
    print("comparison with the stored smoke history: only after a full (non-smoke) run of the lab")
elif not SMOKE_FILE.is_file():
    print(f"{SMOKE_FILE} is not in this bundle; nothing to compare with")
else:
    stored = json.loads(SMOKE_FILE.read_text())
    same_profile = stored["passport"]["config_hash"] == lab.passport["config_hash"]
    diffs = compare_histories(lab.history, stored["history"])
    print("same profile (config_hash):", same_profile)
    print("the stored run was made on:", stored["passport"].get("machine", "(not recorded)"))
    print(
        "history identical to the stored run" if not diffs else f"{len(diffs)} keys differ, e.g.:"
    )
    print(*diffs[:6], sep="\n")
    print("stored failure pattern:", stored["failure_pattern"])

# %% [markdown]
# ## Your implementation, part 2: the simplified GRPO step (graded)
#
# **Assessment step 9.5.A6 (graded code, 9 points).**
#
# The BaseLM lab uses the course's simplified loop. It samples a fresh group at temperature 1 every step and takes
# **one** optimizer step on it, so the old policy equals the current one at the gradient and no ratio is
# needed. Per completion it needs one number, $\log\pi_\theta(o_i\mid q)$: the **sum** of the
# completion tokens' log-probs. The loss is
#
# $$\mathcal L(\theta)=-\frac1N\sum_{i}\widehat A_i\log\pi_\theta(o_i\mid q)\;+\;\beta\,\frac1N\sum_i k_3\big(\log\pi_\theta(o_i\mid q),\log\pi_{\text{ref}}(o_i\mid q)\big),$$
#
# with the means over the $N$ completions of the informative groups. Its gradient is
# $-\frac1N\sum_i\widehat A_i\nabla\log\pi_\theta(o_i)$ plus the leash: REINFORCE with the group mean
# as baseline, scaled by the group std [9.5-8].
#
# ### 5. `completion_log_prob` (3 points)
#
# The sampler returns left-padded prompts, the completion after them, an attention mask (1 on real
# tokens, 0 on left padding and on padding after EOS) and the **position ids** it used (each row
# counts its real tokens from 0). Rescoring must feed the model the same positions: a left-padded
# row whose positions start at the padding is a different input. Logits at column $j$ predict the
# token at column $j+1$; the completion starts at column $P$ = `prompt_len`. The classic pitfall: a
# sum that includes prompt tokens "reinforces the model's opinion of the question". A quick look on
# the tiny random model (`tiny_lm`), with a uniform-logits model (`UniformLM`: every logit 0, so
# every token has log-prob $-\log V$) as the hand-checkable case. Both are in
# `helpers/standins.py`, with the other stand-ins the tests below use: read them, they are the
# models and trainers your functions are graded on (the grader builds the same ones in its own
# process and runs the reference there).

# %%
_lm, _tk = tiny_lm(seed=1)
_s = sample_groups(_lm, _tk, ["Q: 2+2=? A:", "Q: 13+4=? A:"], 2, max_new_tokens=5,
                   generator=torch.Generator().manual_seed(0))
print("prompt_len P =", _s.prompt_len, "| completion lengths", _s.lengths.tolist())
print("attention mask of row 0 (left padding, then completion):\n", _s.attention_mask[0].tolist())
print("position ids of row 0:\n", _s.position_ids[0].tolist())
n_completion = int(_s.completion_mask.sum())
print(f"uniform model: completion-only sum must be -{n_completion} * log V = "
      f"{-n_completion * math.log(_tk.vocab_size):.4f}")


# %% [solution] id=completion_log_prob
def completion_log_prob(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_len: int,
    position_ids: torch.Tensor | None = None,
) -> torch.Tensor:
    """Sum of the log-probs of each row's completion tokens under ``model`` (teacher forcing).

    Args:
        model: a causal LM called once as ``model(input_ids=..., attention_mask=...,
            position_ids=...)``, returning an object with ``.logits`` of shape (N, L, V).
        input_ids: (N, L) long, prompt (left-padded) followed by the completion.
        attention_mask: (N, L) 0/1: 1 on real prompt tokens and on generated tokens up to and
            including EOS; 0 on left padding and on padding after EOS.
        prompt_len: P, the column where every row's completion starts (1 <= P <= L).
        position_ids: (N, L) long, the positions used at sampling; if None, derive them from the
            mask: ``cumsum(attention_mask) - 1`` clamped at 0.

    Returns:
        (N,) float tensor: for each row, the sum over columns j >= P with attention_mask == 1 of
        log softmax(logits[:, j - 1])[input_ids[:, j]]. Computed in float32 (or the logits' dtype
        if wider), differentiable with respect to the model's parameters. Prompt tokens and padding
        contribute nothing; a row without completion tokens gives 0.
    """
    ### BEGIN SOLUTION
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError(f"prompt_len must be in [1, {L}], got {prompt_len}")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(
        input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids
    ).logits
    wide = torch.promote_types(logits.dtype, torch.float32)  # float32, or float64 logits kept
    logp = logits[:, :-1].to(wide).log_softmax(dim=-1)  # (N, L-1, V): column j predicts token j+1
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)  # (N, L-1)
    target_col = torch.arange(1, L, device=input_ids.device)  # (L-1,) column of each target token
    keep = (target_col >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)  # (N, L-1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)
    ### END SOLUTION


# %% [tests] id=test_completion_log_prob points=3
_V = 7
_ids = torch.tensor([[0, 3, 4, 5, 6, 1, 0], [2, 3, 4, 5, 6, 6, 1]])  # P = 4
_msk = torch.tensor([[0, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]])
_out = completion_log_prob(UniformLM(_V), _ids, _msk, 4)
assert type(_out) is torch.Tensor and tuple(_out.shape) == (2,), "return a (N,) tensor"
_got = np.array(_out.detach().numpy(), dtype=np.float64)
assert np.allclose(_got, [-2 * math.log(_V), -3 * math.log(_V)], atol=1e-5), (
    f"uniform model: row 0 has 2 completion tokens (one is padding after EOS), row 1 has 3; expected "
    f"[{-2 * math.log(_V):.4f}, {-3 * math.log(_V):.4f}], got {_got}: count only columns >= "
    "prompt_len with attention_mask == 1 (prompt tokens and padding excluded)"
)

# %% [markdown]
# The pitfall, measured: on the tiny model's sample, the sum over *all* columns differs from the
# completion-only sum by the prompt's own log-probability, a term whose gradient would train the
# model on the question. The completion-only sums must equal the sampler's stored log-probs (same
# policy, same positions, temperature 1). Positions are a subtler case: with rotary embeddings
# (Qwen3, Llama) a constant shift of a row's positions cancels inside the attention scores, so
# `0..L-1` happens to agree here to float precision; with learned absolute positions (GPT-2) it
# does not, as the last line shows on a tiny random GPT-2 [9.5-9]. Pass the sampler's
# `position_ids` and the rescoring computes what the sampler computed, whatever the architecture.
# (This cell needs your `completion_log_prob`.)

# %%
try:
    with torch.no_grad():
        comp = completion_log_prob(
            _lm, _s.input_ids, _s.attention_mask, _s.prompt_len, _s.position_ids
        )
        whole = completion_log_prob(_lm, _s.input_ids, _s.attention_mask, 1, _s.position_ids)
        shifted = completion_log_prob(_lm, _s.input_ids, _s.attention_mask, _s.prompt_len,
                                      torch.arange(_s.input_ids.shape[1]).expand_as(_s.input_ids))
    behaviour = (_s.logprobs * _s.completion_mask).sum(1)  # stored by the sampler at T = 1
    print("completion only     :", comp.numpy())
    print("sampler's own sums  :", behaviour.numpy())
    print("prompt included     :", whole.numpy())
    print(
        f"positions 0..L-1    : max difference {float((shifted - comp).abs().max()):.1e} (RoPE: shift-invariant)"
    )
    assert torch.allclose(comp, behaviour, atol=1e-4)
    # the same two position choices on a tiny GPT-2 (learned absolute positions): they disagree
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    _gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=_tk.vocab_size, n_positions=64, n_embd=16,
                                       n_layer=1, n_head=2)).eval()
    with torch.no_grad():
        g_ok = completion_log_prob(_gpt2, _s.input_ids, _s.attention_mask, _s.prompt_len,
                                   _s.position_ids)
        g_shift = completion_log_prob(_gpt2, _s.input_ids, _s.attention_mask, _s.prompt_len,
                                      torch.arange(_s.input_ids.shape[1]).expand_as(_s.input_ids))
    print(f"GPT-2, positions 0..L-1: max difference {float((g_shift - g_ok).abs().max()):.1e} "
          "(learned absolute positions: not shift-invariant)")
    assert float((g_shift - g_ok).abs().max()) > 1e-3
except NotImplementedError:
    print("Implement completion_log_prob above to run this comparison.")

# %% [markdown]
# ### 6. `grpo_loss` (2 points)
#
# The simplified loss on sequence log-probs: $-(\widehat A\cdot\log\pi_\theta).\mathrm{mean}()+\beta\cdot
# \mathrm{KL}.\mathrm{mean}()$, with the estimator an explicit argument (default $k_3$). Advantages and
# reference log-probs are **constants**: no gradient may flow into them (a gradient into the
# reference would be the "unfrozen reference" pitfall in another form). The batch is fresh and
# on-policy, so by the gradient contract of part 1 the leash pulls along
# $\nabla\mathrm{KL}(\pi_{\text{ref}}\|\pi_\theta)$ over whole completions, while the logged `kl`
# estimates $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$ [9.5-14]. Autograd check of the
# gradient formula $\partial\mathcal L/\partial\log\pi_i=\big(-\widehat A_i+\beta(1-e^{d_i})\big)/N$ for
# $k_3$, on hand numbers:

# %%
_lp = torch.tensor([-1.0, -2.0], dtype=torch.float64, requires_grad=True)
_rf, _adv, _beta = (
    torch.tensor([-1.5, -1.5], dtype=torch.float64),
    torch.tensor([1.0, -1.0], dtype=torch.float64),
    0.1,
)
_d = _rf - _lp
_L = -(_adv * _lp).mean() + _beta * (_d.exp() - _d - 1).mean()
(_gr,) = torch.autograd.grad(_L, _lp)
_formula = (-_adv + _beta * (1 - _d.detach().exp())) / 2
print(f"loss {float(_L):.6f}; autograd grad {_gr.numpy()}; formula {_formula.numpy()}")
assert torch.allclose(_gr, _formula)


# %% [solution] id=grpo_loss
def grpo_loss(
    logp: torch.Tensor,
    ref_logp: torch.Tensor,
    advantages: torch.Tensor,
    kl_coef: float,
    kl_estimator: str = "k3",
) -> torch.Tensor:
    """Simplified GRPO loss of the BaseLM lab (to minimise), on one number per completion.

    loss = -(advantages * logp).mean() + kl_coef * kl_estimate(logp, ref_logp, kl_estimator).mean()

    Args:
        logp: (N,) sequence log-probs under the policy (summed completion tokens), with gradient.
        ref_logp: (N,) the same completions under the frozen reference; treated as a constant.
        advantages: (N,) group-relative advantages; treated as a constant.
        kl_coef: beta >= 0, the weight of the KL leash.
        kl_estimator: "k1", "k2" or "k3" (see ``kl_estimate``).

    Returns:
        0-dim tensor. Both means are over all N rows passed in. No gradient flows into
        ``ref_logp`` or ``advantages`` even if they require grad (detach them).
    """
    ### BEGIN SOLUTION
    A = advantages.detach()
    ref = ref_logp.detach()
    pg = -(A * logp).mean()
    kl = kl_estimate(logp, ref, kl_estimator).mean()
    return pg + kl_coef * kl
    ### END SOLUTION


# %% [tests] id=test_grpo_loss points=2
_lp = torch.tensor([-1.0, -2.0], dtype=torch.float64, requires_grad=True)
_rf = torch.tensor([-1.5, -1.5], dtype=torch.float64)
_ad = torch.tensor([1.0, -1.0], dtype=torch.float64)
_out = grpo_loss(_lp, _rf, _ad, 0.0)
assert type(_out) is torch.Tensor and _out.ndim == 0, "return a 0-dim tensor"
assert math.isclose(float(_out.detach()), -0.5, abs_tol=1e-12), (
    f"without KL the loss is -(A * logp).mean() = -((1)(-1) + (-1)(-2)) / 2 = -0.5, got {float(_out.detach())}: "
    "check the sign (a loss to MINIMISE) and the mean"
)
_out = grpo_loss(_lp, _rf, _ad, 0.1)
_k3 = ((math.exp(-0.5) + 0.5 - 1) + (math.exp(0.5) - 0.5 - 1)) / 2
assert math.isclose(float(_out.detach()), -0.5 + 0.1 * _k3, rel_tol=1e-9), (
    f"with kl_coef=0.1 and k3: expected {-0.5 + 0.1 * _k3:.7f}, got {float(_out.detach()):.7f}"
)

# %% [markdown]
# ### 7. `train_step` (4 points)
#
# One step of the trainer (`helpers.trainer.GRPOTrainer`), which calls `train_step(trainer, tasks)`
# with `trainer.config.prompts_per_step` tasks. The trainer gives you `trainer.sample(tasks)` (K =
# `trainer.config.k` completions per task at temperature 1, with its seeded generator),
# `trainer.score(tasks, sample)` ((N,) rewards), `trainer.policy`, `trainer.reference`,
# `trainer.config.kl_coef` and `trainer.update`, which takes the loss and does zero grads, backward,
# gradient clipping and the optimizer step.
# The skip rule: a degenerate group teaches nothing, so it is dropped; when every group is
# degenerate there is no forward pass and no update, and the KL and entropy entries are **NaN**
# (nothing was measured: a zero would claim "no drift").


# %% [solution] id=train_step
def train_step(trainer: GRPOTrainer, tasks: list[Task]) -> dict[str, float]:
    """One simplified-GRPO step: sample -> verify -> advantages -> update if informative.

    B = len(tasks) groups of K = trainer.config.k completions; rows of task b are [b*K, (b+1)*K).
      1. draw with trainer.sample(tasks), score with trainer.score(tasks, sample): (N,) = (B*K,)
      2. adv = group_advantages(rewards.view(B, K)); a group is informative iff its rewards are
         not all equal.
      3. No informative group: return without a forward pass or trainer.update.
      4. Otherwise, on the rows of informative groups only (degenerate groups are DROPPED, not
         zero-weighted): logp = completion_log_prob(policy, ...) with gradient; ref_logp the same
         with the reference under torch.no_grad(); both with the sample's input_ids,
         attention_mask, prompt_len and position_ids. loss = grpo_loss(logp, ref_logp, adv_rows,
         trainer.config.kl_coef) (k3); one call of trainer.update with that loss.

    Returns a dict of Python numbers:
        "reward":  mean of all N rewards (float);
        "kl":      mean k3 estimate over the informative rows, from the same forward pass (before
                   the update); NaN when skipped;
        "entropy": sampled entropy: mean of -sample.logprobs over the completion tokens
                   (sample.completion_mask) of the informative rows; NaN when skipped;
        "skipped": number of degenerate groups (int); "groups": B (int);
        "loss":    the loss value (float); NaN when skipped.
    """
    ### BEGIN SOLUTION
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)  # (N,)
    grouped = rewards.view(B, K)  # (B, K)
    adv = group_advantages(grouped).reshape(-1)  # (N,)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values  # (B,)
    out = {
        "reward": float(rewards.mean()),
        "kl": math.nan,
        "entropy": math.nan,
        "skipped": int((~informative).sum()),
        "groups": B,
        "loss": math.nan,
    }
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)  # (N,) bool
    ids, mask = sample.input_ids[rows], sample.attention_mask[rows]
    pos, P = sample.position_ids[rows], sample.prompt_len
    logp = completion_log_prob(trainer.policy, ids, mask, P, pos)  # (n,)
    with torch.no_grad():  # the reference is a constant of the loss
        ref_logp = completion_log_prob(trainer.reference, ids, mask, P, pos)  # (n,)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out
    ### END SOLUTION


# %% [tests] id=test_train_step points=4
# tiny_trainer (helpers/standins.py): a tiny random Qwen3 with LoRA (B initialised non-zero) and its
# frozen copy as reference; here the verifier gives every completion reward 1.0
_tr = tiny_trainer(train_step, "always", 1.0)
_before = param_state(_tr.policy)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _row = _tr.run_step()
for _key in ("reward", "kl", "entropy", "skipped", "groups"):
    assert _key in _row, f"train_step must return {_key!r}"
assert _row["skipped"] == 2 and _row["groups"] == 2, (
    f"all rewards equal: both groups are degenerate, expected skipped=2 of groups=2, got {_row}"
)
assert math.isnan(_row["kl"]) and math.isnan(_row["entropy"]), (
    f"a step that measured nothing must report NaN kl/entropy (not 0): got kl={_row['kl']}, entropy={_row['entropy']}"
)
assert _tr.updates == 0, "no optimizer step may run when every group is degenerate"
_after = param_state(_tr.policy)
assert all(np.array_equal(_before[n_], _after[n_]) for n_ in _before), (
    "parameters changed on a skipped step"
)

# %% [markdown]
# ## 9.5.4 Lab, part 2: simplified GRPO on BaseLM
#
# BaseLM is this course's small "pretrained" model: a 4-layer Qwen3-architecture transformer
# (about 1.6M parameters) with a character tokenizer, pretrained on a synthetic corpus with
# deliberate flaws, so that its groups mix successes and failures. It knows the sums ("a+b=s"
# lines), but in the arithmetic-choice Q/A of its corpus the answer takes the second option only
# when that option is the sum, and even then only 40% of the time (a position bias): greedily it
# mostly answers the first option, while at temperature 1 it sometimes answers a correct second
# one. That is a skill RL can sharpen, and it transfers: held-out prompts (operand pairs with
# $(3a+5b) \bmod 7 = 0$; no such *ordered* pair is in the corpus or in training) use the same digit
# facts and carries as the training pairs, only in new combinations. The rule is not symmetric: for
# 988<!--fig:9.5:swapped_in_train--> of the 1157<!--fig:9.5:heldout_pairs--> held-out pairs the
# swapped pair $(b, a)$, with the same sum, belongs to the training pool (it is held out only when
# 7 divides both operands), so "held out" means a new ordered pair, not a new sum. The main run's
# cell therefore reports its held-out result twice more: on the prompts held out in both orders
# (the other 169<!--fig:9.5:both_orders_pairs--> pairs: neither $a+b$ nor $b+a$ is in the training
# pool, so no run can have been asked either) and on the rest. The cell prints how many of the
# held-out prompts fall in each set; the first is small, so its interval is wide, and two subgroup
# intervals side by side are not a test of a difference between the subgroups. Format items
# starting with m-z are mostly left unclosed. Its own passport records the corpus hash, the training settings, the weights hash and
# the CPU it was built on.
#
# **What you will reproduce exactly, and what varies with your CPU.** The course ships one build
# of BaseLM (`helpers/data/baselm/`; `./baselm.sh` checks its hash and installs it), so everyone
# starts from the same weights: the weights hash and the figures "measured when BaseLM was built"
# printed below are the same on every machine. Everything computed after that (sampling, LoRA
# updates, the pass rates after a run) runs through your CPU's floating-point kernels; Intel with
# AVX-512, AMD with AVX2 and Apple silicon round the last bits differently, and an RL loop
# amplifies that, so your runs' numbers differ from the course's. On one machine the same seed
# gives the same numbers. A run on another machine is compared by its pattern and its intervals,
# never digit by digit: each before/after pass rate below is printed with a 95% paired interval
# over the held-out prompts (`helpers.stats.paired_difference`, Tango's score interval), and an
# interval that contains 0 reads "no difference measured". (`./baselm.sh --rebuild` pretrains
# BaseLM on your own CPU instead; then even the starting figures differ, within the band in
# `helpers.baselm.CALIBRATION`.)
#
# Every experiment below gets a **fresh pair**: a BaseLM with rank-8 LoRA adapters on the query and
# value projections (base frozen; the adapters start at a zero delta, with their random $A$ drawn
# from a fixed seed), and a *second*, untouched BaseLM as the frozen reference. One pair is
# released (`del` + `gc.collect()`) before the next is loaded, so runs cannot leak into each other
# and memory does not pile up. Each run writes its passport (trainer config, data-and-verifier
# passport, update contract, hashes of the initial adapters and the base weights) and its history
# into `runs/<name>/`.
#
# **Practical notes.** *Generation dominates the wall clock:* every step samples $K$ completions
# token by token before a single gradient is taken, so a run can need fewer optimizer steps than a
# supervised fine-tune and still take longer; `report` below prints the measured share (the
# trainer times its sampling). The completion caps (12 tokens for the format task, 8 for
# arithmetic choice) are what keep these runs to minutes. *Memory:* the policy still holds all
# BaseLM weights and the reference is a second full model; only the adapters carry gradients and
# AdamW state, and each pair is released before the next is loaded. *Apple silicon:* the sampler and
# the trainer keep their tensors on the model's device, so on a Mac PyTorch's MPS backend
# (`torch.backends.mps.is_available()`) is the place to try for speed; the course measured its
# times on the CPU only and claims nothing for MPS. Close other notebook kernels before the required
# runs: on a 2-core laptop they compete for the same cores [9.5-18].


# %%
pairs = [(a, b) for a in range(10, 100) for b in range(10, 100) if is_heldout(a, b)]
swapped = sum(not is_heldout(b, a) for a, b in pairs)  # (b, a) in the training pool
print(f"held-out pairs {quote('9.5:heldout_pairs', len(pairs))}; with the swapped pair in the training "
      f"pool: {quote('9.5:swapped_in_train', swapped)}")
assert all(is_heldout(b, a) == (a % 7 == 0 and b % 7 == 0) for a, b in pairs)
both = sum(both_orders_heldout(f"Q: {a}+{b}=?") for a, b in pairs)
assert both == len(pairs) - swapped
print("held out in both orders:", quote("9.5:both_orders_pairs", both))

# %%
HAVE_BASELM = RUN_LABS and BASELM_OK
if not HAVE_BASELM:
    print(
        "BaseLM lab skipped:", "autograder run" if not RUN_LABS else f"no artifact ({BASELM_WHY})"
    )
else:
    BASELM_PASSPORT = json.loads((baselm_dir() / "passport.json").read_text())
    print(BASELM_PASSPORT["name"], "| params", BASELM_PASSPORT["model"]["parameters"],
          "| weights sha256", BASELM_PASSPORT["weights_sha256"][:16], "| versions", BASELM_PASSPORT["versions"])
    for fam, fig_ in BASELM_PASSPORT["figures"].items():
        print(f"  {fam}: greedy held-out pass {fig_['greedy_pass_rate']:.2f}, informative groups "
              f"{fig_['informative_fraction']:.2f} (measured when BaseLM was built)")

# One seed decides the BaseLM runs below: the LoRA adapters' initialisation of every run, and the
# trainer's seed (prompt order, sampling) of every arithmetic run (the format smoke test of
# exercise 2 keeps trainer seed 0). The course's record runs the lab with seeds 0, 1 and 2 (set the
# environment variable COURSE_LAB_SEED before starting Jupyter to pick another); a result that
# holds for one seed only is an anecdote.
LAB_SEED = int(os.environ.get("COURSE_LAB_SEED", "0"))
N_EVAL = 32 if SMOKE else 200  # held-out draws for the greedy pass rate (repeats dropped)
N_TRAIN = 4000  # training prompts per run (drawn from the train pool; a run sees about 2,000)
STEPS = {"format": 4 if SMOKE else 10, "arith": 8 if SMOKE else 250, "sweep": 8 if SMOKE else 30}
ARITH_CONFIG = TrainerConfig(
    k=8,
    max_new_tokens=8,
    temperature=1.0,
    lr=5e-3,
    kl_coef=0.05,
    prompts_per_step=8,
    seed=LAB_SEED,
    grad_clip=1.0,
)
print("seed:", LAB_SEED, "| steps per run:", STEPS, "| held-out prompts:", N_EVAL)


def fresh_pair(lora_seed: int = LAB_SEED):
    """(LoRA policy on a fresh BaseLM, a second frozen BaseLM as reference, tokenizer)."""
    base, tok = load_baselm()
    policy = add_lora(base, r=8, alpha=16, target_modules=("q_proj", "v_proj"), seed=lora_seed)
    ref = load_reference(load_baselm)  # a separate copy, requires_grad False, eval mode
    return policy, ref, tok


def unique_tasks(tasks: list[Task]) -> list[Task]:
    """Drop repeated prompts (held-out pools can be small), keeping the first occurrence."""
    seen, out = set(), []
    for t in tasks:
        if t.prompt not in seen:
            seen.add(t.prompt)
            out.append(t)
    return out


# Which held-out prompts judge the arithmetic runs. Stream 0 (the default) is the one the lab was
# tuned on: the learning rate was chosen on it and BaseLM's build measured its figures on it. The
# course's replication sets COURSE_LAB_HELDOUT=1: prompts drawn with another seed whose question
# ("Q: 65+94", whatever its options) is none of those in stream 0's first TUNING_DRAWS draws (more
# than the lab's tuning on stream 0 and BaseLM's build read), as many as stream 0 gives. The format
# family's held-out pool has only 30 items, so format runs are scored on all of them, each once,
# whatever the stream.
HELDOUT_STREAM = int(os.environ.get("COURSE_LAB_HELDOUT", "0"))
TUNING_DRAWS = 400


def heldout_tasks(family: str, n: int | None = None) -> list[Task]:
    """The held-out prompts of ``family`` for this lab: for "format" its whole held-out pool
    (``n`` unused); otherwise the distinct prompts among ``n`` draws of stream 0, or for
    another HELDOUT_STREAM as many distinct prompts of that stream whose question stream 0 never
    tuned on."""
    if family == "format":
        return format_pool_tasks("heldout")
    if n is None:
        raise ValueError(f"heldout_tasks({family!r}) needs n, the number of draws")
    tasks = unique_tasks(make_tasks(family, n, "heldout", 0))
    if HELDOUT_STREAM == 0:
        return tasks

    def question(t: Task) -> str:
        return t.prompt.split("=?")[0]

    tuned = {question(t) for t in make_tasks(family, TUNING_DRAWS, "heldout", 0)}
    fresh = unique_tasks(make_tasks(family, 10 * n, "heldout", HELDOUT_STREAM))
    fresh = [t for t in fresh if question(t) not in tuned][: len(tasks)]
    assert len(fresh) == len(tasks), f"held-out stream {HELDOUT_STREAM} ran short: {len(fresh)}"
    return fresh


def adapter_hash(model) -> str:
    return tensor_hash(torch.cat([v.flatten() for v in adapter_state(model).values()]))


def step_ready() -> bool:
    """True when your graded step functions run: a one-step probe on the tiny random model."""
    try:
        net, tk = tiny_lm(0)
        probe = GRPOTrainer(add_lora(net), load_reference(tiny_lm(0)[0]), tk,
                            make_tasks("arithmetic_choice", 2), lambda task, c: float(len(c) % 2),
                            train_step=train_step, config=TrainerConfig(k=4, max_new_tokens=3))
        probe.run_step()
        return True
    except NotImplementedError:
        print(
            "The BaseLM runs need your train_step and its pieces (part 2 above); they are skipped."
        )
        return False


RUN_BASELM = HAVE_BASELM and step_ready()

# %% [markdown]
# ### Exercise 1: build the LoRA policy and baseline it
#
# Trainable fraction first; then two refusals (the pitfalls "a reference model that isn't
# frozen" and "optimising every BaseLM parameter"); then the greedy held-out baseline and the
# **initial pass-rate distribution**: per held-out prompt, the share of $K=8$ samples at $T=1$ that
# pass. That histogram decides how much signal the groups will carry (lesson 9.1's $P_{\text{info}}$)
# and belongs in the data passport. Estimate the mean $P_{\text{info}}(p, 8)$ from it with care:
# plugging each prompt's observed rate $\hat p = c/8$ into $1 - \hat p^8 - (1 - \hat p)^8$ is biased
# low, while the share of prompts whose 8 draws were mixed is unbiased, since those draws are a
# group of $K = 8$ (the cell after the histogram checks both claims by exact enumeration). In the
# course's record the plug-in gave 0.43, while 26 of the 48 groups (0.54) were mixed.

# %%
if HAVE_BASELM:
    policy, ref, tok = fresh_pair()
    n_tr, n_all, frac = (sum(p.numel() for p in policy.parameters() if p.requires_grad),
                         sum(p.numel() for p in policy.parameters()), None)
    print(describe_trainable(policy))
    print(f"trainable fraction = {n_tr} / {n_all} = {n_tr / n_all:.4%}")
    fmt_train = make_tasks("format", 64, "train", 0)
    for label, make in [
        ("raw, unfrozen BaseLM as the policy", lambda: GRPOTrainer(load_baselm()[0], ref, tok, fmt_train, verify_format, train_step=train_step)),
        ("a reference with trainable weights", lambda: GRPOTrainer(policy, load_baselm()[0], tok, fmt_train, verify_format, train_step=train_step)),
    ]:
        try:
            make()
            print(f"{label}: accepted (unexpected)")
        except ValueError as e:
            print(f"{label}: refused -> {str(e)[:150]}...")


INITIAL_PASSPORT = None  # filled below when BaseLM is here


def initial_pass_rates(policy, tok, tasks, verifier, k=8, seed=123) -> np.ndarray:
    """Per-task share of k samples (T = 1, own generator) that pass: the initial difficulty profile."""
    s = sample_groups(policy, tok, [t.prompt for t in tasks], k, max_new_tokens=8,
                      generator=torch.Generator().manual_seed(seed))
    r = torch.tensor([verifier(tasks[g], c) for g, c in zip(s.group.tolist(), s.texts)])
    return r.view(len(tasks), k).mean(dim=1).numpy()


if HAVE_BASELM:
    ar_held = heldout_tasks("arithmetic_choice", N_EVAL)
    fmt_held = heldout_tasks("format")
    base_trainer = GRPOTrainer(policy, ref, tok, fmt_train, verify_format, train_step=train_step,
                               config=TrainerConfig(max_new_tokens=12))
    print(
        f"greedy held-out pass rate, format ({len(fmt_held)} items): {base_trainer.evaluate(fmt_held):.3f}"
    )
    print(f"greedy held-out pass rate, arithmetic choice ({len(ar_held)} prompts): "
          f"{base_trainer.evaluate(ar_held, verifier=verify_arithmetic, max_new_tokens=8):.3f}")
    INITIAL = initial_pass_rates(policy, tok, ar_held[:48], verify_arithmetic)
    fig, ax = plt.subplots(figsize=(5, 2.6))
    ax.hist(INITIAL, bins=np.linspace(0, 1, 10), edgecolor="k")
    ax.set_xlabel("per-prompt pass rate at T=1 (K=8)")
    ax.set_ylabel("held-out prompts")
    ax.set_title("initial pass-rate distribution, arithmetic choice", fontsize=10)
    plt.show()
    # Two estimates of the mean P_info(p, 8) over these prompts. The share of prompts whose 8 draws
    # were mixed is unbiased (E[1{0 < c < 8}] = 1 - p^8 - (1 - p)^8 exactly: the draws ARE a group of
    # K = 8); the plug-in mean of 1 - p^8 - (1 - p)^8 at p = c/8 is biased low (Jensen: p^8 is convex,
    # so E[(c/8)^8] >= p^8, and likewise for 1 - p). The passport keeps both ("p_info": the plug-in).
    informative_share = float(np.mean((INITIAL > 0) & (INITIAL < 1)))
    p_info = float(np.mean(1 - INITIAL**8 - (1 - INITIAL) ** 8))
    INITIAL_PASSPORT = {  # goes into every arithmetic run's data passport ("initial_pass_rate")
        "prompts": len(INITIAL), "k": 8, "temperature": 1.0, "sampler_seed": 123,
        "mean": float(INITIAL.mean()), "p_info": p_info, "informative_share": informative_share,
        "histogram": np.histogram(INITIAL, bins=np.linspace(0, 1, 10))[0].tolist(),
    }
    print(f"share of these prompts whose 8 draws were mixed (unbiased for the mean P_info(p, 8)): "
          f"{informative_share:.2f}; plug-in mean P_info(c/8, 8): {p_info:.2f} (biased low)")
    del base_trainer, policy, ref
    gc.collect()

# The two estimators by exact enumeration over c ~ Binomial(8, p): the mixed-group indicator is
# unbiased, the plug-in is below P_info(p, 8) for every p strictly between 0 and 1.
_c = np.arange(9)
for _p in np.linspace(0.05, 0.95, 19):
    _w = np.array([math.comb(8, int(c)) * _p**c * (1 - _p) ** (8 - c) for c in _c])  # P(c)
    _truth = 1 - _p**8 - (1 - _p) ** 8
    assert abs(_w @ ((_c > 0) & (_c < 8)) - _truth) < 1e-12
    assert _w @ (1 - (_c / 8) ** 8 - (1 - _c / 8) ** 8) < _truth

# %% [markdown]
# One function runs every experiment the same way: fresh pair, passport, baseline, training with
# the dashboard, final greedy evaluation scored by every verifier given, samples, saved files, and
# the pair released.


# %%
def run_experiment(name: str, family: str, verifier, config: TrainerConfig, steps: int,
                   eval_verifiers: dict, lora_seed: int = LAB_SEED, n_train: int = N_TRAIN) -> dict:
    """One BaseLM run from a fresh pair; returns plain data (the models are released)."""
    policy, ref, tok = fresh_pair(lora_seed)
    train = make_tasks(family, n_train, "train", config.seed)
    held = heldout_tasks(family, N_EVAL)
    trainer = GRPOTrainer(policy, ref, tok, train, verifier, train_step=train_step, config=config)
    init = {"adapters": adapter_hash(policy), "base": base_state_hash(policy)}
    group_std = []  # per step: mean over groups of the WITHIN-group population std of the rewards
    score = trainer.score

    def score_and_log(tasks, sample, *args, **kw):  # observes the rewards; changes nothing
        r = score(tasks, sample, *args, **kw)
        if sample.k > 1:  # a training group (greedy evaluation samples one completion per task)
            group_std.append(float(r.view(len(tasks), -1).std(dim=1, unbiased=False).mean()))
        return r

    trainer.score = score_and_log
    budget = config.eval_max_new_tokens or config.max_new_tokens

    def greedy():  # one greedy pass, scored by every verifier
        _, rows = trainer.evaluate(held, max_new_tokens=budget, return_samples=True)
        return [
            (t, c, {n: v(t, c) for n, v in eval_verifiers.items()})
            for t, (_, c, _) in zip(held, rows)
        ]

    before = greedy()
    dash = Dashboard()
    first_eval = next(iter(eval_verifiers.values()))
    in_run = []  # (step, [(prompt, completion), ...]) of each evaluation during training
    evaluate = trainer.evaluate

    def evaluate_and_keep(tasks, verifier=None, **kw):  # keeps the completions; changes nothing
        rate, rows = evaluate(tasks, verifier=verifier, return_samples=True, **kw)
        in_run.append((trainer.step, [(p, c) for p, c, _ in rows]))  # a later rule can rescore them
        return rate

    trainer.evaluate = evaluate_and_keep
    trainer.train(
        steps,
        dashboard=dash,
        eval_tasks=held,
        eval_every=max(1, steps // 4),
        eval_verifier=first_eval,
    )
    trainer.evaluate = evaluate
    after = greedy()
    rate = {when: {n: float(np.mean([r[n] for _, _, r in rows])) for n in eval_verifiers}
            for when, rows in (("before", before), ("after", after))}
    passport = trainer.passport(
        experiment=name,
        data=data_passport(family, train, held, verifier, config.seed,
                           initial=INITIAL_PASSPORT if family == "arithmetic_choice" else None),
        update=UPDATE_CONTRACT,
        initial_weights={"adapters": init["adapters"], "base": init["base"],
                         "baselm_sha256": json.loads((baselm_dir() / "passport.json").read_text())["weights_sha256"]},
        evaluation={"verifiers": {n: v.passport for n, v in eval_verifiers.items()},
                    "decoding": "greedy", "max_new_tokens": budget, "pass_rate": rate},
        lora={"r": 8, "alpha": 16, "target_modules": ["q_proj", "v_proj"], "seed": lora_seed},
    )
    out_dir = RUN_DIR / name
    save_passport(passport, out_dir / "passport.json")
    dash.to_json(out_dir / "history.json")
    (out_dir / "heldout.json").write_text(json.dumps({  # per-prompt outcomes, for paired intervals
        "prompts": [t.prompt for t, _, _ in before],
        **{when: {n: [r[n] for _, _, r in rows] for n in eval_verifiers}
           for when, rows in (("before", before), ("after", after))},
        "after_completions": [c for _, c, _ in after],
    }))
    h = trainer.history
    result = {
        "name": name, "passport": passport, "history": dash.history, "rate": rate,
        "before": before, "after": after, "trainable": describe_trainable(policy),
        "attempts": int(sum(h["groups"])), "skips": int(sum(h["skipped"])), "updates": trainer.updates,
        "last_sample": list(zip(trainer.last_sample.texts, trainer.last_rewards.tolist())),
        "base_unchanged": base_state_hash(policy) == init["base"], "group_reward_std": group_std,
        "in_run_completions": in_run,
    }
    trainer.check_reference()  # the reference is bit-for-bit what was loaded
    del trainer, policy, ref  # release the pair before the next experiment
    gc.collect()
    print(f"{name}: {result['attempts']} groups attempted, {result['skips']} skipped, "
          f"{result['updates']} updates; saved to {out_dir}")
    return result


def report(res: dict) -> None:
    """Held-out pass rates before/after and the training diagnostics of a run."""
    print(f"== {res['name']} | {res['trainable']}")
    for n in res["rate"]["before"]:  # the same prompts scored twice: a paired interval
        d = paired_difference(
            [r[n] for _, _, r in res["before"]], [r[n] for _, _, r in res["after"]]
        )
        print(f"  held-out greedy pass ({n}): {d}")
    h = res["history"]
    nan_kl = int(np.isnan(np.array(h["kl"], dtype=float)).sum())
    print(f"  training reward first/last 3 steps: {np.mean(h['reward'][:3]):.2f} / {np.mean(h['reward'][-3:]):.2f}; "
          f"KL last {np.nanmean(h['kl'][-3:]) if nan_kl < len(h['kl']) else float('nan'):.4f}; "
          f"steps with no measurement (NaN KL): {nan_kl}; base weights unchanged: {res['base_unchanged']}")
    if "gen_s" in h and "time_s" in h and np.nansum(h["time_s"]) > 0:
        print(f"  generation took {np.nansum(h['gen_s']) / np.nansum(h['time_s']):.0%} of the training "
              "steps' wall-clock time")


# %% [markdown]
# ### Exercise 2: smoke-test the loop on the format task
#
# Ten rollout steps against `verify_format` (did the completion close the prompt's `{"answer":`
# object?). A degenerate group is a *rollout* but not an *update*: report attempts and skips. The
# result is the held-out pass rate before and after; the training reward and the skip count are
# diagnostics of the loop, not the result.

# %%
fmt_res = None
if RUN_BASELM:
    fmt_cfg = TrainerConfig(
        k=8, max_new_tokens=12, lr=2e-3, kl_coef=0.05, prompts_per_step=2, seed=0
    )
    fmt_res = run_experiment("format_smoke", "format", verify_format, fmt_cfg, STEPS["format"],
                             {"format": verify_format})
    report(fmt_res)
    print("held-out greedy completions after:", [c for _, c, _ in fmt_res["after"][:4]])

# %% [markdown]
# ### Exercise 3: the main run, arithmetic choice
#
# A fresh pair (the format run's adapters are gone). Each prompt gives a two-digit addition and two
# options; the final-answer verifier scores the last integer of the completion. 250 steps of 8
# prompts x K = 8 completions at lr 5e-3 (under a minute on 2 cores). The result is the held-out
# greedy pass rate with its paired interval; read it with the reward, KL, sampled entropy, skips
# and the completions themselves, and split it by where the correct option stands: a policy that
# learned "answer the second option when it is the sum" gains on the second-position prompts and
# keeps the first-position ones. It is split a second way too, by whether the swapped pair belongs
# to the training pool (see the split above). The course ran this with seeds 0, 1 and 2 and recorded every
# number in its claims registry [9.5-11]; improvement is an empirical question, so compare your run
# with that record by its interval and its pattern, not digit by digit.

# %%
main_res = None
if RUN_BASELM:
    main_res = run_experiment("arith_main", "arithmetic_choice", verify_arithmetic, ARITH_CONFIG,
                              STEPS["arith"], {"strict": verify_arithmetic, "sloppy": verify_arithmetic_sloppy})
    report(main_res)
    for where, first in (("first", True), ("second", False)):  # where the correct option stands
        pairs = [(rb["strict"], ra["strict"]) for (t, _, rb), (_, _, ra) in zip(main_res["before"], main_res["after"])
                 if (t.meta["options"][0] == int(t.answer)) == first]
        print(f"  correct option listed {where} ({len(pairs)} prompts): "
              f"{paired_difference(*zip(*pairs)) if pairs else 'none'}")
    for where, both in (("held out in both orders", True), ("swapped pair in the training pool", False)):
        pairs = [(rb["strict"], ra["strict"]) for (t, _, rb), (_, _, ra) in zip(main_res["before"], main_res["after"])
                 if both_orders_heldout(t.prompt) == both]
        print(f"  {where} ({len(pairs)} prompts): {paired_difference(*zip(*pairs)) if pairs else 'none'}")
    display(plot_dashboard(main_res["history"], title="BaseLM arithmetic choice: simplified GRPO",
                           labels={"entropy": "entropy (sampled surprisal, informative rows)",
                                   "kl": "kl (k3, informative rows)"}))
    print("last training group (completion, reward):", main_res["last_sample"][:8])
    print("greedy held-out after (prompt -> completion, strict):")
    for t, c, r in main_res["after"][:6]:
        print(f"  {t.prompt} -> {c!r}  {r['strict']:.0f}")

# %% [markdown]
# Two things to read in the dashboard. **Gaps are not zeros:** on a step whose groups were all
# degenerate nothing was rescored, so `kl` and `entropy` are NaN there and their panels say "not
# measured" (a 0 would claim "no drift from the reference"). **The reward is a claim:** it is the
# verifier's opinion of *sampled training* completions; the evidence is the held-out greedy pass
# rate and the samples.
#
# ### Exercise 4: audit a sloppy verifier
#
# Reset to the **same** seeded initialisation (same LoRA seed, same trainer seed, same prompts) and
# change only the reward: `verify_arithmetic_sloppy` gives 1 when the answer appears *anywhere* in
# the completion. Then score the result with both verifiers. Before reading any number, check that
# the comparison is clean: the two passports must differ in the verifier and in nothing that
# decides the start.

# %%
sloppy_res = None
if RUN_BASELM:
    sloppy_res = run_experiment("arith_sloppy", "arithmetic_choice", verify_arithmetic_sloppy, ARITH_CONFIG,
                                STEPS["arith"], {"strict": verify_arithmetic, "sloppy": verify_arithmetic_sloppy})
    report(sloppy_res)
    d = diff_passports(main_res["passport"], sloppy_res["passport"])
    start = {k: v for k, v in d.items() if k.startswith(("config", "extra.initial_weights", "extra.lora",
                                                          "extra.reference_fingerprint", "extra.tasks"))}
    print(
        "fields that differ:",
        sorted(k for k in d if not k.startswith("extra.evaluation.pass_rate")),
    )
    print("differences in what decides the start (must be none):", start)
    assert not start and any(k.startswith("verifier") for k in d)
    assert (
        main_res["passport"]["extra"]["initial_weights"]
        == sloppy_res["passport"]["extra"]["initial_weights"]
    )

# %% [markdown]
# Now the audit proper. Greedy held-out generations of the sloppy-trained policy, scored by both
# verifiers, and the completions on which they disagree (sloppy says 1, strict says 0): those are
# the exploit, if the run found one. The count is a lower bound: an echo that ends in the sum
# (`" 79 or 81"`) games the sloppy rule and is paid by the strict one too, so it is not counted here
# (the patched rule below counts it). A finite run may not find the exploit at all, and that is a
# result too, to be reported as "not found in N steps", not "the verifier is safe".

# %%
if RUN_BASELM:
    for res in (main_res, sloppy_res):
        rows = res["after"]
        hacked = [(t.prompt, c) for t, c, r in rows if r["sloppy"] == 1 and r["strict"] == 0]
        print(f"{res['name']}: strict {res['rate']['after']['strict']:.3f}, sloppy {res['rate']['after']['sloppy']:.3f}; "
              f"sloppy-only passes (exploit candidates): {len(hacked)} of {len(rows)}")
        for pr, c in hacked[:5]:
            print(f"    {pr} -> {c!r}")
    print("sloppy run, greedy held-out generations:")
    for t, c, r in sloppy_res["after"][:8]:
        print(f"  {t.prompt} -> {c!r}   strict {r['strict']:.0f} sloppy {r['sloppy']:.0f}")
    print("sloppy run, last training group:", sloppy_res["last_sample"][:8])

# %% [markdown]
# **Closing the specification gap.** The intended property is "the completion commits to the
# correct option". The final-answer verifier is closer to it than the substring rule, but it still
# accepts `" 79 or 81"` (it reads the last integer). A patch states the property as a rule: the
# completion, stripped of spaces and one trailing period, must be a single integer, it must be one
# of the two options, and it must be the sum. The patch is a new verifier with its own name,
# version and passport, and it is tested on the review sample *and* on the audit's completions
# before it is used for training. Note what it costs: `" The answer is 81"` becomes a false
# negative. Stricter is not free; the passport records the trade.


# %%
def _exact_choice(task: Task, completion, *, max_chars: int) -> Verdict:
    if not isinstance(completion, str):
        return Verdict(0.0, "invalid_input")
    if len(completion) > max_chars:
        return Verdict(0.0, "too_long")
    text = completion.strip().removesuffix(".").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 6:  # str.isdigit alone: "٨١", "²"
        return Verdict(
            0.0, "parse_error" if last_number(text) else "no_answer", {"text": text[:40]}
        )
    value = int(text)
    options = task.meta.get("options", ())
    if value not in options:
        return Verdict(0.0, "wrong", {"value": value, "not_an_option": True})
    ok = value == int(task.answer)
    return Verdict(float(ok), "correct" if ok else "wrong", {"value": value})


verify_choice_exact = Verifier(
    "arithmetic_choice_exact",
    "1.1",
    (
        "completion stripped of spaces and one trailing '.' must be a single integer (ASCII digits)",
        "the integer must be one of the task's two options, and equal to task.answer",
        "anything else (words, several numbers, both options) scores 0 with its category",
        "completions over max_chars characters are too_long; non-str is invalid_input",
    ),
    {"max_chars": 200},
    _exact_choice,
)
rates = review_rates(verify_choice_exact)
print(f"patch on the review sample: FP rate {quote('9.5:review_fp_exact', rates['false_positive_rate'])}, "
      f"FN rate {quote('9.5:review_fn_exact', rates['false_negative_rate'])}", rates)
for c, y in REVIEW:
    print(f"  {c!r:<22} label {y}  exact {verify_choice_exact(REVIEW_TASK, c):.0f}")
if RUN_BASELM:
    rows = sloppy_res["after"]
    exact = np.mean([verify_choice_exact(t, c) for t, c, _ in rows])
    print(f"sloppy-trained policy, held-out greedy: strict {sloppy_res['rate']['after']['strict']:.3f}, "
          f"sloppy {sloppy_res['rate']['after']['sloppy']:.3f}, patched {exact:.3f}")
    print("patch passport:", verify_choice_exact.passport["config_hash"])

# %% [markdown]
# **The patched run.** The patch is only evidence once a policy has been *trained* against it: the
# same fresh pair, seed, prompts and config as the two runs above, with `verify_choice_exact` as the
# reward. Then all three runs are scored by the patched rule (the intended property) and by the
# sloppy one, and the exploit is counted as the held-out greedy completions that the sloppy rule
# pays for and the patched rule rejects. Unlike the first audit's count, this one includes the
# echoes that end in the sum. The cell counts its habits apart (`helpers.lab_audit.exploit_kind`):
# stutters that repeat the sum (`" 61 or 61"`), hedges that list a wrong number beside it (`" 159 or
# 149"`), runs of digits that contain it without stating it (`" 1800898"` for 180), and anything
# else (a completion cut at the token budget can end in a number cut short, which the count reads as
# a number: a cut stutter can count as a hedge). It also rescores the greedy held-out completions of
# every evaluation point during training by the patched rule and by the strict one, so the exploit's
# emergence is visible over training: the dashboards' held-out curve uses the strict rule, which
# pays an echo that ends in the sum and so can show a stall where the patched rule shows a collapse.
# A third rule checks the patched one: `helpers.lab_audit.one_answer_judge` pays a completion that
# names the sum and no other number, whatever words or repeats surround it (`" 81 is the sum"`, `"
# 81 or 81"`). It is written apart from the patched rule and pays everything that rule pays (the
# cell asserts it, leaving aside a zero-padded `" 081"`), so where the two part, the patched rule is
# refusing wordiness or a stutter, not a wrong answer (up to signs and units, which the third rule
# does not read: it pays `" -81"` and `" 81%"`). The cell prints its pass rates and the exploit as
# it counts it (sloppy 1, judge 0: hedges and digit runs, no stutters). It is still a rule, not a
# reader: no hand-labelled sample of the runs' completions checks either of them. The error bars are
# 95% Wilson intervals of each rate over the held-out prompts; the before/after differences printed
# are paired intervals (the same prompts scored twice), which are narrower than the two bars
# suggest.

# %%
AUDIT = {}
patched_res = None
if RUN_BASELM:
    patched_res = run_experiment("arith_patched", "arithmetic_choice", verify_choice_exact, ARITH_CONFIG, STEPS["arith"],
                                 {"strict": verify_arithmetic, "sloppy": verify_arithmetic_sloppy,
                                  "exact": verify_choice_exact})
    report(patched_res)
    assert (
        patched_res["passport"]["extra"]["initial_weights"]
        == main_res["passport"]["extra"]["initial_weights"]
    )
    for res in (main_res, sloppy_res, patched_res):
        exact = {when: [verify_choice_exact(t, c) for t, c, _ in res[when]] for when in ("before", "after")}
        judge = {when: [one_answer_judge(t.answer, c) for t, c, _ in res[when]] for when in ("before", "after")}
        for when in ("before", "after"):  # the judge pays all the patched rule pays but " 081"
            assert all(j == 1 or e == 0 or c.strip().startswith("0")
                       for (t, c, _), e, j in zip(res[when], exact[when], judge[when]))
        paid_wrong = [(t, c) for (t, c, r), e in zip(res["after"], exact["after"])
                      if r["sloppy"] == 1 and e == 0]
        AUDIT[res["name"]] = {
            "reward_verifier": res["passport"]["verifier"]["name"],
            "exact": paired_difference(exact["before"], exact["after"]),
            "sloppy_after": res["rate"]["after"]["sloppy"],
            "exploit_rate": len(paid_wrong) / len(exact["after"]),
            "exploit_examples": [(t.prompt, c) for t, c in paid_wrong[:4]],
            "exploit_kinds": count_kinds((t.answer, c) for t, c in paid_wrong),
            "judge": paired_difference(judge["before"], judge["after"]),
            "judge_exploit_rate": float(np.mean([r["sloppy"] == 1 and j == 0
                                                 for (_, _, r), j in zip(res["after"], judge["after"])])),
        }
    for name, a in AUDIT.items():
        print(f"{name} (reward: {a['reward_verifier']}): patched-rule pass {a['exact']}")
        print(f"    sloppy rule pays {a['sloppy_after']:.3f}; exploit (sloppy 1, patched 0): "
              f"{a['exploit_rate']:.3f} of the held-out greedy completions, by kind: "
              + ", ".join(f"{k} {a['exploit_kinds'][k]}" for k in EXPLOIT_KINDS))
        print(f"    third rule (one_answer_judge) pass {a['judge']}; "
              f"exploit by it (sloppy 1, judge 0): {a['judge_exploit_rate']:.3f}")
        for pr, c in a["exploit_examples"]:
            print(f"      {pr} -> {c!r}")
    # the patched rule over training: the greedy held-out completions of every evaluation point,
    # rescored (evaluation draws no random numbers, so keeping them changed nothing in the runs)
    fig_c, ax_c = plt.subplots(figsize=(7, 2.8))
    for j, res in enumerate((main_res, sloppy_res, patched_res)):
        tasks = [t for t, _, _ in res["before"]]
        curve = {
            "step": [0],
            "exact": [AUDIT[res["name"]]["exact"].before],
            "strict": [res["rate"]["before"]["strict"]],
        }
        for step, rows in res["in_run_completions"]:
            assert [p for p, _ in rows] == [t.prompt for t in tasks]
            curve["step"].append(step)
            for rule, v in (("exact", verify_choice_exact), ("strict", verify_arithmetic)):
                curve[rule].append(float(np.mean([v(t, c) for t, (_, c) in zip(tasks, rows)])))
        AUDIT[res["name"]]["curve"] = curve
        ax_c.plot(curve["step"], curve["exact"], "o-", color=f"C{j}", label=f"{res['name']}: patched rule")
        ax_c.plot(curve["step"], curve["strict"], "x:", color=f"C{j}", label=f"{res['name']}: strict rule")
        print(f"{res['name']}: patched-rule pass over training",
              ", ".join(f"step {s_} {r_:.2f}" for s_, r_ in zip(curve["step"], curve["exact"])))
    ax_c.set_title("held-out greedy pass over training: patched rule (o) and strict rule (x)", fontsize=9)
    ax_c.set_xlabel("RL step")
    ax_c.set_ylabel("held-out greedy pass")
    ax_c.set_ylim(0, 1.05)
    ax_c.legend(fontsize=6, ncol=3, loc="lower left")
    plt.show()
    (RUN_DIR / "audit.json").write_text(json.dumps(
        {n: {**a, "exact": vars(a["exact"]), "judge": vars(a["judge"])} for n, a in AUDIT.items()},
        default=str, indent=1))
    fig, ax = plt.subplots(figsize=(7, 2.8))
    for j, a in enumerate(AUDIT.values()):
        n = len(main_res["after"])
        for dx, when, rate in (
            (-0.15, "before", a["exact"].before),
            (0.15, "after", a["exact"].after),
        ):
            lo, hi = wilson_interval(round(rate * n), n)
            ax.bar(j + dx, rate, width=0.3, color="C0" if when == "before" else "C1",
                   yerr=[[rate - lo], [hi - rate]], capsize=3, label=when if j == 0 else None)
        ax.plot(j + 0.15, a["sloppy_after"], "k^", label="after, sloppy rule" if j == 0 else None)
    ax.set_xticks(range(len(AUDIT)), [f"{n}\n(reward: {a['reward_verifier']})" for n, a in AUDIT.items()], fontsize=8)
    ax.set_ylabel("held-out greedy pass,\npatched rule")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="upper left")
    plt.show()

# %% [markdown]
# **What the course's record shows** (the instructor's run of this lab with the reference solutions
# on seeds 0, 1 and 2 on the course's CPU; registry [9.5-11]). The main run's held-out greedy pass
# rate, with its paired interval: seed 0: 0.61 -> 0.85 (+0.24 [+0.16, +0.31]); seed 1: 0.61 -> 0.97
# (+0.36 [+0.29, +0.43]); seed 2: 0.61 -> 0.92 (+0.31 [+0.24, +0.38]). On the prompts that no run
# was ever asked in either order (a small subset, so wider intervals), it gains too, from a lower
# start (held out in both orders, the main run's gain seed 0: +0.39 [+0.19, +0.57]; seed 1: +0.45
# [+0.30, +0.62]; seed 2: +0.42 [+0.22, +0.60]), so the gain does not rest on the swapped training
# pair. The sloppy-verifier run found the exploit on every seed: exploiting completions seed 0:
# 0.67; seed 1: 0.83; seed 2: 0.93 of the held-out greedy generations (numbers that contain the sum,
# such as `" 72 or 6211"` for 19+53), with the patched-rule pass rate after the sloppy run seed 0:
# 0.61 -> 0.21 (-0.40 [-0.48, -0.31]); seed 1: 0.61 -> 0.06 (-0.55 [-0.62, -0.47]); seed 2: 0.61 ->
# 0.00 (-0.61 [-0.68, -0.54]). Each seed found its own mix of habits: the sloppy run's exploiting
# completions by kind (stutters, hedges, digit runs, other) seed 0: 7, 28, 98, 0; seed 1: 60, 74,
# 32, 0; seed 2: 57, 48, 81, 0. The third rule sees a fall on every seed too, a smaller one than the
# patched rule's: by the third rule, the sloppy run's pass rate seed 0: 0.61 -> 0.25 (-0.37 [-0.45,
# -0.28]); seed 1: 0.61 -> 0.36 (-0.25 [-0.34, -0.16]); seed 2: 0.61 -> 0.29 (-0.33 [-0.41, -0.23]),
# with exploiting completions by the third rule (sloppy 1, judge 0) seed 0: 0.63; seed 1: 0.53; seed
# 2: 0.65. Among the exploiting completions the two rules part only over the stutters, which the
# third rule pays (a stutter cut short at the token budget counts as a hedge and is refused by
# both). None of them was the sum alone with words around it (no exploit of kind "other" on any
# seed); a correct answer beside its working or an aside that names another number (`" 19+53=72"`,
# `" 72 (not 74)"`) would count as a hedge, which neither rule tells apart. Over training, the
# sloppy run's patched-rule pass rate at the evaluation points (the curve plotted above) at steps 0,
# 62, 124, 186, 248, 250: seed 0: 0.61, 0.83, 0.81, 0.27, 0.22, 0.21; seed 1: 0.61, 0.56, 0.35,
# 0.11, 0.03, 0.06; seed 2: 0.61, 0.88, 0.91, 0.02, 0.00, 0.00: on seeds 0 and 2 the run first
# learned the skill as the main run did and lost it between steps 124 and 186, while on seed 1 it
# slid from the first evaluation on. By this pass rate alone, a run stopped at step 124 would have
# passed seeds 0 and 2 as healthy. The patched-verifier run, from the same start: patched run seed
# 0: 0.61 -> 0.93 (+0.32 [+0.25, +0.39]), exploiting 0.00; seed 1: 0.61 -> 0.91 (+0.30 [+0.22,
# +0.37]), exploiting 0.00; seed 2: 0.61 -> 0.94 (+0.33 [+0.26, +0.40]), exploiting 0.00. Across
# seeds (a variation the per-seed intervals do not include, see below): the sloppy run's
# patched-rule change across the 3 seeds: -0.61 to -0.40, mean -0.52; the patched run's gain across
# the 3 seeds: +0.30 to +0.33, mean +0.31. So the reward of the sloppy run rose while the property
# it was meant to measure collapsed, on every seed, and the same loop with a tighter rule learned
# the property. The exploit is reachable here because BaseLM's corpus has a few echoed answers ("81
# or 84") to start from, and 250 steps at this learning rate give them time to overtake the honest
# skill, even after it has first risen as on seeds 0 and 2 (at lr 3e-3 the honest skill won on one
# of the two seeds the instructor's probes ran at 3e-3; the configuration was then chosen on the
# same seeds and held-out prompts these figures report, so they are not a fresh replication: the
# replication below is); a shorter run, or another seed or CPU, may find nothing, and "not found in
# N steps" is all such a run can say.
#
# **What these intervals cover, and what they do not.** Each paired interval covers one source of
# chance: which held-out prompts were drawn, for *one* trained policy. It does not cover the
# training run itself (the seed's prompt order, samples and adapter start), and that can vary more.
# The main run gains on every seed, by different amounts (main-run gain across the 3 seeds: +0.24 to
# +0.36, mean +0.30): seed 1's gain lies outside seed 0's interval. The 30-step K = 16 run of the
# group-size sweep below differs more: its gain seed 0: +0.10 [+0.05, +0.16]; seed 1: -0.07 [-0.15,
# +0.02]; seed 2: +0.08 [+0.03, +0.14]: seed 0's and seed 1's intervals do not even overlap, so each
# describes its own policy and none of them the configuration. The K = 2 run's seeds 1 and 2 miss
# each other too, by less than 0.01 (K = 2 sweep run's gain seed 0: +0.14 [+0.08, +0.20]; seed 1:
# +0.01 [-0.06, +0.08]; seed 2: +0.13 [+0.09, +0.19]). Two more limits. The prompts are not
# independent of the choices: the initial pass-rate profile above (the data passport's
# $P_{\text{info}}$) is measured on the first 48 of the 199 held-out prompts that the runs then
# report, the figures BaseLM's passport records from its build come from a prefix of the same
# held-out stream, and the learning rate was chosen on them. And there are many intervals: the
# registry row [9.5-11] reports 27 paired 95% intervals across the seeds, and the cells print more;
# with that many, about 1 in 20 can exclude 0 by chance where nothing changed. The main, sloppy and
# patched runs are the lab's contrasts, the ones the lesson is built on, and their intervals are not
# adjusted for multiplicity. The no-KL and K-sweep contrasts ($\beta = 0$ and K = 2, 8, 16 on each
# seed) are secondary, and they are adjusted as one family: Holm's step-down procedure on the
# p-values of the score test behind the intervals (`helpers.stats.holm`). Of the 12 secondary
# contrasts, 9 exclude 0 unadjusted and 9 survive Holm's adjustment at family-wise level 0.05; the 3
# that do not are seed 0: K=8; seed 1: K=2; seed 1: K=16.
#
# **The replication.** The same lab, with seeds 3, 4 and 5, judged on held-out stream 1 (199
# prompts) (`COURSE_LAB_HELDOUT=1`: held-out prompts whose question, such as "Q: 65+94", none of
# stream 0's first 400 draws asks; stream 0 is the one the learning rate was chosen on and BaseLM's
# build measured; a pair may still appear swapped, as the split allows), made on Intel(R) Xeon(R)
# Processor (AVX512 kernels) from the same lab code as the record above (the notebook's code cells
# and helpers/ as both records ran them, sha256 3c2b236f0a3d), with the same versions of Python,
# torch and transformers and the same BaseLM weights, on a CPU reporting the same model and kernels:
# between the two records only the seeds and the held-out stream changed (the course's replication
# record, made by one command as the record is). Its start is lower on these prompts (0.58, where
# stream 0 gives 0.61), which leaves more to gain. The main run replicates: main run seed 3: 0.58 ->
# 0.97 (+0.39 [+0.32, +0.46]); seed 4: 0.58 -> 0.94 (+0.36 [+0.29, +0.43]); seed 5: 0.58 -> 0.98
# (+0.40 [+0.33, +0.47]), so the main-run gain across the replication's seeds: +0.36 to +0.40, mean
# +0.38, and on the prompts held out in both orders too (held out in both orders, the main run's
# gain seed 3: +0.53 [+0.36, +0.69]; seed 4: +0.50 [+0.34, +0.66]; seed 5: +0.50 [+0.34, +0.66]). So
# does the patched run: patched run seed 3: 0.58 -> 0.96 (+0.38 [+0.31, +0.45]); seed 4: 0.58 ->
# 0.96 (+0.38 [+0.31, +0.45]); seed 5: 0.58 -> 0.96 (+0.38 [+0.31, +0.45]), that is the patched
# run's gain across the replication's seeds: +0.38 on each seed (to two decimals), with no
# exploiting completion. The sloppy run learned an exploit of its substring rule on every seed
# (exploiting completions after the sloppy run seed 3: 0.35; seed 4: 0.48; seed 5: 0.12), each seed
# its own: the sloppy run's exploiting completions by kind (stutters, hedges, digit runs, other)
# seed 3: 54, 15, 0, 0; seed 4: 0, 4, 91, 0; seed 5: 1, 0, 22, 0, that is stutters on seed 3 and
# runs of digits that contain the sum on seeds 4 and 5, such as `" 1800898"` for 86+94. What it did
# to the intended property at the end of the run changed sign from seed to seed: patched-rule pass
# rate after the sloppy run seed 3: 0.58 -> 0.57 (-0.02 [-0.11, +0.08], no difference measured);
# seed 4: 0.58 -> 0.43 (-0.15 [-0.25, -0.05]); seed 5: 0.58 -> 0.80 (+0.22 [+0.13, +0.31]), the
# sloppy run's patched-rule change across the replication's seeds: -0.15 to +0.22, mean +0.02; no
# fresh seed ended as low as seeds 0, 1 and 2 did (its lowest patched-rule pass rate after the
# sloppy run: 0.43). The third rule reads seed 3 otherwise. A stutter (`" 136 or 136"`) names the
# sum and nothing else, so the third rule pays it: by the third rule, the sloppy run's pass rate
# seed 3: 0.58 -> 0.84 (+0.26 [+0.18, +0.34]); seed 4: 0.58 -> 0.43 (-0.15 [-0.25, -0.05]); seed 5:
# 0.58 -> 0.81 (+0.23 [+0.13, +0.32]), with exploiting completions by the third rule (sloppy 1,
# judge 0) seed 3: 0.08; seed 4: 0.48; seed 5: 0.11. Whether seed 3's sloppy run raised the property
# or only held it depends on which rule states it. The course states it with the patched rule
# (registry [9.5-11]); the third rule is a check added after earlier records had shown stutters, not
# a rule chosen in advance. And the end of a run is one point of a curve: the sloppy run's
# patched-rule pass rate at steps 0, 62, 124, 186, 248, 250: seed 3: 0.58, 0.80, 0.93, 0.14, 0.48,
# 0.57; seed 4: 0.58, 0.03, 0.04, 0.01, 0.43, 0.43; seed 5: 0.58, 0.77, 0.90, 0.93, 0.74, 0.80. By
# the patched rule, seeds 3 and 4 collapsed during training and partly recovered before the end,
# which the final figures alone hide. What holds on all six seeds is the gap: the sloppy run's
# reward rose while its patched-rule pass rate ended below the patched run's, by 0.16 to 0.53 here.
# Seed 5 shows the two at once: its patched-rule rate rose by 0.22 while 0.12 of its generations
# exploited the rule, so a rising property does not clear a run of reward hacking. Of the secondary
# contrasts, K = 16 disagrees with itself here (two seeds' intervals that do not overlap), as K = 2
# and K = 16 did on seeds 0, 1 and 2. The 30-step K = 8 run gained on each fresh seed (K = 8 sweep
# run's gain seed 3: +0.12 [+0.06, +0.17]; seed 4: +0.14 [+0.09, +0.19]; seed 5: +0.15 [+0.07,
# +0.22]), over 6 seeds, 6 gains (1 with an interval that reaches 0) and no losses, while the K = 16
# run has one interval wholly above 0 and one wholly below (K = 16 sweep run's gain seed 3: +0.12
# [+0.05, +0.18]; seed 4: -0.11 [-0.19, -0.03]; seed 5: -0.01 [-0.09, +0.07]). Adjusted as one
# family as above: 12 secondary contrasts, 9 exclude 0 unadjusted and 9 survive Holm's adjustment at
# family-wise level 0.05; the 3 that do not are seed 4: K=2; seed 5: K=2; seed 5: K=16. The main,
# sloppy and patched intervals are reported unadjusted, as above: they repeat the lab's own
# contrasts. Run to run, a 30-step run's effect can change sign; a 250-step run's main and patched
# gains did not.

# %% [markdown]
# ### Exercise 5 (optional): remove the KL leash
#
# A fresh arithmetic run with $\beta=0$, everything else identical. Check held-out behaviour, KL,
# sampled entropy and generations. Do not expect a short run to collapse visibly; what the leash
# limits is *unscored* drift, which a short run may not accumulate. Skipped under `COURSE_SMOKE`.

# %%
nokl_res = None
if RUN_BASELM and not SMOKE:
    from dataclasses import replace

    nokl_res = run_experiment("arith_no_kl", "arithmetic_choice", verify_arithmetic,
                              replace(ARITH_CONFIG, kl_coef=0.0), STEPS["arith"],
                              {"strict": verify_arithmetic, "sloppy": verify_arithmetic_sloppy})
    report(nokl_res)
    strict_after = {
        r["name"]: [x["strict"] for _, _, x in r["after"]] for r in (main_res, nokl_res)
    }
    print("beta = 0 against beta = 0.05, both after training (same held-out prompts, paired):",
          paired_difference(strict_after["arith_main"], strict_after["arith_no_kl"]))
    fig, axes = plt.subplots(1, 3, figsize=(11, 2.8), layout="constrained")
    for res, lab_ in ((main_res, "beta = 0.05"), (nokl_res, "beta = 0")):
        for ax, key in zip(axes, ("reward", "kl", "entropy")):
            ax.plot(res["history"]["step"], res["history"][key], marker="o", ms=3, label=lab_)
            ax.set_title(key, fontsize=9)
    axes[0].legend(fontsize=8)
    plt.show()
else:
    print("no-KL run skipped (COURSE_SMOKE or no BaseLM)")

# %% [markdown]
# ### Exercise 6 (optional): group size at a fixed rollout budget
#
# Sixteen completions per step, spent as $K=2$ on 8 prompts, $K=8$ on 2 prompts or $K=16$ on 1
# prompt, for the same number of steps. Larger $K$ makes an all-equal group less likely (lesson 9.1:
# $1-p^K-(1-p)^K$) but sees fewer prompts. Measure the degenerate-group frequency, the rewards'
# spread **within** each group (the spread the advantages are made of; the dashboard's batch-wide
# `reward_std` also counts differences *between* prompts, which no group-relative advantage sees)
# and the held-out result, rather than assuming a universal best $K$. The cell compares the $K$
# values with one another on the same held-out prompts (a paired interval of each difference in
# pass rate after training): subtracting the per-$K$ intervals would ignore that the same prompts
# were scored every time. Such an interval describes the two trained policies of this seed on these
# prompts, not $K$ in general (the seed-to-seed spread below is larger), and these three are
# exploratory: not adjusted for multiplicity, and not among the intervals the registry counts.
# Skipped under `COURSE_SMOKE`.

# %%
sweep = {}
if RUN_BASELM and not SMOKE:
    from dataclasses import replace

    for K, n_prompts in tqdm([(2, 8), (8, 2), (16, 1)], desc="group-size sweep"):
        cfg = replace(ARITH_CONFIG, k=K, prompts_per_step=n_prompts)
        res = run_experiment(f"sweep_K{K}", "arithmetic_choice", verify_arithmetic, cfg, STEPS["sweep"],
                             {"strict": verify_arithmetic})
        h = res["history"]
        sweep[K] = {
            "degenerate_frac": res["skips"] / res["attempts"],
            "within_group_reward_std": float(np.mean(res["group_reward_std"])),
            "batch_reward_std": float(np.mean(h["reward_std"])),
            "rows_in_updates_per_step": float(
                np.mean([(g - s) * K for g, s in zip(h["groups"], h["skipped"])])
            ),
            "heldout_after": res["rate"]["after"]["strict"],
        }
        print(f"K={K}: held-out greedy pass (strict) "
              f"{paired_difference(*([r['strict'] for _, _, r in res[w]] for w in ('before', 'after')))}")
        sweep[K]["after_strict"] = [r["strict"] for _, _, r in res["after"]]  # per prompt, for pairs
        sweep[K]["prompts"] = [t.prompt for t, _, _ in res["after"]]
    # K against K on the same held-out prompts: a paired interval of the difference in pass rate
    # after training (subtracting the per-K intervals above from each other would ignore the pairing)
    for k1, k2 in ((2, 8), (8, 16), (2, 16)):
        assert sweep[k1]["prompts"] == sweep[k2]["prompts"]
        d = paired_difference(sweep[k1]["after_strict"], sweep[k2]["after_strict"])
        sweep[k2][f"vs_K{k1}"] = vars(d)
        print(f"after {STEPS['sweep']} steps, held-out greedy pass K={k1} {d.before:.2f}, K={k2} "
              f"{d.after:.2f}: difference {d.diff:+.2f} [{d.low:+.2f}, {d.high:+.2f}] (95%, paired, "
              f"n={d.n}; {d.gained} prompts right only at K={k2}, {d.lost} only at K={k1})")
    print(json.dumps({K: {k: v for k, v in row.items() if k not in ("after_strict", "prompts")}
                      for K, row in sweep.items()}, indent=1, default=str))
    (RUN_DIR / "sweep.json").write_text(json.dumps(sweep, indent=1, default=str))
    fig, axes = plt.subplots(1, 3, figsize=(10, 2.6), layout="constrained")
    for ax, key in zip(axes, ("degenerate_frac", "rows_in_updates_per_step", "heldout_after")):
        vals = [sweep[K][key] for K in sweep]
        err = None
        if key == "heldout_after":  # 95% Wilson intervals over the held-out prompts
            n = len(res["after"])  # the same held-out prompts for every K
            ci = [wilson_interval(round(v * n), n) for v in vals]
            err = [
                [v - lo for v, (lo, _) in zip(vals, ci)],
                [hi - v for v, (_, hi) in zip(vals, ci)],
            ]
        ax.bar([str(K) for K in sweep], vals, yerr=err, capsize=3)
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("K")
    plt.show()
else:
    print("group-size sweep skipped (COURSE_SMOKE or no BaseLM)")

# %% [markdown]
# ## Level B (optional): GRPO on a real model with TRL
#
# The course's real-model branch is **disabled by default**. It targets Qwen/Qwen3-0.6B with LoRA
# and TRL's `GRPOTrainer` on a free Colab T4; here, with `RUN_REAL_MODEL = False`, the same code
# path is pointed at BaseLM so that its configuration can be built and inspected on a CPU.
# `helpers.level_b` passes **every** argument that shapes the objective to TRL explicitly (the
# advantage scaling, `loss_type`, clip ranges, `beta`, iterations, generation settings, batch
# geometry, optimiser): a library default is a fact about one release, not a specification. This
# branch was not run for the course's release checks: no runtime, memory or quality result is
# claimed for it [9.5-12]. Before a Colab run, re-check the CUDA image, the model, the package
# versions and every `GRPOConfig` argument against the current documentation.
#
# **Versions.** The module was first specified against a dated snapshot of the stack: TRL 1.9.2,
# Transformers 5.14.1, Datasets 5.0.1, PEFT 0.20.0, Accelerate 1.14.0 and bitsandbytes 0.50.0. The
# course departs from it: it is tested with, and the Colab cell pins, TRL 1.16.0, Transformers
# 5.24.0, Datasets 5.2.0, PEFT 0.21.2, Accelerate 1.16.0 and Tokenizers 0.23.3 (printed by the next
# cell), and installs no bitsandbytes, since the T4 profile quantises nothing. The defaults lesson 9.3
# read from the snapshot are unchanged in 1.16.0 [9.3-11], but 1.16.0 has defaults the course sets
# otherwise (next paragraph), which is one more reason every objective-shaping argument is explicit.
#
# **Three choices against TRL's defaults.**
# - `use_bias_correction_kl=False` (TRL: `True`): TRL then computes the course's per-token $k_3$,
#   the objective the course proves equal to TRL's (see `helpers/level_b/config.py`). With `True`
#   the KL term is weighted by the token ratio and its gradient becomes that of
#   $\mathrm{KL}(\pi_\theta\|\pi_{\text{ref}})$ (part 1's gradient contract) [9.5-14] [9.5-15]. The T4
#   profile has $\beta=0$, where the flag changes nothing.
# - `mask_truncated_completions=True` (TRL: `False`): a completion cut at the 128-token cap has no
#   final answer, and scoring it 0 would push down every token of what may be a sound but unfinished
#   derivation. TRL's mask differs from lesson 9.4's bandit "mask": the truncated completion's reward
#   (0) stays in its group's mean and std, and only its own loss terms are dropped. So a *correct*
#   finish is still rewarded relative to being cut off, but a wrong finish scores the same 0 as a
#   cut-off one, and only the wrong finish's tokens are pushed down: on a hard prompt, where correct
#   finishes are rare, little pushes towards stopping (only the rare correct finish), the
#   probability the wrong finishes lose can flow to truncation, and in lesson 9.4's bandit P(truncated)
#   rises under this loss-only mask before it falls [9.4-9]. DAPO's final recipe keeps its overlong
#   filtering and adds a soft overlong penalty, which puts a signal against never stopping back in
#   the reward [9.4-10]; the course teaches the risk that masking alone removes that signal. Level B
#   takes the mask alone for a 10-step smoke run and watches `truncation_rate`, and a longer run
#   should add the soft penalty (`trl.rewards.get_soft_overlong_punishment`) [9.5-16].
# - `fp16=True` on a T4 (TRL 1.16 sets `bf16=True` unless `fp16` is set): the T4 has no bfloat16. Qwen3
#   models are published in bf16, and bf16 has float32's exponent range while fp16 stops at 65 504,
#   so activations that a bf16-trained model produces can overflow to inf in fp16. The symptoms are
#   inf/NaN losses, or the loss scaler skipping optimizer steps (a few at the start, while the scale
#   calibrates, are normal; persistent skips are not). `helpers.level_b.run` counts both, the GPU
#   smoke script fails on them, and the fall-back is `precision="fp32"` (about 2.4 GB of weights, still
#   inside a T4's 15 GB, at roughly twice the time) [9.5-17].
#
# **On Colab.** Open this notebook in Colab, choose *Runtime > Change runtime type > T4 GPU*, drop
# your course bundle (the archive you unpacked on your laptop) into Colab's Files panel, paste the
# set-up cell printed below into a new first cell and run it once (it installs the versions the
# course was tested with and the `helpers` package from the bundle; without the bundle in the Files
# panel it asks you to upload it), then set `RUN_REAL_MODEL = True` in the next
# cell: that one flag switches the model to Qwen/Qwen3-0.6B and the profile to the T4 one (fp16,
# since a T4 has no bf16). The course's level-B notes (the memory and time estimate, unverified
# until measured on a GPU; the loss-equivalence table against TRL; level C on paper) stay with the
# instructor: ask for them if you plan a GPU run. What to expect from the smoke run: Qwen3-0.6B is
# likely near its ceiling on two-digit sums, differences and small fractions from the start, so
# expect it to show the data path working (prompts, completions, rewards, the logged columns), not
# learning; this expectation has not been checked by a run.

# %%
try:
    from helpers.level_b import COLAB_SETUP

    print(COLAB_SETUP)
except ImportError:
    print("helpers.level_b is not in this bundle: level B is unavailable here.")

# %%
RUN_REAL_MODEL = False
SMOKE_MODE = True

try:
    from helpers import level_b
except ImportError as e:  # the module is optional; the rest of the lesson does not need it
    level_b = None
    print(f"helpers.level_b is not available in this bundle ({e}); the level-B section is skipped.")

if level_b is not None and (RUN_REAL_MODEL or BASELM_OK):
    cfg = level_b.default_config(
        model_id="Qwen/Qwen3-0.6B" if RUN_REAL_MODEL else str(baselm_dir()), smoke=SMOKE_MODE
    )
    lb_passport = level_b.passport(cfg)
    save_passport(lb_passport, RUN_DIR / "level_b" / "passport.json")
    held = lb_passport["extra"]["grpo_config"]
    print(f"model {cfg.model_id} | passport config_hash {lb_passport['config_hash']} | "
          f"{len(held)} GRPOConfig arguments set explicitly:")
    print(", ".join(f"{k}={v}" for k, v in held.items()))
    if RUN_REAL_MODEL:
        result = level_b.run(cfg)  # TRL's own loop; its logs are read into the course dashboard
        lb_dash = level_b.history_to_dashboard(result["log_history"])
        display(plot_dashboard(lb_dash, title="level B: TRL GRPOTrainer",
                               labels={"entropy": "entropy (TRL: tempered logits)"}))
elif level_b is not None:
    print(
        "level B needs the BaseLM artifact for its CPU configuration; see the fix printed at the top."
    )

# %% [markdown]
# ## 9.5.5 Conclusions and the module's boundary
#
# 1. **RLVR is a feedback regime; GRPO is a family of updates.** One names where the reward comes
#    from (a checkable outcome), the other how a group of rewards becomes a gradient. Neither
#    defines the other: this lesson ran two different "GRPO"s on the same kind of reward.
# 2. **A verifiable reward is still a proxy.** Extraction, canonicalisation, tests and the
#    execution environment are part of the training contract: the audit above changed nothing but
#    the verifier and measured what that alone does.
# 3. **The group mean replaces a learned critic, not credit assignment.** Every token of a response
#    receives that response's advantage.
# 4. **Old, current and reference policies play different roles.** The ratio's denominator is the
#    distribution that actually sampled the token, after every processing step (9.5.2's rescoring
#    check).
# 5. **Normalisation is not neutral.** Dividing by a group's std, or a response's length, decides
#    how much each prompt and each token weighs (9.5.3's gradient-scale check).
# 6. **Dr. GRPO, DAPO and GSPO change different parts of the protocol;** compare them by their full
#    objective and reduction, as the update passport writes them.
# 7. **Entropy, response diversity, pass@k and the informative-group rate are different
#    diagnostics.** The GRU lab raised training accuracy while three of them fell.
# 8. **Longer output is not better reasoning, and a truncated response is not a wrong one;** the
#    stop reason is a field of the rollout record.
# 9. **Elicitation versus discovery** needs matched sampling budgets and a look at the
#    trajectories, not one pass@1 number.
# 10. **A smoke run proves that the loop executes.** It reproduces no large-scale result, and this
#     lesson's runs claim none.
#
# **Where the course goes next.** Best-of-N, self-consistency and search are developed in Module 10
# ("Search, verification, and test-time compute"); distributed generation, policy versions and
# rollout economics in Module 12 ("RL infrastructure for LLMs"); the statistics of evaluation,
# reward hacking and safety in Module 13 ("Evaluating RL systems for LLMs"). In the companion
# courses, Modern LLMs Module 14 ("Learning from Feedback: RLHF, DPO, RLOO, and GRPO") gives the
# broader post-training picture, and Modern LLMs Module 15 ("Reasoning Models and Test-Time
# Compute") connects RLVR to reasoning-model architectures and inference budgets. Entropy and KL are treated formally in
# the Information Theory for ML course (Modules 2, 3 and 8) [9.5-13]. This module stands on its
# own: every definition its exercises use was introduced in 9.1-9.5.

# %% [markdown]
# ## Assessment
#
# Eight assessment steps. Two are the graded code above (9.5.A5, part 1: advantages, KL estimator,
# clipped loss, lab diagnostics; 9.5.A6, part 2: completion log-probs, the simplified loss, the
# training step). Below: four self-checks (not graded; the explanation appears after your first
# attempt) and three written answers (9.5.A7, 9.5.A8a, 9.5.A8b), graded by hand.
#
# **9.5.A1** (self-check)

# %%
selfcheck.choice(
    "You must recompute the clipped loss of a logged rollout batch next week, without regenerating. "
    "Which record field can you NOT reconstruct afterwards from the checkpoint alone?",
    [
        "The completion tokens and the action mask",
        "The log-probs under the behaviour policy as it actually sampled (after temperature, masks, "
        "top-p, in that library version and precision)",
        "The reference log-probs, if the reference checkpoint is kept",
        "The group id of each completion",
    ],
    1,
    "Tokens, mask and group ids are stored data. Reference log-probs can be recomputed from a kept, "
    "frozen reference. The behaviour log-probs depend on the exact sampling stack (processing order, "
    "precision, library version): rescoring later may not reproduce them, which is why the rollout "
    "record stores them at sampling time and measures the generator/trainer mismatch.",
)

# %% [markdown]
# **9.5.A2** (self-check, numeric)

# %%
selfcheck.numeric(
    "A rollout budget of 64 completions per step; every prompt has success probability p = 0.2. "
    "Spent as K = 2 on 32 prompts, how many informative groups do you expect per step? (2 decimals; "
    "for comparison, K = 8 on 8 prompts gives 8 * (1 - 0.2**8 - 0.8**8) = 6.66)",
    32 * (1 - 0.2**2 - 0.8**2),
    "P_info(0.2, 2) = 1 - 0.04 - 0.64 = 0.32, times 32 groups = 10.24 informative groups, each of only "
    "two completions (one success, one failure). K = 8 gives fewer informative groups (6.66) but each "
    "holds 8 completions and a finer baseline. Which is better is an empirical question (exercise 6).",
    tol=0.01,
)

# %% [markdown]
# **9.5.A3** (self-check)

# %%
selfcheck.choice(
    "A report trained a 7B model with G = 16, beta = 0.04, temperature 1.0 and lr = 1e-6. You move to "
    "a 0.6B model with LoRA on a T4 and a sequence-sum loss. What is the sound starting point?",
    [
        "Copy all five values: they are the published recipe",
        "Copy G and beta, scale the learning rate by the model-size ratio",
        "Treat them as one data point: choose the loss reduction first, then tune lr and beta for it "
        "with a smoke run and the dashboard, recording every value in the passport",
        "Set beta = 0 because R1-Zero used no KL",
    ],
    2,
    "The values were tuned jointly with that model, reward scale, sequence length, batch and loss "
    "normalisation; a sequence-sum loss alone rescales the gradient by the response length (9.5.3). "
    "And the R1 report's objective does allow a KL term: 'no KL' is not established by it.",
)

# %% [markdown]
# **9.5.A4** (self-check)

# %%
if gru_lab.SMOKE_HISTORY.is_file():  # the course's smoke record: its figures
    _smoke = json.loads(gru_lab.SMOKE_HISTORY.read_text())["history"]

    def _first_last(key):
        return f"{_smoke[key][0]:.2f} -> {_smoke[key][-1]:.2f}"

    for _key, _up in (("train_acc", True), ("train_pass@4", False), ("train_entropy", False),
                      ("train_coverage", False), ("heldout_greedy_acc", False)):  # the keyed answer
        assert (_smoke[_key][-1] > _smoke[_key][0]) == _up, _key
    _figures = (f"training accuracy {_first_last('train_acc')}, train pass@4 "
                f"{_first_last('train_pass@4')}, entropy {_first_last('train_entropy')}, held-out "
                "greedy accuracy down")
else:
    _figures = "training accuracy up, train pass@4 down, entropy down, held-out greedy accuracy down"
selfcheck.choice(
    f"The GRU lab's smoke run (the course's record): {_figures}. Which conclusion does the "
    "dashboard support?",
    [
        "The update worked: accuracy is what the reward measures",
        "The policy concentrated on fewer answers per prompt: more single samples pass, fewer prompts "
        "are solved by at least one of four, and the gain did not transfer to new combinations",
        "GRPO always collapses, so the clipped objective is wrong",
        "Entropy fell because the KL term pulled the policy to the reference",
    ],
    1,
    "Rising pass@1-like accuracy with falling pass@k, entropy and coverage is concentration; the "
    "held-out drop says it was not a better algorithm. The profile is tuned to fail (beta = 0, high "
    "lr, 4 epochs, a small pool): it shows that a serious evaluation stack must detect this, not that "
    "GRPO must collapse.",
)

# %% [markdown]
# **9.5.A5, 9.5.A6** are the graded functions above (part 1: `group_advantages`, `kl_estimate`,
# `clipped_grpo_loss`, the lab diagnostics; part 2: `completion_log_prob`, `grpo_loss`, `train_step`).

# %% [markdown]
# **9.5.A7 (written, 3 points).** A teammate's log says only: "GRPO on Qwen3-0.6B, 300 steps, G = 8,
# reward = final-answer check, it worked (reward 0.3 -> 0.7)". Write the rollout-and-update passport
# you would need before you believe or rerun this (field: value or "unknown - ask"), and name the two
# missing fields that most change the result if guessed wrong, with one sentence each.

# %% [written] id=w_rollout_passport points=3
# ### BEGIN SOLUTION
# **Model answer.** Rollout record: prompt ids and tokens (dataset, split rule: unknown); completion
# tokens and action mask; behaviour log-probs stored at sampling (unknown whether stored); generator
# checkpoint and library versions (unknown); decoding: temperature, top-p/top-k, max completion length,
# seed (unknown); reward components and the verifier passport with its version (only "final-answer
# check" known); parse result and stop reason, length before/after truncation (unknown); reference
# log-probs if $\beta>0$ (unknown); group id, $G=8$ (known). Update: centring/scaling (std with $n$ or
# $n-1$, $\varepsilon$), loss type and denominator, ratio level, clip range(s), iterations per batch,
# $\beta$ and KL estimator, entropy coefficient, prompts per step / global batch, gradient accumulation,
# learning rate and optimiser, LoRA rank/targets (all unknown). Plus the held-out evaluation: "reward
# 0.3 -> 0.7" is a training-reward claim, not a result. Most consequential: (1) the verifier version and
# its false-positive behaviour - a reward rise can be an exploit; (2) the loss reduction/denominator with
# the learning rate - it sets the effective step size and the weight of long vs short responses
# (defensible alternatives: decoding temperature, or $\beta$ with its estimator).
#
# **Rubric (3 points).** 1 pt: at least eight rollout/update fields, each marked known or unknown, with
# the behaviour log-probs and decoding parameters among them. 1 pt: says the reward curve is not the
# result and asks for held-out evaluation (with decoding and verifier named). 1 pt: two fields with a
# correct reason tied to reward validity, gradient scale/weighting or the behaviour policy.
# ### END SOLUTION

# %% [markdown]
# **9.5.A8a (written, 3 points).** Interpret your sloppy-verifier audit (exercise 4). Give the two
# held-out pass rates of the sloppy-trained policy, quote one or two greedy generations, say whether
# the finite run found an exploit (and how you know), why the comparison with the main run is clean,
# and state your patch as a rule with its cost.

# %% [written] id=w_sloppy_audit points=3
# ### BEGIN SOLUTION
# **Model answer (numbers depend on the run; the structure is what is graded).** The sloppy-trained
# policy's held-out greedy pass rate is reported under both verifiers (in the course's runs the
# sloppy rule pays most completions while the patched rule's rate falls far below the main run's).
# An exploit shows up as completions that the sloppy rule accepts and the patched (or strict) rule
# rejects: echoing both options (" 79 or 81"), emitting several numbers, or a number containing the
# answer (" 810", " 7222211"); the audit cell lists them from the run, not from imagination.
# If the two rates are equal and no sloppy-only completion appears among greedy and sampled outputs,
# the run did not find the exploit in N steps; that is not evidence that the verifier is safe (longer
# runs, more exploration or a larger model can find it). The comparison is clean because both runs
# start from the same BaseLM weights hash, the same LoRA seed (identical initial adapter hash), the same
# trainer seed, prompts and config; the passports differ only in the verifier. The patched run,
# from the same start, shows what the patch buys: no exploiting completions and the intended
# property learned. Patch: the completion,
# stripped, must be exactly one integer that is one of the two options and equals the sum
# (`verify_choice_exact`); it closes the echo, the many-numbers and the substring loopholes, and costs
# a false negative on correct answers in words or sentences (" The answer is 81") and on stutters
# (" 81 or 81"), which the audit's third rule pays: say which of the two rules states the property.
#
# **Rubric (3 points).** 1 pt: both held-out rates and at least one quoted generation. 1 pt: a correct
# statement of exploit found / not found, justified by sloppy-only completions (not by the training
# reward), and no claim of safety from a finite run. 1 pt: the clean-comparison argument (same
# initialisation, only the verifier changed) and a concrete patch rule with its false-negative cost.
# ### END SOLUTION

# %% [markdown]
# **9.5.A8b (written, 2 points).** Before a level-B run, write three stopping rules for it (each with
# the dashboard quantity it reads and a threshold or comparison), and one sentence on what a
# successful 20-step smoke run does and does not show.

# %% [written] id=w_stopping_rules points=2
# ### BEGIN SOLUTION
# **Model answer.** (1) Stop if the held-out pass rate (greedy, intended verifier) has not improved
# over two evaluations while the training reward rose by more than 0.1 (proxy gap). (2) Stop if train
# pass@k (k = 4) falls by more than 0.1 from its start or entropy falls below half its initial value
# without held-out gains (concentration). (3) Stop if the verifier error or parse-failure rate, or the
# truncation rate, rises above a set level (e.g. 5%) - the checker or the length contract is being
# exercised instead of the task. A smoke run shows that the data path executes (sampling, rewards,
# advantages, loss, update, logging) with the declared configuration; it does not show that the method
# improves the model or reproduces any published result.
#
# **Rubric (2 points).** 1 pt: three rules, each naming a measured quantity and a threshold or
# comparison set before training (at least one using held-out evaluation). 1 pt: the smoke-run
# sentence separates "the loop runs" from "the model improved / a result is reproduced".
# ### END SOLUTION
