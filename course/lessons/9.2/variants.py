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


# %% bug group_advantages: degenerate guard with a tolerance (std < 1e-8 zeroes a tiny real spread)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    std = r.std(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        out = (r - r.mean(axis=-1, keepdims=True)) / (std + eps)
    return np.where(std < 1e-8, 0.0, out)


# %% bug group_advantages: degenerate when max == min OR std == 0 (belt and braces: a spread whose square underflows gets zeros)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    std = r.std(axis=-1, keepdims=True)
    deg = (r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)) | (std == 0)
    with np.errstate(all="ignore"):
        out = (r - r.mean(axis=-1, keepdims=True)) / (std + eps)
    return np.where(deg, 0.0, out)


# %% bug group_advantages: keeps a float32 input's dtype (computed and returned in float32)
def group_advantages(rewards, eps=1e-6):
    r = np.asarray(rewards)
    if not np.issubdtype(r.dtype, np.floating):
        r = r.astype(np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    deg = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        out = (r - r.mean(axis=-1, keepdims=True)) / (r.std(axis=-1, keepdims=True) + eps)
    return np.where(deg, r.dtype.type(0), out)


# %% bug group_advantages: zeroes degenerate rows in the caller's float64 array (np.asarray, no copy)
def group_advantages(rewards, eps=1e-6):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("bad shape")
    deg = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
    r[np.broadcast_to(deg, r.shape)] = 0.0  # an all-zero row is unchanged, a row of 0.3 is not
    with np.errstate(all="ignore"):
        out = (r - r.mean(axis=-1, keepdims=True)) / (r.std(axis=-1, keepdims=True) + eps)
    return np.where(deg, 0.0, out)


# %% valid group_advantages: math.fsum mean and a two-pass variance (another rounding order)
def group_advantages(rewards, eps=1e-6):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] == 0:
        raise ValueError("rewards must be (G,) or (B, G) with G >= 1")
    rows = r.reshape(-1, r.shape[-1])
    out = np.zeros(rows.shape)
    for b in range(rows.shape[0]):
        row = rows[b]
        if row.max() == row.min():
            continue
        mu = math.fsum(row) / row.size
        dev = row - mu
        sd = math.sqrt(math.fsum(dev * dev) / row.size)
        out[b] = dev * (1.0 / (sd + eps))
    return out.reshape(r.shape)


# %% bug rloo_baseline: keeps a float32 input's dtype (returns float32)
def rloo_baseline(rewards):
    r = np.asarray(rewards)
    if not np.issubdtype(r.dtype, np.floating):
        r = r.astype(np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] < 2:
        raise ValueError("bad shape")
    G = r.shape[-1]
    return (r.sum(axis=-1, keepdims=True) - r) / (G - 1)


# %% bug rloo_baseline: G = len(r), the number of rows of a (B, G) batch (right only when B == G)
def rloo_baseline(rewards):
    r = np.array(rewards, dtype=np.float64)
    if r.ndim not in (1, 2) or r.shape[-1] < 2:
        raise ValueError("bad shape")
    G = len(r)
    return (r.sum(axis=-1, keepdims=True) - r) / max(G - 1, 1)


# %% bug token_ratios: log-ratio clamped to [-20, 20] "for stability" (exp(25) comes out as exp(20))
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError("shapes")
    with np.errstate(all="ignore"):
        return np.where(m, np.exp(np.clip(new - old, -20.0, 20.0)), 1.0)


# %% bug token_ratios: cleans nan/inf padding in place (np.nan_to_num(copy=False) on the inputs)
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError("shapes")
    np.nan_to_num(new, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    np.nan_to_num(old, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    with np.errstate(all="ignore"):
        return np.where(m, np.exp(new - old), 1.0)


# %% bug token_ratios: keeps float32 log-probs' dtype (returns float32 ratios)
def token_ratios(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp), np.asarray(old_logp)
    m = np.asarray(mask).astype(bool)
    if new.ndim != 2 or new.shape != old.shape or new.shape != m.shape:
        raise ValueError("shapes")
    with np.errstate(all="ignore"):
        d = np.where(m, new - old, 0)
    return np.exp(d)


# %% valid token_ratios: difference and exp in the inputs' float32 precision, then cast to float64
def token_ratios(new_logp, old_logp, mask):
    new, old, m = np.asarray(new_logp), np.asarray(old_logp), np.asarray(mask).astype(bool)
    if not (new.ndim == 2 and new.shape == old.shape == m.shape):
        raise ValueError("need equal (G, T) shapes")
    dt = np.result_type(new.dtype, old.dtype, np.float32)
    d = np.zeros(new.shape, dtype=dt)
    np.subtract(new.astype(dt), old.astype(dt), out=d, where=m)
    return np.exp(d).astype(np.float64)


# %% bug clipped_surrogate: dual-clip PPO (obj >= 3 A for A < 0), not the plain PPO/GRPO surrogate
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho = np.where(m, rho, 1.0)
    a = adv[:, None]
    obj = np.minimum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a)
    obj = np.where(a < 0, np.maximum(obj, 3.0 * a), obj)
    return np.where(m, obj, 0.0)


# %% bug clipped_surrogate: writes 1.0 into the padding of the caller's ratios (in place)
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho[~m] = 1.0  # an all-active mask, or padding already 1.0, hides this
    a = adv[:, None]
    return np.where(m, np.minimum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a), 0.0)


# %% bug clipped_surrogate: no shape check (NumPy broadcasts a (1, T) mask or a (1,) advantage)
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    if rho.ndim != 2:
        raise ValueError("ratios must be 2-D")
    with np.errstate(all="ignore"):
        rho = np.where(m, rho, 1.0)
        a = adv.reshape(-1, 1)
        return np.where(m, np.minimum(rho * a, np.clip(rho, 1 - eps_clip, 1 + eps_clip) * a), 0.0)


# %% valid clipped_surrogate: float32 arithmetic for float32 inputs, result cast to float64
def clipped_surrogate(ratios, advantages, mask, eps_clip=0.2):
    rho, adv = np.asarray(ratios), np.asarray(advantages)
    dt = np.result_type(rho.dtype, adv.dtype, np.float32)
    rho, adv = rho.astype(dt), adv.astype(dt)
    m = np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape or adv.shape != (rho.shape[0],):
        raise ValueError("shapes")
    rho = np.where(m, rho, dt.type(1))
    a = adv[:, None]
    lo, hi = dt.type(1 - eps_clip), dt.type(1 + eps_clip)
    obj = np.minimum(rho * a, np.clip(rho, lo, hi) * a)
    return np.where(m, obj, dt.type(0)).astype(np.float64)


# Mutants of the references that no test can kill (tests/grading/mutation.py); each argument says
# why no input the docstring allows tells the mutant from the reference.

# %% equivalent group_advantages: 5647984bdd r.shape[-1] == 0 -> r.shape[-1] == -1
# The explicit check then never fires, but every input with an empty group axis ((0,), (B, 0),
# (0, 0)) still raises ValueError two lines later: r.max(axis=-1) on an empty axis raises
# "zero-size array to reduction operation maximum which has no identity" (a ValueError) before
# anything is returned. The RuntimeWarnings of mean/std on the empty axis go to stderr (not graded).

# %% equivalent group_advantages: ed8764e677 r.shape[-1] == 0 -> r.shape[-1] < 0
# As for 5647984bdd: a length is never negative, so the check never fires, and r.max(axis=-1)
# raises the documented ValueError for every empty group axis.

# %% equivalent group_advantages: 7c22d99d8a r.shape[-1] == 0 -> r.shape[-1] <= 0
# A length is never negative: <= 0 holds exactly when == 0.

# %% equivalent group_advantages: c416b8ae7f max == min -> max <= min
# For finite rewards (the docstring assumes them) max >= min in every group, so max <= min holds
# exactly when max == min.

# %% equivalent group_advantages: 1cac74d659 np.where(degenerate, 1.0, std + eps) -> (..., 2.0, ...)
# The placeholder denominator only serves degenerate groups, whose entries the return line
# replaces by exactly 0.0 (np.where(degenerate, 0.0, ...)); non-degenerate groups get std + eps
# either way.

# %% equivalent group_advantages: aa6306c3de np.where(degenerate, 1.0, std + eps) -> (..., 0.0, ...)
# As for 1cac74d659: degenerate groups then compute 0/0 = nan (with a RuntimeWarning on stderr,
# never graded), which np.where(degenerate, 0.0, ...) discards; np.where selects, so no nan leaks.

# %% equivalent clipped_surrogate: 0a8a8376f4 np.where(m, rho, 1.0) -> np.where(m, rho, 2.0)
# The value put on masked positions only feeds obj on masked positions, which the return line
# replaces by exactly 0.0 (np.where(m, obj, 0.0)); active positions keep their own rho.

# %% equivalent clipped_surrogate: e025fc473b np.where(m, rho, 1.0) -> np.where(m, rho, 0.0)
# As for 0a8a8376f4: any finite placeholder gives finite (or, with an infinite advantage, nan)
# values on masked positions only, and np.where(m, obj, 0.0) discards them.
