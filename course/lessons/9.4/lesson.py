# %% [markdown]
# # 9.4 Training dynamics and diagnosis
#
# Lessons 9.1-9.3 built the update: a verifier, group-relative advantages, the clipped objective and
# its normalisation choices. This lesson is about watching a run. A rising mean reward is one number;
# a policy can earn it by getting better, by concentrating on the prompts it already solves, or by
# learning where the checker does not look. Each section adds one axis of a run's dashboard and a
# graded function that computes it. Then the lesson reads a real (small) run's dashboard in which
# accuracy rises while almost everything else gets worse, and ends with a clinic: you diagnose runs
# with induced pathologies by fixed definitions and are graded on runs you never see.
#
# **After this lesson you can**
# 1. say exactly which distribution a logged "entropy" belongs to (base softmax or the behaviour
#    distribution after temperature, top-k and grammar masks) and compute it over active tokens;
# 2. separate token entropy, response diversity, strategy diversity and pass@k, and compute pass@k
#    with the unbiased estimator;
# 3. list the warning signs of collapsing diversity, compute the informative-group rate and the two
#    clip fractions, and name the price of each intervention;
# 4. tell a truncated response from a wrong one, log stop reasons and reward by length, and choose a
#    truncation contract;
# 5. run the matched-budget pass@k comparison behind the "elicitation or discovery" debate and state
#    what it can and cannot show;
# 6. assemble a four-group dashboard and write stopping criteria before a run starts.
# 7. diagnose a run from its log by fixed definitions (entropy collapse, KL blow-up, stale rollouts,
#    reward hacking, signal starvation, verifier failure, length growth), at the first step the
#    evidence exists,
#    apply a stopping rule declared before the run, and choose an intervention from counterfactual
#    reruns, side effects included.
#
# **Conventions used throughout.** $N$ responses, $T$ token positions, $V$ vocabulary entries;
# `mask` is $(N, T)$ with 1 on active (completion) tokens and 0 on padding. Entropies are in nats
# (natural log). "Mean over active tokens" means the sum over all active tokens of all responses
# divided by their count (a pooled token mean, as TRL logs it), not a mean of per-response means.
# Graded functions are pure NumPy; a quantity with nothing to measure (no active token, no response)
# is `nan`, never 0: a missing measurement read as zero is a false measurement.
#
# **How you are graded.** Each graded function has one test cell: the visible asserts you can run
# now, and hidden tests that run only when the course grades your notebook. The hidden tests check
# every promise of the docstring (shapes, dtypes, the errors it names, degenerate and empty inputs,
# that your inputs are left unmodified) and compare your function with the course's on seeded random
# inputs, with the tolerances the docstring or the test states. A test cell earns its points when it
# runs without an error. What your code prints, to stdout or stderr (`print`, `logging`, warnings),
# never costs points: the feedback shows it, marked `[stderr]`.

# %%
import itertools
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

import helpers
from helpers import selfcheck
from helpers.figures import quote
from helpers.diagnostics import Dashboard, Rollout, diversity, peak_memory_mb, summarize, warnings
from helpers.clinic import (CLINIC_RUNS, INTERVENTIONS, LABELS, WINDOW, load_clinic_runs, load_log,
                            mean_f1, single_metric_baseline)
from helpers.gru_lab import SMOKE_HISTORY, failure_pattern
from helpers.plots import plot_dashboard, plot_history

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 9.4.1 Entropy: say what is measured
#
# At a prefix $s_t$ the policy's next-token distribution has entropy
# $$H_t = -\sum_{v\in\mathcal V} \pi(v\mid s_t)\,\log \pi(v\mid s_t), \qquad 0\log 0 := 0 .$$
# A log line "entropy = 0.41" usually averages $H_t$ over the active tokens of a batch. Before
# reading it, ask **which** $\pi$. A sampler rarely draws from the model's raw softmax:
#
# | distribution | how it arises |
# |---|---|
# | base softmax | $\mathrm{softmax}(z)$ of the model's logits $z$ |
# | tempered | $\mathrm{softmax}(z/\tau)$ |
# | truncated | top-$k$ / top-$p$ set the logits outside the kept set to $-\infty$ |
# | grammar-masked | tokens the format forbids get $-\infty$ (the CPU lab does this) |
#
# The **behaviour distribution** is what remains after all the transforms the sampler applies; it is
# the one that generated the data and the one whose probabilities belong in the ratio denominator.
# Its entropy can differ a lot from the base softmax's. Five logits, numbers first:

# %%
TOKENS = ["7", "8", ",", ";", "<eos>"]
z = np.array([2.0, 1.5, 1.0, 0.0, -1.0])  # raw logits of one prefix


def entropy_of(logits):
    """(entropy in nats, probabilities) of softmax(logits) at ONE position (demo only).

    Uses H = log Z - E_p[z] over the finite logits; -inf logits are tokens with p = 0."""
    z_all = np.asarray(logits, dtype=np.float64)
    keep = np.isfinite(z_all)
    zk = z_all[keep]
    log_Z = zk.max() + np.log(np.sum(np.exp(zk - zk.max())))
    probs = np.zeros_like(z_all)
    probs[keep] = np.exp(zk - log_Z)
    return float(log_Z - probs[keep] @ zk), probs


def top_k(logits, k):
    out = np.full_like(logits, -np.inf)
    keep = np.argsort(logits)[::-1][:k]
    out[keep] = logits[keep]
    return out


grammar = np.array([True, False, True, True, False])  # say the format forbids "8" and "<eos>" here
variants = {
    "base softmax": z,
    "temperature 0.7": z / 0.7,
    "top-k = 2": top_k(z, 2),
    "grammar mask": np.where(grammar, z, -np.inf),
    "T 0.7 + grammar + top-2": top_k(np.where(grammar, z / 0.7, -np.inf), 2),
}
FIG_KEYS = {"base softmax": "base", "temperature 0.7": "tempered", "top-k = 2": "topk",
            "grammar mask": "grammar", "T 0.7 + grammar + top-2": "combined"}  # the registry's names
entropies = {}
for name, logits in variants.items():
    H, p = entropy_of(logits)
    entropies[name] = H
    print(f"{name:>24}: H = {H:.4f} nats   p = {p}")
    quote(f"9.4:entropy_{FIG_KEYS[name]}", H, ".2f")
print("from", quote("9.4:entropy_min", min(entropies.values()), ".2f"), "to",
      quote("9.4:entropy_max", max(entropies.values()), ".2f"), "nats")

# %% [markdown]
# The same prefix has an entropy anywhere between 0.49<!--fig:9.4:entropy_min--> and
# 1.28<!--fig:9.4:entropy_max--> nats [9.4-1] depending on which of these
# you call "the policy". Two rules follow.
#
# - **Log the behaviour distribution's entropy** when the question is "how much does the sampler
#   still explore?", and say which transforms it includes. The CPU lab (lesson 9.5) logs the entropy of
#   $\mathrm{softmax}(z/\tau)$ with the grammar's $-\infty$ applied, which is its behaviour
#   distribution.
# - **Know what your library logs.** TRL 1.16's `GRPOTrainer` logs `entropy` [9.4-2] from the logits divided by
#   the temperature, over the full vocabulary: `top_p`, `top_k` and `min_p` shape the sampler but not
#   the logged number (read in the installed source, `add_fused_lm_head(..., temperature=...)`).
#   With `top_p=0.9` the sampler never draws from the cut tail, so the distribution that generated the
#   data is narrower than the one whose entropy was logged (its entropy is typically lower).
#
# **Numerical check: what the mean of $H_t$ estimates.** $H_t$ is the expected surprisal
# $\mathbb E_{v\sim\pi}[-\log\pi(v)]$. Some trainers (the course's own `helpers/trainer.py`, lesson
# 9.5, among them) log the mean surprisal of the *sampled* tokens instead. Over every sampled token it
# estimates the same quantity with more noise; over a subset chosen by reward (9.5's BaseLM lab logs
# it on the rows of informative groups only) it estimates a different quantity, the entropy of the
# rows that were kept. Sampling 200 000 tokens from the last distribution above:

# %%
rng = np.random.default_rng(0)
H_exact, p = entropy_of(variants["T 0.7 + grammar + top-2"])
draws = rng.choice(len(p), size=200_000, p=p)
surprisal = -np.log(p[draws])
print(f"exact H = {H_exact:.4f};  mean sampled surprisal = {surprisal.mean():.4f} "
      f"(+- {2 * surprisal.std() / math.sqrt(len(draws)):.4f}, 2 s.e.)")
assert abs(surprisal.mean() - H_exact) < 4 * surprisal.std() / math.sqrt(len(draws))

# %% [markdown]
# ### Graded: mean token entropy over active tokens
#
# Implement the logged quantity: the entropy of $\mathrm{softmax}(\text{logits})$ at every active
# position, averaged over active tokens. Make it safe for what real batches contain:
# - **$-\infty$ logits** (masked vocabulary): $p=0$ there, and $0\cdot\log 0$ must count as 0, not
#   `nan` (`0 * -inf` is `nan` in floating point);
# - **huge logits** (e.g. 1000): subtract the row maximum before `exp` (a stable log-softmax);
# - **padding positions** may hold anything (even all $-\infty$ or `nan`): select the active tokens
#   first; multiplying by the mask afterwards does not help, because `0 * nan` is `nan`;
# - **no active token**: return `nan` (nothing was measured).


# %% [solution] id=masked_token_entropy
def masked_token_entropy(logits: np.ndarray, mask: np.ndarray) -> float:
    """Mean token entropy (nats) of softmax(logits) over the active tokens.

    Args:
        logits: array-like (N, T, V), real: N responses, T token positions, V vocabulary entries.
            The distribution at position (n, t) is softmax(logits[n, t, :]). An entry of -inf marks a
            token the behaviour policy cannot emit (grammar mask, top-k cut); it has probability 0 and
            contributes 0 to the entropy (0 log 0 = 0). Every ACTIVE position must have at least one
            finite logit and no nan or +inf. Inactive positions are ignored entirely (they may hold
            -inf everywhere or nan).
        mask: array-like (N, T), bool or 0/1 numbers: nonzero = active (completion) token, 0 = padding.

    Returns:
        float: (sum over active (n, t) of H_{n,t}) / (number of active tokens), with
        H_{n,t} = -sum_v p log p in nats. This is a pooled token mean: a response with more active
        tokens contributes more terms. nan if no token is active.

    Raises:
        ValueError: logits not 3-D, mask shape != logits.shape[:2], or an active position with no finite
            logit, a nan or a +inf.
    """
    ### BEGIN SOLUTION
    logits = np.asarray(logits, dtype=np.float64)
    mask = np.asarray(mask)
    if logits.ndim != 3 or mask.shape != logits.shape[:2]:
        raise ValueError(f"need logits (N, T, V) and mask (N, T); got {logits.shape}, {mask.shape}")
    active = mask != 0  # (N, T)
    if not active.any():
        return math.nan
    z = logits[active]  # (M, V): active positions only
    if np.isnan(z).any() or np.isposinf(z).any():
        raise ValueError("active positions must not hold nan or +inf logits")
    zmax = z.max(axis=-1, keepdims=True)  # (M, 1)
    if not np.isfinite(zmax).all():
        raise ValueError("every active position needs at least one finite logit")
    shifted = z - zmax  # <= 0; -inf stays -inf
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (M, V)
    p = np.exp(logp)
    finite = np.isfinite(logp)
    plogp = np.where(finite, p * np.where(finite, logp, 0.0), 0.0)  # 0 log 0 = 0, no 0 * -inf
    H = -plogp.sum(axis=-1)  # (M,)
    return float(H.mean())
    ### END SOLUTION


# %% [tests] id=test_masked_token_entropy points=4
_L = np.array([[[0.0, 0.0, 0.0], [math.log(3.0), 0.0, -np.inf]]])  # (1, 2, 3)
_out = masked_token_entropy(_L, np.array([[1, 1]]))
assert type(_out) is float, (
    f"return a Python float, got {type(_out).__name__} (wrap the result in float())"
)
assert not math.isnan(_out), (
    "got nan: a -inf logit has p = 0 and must contribute 0; compute p*log p only where p > 0 "
    "(0 * -inf is nan)"
)
_H2 = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
assert math.isclose(_out, (math.log(3.0) + _H2) / 2, rel_tol=1e-9), (
    f"expected mean of H(uniform over 3) = ln 3 and H(3/4, 1/4) = {_H2:.6f}, i.e. "
    f"{(math.log(3.0) + _H2) / 2:.6f}; got {_out:.6f}. Check the log-softmax and the natural log"
)
_out = masked_token_entropy(_L, np.array([[1, 0]]))
assert math.isclose(_out, math.log(3.0), rel_tol=1e-9), (
    f"with mask [[1, 0]] only the first position counts: expected ln 3 = {math.log(3):.6f}, got {_out}"
)
_out = masked_token_entropy(np.array([[[1000.0, 1000.0]]]), np.array([[1.0]]))
assert math.isclose(_out, math.log(2.0), rel_tol=1e-9), (
    f"logits (1000, 1000) must give ln 2, got {_out}: subtract the row max before exp (overflow)"
)

# %% [markdown]
# **One mean hides structure.** In a structured answer most positions are nearly forced (separators,
# format) and a few carry the decision (the operation, the final digit). Below, a toy batch of the
# CPU lab's grammar `T,O;S<eos>` where only the digit positions are uncertain. Your function, called
# with a one-column mask, gives the entropy per position:

# %%
rng = np.random.default_rng(1)
N, T, V = 32, 7, 12
logits = np.full((N, T, V), -np.inf)
scale = np.array([0.3, 8.0, 0.5, 8.0, 2.0, 0.8, 8.0])  # logit spread per position: large = forced
for t in range(T):
    logits[:, t, :4] = rng.normal(size=(N, 4)) * scale[t]  # four allowed tokens at every position
mask = np.ones((N, T))
per_pos = [masked_token_entropy(logits, np.eye(T)[t][None, :].repeat(N, 0)) for t in range(T)]
print("mean over all active tokens:", round(masked_token_entropy(logits, mask), 3))
print("per position:              ", np.round(per_pos, 3))
fig, ax = plt.subplots(figsize=(6, 2.6))
ax.bar(range(T), per_pos, color="C0")
ax.axhline(masked_token_entropy(logits, mask), color="C3", ls="--", label="one mean")
ax.set(xticks=range(T), xticklabels=["T", ",", "O", ";", "S1", "S2", "<eos>"],
       ylabel="entropy (nats)", title="Position-wise entropy of a toy batch")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Response diversity, strategy diversity, pass@k
#
# Token entropy is local. Three further quantities look at whole responses:
# - **response diversity**: how many distinct completions a group holds (`helpers.diagnostics.diversity`
#   uses exact string match: distinct strings per group divided by the group size);
# - **strategy diversity**: how many distinct *ways of solving* appear. String diversity counts two
#   formattings of one method as different, and cannot tell a correct method from a habitual error
#   that differs from it in one digit;
# - **pass@k** on held-out prompts: the chance that at least one of $k$ samples is correct, which is
#   what diversity is *for* when a verifier picks among samples.
#
# A group of six answers to `15+16=` (correct: `2,11;31`):

# %%
group = ["2,11;31", "2,11;31", "2,1;21", "2,1;21", "2,11;31", "3,1;31"]


def strategy(text):
    """A coarse strategy label for 15+16 (demo): carried, dropped the carry, or other."""
    return {"2,11;31": "carry kept", "3,1;31": "carry kept", "2,1;21": "carry dropped"}.get(
        text, "other"
    )


print("distinct strings / group size:", diversity(group, [0] * len(group)))
print("strategies:", sorted(set(map(strategy, group))))
print("correct answers:", sum(t.endswith(";31") for t in group), "of", len(group))

# %% [markdown]
# Three distinct strings, two strategies, one of them wrong. Collapse can hide in each column: a
# policy can keep high token entropy on punctuation while every response uses the same method; a
# policy with very low entropy can be using a stable, correct algorithm. None of these numbers has a
# universal "healthy" value.
#
# **What is reported about entropy during RL.** *The Entropy Mechanism of Reinforcement Learning for
# Reasoning Language Models* (Cui et al., 2025) reports, for the runs it studied, a sharp early drop
# of policy entropy together with saturating validation performance, and relates entropy change to
# the covariance between a token's log-probability and its advantage (a confident token with positive
# advantage lowers entropy) [9.4-5]. A 2026 preprint proposes an on-policy entropy-flow mechanism
# against collapse [9.4-6]. Treat both as sources of hypotheses to check on your own
# dashboard: neither gives a threshold that transfers across models, rewards and lengths, and the
# 2026 result is recent and unreplicated as far as this course knows.
#
# ### pass@k and its unbiased estimator
#
# For one prompt with success probability $p$, $\text{pass@}k = 1-(1-p)^k$. We do not know $p$; we
# draw $n \ge k$ samples and count $c$ correct. Plugging $\hat p = c/n$ into $1-(1-\hat p)^k$ is
# **biased** (it is a concave function of $\hat p$, so it underestimates on average). The estimator of
# Chen et al. (2021) [9.4-7] asks instead: if we pick $k$ of the $n$ samples at random without replacement,
# how likely is at least one correct?
# $$\widehat{\text{pass@}k} = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}
#   = 1 - \prod_{i=0}^{k-1}\frac{n-c-i}{n-i}, \qquad (=1 \text{ when } n-c<k).$$
# Its expectation over the $n$ draws is exactly $1-(1-p)^k$ (each $k$-subset is itself $k$
# independent draws). The product form never builds a huge binomial: $\binom{2000}{1000}$ has
# 601<!--fig:9.4:comb_digits--> digits, so a float of it overflows (Python's exact integers do not:
# `math.comb` and exact division work, at the cost of 600-digit arithmetic per prompt); the product
# stays between 0 and 1 throughout.
#
# **Numerical check.** (1) the formula equals the fraction of $k$-subsets containing a success,
# counted exhaustively; (2) averaged over many experiments, the estimator hits $1-(1-p)^k$ and the
# plug-in does not.

# %%
n_, c_, k_ = 8, 3, 3
subsets = list(itertools.combinations(range(n_), k_))  # samples 0..c-1 are the correct ones
frac = sum(any(i < c_ for i in s) for s in subsets) / len(subsets)
formula = 1 - math.comb(n_ - c_, k_) / math.comb(n_, k_)
print(f"exhaustive {frac:.6f}  vs  1 - C(n-c,k)/C(n,k) = {formula:.6f}")
assert math.isclose(frac, formula)

rng = np.random.default_rng(2)
p_true, n_, k_ = 0.1, 10, 5
cs = rng.binomial(n_, p_true, size=200_000)
unbiased = np.array([1 - math.comb(n_ - c, k_) / math.comb(n_, k_) for c in range(n_ + 1)])[cs]
plug_in = 1 - (1 - cs / n_) ** k_
true_pass = 1 - (1 - p_true) ** k_
print(f"true pass@{k_} = {quote('9.4:passk_true', true_pass, '.4f')}; "
      f"unbiased mean = {quote('9.4:passk_unbiased_mean', unbiased.mean(), '.4f')}; "
      f"plug-in mean = {quote('9.4:passk_plugin_mean', plug_in.mean(), '.4f')}")
assert abs(unbiased.mean() - true_pass) < 4 * unbiased.std() / math.sqrt(cs.size)  # unbiased
assert plug_in.mean() < true_pass - 0.01  # the plug-in: biased downwards
big = math.comb(2000, 1000)
try:
    float(big)
except OverflowError:
    print(f"C(2000, 1000) has {quote('9.4:comb_digits', len(str(big)))} digits: float() overflows")
else:
    raise AssertionError("C(2000, 1000) fits a float?")

# %% [markdown]
# ### Graded: pass@k
#
# Implement the unbiased estimator as the product above, vectorised over arrays of $n$ and $c$ (one
# entry per prompt). Return a Python `float` when $n$ and $c$ are scalars and an `np.ndarray` otherwise.


# %% [solution] id=pass_at_k
def pass_at_k(n, c, k: int) -> float | np.ndarray:
    """Unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k).

    Args:
        n: int or integer array-like: samples drawn per prompt.
        c: int or integer array-like (broadcastable with n): how many of them are correct, 0 <= c <= n.
        k: int (one number), 1 <= k <= n for every entry.
        A float that holds a whole number (such as 4.0) counts as an integer; 2.5, nan, inf and
        strings do not.

    Returns:
        The probability that a random k-subset (without replacement) of the n samples holds at least
        one correct sample, computed as 1 - prod_{i=0}^{k-1} (n-c-i)/(n-i) without forming binomials;
        exactly 1.0 where n - c < k. A Python float when n and c are both scalars (``np.ndim`` 0,
        0-d arrays included), else an np.ndarray of dtype float64 with the broadcast shape of n and c.

    Raises:
        ValueError: non-integer n, c or k (or k not a single number); c < 0 or c > n; k < 1 or k > n.
    """

    ### BEGIN SOLUTION
    def as_int(x, name):
        a = np.asarray(x)
        if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
            raise ValueError(f"{name} must be integer, got dtype {a.dtype}")
        if np.issubdtype(a.dtype, np.floating):
            if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
                raise ValueError(f"{name} must hold whole numbers")
        return a.astype(np.int64)

    n_arr, c_arr, k_arr = as_int(n, "n"), as_int(c, "c"), as_int(k, "k")
    if k_arr.ndim != 0:
        raise ValueError("k must be one integer")
    k = int(k_arr)
    n_b, c_b = np.broadcast_arrays(n_arr, c_arr)
    if k < 1 or np.any(k > n_b):
        raise ValueError(f"need 1 <= k <= n, got k = {k}")
    if np.any(c_b < 0) or np.any(c_b > n_b):
        raise ValueError("need 0 <= c <= n")
    miss = np.ones(n_b.shape, dtype=np.float64)  # P(no correct in a random k-subset)
    for i in range(k):
        miss *= np.maximum(n_b - c_b - i, 0) / (n_b - i)
    out = 1.0 - miss
    if n_arr.ndim == 0 and c_arr.ndim == 0:
        return float(out)
    return out
    ### END SOLUTION


# %% [tests] id=test_pass_at_k points=3
_out = pass_at_k(5, 2, 2)
assert type(_out) is float, f"scalar n and c must give a Python float, got {type(_out).__name__}"
assert math.isclose(_out, 0.7, rel_tol=1e-12), (
    f"n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7, got {_out}"
)
assert math.isclose(pass_at_k(10, 3, 1), 0.3, rel_tol=1e-12), "k = 1 must give c/n"
assert pass_at_k(5, 4, 2) == 1.0, (
    "n - c < k: every 2-subset contains a correct sample, expected 1.0"
)
_out = pass_at_k(np.array([4, 4, 10]), np.array([0, 1, 3]), 2)
assert type(_out) is np.ndarray, f"array inputs must give an np.ndarray, got {type(_out).__name__}"
np.testing.assert_allclose(np.array(_out, dtype=np.float64), [0.0, 0.5, 24 / 45], rtol=1e-12,
                           err_msg="vectorised: expected [0, 1 - 3/6, 1 - 21/45]")

# %% [markdown]
# ## 9.4.2 Loss of diversity: warning signs and interventions
#
# Signs that a run is trading diversity for mean reward [9.4-8] (any one is a reason to read samples, not a
# verdict):
# 1. entropy keeps falling and does not level off;
# 2. responses inside a group become near duplicates;
# 3. the informative-group rate falls faster than the accuracy alone would explain;
# 4. pass@1 rises while the pass@k curve stops improving or drops;
# 5. the upper clip fraction grows and the ratios become heavy-tailed;
# 6. different seeds converge to the same response template.
#
# **Sign 3 in numbers.** With binary rewards and per-prompt success $p_i$, a group of $G$ is
# informative with probability $1-p_i^G-(1-p_i)^G$ (lesson 9.1). The accuracy is the mean of $p_i$.
# Two batches with the same accuracy 0.5 can therefore carry very different signal:

# %%
G = 6
for name, ps in {"every prompt p = 0.5": [0.5] * 8, "half p = 1, half p = 0": [1.0] * 4 + [0.0] * 4,
                 "p in {0.9, 0.1}": [0.9] * 4 + [0.1] * 4}.items():
    ps = np.array(ps)
    print(f"{name:>24}: accuracy {ps.mean():.2f}, expected informative rate "
          f"{np.mean(1 - ps**G - (1 - ps) ** G):.3f}")

# %% [markdown]
# A policy that solves some prompts always and others never has the same accuracy as one that solves
# every prompt half the time, and no gradient at all. Concentration shows up here before it shows up
# in the mean.
#
# ### Graded: informative-group rate
#
# From a flat batch (one row per response, a group id per row) compute the fraction of groups whose
# rewards are not all equal. Convention: **exact** equality (no tolerance), because the advantage of a
# group is zero exactly when all its rewards are equal; a group of one response is uninformative.


# %% [solution] id=informative_group_rate
def informative_group_rate(rewards: np.ndarray, group: np.ndarray) -> float:
    """Fraction of groups holding at least two distinct rewards.

    Args:
        rewards: array-like (N,), finite reals: one reward per response.
        group: array-like (N,), integers: the group (prompt) id of each response. Ids need not be
            sorted, contiguous or start at 0; the rows of one group need not be adjacent.

    Returns:
        float: (number of informative groups) / (number of distinct group ids). A group is
        informative iff max(rewards) > min(rewards) within it, compared exactly (no tolerance:
        0.1 + 0.2 and 0.3 differ). A group with one response is uninformative. nan when N == 0.

    Raises:
        ValueError: rewards and group of different shapes, or not 1-D.
    """
    ### BEGIN SOLUTION
    r = np.asarray(rewards, dtype=np.float64)
    g = np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError(f"need rewards (N,) and group (N,), got {r.shape} and {g.shape}")
    if r.size == 0:
        return math.nan
    ids = np.unique(g)
    informative = [r[g == i].max() > r[g == i].min() for i in ids]
    return float(np.mean(informative))
    ### END SOLUTION


# %% [tests] id=test_informative_group_rate points=2
_out = informative_group_rate(
    np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.5, 0.5]), np.array([0, 0, 1, 1, 2, 2, 3, 3])
)
assert type(_out) is float, f"return a Python float, got {type(_out).__name__}"
assert math.isclose(_out, 0.25), (
    f"only group 0 (rewards 1, 0) is informative: expected 1/4, got {_out}. A group is informative "
    "when its rewards are not all equal"
)
_out = informative_group_rate(np.array([1.0, 0.0, 0.0, 0.0]), np.array([7, 3, 7, 3]))
assert math.isclose(_out, 0.5), (
    f"rows of one group need not be adjacent (ids 7, 3, 7, 3): expected 0.5, got {_out}"
)

# %% [markdown]
# ### Clip fractions: which branch binds
#
# For one token with ratio $\rho$ and advantage $A$ the clipped objective takes
# $\min\big(\rho A,\ \mathrm{clip}(\rho, 1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}})A\big)$. The
# clipped branch is the smaller one (and the gradient through $\rho$ vanishes) in exactly two cases:
#
# | | $\rho < 1-\epsilon_{\text{low}}$ | $\rho > 1+\epsilon_{\text{high}}$ |
# |---|---|---|
# | $A>0$ | unclipped $\rho A$ is smaller: gradient flows | **high clip binds** (no more increase) |
# | $A<0$ | **low clip binds** (no more decrease) | unclipped $\rho A$ is smaller: gradient flows |
#
# A token outside the range on the "wrong" side for its sign is *not* clipped: a negative-advantage
# token whose probability went up keeps its full gradient. So counting $|\rho-1|>\epsilon$ overstates
# clipping. We log the two binding cases separately: the **high** fraction (positive tokens whose
# probability already rose by more than $\epsilon_{\text{high}}$) is sign 5 above; a large **low**
# fraction says negative tokens are being pushed down hard.
#
# **TRL 1.16's definitions** [9.4-3] (read in `trl/trainer/grpo_trainer.py`, `_compute_loss`):
# `is_low_clipped = (coef_1 < 1 - epsilon_low) & (advantages < 0)`,
# `is_high_clipped = (coef_1 > 1 + epsilon_high) & (advantages > 0)`,
# `is_region_clipped = low | high`, each averaged over active tokens (summed over processes, divided by
# the active-token count clamped to at least 1) and logged as `clip_ratio/low_mean`,
# `clip_ratio/high_mean`, `clip_ratio/region_mean`. Our function uses the same inequalities (strict),
# the same denominator and the same three names, so a TRL log and our dashboard show the same numbers.
# One deliberate difference: with no active token TRL's clamp gives 0.0; we return `nan`.
#
# **Numerical check of the table** with autograd-free finite differences: the derivative of the
# per-token objective with respect to $\rho$ is 0 exactly in the two binding cells.


# %%
def token_objective(rho, A, eps_low=0.2, eps_high=0.2):
    return min(rho * A, float(np.clip(rho, 1 - eps_low, 1 + eps_high)) * A)


for A in (+1.0, -1.0):
    for rho in (0.7, 1.0, 1.3):
        h = 1e-6
        d = (token_objective(rho + h, A) - token_objective(rho - h, A)) / (2 * h)
        binding = (A > 0 and rho > 1.2) or (A < 0 and rho < 0.8)  # the table's two clipped cells
        print(f"A = {A:+.0f}, rho = {rho}: d objective / d rho = {d:+.3f}"
              + ("   (clipped: no gradient)" if binding else ""))
        assert d == 0.0 if binding else math.isclose(d, A, rel_tol=1e-6)

# %% [markdown]
# ### Graded: clip fractions
#
# Advantages may be given per response, shape $(N,)$ (broadcast over the tokens of that response), or
# per token, shape $(N, T)$.


# %% [solution] id=clip_fractions
def clip_fractions(
    ratios: np.ndarray,
    advantages: np.ndarray,
    mask: np.ndarray,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
) -> dict[str, float]:
    """Fractions of active tokens whose clipped branch binds in min(rho A, clip(rho) A).

    Args:
        ratios: array-like (N, T): rho = pi_theta / pi_old per token.
        advantages: array-like (N,) (one per response, broadcast over T) or (N, T) (one per token).
        mask: array-like (N, T), bool or 0/1: nonzero = active token.
        eps_low, eps_high: the clip range [1 - eps_low, 1 + eps_high].

    Returns:
        dict with Python floats, each (count over active tokens) / (number of active tokens):
          "low":    A < 0 and rho < 1 - eps_low   (strict inequalities)
          "high":   A > 0 and rho > 1 + eps_high
          "region": low or high (their sum: the two cases never overlap)
        These are TRL 1.16's clip_ratio/low_mean, high_mean, region_mean. A = 0 is never clipped.
        All three are nan when no token is active.

    Raises:
        ValueError: ratios/mask not (N, T) of one shape, or advantages neither (N,) nor (N, T).
    """
    ### BEGIN SOLUTION
    rho = np.asarray(ratios, dtype=np.float64)
    A = np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask)
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError(f"need ratios and mask of one (N, T) shape, got {rho.shape}, {m.shape}")
    if A.shape == rho.shape[:1]:
        A = A[:, None]  # (N, 1)
    elif A.shape != rho.shape:
        raise ValueError(f"advantages must be (N,) or (N, T), got {A.shape}")
    active = m != 0
    n = int(active.sum())
    if n == 0:
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    low = (rho < 1 - eps_low) & (A < 0) & active
    high = (rho > 1 + eps_high) & (A > 0) & active
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }
    ### END SOLUTION


# %% [tests] id=test_clip_fractions points=3
_rho = np.array([[0.7, 1.0, 1.3], [0.7, 1.25, 0.79]])
_A = np.array([-1.0, 1.0])
_m = np.array([[1, 1, 1], [1, 1, 0]])
_out = clip_fractions(_rho, _A, _m)
assert isinstance(_out, dict) and {"low", "high"} <= set(_out), (
    f"return a dict with keys low, high, region; got {_out!r}"
)
assert all(type(_out[_key]) is float for _key in _out), "the values must be Python floats"
assert math.isclose(_out["low"], 0.2), (
    f"low: only (A<0, rho=0.7) binds, 1 of 5 active tokens -> 0.2; got {_out['low']}. rho=1.3 with "
    "A<0 is NOT clipped (the unclipped branch is smaller), and the masked 0.79 does not count"
)
assert math.isclose(_out["high"], 0.2), (
    f"high: only (A>0, rho=1.25) binds -> 1/5 = 0.2; got {_out['high']}. rho=0.7 with A>0 is not clipped"
)
assert math.isclose(_out["region"], 0.4), f"region = low + high = 0.4, got {_out.get('region')}"

# %% [markdown]
# **Demo: heavy-tailed ratios.** Log-ratios whose spread grows from one update epoch to the next (a
# toy stand-in for rollout reuse and a large learning rate). The high fraction grows with the tail; the
# low fraction mirrors it here only because the toy is symmetric.

# %%
rng = np.random.default_rng(4)
A_demo = rng.choice([-1.0, 1.0], size=64)
for sigma in (0.02, 0.1, 0.3, 0.6):
    rho = np.exp(rng.standard_t(df=3, size=(64, 20)) * sigma)
    cf = clip_fractions(rho, A_demo, np.ones((64, 20)))
    print(
        f"log-ratio scale {sigma:4}: max rho {rho.max():7.2f}   low {cf['low']:.3f}   high {cf['high']:.3f}"
    )

# %% [markdown]
# ### Interventions and what each costs
#
# | intervention | what it buys | what it costs |
# |---|---|---|
# | more diverse behaviour policy (temperature, wider top-p) | more distinct samples per group | lower per-sample accuracy; more tokens; the entropy you log rises without any learning |
# | wider positive clip (Clip-Higher) | positive tokens can keep rising; rare good tokens survive | a weaker trust region; cannot repair a wrong reward |
# | cautious entropy bonus | resists collapse directly | rewards useless uncertainty (punctuation, rambling) as much as useful |
# | larger $G$ or more prompt diversity | more informative groups | generation cost grows linearly |
# | move the difficulty band | keeps $p$ away from 0 and 1 | changes the training distribution (lesson 9.3) |
# | fewer reuse iterations per batch | ratios stay near 1, fewer clipped tokens | more generation per update |
# | stop early | keeps the pre-collapse policy | needs a criterion fixed in advance |
# | separate reward components | stops one component dominating | more weights to choose and justify |
#
# **The first row in numbers.** A toy of 40 prompts, each a softmax over 6 candidate answers; the
# correct answer is the mode for 21<!--fig:9.4:mode_correct--> of the 40. Raising the temperature
# raises entropy and pass@8, and lowers pass@1:

# %%
rng = np.random.default_rng(6)
ans_logits = rng.normal(size=(40, 6)) * 1.5
ans_logits[:, 0] += 1.5  # answer 0 is correct; it is often, not always, the most likely
print("prompts whose most likely answer is the correct one:",
      quote("9.4:mode_correct", int((ans_logits.argmax(axis=1) == 0).sum())), "of 40")
temps = np.linspace(0.3, 2.5, 23)
rows = []
for tau in temps:
    q = np.exp(ans_logits / tau)
    q /= q.sum(axis=1, keepdims=True)
    p_corr = q[:, 0]
    H = float(np.mean(-(q * np.log(q)).sum(axis=1)))
    rows.append((H, p_corr.mean(), np.mean(1 - (1 - p_corr) ** 8)))
rows = np.array(rows)
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(temps, rows[:, 1], label="pass@1")
ax.plot(temps, rows[:, 2], label="pass@8")
ax.plot(temps, rows[:, 0] / np.log(6), label="entropy / ln 6")
ax.set(xlabel="sampling temperature", title="Temperature buys diversity with per-sample accuracy")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 9.4.3 Length, EOS and truncation
#
# A rising mean length can mean useful extra steps, weak pressure against long failures, repetition
# that the format or reward tolerates, a falling probability of `<eos>`, or more responses cut by the
# length limit. The mean alone cannot tell these apart. Log beside it: reward by length bucket;
# natural-stop (EOS) and truncation rates; EOS position; length with control tags removed; repetition
# and parse-failure rates; generation cost.
#
# **Truncated is not wrong.** A response cut at `max_new_tokens` was never seen finished; the checker
# did not observe its answer. Scoring it 0 mixes "wrong" with "unfinished" in one number. Ignoring
# every truncated response is not safe either: below, the policy learns that never stopping avoids
# negative feedback. A run must choose a **truncation contract** and record it:
#
# | contract | what a truncated response gets | risk |
# |---|---|---|
# | treat as wrong | reward 0 like a wrong answer | conflates budget with error; penalises long correct work |
# | mask | excluded from the loss (TRL: `mask_truncated_completions=True` [9.4-4]; see below for what TRL keeps) | a hard prompt teaches "do not stop" |
# | soft penalty | a length-dependent negative reward near the limit (DAPO's overlong shaping, lesson 9.3 [9.4-10]) | pushes towards short answers, even wrong ones |
# | separate label | its own category on the dashboard, plus one of the above for the loss | none by itself: it is a reporting rule |
# | larger budget | fewer truncations | more generation cost; the problem moves, it does not vanish |
#
# **The masking risk in numbers.** A one-prompt bandit with three outcomes: a correct answer
# (reward 1), a wrong answer (reward 0), and rambling until the limit (truncated). The prompt is hard
# (the policy starts with 1% correct). We follow the exact expected policy gradient with a
# group-mean baseline (the large-$G$ limit, no std division) under four contracts:
# $$\nabla_\theta J = \sum_{a\,\in\,\text{loss}} \pi_a\,(r_a - b)\,\nabla_\theta\log\pi_a,\qquad
#   b = \frac{\sum_{a\in\text{baseline}}\pi_a r_a}{\sum_{a\in\text{baseline}}\pi_a}.$$
# Two sets appear because "masking" means two different things:
# - the bandit's **mask** drops the truncated outcome from both sets: it has no reward at all, and
#   the baseline is the mean reward of the outcomes that stopped;
# - TRL's `mask_truncated_completions=True` zeroes only the **loss** mask of a truncated completion.
#   Its reward (whatever the reward function returns for the cut text, 0 for an unparsable answer)
#   is computed first and stays in the group mean and std that set everyone else's advantages
#   [9.4-15]. In the bandit: truncated is in the baseline with reward 0 and out of the loss.

# %%
OUTCOMES = ["correct", "wrong", "truncated"]
# name -> (reward of each outcome, in the loss?, in the baseline?)
CONTRACTS = {
    "treat as wrong": ((1.0, 0.0, 0.0), (1, 1, 1), (1, 1, 1)),
    "mask (bandit)": ((1.0, 0.0, 0.0), (1, 1, 0), (1, 1, 0)),
    "mask loss only (TRL)": ((1.0, 0.0, 0.0), (1, 1, 0), (1, 1, 1)),
    "soft penalty -0.5": ((1.0, 0.0, -0.5), (1, 1, 1), (1, 1, 1)),
}


def softmax(theta):
    p = np.exp(theta - theta.max())
    return p / p.sum()


def contract_grad(theta, rewards, in_loss, in_base):
    """Exact d J / d theta of the softmax bandit under one truncation contract (demo)."""
    p, r = softmax(theta), np.asarray(rewards, dtype=float)
    w_loss, w_base = np.asarray(in_loss, dtype=float), np.asarray(in_base, dtype=float)
    b = (w_base * p * r).sum() / (w_base * p).sum()  # the baseline: mean reward over its set
    coef = w_loss * p * (r - b)  # d J / d log pi_a
    return coef - p * coef.sum(), p, b  # chain rule through the softmax


def contract_objective(theta, rewards, in_loss, b):
    return float(np.sum(np.asarray(in_loss) * softmax(theta) * (np.asarray(rewards) - b)))


# numerical check: finite differences of J (baseline held fixed, as a stop-gradient) vs the formula
theta0 = np.array([-3.0, 1.0, 0.0])
for name, (rw, in_loss, in_base) in CONTRACTS.items():
    g, p0, b0 = contract_grad(theta0, rw, in_loss, in_base)
    fd = np.array([(contract_objective(theta0 + 1e-6 * e, rw, in_loss, b0)
                    - contract_objective(theta0 - 1e-6 * e, rw, in_loss, b0)) / 2e-6 for e in np.eye(3)])
    assert np.allclose(g, fd, atol=1e-7), (name, g, fd)
    print(f"{name:>21}: baseline b = {b0:.4f}")
print("gradient formula matches finite differences for all four contracts")

traj = {}
for name, (rw, in_loss, in_base) in CONTRACTS.items():
    theta, ps = theta0.copy(), []
    for _ in range(300):
        g, p, _ = contract_grad(theta, rw, in_loss, in_base)
        ps.append(p)
        theta = theta + 1.0 * g
    traj[name] = np.array(ps)
    print(f"{name:>21}: start {np.round(ps[0], 3)}  peak truncated {traj[name][:, 2].max():.3f}  "
          f"end {np.round(ps[-1], 3)}")

# the figures the text below quotes, and the comparisons it makes
mask, trl, wrong = (traj[k][:, 2] for k in ("mask (bandit)", "mask loss only (TRL)", "treat as wrong"))
b_mask = contract_grad(theta0, *CONTRACTS["mask (bandit)"])[2]
b_trl = contract_grad(theta0, *CONTRACTS["mask loss only (TRL)"])[2]
assert b_trl < b_mask and trl.max() < mask.max() and trl[-1] < mask[-1]  # TRL's: the same, weaker
assert wrong.max() > wrong[0] and wrong[-1] < wrong[0]  # "treat as wrong" also rises first
print("baseline at the start: mask", quote("9.4:bandit_b_mask", b_mask, ".3f"), "| TRL",
      quote("9.4:bandit_b_trl", b_trl, ".3f"))
print("P(truncated) peak / end: mask", quote("9.4:bandit_peak_mask", mask.max(), ".2f"), "/",
      quote("9.4:bandit_end_mask", mask[-1], ".2f"), "| TRL", quote("9.4:bandit_peak_trl", trl.max(), ".2f"),
      "/", quote("9.4:bandit_end_trl", trl[-1], ".2f"), "| treat as wrong: from",
      quote("9.4:bandit_start", wrong[0], ".3f"), "to a peak of", quote("9.4:bandit_peak_wrong", wrong.max(), ".2f"),
      "then", quote("9.4:bandit_end_wrong", wrong[-1], ".3f"))
soft = traj["soft penalty -0.5"][:, 2]
print("soft penalty: P(truncated)", quote("9.4:bandit_soft_start", soft[0], ".2f"), "->",
      quote("9.4:bandit_soft_end", soft[-1], ".3f"))

fig, axes = plt.subplots(1, 2, figsize=(9, 3), sharey=True)
for name, ps in traj.items():
    axes[0].plot(ps[:, 2], label=name)
    axes[1].plot(ps[:, 0], label=name)
axes[0].set(title="P(truncated)", xlabel="update")
axes[1].set(title="P(correct)", xlabel="update")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# Under the bandit's mask, the wrong answers are pushed down and the truncated outcome receives no
# push at all, so the freed probability flows to it first: rambling peaks above half and keeps a
# large share long after the correct answer has been found [9.4-9]. TRL's loss-only mask shows the
# same drift, weaker: the truncated outcome's 0 stays in the baseline, which is therefore smaller
# (0.013<!--fig:9.4:bandit_b_trl--> instead of 0.018<!--fig:9.4:bandit_b_mask--> at the start), so
# the correct answer is pushed up a little harder and the wrong one down a little less; rambling
# peaks at 0.45<!--fig:9.4:bandit_peak_trl--> instead of 0.58<!--fig:9.4:bandit_peak_mask--> and
# ends at 0.02<!--fig:9.4:bandit_end_trl--> instead of 0.12<!--fig:9.4:bandit_end_mask-->. Even
# "treat as wrong" lets rambling rise at first (from 0.265<!--fig:9.4:bandit_start--> to
# 0.34<!--fig:9.4:bandit_peak_wrong-->): the wrong answer, the most likely one, is pushed down
# hardest, and part of what it loses goes to the truncated outcome before the correct answer takes
# over. The two "masks" are different contracts with different numbers, and a run record has to
# say which one it used.
#
# **An unsolvable prompt is a different case.** If no outcome is correct, every stopped answer is
# wrong (reward 0). Under either mask, and under "treat as wrong", every reward that enters the
# baseline is 0, so $b=0$, every $r_a-b$ is 0 and the gradient is **exactly zero**: $P(\text{truncated})$
# stays where it started. Only the soft penalty moves the policy, towards stopping and answering
# (wrongly). The masking risk is therefore a hard-but-solvable prompt, where success on some samples
# makes the baseline positive. Check with the two outcomes "wrong" and "truncated":

# %%
theta_uns = np.array([1.0, 0.0])  # wrong, truncated: P(truncated) = 1 / (1 + e) = 0.269
UNSOLVABLE = {
    "treat as wrong": ((0.0, 0.0), (1, 1), (1, 1)),
    "mask (bandit)": ((0.0, 0.0), (1, 0), (1, 0)),
    "mask loss only (TRL)": ((0.0, 0.0), (1, 0), (1, 1)),
    "soft penalty -0.5": ((0.0, -0.5), (1, 1), (1, 1)),
}
for name, (rw, in_loss, in_base) in UNSOLVABLE.items():
    theta = theta_uns.copy()
    for _ in range(300):
        g, p, b = contract_grad(theta, rw, in_loss, in_base)
        theta = theta + 1.0 * g
    print(f"{name:>21}: P(truncated) {softmax(theta_uns)[1]:.3f} -> {softmax(theta)[1]:.3f}")
    if name != "soft penalty -0.5":
        g0, _, b0 = contract_grad(theta_uns, rw, in_loss, in_base)
        assert b0 == 0.0 and np.all(g0 == 0.0)  # exactly zero, not just small
        assert np.array_equal(theta, theta_uns)  # 300 steps later: not moved at all
    else:
        assert softmax(theta)[1] < softmax(theta_uns)[1]  # the soft penalty moves it, down
        print("P(truncated)", quote("9.4:unsolvable_start", softmax(theta_uns)[1], ".3f"), "stays under"
              " the zero-gradient contracts; the soft penalty moves it to",
              quote("9.4:unsolvable_soft_end", softmax(theta)[1], ".3f"))

# %% [markdown]
# None of these contracts is "the" right answer; each has a failure mode, and the dashboard has to
# show which one is happening.
#
# A run record states the contract, for example:

# %%
truncation_contract = {
    "max_new_tokens": 512,
    "truncated_reward": "separate label 'truncated'; reward 0 in the loss (treated as wrong)",
    "mask_truncated_completions": False,
    "logged": [
        "eos_rate",
        "truncation_rate",
        "parse_failure_rate (over EOS-terminated)",
        "reward by length bucket",
    ],
    "revisit_if": "truncation_rate > 0.05 for 3 consecutive evaluations",
}
print(json.dumps(truncation_contract, indent=1))

# %% [markdown]
# ### Graded: stop and parse-failure rates
#
# Denominators matter. A truncated response almost always fails to parse (its answer was never
# written), so counting its parse failure again would report one event twice. Convention here:
# `eos` and `truncation` are fractions of **all** responses; `parse_failure` is a fraction of the
# responses that **stopped at EOS** (the model finished and still produced nothing the parser accepts).


# %% [solution] id=stop_rates
def stop_rates(stop_reason, parse_ok) -> dict[str, float]:
    """Natural-stop, truncation and parse-failure rates of a batch of responses.

    Args:
        stop_reason: sequence of N strings, each "eos" (the model emitted end-of-sequence) or "length"
            (cut by the generation budget); the convention of ``helpers.sampling``.
        parse_ok: array-like (N,) of bools or 0/1 integers (1 = True): the verifier's parser
            extracted an answer. Entries of truncated responses are ignored.

    Returns:
        dict of Python floats:
          "eos":           (# "eos") / N
          "truncation":    (# "length") / N
          "parse_failure": (# "eos" with parse_ok False) / (# "eos")
        Every value is nan when N == 0; "parse_failure" is nan when no response stopped at EOS.

    Raises:
        ValueError: a stop reason other than "eos" / "length", or len(parse_ok) != N.
    """
    ### BEGIN SOLUTION
    reasons = list(stop_reason)
    ok = np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons):
        raise ValueError(f"{len(reasons)} stop reasons but {len(ok)} parse flags")
    bad = set(reasons) - {"eos", "length"}
    if bad:
        raise ValueError(f"unknown stop reasons {sorted(bad)}; expected 'eos' or 'length'")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = np.array([r == "eos" for r in reasons])
    n_eos = int(eos.sum())
    return {
        "eos": n_eos / N,
        "truncation": (N - n_eos) / N,
        "parse_failure": float((eos & ~ok).sum() / n_eos) if n_eos else math.nan,
    }
    ### END SOLUTION


# %% [tests] id=test_stop_rates points=2
_out = stop_rates(["eos", "length", "eos", "eos"], np.array([True, False, False, True]))
assert isinstance(_out, dict) and set(_out) == {"eos", "truncation", "parse_failure"}, (
    f"keys eos, truncation, parse_failure; got {_out!r}"
)
assert all(type(_v) is float for _v in _out.values()), "values must be Python floats"
assert math.isclose(_out["eos"], 0.75) and math.isclose(_out["truncation"], 0.25), (
    f"3 of 4 stopped at EOS, 1 truncated: expected 0.75 / 0.25, got {_out}"
)
assert math.isclose(_out["parse_failure"], 1 / 3), (
    f"parse_failure counts among the 3 EOS-terminated responses only (1 failed): expected 1/3, got "
    f"{_out['parse_failure']}. The truncated response's failed parse is already counted as truncation"
)

# %% [markdown]
# ### Graded: reward by length bucket
#
# Buckets follow `np.histogram`'s convention: bucket $b$ holds lengths $L$ with
# $e_b \le L < e_{b+1}$, except the last, which also holds $L = e_B$. Lengths outside
# $[e_0, e_B]$ fall in no bucket. An empty bucket has mean `nan` and count 0 (and must not print a
# "mean of empty slice" warning).


# %% [solution] id=length_by_bucket
def length_by_bucket(lengths, rewards, edges) -> tuple[np.ndarray, np.ndarray]:
    """Mean reward and number of responses per length bucket.

    Args:
        lengths: array-like (N,), response lengths in tokens.
        rewards: array-like (N,), one reward per response.
        edges: array-like (B + 1,), strictly increasing bucket edges, B >= 1.

    Returns:
        (mean_reward, count): mean_reward np.ndarray (B,) float64, the mean reward of the responses
        in each bucket (nan for an empty bucket); count np.ndarray (B,) int64. Bucket b holds
        edges[b] <= L < edges[b+1]; the last bucket also holds L == edges[B] (np.histogram's
        convention); lengths outside [edges[0], edges[B]] are counted nowhere.

    Raises:
        ValueError: lengths and rewards of different shapes or not 1-D; edges not 1-D, fewer than 2
            edges, or edges not strictly increasing (a nan edge is not).
    """
    ### BEGIN SOLUTION
    L = np.asarray(lengths, dtype=np.float64)
    r = np.asarray(rewards, dtype=np.float64)
    e = np.asarray(edges, dtype=np.float64)
    if L.ndim != 1 or L.shape != r.shape:
        raise ValueError(f"need lengths (N,) and rewards (N,), got {L.shape}, {r.shape}")
    if e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("edges must be 1-D, at least 2 values, strictly increasing")
    count, _ = np.histogram(L, bins=e)
    total, _ = np.histogram(L, bins=e, weights=r)
    mean = np.full(len(count), np.nan)
    nonempty = count > 0
    mean[nonempty] = total[nonempty] / count[nonempty]
    return mean, count.astype(np.int64)
    ### END SOLUTION


# %% [tests] id=test_length_by_bucket points=2
_mean, _count = length_by_bucket(
    np.array([1, 3, 4, 7, 8, 8]), np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.5]), np.array([0, 4, 8])
)
assert type(_mean) is np.ndarray and type(_count) is np.ndarray, "return (np.ndarray, np.ndarray)"
assert _count.dtype == np.int64, f"count must be int64, got {_count.dtype}"
np.testing.assert_array_equal(np.array(_count, dtype=np.int64), [2, 4], err_msg=(
    "edges (0, 4, 8): [0, 4) holds 1, 3; the LAST bucket [4, 8] is closed and holds 4, 7, 8, 8"))
np.testing.assert_allclose(
    np.array(_mean, dtype=np.float64), [0.5, 0.625], err_msg="mean reward per bucket"
)
_mean, _count = length_by_bucket([1, 1, 9], [1.0, 0.0, 1.0], [0, 2, 4, 10])  # [2, 4) is empty
assert np.isnan(np.array(_mean, dtype=np.float64)[1]) and int(_count[1]) == 0, (
    "an empty bucket must have mean nan and count 0 (guard the division; no warning)"
)

# %% [markdown]
# **Demo.** A toy batch with a budget of 64 tokens: long responses are right more often, until they
# hit the limit and score 0. The mean length says nothing about this; the buckets and the stop rates
# do. The toy also knows what no checker saw: how many truncated responses would have been correct
# with a larger budget (printed last).

# %%
rng = np.random.default_rng(8)
n_resp, budget = 400, 64
want = rng.gamma(4.0, 10.0, n_resp).astype(int) + 5  # length each response would need to finish
lengths = np.minimum(want, budget)
stops = ["length" if w > budget else "eos" for w in want]
# chance of a correct answer if allowed to finish: rises with length; 0.6 for those beyond the budget
would_be_right = rng.random(n_resp) < np.where(want > budget, 0.6, np.clip(0.2 + want / 80, 0, 0.9))
parse = np.array([s == "eos" for s in stops]) & (rng.random(n_resp) > 0.05)
rewards = np.where((np.array(stops) == "eos") & parse & would_be_right, 1.0, 0.0)
edges = [0, 16, 32, 48, 64]
mean_r, cnt = length_by_bucket(lengths, rewards, edges)
print("stop rates:", {k: round(v, 3) for k, v in stop_rates(stops, parse).items()})
for lo, hi, m, c in zip(edges[:-1], edges[1:], mean_r, cnt, strict=True):
    print(
        f"  length [{lo:2d}, {hi:2d}{']' if hi == edges[-1] else ')'}: n = {c:3d}, mean reward {m:.3f}"
    )
trunc = np.array(stops) == "length"
print(
    f"truncated responses that a larger budget would have made correct: {would_be_right[trunc].mean():.2f}"
)

# %% [markdown]
# ## 9.4.4 Elicitation or discovery?
#
# After RL, pass@1 went up. Two explanations fit that fact:
# - **elicitation**: the policy moved probability onto successful trajectories the base model could
#   already produce under a realistic budget;
# - **discovery**: training made strategies practically reachable that the base model essentially never
#   produced under that budget.
#
# "Support" needs care: a softmax gives almost every sequence a nonzero probability, so "in the base
# model's support" is true of nearly everything and says nothing. The operational object is the
# **effective support**: what a fixed decoding protocol (temperature, top-p, maximum length) finds
# within a fixed number of samples $n$. A prompt with success probability $p$ is found with
# probability $1-(1-p)^n$: $p=10^{-3}$ is found 23% of the time with $n=256$ and almost never with
# $n=8$.
#
# **The matched-budget protocol.** (1) plot base and RL pass@k curves under *identical* decoding and the
# same $n$; (2) compare strategy clusters, not only final answers; (3) use fresh tasks and check for
# contamination; (4) repeat over seeds; (5) keep RL's effect apart from later SFT or distillation.
#
# A synthetic illustration [9.4-12]: 300 prompts with known success rates for a base model and two kinds of
# trained model. Each model gets the same $n=256$ samples per prompt; pass@k comes from **your**
# `pass_at_k` on the observed counts, next to the exact $1-(1-p)^k$.

# %%
rng = np.random.default_rng(7)
P, n_eval = 300, 256
reachable = rng.random(P) < 0.7
p_base = np.where(reachable, rng.beta(0.5, 2.0, P), 0.0)


def sharpen(p, shift=2.5):
    """Raise the log-odds of p by ``shift`` (p = 0 stays 0)."""
    out = np.zeros_like(p)
    pos = p > 0
    out[pos] = 1 / (1 + np.exp(-(np.log(p[pos]) - np.log1p(-p[pos]) + shift)))
    return out


p_elicit = sharpen(p_base)
p_elicit[(p_base < 0.05) & (rng.random(P) < 0.6)] = 0.0  # rare successes lost: coverage narrows
p_discover = sharpen(p_base)
p_discover[~reachable & (rng.random(P) < 0.25)] = (
    0.2  # some base-unreachable prompts become solvable
)
models = {"base": p_base, "RL: elicitation": p_elicit, "RL: discovery": p_discover}
ks = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256])

fig, ax = plt.subplots(figsize=(6.5, 3.5))
curves = {}
for (name, p), color in zip(models.items(), ["k", "C3", "C2"], strict=True):
    c_obs = rng.binomial(n_eval, p)  # the counts an evaluation would observe
    est = [pass_at_k(np.full(P, n_eval), c_obs, int(k)).mean() for k in ks]
    curves[name] = np.array(est)
    exact = [np.mean(1 - (1 - p) ** k) for k in ks]
    ax.plot(ks, est, "o-", color=color, label=f"{name} (estimated, n = {n_eval})")
    ax.plot(ks, exact, ":", color=color)
    print(
        f"{name:>16}: pass@1 {est[0]:.3f}  pass@256 {est[-1]:.3f}  coverage {np.mean(c_obs > 0):.3f}"
    )
ax.set(xscale="log", xlabel="k", ylabel="mean pass@k over prompts",
       title="Matched budget: same decoding, same n (dotted: exact)")
ax.set_xticks(ks, [str(k) for k in ks])
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
# the reading below, checked on these curves: elicitation minus base changes sign once, + to -
gap = curves["RL: elicitation"] - curves["base"]
crossings = np.flatnonzero(np.diff(np.sign(gap)) != 0)
assert gap[0] > 0 and gap[-1] < 0 and len(crossings) == 1, gap
assert np.all(curves["RL: discovery"] > curves["base"])  # above at every k
print("elicitation - base:", dict(zip(ks.tolist(), gap.round(3).tolist())),
      f"| crosses between k = {ks[crossings[0]]} and k = {ks[crossings[0] + 1]}")

# %% [markdown]
# The elicitation model wins at small $k$ and **crosses below** the base model at large $k$: it solves
# fewer distinct prompts (coverage) and each solved prompt more reliably. The discovery model stays
# above at every $k$ because it reaches prompts the base model never solved within 256 samples. Two
# cautions apply to real curves. The crossing depends on the budget: a base prompt with
# $p = 10^{-4}$ is outside the effective support at $n = 256$ and inside it at $n = 10^5$, so "new"
# is always "new at this budget". And pass@k counts answers, not methods: a correct final answer
# reached by a lucky guess counts the same as one reached by a method, which is why step (2) of the
# protocol inspects the trajectories.
#
# **What the 2025 study says** [9.4-11]. *Does Reinforcement Learning Really Incentivize Reasoning Capacity in
# LLMs Beyond the Base Model?* (Yue et al., 2025) compares base and RLVR-trained models across several
# model families, RL algorithms and math, code and visual-reasoning benchmarks. The RL models win at
# small $k$; the base models catch up and overtake at large $k$ (up to 256 and beyond); coverage and
# perplexity analyses suggest that the RL models' successful reasoning paths were already in the base
# models' sampling distribution; distillation from a stronger teacher, by contrast, did add new
# patterns. **Status:** an empirical finding about the models, tasks, RL recipes and budgets the
# authors examined. It is an important counterweight to "RL creates reasoning" claims, not a theorem
# about every scale, domain or training length; more sampling, longer training or other recipes can
# change the picture, and the conclusion should be re-tested, not quoted.
#
# Module 10 ("Search, verification, and test-time compute") treats Best-of-N and search in full.
#
# ## 9.4.5 A minimum dashboard
#
# A group-based RLVR run needs several independent axes, because each failure is invisible on some of
# them:
#
# | group | axes |
# |---|---|
# | data & verification | each reward component separately; parse errors, timeouts, exceptions; informative-group rate; reward by source and difficulty |
# | policy & optimisation | mean and position-wise entropy; KL to the declared reference (when computed); ratio distribution; low and high clip fractions separately; rollout age and reuse count |
# | responses & quality | held-out pass@1 and several pass@k; mean, median and tail length; EOS, truncation and parse-failure rates; string and strategy diversity; control tasks outside the training domain |
# | system | generated tokens per informative prompt; generation and optimisation time; peak memory; stale or reused rollout fraction |
#
# `helpers.diagnostics.GROUPS` holds the key names the course uses for these four groups. Three of
# the axes depend on the trainer, not on the rollout, so you pass them to `Dashboard.record`:
# `rollout_age` (optimizer steps between the policy that sampled the batch and the one being
# updated), `reuse` (update passes over this batch) and `peak_mem_mb` (`diagnostics.peak_memory_mb()`
# reads the process's peak). `gen_tokens_per_informative` is derived: all generated tokens divided
# by the number of informative groups, computed from *your* informative-group rate; it is the price
# of one group that carries signal, and it climbs as groups turn degenerate.
#
# **Stopping criteria are written before the run**, otherwise every curve can be explained after the
# fact. Examples: held-out quality stops improving while the proxy reward keeps rising; pass@k at the
# largest logged $k$ drops sharply; the checker-error or parse-failure rate grows.
#
# ### A real run: the CPU lab's smoke profile
#
# `helpers/data/gru_lab_smoke.json` is the history of one run of the course's CPU lab (lesson 9.5
# runs it with your own functions): a small GRU policy answering two-digit additions in the format
# `T,O;S<eos>`, a verifier with three components, groups of $G = 6$ sampled by a frozen old policy,
# 4 clipped update epochs per batch, no KL term, a small pool of 24 training prompts and 48 held-out
# ones. The profile is deliberately aggressive. This is a course-generated result, not a benchmark
# [9.4-13].
#
# The file holds **aggregates**, not raw responses: per RL step the batch means (`reward`,
# `accuracy`, `entropy`, `clip_low`, `informative_rate`, ...), and per evaluation point (every 10
# steps, 16 fresh samples per prompt) pass@4, coverage, concentration and greedy accuracy. Its numbers
# were computed by the instructor's reference versions of the functions you wrote above (the same
# definitions; the passport lists the callables), so here we read them directly.

# %%
LAB_JSON = SMOKE_HISTORY  # shipped with helpers/, wherever this copy runs
if not LAB_JSON.exists():
    raise FileNotFoundError(
        f"{LAB_JSON} is missing: it ships in the helpers/ folder of the course bundle. Extract"
        " the bundle again (or reinstall helpers from it), or ask your instructor for the file."
    )
record = json.loads(LAB_JSON.read_text())
hist, passport = record["history"], record["passport"]
cfg = passport["config"]
print({k: cfg[k] for k in ("steps", "prompts_per_step", "group_size", "num_iterations", "clip_eps",
                           "kl_coef", "lr", "temperature", "max_new_tokens", "eval_samples", "pass_k")})
print(
    "callables:",
    passport["extra"]["callables"]["entropy_fn"],
    "|",
    passport["extra"]["callables"]["pass_at_k_fn"],
)
steps_hist = {k: v for k, v in hist.items() if len(v) == len(hist["step"])}
eval_hist = {k: v for k, v in hist.items() if len(v) == len(hist["eval_step"])}
eval_hist = {"step": eval_hist.pop("eval_step"), **eval_hist}

# %% [markdown]
# **The per-step dashboard** (training batches), in the four groups of `helpers.diagnostics.GROUPS`.
# Keys the groups do not name (the lab's `accuracy`, the verifier components, `kl_ref`, the old-log-prob
# check) go to a fifth group, "other". (`correct` is left out: it equals `accuracy` here.)

# %%
plot_dashboard({k: v for k, v in steps_hist.items() if k not in ("correct", "loss_pg", "loss_kl", "time_s")},
               title="CPU lab, smoke profile: per-step training axes")

# %% [markdown]
# Read it by group. The training reward and accuracy are noisy but drift upward (accuracy
# 0.57<!--fig:9.4:acc_first10--> over the first ten steps, 0.80<!--fig:9.4:acc_last10--> over the
# last ten). The behaviour entropy falls steadily and the informative-group rate falls with it
# (0.84<!--fig:9.4:informative_first10--> to 0.12<!--fig:9.4:informative_last10-->, means of the
# first and last ten steps): more and more groups are all-right or all-wrong, and at
# 5<!--fig:9.4:skipped_n--> steps, the first at step 36<!--fig:9.4:first_skipped-->, every group of
# the batch is, so there is nothing to learn from and the lab skips the update (the gaps in the
# update axes; see below). Nothing holds the KL to the initial policy (`kl_coef = 0`), yet at most
# steps it stays near a tenth of a nat (median 0.11<!--fig:9.4:kl_first10--> over the first ten
# steps, 0.12<!--fig:9.4:kl_last10--> over the last ten) and it spikes at a few, up to
# 1.65<!--fig:9.4:kl_max--> at step 59<!--fig:9.4:kl_max_step-->: a drift this run shows in
# bursts, not as a trend. Both clip fractions are largest in the first steps, and the ratio maxima reach 4.9<!--fig:9.4:spike_ratio--> (step
# 29<!--fig:9.4:spike_step-->): four update epochs per batch at a high learning rate move the policy
# hard. Format and truncation are clean at every step but one: at step 14<!--fig:9.4:dirty_step-->
# the truncation rate is 0.02<!--fig:9.4:dirty_trunc--> and the format score
# 0.98<!--fig:9.4:dirty_format--> (one answer of the batch's 48 each). That is not the grammar's
# doing: the grammar admits leading zeros (which fail the format check) and answers of up to 10
# tokens against a budget of 9 (which are truncated). Both axes stay flat because the policy almost
# never writes such answers: a habit it kept, which the dashboard would show the day it changed.
# `old_logp_maxdiff = 0` confirms that the stored behaviour log-probs match a rescoring by the
# frozen old policy [9.4-13].
#
# **Read the update statistics with their definitions.** Three details of how the lab measures them
# change the reading [9.4-16]:
# - `clip_low` and `clip_high` average the four update epochs, and epoch 0 runs at the old weights,
#   where every ratio is exactly 1 and nothing can be clipped. The reused epochs alone clip
#   $4/3$ as often as the logged numbers say. The lab logs them too (`clip_low_reused`,
#   `clip_high_reused`: epochs 1 to 3 here), and the cell below checks the identity at every step.
# - `ratio_max` is measured before each update, so the ratios after the fourth update are not in
#   it. The lab logs those as `ratio_max_final`: in this record it is above `ratio_max` at
#   91<!--fig:9.4:final_above_pct-->% of the updated steps, and its largest value,
#   6.6<!--fig:9.4:final_max--> (step 13<!--fig:9.4:final_max_step-->), is above every `ratio_max`
#   of the run.
# - A batch in which every group is degenerate has zero policy gradient, yet Adam would still move
#   the weights: its momentum keeps the direction of earlier steps. The lab therefore skips such a
#   batch (`skipped` = 1, update metrics NaN) when there is no KL term. This record meets
#   5<!--fig:9.4:skipped_n--> (the first at step 36<!--fig:9.4:first_skipped-->): exactly the steps
#   whose informative rate is 0, each with NaN clip fractions, ratios and loss, never a 0 that
#   would claim "nothing clipped".

# %%
n_ep = cfg["num_iterations"]
cf_at_one = clip_fractions(np.ones((4, 5)), np.array([1.0, -1.0, 2.0, -0.5]), np.ones((4, 5)))
assert cf_at_one["low"] == 0.0 and cf_at_one["high"] == 0.0  # epoch 0: ratio 1, never clipped
col = {k: np.asarray(v, dtype=float) for k, v in steps_hist.items()}  # NaN where no update ran
for key in ("clip_low", "clip_high"):
    logged = col[key]
    reused = logged * n_ep / (n_ep - 1)  # epoch 0 contributes exactly 0 to the mean over n_ep
    np.testing.assert_allclose(col[f"{key}_reused"], reused, atol=1e-12)  # step by step, NaN = NaN
    first, last = np.nanmean(logged[:10]), np.nanmean(logged[-10:])
    print(f"{key}: logged (all {n_ep} epochs) first/last ten steps {first:.4f} / {last:.4f};  "
          f"reused epochs only {np.nanmean(reused[:10]):.4f} / {np.nanmean(reused[-10:]):.4f}")
    assert first > last and np.nanargmax(logged) < 10  # largest in the first steps
    quote(f"9.4:{key}_logged10", first, ".3f")
    quote(f"9.4:{key}_reused10", np.nanmean(reused[:10]), ".3f")
updated = ~np.isnan(col["ratio_max"])
above = col["ratio_max_final"][updated] > col["ratio_max"][updated]
print(f"ratio_max_final above ratio_max at {quote('9.4:final_above_pct', 100 * above.mean(), '.0f')}% "
      f"of the {updated.sum()} updated steps")
top = int(np.nanargmax(col["ratio_max_final"]))
print(f"largest ratio_max_final {quote('9.4:final_max', col['ratio_max_final'][top], '.1f')} at step "
      f"{quote('9.4:final_max_step', steps_hist['step'][top])}")
spike = int(np.nanargmax(col["ratio_max"]))
print(f"largest ratio_max {quote('9.4:spike_ratio', col['ratio_max'][spike], '.1f')} at step "
      f"{quote('9.4:spike_step', steps_hist['step'][spike])}")
assert col["ratio_max_final"][top] > col["ratio_max"][spike]  # above every ratio_max of the run
# the skipped steps: exactly those with no informative group, every update metric NaN there
skipped = col["skipped"] == 1
assert np.array_equal(skipped, col["informative_rate"] == 0)
for key in ("clip_low", "clip_high", "clip_low_reused", "ratio_max", "ratio_max_final", "loss"):
    assert np.isnan(col[key][skipped]).all() and not np.isnan(col[key][~skipped]).any(), key
skipped_steps = [int(s) for s, k in zip(steps_hist["step"], skipped) if k]
print(f"skipped steps ({quote('9.4:skipped_n', len(skipped_steps))}):", skipped_steps,
      "| first:", quote("9.4:first_skipped", skipped_steps[0]))
print("smallest informative rate:", quote("9.4:min_informative", np.min(col["informative_rate"]), ".3f"))
# format and truncation: clean at every step but one
dirty = np.flatnonzero((col["format"] < 1) | (col["truncation_rate"] > 0))
assert len(dirty) == 1, dirty
d = int(dirty[0])
batch = cfg["prompts_per_step"] * cfg["group_size"]
assert round(col["truncation_rate"][d] * batch) == 1 and round((1 - col["format"][d]) * batch) == 1
print(f"format < 1 or truncation > 0 only at step {quote('9.4:dirty_step', steps_hist['step'][d])}: "
      f"truncation {quote('9.4:dirty_trunc', col['truncation_rate'][d], '.2f')}, "
      f"format {quote('9.4:dirty_format', col['format'][d], '.2f')} (batch of {batch})")
# the figures the reading above quotes (helpers/figures.py ties them to this record)
for key, name in (("accuracy", "acc"), ("informative_rate", "informative")):
    quote(f"9.4:{name}_first10", np.mean(col[key][:10]), ".2f")
    quote(f"9.4:{name}_last10", np.mean(col[key][-10:]), ".2f")
kl = col["kl_ref"]
quote("9.4:kl_first10", np.median(kl[:10]), ".2f")
quote("9.4:kl_last10", np.median(kl[-10:]), ".2f")
top = int(np.argmax(kl))
print(f"KL to the initial policy: median {np.median(kl):.3f}, largest {quote('9.4:kl_max', kl[top], '.2f')} "
      f"at step {quote('9.4:kl_max_step', steps_hist['step'][top])}")
assert np.median(kl[:10]) < 0.2 and np.median(kl[-10:]) < 0.2  # near a tenth at most steps
assert kl[top] > 10 * np.median(kl)  # ... and spikes

# Adam on a zero gradient: the weights still move (why the lab skips an all-degenerate batch)
w = torch.nn.Parameter(torch.ones(3))
adam = torch.optim.Adam([w], lr=cfg["lr"])
for g in ([1.0, -2.0, 0.5], [0.5, -1.0, 0.2]):  # two steps with signal
    w.grad = torch.tensor(g)
    adam.step()
before = w.detach().clone()
w.grad = torch.zeros(3)  # a batch of degenerate groups: no signal at all
adam.step()
print("Adam step on a zero gradient moved the weights by", (w.detach() - before).numpy())
assert (w.detach() - before).abs().min() > 0

# %% [markdown]
# **The evaluation axes** (fresh generation, the same draws at each point):

# %%
plot_history(eval_hist, keys=["train_acc", "train_entropy", "train_pass@4", "train_coverage",
                              "train_concentration", "heldout_acc", "heldout_pass@4", "heldout_greedy_acc",
                              "heldout_coverage"], title="Evaluation points (16 samples per prompt)")

# %%
for key in ("train_acc", "train_greedy_acc", "train_entropy", "train_pass@4", "train_coverage",
            "train_concentration", "heldout_pass@4", "heldout_greedy_acc"):
    print(f"{key:>20}: {eval_hist[key][0]:.3f} -> {eval_hist[key][-1]:.3f}")
print("failure pattern (helpers.gru_lab.failure_pattern):", failure_pattern(hist, k=cfg["pass_k"]))
for key, name, spec in (("train_acc", "train_acc", ".2f"), ("train_greedy_acc", "train_greedy", ".2f"),
                        ("train_pass@4", "train_pass4", ".2f"), ("train_coverage", "coverage", "d"),
                        ("heldout_greedy_acc", "heldout_greedy", ".2f"),
                        ("heldout_pass@4", "heldout_pass4", ".2f")):
    quote(f"9.4:{name}_start", eval_hist[key][0], spec)  # the figures of the reading below
    quote(f"9.4:{name}_end", eval_hist[key][-1], spec)
for key, name in (("train_acc", "train_acc"), ("train_greedy_acc", "train_greedy"),
                  ("train_entropy", "train_entropy"), ("train_pass@4", "train_pass4"),
                  ("train_concentration", "concentration"), ("heldout_pass@4", "heldout_pass4"),
                  ("heldout_greedy_acc", "heldout_greedy")):
    quote(f"9.4:{name}_start3", eval_hist[key][0], ".3f")  # the registry's three decimals
    quote(f"9.4:{name}_end3", eval_hist[key][-1], ".3f")
quote("9.4:entropy_factor", eval_hist["train_entropy"][0] / eval_hist["train_entropy"][-1], ".1f")
# "ended one prompt of 24 above where it started", and sampled accuracy climbed to the greedy one
n_train = len(passport["extra"]["pool"])  # the training prompts
greedy_gain = (eval_hist["train_greedy_acc"][-1] - eval_hist["train_greedy_acc"][0]) * n_train
assert round(greedy_gain) == 1 and abs(greedy_gain - 1) < 1e-6, greedy_gain
assert eval_hist["train_acc"][-1] - eval_hist["train_acc"][0] > 0.2  # sampled accuracy climbed
assert abs(eval_hist["train_acc"][-1] - eval_hist["train_greedy_acc"][-1]) < 0.05  # to the greedy
print("diagnostics.warnings on the per-step history:")
for line in warnings(steps_hist):
    print("  -", line)

# %% [markdown]
# Training accuracy rose from 0.42<!--fig:9.4:train_acc_start--> to
# 0.73<!--fig:9.4:train_acc_end-->, and that is the whole good news. It is sampled accuracy. The
# greedy answer on the same training prompts, the policy's mode, ended one prompt of 24 above where
# it started (0.71<!--fig:9.4:train_greedy_start--> to 0.75<!--fig:9.4:train_greedy_end-->): the
# sampled accuracy climbed to the greedy one, which is sharpening, probability moved onto answers
# the policy already ranked first, mostly not new answers. Over the same run the policy's entropy on the
# training prompts fell by a factor of 10.1<!--fig:9.4:entropy_factor-->, train pass@4 fell
# (0.88<!--fig:9.4:train_pass4_start--> to 0.76<!--fig:9.4:train_pass4_end-->), successes
# concentrated on fewer training prompts (coverage 24<!--fig:9.4:coverage_start--> to
# 19<!--fig:9.4:coverage_end-->), and held-out transfer collapsed (greedy accuracy
# 0.65<!--fig:9.4:heldout_greedy_start--> to 0.15<!--fig:9.4:heldout_greedy_end-->, pass@4
# 0.88<!--fig:9.4:heldout_pass4_start--> to 0.23<!--fig:9.4:heldout_pass4_end-->). A dashboard with only the reward would have
# called this run a success. The failure pattern is the one the warning signs of 9.4.2
# describe: accuracy up while entropy and pass@k fall, successes concentrate, held-out drops [9.4-13].
#
# `diagnostics.warnings` reads only the per-step keys it knows; the held-out collapse lives in the
# evaluation history, which is why a stopping rule must name its own keys. One written **before** the
# run, and evaluated at each evaluation point:


# %%
def heldout_stop_rule(ev, i, k=4, min_gain=0.02, pass_drop=0.15):
    """Stopping rule fixed before training (demo). True at evaluation point i when held-out pass@k has
    dropped by more than ``pass_drop`` (relative) from its best so far, or when training accuracy rose by
    more than ``min_gain`` since the start while held-out greedy accuracy fell."""
    held = np.asarray(ev[f"heldout_pass@{k}"][: i + 1])
    dropped = held[-1] < (1 - pass_drop) * held.max()
    proxy_gap = (ev["train_acc"][i] - ev["train_acc"][0] > min_gain
                 and ev["heldout_greedy_acc"][i] < ev["heldout_greedy_acc"][0])
    return bool(dropped or proxy_gap)


for i, step in enumerate(eval_hist["step"]):
    if heldout_stop_rule(eval_hist, i):
        print(f"the rule fires at evaluation step {quote('9.4:stop_step', step)} (of {cfg['steps']})")
        break

# %% [markdown]
# The rule fires at the first evaluation after training starts [9.4-14]: in this run the held-out collapse is
# visible by step 10<!--fig:9.4:stop_step-->, long before the training accuracy stops rising. The thresholds (15%, 0.02) are
# choices, and choosing them *before* seeing the curves is what makes the rule a rule.
#
# ### Your functions on a live dashboard
#
# During a run the raw material is there, and the dashboard computes its axes with the functions you
# wrote: `Dashboard(metrics=...)` takes functions of a `Rollout`, and scalars such as entropy (which
# needs logits the `Rollout` does not store) are passed to `record`. A toy run of five steps in which
# a stand-in policy sharpens on whatever it already prefers:

# %%
rng = np.random.default_rng(9)
B, G, T_max, V = 8, 6, 12, 5
# per-prompt preference over 4 answer "templates"; template 0 is correct, template 3 never stops
prefs = rng.normal(size=(B, 4))
prefs[:, 0] += 0.8


def group_centred(r):
    """Each reward minus its own group's mean (N,): the advantage sign the clip reads."""
    means = np.bincount(r.group, weights=r.rewards) / np.bincount(r.group)
    return r.rewards - means[r.group]


dash = Dashboard({
    "informative_rate": lambda r: informative_group_rate(r.rewards, r.group),
    "truncation_rate": lambda r: stop_rates(r.stop_reason, r.rewards >= 0)["truncation"],
    "clip_high": lambda r: clip_fractions(r.ratios, group_centred(r), r.completion_mask)["high"],
})
for step in range(5):
    sharp = 1.0 + 1.5 * step  # the stand-in policy sharpens every step
    probs = np.exp(sharp * prefs)
    probs /= probs.sum(axis=1, keepdims=True)
    tmpl = np.array([rng.choice(4, size=G, p=probs[b]) for b in range(B)]).reshape(-1)  # (N,)
    lengths_ = np.array([6, 7, 9, T_max])[tmpl]  # template 3 rambles into the limit
    mask_ = (np.arange(T_max)[None, :] < lengths_[:, None]).astype(float)  # (N, T)
    logits_ = rng.normal(size=(B * G, T_max, V)) * (0.5 + sharp)  # sharper logits, lower entropy
    rollout = Rollout(rewards=(tmpl == 0).astype(float), group=np.repeat(np.arange(B), G), lengths=lengths_,
                      stop_reason=["length" if t == 3 else "eos" for t in tmpl], texts=[f"template {t}" for t in tmpl],
                      completion_mask=mask_, logprobs=np.zeros_like(mask_),
                      ratios=np.exp(rng.normal(scale=0.05 * (1 + step), size=mask_.shape)))
    dash.record(
        step,
        rollout,
        entropy=masked_token_entropy(logits_, mask_),
        rollout_age=0,
        reuse=1,
        peak_mem_mb=peak_memory_mb(),
    )  # fresh batch, one update pass; process peak memory
plot_dashboard(dash, title="Toy run recorded with your functions")

# %%
print(
    {
        k: round(v["last"], 3)
        for k, v in summarize(dash.history).items()
        if k in ("entropy", "diversity", "informative_rate", "gen_tokens_per_informative")
    }
)
for line in dash.warnings():
    print("-", line)
tokens_per_inf = np.asarray(dash.history["gen_tokens_per_informative"], dtype=float)
print("gen_tokens_per_informative by step:", np.round(tokens_per_inf, 1))
assert np.nanmax(tokens_per_inf) > 3 * tokens_per_inf[0] and np.isnan(tokens_per_inf[-1])
quote("9.4:toy_tokens_first", tokens_per_inf[0], ".0f")
quote("9.4:toy_tokens_max", np.nanmax(tokens_per_inf), ".0f")

# %% [markdown]
# Every axis here except the dashboard's own (`reward_mean`, `reward_std` with the population
# convention, the lengths, `gen_tokens`, `diversity` and the clock `wall_s`) and the three passed-in
# trainer axes (`rollout_age`, `reuse`, `peak_mem_mb`) came from your graded functions (the entropy
# through your `masked_token_entropy`, `gen_tokens_per_informative` through your informative-group
# rate). The toy policy only sharpens what it already prefers, and the dashboard shows it: entropy
# and informative-group rate fall; generated tokens per informative group jump from
# 56<!--fig:9.4:toy_tokens_first--> at the first step to as many as
# 448<!--fig:9.4:toy_tokens_max--> in the next ones, and at the last step no
# group is informative at all, so that axis is undefined (NaN: tokens spent for no signal; the
# summary above shows its last defined value); groups repeat one template; and on the prompts that
# prefer the rambling template truncation rises, whatever the reward does. (`clip_high` reads the
# sign of each response's advantage against its own group's mean, as GRPO's advantage does.)

# %% [markdown]
# ## 9.4.6 The diagnosis clinic
#
# Reading a dashboard is a skill, and this section grades it. The course ran the CPU labs of lesson 9.5
# many times, each time inducing one pathology (or two, or none), and saved each run's log:
# the per-step axes of the dashboard above plus the evaluation points. An instructor's command makes
# them (seeded runs with passports: the GRU lab, 60 steps, about 20 s each; the BaseLM lab, 250
# steps, about 100 s each); you only load the saved logs (`helpers.clinic.load_clinic_runs`). You get
# the seed-0 runs. The grader keeps other runs to itself, and
# your function sees them one at a time as plain data: other seeds, other settings of the same
# pathologies, healthy runs, and runs with two pathologies at once.
#
# The GRU lab's answers follow a grammar that caps them at 10 tokens, so they cannot grow; BaseLM
# writes free text. Its runs are lesson 9.5's arithmetic-choice run (lr $5\cdot10^{-3}$, $K = 8$,
# 8 prompts per step, a budget of 8 tokens, truncated answers scored as written) with one or two
# changes. In a BaseLM log `accuracy` and the evaluations use the strict final-answer verifier, and no
# batch is reused, so its clipping keys and `ratio_max_final` are NaN. The clinic's `smoke` run has the
# settings of the smoke record read in 9.4.5 but not its numbers: the two were made on different
# CPUs (each passport names its float-kernel path), and the float rounding differs from the first
# pretraining step on, so the histories part ways.
#
# | run (seed 0) | what was changed in the lab | induced |
# |---|---|---|
# | `healthy` | lr $10^{-3}$, one update epoch per batch, KL coefficient 0.05 | nothing |
# | `smoke` | the smoke profile: lr $3\cdot10^{-3}$, four epochs, no KL term | entropy collapse, stale rollouts |
# | `kl_blowup` | lr $6\cdot10^{-3}$, four epochs, no KL term, no gradient clipping | KL blow-up |
# | `stale` | as `healthy` but eight epochs per batch | stale rollouts |
# | `hack` | the smoke profile with one epoch per batch, and the sloppy verifier: reward = consistency + 0.1 format, correctness weight 0 | reward hacking |
# | `easy_prompts` | as `healthy`, pretrained on a corpus without errors (no noisy answers, no dropped carries): the prompts are too easy | signal starvation |
# | `verifier_fault` | as `healthy`, then from step 25 30% of the verifier calls time out | verifier failure |
# | `lm_sloppy` | BaseLM, rewarded by lesson 9.5's sloppy verifier (the sum anywhere in the text pays) | reward hacking, length growth |
# | `lm_sloppy_mask` | as `lm_sloppy`, under the masking contract of 9.4.3: a truncated answer's reward stays in its group, its tokens leave the loss | length growth |
# | `lm_no_kl` | BaseLM, strict verifier, no KL term ($\beta = 0$) | KL blow-up |
#
# Most runs show more than the one thing induced (a learning rate high enough to make the ratios
# clip also collapses the entropy). What a run is labelled with is what the definitions below find in
# its log, which is never less than what was induced: the generator fails otherwise. A label is
# therefore a fact about the log, not a verdict on the cause. In a run that reuses each batch for
# several epochs the ratios clip most in the first steps, so in these runs `stale_rollouts` shows
# from step 5, the first full window, in exactly the runs with more than one epoch: in these runs
# the definition tells reuse from none, not mild staleness from severe (a rerun with a lower
# learning rate can reuse each batch six times without it).
#
# **The definitions.** A label is visible at step $t$ when its condition holds at $t$; a finding reports
# the first such step. $\bar x_t$ is the mean of key $x$ over the trailing window of the last $W = 5$
# entries of the log up to and including step $t$, whatever their step numbers (NaN entries ignored; a window of NaN only is NaN, and any comparison
# with NaN is false); $x_0$ is the same mean over the first $W$ entries (the run's start). No rule is
# evaluated before a full window exists, so the earliest possible finding is the fifth logged step. An evaluation
# belongs to step $t$ when it was made at or before $t$ (`eval_step` $\le t$).
#
# | label | condition at step $t$ | keys read |
# |---|---|---|
# | `entropy_collapse` | $\bar H_t < 0.5\,H_0$ **and** the latest held-out pass@4 $< 0.9\times$ the first | `entropy`, `heldout_pass@4` |
# | `kl_blowup` | $\overline{\mathrm{KL}}_t > 0.3$ nats per token (KL to the reference, k3) | `kl_ref` |
# | `stale_rollouts` | mean of (`clip_low_reused` + `clip_high_reused`) over the window $> 0.04$ | `clip_low_reused`, `clip_high_reused` |
# | `reward_hacking` | $\bar r_t \ge r_0 + 0.02$ **and** $\overline{\mathrm{acc}}_t \le \mathrm{acc}_0 - 0.1$ | `reward`, `accuracy` |
# | `signal_starvation` | informative-group rate, window mean $< 0.2$ | `informative_rate` |
# | `verifier_failure` | window mean of (`verifier_error_rate` + `parse_fail_rate`) $\ge 0.05$ | `verifier_error_rate`, `parse_fail_rate` |
# | `length_growth` | $\overline{\mathrm{len}}_t \ge 1.2\,\mathrm{len}_0$ **and** $\overline{\mathrm{trunc}}_t \ge \mathrm{trunc}_0 + 0.2$ | `len_mean`, `truncation_rate` |
#
# `accuracy` is the patched rule (is the answer right?) scored on the training batch beside the reward:
# the audit a team runs when it suspects its verifier. Reused-epoch clipping is NaN in a run with one
# update epoch (nothing is reused), so `stale_rollouts` cannot fire there; a sum with a NaN term is NaN.
# A missing key means the rule that reads it is not evaluated (a log without evaluations cannot show an
# entropy collapse by this table).
#
# **Why two conditions, three times.** Entropy falls in healthy runs too: sharpening is what RL does.
# The reward rises in healthy runs: that is the point of training. A rule on one metric fires on
# both. And answers may grow in a healthy run: a model that learns to work a problem out in more
# steps writes more and still finishes. Length growth is a pathology when the budget starts to bind:
# the answers no longer end, and what the verifier scores is a cut-off text. This library does not
# test that third guard: BaseLM's answer to an addition is a number, with no steps to add, and the
# only runs here whose answers grew (the sloppy-verifier runs) grew into the budget. On these runs
# the length rule alone flags the same runs as the table, at the same step or one step earlier.

# %%
clinic = {r["name"]: r for r in load_clinic_runs()}
print(f"{'run':>16} | induced | labels (first visible step)")
for r in clinic.values():
    print(f"{r['name']:>16} | {', '.join(r['intended']) or '-'} | {r['labels'] or 'none'}")
_h = clinic["healthy"]["log"]
_ent = np.asarray(_h["steps"]["entropy"])
_pass = _h["evals"]["heldout_pass@4"]
print(f"healthy run: entropy {_ent[:WINDOW].mean():.3f} -> {_ent[-WINDOW:].mean():.3f} "
      f"(factor {quote('9.4:clinic_healthy_entropy_factor', _ent[:WINDOW].mean() / _ent[-WINDOW:].mean(), '.1f')}), "
      f"held-out pass@4 {quote('9.4:clinic_healthy_pass_start', _pass[0], '.2f')} -> "
      f"{quote('9.4:clinic_healthy_pass_end', _pass[-1], '.2f')}")
_k = clinic["hack"]["log"]["steps"]
_rw, _acc = np.asarray(_k["reward"]), np.asarray(_k["accuracy"])
print(f"hack run: reward {quote('9.4:clinic_hack_reward_start', _rw[:WINDOW].mean(), '.2f')} -> "
      f"{quote('9.4:clinic_hack_reward_end', _rw[-WINDOW:].mean(), '.2f')}, accuracy "
      f"{quote('9.4:clinic_hack_acc_start', _acc[:WINDOW].mean(), '.2f')} -> "
      f"{quote('9.4:clinic_hack_acc_end', _acc[-WINDOW:].mean(), '.2f')}")
assert _ent[-WINDOW:].mean() < 0.5 * _ent[:WINDOW].mean() and not clinic["healthy"]["labels"]

# %% [markdown]
# In the healthy run the entropy falls by a factor of
# 2.3<!--fig:9.4:clinic_healthy_entropy_factor--> between the first and last five steps, while
# held-out pass@4 barely moves (0.87<!--fig:9.4:clinic_healthy_pass_start--> to
# 0.84<!--fig:9.4:clinic_healthy_pass_end-->): an entropy rule alone would call it a collapse. In the
# `hack` run the reward moves only from 1.02<!--fig:9.4:clinic_hack_reward_start--> to
# 1.07<!--fig:9.4:clinic_hack_reward_end--> (consistency is easy from the start) while correctness falls
# from 0.27<!--fig:9.4:clinic_hack_acc_start--> to 0.08<!--fig:9.4:clinic_hack_acc_end-->: the
# hack is loud in the audit and quiet in the reward.

# %%
_lm = clinic["lm_sloppy"]
_s = {k: np.asarray(v) for k, v in _lm["log"]["steps"].items()}
_first, _last = slice(0, WINDOW), slice(-WINDOW, None)
print(f"lm_sloppy (BaseLM, sloppy verifier), first and last {WINDOW} steps:")
print(f"  mean length {quote('9.4:clinic_lm_len_start', _s['len_mean'][_first].mean(), '.1f')} -> "
      f"{quote('9.4:clinic_lm_len_end', _s['len_mean'][_last].mean(), '.1f')} tokens, truncated "
      f"{quote('9.4:clinic_lm_trunc_start', _s['truncation_rate'][_first].mean(), '.2f')} -> "
      f"{quote('9.4:clinic_lm_trunc_end', _s['truncation_rate'][_last].mean(), '.2f')}")
print(f"  reward {quote('9.4:clinic_lm_reward_start', _s['reward'][_first].mean(), '.2f')} -> "
      f"{quote('9.4:clinic_lm_reward_end', _s['reward'][_last].mean(), '.2f')}, strict accuracy "
      f"{quote('9.4:clinic_lm_acc_start', _s['accuracy'][_first].mean(), '.2f')} -> "
      f"{quote('9.4:clinic_lm_acc_end', _s['accuracy'][_last].mean(), '.2f')}")
print("  first visible: length growth at step", quote("9.4:clinic_lm_length_onset", _lm["labels"]["length_growth"], "d"),
      "reward hacking at step", quote("9.4:clinic_lm_hack_onset", _lm["labels"]["reward_hacking"], "d"))
_mk = clinic["lm_sloppy_mask"]
print("lm_sloppy_mask (the masking contract): length growth at step",
      quote("9.4:clinic_lm_mask_length_onset", _mk["labels"]["length_growth"], "d"))
assert _mk["passport"]["config"]["truncation"] == "mask"
assert _lm["labels"]["length_growth"] < _mk["labels"]["length_growth"] < _mk["labels"]["reward_hacking"]
assert _mk["labels"]["reward_hacking"] > _mk["log"]["steps"]["step"][-1] - WINDOW  # only at the end
assert _lm["labels"]["length_growth"] < _lm["labels"]["reward_hacking"]
assert "length_growth" not in clinic["lm_no_kl"]["labels"]
assert clinic["lm_no_kl"]["passport"]["config"]["verifier"] == "strict"
assert all("kl_blowup" in clinic[_n]["labels"] for _n in ("lm_sloppy", "lm_sloppy_mask", "lm_no_kl"))
assert _lm["passport"]["config"]["kl_coef"] == 0.05 and _lm["passport"]["config"]["max_new_tokens"] == 8
_kl = {_n: np.asarray(clinic[_n]["log"]["steps"]["kl_ref"]) for _n in ("lm_sloppy", "lm_no_kl")}
_nk_above = int((np.convolve(_kl["lm_no_kl"], np.ones(WINDOW) / WINDOW, "valid") > 0.3).sum())
_main = _lm["after"]["patch_verifier"]["labels"]["kl_blowup"]  # lesson 9.5's main configuration
print(f"per-token KL, median: lm_sloppy {quote('9.4:clinic_lm_kl_median', np.median(_kl['lm_sloppy']), '.2f')}, "
      f"lm_no_kl {quote('9.4:clinic_lm_nokl_kl_median', np.median(_kl['lm_no_kl']), '.2f')}; lm_no_kl's windows "
      f"above 0.3: {quote('9.4:clinic_lm_nokl_kl_windows_above', _nk_above, 'd')} of {len(_kl['lm_no_kl']) - WINDOW + 1}; the main configuration "
      f"crosses at step {quote('9.4:clinic_lm_main_kl_onset', _main, 'd')}")
assert np.median(_kl["lm_no_kl"]) < 0.3 < np.median(_kl["lm_sloppy"]) and _nk_above < 0.1 * len(_kl["lm_no_kl"])
_c = _lm["passport"]["config"]  # lesson 9.5's ARITH_CONFIG, as the text says
assert (_c["lr"], _c["kl_coef"], _c["k"], _c["prompts_per_step"], _c["max_new_tokens"]) == (5e-3, 0.05, 8, 8, 8)
plot_dashboard({k: v for k, v in _lm["log"]["steps"].items()
                if k in ("reward", "accuracy", "len_mean", "truncation_rate", "kl_ref", "entropy")},
               title="Clinic run 'lm_sloppy': answers grow until the budget cuts them")

# %% [markdown]
# In `lm_sloppy` the mean completion grows from 4.7<!--fig:9.4:clinic_lm_len_start--> to
# 6.8<!--fig:9.4:clinic_lm_len_end--> tokens (the budget is 8) and the share cut by the budget from
# 0.02<!--fig:9.4:clinic_lm_trunc_start--> to 0.65<!--fig:9.4:clinic_lm_trunc_end-->, while the
# sloppy reward rises from 0.50<!--fig:9.4:clinic_lm_reward_start--> to
# 0.83<!--fig:9.4:clinic_lm_reward_end--> and strict accuracy falls from
# 0.50<!--fig:9.4:clinic_lm_acc_start--> to 0.31<!--fig:9.4:clinic_lm_acc_end-->. The sloppy verifier
# pays the sum anywhere in the text, so a completion that lists more numbers is more likely to be
# paid, and a truncated one is scored as written: nothing but the KL leash pushes back on length. The length signal
# comes first: by the table, length growth is visible from step
# 109<!--fig:9.4:clinic_lm_length_onset-->, reward hacking only from step
# 149<!--fig:9.4:clinic_lm_hack_onset-->. The masking contract of 9.4.3 does not stop it: in
# `lm_sloppy_mask` the truncated answers leave the loss, yet finished answers that list more numbers
# are still paid more and nothing pushes back on the ones that run out. Its length growth is first
# visible at step 135<!--fig:9.4:clinic_lm_mask_length_onset-->, but the definition holds there only
# in two short stretches (a few steps, then the last dozen), and its hack only in the last steps: a
# thin signal from one seed, which cannot say whether the contract delays the growth. `lm_no_kl`,
# trained by the strict verifier, never shows length growth. The lab scores a truncated answer as
# written: in 9.4.3's terms its contract is what the verifier pays for the cut text, nothing with the
# strict verifier unless the cut text ends on the sum, and often something with the sloppy one. What
# this library does not show is the risk of 9.4.3's bandit, where on a hard-but-solvable prompt
# (success rare) masking alone lets the truncated outcome grow: in both sloppy runs the growth is
# paid by the hack.
#
# Every BaseLM run shows `kl_blowup`, and the records say how differently. `lm_sloppy` drifts far
# from the reference: its median per-token KL is 0.61<!--fig:9.4:clinic_lm_kl_median-->.
# `lm_no_kl`, with no leash at all, drifts less (median
# 0.16<!--fig:9.4:clinic_lm_nokl_kl_median-->): its window is above 0.3 at only
# 11<!--fig:9.4:clinic_lm_nokl_kl_windows_above--> of its steps, in three short episodes, two of
# them set off by a single step whose KL is above 1. Lesson 9.5's main configuration (the strict verifier
# with $\beta = 0.05$: `lm_sloppy` rerun with the patched verifier) crosses at step
# 36<!--fig:9.4:clinic_lm_main_kl_onset-->. Two things are at work: the threshold of 0.3 nats per
# token was set on the GRU lab, and the leash of lesson 9.5 holds down another quantity (k3 of a whole
# completion's log-ratio, on the rows of informative groups) than the per-token mean the clinic logs.
# A threshold does not carry over to another model without checking it there.

# %%
_show = {k: v for k, v in clinic["hack"]["log"]["steps"].items()
         if k in ("reward", "accuracy", "entropy", "kl_ref", "informative_rate", "verifier_error_rate")}
plot_dashboard(_show, title="Clinic run 'hack': the reward barely rises, the audit falls")
_f1 = mean_f1(single_metric_baseline, list(clinic.values()))
print("single-metric baseline on the seed-0 runs: mean per-label F1", quote("9.4:clinic_baseline_f1", _f1, ".2f"))
for r in clinic.values():
    _extra = sorted({f["label"] for f in single_metric_baseline(r["log"])} - set(r["labels"]))
    if _extra:
        print(f"  {r['name']}: false alarms {_extra}")
assert _f1 < 0.9
# against what was induced instead (every other label a false alarm); the table's own score there is
# the generator's record (its code is the exercise below)
_record = json.loads(CLINIC_RUNS.read_text())["scores"]
_f1_induced = mean_f1(single_metric_baseline, [r | {"labels": dict.fromkeys(r["intended"])} for r in clinic.values()])
assert round(_f1_induced, 4) == _record["single_metric_baseline_mean_f1_vs_induced"]
print("against the induced pathologies: the table",
      quote("9.4:clinic_table_f1_induced", _record["reference_mean_f1_vs_induced"], ".2f"),
      "the baseline", quote("9.4:clinic_baseline_f1_induced", _f1_induced, ".2f"))

# %% [markdown]
# ### Graded: `diagnose`
#
# Implement the table: return one finding per label whose condition holds at some step, at the first
# such step. Grading has four cells, each worth its own points: the contract (types, short and empty
# logs, missing keys, NaN, that nothing after step $t$ decides step $t$, and generated logs whose step
# numbers do not start at 1 or skip, with evaluations made exactly at a step); recall per label on
# the held-out runs (at least 0.9 for every label, and a label reported everywhere earns nothing);
# precision per label (at least 0.9 for every label you report, and no finding on a healthy run); and
# the detection step (exactly the first step at which the definition holds). Each label appears in
# only a few held-out runs, so 0.9 in practice means no miss and no false alarm. A function that
# thresholds one metric per label does not pass. `helpers.clinic.single_metric_baseline` is that
# function (each label from the first half of its definition alone); on the runs you have it scores a
# mean per-label F1 of 0.88<!--fig:9.4:clinic_baseline_f1--> where the table scores 1 by
# construction, and it fails all four cells.
#
# That 1 only says the grader's labels are the table's. Scored instead against what was induced,
# counting every other label as a false alarm, the table gets
# 0.73<!--fig:9.4:clinic_table_f1_induced--> on these runs and the baseline
# 0.64<!--fig:9.4:clinic_baseline_f1_induced--> (the cell below computes the baseline's; the table's
# is the generator's record, since its code is your exercise). The thresholds were set by looking at
# runs of this lab: they are a course convention for this CPU lab, not values validated for a real
# model. On a real run, treat a finding as a hypothesis to check, not as a diagnosis.

# %% [solution] id=diagnose
def diagnose(log):
    """Findings of the clinic's seven definitions on one run's log (the table above).

    log: {"steps": {key: list of floats, one per RL step; "step" holds the step numbers},
          "evals": {key: list of floats, one per evaluation; "eval_step" holds their steps}}.
    Returns a list of findings, at most one per label, each a dict
    {"label": str (one of LABELS), "step": int (the first step number at which the
    definition holds), "metrics": list of the log keys the definition reads}; order is free.
    A window is the last WINDOW entries up to and including step t, its mean ignores NaN
    (a window of NaN only is NaN, and a comparison with NaN is false); the baseline of a key is the
    mean of its first WINDOW entries; no rule is evaluated before a full window exists, and a
    rule whose keys are missing from the log is never evaluated. An evaluation belongs to step t
    when its eval_step <= t. Nothing after step t is read to decide step t.
    A healthy run (no definition holds) gets no finding.
    """
    ### BEGIN SOLUTION
    steps = {k: np.asarray(v, dtype=np.float64) for k, v in log.get("steps", {}).items()}
    evals = {k: np.asarray(v, dtype=np.float64) for k, v in log.get("evals", {}).items()}
    w = WINDOW
    n = len(steps.get("step", ()))

    def window(x, t):  # NaN-ignoring mean of x[t-w+1 .. t]
        v = x[t - w + 1 : t + 1]
        v = v[~np.isnan(v)]
        return v.mean() if v.size else math.nan

    def summed(*keys):  # row-wise sum; NaN where any term is NaN
        return sum(steps[k] for k in keys)

    def heldout_dropped(t):  # latest held-out pass@4 at or before step t vs the first one
        at = evals["eval_step"] <= steps["step"][t]
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (("entropy", "heldout_pass@4"), lambda t: (
            window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
            and heldout_dropped(t))),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (("clip_low_reused", "clip_high_reused"), lambda t: (
            window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04)),
        "reward_hacking": (("reward", "accuracy"), lambda t: (
            window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
            and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1)),
        "signal_starvation": (("informative_rate",), lambda t: (
            window(steps["informative_rate"], t) < 0.2)),
        "verifier_failure": (("verifier_error_rate", "parse_fail_rate"), lambda t: (
            window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05)),
        "length_growth": (("len_mean", "truncation_rate"), lambda t: (
            window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
            and window(steps["truncation_rate"], t) >= window(steps["truncation_rate"], w - 1) + 0.2)),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or ("heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append({"label": label, "step": int(steps["step"][t]), "metrics": list(keys)})
                break
    return findings
    ### END SOLUTION


# %% [tests] id=test_diagnose_contract points=2
_runs = load_clinic_runs()
for _r in _runs:
    _out = diagnose(_r["log"])
    assert type(_out) is list, f"return a list of findings, got {type(_out).__name__}"
    for _f in _out:
        assert type(_f) is dict and set(_f) == {"label", "step", "metrics"}, (
            f"{_r['name']}: a finding is a dict with the keys label, step and metrics, got {_f!r}"
        )
        assert _f["label"] in LABELS, f"{_r['name']}: {_f['label']!r} is not one of LABELS"
        assert type(_f["step"]) is int, f"step must be a Python int (int(...)), got {type(_f['step']).__name__}"
        assert type(_f["metrics"]) is list and all(type(_m) is str for _m in _f["metrics"]), (
            f"metrics must be a list of key names, got {_f['metrics']!r}"
        )
    assert len({_f["label"] for _f in _out}) == len(_out), f"{_r['name']}: at most one finding per label"
assert diagnose({"steps": {}, "evals": {}}) == [], "an empty log has no finding"
# a log you can check by hand: steps numbered from 101, no verifier errors, parse failures 0.1 from
# step 111 on; the window mean first reaches 0.05 with three such steps in it (0.3 / 5 = 0.06)
_hand = {"steps": {"step": list(range(101, 121)), "verifier_error_rate": [0.0] * 20,
                   "parse_fail_rate": [0.0] * 10 + [0.1] * 10}, "evals": {}}
_got = {_f["label"]: _f["step"] for _f in diagnose(_hand)}
assert _got == {"verifier_failure": 113}, (
    f"expected {{'verifier_failure': 113}} (parse failures count; the step is a step number), got {_got}"
)

# %% [tests] id=test_diagnose_recall points=3
for _r in load_clinic_runs():
    _got = {_f["label"] for _f in diagnose(_r["log"])}
    _miss = sorted(set(_r["labels"]) - _got)
    assert not _miss, f"run {_r['name']!r} shows {_miss} by the table's definitions, and you did not find it"

# %% [tests] id=test_diagnose_precision points=3
for _r in load_clinic_runs():
    _got = {_f["label"] for _f in diagnose(_r["log"])}
    _extra = sorted(_got - set(_r["labels"]))
    assert not _extra, (
        f"run {_r['name']!r}: you report {_extra}, which its log does not show by the table's definitions"
    )

# %% [tests] id=test_diagnose_steps points=2
for _r in load_clinic_runs():
    _got = {_f["label"]: _f["step"] for _f in diagnose(_r["log"])}
    for _lab, _onset in _r["labels"].items():
        if _lab in _got:
            assert _got[_lab] == _onset, (
                f"run {_r['name']!r}, {_lab}: its definition first holds at step {_onset}, you report "
                f"{_got[_lab]} (a step number from log['steps']['step'], not an index; the window ends at t)"
            )

# %% [markdown]
# ### Graded: a stopping rule, declared before the run
#
# A stopping rule is only evidence when it is written down before the curves are seen. Chosen after,
# its key and threshold can be moved until it stops exactly where the run looks bad, and then it
# stops nothing it was not fitted to: with six keys, four kinds of condition and any threshold, some
# rule separates any handful of runs. Declared first, a rule is a test the run can fail. Write the
# rule as data, then apply it:
#
# ```python
# rule = {"key": "heldout_pass@4", "when": "drop_from_best", "threshold": 0.15, "patience": 1}
# ```
#
# `should_stop(log, rule)` returns the step at which the rule fires, or `None`. A step key is read
# the way the table of 9.4.6 reads it (trailing-window means of $W$ steps, from the first full
# window); an evaluation key is read at each evaluation. `patience` asks the condition to hold at
# that many consecutive points before stopping: one noisy dip is not a trend.


# %% [solution] id=should_stop
def should_stop(log, rule):
    """The step at which a stopping rule declared before the run fires, or None.

    log: a clinic log ({"steps": {...}, "evals": {...}}, as diagnose reads it).
    rule: {"key": str, "when": str, "threshold": float, "patience": int (optional, default 1)}.
    The key is looked up in log["steps"] first, then in log["evals"] ("step" and "eval_step" are
    not values; the part read must hold them). For a step key the value at step t is the
    trailing-window mean of the table of
    9.4.6 (WINDOW entries up to t, NaN ignored), with a value from the first full window on; for an
    evaluation key it is the number evaluated at that eval_step.
    "when": "above" (value > threshold), "below" (value < threshold), "drop_from_best" (value <
    (1 - threshold) * the largest value so far, this one included), "rise_from_start" (value >
    the first point's value + threshold; a NaN first point never rises). A NaN value meets no
    condition and leaves the largest value so far unchanged.
    The rule fires at the first point at which its condition has held at `patience` consecutive
    points (a point where it does not hold starts the count again); the result is that point's step
    number as an int, or None when it never fires.
    ValueError: a key in neither part, an unknown "when", a threshold that is not a finite int or
    float (NumPy scalars count, bool and str do not), or a patience that is not
    an int >= 1 (NumPy integers count, bool does not).
    """
    ### BEGIN SOLUTION
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        raise ValueError(f"unknown 'when': {when!r}")
    if (isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating))
            or not math.isfinite(threshold)):
        raise ValueError(f"threshold must be a finite real number, got {threshold!r}")
    if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)) or patience < 1:
        raise ValueError(f"patience must be an integer >= 1, got {patience!r}")
    if key in steps and key != "step":
        x = np.asarray(steps[key], dtype=np.float64)
        values = []
        for t in range(WINDOW - 1, len(x)):
            v = x[t - WINDOW + 1 : t + 1]
            v = v[~np.isnan(v)]
            values.append(v.mean() if v.size else math.nan)
        points = list(steps["step"][WINDOW - 1 :])
    elif key in evals and key != "eval_step":
        values, points = [float(v) for v in evals[key]], list(evals["eval_step"])
    else:
        raise ValueError(f"key {key!r} is in neither log['steps'] nor log['evals']")
    best, run = -math.inf, 0
    for value, point in zip(values, points):
        if not math.isnan(value):
            best = max(best, value)
        holds = {
            "above": value > threshold,
            "below": value < threshold,
            "drop_from_best": value < (1 - threshold) * best,
            "rise_from_start": value > values[0] + threshold,
        }[when]
        run = run + 1 if holds else 0
        if run >= patience:
            return int(point)
    return None
    ### END SOLUTION


# %% [tests] id=test_should_stop points=3
_runs = {_r["name"]: _r["log"] for _r in load_clinic_runs()}
_rule = {"key": "heldout_pass@4", "when": "drop_from_best", "threshold": 0.15}
_got = should_stop(_runs["smoke"], _rule)
assert type(_got) is int, f"return the step number as a Python int, got {_got!r}"
assert _got == 10, f"smoke: held-out pass@4 falls from 0.87 to 0.46 at evaluation step 10, got {_got}"
assert should_stop(_runs["healthy"], _rule) is None, "healthy: held-out pass@4 never drops by 15%"
_got = should_stop(_runs["verifier_fault"], {"key": "verifier_error_rate", "when": "above", "threshold": 0.05,
                                             "patience": 2})
assert _got == 26, f"verifier_fault: the window mean of verifier_error_rate exceeds 0.05 from step 25; patience 2 -> 26, got {_got}"
try:
    should_stop(_runs["healthy"], {"key": "no_such_key", "when": "above", "threshold": 1.0})
except ValueError:
    pass
else:
    raise AssertionError("a key in neither part of the log must raise ValueError")

# %%
declared = {"key": "heldout_pass@4", "when": "drop_from_best", "threshold": 0.15}  # written first
for r in load_clinic_runs():
    print(f"{r['name']:>16}: stops at {should_stop(r['log'], declared)}, labels {sorted(r['labels']) or 'none'}")

# %% [markdown]
# ### Graded: what to do about it
#
# A diagnosis names a problem; it does not say which change fixes it, or what else that change
# does. The course reran every clinic run that shows a label once per intervention of
# `helpers.clinic.INTERVENTIONS` that changes its settings: the same run from the same seed, with
# that one thing done differently (a counterfactual, cleaner than practice, where you would restart
# from a checkpoint). Each record's `after` holds the labels the rerun shows.
#
# | intervention | what changes in the lab | what it costs |
# |---|---|---|
# | `lower_lr` | the RL learning rate divided by 3 | slower progress per step |
# | `one_epoch` | one update epoch per rollout batch (no reuse) | more generation per update |
# | `kl_penalty` | a KL term to the reference, $\beta$ raised by 0.1 | the policy may move less far; one more coefficient |
# | `larger_groups` | twice as many completions per prompt ($G$) | twice the generation per step |
# | `patch_verifier` | the verifier scores correctness again | a stricter verifier to build and audit |
# | `repair_verifier` | the verifier service stops failing calls | engineering time; the steps trained during the fault are spent |
#
# Read the evidence with three words. An intervention **fixes** a label the run shows when the rerun
# does not show it, **delays** it when the rerun shows it at least $W$ steps later, and **harms** when
# the rerun shows a label the run did not. It is **acceptable** when it fixes at least one label and
# harms none. `choose_intervention(labels, after)` returns the acceptable intervention with the most
# fixes, then the most delays, then the first in the order of `INTERVENTIONS` (a fixed tie-break),
# or `None` when none is acceptable.


# %% [solution] id=choose_intervention
def choose_intervention(labels, after):
    """The intervention a clinic run's counterfactual evidence supports, or None.

    labels: {label: onset step}, what the run shows (the record's "labels").
    after: {intervention key: {"labels": {label: onset step}, ...}}, the same run rerun with that
    one intervention (the record's "after"; other keys of each entry are ignored).
    An intervention fixes a label of `labels` that its rerun does not show, delays one that the rerun
    shows at least WINDOW steps later, and harms when the rerun shows a label `labels` lacks.
    Acceptable: at least one fix and no harm. Returns the key (str) of the acceptable intervention
    with the most fixes, then the most delays, then the earliest in the order of INTERVENTIONS (keys
    not in INTERVENTIONS are never chosen); None when none is acceptable, or `labels` is empty.
    The arguments are not modified.
    """
    ### BEGIN SOLUTION
    best, best_score = None, None
    for rank, key in enumerate(INTERVENTIONS):
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        delays = sum(lab in later and later[lab] >= labels[lab] + WINDOW for lab in labels)
        harms = any(lab not in labels for lab in later)
        if fixes == 0 or harms:
            continue
        score = (fixes, delays, -rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best
    ### END SOLUTION


# %% [tests] id=test_choose_intervention points=3
_runs = {_r["name"]: _r for _r in load_clinic_runs()}
_chosen = {"smoke": "one_epoch", "kl_blowup": "one_epoch", "stale": "one_epoch", "hack": "kl_penalty",
           "easy_prompts": None, "verifier_fault": "repair_verifier", "lm_sloppy": "patch_verifier",
           "lm_sloppy_mask": "patch_verifier", "lm_no_kl": None}
for _name, _want in _chosen.items():
    _got = choose_intervention(_runs[_name]["labels"], _runs[_name]["after"])
    assert _got == _want, f"run {_name!r}: the evidence supports {_want!r}, you chose {_got!r}"
assert choose_intervention({}, {}) is None, "a run that shows nothing needs no intervention"
_two = {"lower_lr": {"labels": {"kl_blowup": 30}}, "one_epoch": {"labels": {}}}
assert choose_intervention({"kl_blowup": 10, "stale_rollouts": 5}, _two) == "one_epoch", (
    "one_epoch fixes both labels, lower_lr one (and delays the other): the most fixes win"
)
_harm = {"lower_lr": {"labels": {"entropy_collapse": 20}}}
assert choose_intervention({"kl_blowup": 10}, _harm) is None, (
    "lower_lr fixes kl_blowup but the rerun shows a new label: not acceptable"
)

# %%
print(f"{'run':>16} | {'intervention':<16} | fixes, delays, harms -> chosen")
for r in load_clinic_runs():
    if not r["labels"]:
        continue
    for key, res in r["after"].items():
        later = res["labels"]
        fixed = sorted(set(r["labels"]) - set(later))
        delayed = sorted(l for l in r["labels"] if l in later and later[l] >= r["labels"][l] + WINDOW)
        harmed = sorted(set(later) - set(r["labels"]))
        print(f"{r['name']:>16} | {key:<16} | {fixed or '-'}, {delayed or '-'}, {harmed or '-'}")
    print(f"{'':>16}   chosen: {choose_intervention(r['labels'], r['after'])}")
_hack = clinic["hack"]
assert "reward_hacking" not in _hack["after"]["patch_verifier"]["labels"]
assert set(_hack["after"]["patch_verifier"]["labels"]) - set(_hack["labels"])  # fixed, with a side effect
assert set(_hack["after"]["kl_penalty"]["labels"]) <= set(_hack["labels"]) - {"reward_hacking"}
assert all("signal_starvation" in res["labels"] for res in clinic["easy_prompts"]["after"].values())
_nk = clinic["lm_no_kl"]
for _n in ("lm_sloppy", "lm_sloppy_mask"):  # the hack and the growth end
    assert set(clinic[_n]["after"]["patch_verifier"]["labels"]) == {"kl_blowup"}
print("lm_no_kl: KL flag at step", quote("9.4:clinic_lm_nokl_kl_onset", _nk["labels"]["kl_blowup"], "d"),
      "without a KL term, at step", quote("9.4:clinic_lm_nokl_klpen_onset", _nk["after"]["kl_penalty"]["labels"]["kl_blowup"], "d"),
      "with beta = 0.1")
assert _nk["after"]["kl_penalty"]["labels"]["kl_blowup"] < _nk["labels"]["kl_blowup"]
assert all("kl_blowup" in res["labels"] for res in _nk["after"].values())

# %% [markdown]
# What the table shows. Patching `hack`'s verifier does end the hack, but the rerun then collapses
# like the smoke profile it runs on: a fix can expose the next problem, and the rule above calls that
# harm. The KL term ends the hack without it, here; on the grader's other seeds of `hack` it does
# not, while the patched verifier ends that hack on every seed, each time with a collapse. In
# `lm_sloppy` and `lm_sloppy_mask` the patched verifier ends the hack and the length growth
# together: once length no longer pays, the answers stop growing. The menu has none of 9.4.3's
# length interventions (a soft penalty, a larger budget, another contract), so here length growth can
# end only with the pressure behind it. `lm_no_kl` has no acceptable intervention: every rerun still crosses the KL threshold,
# the one with a KL term ($\beta = 0.1$) at step 74<!--fig:9.4:clinic_lm_nokl_klpen_onset-->, before
# the run without one (step 161<!--fig:9.4:clinic_lm_nokl_kl_onset-->). A run whose KL crosses the
# line only in short spikes says little either way: this is no evidence that the KL term raises the
# KL, only that on BaseLM this threshold does not separate the runs. The rule also counts
# only new labels as harm: a label that comes earlier in the rerun is not counted against the
# intervention, so a choice can leave a problem in place, or bring it forward. No intervention in the menu ends `easy_prompts`'
# starvation: its prompts are too easy for this model, and the fix (harder prompts: move the
# difficulty band, lesson 9.3) is a change of data the lab's menu does not offer. Each rerun is one
# seed, so a fix seen here is evidence about this run, not a law; the held-out runs the grader uses
# disagree with the visible ones in places.

# %% [markdown]
# ## Assessment
# Five self-checks (not graded; the explanation appears after your first attempt), then two written
# answers graded by hand.

# %%
selfcheck.choice(
    "A TRL 1.16 run samples with temperature 0.8 and top_p = 0.9 and logs entropy = 0.6. Which distribution's "
    "entropy is that?",
    ["The base softmax of the model's raw logits",
     "softmax(logits / 0.8) over the full vocabulary: the temperature is applied, top-p is not",
     "The exact behaviour distribution after temperature and top-p",
     "The mean surprisal of the sampled tokens"],
    1,
    "TRL computes log-probs and entropy from logits divided by the temperature, over the whole vocabulary. "
    "Top-p shapes the sampler only, so the real behaviour distribution is narrower than the logged one.",
)

# %%
selfcheck.numeric(
    "8 samples for one prompt, 2 of them correct. What is the unbiased pass@4 estimate (3 decimals)?",
    1 - math.comb(6, 4) / math.comb(8, 4),
    "1 - C(6,4)/C(8,4) = 1 - 15/70 = 0.786. As a product: 1 - (6/8)(5/7)(4/6)(3/5) = 1 - 0.214. The plug-in "
    "1 - (1 - 2/8)^4 = 0.684 is lower: it is biased downwards.",
    tol=2e-3,
)

# %%
selfcheck.choice(
    "Over a run, training accuracy rises from 0.50 to 0.55 while the informative-group rate falls from 0.90 to "
    "0.40 (G = 8, binary rewards). What is the most likely reading?",
    ["Normal progress: higher accuracy always means fewer informative groups",
     "Prompts are splitting into always-solved and never-solved ones: success is concentrating",
     "The verifier became stricter",
     "The learning rate is too small"],
    1,
    "At accuracy near 0.5 spread evenly, almost every group of 8 is informative (1 - 2*0.5^8 = 0.99). A rate of "
    "0.40 at the same accuracy needs many prompts near p = 0 or p = 1: the policy is concentrating. Check "
    "coverage, per-prompt success and pass@k.",
)

# %%
selfcheck.choice(
    "A run masks truncated responses out of the loss. Mean length rises steadily and the truncation rate goes "
    "from 2% to 30% on the hardest prompts, while accuracy on the rest is flat. What is the best first action?",
    ["Nothing: masked responses cannot affect training",
     "Raise max_new_tokens until truncation disappears",
     "Read truncated samples and the reward by length bucket: the mask removes the only negative feedback for "
     "not stopping, so the policy may be learning to ramble on hard prompts; consider a soft penalty or a "
     "separate label",
     "Add an entropy bonus"],
    2,
    "Masking removes negative feedback for truncated responses. On hard prompts, pushing wrong answers down "
    "frees probability that flows to the unpenalised outcome: not stopping. A bigger budget only moves the "
    "limit; first look at what the truncated responses contain.",
)

# %%
selfcheck.numeric(
    "Under a fixed decoding protocol the base model solves a prompt with probability p = 0.002 per sample. "
    "With a budget of n = 256 samples, what is the chance of seeing at least one success (3 decimals)?",
    1 - 0.998**256,
    "1 - 0.998^256 = 1 - e^(256 ln 0.998) = 0.401. The prompt is neither clearly inside nor outside the "
    "effective support at this budget: with n = 8 the chance is 0.016, with n = 2048 it is 0.983. Claims "
    "of 'new' abilities are always relative to the budget.",
    tol=2e-3,
)

# %% [markdown]
# ### Written answers
#
# Answer in the cells below each question, in a few sentences or a short list.

# %% [markdown]
# **W1 (3 points).** You are about to start a GRPO run on math problems with a rule-based verifier
# (G = 8, 2 000 steps, held-out set of 500 problems evaluated every 100 steps with 16 samples each).
# Write the stopping criteria you would fix before starting: at least three rules, each with the
# quantity, the threshold or comparison, and why it indicates that continuing is harmful or useless.
# Say which quantity you would deliberately **not** use as a stopping signal, and why.

# %% [written] id=q_stopping_criteria points=3
# **Model answer.**
# 1. *Proxy gap:* stop when the training reward has risen by more than a set amount over the last
#    three evaluations while held-out pass@1 has not improved by more than its noise (e.g. two standard
#    errors, clustered by problem: the 16 samples of one problem are correlated, so the 8 000 samples
#    count as 500 independent units, and the standard error is the spread of the 500 per-problem
#    rates over $\sqrt{500}$; better still, a paired interval against the previous evaluation on the
#    same problems): the policy is fitting the proxy or the training prompts.
# 2. *pass@k decline:* stop when held-out pass@16 (the largest $k$ the 16 samples allow) falls more than
#    e.g. 10% (relative) below its best: coverage is shrinking, the policy is narrowing.
# 3. *Checker health:* stop and inspect when the parse-failure or verifier-error rate doubles relative to
#    the start or exceeds e.g. 2%: rewards are being assigned by a failing checker, so the reward curve
#    is no longer about correctness.
# 4. (optional) *Truncation:* truncation rate above e.g. 10% for two evaluations under a masked or
#    zero-reward contract; or informative-group rate below e.g. 0.2 (almost no signal per sample).
# Not a stopping signal: token entropy by itself. It has no transferable healthy value, it falls in
# healthy runs that found a stable method, and it rises under higher temperature without any learning;
# it is a prompt to look at diversity and pass@k, not a threshold. (Training loss is another bad choice:
# with group-relative advantages its level carries little meaning.)
#
# **Rubric (3 points).** 1 pt: at least three rules, each naming a quantity and a concrete threshold or
# comparison fixed in advance. 1 pt: the rules cover at least two different groups of the dashboard,
# including one independent quality measure on held-out data (not only training reward). 1 pt: names a
# quantity not to stop on (entropy, loss, raw mean length) with a correct reason.

# %% [markdown]
# **W2 (3 points).** A paper shows that after RL, pass@1 on a benchmark went from 0.31 to 0.52, while at
# $k = 256$ the base model scores 0.88 and the RL model 0.79. A colleague concludes: "RL made the model
# worse at reasoning." Another says: "RL taught the model new reasoning." Explain what the two curves
# do and do not show, and list the extra evidence you would need before accepting either conclusion.

# %% [written] id=q_pass_at_k_crossing points=3
# **Model answer.** The curves show a redistribution of probability: the RL model concentrates on
# successes it finds often (higher pass@1), and under the same decoding and a budget of 256 samples
# it solves fewer distinct problems than the base model (lower coverage at large $k$). That fits
# *elicitation* of behaviour the base model could already reach, plus some loss of rare successes. It
# does not show "worse reasoning": for a user who samples once or a few times, the RL model is much
# better; it shows narrower effective support at this budget. It does not show "new reasoning" either:
# nothing indicates problems the base model could not solve within the budget.
# Needed evidence: the two curves computed under identical decoding (temperature, top-p, max length,
# prompt format) and with the unbiased estimator and enough samples; the per-problem sets (which
# problems each model solves at $k = 256$, and whether the RL model solves any the base never does);
# strategy clusters or trajectories, not only final answers (a correct answer by guessing differs from
# one by a method); fresh or decontaminated problems; several seeds; and confirmation that no SFT or
# distillation stage is mixed into "RL". Status: the 2025 study (Yue et al.) found this pattern across
# the models and tasks it examined; it is evidence about those settings, not a law.
#
# **Rubric (3 points).** 1 pt: reads the crossing as higher sampling efficiency with narrower coverage at
# this budget (elicitation-consistent), rejecting both blanket conclusions. 1 pt: requires matched decoding
# and budget (and the unbiased estimator or enough samples). 1 pt: at least two further checks among:
# per-problem coverage sets, strategy/trajectory analysis, contamination control, seeds, separating RL
# from SFT/distillation.

# %% [markdown]
# ## Summary
# - "Entropy" needs a distribution: base softmax, tempered, truncated, grammar-masked. Log the behaviour
#   distribution's, as a pooled mean over active tokens, and know what your library logs (TRL 1.16: tempered,
#   full vocabulary).
# - Token entropy, response diversity, strategy diversity and pass@k are different quantities; pass@k is
#   estimated with $1-\binom{n-c}{k}/\binom{n}{k}$, computed as a product.
# - Collapse shows as falling entropy and informative-group rate, growing high-clip fraction, pass@1 up
#   with pass@k flat or down. Every intervention has a price.
# - Truncated is not wrong. Log stop reasons, parse failures over EOS-terminated responses and reward by
#   length bucket, and record a truncation contract.
# - "Elicitation or discovery" is a question about effective support at a stated budget; answer it with
#   matched-budget pass@k curves plus trajectories, not with pass@1.
# - A dashboard has four groups, and the stopping criteria are written before the run.
# - A diagnosis is a definition applied to a log: name the keys, the window and the threshold, and pair
#   a metric that also moves in healthy runs (entropy, reward) with one that does not (held-out pass@k,
#   an audit of correctness). A finding is dated by the first step its evidence exists.
# - An intervention is chosen from evidence: rerun with one change, count what it fixes, delays and
#   harms. Some fixes have side effects (a patched verifier lets the run's other problems show), and
#   some runs have no fix in the menu at all.
