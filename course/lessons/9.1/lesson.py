# %% [markdown]
# # 9.1 RLVR as a feedback contract
#
# In Module 8 the data were fixed before training: preference pairs, collected once. From here on
# the policy writes its own training data. For each prompt it samples several responses, a program
# scores them, and the update changes which responses the policy writes next. This regime is
# **reinforcement learning with verifiable rewards (RLVR)**. Everything it learns passes through
# that scoring program, so this lesson treats the program as a contract and reads it clause by
# clause.
#
# **After this lesson you can**
# 1. say what makes a reward *verifiable*, and place a training set-up on three separate axes
#    (feedback source, data collection, optimisation method): RLVR and GRPO are not synonyms;
# 2. tell what the DeepSeek-R1-Zero report shows and what it does not;
# 3. take a verifier apart into extraction, canonicalisation, checking and reward, and tell a
#    false-positive reward from a false-negative one (and why the first is worse under optimisation);
# 4. attack the course's reference numeric verifier and name its limits;
# 5. compute when a group of $G$ responses carries a learning signal,
#    $P_{\text{info}}(p,G) = 1-p^G-(1-p)^G$, and what collecting $B$ informative prompts costs.
#
# Everything here runs on a CPU in seconds; no language model is loaded.

# %%
import math
import re
from dataclasses import replace
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm

from helpers import selfcheck
from helpers.figures import quote
from helpers.runtime import GRADING, SMOKE
from helpers.tasks import make_tasks
from helpers.verifiers import (
    CATEGORIES,
    extract_boxed,
    last_number,
    parse_number,
    verify_arithmetic,
    verify_arithmetic_sloppy,
    verify_numeric_answer,
)

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 9.1.1 What makes a reward verifiable
#
# **Rewards instead of labels.** Supervised fine-tuning needs the whole target: every token of the
# answer is given. Reinforcement learning needs one number per attempt:
#
# | | input | what training is given |
# |---|---|---|
# | SFT example | `What is 23+58?` | the target text `23+58 = 81`, token by token |
# | RL episode | `What is 23+58?` | whatever the policy wrote, plus a score from a checker (1.0 or 0.0) |
#
# That inversion is the point: for long derivations, working code or multi-step tool use, *checking*
# an outcome is far easier than *writing* the ideal trajectory. The cost: the policy only learns
# from what it actually samples, and it learns whatever the checker rewards.
#
# Below, one task from the course's task family and four attempts a policy might write. The SFT
# view has one correct string; the RL view scores every attempt with the reference verifier.

# %%
task = make_tasks("arithmetic", 1, "train", seed=1)[0]
print("prompt:", task.prompt, "| reference answer:", task.answer)
attempts = [
    f"Adding the numerators gives \\boxed{{{task.answer}}}.",
    "I think it is \\boxed{2}.",
    f"The result is {task.answer}",
    "Let me think about fractions.",
]
for o in attempts:
    v = verify_arithmetic.check(task, o)
    print(f"reward {v.reward:.1f}  {v.category:<10} {o!r}")

# %% [markdown]
# **Verifiable** means: a reproducible procedure checks the response (or the trajectory, or the
# state it leaves behind). Typical checkers:
#
# - compare a number or expression with a canonicalised reference answer;
# - run code in a sandbox against tests;
# - check a proof with a trusted formal kernel (Lean, Coq, ...);
# - inspect the environment state a tool call produced;
# - score a game or simulator trajectory under explicit rules.
#
# Verifiable does **not** mean binary: a reward may be real-valued, have several components, or give
# partial credit. Two requirements matter: (i) a *fixed* checker gives the *same* result on the same
# input, and (ii) what it checks is close enough to the property we actually want more of.
# Requirement (i) is cheap to test; requirement (ii) is the subject of 9.1.3.

# %%
# Requirement (i): the same input gives the same verdict, run after run and in any order.
tasks = make_tasks("arithmetic", 50, "train", seed=0)
outs = [f"\\boxed{{{t.answer}}}" if i % 3 else "\\boxed{0}" for i, t in enumerate(tasks)]
first = [verify_arithmetic(t, o) for t, o in zip(tasks, outs)]
order = np.random.default_rng(0).permutation(len(tasks))
again = {int(i): verify_arithmetic(tasks[i], outs[i]) for i in order}
assert first == [again[i] for i in range(len(tasks))]
print("50 verdicts, recomputed in a shuffled order: identical; mean reward", np.mean(first))

# %% [markdown]
# **The loop.** For a prompt $q$ the (old) policy samples a group of $G$ responses, the checker
# scores each, the scores become relative estimates inside the group, and these drive the update:
#
# $$q \;\longrightarrow\; \{o_i\}_{i=1}^{G} \;\longrightarrow\; \{r_i\}_{i=1}^{G}
# \;\longrightarrow\; \{\widehat A_i\}_{i=1}^{G} \;\longrightarrow\; \text{policy update}.$$
#
# How the $r_i$ become $\widehat A_i$ is lesson 9.2; here a plain centring $r_i-\bar r$ is enough
# to see one fact we will need in 9.1.5: when every response in the group gets the same reward,
# every centred estimate is zero and the group teaches nothing.

# %%
for r in ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]):
    r = np.array(r)
    print(r, "-> r - mean(r) =", r - r.mean())

# %% [markdown]
# **Three axes, not one label.** A post-training set-up is described by three independent choices:
#
# - *feedback source*: human preferences, a learned reward model, a heuristic, or a verifiable
#   outcome;
# - *data collection*: fixed offline examples, or fresh online rollouts from the current policy;
# - *optimisation method*: maximum likelihood, DPO, PPO, GRPO, REINFORCE-style updates, ...
#
# **RLVR** names a value on the first axis (together with online collection); **GRPO** names a value
# on the third: a way to estimate relative advantages inside a group and update the policy without a
# learned critic. RLVR can be optimised with PPO or RLOO, and GRPO can be fed by a learned reward
# model (DeepSeekMath, where GRPO was introduced, trained with a learned reward model [9.1-6]).
#
# Two boundaries: **Best-of-N** with the same checker is *inference-time search* as long as no
# parameters change; **DPO** is fixed-data preference optimisation as long as no fresh responses are
# collected during the stage. RLVR begins when a verified outcome enters a policy update.

# %%
AXES = [  # (set-up, feedback source, data collection, optimisation)
    ("SFT on demonstrations", "labelled targets", "offline", "max. likelihood"),
    ("DPO (Module 8)", "preference pairs", "offline", "DPO loss"),
    ("classic RLHF", "learned reward model", "online", "PPO"),
    ("RLVR with PPO", "verifier", "online", "PPO (critic)"),
    ("R1-Zero-style RL", "rule-based verifier", "online", "GRPO"),
    ("GRPO + reward model", "learned reward model", "online", "GRPO"),
    ("Best-of-N at test time", "verifier", "no update", "none (search)"),
]
print(f"{'set-up':<24}{'feedback source':<22}{'data':<11}optimisation")
for row in AXES:
    print(f"{row[0]:<24}{row[1]:<22}{row[2]:<11}{row[3]}")

# %%
selfcheck.choice(
    "A team samples 16 programs per problem from a frozen model, runs the unit tests, and ships the "
    "first program that passes. Which description is right?",
    [
        "RLVR, because the reward (unit tests) is verifiable",
        "GRPO, because a group of 16 responses is compared",
        "Inference-time search (Best-of-N): a verifier is used, but no parameters are updated",
        "DPO, because passing and failing programs form preference pairs",
    ],
    2,
    "Verifiable feedback alone does not make RLVR: RLVR begins when the verified outcome enters a "
    "policy update. Here the weights never change, so this is Best-of-N search. Pairs could later be "
    "mined for DPO, but nothing here optimises on them.",
)

# %% [markdown]
# ## 9.1.2 DeepSeek-R1-Zero: a historical case, not a universal recipe
#
# What follows are **claims from the model authors' technical report** (DeepSeek-AI, *DeepSeek-R1:
# Incentivizing Reasoning Capability in LLMs via Reinforcement Learning*, arXiv:2501.12948; the
# version read for this lesson is **v1**, January 2025), not results this course reproduces. Each
# carries, in brackets, its id in the module's claims registry (`Module_9_Sources.md`).
#
# - *Reported:* R1-Zero was an RL stage started directly from DeepSeek-V3-Base, with no preceding
#   supervised stage on labelled reasoning traces [9.1-1].
# - *Reported:* during training the responses grew longer and more often contained intermediate
#   checking, backtracking and alternative approaches [9.1-2].
# - *Reported limitations:* poor readability, language mixing, and a narrow focus on formally
#   verifiable tasks. The released DeepSeek-R1 therefore used a multi-stage pipeline: cold-start
#   data, supervised fine-tuning, rejection-sampled data, and later RL stages [9.1-3].
# - *Reported reward:* two rule-based parts (v1 describes them in prose; the later version writes
#   the sum out),
#   $$R_{\text{rule}} = R_{\text{accuracy}} + R_{\text{format}},$$
#   where mathematics checked the final answer, code was compiled and tested, and a format term
#   rewarded the required response structure (reasoning and answer in marked sections) [9.1-4].
# - *Reported objective:* v1 displays a compact GRPO formula with a full-response probability
#   ratio and a KL term (coefficient $\beta$) written with its estimator, the response-level
#   $\frac{\pi_{\text{ref}}}{\pi_\theta}-\log\frac{\pi_{\text{ref}}}{\pi_\theta}-1$ (the $k_3$ of
#   lesson 9.5). It does **not** give a machine-complete run passport: the values of $\beta$ and of
#   the clip $\epsilon$, the std convention of the advantage, how the loss is reduced over tokens,
#   the reference-policy schedule and rollout reuse are left open [9.1-5].
# - *Reported later, not checked here:* the later, peer-reviewed version of the report and its
#   supplementary information state R1-Zero settings that v1 leaves out, among them a KL
#   coefficient of 0.001 (TRL 1.16's `beta` documentation quotes the same value), a clip
#   $\epsilon$ of 10, a sampling temperature of 1, one rollout batch split into 16 minibatches, and
#   the number of questions and of sampled responses per training step [9.1-11]. An $\epsilon$ of
#   10 means the clip almost never binds: the update is not held near the old policy by clipping
#   (lesson 9.2.3: clipping does not project the policy into a trust region). This course has not
#   read that version against v1; treat the figures as the authors' statement. Even with them, a list of headline settings is not a
#   run passport: it does not let you rebuild the run.
#
# Both halves carry the lesson. The pure run shows that a verifiable signal alone can strongly
# reshape a response distribution; the final pipeline shows that this stage alone did not make a
# generally useful model. Two readings go beyond the evidence: "R1-Zero was GRPO with no KL at all"
# (the displayed objective has a KL term; v1 does not give its coefficient, and the later version
# reports a small but non-zero one), and "every RLVR system should copy the R1 configuration" (one
# successful large-scale process says nothing about optimality for another model or task mix).
#
# A toy version of the two-part reward, to see that each part is a separate contract (and that the
# format part, on its own, is trivially satisfied).

# %%
THINK_ANSWER = re.compile(r"\s*<think>(.+?)</think>\s*<answer>(.+?)</answer>\s*", re.S)


def toy_rule_reward(response: str, reference: str) -> tuple[float, float]:
    """Toy R1-style reward: (accuracy, format). Not the report's code, which is not published."""
    m = THINK_ANSWER.fullmatch(response)
    r_format = 1.0 if m else 0.0
    answer = m.group(2) if m else response
    return verify_numeric_answer(answer, reference).reward, r_format


for resp in [
    "<think>23+58: 20+50=70, 3+8=11, total 81</think> <answer>81</answer>",
    "<think>.</think><answer>7</answer>",  # perfect format, wrong answer
    "23+58 = 81",  # right answer, no structure
]:
    acc, fmt = toy_rule_reward(resp, "81")
    print(f"R_acc={acc:.0f} R_format={fmt:.0f} R_rule={acc + fmt:.0f}  {resp!r}")

# %%
selfcheck.choice(
    "Which statement does the DeepSeek-R1 report support?",
    [
        "Skipping supervised fine-tuning is the best way to train any reasoning model",
        "A verifiable reward alone reshaped the response distribution of a large base model, but "
        "the released model needed further supervised and RL stages",
        "R1-Zero used GRPO without any KL term, so KL regularisation is unnecessary",
        "Copying R1's group size and learning rate reproduces its results on a small model",
    ],
    1,
    "The report documents one successful large-scale run and its limitations (readability, "
    "language mixing), which led to a multi-stage pipeline. The displayed objective contains a KL "
    "term (the later version reports a coefficient of 0.001); and nothing in one run shows that "
    "its choices are optimal elsewhere.",
)

# %% [markdown]
# ## 9.1.3 A verifier is a stack, not a single Boolean
#
# "Reward = correctness" hides a chain of decisions:
#
# $$\text{response text} \;\to\; \text{extraction} \;\to\; \text{canonicalisation} \;\to\;
# \text{checking} \;\to\; \text{reward}.$$
#
# For a numeric task that means: *where* is the answer (last `\boxed{}`? last number?), how are
# fractions and thousands separators read, is rounding accepted (which tolerance?), and what if
# there are several final answers. For code: language version, dependencies, time and memory limits,
# network and file-system access, randomness, hidden tests. The course's reference verifier
# (`helpers/verifiers.py`) exposes each layer; here is one response taken through it.

# %%
response = r"We need 3/7 as a decimal. Roughly 0.43, so the answer is \boxed{\frac{3}{7}}."
reference = "0.428571"
boxed, has_box = extract_boxed(response)  # 1. extraction (last \boxed{...})
print(
    "1. extracted      :",
    repr(boxed),
    "| fallback would be the last number:",
    last_number(response),
)
value = parse_number(boxed)  # 2. canonicalisation + exact parsing
print("2. parsed exactly :", value, "=", float(value))
ref = parse_number(reference)
# 3. checking, in rationals; the tolerances are the decimals 10**-6 and 10**-9 as written
tol = max(Fraction("1e-6"), Fraction("1e-9") * abs(ref))
print(
    f"3. |x - ref| = {float(abs(value - ref)):.2e} <= tol = {float(tol):.2e}:",
    abs(value - ref) <= tol,
)
print("4. reward         :", verify_numeric_answer(response, reference))
# Why Fraction("1e-6") and not Fraction(1e-6): the float 1e-6 is a binary number slightly below
# 10**-6, so a response exactly 10**-6 away would be refused; the float 1e-9 is slightly above.
print("Fraction(1e-6) - 10**-6 =", float(Fraction(1e-6) - Fraction(1, 10**6)),
      "| Fraction(1e-9) - 10**-9 =", float(Fraction(1e-9) - Fraction(1, 10**9)))
print("exactly 10**-6 away from 0 is accepted:", verify_numeric_answer("0.000001", "0").category)

# %% [markdown]
# **Two kinds of error.** Compare the verifier's verdict with the truth (what a careful human grader
# would decide):
#
# | | verifier says correct | verifier says wrong |
# |---|---|---|
# | response is correct | true positive | **false negative**: a good trajectory is suppressed |
# | response is wrong | **false positive**: the policy is paid for a wrong answer | true negative |
#
# They are not symmetric under optimisation. A **false positive** is a direct incentive: if some
# wrong behaviour is paid, the policy gradient pushes towards it, and a rare loophole can become the
# dominant strategy. A **false negative** makes the signal sparser (fewer effective successes,
# slower learning) but does not point the policy somewhere wrong, as long as it does not single out
# one correct strategy.
#
# **Reward hacking** is this mechanism at work: not the model "cheating", but the model doing what
# scores well under the objective *as written*. The verifier is a specification, and the policy is a
# machine that searches for gaps in it. You are scoring what you specified, not what you meant.
#
# The course ships a verifier that is broken on purpose: `verify_arithmetic_sloppy` pays 1 when the
# reference answer occurs *anywhere* in the text. On a two-option arithmetic task, compare three
# behaviours a policy might have: *solve* (pick the right option 70% of the time), *both* (print
# both options), *guess* (pick an option at random).

# %%
choice_tasks = make_tasks("arithmetic_choice", 400, "train", seed=0)
rng = np.random.default_rng(2)


def write(strategy: str, t) -> str:
    """What a policy with this behaviour writes for a two-option task (a toy, not a model)."""
    right = int(t.answer)
    wrong = next(o for o in t.meta["options"] if o != right)
    if strategy == "solve":
        return f" {right if rng.random() < 0.7 else wrong}"
    if strategy == "both":
        a, b = t.meta["options"]
        return f" {a} or {b}"
    return f" {t.meta['options'][rng.integers(2)]}"  # guess


STRATEGIES = ["solve", "both", "guess"]
texts = {s: [write(s, t) for t in choice_tasks] for s in STRATEGIES}
R_sloppy = np.array(
    [
        np.mean([verify_arithmetic_sloppy(t, o) for t, o in zip(choice_tasks, texts[s])])
        for s in STRATEGIES
    ]
)
R_true = np.array(
    [np.mean([verify_arithmetic(t, o) for t, o in zip(choice_tasks, texts[s])]) for s in STRATEGIES]
)
for s, a, b in zip(STRATEGIES, R_sloppy, R_true):
    print(
        f"{s:<6} mean reward: sloppy {a:.3f}   final-answer verifier {b:.3f}   e.g. {texts[s][0]!r}"
    )

# %% [markdown]
# Let a policy choose among the three behaviours with probabilities $\pi=\operatorname{softmax}(\theta)$
# and let it climb the expected reward $J(\theta)=\sum_k \pi_k R_k$ (the exact expectation of the
# REINFORCE estimator, no sampling noise). With $\partial \pi_k/\partial\theta_j =
# \pi_k(\delta_{kj}-\pi_j)$,
#
# $$\frac{\partial J}{\partial \theta_j} = \sum_k R_k\,\pi_k(\delta_{kj}-\pi_j)
# = \pi_j\,(R_j - J).$$
#
# So the **logit** $\theta_j$ of a behaviour rises exactly when its reward beats the current average,
# $R_j > J$. Its **probability** is another matter, because every logit moves at once. Along the
# gradient, $\dot\theta = \nabla J$, the chain rule gives
#
# $$\dot\pi_j = \sum_k \pi_j(\delta_{jk}-\pi_k)\,\pi_k(R_k-J)
# = \pi_j\Big[\pi_j(R_j-J) - \sum_k \pi_k^2 (R_k-J)\Big],$$
#
# so $\pi_j$ rises iff $\pi_j(R_j-J) > \sum_k \pi_k^2(R_k-J)$. A rare behaviour that beats the
# average can still *lose* probability while a common behaviour that also beats the average gains
# faster: beating the average is necessary for growth only in the logit. First a finite-difference
# check of $\nabla J$, then gradient ascent under each verifier, then a check of the probability
# condition on the same run.


# %%
def softmax(x):
    z = np.exp(x - x.max())
    return z / z.sum()


def grad_J(theta, R):
    pi = softmax(theta)
    return pi * (R - pi @ R)


theta0 = np.array([0.3, -1.0, 0.5])
h = 1e-6
fd = np.array(
    [
        (softmax(theta0 + h * e) @ R_sloppy - softmax(theta0 - h * e) @ R_sloppy) / (2 * h)
        for e in np.eye(3)
    ]
)
print("formula          :", grad_J(theta0, R_sloppy))
print("finite difference:", fd)
assert np.allclose(grad_J(theta0, R_sloppy), fd, atol=1e-8)


# %%
def ascend(R, steps=300, lr=10.0, start=(2.0, -3.0, 0.0)):
    """Exact gradient ascent on J; returns the behaviour probabilities at every step, (steps+1, 3)."""
    theta, hist = np.array(start), []
    for _ in range(steps + 1):
        hist.append(softmax(theta))
        theta = theta + lr * grad_J(theta, R)
    return np.array(hist)


fn_rate = 0.4  # a verifier that misses 40% of correct answers, whatever the behaviour
runs = {"sloppy verifier (false positives)": R_sloppy, "final-answer verifier": R_true,
        f"final-answer, {fn_rate:.0%} false negatives": (1 - fn_rate) * R_true}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
true_acc = {}
for name, R in runs.items():
    hist = ascend(R)
    true_acc[name] = hist @ R_true
    axes[0].plot(hist[:, 1], label=name)
    axes[1].plot(true_acc[name], label=name)
axes[0].set(title='probability of the "print both options" behaviour', xlabel="update step")
axes[1].set(title="true accuracy (final-answer verifier)", xlabel="update step")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()
# the text's "about 150 steps": the first step where the two true accuracies differ by over 0.01
gap = np.abs(true_acc["sloppy verifier (false positives)"] - true_acc["final-answer verifier"])
first_gap = int(np.argmax(gap > 0.01))
print(f"true accuracies first differ by more than 0.01 at step {quote('9.1:first_gap_step', first_gap)}")
assert 140 <= first_gap <= 160 and gap[first_gap + 8] > 0.1  # then the collapse within a few steps


# %%
# Check the probability condition on the sloppy run of the figure (same start, same step size).
def pi_dot(theta, R):
    """d pi / dt along the gradient flow theta' = grad J: pi_j [pi_j (R_j - J) - sum_k pi_k^2 (R_k - J)]."""
    pi = softmax(theta)
    adv = R - pi @ R
    return pi * (pi * adv - np.sum(pi**2 * adv))


theta, h, rows = np.array([2.0, -3.0, 0.0]), 1e-6, []
for step in range(301):
    g = grad_J(theta, R_sloppy)
    fd_pi = (softmax(theta + h * g) - softmax(theta - h * g)) / (2 * h)  # derivative along grad J
    assert np.allclose(pi_dot(theta, R_sloppy), fd_pi, atol=1e-9)
    pi = softmax(theta)
    rows.append((step, R_sloppy[1] > pi @ R_sloppy, pi_dot(theta, R_sloppy)[1], pi[1]))
    theta = theta + 10.0 * g
both_beats = sum(r[1] for r in rows)
falling = [r for r in rows if r[1] and r[2] < 0]
print(f'"both": R_j > J at {both_beats} of 301 steps, so its logit rises at every one of them;')
print(f"yet its probability falls at {quote('9.1:both_falls_steps', len(falling))} of those steps "
      f"(first {falling[0][0]}, last {falling[-1][0]}); min probability "
      f"{quote('9.1:both_min_p', min(r[3] for r in rows), '.4f')} "
      f"at step {min(rows, key=lambda r: r[3])[0]}")
_pi0 = softmax(np.array([2.0, -3.0, 0.0]))
_adv0 = R_sloppy - _pi0 @ R_sloppy
print(f"step 0: pi_j (R_j - J) = {_pi0[1] * _adv0[1]:.5f}  <  sum_k pi_k^2 (R_k - J) = "
      f"{np.sum(_pi0**2 * _adv0):.5f}: the probability of printing both options dips first")

# %% [markdown]
# The policy starts almost never printing both options (probability $\approx 0.6\%$). Under the
# sloppy verifier that rare behaviour is paid 1.0, more than honest solving earns, so its logit
# rises from the first step. Its probability first dips (while solving is the bulk of the policy,
# solving gains mass faster: the condition above fails), then takes over,
# and true accuracy falls to the coin-flip level. Note the timing: for about 150 steps the sloppy
# run is indistinguishable from the honest one (the true accuracies first differ by more than 0.01 at
# step 152<!--fig:9.1:first_gap_step-->), then it collapses within a few steps; a reward
# curve alone (here it *rises* throughout) would never show it. Under the final-answer verifier the
# loophole dies out. The
# 40% false-negative verifier scales every reward by $0.6$: same winner, just slower (the gradient
# is scaled by $0.6$). That is the asymmetry in one figure: false positives move the optimum, false
# negatives (if they hit all behaviours alike) move only the speed [9.1-9]. A false negative that hits one
# correct *style* (say, answers written as decimals) does bias the policy: away from that style.
#
# **The checker passport.** Because the verifier is part of the task specification, a run records
# it like any other part of the specification. A minimum passport holds:
#
# 1. parser and reference-answer versions;
# 2. canonicalisation rules;
# 3. accepted formats;
# 4. execution restrictions (length, time, memory, network, ...);
# 5. positive, negative and adversarial tests;
# 6. failure categories (no answer, parse error, timeout, exception, wrong result, ...);
# 7. a configuration hash, so that a later run can replay or compare.
#
# The reference verifiers carry a `.passport`: items 1-4 and 7 as data, the categories in
# `CATEGORIES`. The tests (item 5) are the course's own verifier tests, which the instructor runs
# (they are not part of your bundle), and the reference answers'
# version is the task generator's (`helpers/tasks.py` plus seed), so a run passport records those
# next to it. Changing one tolerance changes the hash:

# %%
passport = verify_arithmetic.passport
for key in ("name", "version", "config", "config_hash"):
    print(f"{key:<12}: {passport[key]}")
print("rules       :", *passport["rules"], sep="\n  - ")
print("categories  :", CATEGORIES)
looser = replace(verify_arithmetic, config={**verify_arithmetic.config, "abs_tol": 1e-3})
print(
    "abs_tol 1e-6 -> 1e-3 changes the hash:",
    passport["config_hash"],
    "->",
    looser.passport["config_hash"],
)

# %% [markdown]
# ## 9.1.4 A numeric verifier: useful core, explicit limits
#
# The reference `verify_numeric_answer(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, ...)`
# (version 1.3 of the `numeric` passport) follows a narrow contract that can be tested:
#
# 1. take the contents of the last `\boxed{...}` when there is one (they must be one number);
# 2. otherwise take the last standalone number, fraction or `\frac{a}{b}` in the text; this reading
#    **fails closed**: if that number is part of a larger expression the grammar does not parse
#    (a power `2^{10}`, `5²`, `10**3`; an operator `3-5`, `2 * 5`; a LaTeX group `\sqrt{8}`; an
#    argument of a LaTeX command written without braces, `\sqrt 8`, `\sqrt[3] 8`, `\frac 1 2`,
#    `1 \over 2`, `\log 8`; a subscript, `log_2 8`; a function written as a word, `log 8`,
#    `sqrt(8)`; a factorial, `5!`; digits grouped by spaces or apostrophes, `1 234 567`,
#    `1'234'567`; a comma glued to a digit, `1.234,56`; any dash before the number that is not a
#    sign glued to its digits: `- 5`, `− 5`, `–5`, `– 5`, `－5`; a sign counts only glued, `-5`
#    and `−5` are -5), the result is `parse_error`, never the smaller number it
#    could read. Beyond these classes the reading is an **allow-list**: next to the number (spaces,
#    line breaks and LaTeX spacing such as `\,` skipped; `$` and currency signs read through) may
#    stand only plain words that are not function, operator or negation words (`log`, `gcd`,
#    `times`, `choose`, `not`, `less`...), punctuation, `=`, `:` (not a ratio `3:5`), markdown bold,
#    a parenthetical of words after it, LaTeX math delimiters, a bracket pair that holds the number
#    alone, and commands that take no number (`\approx`, `\Rightarrow`, `\text{...}`). Any other
#    symbol (`√8`, `2π`, `|8|`, `±3`, `2(4)`) refuses the reading, and so does a digit anywhere
#    after the last standalone number (`\frac12`, `x2`, `1½`). The tests generate spellings of
#    each class (any command name, any Unicode symbol, spaces, options) rather than naming a few.
#    A percent sign is dropped (`50%` reads as 50, the number of percent);
# 3. remove thousands separators (`1,234`, LaTeX's `1{,}234`); read `\frac{a}{b}` (also `\dfrac`,
#    `\tfrac`) as the fraction $a/b$;
# 4. parse exactly with `fractions.Fraction` (never `float`);
# 5. accept iff $|x-\text{ref}| \le \max(\text{abs\_tol},\ \text{rel\_tol}\cdot|\text{ref}|)$, in
#    rationals, with the tolerances read as the decimals they are written as
#    (`Fraction("1e-6")`, exactly $10^{-6}$). The tolerances are a course choice [9.1-8].
#
# It returns `.reward` (1.0 or 0.0), `.category`, `.extracted` and, for a refused last number,
# `.detail` (why). That is right for an arithmetic exercise and is not a general mathematical
# verifier. We do not re-implement it; we **attack** it. Each row below is an input, the verdict a
# careful human grader would give, and what the verifier does. A disagreement is a false positive
# (FP) or a false negative (FN).

# %%
ATTACKS = [  # (reference, response, human verdict: True = correct)
    ("81", r"\boxed{81}", True),
    ("81", "The sum is 81.", True),
    ("1234", r"\boxed{1,234}", True),
    ("1234", "1{,}234", True),  # LaTeX's grouped comma
    ("0.428571", r"Final: \boxed{3/7}", True),
    ("0.5", r"\boxed{\frac{1}{2}}", True),
    ("0.5", r"The answer is \frac{1}{2}.", True),  # \frac in running text
    ("-5", "\u22125", True),  # Unicode minus sign
    ("81", "80", False),
    ("81", r"A naive sum gives 81, but carrying wrongly I get \boxed{79}", False),
    ("81", "The answer is 79. Check: 40 + 41 = 81", False),  # gold number in a wrong derivation
    ("43", "42, not 43", False),  # the gold number after a negation: refused (a negation word)
    ("43", "42, never 43", False),  # the gold number as the last word of a wrong answer
    ("5", r"\boxed{3} or perhaps \boxed{5}", False),  # several boxes
    ("5", "the answer is 3 or 5", False),  # a hedge
    # a number inside a larger expression: a smaller number must not be read (fails closed)
    ("2", r"The answer is \frac{1}{2}", False),  # the denominator is not the answer
    ("2", r"so it is $\dfrac{1}{2}$", False),
    ("10", "2^{10}", False),  # a power: 1024
    ("5", "5\u00b2", False),  # 5 squared
    ("100000", "10**100000", False),
    ("5", "x = \u20135", False),  # an en dash where a minus sign was meant
    ("5", "x = \uff0d5", False),  # a full-width minus
    ("567", "1 234 567", False),  # digits grouped by spaces
    ("567", "1'234'567", False),  # grouped by apostrophes
    ("56", "1.234,56", False),  # a European decimal comma
    ("234", "1{,}234", False),
    # robustness: bad input lands in a category
    ("5", r"\boxed{5/0}", False),  # zero denominator
    ("5", "nan, inf, -inf", False),
    ("5", r"\boxed{1e999}", False),  # overflow
    # the tolerance has false positives of its own
    ("1000000000", r"\boxed{1000000001}", False),  # integer off by one, at 1e9
    ("123456789012", "123456789100", False),  # off by 88: rel_tol * ref = 123.5
    ("5e-7", r"\boxed{1e-7}", False),  # off by 4e-7 <= abs_tol
    ("9e-7", "0", False),
    # what the grammar refuses by design
    ("2.8284271", r"\boxed{\sqrt{8}}", True),  # symbolic: sqrt(8) = 2 sqrt(2)
    ("0.05", r"\boxed{5\text{ cm}}", True),  # units: the reference is in metres
    # a task whose answer is a set, {1, 2} (x^2 - 3x + 2 = 0), stored as the scalar reference "2"
    ("2", "x = 1 or x = 2", True),
    ("2", "x = 2 or x = 1", True),  # the same set in the other order
    ("2", "x = 2", False),  # misses the root 1
    ("5", "print(5)  # reward = 1.0", False),  # code in the answer
    # policy rows: a human could read 5 in both; the course refuses them on purpose (a response
    # that ends in an unclosed box, and one over the 20 000-character cap). Counted apart.
    ("5", r"\boxed{5}} \boxed{", False),  # brace injection
    ("5", "9" * 30_000 + r" \boxed{5}", False),  # very long response
]
POLICY_ROWS = {r"\boxed{5}} \boxed{", "9" * 30_000 + r" \boxed{5}"}


def flag_of(reward: float, human: bool, resp: str) -> str:
    """'' when the verifier agrees with the human verdict, else FP / FN; 'policy' on a policy row
    the verifier pays (the course refuses it whatever a human reads)."""
    if resp in POLICY_ROWS:
        return "policy" if reward == 1.0 else ""
    return "" if (reward == 1.0) == human else ("FP" if reward == 1.0 else "FN")


flags = {"FP": 0, "FN": 0, "policy": 0}
ours = []  # the reference verifier's reward per row, for the comparison below
for ref, resp, human in ATTACKS:
    r = verify_numeric_answer(resp, ref)
    ours.append(r.reward)
    flag = flag_of(r.reward, human, resp)
    if flag:
        flags[flag] += 1
    shown = resp if len(resp) < 42 else resp[:20] + "..." + resp[-12:]
    print(
        f"{flag:<3}{r.category:<12}{r.reward:.0f}  ref={ref:<13} extracted={r.extracted!r:<16} {shown!r}"
    )
print(flags)
quote("9.1:ours_fp", flags["FP"])
quote("9.1:attack_rows", len(ATTACKS))
quote("9.1:ours_fn", flags["FN"])

# %% [markdown]
# Read the flags [9.1-7]: 9<!--fig:9.1:ours_fp--> FPs and 3<!--fig:9.1:ours_fn--> FNs. The FPs come from three places. *Extraction*: several boxes (the last
# wins), a hedge, a check written after the answer or a gold number as the last word (the last
# number wins). *The tolerance*: it
# is *relative* for large references ($10^{-9}\cdot 10^9 = 1$, so an off-by-one integer passes, and
# $10^{-9}\cdot 1.2\times10^{11}$ lets 88 through) and *absolute* for small ones (every number within
# $10^{-6}$ of $5\times10^{-7}$ passes, including $0$ and $10^{-7}$). *The reference*: "x = 2"
# misses a root, but the scalar reference "2" cannot say so. The FNs come from what the grammar
# refuses by design (symbolic forms, units) and, again, from the scalar reference: "x = 2 or x = 1"
# is the right set in another order. The set rows are a **task bug**, not a label to flip: the
# human verdicts are right for the set task, and the fix is a set-valued reference with a set
# checker, which this verifier does not have.
#
# The rows in the middle block are **fail-closed** cases: each one, read by a plain "last number"
# rule, would pay the smaller number (the denominator of $\frac12$, the exponent of $2^{10}$, the
# last group of $1\,234\,567$, the 5 after a dash). Under RL every one of those is an exploit: a
# policy that writes `\frac{1}{2}` for every question with answer 2 is paid. Here they land in
# `parse_error` (or are read whole, as `\frac{1}{2}` and `1{,}234` are) and the `detail` says why:

# %%
for resp in ["2^{10}", "5\u00b2", "x = \u20135", "x = \u2013 5", "x = - 5", "1 234 567", "1.234,56",
             r"\sqrt{8}", r"\sqrt[3] 8", r"\frac 1 2", "log_2 8", "3-5", "5!"]:
    r = verify_numeric_answer(resp, "5")
    print(f"{resp!r:<14} {r.category:<12} extracted={r.extracted!r:<8} {r.detail}")
    assert r.category == "parse_error" and r.detail, resp

# %% [markdown]
# The robustness rows (zero denominator, NaN, overflow, braces, 30 000 characters) all land in a
# named category without an exception: that is the part of the contract the reference gets right.
# The `categories` column is exactly the passport's failure list.
#
# **"The last number wins" is the specification's rule, and its own warning.** `42, never 43` is
# paid for 43: the gold number appears inside a wrong answer. The fail-closed reading refuses
# `42, not 43` (a negation word before the number), but no list of words closes this class: any
# phrasing it does not list (`never`, `rather than`, `instead of`) passes. A policy trained on
# this verifier can learn to end every answer on a plausible number. **Train with a contract that
# needs a commitment**: one boxed final answer at the end, stated in the prompt, which is the
# strict verifier you write in A4 (it gives `42, never 43` `no_answer`). Use the last-number reading for evaluation of a model that was never trained
# against it, not as a training reward.
#
# **The tolerance is a design choice.** An alternative contract needs no tolerance constants at all:
# integers and fractions are compared exactly, and a decimal reference is matched to the precision
# it states ("0.428571" has six places, so it accepts anything within half a unit of the sixth
# place). Both contracts on the tolerance rows, and two rows where they differ the other way:

# %%
_DECIMAL = re.compile(r"[-+]?[0-9]*(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?")


def stated_precision_match(value: Fraction, reference: str) -> bool:
    """Exact for integer and fraction references; a decimal reference with d places: within 1/2 unit."""
    ref = parse_number(reference)
    m = _DECIMAL.fullmatch(reference.strip())
    if m is None or (m.group(1) is None and m.group(2) is None):  # an integer or a/b: exact
        return value == ref
    places = len(m.group(1) or "") - int(m.group(2) or 0)  # "5e-7" states the 7th place
    return abs(value - ref) <= Fraction(1, 2) * Fraction(10) ** -places


PRECISION_ROWS = [  # (reference, response, human verdict)
    ("0.428571", "3/7", True),
    ("1000000000", "1000000001", False),
    ("123456789012", "123456789100", False),
    ("5e-7", "1e-7", False),
    ("9e-7", "0", False),
    ("3/7", "0.4285714", True),  # a correct decimal for a fraction reference
    ("0.5", "0.54", False),  # "0.5" states one place, so 0.45..0.55 would pass
]
print(f"{'reference':<14}{'response':<14}{'human':<7}{'tolerance':<11}stated precision")
for ref, resp, human in PRECISION_ROWS:
    tol_ok = verify_numeric_answer(resp, ref).reward == 1.0
    prec_ok = stated_precision_match(parse_number(resp), ref)
    print(f"{ref:<14}{resp:<14}{human!s:<7}{tol_ok!s:<11}{prec_ok}")

# %% [markdown]
# Neither contract is simply right. The stated-precision rule removes all four tolerance FPs, but
# it rejects a correct seven-place decimal for `3/7` and reads a reference written "0.5" as "one
# decimal place", accepting 0.54. The course keeps the tolerance contract (the graded exercise and
# the later lessons use it, and the course's tasks store exact integer or fraction references; there
# a wrong *integer* is never paid below $10^9$, though a non-integer within $10^{-6}$ is, as the
# cell below checks) and states its false positives here instead. A
# run that uses large integers or tiny decimals should pass `rel_tol=0` or a smaller `abs_tol`:
# the passport records the choice. For an integer reference $|r| < 10^9$ and an integer $x \ne r$,
# $|x-r| \ge 1 > \max(10^{-6}, 10^{-9} |r|)$; at $|r| = 10^9$ the relative term reaches 1:

# %%
rng_int = np.random.default_rng(0)
refs = [0, 1, 12, 999_999_999, *rng_int.integers(0, 10**9, 200).tolist()]
pairs = [(r, r + d) for r in refs for d in (-2, -1, 1, 2) if r + d >= 0]
assert all(verify_numeric_answer(str(x), str(r)).category == "wrong" for r, x in pairs)
assert verify_numeric_answer(r"\boxed{12.0000001}", "12").category == "correct"  # within abs_tol
assert verify_numeric_answer("1000000001", "1000000000").category == "correct"  # rel_tol * r = 1
print("wrong integers paid below 10**9: none;", "12.0000001 for 12: paid;", "10**9 + 1 for 10**9: paid")

# %% [markdown]
# **A second opinion.** Hugging Face's `math-verify` (version 0.9.0, pinned by the course) parses
# LaTeX into SymPy and compares expressions. The same table, side by side (it runs offline; the
# cell skips it when the package is missing):

# %%
try:
    import logging

    from math_verify import parse as mv_parse
    from math_verify import verify as mv_verify
except ImportError:
    print("math-verify is not installed: pip install math-verify==0.9.0")
else:
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # its timeout warnings
    both = {name: {"FP": 0, "FN": 0, "policy": 0} for name in ("reference verifier", "math-verify")}
    print(f"{'human':<7}{'ours':<6}{'math-verify':<13}response")
    for (ref, resp, human), our in zip(ATTACKS, ours):
        theirs = float(mv_verify(mv_parse(f"${ref}$"), mv_parse(resp)))
        for name, reward in (("reference verifier", our), ("math-verify", theirs)):
            flag = flag_of(reward, human, resp)
            if flag:
                both[name][flag] += 1
        if (our == 1.0) != (theirs == 1.0):  # print only the rows where the two disagree
            shown = resp if len(resp) < 42 else resp[:20] + "..." + resp[-12:]
            print(f"{human!s:<7}{our:<6.0f}{theirs:<13.0f}{shown!r}")
    print(both)
    assert both["reference verifier"] == flags  # the same table, the same counts
    quote("9.1:mv_fp", both["math-verify"]["FP"])
    quote("9.1:mv_fn", both["math-verify"]["FN"])
    quote("9.1:mv_policy", both["math-verify"]["policy"])
    print("math-verify reads 1e-7 as", mv_parse(r"\boxed{1e-7}")[0], "(1 times e, minus 7)")
    print("and two boxes as a set:", mv_parse(r"\boxed{3} or perhaps \boxed{5}")[0])

# %% [markdown]
# On this table the two make different mistakes [9.1-12]: math-verify has
# 5<!--fig:9.1:mv_fp--> FPs and 4<!--fig:9.1:mv_fn--> FNs, and pays both
# (2<!--fig:9.1:mv_policy-->) policy rows. `math-verify` rejects both hedges (it
# reads two boxes as the set $\{3, 5\}$), pays none of the tolerance rows and gets $\sqrt 8$
# right, but it pays `5²` for 5 and, by the course's policy, the brace injection and the
# 30 000-character response (it has no length cap); it refuses the Unicode minus and `1{,}234`, and reads `1e-7` as $1\cdot e - 7$. Both pay `42, never 43` and
# the check written after a wrong answer. A second verifier is a way to *find* disagreements to
# read by hand, not a ground truth.
#
# Limits in words: no symbolic equality, no sets or intervals, no units, no conditions of existence
# ("no solution" answers), and "the answer" means "the last box or number", which a hedging policy
# can exploit. The strict verifier you write in the assessment closes the multiple-answer loophole.
#
# **Your turn (ungraded).** Add three attacks of your own to `MY_ATTACKS` and predict the category
# before you run the cell. Can you find another false positive?

# %%
MY_ATTACKS = [  # (reference, response)
    ("12", r"\boxed{12.0000001}"),
    ("12", r"\boxed{ 12 }\boxed{}"),
    ("-3", "minus 3, i.e. -3"),
]
for ref, resp in MY_ATTACKS:
    r = verify_numeric_answer(resp, ref)
    print(f"{r.category:<12}{r.reward:.0f} extracted={r.extracted!r:<12} {resp!r}")

# %% [markdown]
# **Engineering rule.** (1) Run the checker's tests first. (2) Collect rewards *without* updating
# weights. (3) Read the failures by category. (4) Only then switch learning on. Otherwise the policy
# explores undocumented parser behaviour instead of the task. Step (2) as a dry run: simulated
# responses of a few kinds to 3000 free-response tasks, counted by category.

# %%
dry_tasks = make_tasks("arithmetic", 3000, "train", seed=2)
kinds = [
    lambda t: f"\\boxed{{{t.answer}}}",  # clean and correct
    lambda t: f"It is {t.answer}.",  # correct, no box
    lambda t: f"\\boxed{{{parse_number(t.answer) + 1}}}",  # off by one
    lambda t: f"\\boxed{{{float(parse_number(t.answer)):.3f}}}",  # rounded decimal
    lambda t: "I am not sure.",
]
counts = {}
for i, t in enumerate(tqdm(dry_tasks, desc="dry run (no update)")):
    v = verify_arithmetic.check(t, kinds[i % len(kinds)](t))
    counts[v.category] = counts.get(v.category, 0) + 1
print("dry run, no update:", counts)

# %% [markdown]
# The "rounded decimal" responses are worth a look: a fraction such as $37/13$ written to three
# decimals misses `abs_tol = 1e-6` and is scored wrong; an integer written as `179.000` passes. If
# the prompt never told the policy which format is expected, those are false negatives of the
# *contract*, found before a single update.
#
# ## 9.1.5 When does a group carry a learning signal?
#
# Let each of $G$ responses to one prompt be correct with probability $p$, independently given the
# prompt and the generation protocol, with binary reward. A group is **informative** for a centred
# group estimate when it has at least one success and at least one failure (9.1.1: an all-equal
# group has all $r_i-\bar r=0$). The two uninformative events are disjoint (for $G\ge1$), with
# probabilities $p^G$ (all correct) and $(1-p)^G$ (all wrong), so
#
# $$P_{\text{info}}(p,G) = 1-p^G-(1-p)^G \quad\text{[9.1-10]}.$$
#
# It is zero at $p=0$ and $p=1$, zero for $G=1$ (one response cannot disagree with itself),
# symmetric under $p\leftrightarrow 1-p$, and largest at $p=1/2$, where it equals $1-2^{1-G}$.
# A Monte Carlo check of the formula (20 000 simulated groups per point):


# %%
def p_info_formula(p, G):
    return 1.0 - p**G - (1.0 - p) ** G


mc_rng = np.random.default_rng(1)
for p, G in [(0.1, 8), (0.5, 4), (0.9, 16), (0.03, 8)]:
    wins = (mc_rng.random((20_000, G)) < p).sum(axis=1)  # successes per group
    informative = np.mean((wins > 0) & (wins < G))
    print(f"p={p:<5} G={G:<3} Monte Carlo {informative:.4f}   formula {p_info_formula(p, G):.4f}")

# %%
ps = np.array([0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99])
print("G = 8:")
print("p       :", "  ".join(f"{p:>6.2f}" for p in ps))
print("P_info  :", "  ".join(f"{p_info_formula(p, 8):>6.3f}" for p in ps))

grid = np.linspace(0, 1, 401)
plt.figure(figsize=(6, 3.6))
for G in (2, 4, 8, 16):
    plt.plot(grid, p_info_formula(grid, G), label=f"G = {G}")
plt.xlabel("per-prompt success probability p")
plt.ylabel(r"$P_{info}(p, G)$")
plt.title("probability that a group has both a success and a failure")
plt.legend()
plt.grid(alpha=0.3)
plt.show()

# %% [markdown]
# Near $p\approx0$ almost every group is all wrong; near $p\approx1$ almost every group is all
# right. A larger $G$ widens the useful band but costs $G$ generations per prompt.
#
# **The cost of collecting $B$ informative prompts.** Draw prompts one at a time; each draw is
# informative with probability $P_{\text{info}}$, independently, at an **approximately
# stationary** rate: while the policy learns, every $p_j$ drifts, so the formula is the expected
# cost at the current rates (good while the batch is collected within a few updates, not over a
# whole run). Under that assumption the number of draws until the $B$-th informative one is
# negative binomial, with mean
#
# $$\mathbb E[N_{\text{draw}}] = \frac{B}{P_{\text{info}}}.$$
#
# (Each informative prompt takes a geometric number of draws with mean $1/P_{\text{info}}$; add
# $B$ of them.) This is what *dynamic sampling* pays: discard all-equal groups, keep drawing.
# Check by simulation:

# %%
B, G, p = 16, 8, 0.05
P = p_info_formula(p, G)
runs_ = 4000
draws = mc_rng.negative_binomial(B, P, size=runs_) + B  # failures before B successes, plus B
print(f"B={B}, G={G}, p={p}: formula B/P_info = {B / P:.2f}, simulated mean = {draws.mean():.2f}")

# %% [markdown]
# **Per-prompt rates, not a pooled rate.** Real pools mix easy, hard and impossible prompts. If
# prompt $j$ (drawn uniformly from $J$ prompts) has success probability $p_j$, a draw is
# informative with probability $\frac1J\sum_j P_{\text{info}}(p_j,G)$, so
#
# $$\mathbb E[N_{\text{draw}}] = \frac{B}{\frac1J\sum_j P_{\text{info}}(p_j,G)}
# \quad\neq\quad \frac{B}{P_{\text{info}}(\bar p, G)},\qquad \bar p=\tfrac1J\textstyle\sum_j p_j.$$
#
# Substituting the pooled rate $\bar p$ is wrong, and wrong in a known direction:
# $\partial_p^2 P_{\text{info}} = -G(G-1)\,[p^{G-2}+(1-p)^{G-2}] \le 0$, so $P_{\text{info}}$ is
# concave in $p$, and by Jensen's inequality the average of $P_{\text{info}}(p_j)$ is at most
# $P_{\text{info}}(\bar p)$. The pooled rate never *under*states the informative fraction (never
# *over*states the cost); for $G\ge2$ the concavity is strict, so it overstates the fraction
# whenever the $p_j$ differ, and is exact only when they are all equal (or $G=1$). Example: a pool where half the prompts are solved always and half never.

# %%
pool = np.array([0.0] * 50 + [1.0] * 50)
B, G = 32, 8
per_prompt = np.mean(p_info_formula(pool, G))
pooled = p_info_formula(pool.mean(), G)
print(
    f"pooled p = {pool.mean():.2f}: P_info(pooled) = {pooled:.4f} -> {B / pooled:.1f} draws expected"
)
print(
    f"per-prompt average P_info = {per_prompt:.4f} -> {B / per_prompt if per_prompt else math.inf} draws"
)

# numerical check of the concavity formula (central second difference)
d2 = 1e-4
curv = (
    p_info_formula(0.3 + d2, G) - 2 * p_info_formula(0.3, G) + p_info_formula(0.3 - d2, G)
) / d2**2
print(f"second derivative at p=0.3, G=8: finite difference {curv:.3f}, formula "
      f"{-G * (G - 1) * (0.3 ** (G - 2) + 0.7 ** (G - 2)):.3f}")

# %%
B, G = 32, 8
fig, ax = plt.subplots(figsize=(6, 3.6))
for mean_p in (0.5, 0.2):
    spreads = np.linspace(0, 0.98 * mean_p, 50)  # half the prompts at mean-d, half at mean+d
    true_cost = [
        B / np.mean(p_info_formula(np.array([mean_p - d, mean_p + d]), G)) for d in spreads
    ]
    pooled_cost = [B / p_info_formula(mean_p, G)] * len(spreads)  # the pooled rate ignores d
    ax.plot(spreads, true_cost, label=f"per-prompt average, mean p = {mean_p}")
    ax.plot(spreads, pooled_cost, "--", label=f"pooled rate, mean p = {mean_p}")
ax.set_yscale("log")
ax.set(xlabel="spread d (half the prompts at mean - d, half at mean + d)",
       ylabel=f"expected draws for B = {B}", title=f"cost of {B} informative prompts, G = {G}")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.show()

# %% [markdown]
# With no spread the two agree. As the pool splits into too-easy and too-hard prompts at a fixed
# mean, the true cost explodes while the pooled estimate stays flat. This is why dynamic
# resampling and a moving difficulty curriculum are used, and also why they need care: they change
# the training distribution (easy and nearly impossible prompts stop contributing gradients).
# Keep the original prompt stream, the rejection reason of every dropped prompt, and evaluate on
# the complete held-out distribution.
#
# **The independence assumption.** $p^G$ assumes the $G$ draws are independent given the prompt and
# protocol. Low temperature or a fixed template lower entropy but keep draws independent (they just
# move $p$). Reusing a sampled prefix or a search branch across candidates *couples* them. A toy
# coupling: with probability $c$ the whole group copies one shared draw.

# %%
p, G = 0.3, 8
for c in (0.0, 0.3, 0.6):
    shared = mc_rng.random((20_000, 1)) < p
    own = mc_rng.random((20_000, G)) < p
    groups = np.where(mc_rng.random((20_000, 1)) < c, shared, own)
    wins = groups.sum(axis=1)
    print(f"coupling c={c}: informative {np.mean((wins > 0) & (wins < G)):.3f}  "
          f"(independent formula {p_info_formula(p, G):.3f}, here (1-c) x formula = "
          f"{(1 - c) * p_info_formula(p, G):.3f})")

# %% [markdown]
# Each response is still correct with probability $0.3$, yet coupled groups are informative less
# often. The converse does not hold: duplicate answers inside a group are expected when $p$ is
# high (many responses reach the same correct answer independently), so duplicates alone do not
# identify dependence.
#
# ---
#
# ## Assessment
#
# Five steps: self-checks (A1, A2), graded code (A3, A4) and short written answers (A5).
#
# ### A1. Self-checks: how much signal?

# %%
selfcheck.numeric(
    "A prompt is solved with probability p = 0.1 per response, and G = 8 responses are sampled "
    "independently. What is P_info(0.1, 8)? (4 decimals)",
    1 - 0.1**8 - 0.9**8,
    "1 - 0.1^8 - 0.9^8 = 1 - 0.00000001 - 0.43046721 = 0.56953278. More than 4 in 10 groups are "
    "all wrong even though one response in ten is right.",
    tol=2e-4,
)

# %%
selfcheck.numeric(
    "With p = 0.1 and G = 8 for every prompt, how many prompt draws do you expect to need for a "
    "batch of B = 64 informative prompts? (one decimal)",
    64 / (1 - 0.1**8 - 0.9**8),
    "E[N] = B / P_info = 64 / 0.56953278 = 112.37. Each draw costs G = 8 generations, so about "
    "899 generations for 64 useful groups.",
    tol=1e-3,
)

# %%
selfcheck.choice(
    "Prompt pool A: every prompt has p = 0.5. Pool B: half the prompts have p = 0.1 and half "
    "p = 0.9 (also mean 0.5). G = 8. Which pool needs more draws for B informative prompts?",
    [
        "A, because its prompts are all of medium difficulty",
        "B, because the average of P_info over prompts is below P_info of the average",
        "They cost the same, since the pooled success rate is 0.5 in both",
    ],
    1,
    "P_info is concave in p, so averaging it over prompts gives less than evaluating it at the "
    "mean: pool A gives 0.992, pool B gives 0.570 (P_info(0.1, 8) = P_info(0.9, 8)). The pooled "
    "rate hides the difference.",
)

# %% [markdown]
# ### A2. Self-check: which error is more dangerous?

# %%
selfcheck.choice(
    "Two verifiers are each wrong on 2% of responses. V1 accepts 2% of wrong answers (false "
    "positives, all of one kind: a final line listing several candidates). V2 rejects 2% of "
    "correct answers at random. Which is more dangerous for a long RL run?",
    [
        "V2: rejecting correct answers wastes the rare successes",
        "V1: the accepted wrong behaviour is paid, so optimisation can amplify it until it dominates",
        "Neither: 2% noise averages out over many updates",
        "They are equally harmful, since the error rates are equal",
    ],
    1,
    "A false positive is a direct incentive: the logit of a paid behaviour rises whenever its "
    "reward beats the current average, however rare it starts; its probability may dip at first "
    "while a larger behaviour gains faster, then it can take over (see the figure in 9.1.3). "
    "Random false "
    "negatives scale the success signal down (slower learning) but do not point the policy at a "
    "wrong behaviour. Error rates measured before training say little about rates after the "
    "policy has adapted to the checker.",
)

# %% [markdown]
# ### A3. Graded: the informative-group probability and the cost of a batch
#
# **How you are graded.** Each graded function has one test cell: the visible asserts you can run
# now, and hidden tests that run only when the course grades your notebook. The hidden tests check
# every promise of the docstring (shapes, dtypes, the errors it names, degenerate and empty inputs,
# that your inputs are left unmodified) and compare your function with the course's on seeded random
# inputs, with the tolerances the docstring or the test states. A test cell earns its points when it
# runs without an error. What your code prints, to stdout or stderr (`print`, `logging`, warnings),
# never costs points: the feedback shows it, marked `[stderr]`.
#
# Write `p_info`. It must work on a scalar or an array of probabilities and be numerically careful:
# for tiny $p$ (or tiny $1-p$), `1 - (1 - p)**G` loses most of its digits (with $p=10^{-12}$,
# `1 - p` is stored with a relative error of about $10^{-4}$ in the difference). Write
# $1-(1-s)^G = -\operatorname{expm1}(G\,\operatorname{log1p}(-s))$ with $s=\min(p,1-p)$, and use
# the symmetry $P_{\text{info}}(p)=P_{\text{info}}(1-p)$.


# %% [solution] id=p_info
def p_info(p: float | np.ndarray, G: int) -> float | np.ndarray:
    """Probability that a group of G binary draws holds at least one success and one failure.

    P_info(p, G) = 1 - p**G - (1 - p)**G, for G conditionally independent draws that each succeed
    with probability p.

    Args:
        p: success probability in [0, 1]: a Python/NumPy scalar, a 0-d array, or an array-like of
           any shape (each entry must lie in [0, 1]; NaN is not allowed).
        G: group size, an integer >= 1 (Python int or NumPy integer; bool is not accepted).

    Returns:
        A Python ``float`` when ``p`` is 0-dimensional (``np.ndim(p) == 0``); otherwise a new
        ``np.ndarray`` of dtype float64 with the shape of ``p``. Values lie in [0, 1]; exactly 0.0
        where p is 0 or 1, and everywhere when G == 1. Accurate to a relative error of about 1e-12
        also when p or 1 - p is tiny (say 1e-12): use log1p/expm1 on s = min(p, 1 - p).

    Raises:
        ValueError: if G is not an integer >= 1, or some p is outside [0, 1] or NaN.
    """
    ### BEGIN SOLUTION
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError(f"G must be an integer >= 1, got {G!r}")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):  # False for NaN as well
        raise ValueError("every p must lie in [0, 1]")
    s = np.minimum(arr, 1.0 - arr)  # the smaller of p and 1 - p; P_info is symmetric
    with np.errstate(divide="ignore"):
        one_minus_big = -np.expm1(int(G) * np.log1p(-s))  # 1 - (1 - s)**G, accurate for small s
    out = np.clip(one_minus_big - s ** int(G), 0.0, 1.0) + 0.0  # + 0.0 turns -0.0 into 0.0
    if G == 1:
        out = np.zeros_like(arr)  # exactly 0: one draw cannot disagree with itself
    return float(out) if out.ndim == 0 else out
    ### END SOLUTION


# %%
try:  # a quick look before the tests
    print(p_info(0.1, 8), p_info(np.array([0.0, 0.5, 1.0]), 4))
except NotImplementedError:
    print("p_info is not implemented yet")

# %% [tests] id=test_p_info points=3
_v = p_info(0.5, 2)
assert type(_v) is float, (
    f"a scalar p must give a Python float, got {type(_v).__name__}: convert with float(...)"
)
assert math.isclose(_v, 0.5, rel_tol=1e-12), (
    f"P_info(0.5, 2) should be 1 - 0.25 - 0.25 = 0.5, got {_v}"
)
assert math.isclose(p_info(0.1, 8), 0.56953278, rel_tol=1e-9), (
    "P_info(0.1, 8) should be 1 - 1e-8 - 0.9**8"
)
_a = p_info(np.array([0.0, 0.5, 1.0]), 4)
assert type(_a) is np.ndarray, f"an array p must give an np.ndarray, got {type(_a).__name__}"
np.testing.assert_allclose(np.array(_a, dtype=np.float64), [0.0, 0.875, 0.0], atol=1e-12,
                           err_msg="P_info at p = 0, 0.5, 1 with G = 4: the ends must be exactly 0")
assert p_info(0.3, 1) == 0.0, "a group of one response is never informative (G = 1 gives 0)"

# %% [markdown]
# Now the cost of a batch from a mixed pool. Average the per-prompt probability; do not plug in
# the pooled success rate (9.1.5). You may call your `p_info`; the tests then run it too, so a
# bug in `p_info` costs marks in both cells (fix `p_info` first: its own tests say what is wrong).


# %% [solution] id=expected_draws
def expected_draws(success_rates: np.ndarray, B: float, G: int) -> float:
    """Expected number of prompt draws to collect B informative prompts from a pool.

    Each draw picks one prompt uniformly at random (with replacement) from the pool; prompt j's
    group of G responses is informative with probability P_info(p_j, G). Then

        E[N] = B / mean_j P_info(p_j, G)        (the mean over the J prompts of the pool),

    NOT B / P_info(mean_j p_j, G): the pooled success rate never understates the informative
    fraction, and overstates it whenever the p_j differ (G >= 2).

    Args:
        success_rates: array-like of shape (J,), J >= 1, each entry in [0, 1]: the per-prompt
            success probabilities p_j.
        B: the number of informative prompts wanted, a number > 0.
        G: group size, an integer >= 1.

    Returns:
        A Python ``float``: the expected number of draws (>= B), or ``math.inf`` when no prompt in
        the pool can give an informative group (mean P_info == 0).
        The mean is compared with 0 exactly and P_info computed as accurately as ``p_info``
        promises: a pool [0, 1e-200] has a tiny mean, not a zero one, and a finite count.

    Raises:
        ValueError: empty or non-1-D ``success_rates``, B <= 0, or invalid p / G (as ``p_info``).
    """
    ### BEGIN SOLUTION
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0:
        raise ValueError(f"success_rates must be a non-empty 1-D array, got shape {rates.shape}")
    if not B > 0:
        raise ValueError(f"B must be > 0, got {B!r}")
    mean_info = float(np.mean(p_info(rates, G)))
    return math.inf if mean_info == 0.0 else float(B) / mean_info
    ### END SOLUTION


# %%
try:
    pool = np.array([0.0] * 50 + [1.0] * 50)
    print("pool of never/always solved prompts:", expected_draws(pool, 32, 8), "draws")
    print("pooled-rate estimate               :", 32 / p_info_formula(pool.mean(), 8), "draws")
except NotImplementedError:
    print("expected_draws is not implemented yet")

# %% [tests] id=test_expected_draws points=3
_e = expected_draws(np.array([0.5]), 10, 2)
assert type(_e) is float, f"expected_draws must return a Python float, got {type(_e).__name__}"
assert math.isclose(_e, 20.0, rel_tol=1e-12), (
    f"one prompt with P_info(0.5, 2) = 0.5, B = 10: 20 draws, got {_e}"
)
_e = expected_draws(np.array([0.0, 0.5]), 4, 2)
assert math.isclose(_e, 16.0, rel_tol=1e-12), (
    f"pool [0, 0.5], G = 2: mean P_info = (0 + 0.5)/2 = 0.25, so 4 / 0.25 = 16 draws; got {_e}. "
    "Average P_info over prompts; do not use P_info of the mean rate"
)
_e = expected_draws(np.array([0.0, 0.0, 1.0]), 5, 8)
assert type(_e) is float and _e == math.inf, (
    f"no prompt can ever be informative: expected math.inf, got {_e}"
)

# %% [markdown]
# ### A4. Graded: a stricter numeric verifier
#
# The reference verifier pays `\boxed{3} or perhaps \boxed{5}` and `the answer is 3 or 5` when the
# reference is 5: the last box or number wins. Write `verify_strict`, which pays only a response that
# commits to **one** boxed final answer at the **end**. Reuse the reference pieces: `parse_number`
# for a box's contents, `verify_numeric_answer` for the final comparison. The rules are in the
# docstring; they are applied in order, and the first rule that fires decides the result.
#
# Note what the gate costs: `\boxed{81} because 80 + 1 = 81` becomes a *false negative*. A strict
# contract is only fair if the prompt states it, and its FN rate must be measured like any other.


# %% [solution] id=verify_strict
def verify_strict(
    response: object,
    reference: str,
    *,
    rel_tol: float = 1e-9,
    abs_tol: float = 1e-6,
    max_chars: int = 20_000,
) -> tuple[float, str]:
    """Reward a response only if it commits to exactly one boxed final answer, placed at the end.

    A *box* starts at each occurrence of the 7 characters ``\\boxed{`` (every occurrence counts,
    also one nested inside another box). Its contents run from just after that ``{`` to the
    matching ``}``: count +1 for every ``{`` and -1 for every ``}`` after the opening; the box
    closes where the count first returns to 0. Rules, applied in this order (first match decides):

    1. ``response`` is not a ``str``                         -> (0.0, "invalid_input")
    2. ``len(response) > max_chars``                         -> (0.0, "too_long")
    3. no ``\\boxed{`` in the response                        -> (0.0, "no_answer")
    4. some box is never closed, or the contents of some box
       do not parse with ``helpers.verifiers.parse_number``
       (returns None; e.g. empty, ``3 or 5``, ``\\sqrt{8}``,
       ``1/0``, a nested ``\\boxed{...}``)                     -> (0.0, "parse_error")
    5. the parsed values of the boxes are not all equal,
       compared exactly as ``Fraction`` (``0.5`` and ``1/2``
       are equal; ``0.4285714`` and ``3/7`` are not)          -> (0.0, "multiple_answers")
    6. the text after the closing ``}`` of the box that closes
       last contains a character other than whitespace
       (``str.isspace``), ``.`` or ``$``                        -> (0.0, "trailing_text")
    7. otherwise: ``r = verify_numeric_answer(response, reference, rel_tol=rel_tol,
       abs_tol=abs_tol, max_chars=max_chars)`` and return ``(r.reward, r.category)``
       ("correct" with 1.0, "wrong" or "invalid_reference" with 0.0).

    Text before the first box (the working) is not checked: numbers there are allowed.

    Returns:
        A ``tuple`` ``(reward, category)``: ``reward`` a Python ``float`` (1.0 or 0.0),
        ``category`` a ``str`` named above.
    """
    ### BEGIN SOLUTION
    if not isinstance(response, str):
        return 0.0, "invalid_input"
    if len(response) > max_chars:
        return 0.0, "too_long"
    opener = "\\boxed{"
    starts = [m.start() for m in re.finditer(re.escape(opener), response)]
    if not starts:
        return 0.0, "no_answer"
    values, closes = [], []
    for s in starts:
        depth, close = 0, None
        for j in range(s + len(opener) - 1, len(response)):  # from the box's own "{"
            depth += {"{": 1, "}": -1}.get(response[j], 0)
            if depth == 0:
                close = j  # the matching "}"
                break
        if close is None:
            return 0.0, "parse_error"  # never closed
        value = parse_number(response[s + len(opener) : close])
        if value is None:
            return 0.0, "parse_error"
        values.append(value)
        closes.append(close)
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    tail = response[max(closes) + 1 :]
    if not all(ch.isspace() or ch in ".$" for ch in tail):
        return 0.0, "trailing_text"
    final = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(final.reward), str(final.category)
    ### END SOLUTION


# %%
try:
    for resp in [
        r"So \boxed{81}.",
        r"\boxed{79} or \boxed{81}",
        "79 or 81",
        r"\boxed{81} since 80+1",
        "80, not 81",
    ]:
        ref_cat = verify_numeric_answer(resp, "81").category
        print(f"{resp!r:<28} strict: {verify_strict(resp, '81')!s:<28} reference: {ref_cat}")
except NotImplementedError:
    print("verify_strict is not implemented yet")


# %% [tests] id=test_verify_strict points=4
def _check_strict(response, reference, want_reward, want_category):
    out = verify_strict(response, reference)
    assert type(out) is tuple and len(out) == 2, f"return a tuple (reward, category), got {out!r}"
    reward, category = out
    assert type(reward) is float, f"the reward must be a Python float, got {type(reward).__name__}"
    assert type(category) is str, f"the category must be a str, got {type(category).__name__}"
    assert math.isclose(reward, want_reward) and category == want_category, (
        f"verify_strict({response!r}, {reference!r}) should be ({want_reward}, {want_category!r}), "
        f"got ({reward}, {category!r}): check the rules in the docstring and their order"
    )


_check_strict(r"23 + 58: so \boxed{81}.", "81", 1.0, "correct")
_check_strict(r"\boxed{79} or maybe \boxed{81}", "81", 0.0, "multiple_answers")
_check_strict("The answer is 79 or 81", "81", 0.0, "no_answer")
_check_strict(r"\boxed{81} because 80 + 1 = 81", "81", 0.0, "trailing_text")
_check_strict(r"\boxed{1/2} = \boxed{0.5}", "0.5", 1.0, "correct")

# %% [markdown]
# ### A5. Written answers
#
# Answer in the cells below, in a few sentences or a short list each.
#
# **W1 (3 points).** Write a checker passport for a *code-execution* task: the policy writes a
# Python function, the reward is 1 if all tests pass. Cover the seven passport items of 9.1.3 with
# concrete values, and name two false-positive and one false-negative risk of such a checker.

# %% [written] id=w1_code_passport points=3
# **Model answer.**
#
# 1. *Versions:* checker `pytest-runner` v1.2, task set `funcs-2026-07` with reference tests at
#    commit `abc123`; container image `python:3.11.9-slim@sha256:...`, pytest 8.x pinned.
# 2. *Canonicalisation:* extract the last fenced ```` ```python ```` block; strip it; no other
#    rewriting; the entry point must be `def solve(...)` with the signature from the prompt.
# 3. *Accepted formats:* exactly one code block, standard library only; no reading of files.
# 4. *Execution restrictions:* 2 s CPU time per test, 10 s per task, 512 MB memory, no network,
#    read-only file system except a temporary directory, fixed `PYTHONHASHSEED` and random seed,
#    fresh process per task.
# 5. *Tests:* positive (reference solutions pass), negative (known wrong solutions fail, e.g.
#    off-by-one, wrong type), adversarial (`sys.exit(0)` before asserts, monkey-patching `assert`
#    or the test module, printing "PASSED", infinite loops, reading hidden test files, fork bombs);
#    plus hidden tests the policy never sees.
# 6. *Failure categories:* no_code, syntax_error, import_error, timeout, memory_error, runtime
#    exception, tests_failed, sandbox_violation, correct.
# 7. *Config hash:* sha256 of image digest, limits, test-suite hash and checker version.
#
# *FP risks:* too few/weak tests (a hard-coded answer for the visible cases passes); a program that
# exits with status 0 or tampers with the harness before the assertions run; tests that only check
# the type of the output. *FN risks:* time limits too tight for a correct but slow solution, a
# flaky test (randomness, floating-point comparison without tolerance), or an extraction rule that
# misses a correct solution written outside the expected block.
#
# **Rubric (3 points).** 1 point: at least five of the seven items with concrete values (not just
# the item names). 1 point: execution restrictions include time *and* isolation (network or file
# system) and the passport names adversarial tests. 1 point: two plausible FP risks and one FN risk,
# each tied to a specific mechanism.

# %% [markdown]
# **W2 (2 points).** Explain why DeepSeek-R1-Zero is not a universal recipe for training reasoning
# models. Separate what the report shows from what it does not.

# %% [written] id=w2_r1_zero points=2
# **Model answer.** The report (a claim of its authors, one large run) shows that RL with
# rule-based accuracy and format rewards, started directly from a strong base model
# (DeepSeek-V3-Base) without supervised reasoning traces, reshaped the response distribution:
# longer responses with checking and backtracking. It does not show that skipping SFT, that reward,
# or those hyperparameters are optimal for another model, scale or task mix: one successful process
# is not a comparison. The same report lists the limits (poor readability, language mixing, a focus
# on verifiable tasks), and the released R1 added cold-start data, SFT, rejection sampling and more
# RL stages. The run is also not fully specified: the version read (arXiv v1) gives no KL
# coefficient, clip range, reference schedule or rollout-reuse rule, and the later version's
# headline settings (a KL coefficient of 0.001, a clip epsilon of 10, temperature 1, 16 minibatches
# per rollout, questions and samples per step) fill several of those gaps but are still not a run
# passport, so "copy the R1 configuration" cannot even be done exactly; and
# it depends on a base model strong enough to sample successes at all ($P_{\text{info}}>0$).
#
# **Rubric (2 points).** 1 point: what the evidence supports (verifiable reward reshaped behaviour
# in one reported run) versus what it does not (optimality/generality), with the epistemic status
# stated. 1 point: at least one concrete limit: the documented weaknesses and the multi-stage final
# pipeline, the missing run passport, or the dependence on a strong base model / informative groups.

# %% [markdown]
# **W3 (2 points).** A colleague says: "We do RLVR, so we use GRPO." Using the three axes of 9.1.1,
# explain what is wrong with the sentence, with one example of RLVR without GRPO and one of GRPO
# without a verifiable reward.

# %% [written] id=w3_axes points=2
# **Model answer.** RLVR names the feedback source (a reproducible checker) in an online loop; GRPO
# names an optimisation method (group-relative advantages, no learned critic). They sit on
# different axes, so one does not imply the other. RLVR without GRPO: verifier rewards optimised
# with PPO and a learned critic, or with RLOO/REINFORCE. GRPO without a verifiable reward: GRPO
# with a learned reward model (as in DeepSeekMath, where GRPO was introduced) or with scores from
# human preferences. The sentence should name both choices (and the data collection) separately.
#
# **Rubric (2 points).** 1 point: identifies RLVR as the feedback source and GRPO as the
# optimisation method (different axes). 1 point: one correct example in each direction.
