# ruff: noqa: F811, F821, E731
"""Variants of lesson 9.2's graded functions (see tests/grading/harness.py for the format)."""


# %% bug group_advantages: sample std (ddof=1, TRL's convention) instead of the population std
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    deg = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        std = r.std(axis=-1, ddof=1, keepdims=True)
        out = (r - r.mean(axis=-1, keepdims=True)) / (std + eps)
    return np.where(deg, 0.0, out)


# %% bug group_advantages: no degenerate guard ((r - mean) / (std + eps) for an all-equal group)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    with np.errstate(all="ignore"):
        return (r - r.mean(axis=-1, keepdims=True)) / (r.std(axis=-1, keepdims=True) + eps)


# %% bug group_advantages: guards the degenerate case with std == 0 (misses the rounding residue)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    std = r.std(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        out = (r - r.mean(axis=-1, keepdims=True)) / (std + eps)
    return np.where(std == 0, 0.0, out)


# %% bug group_advantages: eps inside the square root, sqrt(var + eps)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    deg = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        out = (r - r.mean(axis=-1, keepdims=True)) / np.sqrt(r.var(axis=-1, keepdims=True) + eps)
    return np.where(deg, 0.0, out)


# %% bug group_advantages: normalises over the whole batch instead of within each group
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    if r.max() == r.min():
        return np.zeros_like(r)
    return (r - r.mean()) / (r.std() + eps)


# %% bug group_advantages: sign error (mean - r)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    deg = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        out = (r.mean(axis=-1, keepdims=True) - r) / (r.std(axis=-1, keepdims=True) + eps)
    return np.where(deg, 0.0, out)


# %% valid group_advantages: a loop over groups in Python floats (statistics.pstdev)
def group_advantages(rewards, eps=1e-6):
    import statistics

    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("rewards must be (G,) or (B, G) with G >= 1")
    rows = r.reshape(-1, r.shape[-1])
    out = np.zeros(rows.shape, dtype=np.float64)
    for b, row in enumerate(rows.tolist()):
        if max(row) == min(row):
            continue
        mu = statistics.fmean(row)
        sd = statistics.pstdev(row, mu)
        out[b] = [(x - mu) / (sd + eps) for x in row]
    return out.reshape(r.shape)


# %% bug rloo_baseline: the mean of the whole group, the response's own reward included
def rloo_baseline(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] < 2:
        raise ValueError("need (G,) or (B, G) with G >= 2")
    return np.broadcast_to(r.mean(axis=-1, keepdims=True), r.shape).copy()


# %% bug rloo_baseline: divides the others' sum by G instead of G - 1
def rloo_baseline(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] < 2:
        raise ValueError("need (G,) or (B, G) with G >= 2")
    return (r.sum(axis=-1, keepdims=True) - r) / r.shape[-1]


# %% bug rloo_baseline: no G >= 2 check (G = 1 divides by zero instead of raising)
def rloo_baseline(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2):
        raise ValueError("need (G,) or (B, G)")
    with np.errstate(all="ignore"):
        return (r.sum(axis=-1, keepdims=True) - r) / (r.shape[-1] - 1)


# %% bug rloo_baseline: sums over the batch axis (axis=0) for (B, G) input
def rloo_baseline(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] < 2:
        raise ValueError("need (G,) or (B, G) with G >= 2")
    return (r.sum(axis=0, keepdims=True) - r) / (r.shape[-1] - 1)


# %% bug rloo_advantages: sign error (b - r)
def rloo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    return rloo_baseline(r) - r


# %% bug rloo_advantages: divides by the group std as GRPO does
def rloo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    a = r - rloo_baseline(r)
    sd = r.std(axis=-1, keepdims=True)
    return np.where(sd > 0, a / np.where(sd > 0, sd, 1.0), 0.0)


# %% valid rloo_baseline: an explicit leave-one-out loop
def rloo_baseline(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2):
        raise ValueError("bad shape")
    G = r.shape[-1]
    if G < 2:
        raise ValueError("G must be >= 2")
    rows = r.reshape(-1, G)
    out = np.empty_like(rows)
    for b in range(rows.shape[0]):
        for i in range(G):
            out[b, i] = np.delete(rows[b], i).mean()
    return out.reshape(r.shape)


# %% valid rloo_advantages: the identity G/(G-1) (r - mean), with its own checks
def rloo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] < 2:
        raise ValueError("need (G,) or (B, G) with G >= 2")
    G = r.shape[-1]
    return G / (G - 1) * (r - r.mean(axis=-1, keepdims=True))


# %% bug token_ratios: exp(new) / exp(old), which underflows to 0/0 for very negative log-probs
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError("shapes")
    with np.errstate(all="ignore"):
        return np.where(m, np.exp(new) / np.exp(old), 1.0)


# %% bug token_ratios: masked positions set to 0 (multiplying by the mask) instead of 1
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError("shapes")
    with np.errstate(all="ignore"):
        return np.where(m, np.exp(new - old), 0.0)


# %% bug token_ratios: the ratio inverted, pi_old / pi_theta
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError("shapes")
    with np.errstate(all="ignore"):
        return np.where(m, np.exp(old - new), 1.0)


# %% bug token_ratios: the mask ignored (padding gets exp(new - old) too)
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    if new.ndim != 2 or new.shape != old.shape or new.shape != np.shape(mask):
        raise ValueError("shapes")
    with np.errstate(all="ignore"):
        return np.exp(new - old)


# %% valid token_ratios: exp everywhere, then np.where picks 1.0 on padding
def token_ratios(new_logp, old_logp, mask):
    new, old, m = np.array(new_logp, float), np.array(old_logp, float), np.array(mask) != 0
    if not (new.ndim == 2 and new.shape == old.shape == m.shape):
        raise ValueError("new_logp, old_logp and mask need the same (G, T) shape")
    with np.errstate(invalid="ignore", over="ignore"):
        raw = np.exp(new - old)
    return np.where(m, raw, 1.0).astype(np.float64)


# %% bug clipped_surrogate: returns the loss (a minus sign) instead of the objective
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho = np.where(m, rho, 1.0)
    a = adv[:, None]
    return np.where(m, -np.minimum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a), 0.0)


# %% bug clipped_surrogate: max instead of min (the optimistic bound)
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho = np.where(m, rho, 1.0)
    a = adv[:, None]
    return np.where(m, np.maximum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a), 0.0)


# %% bug clipped_surrogate: clipping on the wrong branch (only the upper clip, for A > 0)
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho = np.where(m, rho, 1.0)
    a = adv[:, None]
    return np.where(m, np.where(a > 0, np.minimum(rho, 1 + eps_clip) * a, rho * a), 0.0)


# %% bug clipped_surrogate: padding zeroed by multiplying with the mask (nan * 0 = nan leaks)
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(np.float64)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    a = adv[:, None]
    return np.minimum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a) * m


# %% bug clipped_surrogate: advantages broadcast along tokens (adv[None, :]) instead of rows
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho = np.where(m, rho, 1.0)
    a = adv[None, :] if rho.shape[0] == rho.shape[1] else adv[:, None]
    return np.where(m, np.minimum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a), 0.0)


# %% valid clipped_surrogate: the piecewise form (A >= 0: min(rho, 1+eps) A; A < 0: max(rho, 1-eps) A)
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho = np.array(ratios, dtype=np.float64)
    adv = np.array(advantages, dtype=np.float64)
    m = np.array(mask, dtype=bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("bad shapes")
    out = np.zeros(rho.shape, dtype=np.float64)
    G, T = rho.shape
    for i in range(G):
        for t in range(T):
            if not m[i, t]:
                continue
            x, a = float(rho[i, t]), float(adv[i])
            out[i, t] = (min(x, 1 + eps_clip) if a >= 0 else max(x, 1 - eps_clip)) * a
    return out
