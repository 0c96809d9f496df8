# %% [markdown]
# # 9.2 Canonical GRPO
#
# Lesson 9.1 fixed where the reward comes from. This lesson fixes what GRPO does with it: which
# policy sampled the data, how a group of rewards becomes one advantage per response, how the
# clipped objective turns advantages into a gradient, and how all of this relates to REINFORCE,
# RLOO and PPO.
#
# **After this lesson you can**
# 1. name the roles of the old, current and reference policies, and say which distribution the
#    ratio denominator must describe;
# 2. derive the group advantage, including the one-success value $\sqrt{G-1}$, and state every
#    convention it hides (std with $G$ or $G-1$, where $\varepsilon$ enters, degenerate groups);
# 3. read the clipped objective branch by branch for each advantage sign, and say what clipping
#    does *not* do;
# 4. explain why the first update has ratio 1 but a nonzero gradient;
# 5. place GRPO next to REINFORCE, RLOO and PPO.
#
# Every derivation below is followed by a numerical check. The graded functions are at the end
# (pure NumPy); the lecture cells never call them, so they run before you have written them.

# %%
import itertools
import math

import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers import selfcheck
from helpers.figures import quote

np.set_printoptions(precision=4, suppress=True)
torch.set_num_threads(1)


def log_softmax(z: np.ndarray) -> np.ndarray:
    """Log-softmax over the last axis of a float array; -inf entries stay -inf (probability 0)."""
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


# %% [markdown]
# ## 9.2.1 Three policies and one data source
#
# For a prompt $q$ the **old policy** $\pi_{\theta_{\text{old}}}$ samples a group of $G$ responses,
# $\{o_i\}_{i=1}^G \sim \pi_{\theta_{\text{old}}}(\cdot\mid q)$. Three policies then play three
# different roles:
#
# | policy | role | changes when |
# |---|---|---|
# | old $\pi_{\theta_{\text{old}}}$ | produced the stored tokens; denominator of every ratio | frozen for one rollout batch, replaced when a new batch is sampled |
# | current $\pi_\theta$ | the model we differentiate | every optimizer step |
# | reference $\pi_{\text{ref}}$ | optional KL anchor | frozen, replaced on an explicit schedule, or absent |
#
# Old and reference may start from the same weights; they are still different objects (one is
# refreshed every batch, the other is not). For token $t$ of response $i$ the importance ratio is
#
# $$\rho_{i,t}(\theta)=\frac{\pi_\theta(o_{i,t}\mid q,o_{i,<t})}{\pi_{\theta_{\text{old}}}(o_{i,t}\mid q,o_{i,<t})}.$$
#
# **The denominator is the distribution the token was actually drawn from**: the softmax *after*
# temperature, top-$k$/top-$p$ truncation and any allowed-token mask. The raw softmax of the same
# weights is a different distribution. So the rollout record stores the behaviour log-probs at
# sampling time, with the decoding parameters and the generator version, and the trainer computes
# $\pi_\theta$ with the same processing.
#
# Demo: one next-token distribution, sampled at temperature 0.7 with top-$k$=3.


# %%
def behaviour_logprobs(logits, temperature=1.0, top_k=None, top_p=None, allowed=None):
    """Log-probs (V,) of the distribution a sampler really draws from.

    Applied in this order: allowed-token mask, division by temperature, top-k, top-p. Removed
    tokens get -inf (probability 0). The order is part of the behaviour policy, so it belongs
    in the rollout record too.
    """
    z = np.asarray(logits, dtype=np.float64).copy()
    if allowed is not None:
        z = np.where(allowed, z, -np.inf)
    z = z / temperature
    if top_k is not None:
        kth = np.sort(z)[-top_k]
        z = np.where(z >= kth, z, -np.inf)
    if top_p is not None:
        p = np.exp(log_softmax(z))
        order = np.argsort(-p)
        before = np.cumsum(p[order]) - p[order]  # mass of the tokens ranked above each token
        keep = np.zeros(z.shape, dtype=bool)
        keep[order[before < top_p]] = True
        z = np.where(keep, z, -np.inf)
    return log_softmax(z)


logits = np.array([2.0, 1.4, 0.9, -0.3, -1.2])
raw = log_softmax(logits)
beh = behaviour_logprobs(logits, temperature=0.7, top_k=3)
print("token  p_raw   p_behaviour  'ratio' raw/behaviour at IDENTICAL weights")
for v in range(3):
    print(f"{v:>5}  {np.exp(raw[v]):.4f}  {np.exp(beh[v]):.4f}       {np.exp(raw[v] - beh[v]):.4f}")
print("tokens 3, 4 have behaviour probability", np.exp(beh[3:]), "- they are never sampled")
raw_ratios = np.exp(raw[:3] - beh[:3])  # raw softmax / behaviour on the tokens that can be drawn
assert raw_ratios.max() > 1.2  # outside [1 - 0.2, 1 + 0.2] before any update
print("ratios at identical weights range from", quote("9.2:raw_ratio_min", raw_ratios.min(), ".2f"),
      "to", quote("9.2:raw_ratio_max", raw_ratios.max(), ".2f"))

# %% [markdown]
# With identical weights, a trainer that scores the current policy with the raw softmax but
# divides by the stored behaviour log-prob sees ratios from 0.81<!--fig:9.2:raw_ratio_min--> to
# 1.29<!--fig:9.2:raw_ratio_max--> before any update: with
# $\epsilon=0.2$ clipping would already fire, on pure bookkeeping [9.2-13]. TRL 1.16 scores tokens
# with the logits divided by its `temperature`, but applies no top-$k$/top-$p$ there: those settings
# reach only the generator. With `top_k` or `top_p` set, the old log-probs its ratio divides by are
# those of the tempered full softmax, not of the distribution the tokens were drawn from; at a given
# position every kept token's two log-probs differ by the same amount, the log of the tempered mass
# that the truncation keeps [9.2-13]. On-policy the ratio itself stays 1 (numerator and denominator
# are both the tempered full softmax), so nothing flags this: the gradient is off-policy without a
# correction. With vLLM generation TRL can reweight the loss by the sampler's own log-probs
# (`vllm_importance_sampling_correction`, on by default), which is where the sampler's processing
# can enter; the transformers generation path has no such weight. Numerical check that the sampler really follows the processed distribution, not
# the raw one, and of that constant offset:

# %%
rng = np.random.default_rng(0)
draws = rng.choice(5, size=200_000, p=np.exp(beh))
freq = np.bincount(draws, minlength=5) / draws.size
print("empirical  ", freq)
print("behaviour  ", np.exp(beh))
print("raw softmax", np.exp(raw))
assert np.allclose(freq, np.exp(beh), atol=5e-3) and not np.allclose(freq, np.exp(raw), atol=5e-3)
top_p_demo = behaviour_logprobs(logits, top_p=0.8)
print("top-p=0.8 keeps tokens", np.flatnonzero(np.isfinite(top_p_demo)))
tempered = log_softmax(logits / 0.7)  # what a scorer that applies the temperature only computes
kept_mass = np.exp(tempered[:3]).sum()  # tempered mass of the top-3 tokens
print("tempered - behaviour on the kept tokens:", tempered[:3] - beh[:3], " log(kept mass):", np.log(kept_mass))
assert np.allclose(tempered[:3] - beh[:3], np.log(kept_mass)) and kept_mass < 1

# %% [markdown]
# ## 9.2.2 Group baseline and advantage estimate
#
# ### The policy gradient in one line
# Sampling is not differentiable, yet the expected reward is. For a categorical policy,
#
# $$\nabla_\theta J=\nabla_\theta\sum_a \pi_\theta(a)\,r(a)=\sum_a \pi_\theta(a)\,r(a)\,\nabla_\theta\log\pi_\theta(a)=\mathbb E_{a\sim\pi_\theta}\big[r(a)\,\nabla_\theta\log\pi_\theta(a)\big],$$
#
# using $\nabla\pi=\pi\,\nabla\log\pi$ (the REINFORCE or score-function identity [9.2-9]). Read it right to
# left: the direction that makes the sampled $a$ more likely, scaled by its reward. Because
# $\mathbb E[\nabla\log\pi_\theta(a)]=\sum_a\nabla\pi_\theta(a)=\nabla 1=0$, subtracting any baseline
# $b$ that does not depend on the sampled $a$ leaves the expectation unchanged and can reduce the
# variance. For softmax logits $\theta$, $\nabla_\theta\log\pi_\theta(a)=e_a-\pi_\theta$.
#
# Check: exact gradient by autograd vs the exact score-function sum vs Monte-Carlo estimates.

# %%
theta = torch.tensor([0.5, -0.2, 0.1, 0.9, -1.0], dtype=torch.float64, requires_grad=True)
r_act = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0], dtype=torch.float64)  # reward of each action
(torch.softmax(theta, 0) * r_act).sum().backward()
grad_exact = theta.grad.numpy()

pi = torch.softmax(theta, 0).detach().numpy()
r_np = r_act.numpy()
score = np.eye(5) - pi  # row a = grad of log pi(a) w.r.t. the logits
grad_sf = (pi * r_np) @ score  # sum_a pi(a) r(a) grad log pi(a)
print("autograd      ", grad_exact)
print("score function", grad_sf)
print("E[grad log pi]", pi @ score, "(zero: a constant baseline adds nothing in expectation)")
assert np.allclose(grad_exact, grad_sf) and np.allclose(pi @ score, 0)

# %%
Ns, reps, b = [10, 100, 1_000, 10_000], 300, float(pi @ r_np)  # b: a constant baseline
err_plain, err_base = [], []
for N in Ns:
    counts = rng.multinomial(N, pi, size=reps)  # (reps, 5): how often each action was drawn
    est_plain = (counts * r_np) @ score / N  # mean of r(a) grad log pi(a)
    est_base = (counts * (r_np - b)) @ score / N  # mean of (r(a) - b) grad log pi(a)
    err_plain.append(np.sqrt(((est_plain - grad_exact) ** 2).sum(1).mean()))
    err_base.append(np.sqrt(((est_base - grad_exact) ** 2).sum(1).mean()))
plt.figure(figsize=(5, 3.2))
plt.loglog(Ns, err_plain, "o-", label="r(a) grad log pi")
plt.loglog(Ns, err_base, "s-", label="(r(a) - b) grad log pi")
plt.xlabel("samples N")
plt.ylabel("RMS error vs exact gradient")
plt.title("Score-function estimates: unbiased, error ~ 1/sqrt(N)")
plt.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ### The group as the baseline
# GRPO estimates the baseline from the whole group of responses to the *same* prompt, the scored
# response's own reward $r_i$ included (9.2.5 shows what that inclusion costs). For rewards
# $r_1,\dots,r_G$ of one group [9.2-2],
#
# $$\bar r=\frac1G\sum_{i=1}^G r_i,\qquad s_r=\sqrt{\frac1G\sum_{i=1}^G(r_i-\bar r)^2},\qquad \widehat A_i=\frac{r_i-\bar r}{s_r+\varepsilon}.$$
#
# **Conventions used in this course:** $s_r$ is the *population* std (divide by $G$, NumPy
# `ddof=0`); $\varepsilon$ is added to the std, outside the square root (default $10^{-6}$); a group
# whose rewards are all equal gets $\widehat A_i=0$ exactly. TRL's `GRPOTrainer` (1.16) divides by
# $G-1$ and uses $\varepsilon=10^{-4}$ [9.2-4]; see the comparison below.
#
# The same $\widehat A_i$ is given to every token of response $o_i$. That removes the learned value
# model, but not the credit-assignment problem: every token of a successful response gets the
# same positive sign. And "GRPO has no baseline" is false: $\bar r$ *is* the baseline. What GRPO
# drops is the learned critic that predicts values.
#
# **One success among $G$ binary rewards.** $\bar r=1/G$ and $s_r^2=\frac1G(1-\frac1G)$, so
# $s_r=\sqrt{G-1}/G$. Ignoring $\varepsilon$,
#
# $$\widehat A_{\text{success}}=\frac{1-1/G}{\sqrt{G-1}/G}=\sqrt{G-1},\qquad \widehat A_{\text{failure}}=\frac{-1/G}{\sqrt{G-1}/G}=-\frac1{\sqrt{G-1}}\quad\text{[9.2-6]}.$$
#
# More generally with $k$ successes ($p=k/G$, $s_r=\sqrt{p(1-p)}$):
# $\widehat A_{\text{success}}=\sqrt{(G-k)/k}$ and $\widehat A_{\text{failure}}=-\sqrt{k/(G-k)}$.
# The advantages always sum to zero ($\sum_i(r_i-\bar r)=0$), but their scale depends on how many
# succeeded. Numerical check against the formula with `np.std(ddof=0)`:

# %%
for G in range(2, 65):
    r = np.zeros(G)
    r[0] = 1.0
    A = (r - r.mean()) / r.std(ddof=0)  # eps ignored, as in the derivation
    assert math.isclose(A[0], math.sqrt(G - 1), rel_tol=1e-12)
    assert np.allclose(A[1:], -1 / math.sqrt(G - 1), rtol=1e-12)
    assert abs(A.sum()) < 1e-9  # zero-sum
    for k in range(1, G):
        rk = np.r_[np.ones(k), np.zeros(G - k)]
        Ak = (rk - rk.mean()) / rk.std(ddof=0)
        assert np.allclose(Ak[[0, -1]], [math.sqrt((G - k) / k), -math.sqrt(k / (G - k))])
print("sqrt(G-1), -1/sqrt(G-1), the k-success formula and zero-sum hold for G = 2..64")
r8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])
print("G=8, one success:", (r8 - r8.mean()) / r8.std(ddof=0), " sqrt(7) =", math.sqrt(7))

# %% [markdown]
# **The conventions change the numbers.** With TRL's sample std ($G-1$) every non-degenerate
# advantage shrinks by $\sqrt{(G-1)/G}$; the one-success value becomes $(G-1)/\sqrt G$. And
# $\varepsilon$ is not only "numerical": when the reward spread is comparable to $\varepsilon$, it
# decides the scale.


# %%
def adv_demo(r, ddof, eps):
    """Inline advantage for this demo only (no degenerate-group guard)."""
    r = np.asarray(r, dtype=np.float64)
    return (r - r.mean()) / (r.std(ddof=ddof) + eps)


print("one success, G=8:  ours (ddof=0, eps=1e-6) ", adv_demo(r8, 0, 1e-6)[0])
print(
    "                   TRL  (ddof=1, eps=1e-4) ",
    adv_demo(r8, 1, 1e-4)[0],
    " (G-1)/sqrt(G) =",
    7 / math.sqrt(8),
)
tiny = [0.5, 0.5001]  # a partial-credit reward that barely differs
print("spread 1e-4, G=2:  ours", adv_demo(tiny, 0, 1e-6), " TRL", adv_demo(tiny, 1, 1e-4))
ten = np.full(10, 0.3)  # a degenerate group
print(
    "ten rewards of 0.3: std =",
    ten.std(),
    "-> naive advantages with eps=0:",
    adv_demo(ten, 0, 0.0)[:3],
)
naive = adv_demo(ten, 0, 0.0)
assert 0 < ten.std() < 1e-15 and np.all(np.abs(naive) == 1.0)  # rounding-sized std, |advantage| 1
print("std nonzero and below", quote("9.2:ten_std_bound", 1e-15, ".0e"), "| naive |advantage|",
      quote("9.2:ten_naive_adv", np.abs(naive).max(), ".1f"))

# %% [markdown]
# The last line is the trap behind the degenerate-group rule: the float mean of ten copies of 0.3
# is not exactly 0.3, so the std is not 0 but a rounding residue (below 1e-15<!--fig:9.2:ten_std_bound-->;
# how small depends on the float arithmetic), and the naive formula turns a group with *no*
# information into advantages of magnitude 1.0<!--fig:9.2:ten_naive_adv-->. Detect "all rewards equal" explicitly and
# return zeros. The plot shows the scale as a function of the number of successes in a group of 8.

# %%
G = 8
k = np.arange(1, G)
a_succ, a_fail = np.sqrt((G - k) / k), -np.sqrt(k / (G - k))
shrink = math.sqrt((G - 1) / G)  # TRL's ddof=1 factor
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(k, a_succ, "o-", color="tab:green", label="success, std with G")
ax.plot(k, a_fail, "o-", color="tab:red", label="failure, std with G")
ax.plot(
    k, a_succ * shrink, "x--", color="tab:green", alpha=0.6, label="success, std with G-1 (TRL)"
)
ax.plot(k, a_fail * shrink, "x--", color="tab:red", alpha=0.6, label="failure, std with G-1 (TRL)")
ax.plot([0, G], [0, 0], "ks", label="degenerate group: all zeros")
ax.axhline(0, color="gray", lw=0.5)
ax.set_xlabel("number of successes k in a group of G = 8")
ax.set_ylabel("advantage")
ax.set_title("Group advantage scale depends on group composition")
ax.legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 9.2.3 The clipped objective
#
# The DeepSeekMath presentation of GRPO uses token-level ratios and averages within each response
# before averaging over the group [9.2-1]:
#
# $$J_{\text{GRPO}}(\theta)=\mathbb E\left[\frac1G\sum_{i=1}^G\frac1{|o_i|}\sum_{t=1}^{|o_i|}\Big(\min\big[\rho_{i,t}\widehat A_i,\ \operatorname{clip}(\rho_{i,t},1-\epsilon,1+\epsilon)\,\widehat A_i\big]-\beta K_{i,t}\Big)\right].$$
#
# $J$ is maximised; the training loss is $-J$. $\beta=0$ drops the last term. The reduction here is
# "mean over the response's own tokens, then mean over the group"; other denominators exist and
# change who gets gradient (lesson 9.3).
#
# **$K_{i,t}$ is an estimate, not the KL itself.** The exact KL at one position,
# $\mathrm{KL}_t=\sum_v\pi_\theta(v)\log\frac{\pi_\theta(v)}{\pi_{\text{ref}}(v)}$, needs both full
# next-token distributions. Trainers only look at the sampled token $o_{i,t}$. With
# $d=\log\pi_{\text{ref}}(o_{i,t})-\log\pi_\theta(o_{i,t})$, two common per-token values are
#
# | name | per-token value | on tokens drawn from $\pi_\theta$ |
# |---|---|---|
# | sampled log-ratio ($k_1$) | $-d=\log\frac{\pi_\theta}{\pi_{\text{ref}}}$ | unbiased for $\mathrm{KL}_t$, but often negative on a single token, high variance |
# | $k_3$ (DeepSeekMath's choice) | $e^{d}-d-1$ | unbiased for $\mathrm{KL}_t$ as well, and never negative |
#
# Both statements are about the **value** when the token comes from $\pi_\theta$ [9.2-14]. After the
# first update on a reused batch the tokens come from $\pi_{\text{old}}$ instead; and what the
# *gradient* of each estimator pulls towards is a separate contract, taken apart in lesson 9.5.
# Check on one position with $V=6$:

# %%
rng_kl = np.random.default_rng(5)
lp_theta = log_softmax(rng_kl.normal(size=6))  # current policy at one position
lp_ref = log_softmax(rng_kl.normal(size=6))  # reference policy at the same position
kl_exact = float(np.exp(lp_theta) @ (lp_theta - lp_ref))  # sum_v pi_theta log(pi_theta / pi_ref)
x = rng_kl.choice(6, size=400_000, p=np.exp(lp_theta))  # tokens drawn from pi_theta
d = lp_ref[x] - lp_theta[x]
k1, k3 = -d, np.exp(d) - d - 1
print(f"exact KL {kl_exact:.4f} | mean k1 {k1.mean():.4f} (std {k1.std():.3f}, "
      f"{quote('9.2:k1_negative_share', np.mean(k1 < 0), '.0%')} "
      f"of tokens negative) | mean k3 {k3.mean():.4f} (std {k3.std():.3f}, min {k3.min():.4f})")
se1, se3 = k1.std() / math.sqrt(x.size), k3.std() / math.sqrt(x.size)
assert abs(k1.mean() - kl_exact) < 4 * se1 and abs(k3.mean() - kl_exact) < 4 * se3
assert k3.min() >= 0 and np.mean(k1 < 0) > 0 and k1.std() > k3.std()  # k1: negative values, larger spread
# exact expectations over the 6 tokens (no sampling): both equal the exact KL
p_theta = np.exp(lp_theta)
assert math.isclose(p_theta @ (lp_theta - lp_ref), kl_exact)
assert math.isclose(p_theta @ (np.exp(lp_ref - lp_theta) - (lp_ref - lp_theta) - 1), kl_exact)

# %% [markdown]
# Since $\min(\rho A,\operatorname{clip}(\rho)A)=A\cdot\min(\rho,\operatorname{clip}(\rho))$ for $A>0$
# and $A\cdot\max(\rho,\operatorname{clip}(\rho))$ for $A<0$, each sign has one flat side:
#
# | | $\rho<1-\epsilon$ | $1-\epsilon\le\rho\le1+\epsilon$ | $\rho>1+\epsilon$ |
# |---|---|---|---|
# | $A>0$ | $\rho A$ (gradient $A$: pull back up) | $\rho A$ | $(1+\epsilon)A$, **flat** |
# | $A<0$ | $(1-\epsilon)A$, **flat** | $\rho A$ | $\rho A$ (gradient $A$: push back down) |
#
# So with $A>0$ the upper clip stops the incentive to raise a token's probability further once
# $\rho>1+\epsilon$; with $A<0$ the lower clip stops the incentive to lower it once
# $\rho<1-\epsilon$. In the other direction the min keeps the unclipped term: the objective is a
# pessimistic version of $\rho A$.
#
# **What clipping does not do.** It does not project the policy into a trust region, does not force
# any $\rho$ into $[1-\epsilon,1+\epsilon]$, and does not bound the KL to the old policy. It only
# zeroes the gradient of tokens that already moved past the boundary in the direction their
# advantage favours. Tokens share parameters, so other tokens' gradients still move them, and one
# large step can overshoot (numbers in 9.2.4).
#
# **"GRPO" is not a full specification.** DeepSeekMath uses token-level ratios; the DeepSeek-R1
# report writes a compact sequence-level expression [9.2-3]; libraries offer several ratio levels and
# reductions. When you report a run, name at least the ratio unit, the reduction denominator, the
# number of iterations per rollout batch, how truncated responses are handled, and the KL contract.

# %%
eps = 0.2
rho = np.linspace(0.0, 2.5, 501)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=False)
for ax, A in zip(axes, [1.0, -1.0]):
    obj = np.minimum(rho * A, np.clip(rho, 1 - eps, 1 + eps) * A)
    ax.plot(rho, rho * A, "--", color="gray", label=r"unclipped $\rho A$")
    ax.plot(rho, obj, color="tab:blue", lw=2, label=r"$\min(\rho A, \mathrm{clip}(\rho)A)$")
    flat = (1 + eps, 2.5) if A > 0 else (0.0, 1 - eps)
    ax.axvspan(*flat, color="tab:orange", alpha=0.2, label="flat: zero gradient")
    ax.axvline(1, color="k", lw=0.5)
    ax.set_title(f"A = {A:+.0f}, eps = {eps}")
    ax.set_xlabel(r"ratio $\rho$")
    ax.legend(fontsize=7)
axes[0].set_ylabel("per-token objective (maximised)")
plt.tight_layout()
plt.show()

# %% [markdown]
# Numerical check of the table: autograd derivative $\partial/\partial\rho$ of the clipped term at
# points inside each region (away from the kinks).

# %%
expected = {  # (A, rho) -> d objective / d rho, from the table
    (1.0, 0.5): 1.0,
    (1.0, 1.1): 1.0,
    (1.0, 1.5): 0.0,
    (-1.0, 0.5): 0.0,
    (-1.0, 0.9): -1.0,
    (-1.0, 1.5): -1.0,
}
for (A, rho0), want in expected.items():
    r_t = torch.tensor(rho0, dtype=torch.float64, requires_grad=True)
    torch.minimum(r_t * A, r_t.clamp(1 - eps, 1 + eps) * A).backward()
    print(f"A={A:+.0f} rho={rho0}: d/drho = {r_t.grad.item():+.1f}  (table: {want:+.1f})")
    assert r_t.grad.item() == want

# %% [markdown]
# ## 9.2.4 Why the first update has ratio 1 (and still a gradient)
#
# If the rollouts were sampled by the current weights and we take the first gradient step before
# any change, then $\pi_\theta=\pi_{\theta_{\text{old}}}$ at the evaluation point and every
# $\rho_{i,t}=1$. Clipping is inactive there, but the gradient is not zero: with
# $\rho=\exp(\log\pi_\theta-\log\pi_{\text{old}})$ and $\log\pi_{\text{old}}$ a constant,
# $\nabla_\theta\rho=\rho\,\nabla_\theta\log\pi_\theta=\nabla_\theta\log\pi_\theta$ at $\rho=1$. So
#
# $$\nabla_\theta J\big|_{\theta=\theta_{\text{old}}}=\frac1G\sum_i\frac{\widehat A_i}{|o_i|}\sum_t\nabla_\theta\log\pi_\theta(o_{i,t}\mid\cdot),$$
#
# the REINFORCE gradient with the group baseline [9.2-7]. This is why a trainer that takes one step
# per batch can set the old log-probs to the detached current ones. TRL 1.16 does exactly this when
# a batch is not reused, with one exception: when it generates with vLLM (and its default
# `vllm_importance_sampling_correction=True`) it always recomputes the old log-probs with the
# training model, because vLLM's sampling probabilities can differ from the trainer's [9.2-5]. Check on a toy policy: a separate softmax over $V=4$ tokens at each of
# $T=6$ positions (no context, enough for the ratio machinery), $G=8$ responses of different
# lengths, reward 1 when a response contains token 0 at least twice.

# %%
G, T, V = 8, 6, 4
gen = torch.Generator().manual_seed(3)
theta_old = 0.5 * torch.randn(T, V, generator=gen, dtype=torch.float64)
probs_old = torch.softmax(theta_old, -1)  # (T, V)
tokens = torch.stack(
    [torch.multinomial(probs_old[t], G, replacement=True, generator=gen) for t in range(T)], 1
)  # (G, T)
lengths = torch.randint(3, T + 1, (G,), generator=gen)  # (G,)
mask = (torch.arange(T)[None, :] < lengths[:, None]).double()  # (G, T) 1 = completion token
rewards = (((tokens == 0).double() * mask).sum(1) >= 2).double()  # (G,)
adv = (rewards - rewards.mean()) / (rewards.std(unbiased=False) + 1e-6)  # population std
pos = torch.arange(T)[None, :]
old_logp = torch.log_softmax(theta_old, -1)[pos, tokens]  # (G, T) stored behaviour log-probs
print("lengths", lengths.tolist(), "\nrewards", rewards.tolist(), "\nadvantages", adv.numpy())


def grpo_objective(theta, eps=0.2):
    """DeepSeekMath reduction of the clipped surrogate; returns (J to maximise, ratios (G, T))."""
    logp = torch.log_softmax(theta, -1)[pos, tokens]  # (G, T)
    ratio = torch.exp((logp - old_logp) * mask)  # (G, T), exactly 1 on padding
    a = adv[:, None]
    surr = torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a) * mask
    return (surr.sum(1) / mask.sum(1)).mean(), ratio


# %%
theta = theta_old.clone().requires_grad_(True)
J, ratio = grpo_objective(theta)
J.backward()
g_auto = theta.grad.clone()

pi_old = probs_old.numpy()
g_reinforce = np.zeros((T, V))  # (1/G) sum_i A_i/|o_i| sum_t (e_{o_it} - pi_t)
for i in range(G):
    for t in range(int(lengths[i])):
        g_reinforce[t] += (
            adv[i].item() / lengths[i].item() / G * (np.eye(V)[tokens[i, t]] - pi_old[t])
        )
print("all ratios == 1:", bool((ratio == 1).all()), "| objective value J =", round(J.item(), 12))
print(
    "|grad| =",
    g_auto.norm().item(),
    "| max |autograd - REINFORCE| =",
    np.abs(g_auto.numpy() - g_reinforce).max(),
)
assert (
    bool((ratio == 1).all()) and g_auto.norm() > 1e-3 and np.allclose(g_auto.numpy(), g_reinforce)
)

# %% [markdown]
# The objective's *value* at the first step is $\frac1G\sum_i\widehat A_i=0$ (zero-sum
# advantages), yet its gradient is the nonzero REINFORCE gradient. Ratios start to matter only
# when the same batch is used again: several optimizer iterations on one rollout batch, mini-batches
# taken after an earlier update, or a generator that lags the trainer. Below: 6 gradient-ascent
# iterations on the *same* batch, then how far one first step moves the policy as a function of
# the learning rate and of $\epsilon$.


# %%
def kl_to_old(theta):
    """Mean over positions of the exact categorical KL(pi_theta || pi_old)."""
    lp, lq = torch.log_softmax(theta, -1), torch.log_softmax(theta_old, -1)
    return (lp.exp() * (lp - lq)).sum(-1).mean().item()


active = mask.bool()
theta = theta_old.clone().requires_grad_(True)
seen = []
for it in range(6):
    J, ratio = grpo_objective(theta)
    rho_act = ratio.detach()[active]
    a_act = adv[:, None].expand(G, T)[active]
    binding = ((a_act > 0) & (rho_act > 1.2)) | ((a_act < 0) & (rho_act < 0.8))
    seen.append((rho_act.numpy(), a_act.numpy()))
    print(
        f"iter {it}: ratio range [{rho_act.min():.3f}, {rho_act.max():.3f}]  clip binds on "
        f"{binding.double().mean():.0%} of tokens  KL to old {kl_to_old(theta.detach()):.4f}"
    )
    theta.grad = None
    J.backward()
    with torch.no_grad():
        theta += 6.0 * theta.grad  # plain gradient ascent, lr = 6
# One first step from theta_old: all ratios are 1, clipping is inactive, so the step is lr * gradient.
rr_all = np.concatenate([rr for rr, _ in seen])
assert rr_all.min() < 0.8 and rr_all.max() > 1.2  # the ratios leave [1 - eps, 1 + eps] on both sides
for lr, spec in [(1.0, ".4f"), (10.0, ".3f"), (100.0, ".2f")]:
    kl_lr = quote(f"9.2:first_step_kl_lr{lr:.0f}", kl_to_old(theta_old + lr * g_auto), spec)
    print(f"one step, lr={lr:>5}: KL to old = {kl_lr}")
first_step_kl = {}
for eps_try in [0.05, 0.2, 1.0]:  # the clip range: no effect on the first step
    th_try = theta_old.clone().requires_grad_(True)
    grpo_objective(th_try, eps=eps_try)[0].backward()
    first_step_kl[eps_try] = kl_to_old(theta_old + 10.0 * th_try.grad)
print("lr = 10, KL after the first step for eps = 0.05 / 0.2 / 1.0:", first_step_kl)
assert len(set(first_step_kl.values())) == 1  # identical: eps plays no role at ratio 1
# the step is lr * gradient: halving the gradient (advantages / 2) and doubling lr is the same step
adv_full = adv.clone()
adv = adv_full / 2
th_half = theta_old.clone().requires_grad_(True)
grpo_objective(th_half)[0].backward()
adv = adv_full
assert torch.allclose(20.0 * th_half.grad, 10.0 * g_auto)

# %%
fig, ax = plt.subplots(figsize=(6, 3.2))
for it, (rr, aa) in enumerate(seen):
    jitter = it + np.linspace(-0.15, 0.15, rr.size)
    ax.scatter(
        jitter[aa > 0], rr[aa > 0], s=12, color="tab:green", label="A > 0" if it == 0 else None
    )
    ax.scatter(
        jitter[aa < 0], rr[aa < 0], s=12, color="tab:red", label="A < 0" if it == 0 else None
    )
ax.axhspan(0.8, 1.2, color="tab:blue", alpha=0.15, label="[1-eps, 1+eps]")
ax.set_xlabel("iteration on the same rollout batch")
ax.set_ylabel("token ratio")
ax.set_title("Reuse makes ratios move; clipping does not keep them inside")
ax.legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# Ratios leave the band on both sides. Some red tokens even sit *above* 1.2: their probability went
# up despite $A<0$, because they share parameters with other responses (the same token at the same
# position in the successful response) and mass removed from one token flows to the others. For
# those tokens the min keeps the unclipped branch, so they still receive a corrective gradient, yet
# they stay outside: clipping is not a projection. And the one-step lines show that at the first
# update the step, and the KL it causes, is the learning rate times the gradient (the advantages'
# scale enters through the gradient); $\epsilon$ plays no role at all there [9.2-8].
#
# **Regimes** (log `num_iterations`, rollout age, generator checkpoint and the ratio distribution;
# "we used GRPO" says none of this):
# - fresh responses, one update per batch: effectively on-policy, $\rho=1$, clipping inactive;
# - several iterations or mini-batch steps over one rollout batch: near-on-policy with bounded
#   reuse; ratios drift from 1 and clipping starts to bind;
# - large asynchronous lag or a long-lived replay buffer: off-policy; needs its own analysis
#   (ratios, their variance, maybe truncation), not just "GRPO with clipping".

# %% [markdown]
# ## 9.2.5 REINFORCE, RLOO and PPO
#
# Without clipping, KL or reuse, the GRPO update with the mean baseline is a REINFORCE-like
# estimator, $\widehat g=\frac1G\sum_i\widehat A_i\nabla_\theta\log\pi_\theta(o_i\mid q)$.
#
# **The common mean is not independent of the response it scores.** $\bar r$ contains $r_i$
# itself. With $G$ independent draws and no std division,
#
# $$\mathbb E\big[(r_i-\bar r)\nabla\log\pi(o_i)\big]=\Big(1-\tfrac1G\Big)\mathbb E\big[r_i\nabla\log\pi(o_i)\big]-\tfrac1G\sum_{j\ne i}\mathbb E[r_j]\,\underbrace{\mathbb E[\nabla\log\pi(o_i)]}_{0}=\tfrac{G-1}{G}\,\nabla J.$$
#
# The direction is right, the scale is shrunk by $(G-1)/G$ [9.2-10]: by half at $G=2$, by a quarter
# at $G=4$. **RLOO** (REINFORCE leave-one-out) uses the mean of the *other* rewards,
#
# $$b_{-i}=\frac1{G-1}\sum_{j\ne i}r_j,\qquad r_i-b_{-i}=\frac{G}{G-1}\,(r_i-\bar r),$$
#
# which is independent of $o_i$ and so unbiased. Dividing by the group std (GRPO) makes the
# advantage a nonlinear function of all rewards; it is then neither of these exact scalings.
#
# **The condition behind both statements.** RLOO's unbiasedness, and with it the reading of
# $(G-1)/G$ as a shrink of the *true* gradient, hold for the estimator written above: the
# *summed* log-probability of the whole response, $\nabla\log\pi(o_i)=\sum_t\nabla\log\pi(o_{i,t}\mid\cdot)$,
# with the same weight for every response. A baseline $b$ that does not depend on $o_i$ enters as
# $r_i-b$, so it adds $-b\,\mathbb E[\nabla\log\pi(o_i)]=0$. Canonical GRPO weights each response
# by $1/|o_i|$ (mean over its own tokens). With variable lengths the baseline adds
# $-b\,\mathbb E\big[\nabla\log\pi(o_i)/|o_i|\big]=-b\,\nabla\,\mathbb E\big[1/|o_i|\big]$, which is not
# zero: a response-independent baseline is no longer gradient-neutral, and a positive one moves
# $\mathbb E[1/|o|]$ down, towards longer responses, whatever their reward [9.2-15]. RLOO is then
# biased, so $(G-1)/G$ no longer compares the mean-baseline estimator with the true gradient. The
# relation *between* the two estimators survives: $r_i-b_{-i}=\frac{G}{G-1}(r_i-\bar r)$ holds
# draw by draw, whatever weight $w(o_i)$ multiplies the score, so the mean-baseline estimator is
# exactly $(G-1)/G$ times the RLOO one, sample by sample and in expectation. This is the length
# weighting that lesson 9.3.2 takes apart. Exact checks below: first by enumerating every group of
# $G$ draws from a 3-action policy (summed log-probs, the setting of the derivation), then the
# $1/|o_i|$ case.

# %%
th = torch.tensor([0.2, -0.4, 0.7], dtype=torch.float64, requires_grad=True)
r3 = torch.tensor([1.0, 0.0, 0.5], dtype=torch.float64)
(torch.softmax(th, 0) * r3).sum().backward()
true_grad, p3, r3 = th.grad.numpy(), torch.softmax(th, 0).detach().numpy(), r3.numpy()
for G in [2, 3, 4]:
    mean_est, loo_est = np.zeros(3), np.zeros(3)
    var = {"plain": 0.0, "mean": 0.0, "loo": 0.0}
    for group in itertools.product(range(3), repeat=G):
        prob = np.prod(p3[list(group)])
        r = r3[list(group)]
        sc = np.eye(3)[list(group)] - p3  # (G, 3) grad log pi of each draw
        ests = {
            "plain": r @ sc / G,
            "mean": (r - r.mean()) @ sc / G,
            "loo": (r - (r.sum() - r) / (G - 1)) @ sc / G,
        }
        mean_est += prob * ests["mean"]
        loo_est += prob * ests["loo"]
        for name, e in ests.items():
            var[name] += prob * ((e - true_grad) ** 2).sum()
    print(
        f"G={G}: E[mean-baseline]/true = {mean_est / true_grad}  (G-1)/G = {(G - 1) / G:.4f}; "
        f"E[RLOO]/true = {loo_est / true_grad}; MSE plain/mean/loo = "
        f"{var['plain']:.4f}/{var['mean']:.4f}/{var['loo']:.4f}"
    )
    assert np.allclose(mean_est, (G - 1) / G * true_grad) and np.allclose(loo_est, true_grad)

# %% [markdown]
# (The MSE column is the expected squared distance to the true gradient, bias included: both
# baselines beat plain REINFORCE here, and the mean-baseline estimator trades bias for less spread.
# The bias is not small: its expectation is $(G-1)/G$ of the true gradient, half of it at $G=2$.
# That ranking is a property of this toy, not a general one [9.2-11].)
#
# Now three complete responses of lengths 2, 5 and 9 tokens (a softmax over whole responses is
# enough: only $\log\pi(o)$ and $|o|$ enter). For a constant baseline $b$ the expected extra term is
# $b\sum_o\pi(o)\,w(o)\,\nabla\log\pi(o)$, with $w(o)=1$ for summed log-probs and $w(o)=1/|o|$ for
# the per-response token mean:

# %%
th_len = torch.tensor([0.3, -0.1, 0.5], dtype=torch.float64, requires_grad=True)
len3 = np.array([2.0, 5.0, 9.0])  # response lengths |o|
(torch.softmax(th_len, 0) @ torch.tensor(1 / len3)).backward()  # autograd of E[1/|o|]
grad_inv_len = th_len.grad.numpy()
p_len = torch.softmax(th_len, 0).detach().numpy()
score3 = np.eye(3) - p_len  # row o = grad log pi(o) w.r.t. the logits
shift_norm = {}
for name, w in [("summed log-prob, w = 1", np.ones(3)), ("token mean, w = 1/|o|", 1 / len3)]:
    shift = (p_len * w) @ score3  # E[w(o) grad log pi(o)]: the baseline's term per unit of b
    shift_norm[name] = np.linalg.norm(shift)
    print(f"{name:>24}: |E[w grad log pi]| = {shift_norm[name]:.3g}")
assert shift_norm["summed log-prob, w = 1"] < 1e-15  # zero up to rounding (its last bits vary)
print("|E[w grad log pi]|: w = 1/|o|", quote("9.2:len_shift_inv_len", shift_norm["token mean, w = 1/|o|"], ".3g"),
      "| w = 1 below", quote("9.2:len_shift_bound", 1e-15, ".0e"))
assert np.allclose(p_len @ score3, 0, atol=1e-15)  # gradient-neutral
assert np.allclose((p_len / len3) @ score3, grad_inv_len)  # = grad E[1/|o|], not zero
print("-grad E[1/|o|] per response (length 2, 5, 9):", -grad_inv_len, "-> favours the long one")
# RLOO with the 1/|o| weight, enumerated over all groups of G = 3: no longer unbiased for the
# quantity its no-baseline version estimates, grad E[r/|o|]; the gap is -E[b] grad E[1/|o|].
# The mean-baseline estimator, same weight, stays (G-1)/G times RLOO, draw by draw.
r_len = np.array([1.0, 0.0, 1.0])
target = (p_len * r_len / len3) @ score3  # = grad E[r(o)/|o|]
e_rloo, e_mean = np.zeros(3), np.zeros(3)
for group in itertools.product(range(3), repeat=3):
    idx = list(group)
    r, sc = r_len[idx], score3[idx]
    b_loo = (r.sum() - r) / 2
    g_loo = ((r - b_loo) / len3[idx]) @ sc / 3
    g_mean = ((r - r.mean()) / len3[idx]) @ sc / 3
    assert np.allclose(g_mean, 2 / 3 * g_loo, atol=1e-15)  # per draw: r_i - b_-i = G/(G-1) (r_i - mean)
    e_rloo += np.prod(p_len[idx]) * g_loo
    e_mean += np.prod(p_len[idx]) * g_mean
print("E[RLOO with 1/|o|] - grad E[r/|o|] =", e_rloo - target)
print("E[mean-baseline] / E[RLOO] =", e_mean / e_rloo, " (G-1)/G = 2/3;  E[mean-baseline] / target =", e_mean / target)
assert np.allclose(e_rloo - target, -(p_len @ r_len) * grad_inv_len)
assert np.linalg.norm(e_rloo - target) > 1e-3
assert np.allclose(e_mean, 2 / 3 * e_rloo)  # the (G-1)/G relation survives the 1/|o| weight
assert not np.allclose(e_mean, 2 / 3 * target, atol=1e-3)  # ... but not as a shrink of the target
assert np.ptp(e_mean / target) > 0.1  # the ratio to the target differs from coordinate to coordinate

# %% [markdown]
# With $w=1$ the baseline's term vanishes to rounding; with $w=1/|o|$ it is the gradient of
# $\mathbb E[1/|o|]$, and RLOO's leave-one-out mean inherits exactly that bias. The mean-baseline
# estimator stays at $2/3$ of RLOO's expectation, but not at $2/3$ of the target: the ratio to the
# target differs from one coordinate to the next. Summary table
# (PPO's column [9.2-12]):
#
# | | REINFORCE | RLOO | canonical GRPO | PPO (as in RLHF) |
# |---|---|---|---|---|
# | baseline | none, or a constant | mean of the other $G-1$ rewards | group mean (includes $r_i$), then divide by group std | learned value model $V$ per state |
# | advantage unit | whole response | whole response | whole response, copied to every token | per token (GAE from TD residuals) |
# | ratio and clip | none (on-policy) | none in the original method (on-policy); TRL 1.16's `RLOOTrainer` clips a sequence-level ratio (summed log-probs), inactive at its default `num_iterations=1` [9.2-16] | token ratio, clip $\epsilon$ | token ratio, clip $\epsilon$ |
# | extra network | none | none | none (a reference only if $\beta>0$) | critic (+ reference) |
#
# GRPO replaces the critic with comparisons among responses to the same prompt: less memory, more
# dependence on the number of rollouts, the verifier's quality and the diversity within a group.
# Compact map: RLVR says where the reward comes from; REINFORCE, RLOO, GRPO and PPO say how the
# gradient is estimated and applied.

# %% [markdown]
# ## Assessment
#
# ### 9.2.A1 The one-success group

# %%
_box = selfcheck.numeric(
    "Eight responses, binary rewards, exactly one success. Advantage of the success with the "
    "population std (divide by G), ignoring eps? (4 significant digits)",
    math.sqrt(7),
    "Mean 1/8, population std sqrt(1/8 * 7/8) = sqrt(7)/8, so (1 - 1/8) / (sqrt(7)/8) = 7/sqrt(7) "
    "= sqrt(7) = 2.6458. Each failure gets (-1/8)/(sqrt(7)/8) = -1/sqrt(7) = -0.378, and "
    "sqrt(7) - 7/sqrt(7) = 0: the advantages sum to zero.",
    tol=2e-3,
)

# %%
_box = selfcheck.numeric(
    "Same group, but with TRL's convention (std divides by G-1, eps negligible). Advantage of the success?",
    7 / math.sqrt(8),
    "The sample std is sqrt(G/(G-1)) times the population std, so every advantage shrinks by "
    "sqrt((G-1)/G): sqrt(7) * sqrt(7/8) = 7/sqrt(8) = 2.4749. Same signs, different scale: always "
    "state which std you use.",
    tol=2e-3,
)

# %% [markdown]
# ### 9.2.A2 Which branch clips?

# %%
_box = selfcheck.choice(
    "A response has advantage A < 0, eps = 0.2, and one of its tokens now has ratio 1.5. "
    "What does min(rho*A, clip(rho, 0.8, 1.2)*A) pick, and what is its derivative in rho?",
    [
        "The clipped term 1.2*A; derivative 0 (the token is frozen).",
        "The unclipped term 1.5*A; derivative A, so the gradient still pushes this token's probability down.",
        "The clipped term 0.8*A; derivative 0.",
        "Neither: tokens outside [0.8, 1.2] are dropped from the loss.",
    ],
    1,
    "With A < 0, 1.5*A < 1.2*A, so the min keeps the unclipped term and its derivative A. For A < 0 "
    "the flat region is rho < 0.8 (no reward for lowering the probability further); a token whose "
    "probability went UP despite a negative advantage keeps its full corrective gradient. "
    "Clipping never drops tokens; it only flattens one side for each sign.",
)

# %%
_box = selfcheck.choice(
    "Which statement about the clipped objective is true?",
    [
        "It keeps every ratio inside [1 - eps, 1 + eps].",
        "It bounds KL(pi_theta || pi_old) by a function of eps.",
        "It removes the gradient of a token only once that token has moved past the boundary in the direction its advantage favours.",
        "On the first update of a fresh batch it makes the ratios differ from 1.",
    ],
    2,
    "Clipping flattens the objective beyond 1+eps for A > 0 and below 1-eps for A < 0, which "
    "zeroes that token's gradient. Ratios can still leave the interval (shared parameters, large "
    "steps), the first step's KL is set by the learning rate times the gradient with eps playing "
    "no role (9.2.4), and at the first update all ratios are exactly 1.",
)

# %% [markdown]
# ### 9.2.A3 Baselines and regimes (written, 3 points)
#
# (a) A colleague writes: "GRPO has no baseline; that is why it needs no critic." Correct the
# statement in two or three sentences, naming what GRPO actually removes.
#
# (b) Classify each set-up as *on-policy*, *near-on-policy with bounded reuse* or *off-policy*,
# and say whether the ratio and clipping do anything: (i) a fresh group per prompt and a single
# optimizer step per batch; (ii) the same rollout batch used for 4 optimizer iterations;
# (iii) a generator that runs asynchronously 10 policy versions behind the trainer, feeding a
# long-lived replay buffer.

# %% [written] id=q_baseline_regimes points=3
# **Model answer.** (a) The statement is false: the group mean $\bar r$ is a baseline, subtracted
# from each reward before it scales $\nabla\log\pi$ (and the result is divided by the group std).
# What GRPO removes is the *learned* critic, a value network that predicts the expected return per
# state/token; the baseline is estimated from the group of samples for the same prompt instead
# (the mean includes the scored response's own reward). The price is more rollouts per prompt and
# no token-level credit assignment.
# (b) (i) On-policy: $\pi_\theta=\pi_{\theta_{\text{old}}}$ at the evaluation point, all ratios are 1,
# clipping is inactive, the gradient equals the group-baseline REINFORCE gradient.
# (ii) Near-on-policy with bounded reuse: after the first iteration the current policy differs from
# the one that sampled, ratios drift from 1 and clipping binds on some tokens.
# (iii) Off-policy: the behaviour policy is far from the current one; ratios can be large and
# high-variance, clipping alone is no guarantee, and the set-up needs separate analysis (stored
# behaviour log-probs, ratio distribution, possibly truncated importance weights).
#
# **Rubric (3 points).** 1 point: says the group mean is the baseline (not "no baseline"). 1 point:
# says what is removed is a learned critic/value model (mentioning the cost, e.g. more samples or
# no per-token credit, is welcome but not required). 1 point: all three regimes classified
# correctly with the ratio/clipping consequence (ratio 1 and clipping inactive in (i)); give 0.5
# if the classes are right but the consequences are missing or wrong.

# %% [markdown]
# ## Practice: the graded functions
#
# Four pure-NumPy functions, each with its tests (visible asserts plus hidden ones). Read the
# docstring: it is the contract, shapes and conventions included. Return `np.ndarray` of dtype
# float64 and never modify the inputs.
#
# **How you are graded.** Each graded function has one test cell: the visible asserts you can run
# now, and hidden tests that run only when the course grades your notebook. The hidden tests check
# every promise of the docstring (shapes, dtypes, the errors it names, degenerate and empty inputs,
# that your inputs are left unmodified) and compare your function with the course's on seeded random
# inputs, with the tolerances the docstring or the test states. A test cell earns its points when it
# runs without an error. What your code prints, to stdout or stderr (`print`, `logging`, warnings),
# never costs points: the feedback shows it, marked `[stderr]`.
#
# ### 1. `group_advantages` (3 points)


# %% [solution] id=group_advantages
def group_advantages(rewards: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Group-relative advantages of canonical GRPO, one per response.

    A_i = (r_i - mean(r)) / (std(r) + eps), with mean and std taken within each group.

    Args:
        rewards: shape (G,) for one group, or (B, G) for B groups of G responses each (the
            last axis is the group, G >= 1). Any real dtype, or a nested list; assumed finite.
        eps: non-negative constant added to the std (outside the square root).

    Returns:
        np.ndarray, dtype float64, same shape as ``rewards``.

    Conventions:
        - std is the POPULATION standard deviation (divide by G; NumPy ``ddof=0``). TRL's
          GRPOTrainer (1.16) divides by G - 1 and uses eps = 1e-4, which makes its advantages
          sqrt((G - 1) / G) times these when eps is negligible.
        - A degenerate group (all its rewards equal, max == min) gets exactly 0.0 for every
          response, never NaN and never a rounding residue. Test equality explicitly: the float
          std of equal values can be ~1e-17 instead of 0.
        - Each group is normalised independently; the input is not modified.

    Raises:
        ValueError: if ``rewards`` is not 1-D or 2-D, or the group axis is empty.
    """
    ### BEGIN SOLUTION
    r = np.array(rewards, dtype=np.float64)  # a copy
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError(f"rewards must have shape (G,) or (B, G) with G >= 1, got {r.shape}")
    mean = r.mean(axis=-1, keepdims=True)
    std = r.std(axis=-1, keepdims=True)  # ddof=0: population std
    degenerate = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    denom = np.where(degenerate, 1.0, std + eps)
    return np.where(degenerate, 0.0, (r - mean) / denom)
    ### END SOLUTION


# %% [tests] id=test_group_advantages points=3
_out = group_advantages(np.array([1.0, 0.0, 0.0, 0.0]), eps=0.0)
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_got = np.array(_out, dtype=np.float64)
assert _got.shape == (4,), f"output shape must equal the input shape (4,), got {_got.shape}"
assert np.allclose(_got, [math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3)]), (
    f"one success in G=4 must give [sqrt(3), -1/sqrt(3) x3] = [1.732, -0.577, ...], got {_got}: "
    "check that the std is the POPULATION std (ddof=0, divide by G)"
)
_got = np.array(group_advantages(np.zeros(5)), dtype=np.float64)
assert np.all(np.isfinite(_got)) and np.all(_got == 0.0), (
    f"a degenerate group (all rewards equal) must give exact zeros, got {_got}: guard the all-equal case"
)
_got = np.array(group_advantages(np.array([[1.0, 0.0], [1.0, 1.0]]), eps=0.0), dtype=np.float64)
assert _got.shape == (2, 2) and np.allclose(_got, [[1.0, -1.0], [0.0, 0.0]]), (
    f"a (B, G) input is normalised per row (the last axis is the group); got {_got}"
)

# %% [markdown]
# ### 2. `rloo_baseline` and `rloo_advantages` (2 points)


# %% [solution] id=rloo
def rloo_baseline(rewards: np.ndarray) -> np.ndarray:
    """Leave-one-out baseline of RLOO: b_i = mean of the other G - 1 rewards in i's group.

    b_i = (sum_j r_j - r_i) / (G - 1).

    Args:
        rewards: shape (G,) or (B, G); the last axis is the group. Needs G >= 2.

    Returns:
        np.ndarray, dtype float64, same shape as ``rewards``.

    Raises:
        ValueError: if G < 2 (a mean over zero other rewards is undefined) or ``rewards`` is
            not 1-D or 2-D.
    """
    ### BEGIN SOLUTION
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2):
        raise ValueError(f"rewards must have shape (G,) or (B, G), got {r.shape}")
    G = r.shape[-1]
    if G < 2:
        raise ValueError(f"the leave-one-out baseline needs G >= 2, got G = {G}")
    return (r.sum(axis=-1, keepdims=True) - r) / (G - 1)
    ### END SOLUTION


def rloo_advantages(rewards: np.ndarray) -> np.ndarray:
    """RLOO advantages r_i - b_i (no std division); equal to G/(G-1) * (r_i - mean(r)).

    Same shapes, dtype and errors as ``rloo_baseline``. A degenerate group gives zeros up to
    float rounding (|A| ~ 1e-16), not necessarily exact zeros.
    """
    ### BEGIN SOLUTION
    r = np.array(rewards, dtype=np.float64)
    return r - rloo_baseline(r)
    ### END SOLUTION


# %% [tests] id=test_rloo points=2
_out = rloo_baseline(np.array([1.0, 0.0, 0.0, 0.0]))
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_got = np.array(_out, dtype=np.float64)
assert np.allclose(_got, [0.0, 1 / 3, 1 / 3, 1 / 3]), (
    f"b_i is the mean of the OTHER G-1 rewards: [1,0,0,0] -> [0, 1/3, 1/3, 1/3], got {_got}"
)
_got = np.array(rloo_advantages(np.array([1.0, 0.0, 0.0, 0.0])), dtype=np.float64)
assert np.allclose(_got, [1.0, -1 / 3, -1 / 3, -1 / 3]), (
    f"rloo_advantages = r - b, expected [1, -1/3, -1/3, -1/3], got {_got}"
)
try:
    rloo_baseline(np.array([0.5]))
except ValueError:
    pass
else:
    raise AssertionError("G = 1 has no other rewards: rloo_baseline must raise ValueError")

# %% [markdown]
# ### 3. `token_ratios` (2 points)


# %% [solution] id=token_ratios
def token_ratios(new_logp: np.ndarray, old_logp: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per-token importance ratios rho = pi_theta(token) / pi_old(token).

    Args:
        new_logp: (G, T) log-probs of the sampled tokens under the current policy.
        old_logp: (G, T) log-probs of the same tokens under the behaviour (old) policy, as
            stored at sampling time (after temperature, top-k/top-p and masks).
        mask: (G, T) bool or 0/1; True/nonzero marks a completion token that counts, False/0
            marks padding (or a prompt/tool token). Masked positions of ``new_logp`` and
            ``old_logp`` may hold anything, including 0, -inf or nan.

    Returns:
        np.ndarray (G, T), dtype float64. On active tokens exp(new_logp - old_logp), computed
        from the DIFFERENCE of log-probs (exp(new) / exp(old) underflows to 0/0 for very negative
        log-probs such as -800). On masked positions exactly 1.0 (log-ratio 0, the neutral ratio),
        whatever the inputs hold there.

    Raises:
        ValueError: if the three arrays do not have the same 2-D shape.
    """
    ### BEGIN SOLUTION
    new = np.asarray(new_logp, dtype=np.float64)
    old = np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError(f"need equal (G, T) shapes, got {new.shape}, {old.shape}, {m.shape}")
    log_ratio = np.zeros(new.shape, dtype=np.float64)
    np.subtract(new, old, out=log_ratio, where=m)  # padding is never touched
    return np.exp(log_ratio)
    ### END SOLUTION


# %% [tests] id=test_token_ratios points=2
_new = np.log(np.array([[0.5, 0.2, 0.3]]))
_old = np.log(np.array([[0.25, 0.4, 0.3]]))
_out = token_ratios(_new, _old, np.array([[True, True, False]]))
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_got = np.array(_out, dtype=np.float64)
assert _got.shape == (1, 3), f"output shape must be (G, T) = (1, 3), got {_got.shape}"
assert np.allclose(_got[0, :2], [2.0, 0.5]), (
    f"active ratios are exp(new - old): expected [2, 0.5], got {_got[0, :2]}"
)
assert _got[0, 2] == 1.0, f"a masked position must hold exactly 1.0, got {_got[0, 2]}"
_got = np.array(
    token_ratios(np.array([[-800.0]]), np.array([[-801.0]]), np.array([[1]])), dtype=np.float64
)
assert np.allclose(_got, math.e), (
    f"new=-800, old=-801 must give e = 2.718, got {_got}: compute exp(new - old), not exp(new)/exp(old)"
)

# %% [markdown]
# ### 4. `clipped_surrogate` (3 points)


# %% [solution] id=clipped_surrogate
def clipped_surrogate(
    ratios: np.ndarray, advantages: np.ndarray, mask: np.ndarray, eps_clip: float = 0.2
) -> np.ndarray:
    """Per-token clipped surrogate of PPO/GRPO: the objective to MAXIMISE (the loss is its negative).

    obj[i, t] = min(rho[i, t] * A[i], clip(rho[i, t], 1 - eps_clip, 1 + eps_clip) * A[i])
    on active tokens, and 0.0 on masked ones.

    Args:
        ratios: (G, T) token ratios rho; finite on active tokens, anything (even nan) on masked.
        advantages: (G,) one advantage per response; A[i] applies to every token of row i.
        mask: (G, T) bool or 0/1; True/nonzero marks an active completion token.
        eps_clip: symmetric clip half-width, >= 0.

    Returns:
        np.ndarray (G, T), dtype float64: the per-token objective, NOT reduced. The caller picks
        the denominator (DeepSeekMath: mean over each response's active tokens, then over G).

    Raises:
        ValueError: if ratios is not 2-D, mask has another shape, or advantages is not (G,).
    """
    ### BEGIN SOLUTION
    rho = np.asarray(ratios, dtype=np.float64)
    adv = np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError(
            f"need ratios (G, T), mask (G, T), advantages (G,); got {rho.shape}, {m.shape}, {adv.shape}"
        )
    rho = np.where(m, rho, 1.0)  # neutral value on padding, so no nan/inf enters the arithmetic
    a = adv[:, None]  # (G, 1): one advantage per row
    obj = np.minimum(rho * a, np.clip(rho, 1.0 - eps_clip, 1.0 + eps_clip) * a)
    return np.where(m, obj, 0.0)
    ### END SOLUTION


# %% [tests] id=test_clipped_surrogate points=3
_out = clipped_surrogate(np.array([[1.5, 1.0]]), np.array([1.0]), np.array([[True, True]]))
assert type(_out) is np.ndarray, f"return an np.ndarray, got {type(_out).__name__}"
_got = np.array(_out, dtype=np.float64)
assert _got.shape == (1, 2), f"output is per token, shape (G, T) = (1, 2), got {_got.shape}"
assert np.allclose(_got, [[1.2, 1.0]]), (
    f"A=+1: rho=1.5 is clipped to 1.2*A, rho=1 gives A; expected [[1.2, 1.0]], got {_got}. "
    "Return the objective to maximise (not the loss, no minus sign)"
)
_got = np.array(
    clipped_surrogate(np.array([[1.5]]), np.array([-1.0]), np.array([[1]])), dtype=np.float64
)
assert np.allclose(_got, [[-1.5]]), (
    f"A=-1, rho=1.5: min(-1.5, -1.2) = -1.5 (NOT clipped), got {_got}"
)
_got = np.array(
    clipped_surrogate(np.array([[2.0, 3.0]]), np.array([1.0]), np.array([[1, 0]])), dtype=np.float64
)
assert _got[0, 1] == 0.0, f"masked tokens must contribute exactly 0.0, got {_got[0, 1]}"

# %% [markdown]
# ## Putting it together
#
# Your four functions on the toy batch of 9.2.4, after the 6 reuse iterations: NumPy advantages,
# ratios and surrogate, reduced the DeepSeekMath way, must reproduce the torch objective there.
# (This cell only reports if the functions above are still stubs.)

# %%
try:
    A_np = group_advantages(rewards.numpy())
    logp_now = torch.log_softmax(theta.detach(), -1)[pos, tokens].numpy()
    rho_np = token_ratios(logp_now, old_logp.numpy(), mask.numpy())
    surr_np = clipped_surrogate(rho_np, A_np, mask.numpy())
    J_np = (surr_np.sum(1) / mask.numpy().sum(1)).mean()  # mean over own tokens, then over G
    J_torch = grpo_objective(theta.detach())[0].item()
    print(f"NumPy J = {J_np:.10f}   torch J = {J_torch:.10f}")
    assert math.isclose(J_np, J_torch, rel_tol=1e-9, abs_tol=1e-12)
    print("RLOO advantages of the same group:", rloo_advantages(rewards.numpy()))
except NotImplementedError:
    print("Implement the graded functions above to run this check.")
