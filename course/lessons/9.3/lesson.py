# %% [markdown]
# # 9.3 Normalisation and algorithm variants
#
# Lesson 9.2 built the clipped group-relative objective. Two choices inside it were left open:
# **what the advantage is divided by** and **what the summed token losses are divided by**. Both look
# like bookkeeping; both decide which prompts and which tokens the update listens to. This lesson
# takes them apart, then reads Dr. GRPO, DAPO and GSPO as changes to precisely these units.
#
# **After this lesson you can**
# 1. show that dividing by the group standard deviation gives a barely-separated group the same
#    advantage scale as a clearly-separated one, and write Dr. GRPO's unscaled advantage;
# 2. compute the per-token gradient weight under the three reductions (per-response mean, constant
#    $1/(GL)$, active-token count) and check it with autograd;
# 3. list DAPO's four changes, implement Clip-Higher, the overlong soft penalty and a dynamic-sampling
#    filter that keeps a record of what it rejected;
# 4. compute GSPO's length-normalised sequence ratio (a geometric mean) and its clipped objective;
# 5. write an algorithm record that a reader can reproduce, instead of an acronym, and read a
#    library's defaults as a dated snapshot.
#
# **Conventions used throughout.** $G$ responses per prompt; response $i$ has $|o_i|$ active
# (unmasked) tokens; padded arrays are $(G, T)$ with a 0/1 `mask`. We write the **objective** $J$
# (to maximise). TRL computes the **loss** $-J$; every reduction here is linear, so the sign passes
# through unchanged. Graded functions are pure NumPy and return `float64`.

# %%
import math
from datetime import date

import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers import selfcheck
from helpers.figures import quote
from helpers.runtime import GRADING, SMOKE

torch.set_num_threads(1)
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 9.3.1 Dividing by the group standard deviation reweights prompts
#
# Canonical GRPO (lesson 9.2) uses
# $$\widehat A_i = \frac{r_i - \bar r}{s_r + \varepsilon}, \qquad \bar r = \frac1G\sum_j r_j .$$
# Two conventions hide in this line and differ between sources:
# - **which standard deviation.** Lesson 9.2's closed form $\widehat A_{\text{success}}=\sqrt{G-1}$
#   uses the population std (divide by $G$). TRL 1.16 uses the Bessel-corrected sample std (divide by
#   $G-1$, its `nanstd`).
# - **where $\varepsilon$ enters.** TRL adds $\varepsilon = 10^{-4}$ to the std, outside the square
#   root: $(r_i-\bar r)/(s_r + 10^{-4})$.
#
# Whatever the convention, the division makes every non-degenerate group's spread roughly one. That
# is handy numerically, and it is also a **reweighting of prompts**. Take two groups of centred
# rewards, the second ten times smaller:
# $$(-0.75,\ 0.25,\ 0.25,\ 0.25) \quad\text{and}\quad (-0.075,\ 0.025,\ 0.025,\ 0.025).$$
# Each divided by its own std gives the *same* advantages: a faint partial-credit difference is
# pushed as hard as a clear pass/fail gap.

# %%
big = np.array([-0.75, 0.25, 0.25, 0.25])
small = big / 10


def std_scaled(r, ddof=1, eps=1e-4):
    """Group-std-scaled advantages of one group (demo only; ddof=1 and eps=1e-4 as in TRL 1.16)."""
    return (r - r.mean()) / (r.std(ddof=ddof) + eps)


print("big   group, std-scaled:", std_scaled(big))
print("small group, std-scaled:", std_scaled(small))
print(
    "with eps = 0 the two are identical:",
    np.allclose(std_scaled(big, eps=0), std_scaled(small, eps=0)),
)
s_small = small.std(ddof=1)
shrink_small = 1 - std_scaled(small)[0] / std_scaled(small, eps=0)[0]  # what eps costs the small group
assert math.isclose(shrink_small, 1e-4 / (s_small + 1e-4))
print("small group: std", quote("9.3:small_std", s_small, ".2f"), "=",
      quote("9.3:small_std_over_eps", s_small / 1e-4, ".0f"), "x eps; eps shrinks its advantages by",
      quote("9.3:small_eps_shrink", shrink_small, ".1%"))

# %% [markdown]
# The tiny difference between the two printed rows is $\varepsilon$ at work: the small group's std
# (0.05<!--fig:9.3:small_std-->) is only 500<!--fig:9.3:small_std_over_eps--> times $\varepsilon$, so it loses
# 0.2%<!--fig:9.3:small_eps_shrink-->. Only when the spread approaches $\varepsilon$
# does $\varepsilon$ start to damp it.
#
# **Numerical check (scale invariance).** For any $c>0$, $\dfrac{cr_i - c\bar r}{c\,s_r} = \dfrac{r_i-\bar r}{s_r}$ [9.3-1].
# We check it for random groups and scales:

# %%
rng = np.random.default_rng(0)
for _ in range(5):
    r = rng.normal(size=6)
    c = 10 ** rng.uniform(-3, 3)
    assert np.allclose(std_scaled(r, eps=0), std_scaled(c * r, eps=0))
print("std-scaled advantages are invariant to the reward scale c (eps = 0): checked for 5 random c")

# %% [markdown]
# *Understanding R1-Zero-Like Training: A Critical Perspective* (Liu et al., 2025) names this a
# **question-level difficulty bias** and proposes **Dr. GRPO**, which keeps the group-mean baseline and
# drops the division [9.3-2]:
# $$\widehat A_i^{\text{Dr}} = r_i - \bar r .$$
# In TRL this is `scale_rewards="none"` (the advantage is then `rewards - group mean`).
#
# The price: without the division, the update size follows the **reward units** and the batch mix.
# A reward in $[0, 1]$ and a reward in $[-100, 100]$ cannot be summed into one signal without choosing
# their relative scale on purpose.
#
# The plot sweeps the reward gap of a group with one failure among $G=4$ and shows the failure's
# advantage under both rules.

# %%
gaps = np.logspace(-3, 1, 60)
fail_std, fail_dr = [], []
for g in gaps:
    r = np.array([0.0, g, g, g])
    fail_std.append(std_scaled(r)[0])
    fail_dr.append((r - r.mean())[0])
flat = -np.array(fail_std)[gaps >= 1000 * 1e-4]  # gaps far above eps
assert np.ptp(flat) < 0.01  # flat there
print("std-scaled |advantage| of the failure for gaps >= 1000 eps:", quote("9.3:fail_std_flat", flat.mean(), ".1f"))

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(gaps, -np.array(fail_std), label=r"std-scaled, $|\hat A|$ (ddof=1, $\varepsilon=10^{-4}$)")
ax.plot(gaps, -np.array(fail_dr), label=r"Dr. GRPO, $|r-\bar r|$")
ax.set(xscale="log", yscale="log", xlabel="reward gap inside the group",
       ylabel="|advantage| of the failure", title="Advantage scale vs reward spread (G = 4)")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# The std-scaled curve is flat at 1.5<!--fig:9.3:fail_std_flat--> until the gap is near $\varepsilon$; Dr. GRPO's grows in
# proportion to the gap. Which one you want depends on whether a small reward difference *should*
# move the policy less. That is a modelling decision, not a bug fix.
#
# **Convention for an all-equal group.** $r_i-\bar r$ is zero in exact arithmetic, but the float mean
# of ten copies of 0.3 is not exactly 0.3 (lesson 9.2), so the subtraction leaves nonzero residues
# below 1e-15<!--fig:9.3:ten_resid_bound--> (their exact size depends on the float arithmetic): **zeros up
# to rounding**. Here that is harmless, because nothing divides by the spread afterwards (with the std
# division of 9.2 the same residue became an advantage of magnitude 1.0<!--fig:9.3:ten_naive_adv-->, which is why
# 9.2 tests equality explicitly). TRL's `scale_rewards="none"` behaves the same way. Check:

# %%
ten = np.full(10, 0.3)
resid = ten - ten.mean()
print("ten rewards of 0.3, r - mean:", resid[:3].tolist(), "...")
assert 0 < np.abs(resid).max() < 1e-15  # not exact zeros, but rounding-sized
print("nonzero, below", quote("9.3:ten_resid_bound", 1e-15, ".0e"))
naive = resid / ten.std()
assert np.all(np.abs(naive) == 1.0)
print("divided by the float std of the rewards (9.2's trap):", naive[:3].tolist(), "| magnitude",
      quote("9.3:ten_naive_adv", np.abs(naive).max(), ".1f"))

# %% [markdown]
#
# ### Graded: Dr. GRPO advantages
# Implement the unscaled group-relative advantage. It must work for one group `(G,)` and for a batch
# of groups `(B, G)` (one group per row).
#
# **How you are graded.** Each graded function has one test cell: the visible asserts you can run
# now, and hidden tests that run only when the course grades your notebook. The hidden tests check
# every promise of the docstring (shapes, dtypes, the errors it names, degenerate and empty inputs,
# that your inputs are left unmodified) and compare your function with the course's on seeded random
# inputs, with the tolerances the docstring or the test states. A test cell earns its points when it
# runs without an error. What your code prints, to stdout or stderr (`print`, `logging`, warnings),
# never costs points: the feedback shows it, marked `[stderr]`.


# %% [solution] id=dr_grpo_advantages
def dr_grpo_advantages(rewards: np.ndarray) -> np.ndarray:
    """Dr. GRPO advantages: each reward minus its group mean, with no std scaling.

    Args:
        rewards: array-like of shape (G,) (one group) or (B, G) (B groups, one per row), any real
            dtype. Not modified. Other shapes are outside the contract and are not graded (this
            reference raises ValueError for them).

    Returns:
        np.ndarray of dtype float64 and the same shape: r - mean(r) along the last axis (the mean of
        each group, i.e. each row). A group whose rewards are all equal gets zeros up to float
        rounding (|A| ~ 1e-17, e.g. for ten 0.3s; exact zeros when the mean is exact). Matches TRL's
        scale_rewards="none" except that TRL also ignores NaN rewards (nanmean); here rewards are
        assumed finite.
    """
    ### BEGIN SOLUTION
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2):
        raise ValueError(f"rewards must be (G,) or (B, G), got shape {r.shape}")
    return r - r.mean(axis=-1, keepdims=True)
    ### END SOLUTION


# %% [tests] id=test_dr_grpo_advantages points=2
_out = dr_grpo_advantages(np.array([1.0, 0.0, 0.0, 0.0]))
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_out = np.array(_out, dtype=np.float64)
assert _out.shape == (4,), f"a (G,) input must give a (G,) output, got shape {_out.shape}"
np.testing.assert_allclose(_out, [0.75, -0.25, -0.25, -0.25], atol=1e-12,
                           err_msg="rewards (1,0,0,0): expected r - mean = (0.75,-0.25,-0.25,-0.25); no std division")
_out = np.array(dr_grpo_advantages(np.array([[1.0, 0.0], [3.0, 3.0]])), dtype=np.float64)
np.testing.assert_allclose(_out, [[0.5, -0.5], [0.0, 0.0]], atol=1e-12,
                           err_msg="(B, G) input: subtract each ROW's mean (axis=-1), not the mean of the whole batch")

# %% [markdown]
# ## 9.3.2 Length normalisation decides who receives gradient
#
# After clipping, each active token carries a term $\ell_{i,t}$. Three reductions are in use; each is
# a weighted sum $J = \sum_{i,t} w_{i,t}\,\ell_{i,t}$ over active tokens, and the weight $w_{i,t}$ is
# exactly the gradient $\partial J/\partial \ell_{i,t}$:
#
# | name here | who uses it | $J$ | per-token weight $w_{i,t}$ [9.3-3] | one response's total weight |
# |---|---|---|---|---|
# | `"response"` | original GRPO (DeepSeekMath); TRL `loss_type="grpo"` | $\frac1G\sum_i \frac1{\lvert o_i\rvert}\sum_t \ell_{i,t}$ | $\dfrac{1}{G\,\lvert o_i\rvert}$ | $\dfrac1G$ |
# | `"constant"` | Dr. GRPO; TRL `"dr_grpo"` | $\frac1{GL}\sum_i\sum_t \ell_{i,t}$ | $\dfrac{1}{GL}$ | $\dfrac{\lvert o_i\rvert}{GL}$ |
# | `"token"` | DAPO; TRL `"dapo"` (and `"bnpo"`, the same only with one process and one accumulation step) | $\frac1{\sum_j \lvert o_j\rvert}\sum_i\sum_t \ell_{i,t}$ | $\dfrac{1}{\sum_j \lvert o_j\rvert}$ | $\dfrac{\lvert o_i\rvert}{\sum_j \lvert o_j\rvert}$ |
#
# $L$ is a fixed constant, in TRL the `max_completion_length`. Under `"response"` every response has
# the same total weight, so a token of a long response gets less: a long *failed* response is pushed
# down more gently per token than a short failed one, and, the other half, a short *correct* response
# is pushed up harder per token than a long correct one. The other two give every token the same weight
# and let long responses carry more in total. They differ in the denominator: $GL$ does not depend on
# what was sampled, $\sum_j|o_j|$ does (it changes from batch to batch, and with how a batch is split
# over devices and accumulation steps).
#
# (The course's simplified trainer, `helpers/trainer.py` in lesson 9.5, **sums** the token
# log-probabilities of a completion, weight 1 per token: a fourth choice, with no normaliser at all.)
#
# Neither alternative claims that longer answers are better. The reduction only decides how the
# gradient budget is split among tokens.

# %%
lengths = np.array([2, 4, 8, 16])  # one group, G = 4, unequal lengths
G, L = len(lengths), 16
w_resp = 1 / (G * lengths)
w_const = np.full(G, 1 / (G * L))
w_tok = np.full(G, 1 / lengths.sum())
# the "response" weight is the gradient of the per-response mean: autograd on a float64 loss
x = torch.zeros(G, L, dtype=torch.float64, requires_grad=True)
m = (torch.arange(L)[None, :] < torch.as_tensor(lengths)[:, None]).double()
((x * m).sum(1) / m.sum(1)).mean().backward()
w_auto = x.grad[:, 0].numpy()  # d loss / d (first token's term) of each response
assert np.allclose(w_auto, w_resp) and np.all(np.diff(w_auto) < 0)  # shorter: larger per-token push
print("length               ", lengths)
print("per-token weight  response:", w_resp, " constant:", w_const, " token:", w_tok)
print(
    "response total     response:",
    w_resp * lengths,
    " constant:",
    w_const * lengths,
    " token:",
    w_tok * lengths,
)

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
x = np.arange(G)
for k, (name, w) in enumerate([("response (GRPO)", w_resp), (f"constant (Dr. GRPO, L={L})", w_const),
                               ("token (DAPO)", w_tok)]):
    axes[0].bar(x + (k - 1) * 0.27, w, width=0.27, label=name)
    axes[1].bar(x + (k - 1) * 0.27, w * lengths, width=0.27, label=name)
for ax, title in zip(axes, ["weight of ONE token", "total weight of the response"]):
    ax.set_xticks(x, [f"|o|={n}" for n in lengths])
    ax.set_title(title)
axes[0].legend(fontsize=8)
plt.suptitle("Who receives gradient: one group of four responses")
plt.tight_layout()
plt.show()

# %% [markdown]
# **Numerical check (autograd).** We write each reduction in torch, differentiate with respect to the
# per-token terms, and compare with the weight column of the table. Padding positions must get
# exactly zero gradient.

# %%
T = 16
mask_t = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).double()  # (G, T)
n_i = mask_t.sum(1)
reductions = {
    "response": (
        lambda l: ((l * mask_t).sum(1) / n_i.clamp(min=1)).mean(),
        1 / (G * n_i)[:, None] * mask_t,
    ),
    "constant": (lambda l: (l * mask_t).sum() / (G * L), mask_t / (G * L)),
    "token": (lambda l: (l * mask_t).sum() / mask_t.sum().clamp(min=1), mask_t / mask_t.sum()),
}
for name, (reduce_fn, w_formula) in reductions.items():
    ell = torch.randn(G, T, dtype=torch.float64, requires_grad=True)
    reduce_fn(ell).backward()
    assert torch.allclose(ell.grad, w_formula), name
    print(f"{name:9s}: autograd weight == formula; per-response totals {ell.grad.sum(1).numpy()}")

# %% [markdown]
# ### Graded: the three reductions
# Implement them in NumPy with TRL's conventions:
# - `"response"`: divide each row's masked sum by its active-token count **clamped to at least 1**
#   (TRL: `mask.sum(-1).clamp(min=1)`), then average over **all** $G$ rows. A row with no active
#   token therefore contributes 0 and still counts in the average.
# - `"constant"`: masked sum divided by $G \cdot L$, with $G$ the number of rows.
# - `"token"`: masked sum divided by the total active-token count, clamped to at least 1.
#
# Differences from TRL you should know about (not part of this function): TRL divides `"grpo"`,
# `"dr_grpo"` and `"bnpo"` by the number of gradient-accumulation steps; `"bnpo"` divides by the
# active tokens of the local micro-batch, `"dapo"` by `num_items_in_batch`, the active tokens of the
# whole generation batch on all processes (rescaled to one accumulation window) [9.3-12]. With one
# process and one accumulation step (and `steps_per_generation` at its default, the accumulation
# steps) both are the `"token"` mode here; otherwise `"bnpo"` averages the micro-batches' token
# means, while `"dapo"` divides every micro-batch by one shared count (check after the graded cell).


# %% [solution] id=reduce_loss
def reduce_loss(
    per_token_loss: np.ndarray, mask: np.ndarray, mode: str, L: int | None = None
) -> float:
    """Reduce per-token terms of shape (G, T) to one number.

    Args:
        per_token_loss: (G, T) real array; entries where mask == 0 (padding) may hold any finite
            value and must not affect the result.
        mask: (G, T) array of 0/1 (bool, int or float); 1 marks an active completion token.
        mode: "response" - mean over each row's active tokens (count clamped to >= 1), then mean
                  over all G rows (an empty row contributes 0 and counts in G);
              "constant" - sum of active terms / (G * L);
              "token"    - sum of active terms / max(1, total number of active tokens).
        L: the constant of "constant" mode (e.g. the maximum completion length), a positive number;
            required for "constant" (ValueError if missing or <= 0), ignored otherwise.

    Returns:
        A Python float. An all-zero mask gives 0.0 in every mode (also an empty batch, G = 0 or T = 0).

    Raises:
        ValueError: unknown mode, shapes that differ, or a missing/non-positive L for "constant".
    """
    ### BEGIN SOLUTION
    ell = np.asarray(per_token_loss, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError(
            f"per_token_loss and mask must both be (G, T); got {ell.shape} and {m.shape}"
        )
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode == "response":
        counts = np.maximum(m.sum(axis=1), 1.0)
        return float((masked.sum(axis=1) / counts).mean()) if G else 0.0
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError(
                "mode='constant' needs a positive L (e.g. the maximum completion length)"
            )
        return float(masked.sum() / (G * L)) if G else 0.0
    if mode == "token":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(f"unknown mode {mode!r}; use 'response', 'constant' or 'token'")
    ### END SOLUTION


# %% [tests] id=test_reduce_loss points=4
_l = np.array([[1.0, 2.0, 3.0, 99.0], [4.0, 99.0, 99.0, 99.0]])
_m = np.array([[1, 1, 1, 0], [1, 0, 0, 0]])
_r = reduce_loss(_l, _m, "response")
assert type(_r) is float, f"return a Python float (use float(...)), got {type(_r).__name__}"
assert math.isclose(_r, 3.0, rel_tol=1e-12), (
    f"'response': row means are 2 and 4, so expected 3.0, got {_r}. Check that padding (99) is masked out "
    "and that you divide each row by ITS OWN active count"
)
_t = reduce_loss(_l, _m, "token")
assert math.isclose(float(_t), 2.5, rel_tol=1e-12), (
    f"'token': (1+2+3+4)/4 active tokens = 2.5, got {_t}"
)
_c = reduce_loss(_l, _m, "constant", L=5)
assert math.isclose(float(_c), 1.0, rel_tol=1e-12), (
    f"'constant': 10 / (G*L) = 10 / (2*5) = 1.0, got {_c}"
)

# %% [markdown]
# Cross-check your `reduce_loss` against the torch reductions used in the autograd check (runs once
# you have implemented it):

# %%
ell_demo = torch.randn(G, T, dtype=torch.float64)
try:
    for name, (reduce_fn, _) in reductions.items():
        mine = reduce_loss(ell_demo.numpy(), mask_t.numpy(), name, L=L)
        theirs = reduce_fn(ell_demo).item()
        print(f"{name:9s}: reduce_loss = {mine:+.6f}   torch = {theirs:+.6f}")
        assert math.isclose(mine, theirs, rel_tol=1e-12, abs_tol=1e-15), (
            f"your reduce_loss differs from the torch reduction for {name!r}: see its tests above"
        )
except NotImplementedError:
    print("Implement reduce_loss above, then re-run this cell.")

# %% [markdown]
# TRL's two token reductions on one process, written out: `"bnpo"` (local token count, divided by the
# accumulation steps) and `"dapo"` (one count for the whole generation batch), summed over the
# accumulation micro-batches as the optimizer sees them.

# %%
ell_mb = torch.randn(4, T, dtype=torch.float64)
mask_mb = (torch.arange(T)[None, :] < torch.tensor([2, 3, 9, 16])[:, None]).double()


def trl_token_losses(n_accum):
    """(bnpo, dapo) summed over n_accum micro-batches of the 4 rows (one process)."""
    parts = [(ell_mb[k::n_accum] * mask_mb[k::n_accum], mask_mb[k::n_accum]) for k in range(n_accum)]
    bnpo = sum(lm.sum() / m.sum().clamp(min=1) / n_accum for lm, m in parts)
    # "dapo": num_items_in_batch / num_processes * accumulation steps / steps_per_generation, with
    # one process and steps_per_generation at its default (= the accumulation steps): num_items
    n_items = mask_mb.sum()
    dapo = sum(lm.sum() / n_items for lm, _ in parts)
    return bnpo.item(), dapo.item()


token_mode = ((ell_mb * mask_mb).sum() / mask_mb.sum()).item()
for n_accum in (1, 2):
    bnpo, dapo = trl_token_losses(n_accum)
    print(f"{n_accum} micro-batch(es): bnpo = {bnpo:+.6f}  dapo = {dapo:+.6f}  'token' = {token_mode:+.6f}")
    assert math.isclose(dapo, token_mode, rel_tol=1e-12)
    assert math.isclose(bnpo, token_mode, rel_tol=1e-12) == (n_accum == 1)

# %% [markdown]
# ## 9.3.3 DAPO: four changes that can be switched independently
#
# *DAPO: An Open-Source LLM Reinforcement Learning System at Scale* (Yu et al., 2025) bundles four
# techniques [9.3-4]. Each is a separate switch; a run can use any subset.
#
# 1. **Clip-Higher**: separate bounds, $\rho \in [1-\epsilon_{\text{low}},\ 1+\epsilon_{\text{high}}]$
#    with $\epsilon_{\text{high}} > \epsilon_{\text{low}}$ (TRL's docstring says only that DAPO
#    recommends $\epsilon_{\text{high}}=0.28$; the $\epsilon_{\text{low}}=0.2$ beside it is the DAPO
#    paper's [9.3-5]). The authors' argument: a tight
#    upper clip stops a rare but useful token from growing. It is an empirical stabilisation choice,
#    not a diversity guarantee.
# 2. **Dynamic sampling**: drop groups whose rewards are all equal and keep sampling until the batch
#    has enough informative groups.
# 3. **Token-level loss**: the `"token"` reduction of 9.3.2.
# 4. **Overlong reward shaping**: the paper first masks the loss of truncated responses (overlong
#    filtering), then adds a soft length penalty near the limit (below). Its ablation table is
#    cumulative (each row adds one technique to the row above), and, as the table presents it, the
#    final DAPO row keeps the filtering together with the penalty [9.3-4]: truncated responses get no gradient, and responses
#    that run into the soft zone before the limit are penalised.
#
# ### Clip-Higher
# Per active token, with the response's advantage $\widehat A_i$ broadcast over its tokens:
# $$j_{i,t} = \min\big(\rho_{i,t}\widehat A_i,\ \operatorname{clip}(\rho_{i,t}, 1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}})\,\widehat A_i\big).$$
# TRL computes the same with `coef_2 = clamp(coef_1, 1 - epsilon, 1 + epsilon_high)` and returns
# `-min(...)` as the loss; `epsilon_high=None` means symmetric clipping.
#
# **Numerical check (autograd).** Where the clipped branch is the smaller one, $\partial j/\partial\rho = 0$;
# elsewhere it is $\widehat A$. For $\widehat A>0$ the gradient dies above $1+\epsilon_{\text{high}}$,
# for $\widehat A<0$ below $1-\epsilon_{\text{low}}$:

# %%
eps_low, eps_high = 0.2, 0.28
rho = torch.tensor([0.5, 0.75, 0.9, 1.1, 1.25, 1.35], dtype=torch.float64, requires_grad=True)
for A in (+1.0, -1.0):
    rho.grad = None
    j = torch.minimum(rho * A, torch.clamp(rho, 1 - eps_low, 1 + eps_high) * A)
    j.sum().backward()
    r = rho.detach()
    expected = torch.where(
        (A > 0) & (r > 1 + eps_high) | (A < 0) & (r < 1 - eps_low), 0.0, A
    ).double()
    assert torch.equal(rho.grad, expected)
    print(f"A = {A:+.0f}: dj/drho = {rho.grad.numpy()}  (matches the rule)")

# %%
grid = np.linspace(0.5, 1.6, 300)
fig, axes = plt.subplots(1, 2, figsize=(9, 3))
for ax, A in zip(axes, (+1.0, -1.0)):
    for eh, style in [(0.2, "--"), (0.28, "-")]:
        ax.plot(grid, np.minimum(grid * A, np.clip(grid, 0.8, 1 + eh) * A), style,
                label=f"eps_low=0.2, eps_high={eh}")
    ax.set(title=f"A = {A:+.0f}", xlabel=r"ratio $\rho$", ylabel="per-token objective")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# Clip-Higher only moves the flat part of the $\widehat A>0$ curve to the right (tokens may grow up to
# $\rho=1.28$ before their gradient stops); the $\widehat A<0$ side is unchanged.


# %% [solution] id=clip_higher_objective
def clip_higher_objective(ratios: np.ndarray, advantages: np.ndarray, mask: np.ndarray,
                          eps_low: float = 0.2, eps_high: float = 0.28) -> np.ndarray:
    """Per-token clipped surrogate with decoupled bounds (DAPO's Clip-Higher).

    Args:
        ratios: (G, T) token ratios rho = pi_theta / pi_old (positive; padding may hold any finite value).
        advantages: (G,) one advantage per response, broadcast over its tokens, or (G, T) per token.
        mask: (G, T) 0/1 (bool, int or float); 1 marks an active token.
        eps_low, eps_high: the clip interval is [1 - eps_low, 1 + eps_high].

    Returns:
        float64 np.ndarray of shape (G, T): min(rho * A, clip(rho, 1 - eps_low, 1 + eps_high) * A)
        on active tokens and exactly 0.0 where mask == 0. This is the objective (TRL's
        per_token_loss is its negative).
    """
    ### BEGIN SOLUTION
    rho = np.asarray(ratios, dtype=np.float64)
    A = np.asarray(advantages, dtype=np.float64)
    if A.ndim == 1:
        A = A[:, None]
    m = np.asarray(mask, dtype=np.float64)
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * A)
    return np.where(m > 0, j, 0.0)
    ### END SOLUTION


# %% [tests] id=test_clip_higher_objective points=3
_rho = np.array([[0.7, 1.0, 1.25, 1.4], [0.7, 1.0, 1.25, 1.4]])
_out = clip_higher_objective(_rho, np.array([1.0, -1.0]), np.ones((2, 4)))
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_out = np.array(_out, dtype=np.float64)
assert _out.shape == (2, 4), f"expected shape (G, T) = (2, 4), got {_out.shape}"
np.testing.assert_allclose(_out[0], [0.7, 1.0, 1.25, 1.28], atol=1e-12,
                           err_msg="A=+1: rho=1.4 must be capped at 1 + eps_high = 1.28; rho=1.25 passes unclipped")
np.testing.assert_allclose(_out[1], [-0.8, -1.0, -1.25, -1.4], atol=1e-12,
                           err_msg="A=-1: rho=0.7 is clipped to 1 - eps_low = 0.8 (gives -0.8); rho=1.4 is NOT clipped (the min keeps -1.4)")

# %% [markdown]
# ### Overlong reward shaping
# With $L_{\max}$ the length limit and $L_{\text{cache}}$ the width of a soft zone before it, DAPO adds
# to the correctness reward
# $$R_{\text{length}}(y) = \begin{cases} 0, & |y| \le L_{\max} - L_{\text{cache}},\\[2pt]
# \dfrac{(L_{\max} - L_{\text{cache}}) - |y|}{L_{\text{cache}}}, & L_{\max} - L_{\text{cache}} < |y| \le L_{\max},\\[6pt]
# -1, & |y| > L_{\max}. \end{cases}$$
# The ramp falls from 0 to $-1$ across the soft zone and reaches exactly $-1$ at $|y| = L_{\max}$, so the
# function is continuous. The step studied first, **masking truncated responses**, is TRL's
# `mask_truncated_completions=True`: a truncated response then gets no gradient of its own (in DAPO's
# final run, on top of the penalty). Its reward still counts: TRL 1.16 computes every completion's
# reward and the group's mean and std from every completion, and that code never reads the truncation
# mask, so the truncated response still moves the baseline and the scale of the other responses' advantages [9.3-12].


# %% [solution] id=overlong_reward
def overlong_reward(lengths: np.ndarray, L_max: int, L_cache: int) -> np.ndarray:
    """DAPO's soft overlong penalty for each response length.

    Args:
        lengths: (N,) non-negative integer response lengths |y| (array-like).
        L_max: the length limit.
        L_cache: width of the soft zone; requires 0 < L_cache <= L_max (ValueError otherwise).

    Returns:
        float64 np.ndarray of shape (N,):
            0                                  if |y| <= L_max - L_cache,
            (L_max - L_cache - |y|) / L_cache  if L_max - L_cache < |y| <= L_max,
            -1                                 if |y| > L_max.
    """
    ### BEGIN SOLUTION
    if not 0 < L_cache <= L_max:
        raise ValueError(f"need 0 < L_cache <= L_max, got L_cache={L_cache}, L_max={L_max}")
    y = np.asarray(lengths, dtype=np.float64)
    start = L_max - L_cache
    ramp = (start - y) / L_cache
    return np.where(y <= start, 0.0, np.where(y <= L_max, ramp, -1.0))
    ### END SOLUTION


# %% [tests] id=test_overlong_reward points=3
_out = overlong_reward(np.array([10, 16, 18, 20, 25]), L_max=20, L_cache=4)
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_out = np.array(_out, dtype=np.float64)
np.testing.assert_allclose(_out, [0.0, 0.0, -0.5, -1.0, -1.0], atol=1e-12,
                           err_msg="L_max=20, L_cache=4: |y|<=16 -> 0; |y|=18 -> (16-18)/4 = -0.5; |y|=20 -> -1; above -> -1")

# %%
L_MAX, L_CACHE = 4096, 512
ys = np.arange(0, 4400)
try:
    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.plot(ys, overlong_reward(ys, L_MAX, L_CACHE))
    ax.axvline(L_MAX - L_CACHE, ls=":", c="gray")
    ax.axvline(L_MAX, ls=":", c="gray")
    ax.set(
        xlabel="|y| (tokens)",
        ylabel=r"$R_{length}$",
        title=f"Overlong penalty, L_max={L_MAX}, L_cache={L_CACHE}",
    )
    plt.tight_layout()
    plt.show()
except NotImplementedError:
    plt.close()
    print("Implement overlong_reward above, then re-run this cell for the penalty curve.")

# %% [markdown]
# ### Dynamic sampling: cost and a changed distribution
# With binary rewards and success probability $p$ for a prompt, a group of $G$ is informative with
# probability $P(p) = 1 - p^G - (1-p)^G$. Filtering has two consequences [9.3-6]:
# - **cost**: to keep one group you sample on average $1/P(p)$ groups, i.e. $G/P(p)$ responses.
# - **distribution**: a prompt survives in proportion to $P(p)$, so the batch the loss sees is
#   tilted towards medium-difficulty prompts; the very easy and very hard ones nearly vanish from
#   the updates even though they are in the data set.
#
# Because the filtered batch is no longer the data distribution, the rejected groups are data too:
# keep a record (prompt, reason) so that the rate of all-correct and all-wrong groups can be plotted
# and the original stream rebuilt. (Lesson 9.5's trainer gives the same advice for the degenerate
# groups it skips: count them, because on a too-easy task the count creeps towards 100%.)
#
# **Why filter at all, when a degenerate group's advantages are already zero?** Zero advantages
# give zero policy-gradient terms, but the group is still in the batch, and it counts in every
# denominator: the $G$ rows of `"response"`, the $G\cdot L$ of `"constant"`, the token count of
# `"token"`. With a fraction $f$ of informative groups (equal group sizes), the policy gradient of the
# `"response"` and `"constant"` reductions is exactly $f$ times the gradient over the informative
# groups alone: the update shrinks as the task gets too easy or too hard. And with $\beta>0$ the
# degenerate groups still carry the KL term's gradient, so the batch keeps its full pull towards
# the reference while its pull towards reward shrinks by $f$ [9.3-13]. Three treatments exist:
#
# | treatment | what happens to a degenerate group | batch the loss sees |
# |---|---|---|
# | zeros (lesson 9.2) | stays, with advantage 0 | full size; policy gradient scaled by $f$; KL term unchanged |
# | skip (lesson 9.5's trainer) | dropped from this step's loss | only the informative groups, so a smaller, noisier batch; no dilution |
# | dynamic sampling (DAPO) | dropped, and more groups are sampled until the batch is full | full size, all informative; generation grows by a factor $1/P$ ($1/P-1$ extra groups per kept group) |
#
# **Numerical check (autograd).** Four groups of $G=3$, two of them degenerate; the gradient is taken
# with respect to each token's log-probability at $\rho=1$:

# %%
B_f, G_f, T_f = 4, 3, 5
N_f = B_f * G_f
gen_f = torch.Generator().manual_seed(5)
lens_f = torch.tensor([5, 3, 4, 2, 5, 5, 4, 4, 1, 3, 2, 5])  # (N,) response lengths
mask_f = (torch.arange(T_f)[None, :] < lens_f[:, None]).double()  # (N, T)
rew_f = torch.tensor([[1.0, 0, 1], [0, 0, 0], [0, 1, 0], [1, 1, 1]])  # groups 1 and 3 degenerate
adv_f = (rew_f - rew_f.mean(1, keepdim=True)).reshape(-1)  # (N,) Dr. GRPO advantages
informative_rows = torch.repeat_interleave(rew_f.max(1).values > rew_f.min(1).values, G_f)  # (N,)
f_info = informative_rows.double().mean().item()
ref_lp = -1.0 + 0.3 * torch.randn(N_f, T_f, generator=gen_f, dtype=torch.float64)
logp0 = -1.0 + 0.3 * torch.randn(N_f, T_f, generator=gen_f, dtype=torch.float64)


def response_mean_loss(logp, rows, beta):
    """-(clipped term at rho = 1) + beta * k3, token mean per response, mean over the chosen rows."""
    ratio = torch.exp(logp - logp.detach())  # 1, with gradient
    d = ref_lp - logp
    per_token = -ratio * adv_f[:, None] + beta * (torch.exp(d) - d - 1)
    return ((per_token * mask_f).sum(1) / mask_f.sum(1))[rows].mean()


grads = {}
for name, rows in [("zeros", torch.ones(N_f, dtype=torch.bool)), ("skip", informative_rows)]:
    for beta in (0.0, 0.1):
        lp = logp0.clone().requires_grad_(True)
        response_mean_loss(lp, rows, beta).backward()
        grads[name, beta] = lp.grad
print(f"informative fraction f = {f_info}")
print(
    "beta = 0: |grad| zeros / |grad| skip =",
    (grads["zeros", 0.0].norm() / grads["skip", 0.0].norm()).item(),
)
assert torch.allclose(grads["zeros", 0.0], f_info * grads["skip", 0.0])  # diluted by exactly f
kl_on_degenerate = grads["zeros", 0.1][~informative_rows].norm().item()
print(
    f"beta = 0.1: gradient norm on the degenerate groups' tokens = {kl_on_degenerate:.4f} (KL only)"
)
assert kl_on_degenerate > 0 and grads["zeros", 0.0][~informative_rows].abs().max() == 0

# %% [markdown]
# The cost and the tilt of the filter, simulated for a data set of prompts with spread-out
# difficulties:

# %%
G_ds = 8
rng = np.random.default_rng(1)
p_prompts = rng.beta(0.6, 0.6, size=4000)  # success probability of each prompt in the data set
k = rng.binomial(G_ds, p_prompts)  # successes in one group per prompt
informative = (k > 0) & (k < G_ds)
print(
    f"kept {informative.mean():.1%} of groups -> {1 / informative.mean():.2f} groups sampled per kept group"
)

fig, ax = plt.subplots(figsize=(6, 3))
bins = np.linspace(0, 1, 21)
ax.hist(p_prompts, bins=bins, alpha=0.5, density=True, label="prompts in the data set")
ax.hist(
    p_prompts[informative], bins=bins, alpha=0.5, density=True, label="prompts that reach the loss"
)
pp = np.linspace(0, 1, 200)
ax.plot(pp, 1 - pp**G_ds - (1 - pp) ** G_ds, "k--", label=r"$P(p)=1-p^G-(1-p)^G$")
ax.set(
    xlabel="prompt success probability p", ylabel="density", title=f"Dynamic sampling (G = {G_ds})"
)
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Graded: a dynamic-sampling filter that keeps its rejections
# Given one row of rewards per prompt, keep the rows whose rewards are not all equal and describe each
# rejected row. The reason vocabulary assumes binary correctness rewards where 1 means correct and
# 0 wrong: all 1 gives `"all_correct"`, all 0 gives `"all_wrong"`, any other common value (partial
# credit, a $\pm1$ scheme's $-1$, ...) gives `"all_equal"`.


# %% [solution] id=dynamic_sampling_filter
def dynamic_sampling_filter(
    rewards: np.ndarray, prompt_ids: list | None = None
) -> tuple[np.ndarray, list[dict]]:
    """Keep informative groups; record every rejected one with its reason.

    Args:
        rewards: (B, G) real array, row b = the G rewards of prompt b's group (finite values).
            A 1-D input raises ValueError.
        prompt_ids: optional length-B sequence of identifiers; default: the row indices 0..B-1.

    A row is uninformative iff all its G rewards are exactly equal (so G == 1 is always uninformative).

    Returns:
        kept: np.ndarray of integer dtype, shape (K,), the indices of informative rows in increasing order.
        rejections: list of dicts, one per uninformative row, in increasing row order, each with keys
            "index"     - the row index b (an int or NumPy integer, not a bool),
            "prompt_id" - prompt_ids[b] (or b when prompt_ids is None),
            "reason"    - "all_correct" if the common value is 1, "all_wrong" if it is 0,
                          "all_equal" for any other common value.
        Every row index appears exactly once, in kept or in a rejection, so the input stream can be
        rebuilt.
    """
    ### BEGIN SOLUTION
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"rewards must be (B, G), got shape {r.shape}")
    ids = list(range(r.shape[0])) if prompt_ids is None else list(prompt_ids)
    if len(ids) != r.shape[0]:
        raise ValueError("prompt_ids must have one entry per row")
    flat = (r == r[:, :1]).all(axis=1)
    rejections = []
    for b in np.flatnonzero(flat):
        value = r[b, 0]
        reason = "all_correct" if value == 1.0 else "all_wrong" if value == 0.0 else "all_equal"
        rejections.append({"index": int(b), "prompt_id": ids[b], "reason": reason})
    return np.flatnonzero(~flat).astype(np.int64), rejections
    ### END SOLUTION


# %% [tests] id=test_dynamic_sampling_filter points=4
_R = np.array(
    [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0.5, 0.5, 0.5, 0.5], [0.5, 1, 0, 0]], dtype=float
)
_kept, _rej = dynamic_sampling_filter(_R)
assert type(_kept) is np.ndarray and np.issubdtype(_kept.dtype, np.integer), (
    "kept must be an integer np.ndarray"
)
assert [int(i) for i in _kept] == [0, 4], (
    f"rows 0 and 4 have unequal rewards and must be kept, got {list(_kept)}"
)
assert isinstance(_rej, list) and len(_rej) == 3, (
    f"expected 3 rejections (rows 1, 2, 3), got {_rej}"
)
assert [int(d["index"]) for d in _rej] == [1, 2, 3], (
    "rejections must list row indices 1, 2, 3 in increasing order"
)
assert [str(d["reason"]) for d in _rej] == ["all_correct", "all_wrong", "all_equal"], (
    f"reasons: all 1 -> 'all_correct', all 0 -> 'all_wrong', other equal value -> 'all_equal'; got {[d['reason'] for d in _rej]}"
)
assert [int(d["prompt_id"]) for d in _rej] == [1, 2, 3], (
    "without prompt_ids, prompt_id is the row index"
)

# %%
try:
    kept, rejections = dynamic_sampling_filter((k[:12, None] > np.arange(G_ds)[None, :]).astype(float),
                                               prompt_ids=[f"prompt-{i}" for i in range(12)])
    print("kept rows:", kept)
    for rec in rejections:
        print("rejected:", rec)
except NotImplementedError:
    print("Implement dynamic_sampling_filter above, then re-run this cell.")

# %% [markdown]
# ## 9.3.4 GSPO: one length-normalised ratio per response
#
# *Group Sequence Policy Optimization* (Zheng et al., 2025) moves the importance correction from
# tokens to whole responses [9.3-7], with a **length-normalised** sequence ratio
# $$s_i(\theta) = \left(\frac{\pi_\theta(o_i\mid q)}{\pi_{\theta_{\text{old}}}(o_i\mid q)}\right)^{1/|o_i|}
# = \exp\Big(\frac1{|o_i|}\sum_t \log\rho_{i,t}\Big),$$
# the **geometric mean** of the token ratios, not their product. The clipped objective is per response:
# $$J_{\text{GSPO}} = \frac1G\sum_i \min\big(s_i\widehat A_i,\ \operatorname{clip}(s_i, 1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}})\,\widehat A_i\big).$$
# The authors argue that correction and clipping should live on the same unit as the reward (the
# response) and report better stability in the long-response and mixture-of-experts runs they studied:
# reported experiments, not a theorem.
#
# Why the $1/|o_i|$: a product of 200 token ratios of 1.01 is already $1.01^{200}\approx$ 7.3<!--fig:9.3:prod_200-->, far outside
# any clip range, while the geometric mean stays at 1.01.

# %%
prod_200 = np.prod(np.full(200, 1.01))
assert math.isclose(np.exp(np.log(np.full(200, 1.01)).mean()), 1.01)  # the geometric mean stays 1.01
print("200 token ratios of 1.01: product", quote("9.3:prod_200", prod_200, ".1f"), "| geometric mean 1.01")
rng = np.random.default_rng(2)
for n in (5, 50, 500):
    log_rho = rng.normal(0, 0.05, size=n)
    print(f"|o|={n:4d}  product = {np.exp(log_rho.sum()):10.4f}   geometric mean = {np.exp(log_rho.mean()):.4f}"
          f"   check prod**(1/n) = {np.prod(np.exp(log_rho)) ** (1 / n):.4f}")

# %% [markdown]
# **Numerical check (gradient of $s_i$).** Since $\log s_i = \frac1{|o_i|}\sum_t(\log\pi_\theta - \log\pi_{\text{old}})$,
# $$\frac{\partial s_i}{\partial \log\pi_\theta(o_{i,t}\mid\cdot)} = \frac{s_i}{|o_i|}$$
# on every active token and 0 on padding: the gradient still reaches every token, with a
# $1/|o_i|$ share.

# %%
lens_g = torch.tensor([3, 5, 1])
mask_g = (torch.arange(5)[None, :] < lens_g[:, None]).double()
new_lp = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
old_lp = new_lp.detach() + 0.1 * torch.randn(3, 5, dtype=torch.float64)
s = torch.exp(((new_lp - old_lp) * mask_g).sum(1) / mask_g.sum(1).clamp(min=1))
for i in range(3):
    (grad_i,) = torch.autograd.grad(s[i], new_lp, retain_graph=True)
    assert torch.allclose(grad_i[i], s[i].detach() / lens_g[i] * mask_g[i])
    assert torch.all(grad_i[torch.arange(3) != i] == 0)
print("ds_i/dlogpi_t = s_i/|o_i| on active tokens, 0 elsewhere: checked; s =", s.detach().numpy())

# %% [markdown]
# **On-policy, GSPO is token-ratio GRPO.** When the old log-probs are the detached current ones
# (one update per batch, lesson 9.2.4), every $\rho_{i,t}=1$ and every $s_i=1$: nothing is clipped,
# and by the formula above each active token receives $\widehat A_i\,s_i/(G|o_i|)=\widehat A_i/(G|o_i|)$,
# the weight of token-ratio GRPO with the per-response mean (the `"response"` reduction of 9.3.2).
# The two gradients are identical, so GSPO changes nothing until a batch is reused and the ratios
# leave 1. Check (autograd, the GSPO objective of the formula above, written in torch):

# %%
A_on = torch.tensor([1.3, -0.4, -0.9], dtype=torch.float64)
n_on = mask_g.sum(1).clamp(min=1)


def gspo_j(new, old, eps_low=3e-4, eps_high=4e-4):
    s_seq = torch.exp(((new - old) * mask_g).sum(1) / n_on)
    return torch.minimum(s_seq * A_on, torch.clamp(s_seq, 1 - eps_low, 1 + eps_high) * A_on).mean()


def token_grpo_j(new, old):
    return ((torch.exp(new - old) * mask_g).sum(1) / n_on * A_on).mean()


new_on = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
for label, old in [("old = new.detach()", new_on.detach()),
                   ("reused batch", new_on.detach() + 0.1 * torch.randn(3, 5, dtype=torch.float64))]:
    (g_gspo,) = torch.autograd.grad(gspo_j(new_on, old), new_on)
    (g_tok,) = torch.autograd.grad(token_grpo_j(new_on, old), new_on)
    same = torch.allclose(g_gspo, g_tok)
    print(f"{label:19s}: GSPO gradient == token-ratio GRPO gradient: {same}")
    assert same == (label == "old = new.detach()")
    if same:
        assert torch.allclose(g_gspo, (A_on / (3 * n_on))[:, None] * mask_g)  # A_i / (G |o_i|) per token

# %% [markdown]
# **The clip range is on a different scale.** In a toy model where the per-token log-ratios are
# independent with spread $\sigma$, a token ratio deviates from 1 by about $\sigma$, while the geometric
# mean of $n$ of them deviates by about $\sigma/\sqrt n$. (Real log-ratios within a response are
# correlated, so the shrinkage is smaller, but the direction holds [9.3-9].) An $\epsilon$ tuned for tokens is
# therefore far too loose for $s_i$. The GSPO paper's values, as quoted in TRL's paper index, are
# $\epsilon_{\text{low}} = 3\times10^{-4}$ and $\epsilon_{\text{high}} = 4\times10^{-4}$ [9.3-8], and TRL's recipe
# for the paper's setting also sets `loss_type="grpo"` (per-response reduction). **TRL does not change
# its epsilon defaults when you switch to `importance_sampling_level="sequence"`**: you get 0.2 unless
# you set it (see the defaults table in 9.3.5).

# %%
n_tok, n_resp = 200, 2000
for sigma in (0.01, 0.05):
    log_rho = np.random.default_rng(4).normal(0, sigma, size=(n_resp, n_tok))
    tok_dev = np.abs(np.exp(log_rho) - 1)
    seq_dev = np.abs(np.exp(log_rho.mean(1)) - 1)
    print(
        f"sigma={sigma}: typical |rho-1| = {np.median(tok_dev):.4f}, typical |s-1| = {np.median(seq_dev):.5f} "
        f"(ratio {np.median(tok_dev) / np.median(seq_dev):.1f}, sqrt(n) = {np.sqrt(n_tok):.1f})"
    )
    for eps in (0.2, 3e-4):
        print(
            f"    eps={eps:<6}: share outside [1-eps, 1+eps]: tokens {np.mean(tok_dev > eps):6.1%}, "
            f"sequences {np.mean(seq_dev > eps):6.1%}"
        )

# %% [markdown]
# ### Graded: the GSPO ratio and objective
# Match TRL's `importance_sampling_level="sequence"`: the log-ratio is averaged over active tokens with
# the count clamped to at least 1 (`mask.sum(-1).clamp(min=1)`), so a response with no active token
# has $s_i = e^0 = 1$. `gspo_objective` may call your `gspo_sequence_ratio`; its tests then run it
# too, so a bug in the ratio costs marks in both cells (fix the ratio first).


# %% [solution] id=gspo_sequence_ratio
def gspo_sequence_ratio(new_logp: np.ndarray, old_logp: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """GSPO's length-normalised sequence ratio s_i (geometric mean of the active token ratios).

    Args:
        new_logp, old_logp: (G, T) per-token log-probabilities under the current and the old policy
            (padding may hold any finite value).
        mask: (G, T) 0/1 (bool, int or float); 1 marks an active token.

    Returns:
        float64 np.ndarray of shape (G,): exp( sum_t mask*(new - old) / max(1, sum_t mask) ).
        A row with no active token gives 1.0.
    """
    ### BEGIN SOLUTION
    new = np.asarray(new_logp, dtype=np.float64)
    old = np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    diff = np.where(m > 0, new - old, 0.0)
    return np.exp(diff.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0))
    ### END SOLUTION


# %% [tests] id=test_gspo_sequence_ratio points=2
_new = np.log(np.array([[1.2, 0.8, 1.05, 9.0]]))
_old = np.zeros((1, 4))
_out = gspo_sequence_ratio(_new, _old, np.array([[1, 1, 1, 0]]))
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_out = np.array(_out, dtype=np.float64)
assert _out.shape == (1,), f"one ratio per response: expected shape (G,) = (1,), got {_out.shape}"
np.testing.assert_allclose(_out, [(1.2 * 0.8 * 1.05) ** (1 / 3)], rtol=1e-12,
                           err_msg="s must be the GEOMETRIC mean of the 3 active token ratios (not the product, not the arithmetic mean; padding excluded)")


# %% [solution] id=gspo_objective
def gspo_objective(new_logp: np.ndarray, old_logp: np.ndarray, advantages: np.ndarray, mask: np.ndarray,
                   eps_low: float = 3e-4, eps_high: float = 4e-4) -> float:
    """GSPO's clipped sequence-level objective (to maximise; TRL's loss is its negative).

    Args:
        new_logp, old_logp, mask: as in gspo_sequence_ratio, shape (G, T).
        advantages: (G,) one advantage per response.
        eps_low, eps_high: the clip interval for s is [1 - eps_low, 1 + eps_high]. The defaults are the
            GSPO paper's values as quoted in TRL's docs; they are NOT TRL's GRPOConfig defaults (0.2).

    Returns:
        A Python float: (1/G) * sum_i c_i with c_i = min(s_i * A_i, clip(s_i, 1-eps_low, 1+eps_high) * A_i)
        for a response with at least one active token and c_i = 0 for a response with none (it still
        counts in G). This is TRL's importance_sampling_level="sequence" with loss_type="grpo".
    """
    ### BEGIN SOLUTION
    s = gspo_sequence_ratio(new_logp, old_logp, mask)
    A = np.asarray(advantages, dtype=np.float64)
    c = np.minimum(s * A, np.clip(s, 1.0 - eps_low, 1.0 + eps_high) * A)
    active = np.asarray(mask, dtype=np.float64).sum(axis=1) > 0
    return float(np.where(active, c, 0.0).mean())
    ### END SOLUTION


# %% [tests] id=test_gspo_objective points=3
# row 0: s = 1.1 over 2 tokens, A = +1; row 1: s = 0.9 over 3 tokens, A = -1
_new = np.array([[np.log(1.1), np.log(1.1), 0.0], [np.log(0.9)] * 3])
_old = np.zeros((2, 3))
_m = np.array([[1, 1, 0], [1, 1, 1]])
_v = gspo_objective(_new, _old, np.array([1.0, -1.0]), _m, eps_low=0.2, eps_high=0.2)
assert type(_v) is float, f"return a Python float, got {type(_v).__name__}"
assert math.isclose(_v, (1.1 - 0.9) / 2, rel_tol=1e-9), (
    f"with a wide clip nothing binds: expected 0.1, got {_v}"
)
_v = gspo_objective(_new, _old, np.array([1.0, -1.0]), _m)
assert math.isclose(_v, (1.0004 - 0.9997) / 2, rel_tol=1e-9), (
    f"default eps (3e-4, 4e-4): row 0 is capped at 1+4e-4, row 1 at 1-3e-4 -> expected 0.00035, got {_v}"
)

# %% [markdown]
# ## 9.3.5 A method name is not a full specification
#
# Working code mixes these axes freely: DAPO's token reduction without std scaling, Clip-Higher on top
# of Dr. GRPO, a sequence ratio with a token reduction. One acronym cannot describe such a run. A
# **minimum algorithm record** states:
#
# 1. the behaviour policy that generated the data (source, version, decoding settings);
# 2. completions per prompt $G$;
# 3. how reward components are combined;
# 4. reward centring and scaling (group/batch/none; std with $n$ or $n-1$; $\varepsilon$);
# 5. the ratio level (token or sequence);
# 6. the clip function ($\epsilon_{\text{low}}, \epsilon_{\text{high}}$, any dual clip);
# 7. token, response and device normalisation (the reduction, and over what batch its denominator counts);
# 8. rollout reuse (iterations per batch);
# 9. the KL estimator and coefficient;
# 10. truncation masks and stop reasons; any dynamic sampling or overlong shaping.
#
# ### Library defaults are a dated snapshot
# When this course was first written (2026-08-05) it read TRL 1.9.2's documentation:
# `loss_type="dapo"`, `scale_rewards="group"`, `importance_sampling_level="token"`, `beta=0.0`,
# `mask_truncated_completions=False` [9.3-10]. The course environment pins a different release;
# instead of trusting either list, the next cell reads the installed `GRPOConfig` itself.

# %%
DOCS_2026_08 = {"version": "1.9.2", "date": "2026-08-05", "loss_type": "dapo", "scale_rewards": "group",
                 "importance_sampling_level": "token", "beta": 0.0, "mask_truncated_completions": False}
FIELDS = ["loss_type", "scale_rewards", "importance_sampling_level", "beta", "epsilon", "epsilon_high",
          "mask_truncated_completions", "num_iterations"]

if GRADING:
    print("(skipped while grading: importing trl takes several seconds)")
else:
    import trl
    from trl import GRPOConfig

    print(
        f"GRPOConfig defaults read from the installed trl {trl.__version__} on {date.today().isoformat()}"
    )
    print(f"{'field':28s} {'trl ' + trl.__version__:>14s} {'docs: trl 1.9.2':>16s}")
    for name in FIELDS:
        now = GRPOConfig.__dataclass_fields__[name].default
        then = DOCS_2026_08.get(name, "(not listed)")
        flag = "" if name not in DOCS_2026_08 or now == then else "   <-- changed"
        print(f"{name:28s} {now!r:>14} {then!r:>16}{flag}")

# %% [markdown]
# Read on 2026-11-29 from TRL 1.16.0, the five defaults of the 1.9.2 list above are
# unchanged [9.3-11] (`"dapo"`, `"group"`, `"token"`, `0.0`, `False`). The others: `epsilon=0.2`,
# `epsilon_high=None` (which TRL turns into `epsilon`, i.e. symmetric clipping; DAPO's Clip-Higher is
# off unless you set it) and `num_iterations=1` (one update per rollout batch, so the ratio is 1 at
# the evaluation point unless the generation batch is split over several steps). "Unchanged here"
# is an observation about two releases, not a promise about the next: store the arguments a run
# actually used. Two details of 1.16 that the names hide [9.3-12]: `"group"` scaling uses the $n-1$ std plus
# $10^{-4}$, and `importance_sampling_level="sequence"` combined with `loss_type="dapo"` sums
# per-token copies of the sequence term, weighting responses by length (TRL logs a warning and
# recommends `loss_type="grpo"` for the GSPO paper's setup).

# %% [markdown]
# ## Assessment
# Six self-checks (not graded; the explanation appears after your first attempt), then two written
# answers that are graded by hand.

# %%
selfcheck.choice(
    "Group A has rewards (0, 1, 1, 1), group B has (0, 0.1, 0.1, 0.1). After dividing by each group's std "
    "(ignore eps), which is true?",
    ["A's advantages are ten times larger than B's",
     "A and B get identical advantages; under Dr. GRPO, A's would be ten times larger",
     "B's advantages are larger because its std is smaller",
     "Both groups are degenerate and get zero advantage"],
    1,
    "Centring and dividing by the std removes the scale: both become (-1.5, 0.5, 0.5, 0.5) with the n-1 std "
    "(-1.73, 0.58, 0.58, 0.58 with the population std). Dr. GRPO keeps r - mean: (-0.75, 0.25, ...) vs "
    "(-0.075, 0.025, ...).",
)

# %%
selfcheck.numeric(
    "One group, G = 2, response lengths 4 and 16. Under the per-response mean (original GRPO), what is the "
    "gradient weight of ONE token of the length-4 response?",
    0.125,
    "w = 1/(G |o_i|) = 1/(2*4) = 0.125; a token of the length-16 response gets 1/32, four times less. Under "
    "the token reduction both get 1/(4+16) = 0.05; under Dr. GRPO's constant with L = 16 both get 1/(2*16) = 0.03125.",
    tol=1e-3,
)

# %%
selfcheck.numeric(
    "Same group (lengths 4 and 16), DAPO's token-level reduction: what is the gradient weight of one token?",
    0.05,
    "The denominator is the total number of active tokens, 4 + 16 = 20, the same for every token: 1/20 = 0.05. "
    "The length-16 response therefore carries 16/20 = 80% of the group's weight.",
    tol=1e-3,
)

# %%
selfcheck.numeric(
    "DAPO overlong shaping with L_max = 4096 and L_cache = 512. What is R_length for a response of 3840 tokens?",
    -0.5,
    "The soft zone starts at 4096 - 512 = 3584. 3840 is inside it: (3584 - 3840)/512 = -256/512 = -0.5.",
    tol=1e-3,
)

# %%
selfcheck.numeric(
    "A response of three tokens has token ratios 1.2, 0.8 and 1.05. What is its GSPO sequence ratio s_i "
    "(three decimals)?",
    (1.2 * 0.8 * 1.05) ** (1 / 3),
    "s = (1.2*0.8*1.05)^(1/3) = 1.008^(1/3) = 1.00266, the geometric mean. The arithmetic mean (1.0167) and the "
    "product (1.008) are different numbers; for long responses the product drifts far from 1.",
    tol=5e-4,
)

# %%
selfcheck.numeric(
    "Dynamic sampling with G = 8 binary rewards on a prompt the policy solves with p = 0.9. On average, how many "
    "groups must be sampled for this prompt to keep one informative group?",
    1 / (1 - 0.9**8 - 0.1**8),
    "P(informative) = 1 - 0.9^8 - 0.1^8 = 0.5695, so the expected number of draws is 1/0.5695 = 1.756 groups "
    "(about 14 responses). For p = 0.99 it would be 1/(1 - 0.99^8) = 13 groups.",
    tol=1e-2,
)

# %% [markdown]
# ### Written answers

# %% [written] id=q_algorithm_record points=3
# **Question.** A colleague's report says only: "trained with DAPO, G = 16". Write the minimum
# algorithm record that would let someone reproduce the update (field: value, or field: "unknown,
# must ask"), and say which two missing fields would change the gradient the most if guessed wrong.
#
# ### BEGIN SOLUTION
# **Model answer.** Behaviour policy: which checkpoint generated the rollouts, sampling temperature,
# top-p/top-k (unknown). G = 16. Reward: the components (correctness, format, overlong shaping) and how
# they are combined (unknown; DAPO's paper adds the soft overlong penalty of 9.3.3 with some
# $L_{\max}, L_{\text{cache}}$). Advantage: group centring; std scaling yes/no, std with $n$ or $n-1$,
# $\varepsilon$ (unknown; DAPO keeps std scaling, a "DAPO" loss type in TRL does too by default, but a
# hybrid may not). Ratio level: token. Clip: $\epsilon_{\text{low}}, \epsilon_{\text{high}}$ (DAPO:
# 0.2/0.28, but TRL's defaults are symmetric 0.2). Reduction: token-level, and over what its
# denominator counts (local batch, all devices, accumulation window). Rollout reuse: iterations per
# batch / number of mini-batches. KL: estimator and coefficient (DAPO drops KL, $\beta=0$). Dynamic
# sampling: on/off, the rejection rule, the resulting rejection rate. Truncation: masked or penalised,
# the length limits, stop reasons logged.
# Most consequential if wrong: the clip bounds (Clip-Higher on or off changes which tokens still get
# gradient) and the reduction/advantage scaling (they set the per-token and per-prompt weights). Other
# defensible picks: dynamic sampling (changes the data the loss sees) or rollout reuse (decides
# whether the ratio/clip is active at all).
#
# **Rubric (3 points).** 1 pt: at least seven of the ten record fields, each marked known or unknown,
# without assuming the acronym fixes them. 1 pt: states DAPO-specific values or options correctly
# (token reduction, decoupled clip, dynamic sampling, overlong shaping or masking, no KL). 1 pt: names
# two fields with a correct reason tied to gradient weight or data distribution.
# ### END SOLUTION

# %% [written] id=q_dynamic_sampling_distribution points=3
# **Question.** Dynamic sampling discards only groups whose gradient would be zero anyway under
# group-relative advantages. Explain why it still changes the training distribution, and name one
# quantity you would log to notice the effect during a run.
#
# ### BEGIN SOLUTION
# **Model answer.** A discarded all-equal group contributes no policy gradient, but discarding it and
# *refilling* the batch changes which prompts fill the fixed batch: each prompt now appears in
# proportion to $P(p) = 1 - p^G - (1-p)^G$ rather than its frequency in the data. Medium-difficulty
# prompts are over-represented, very easy and very hard prompts nearly vanish, and as the policy
# improves the set of surviving prompts drifts. With a token-level reduction the normaliser (active
# tokens in the batch) and the Adam statistics also change, because the batch composition changes even
# though each kept group's gradient is the same. (The premise is also only half true: an all-equal
# group kept in the batch has zero policy gradient but still counts in the denominators, and with
# $\beta>0$ it carries the KL gradient.) Generation cost rises by a factor $1/P$. Log the
# rejection rate split by reason (all-correct vs all-wrong), the number of groups sampled per batch,
# and the distribution of per-prompt success rates among kept vs all sampled prompts.
#
# **Rubric (3 points).** 1 pt: the batch is refilled, so prompts are reweighted by their probability of
# being informative (not "the gradient of rejected groups was nonzero"). 1 pt: says which prompts are
# under/over-represented or that the filtered distribution drifts as the policy changes (or the cost
# 1/P). 1 pt: a concrete logged quantity (rejection rate by reason, groups sampled per step, success-rate
# histogram of kept prompts).
# ### END SOLUTION

# %% [markdown]
# ## Summary
# - Dividing by the group std equalises prompts' advantage scale; Dr. GRPO's $r-\bar r$ keeps reward
#   units and so needs calibrated rewards.
# - The reduction sets per-token weights: $1/(G|o_i|)$, $1/(GL)$ or $1/\sum_j|o_j|$.
# - DAPO = Clip-Higher + dynamic sampling + token reduction + overlong shaping, four separate switches.
# - GSPO's $s_i$ is a geometric mean; its clip range lives on a much finer scale than a token ratio's.
# - Record the arguments a run used; a name and a library's defaults change between releases.
