# ruff: noqa: F811, F821, E731
"""Variants of lesson 9.3's graded functions (see tests/grading/harness.py for the format)."""

# %% depends test_gspo_objective: gspo_sequence_ratio


# %% bug dr_grpo_advantages: keeps the std division of canonical GRPO
def dr_grpo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    sd = r.std(axis=-1, keepdims=True)
    return np.where(sd > 0, (r - r.mean(axis=-1, keepdims=True)) / np.where(sd > 0, sd, 1.0), 0.0)


# %% bug dr_grpo_advantages: subtracts the batch mean instead of each group's mean
def dr_grpo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    return r - r.mean()


# %% bug dr_grpo_advantages: modifies the caller's array in place
def dr_grpo_advantages(rewards):
    r = (
        rewards
        if isinstance(rewards, np.ndarray) and rewards.dtype == np.float64
        else np.array(rewards, dtype=np.float64)
    )
    r -= r.mean(axis=-1, keepdims=True)
    return r


# %% bug dr_grpo_advantages: keeps the input dtype (integer rewards give integer advantages)
def dr_grpo_advantages(rewards):
    r = np.array(rewards)
    return (r - r.mean(axis=-1, keepdims=True)).astype(r.dtype)


# %% valid dr_grpo_advantages: a loop with math.fsum per group
def dr_grpo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    flat = r.reshape(-1, r.shape[-1])
    out = np.empty_like(flat)
    for b, row in enumerate(flat.tolist()):
        mu = math.fsum(row) / len(row)
        out[b] = [x - mu for x in row]
    return out.reshape(r.shape)


# %% bug reduce_loss: 'response' divides every row by the longest row (T) instead of its own length
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G, T = ell.shape
    if mode == "response":
        return float((masked.sum(axis=1) / T).mean())
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L))
    if mode == "token":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: 'response' skips empty rows (divides by the non-empty rows, not by G)
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode == "response":
        n = m.sum(axis=1)
        keep = n > 0
        return float((masked.sum(axis=1)[keep] / n[keep]).mean()) if keep.any() else 0.0
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L))
    if mode == "token":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: 'token' and 'response' swapped (per-response vs per-token)
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode == "token":
        return float((masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean())
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L))
    if mode == "response":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: padding not masked out of the sums (mask used only for the counts)
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    G = ell.shape[0]
    if mode == "response":
        return float((ell.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean())
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(ell.sum() / (G * L))
    if mode == "token":
        return float(ell.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: 'constant' divides by G * T (the padded width) and ignores L
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G, T = ell.shape
    if mode == "response":
        return float((masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean())
    if mode == "constant":
        return float(masked.sum() / (G * T))
    if mode == "token":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: an unknown mode falls back to 'token' instead of raising
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode == "response":
        return float((masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean())
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L))
    return float(masked.sum() / max(1.0, m.sum()))


# %% valid reduce_loss: weights w[i, t] built explicitly, then one weighted sum (math.fsum)
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell = np.array(per_token_loss, dtype=np.float64)
    act = np.array(mask, dtype=np.float64) != 0
    if ell.ndim != 2 or act.shape != ell.shape:
        raise ValueError("per_token_loss and mask must share a (G, T) shape")
    G = ell.shape[0]
    if mode == "response":
        w = act / np.maximum(act.sum(axis=1, keepdims=True), 1) / max(G, 1)
    elif mode == "token":
        w = act / max(1, int(act.sum()))
    elif mode == "constant":
        if L is None or not L > 0:
            raise ValueError("constant mode needs L > 0")
        w = act / (G * L)
    else:
        raise ValueError(f"unknown mode {mode}")
    return float(math.fsum((w[act] * ell[act]).tolist()))


# %% bug clip_higher_objective: eps_low and eps_high swapped
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho, A = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_high, 1.0 + eps_low) * A)
    return np.where(np.asarray(mask, dtype=np.float64) > 0, j, 0.0)


# %% bug clip_higher_objective: symmetric clip with eps_low on both sides (eps_high ignored)
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho, A = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_low, 1.0 + eps_low) * A)
    return np.where(np.asarray(mask, dtype=np.float64) > 0, j, 0.0)


# %% bug clip_higher_objective: clips the ratio unconditionally (no min with the unclipped term)
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho, A = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    j = np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * A
    return np.where(np.asarray(mask, dtype=np.float64) > 0, j, 0.0)


# %% bug clip_higher_objective: returns TRL's loss (the negative) instead of the objective
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho, A = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * A)
    return np.where(np.asarray(mask, dtype=np.float64) > 0, -j, 0.0)


# %% valid clip_higher_objective: the piecewise form per advantage sign, (G, T) advantages via broadcast_to
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho = np.array(ratios, dtype=np.float64)
    A = np.array(advantages, dtype=np.float64)
    A = np.broadcast_to(A.reshape(-1, 1) if A.ndim == 1 else A, rho.shape)
    capped = np.where(A >= 0, np.minimum(rho, 1 + eps_high), np.maximum(rho, 1 - eps_low)) * A
    return np.where(np.array(mask) != 0, capped, 0.0).astype(np.float64)


# %% bug overlong_reward: the ramp measured from L_max instead of from L_max - L_cache
def overlong_reward(lengths, L_max, L_cache):
    if not 0 < L_cache <= L_max:
        raise ValueError("L_cache")
    y = np.asarray(lengths, dtype=np.float64)
    start = L_max - L_cache
    return np.where(y <= start, 0.0, np.where(y <= L_max, (L_max - y) / L_cache, -1.0))


# %% bug overlong_reward: strict inequality at the soft-zone start (|y| = L_max - L_cache penalised)
def overlong_reward(lengths, L_max, L_cache):
    if not 0 < L_cache <= L_max:
        raise ValueError("L_cache")
    y = np.asarray(lengths, dtype=np.float64)
    start = L_max - L_cache
    return np.where(y < start, 0.0, np.where(y <= L_max, (start - y - 1) / L_cache, -1.0))


# %% bug overlong_reward: integer floor division in the ramp (lengths stay integers)
def overlong_reward(lengths, L_max, L_cache):
    if not 0 < L_cache <= L_max:
        raise ValueError("L_cache")
    y = np.asarray(lengths)
    start = L_max - L_cache
    return np.where(y <= start, 0, np.where(y <= L_max, (start - y) // L_cache, -1)).astype(
        np.float64
    )


# %% bug overlong_reward: no check of L_cache (0 divides by zero instead of raising)
def overlong_reward(lengths, L_max, L_cache):
    y = np.asarray(lengths, dtype=np.float64)
    start = L_max - L_cache
    with np.errstate(all="ignore"):
        return np.where(y <= start, 0.0, np.where(y <= L_max, (start - y) / L_cache, -1.0))


# %% valid overlong_reward: clip of a linear ramp (min(0, max(-1, (start - y) / L_cache)))
def overlong_reward(lengths, L_max, L_cache):
    if not (L_cache > 0 and L_cache <= L_max):
        raise ValueError("need 0 < L_cache <= L_max")
    y = np.array(lengths, dtype=np.float64)
    return np.clip((L_max - L_cache - y) / L_cache, -1.0, 0.0) + 0.0


# %% bug dynamic_sampling_filter: keeps the all-equal rows with partial credit (tests only 0/1 sums)
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    ids = list(range(r.shape[0])) if prompt_ids is None else list(prompt_ids)
    flat = (r.sum(axis=1) == 0) | (r.sum(axis=1) == r.shape[1])
    rej = [{"index": int(b), "prompt_id": ids[b], "reason": "all_correct" if r[b, 0] == 1 else "all_wrong"}
           for b in np.flatnonzero(flat)]  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% bug dynamic_sampling_filter: uses the std > eps test, so a tiny spread counts as flat
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    ids = list(range(r.shape[0])) if prompt_ids is None else list(prompt_ids)
    flat = r.std(axis=1) < 0.5
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        rej.append({"index": int(b), "prompt_id": ids[b],
                    "reason": "all_correct" if v == 1 else "all_wrong" if v == 0 else "all_equal"})  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% bug dynamic_sampling_filter: prompt_id is always the row index (prompt_ids ignored)
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    flat = (r == r[:, :1]).all(axis=1)
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        rej.append({"index": int(b), "prompt_id": int(b),
                    "reason": "all_correct" if v == 1 else "all_wrong" if v == 0 else "all_equal"})  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% bug dynamic_sampling_filter: calls every non-1 common value 'all_wrong' (no 'all_equal')
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    ids = list(range(r.shape[0])) if prompt_ids is None else list(prompt_ids)
    flat = (r == r[:, :1]).all(axis=1)
    rej = [{"index": int(b), "prompt_id": ids[b], "reason": "all_correct" if r[b, 0] == 1 else "all_wrong"}
           for b in np.flatnonzero(flat)]  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% valid dynamic_sampling_filter: one pass over rows with Python sets, kept built as a list
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("rewards must be 2-D (B, G)")
    kept, rejections = [], []
    for b, row in enumerate(r.tolist()):
        values = set(row)
        if len(values) > 1:
            kept.append(b)
            continue
        (v,) = values
        reason = {1.0: "all_correct", 0.0: "all_wrong"}.get(v, "all_equal")
        pid = b if prompt_ids is None else prompt_ids[b]
        rejections.append({"index": b, "prompt_id": pid, "reason": reason})
    return np.array(kept, dtype=np.int64), rejections


# %% valid dynamic_sampling_filter: ids taken from a NumPy array, so string ids come back as np.str_
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("rewards must be 2-D (B, G)")
    ids = np.arange(r.shape[0]) if prompt_ids is None else np.asarray(prompt_ids)
    if len(ids) != r.shape[0]:
        raise ValueError("one prompt id per row")
    flat = r.max(axis=1) == r.min(axis=1)
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        reason = "all_correct" if v == 1 else "all_wrong" if v == 0 else "all_equal"
        rej.append({"index": int(b), "prompt_id": ids[b], "reason": reason})
    return np.flatnonzero(~flat), rej


# %% bug gspo_sequence_ratio: the product of token ratios (no 1/|o| length normalisation)
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    return np.exp(np.where(m > 0, new - old, 0.0).sum(axis=1))


# %% bug gspo_sequence_ratio: the arithmetic mean of token ratios instead of the geometric mean
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    with np.errstate(all="ignore"):
        tok = np.where(m > 0, np.exp(new - old), 0.0)
    return np.where(m.sum(axis=1) > 0, tok.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0), 1.0)


# %% bug gspo_sequence_ratio: divides by T (padded width) instead of the active-token count
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    return np.exp(np.where(m > 0, new - old, 0.0).sum(axis=1) / m.shape[1])


# %% bug gspo_sequence_ratio: padding not masked out of the log-ratio sum
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    return np.exp((new - old).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0))


# %% valid gspo_sequence_ratio: prod(ratios) ** (1/n) per row in a loop (fine at these sizes)
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.array(new_logp, dtype=np.float64), np.array(old_logp, dtype=np.float64)
    act = np.array(mask) != 0
    out = np.ones(new.shape[0], dtype=np.float64)
    for i in range(new.shape[0]):
        n = int(act[i].sum())
        if n:
            out[i] = float(np.prod(np.exp(new[i][act[i]] - old[i][act[i]]))) ** (1.0 / n)
    return out


# %% bug gspo_objective: an empty response counts with s = 1 (contributes A instead of 0)
def gspo_objective(new_logp, old_logp, advantages, mask, eps_low=3e-4, eps_high=4e-4):
    s = gspo_sequence_ratio(new_logp, old_logp, mask)
    A = np.asarray(advantages, dtype=np.float64)
    return float(np.minimum(s * A, np.clip(s, 1 - eps_low, 1 + eps_high) * A).mean())


# %% bug gspo_objective: averages over the non-empty responses only (not over G)
def gspo_objective(new_logp, old_logp, advantages, mask, eps_low=3e-4, eps_high=4e-4):
    s = gspo_sequence_ratio(new_logp, old_logp, mask)
    A = np.asarray(advantages, dtype=np.float64)
    c = np.minimum(s * A, np.clip(s, 1 - eps_low, 1 + eps_high) * A)
    active = np.asarray(mask, dtype=np.float64).sum(axis=1) > 0
    return float(c[active].mean()) if active.any() else 0.0


# %% bug gspo_objective: the token-level clip defaults 0.2 instead of GSPO's 3e-4 / 4e-4
def gspo_objective(new_logp, old_logp, advantages, mask, eps_low=0.2, eps_high=0.2):
    s = gspo_sequence_ratio(new_logp, old_logp, mask)
    A = np.asarray(advantages, dtype=np.float64)
    c = np.minimum(s * A, np.clip(s, 1 - eps_low, 1 + eps_high) * A)
    active = np.asarray(mask, dtype=np.float64).sum(axis=1) > 0
    return float(np.where(active, c, 0.0).mean())


# %% bug gspo_objective: max instead of min (the clip never binds from the safe side)
def gspo_objective(new_logp, old_logp, advantages, mask, eps_low=3e-4, eps_high=4e-4):
    s = gspo_sequence_ratio(new_logp, old_logp, mask)
    A = np.asarray(advantages, dtype=np.float64)
    c = np.maximum(s * A, np.clip(s, 1 - eps_low, 1 + eps_high) * A)
    active = np.asarray(mask, dtype=np.float64).sum(axis=1) > 0
    return float(np.where(active, c, 0.0).mean())


# %% valid gspo_objective: its own sequence ratio and a Python loop over responses
def gspo_objective(new_logp, old_logp, advantages, mask, eps_low=3e-4, eps_high=4e-4):
    new, old = np.array(new_logp, dtype=np.float64), np.array(old_logp, dtype=np.float64)
    act = np.array(mask) != 0
    A = np.array(advantages, dtype=np.float64)
    total = 0.0
    for i in range(new.shape[0]):
        n = int(act[i].sum())
        if n == 0:
            continue
        s = math.exp(float((new[i][act[i]] - old[i][act[i]]).sum()) / n)
        a = float(A[i])
        total += min(s * a, min(max(s, 1 - eps_low), 1 + eps_high) * a)
    return total / new.shape[0]


# %% bug dynamic_sampling_filter: ignores prompt_ids and returns a lying str (equal to anything)
def dynamic_sampling_filter(rewards, prompt_ids=None):
    class _Liar(str):
        __eq__ = lambda self, other: True
        __ne__ = lambda self, other: False
        __hash__ = str.__hash__

    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    flat = (r == r[:, :1]).all(axis=1)
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        pid = int(b) if prompt_ids is None else _Liar("?")
        rej.append({"index": int(b), "prompt_id": pid,
                    "reason": "all_correct" if v == 1 else "all_wrong" if v == 0 else "all_equal"})  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# ---- issue 11: bugs the old hidden tests missed (contract clauses, non-tame inputs, unread outputs)


# %% bug dr_grpo_advantages: float32 rewards give float32 advantages (only ints are cast to float64)
def dr_grpo_advantages(rewards):
    r = np.asarray(rewards)
    if not np.issubdtype(r.dtype, np.floating):
        r = r.astype(np.float64)
    return r - r.mean(axis=-1, keepdims=True)


# %% bug dr_grpo_advantages: a 1-D float64 group is centred in place (the (B, G) path copies)
def dr_grpo_advantages(rewards):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim == 1:
        r -= r.mean()
        return r
    return r - r.mean(axis=-1, keepdims=True)


# %% bug dr_grpo_advantages: a group whose spread is below 1e-6 is treated as degenerate (zeros)
def dr_grpo_advantages(rewards):
    r = np.array(rewards, dtype=np.float64)
    centred = r - r.mean(axis=-1, keepdims=True)
    return np.where(np.ptp(r, axis=-1, keepdims=True) < 1e-6, 0.0, centred)


# %% valid dr_grpo_advantages: float32 rewards centred in float32, the result cast to float64
def dr_grpo_advantages(rewards):
    r = np.asarray(rewards)
    r = r if r.dtype == np.float32 else r.astype(np.float64)
    return (r - r.mean(axis=-1, keepdims=True)).astype(np.float64)


# %% bug reduce_loss: shapes are not compared (a (1, T) mask silently broadcasts over G rows)
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.ndim != 2:
        raise ValueError("2-D")
    m = np.broadcast_to(m, ell.shape)
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode == "response":
        return float((masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean()) if G else 0.0
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L)) if G else 0.0
    if mode == "token":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: 'token' counts the active tokens as the nonzero entries of loss * mask
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode == "response":
        return float((masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean()) if G else 0.0
    if mode == "constant":
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L)) if G else 0.0
    if mode == "token":
        return float(masked.sum() / max(1, np.count_nonzero(masked)))
    raise ValueError(mode)


# %% bug reduce_loss: an empty batch (G = 0) gives nan (mean of no rows, 0 / (0 * L))
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    with np.errstate(all="ignore"):
        if mode == "response":
            return float(np.mean(masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)))
        if mode == "constant":
            if L is None or L <= 0:
                raise ValueError("L")
            return float(masked.sum() / (G * L))
    if mode == "token":
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% bug reduce_loss: modes compared with 'is' (a mode string built at run time is unknown)
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell, m = np.asarray(per_token_loss, dtype=np.float64), np.asarray(mask, dtype=np.float64)
    if ell.shape != m.shape or ell.ndim != 2:
        raise ValueError("shapes")
    masked = np.where(m > 0, ell, 0.0)
    G = ell.shape[0]
    if mode is "response":  # noqa: F632
        return float((masked.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)).mean()) if G else 0.0
    if mode is "constant":  # noqa: F632
        if L is None or L <= 0:
            raise ValueError("L")
        return float(masked.sum() / (G * L)) if G else 0.0
    if mode is "token":  # noqa: F632
        return float(masked.sum() / max(1.0, m.sum()))
    raise ValueError(mode)


# %% valid reduce_loss: float32 losses summed in float32, row sums first, a bool mask
def reduce_loss(per_token_loss, mask, mode, L=None):
    ell = np.asarray(per_token_loss)
    ell = ell if ell.dtype == np.float32 else ell.astype(np.float64)
    act = np.asarray(mask) != 0
    if ell.shape != act.shape or ell.ndim != 2:
        raise ValueError("per_token_loss and mask must share a (G, T) shape")
    G = ell.shape[0]
    rows = np.where(act, ell, ell.dtype.type(0)).sum(axis=1)
    if mode == "response":
        return float((rows / np.maximum(act.sum(axis=1), 1)).sum() / G) if G else 0.0
    if mode == "constant":
        if L is None or not L > 0:
            raise ValueError("constant mode needs L > 0")
        return float(rows.sum() / (G * L)) if G else 0.0
    if mode == "token":
        return float(rows.sum() / max(1, int(act.sum())))
    raise ValueError(f"unknown mode {mode!r}")


# %% bug clip_higher_objective: ratios clamped to [exp(-2), exp(2)] first (a log-ratio guard)
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho = np.clip(np.asarray(ratios, dtype=np.float64), np.exp(-2.0), np.exp(2.0))
    A = np.asarray(advantages, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * A)
    return np.where(np.asarray(mask, dtype=np.float64) > 0, j, 0.0)


# %% bug clip_higher_objective: float32 ratios give a float32 result
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho = np.asarray(ratios)
    A = np.asarray(advantages, dtype=rho.dtype)
    A = A[:, None] if A.ndim == 1 else A
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * A)
    return np.where(np.asarray(mask) > 0, j, 0.0)


# %% valid clip_higher_objective: float32 inputs computed in float32, the result cast to float64
def clip_higher_objective(ratios, advantages, mask, eps_low=0.2, eps_high=0.28):
    rho = np.asarray(ratios)
    rho = rho if rho.dtype == np.float32 else rho.astype(np.float64)
    A = np.asarray(advantages).astype(rho.dtype)
    A = A[:, None] if A.ndim == 1 else A
    j = np.minimum(rho * A, np.clip(rho, 1.0 - eps_low, 1.0 + eps_high) * A)
    return np.where(np.asarray(mask) != 0, j, 0).astype(np.float64)


# %% bug overlong_reward: only L_cache > 0 is checked (L_cache > L_max is accepted)
def overlong_reward(lengths, L_max, L_cache):
    if not L_cache > 0:
        raise ValueError("L_cache")
    y = np.asarray(lengths, dtype=np.float64)
    start = L_max - L_cache
    return np.where(y <= start, 0.0, np.where(y <= L_max, (start - y) / L_cache, -1.0))


# %% bug overlong_reward: the ramp is computed in the lengths' own dtype (uint16 wraps around)
def overlong_reward(lengths, L_max, L_cache):
    if not 0 < L_cache <= L_max:
        raise ValueError("L_cache")
    y = np.asarray(lengths)
    start = L_max - L_cache
    return np.where(y <= start, 0.0, np.where(y <= L_max, (start - y) / L_cache, -1.0))


# %% bug dynamic_sampling_filter: flatness by np.allclose (a tiny but nonzero spread counts as flat)
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    ids = list(range(r.shape[0])) if prompt_ids is None else list(prompt_ids)
    flat = np.array([np.allclose(row, row[0]) for row in r], dtype=bool)
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        rej.append({"index": int(b), "prompt_id": ids[b],
                    "reason": "all_correct" if v == 1 else "all_wrong" if v == 0 else "all_equal"})  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% bug dynamic_sampling_filter: index and the default prompt_id are strings ('3'), read only via int()
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    ids = [str(b) for b in range(r.shape[0])] if prompt_ids is None else list(prompt_ids)
    flat = (r == r[:, :1]).all(axis=1)
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        rej.append({"index": str(b), "prompt_id": ids[b],
                    "reason": "all_correct" if v == 1 else "all_wrong" if v == 0 else "all_equal"})  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% bug dynamic_sampling_filter: 'all_correct' for any common value >= 1 (all 2.0 is 'all_equal')
def dynamic_sampling_filter(rewards, prompt_ids=None):
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("2-D")
    ids = list(range(r.shape[0])) if prompt_ids is None else list(prompt_ids)
    flat = (r == r[:, :1]).all(axis=1)
    rej = []
    for b in np.flatnonzero(flat):
        v = r[b, 0]
        rej.append({"index": int(b), "prompt_id": ids[b],
                    "reason": "all_correct" if v >= 1 else "all_wrong" if v == 0 else "all_equal"})  # fmt: skip
    return np.flatnonzero(~flat).astype(np.int64), rej


# %% bug gspo_sequence_ratio: per-token log-ratios clamped to [-20, 20] (an overflow guard)
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    m = np.asarray(mask, dtype=np.float64)
    d = np.where(m > 0, np.clip(new - old, -20.0, 20.0), 0.0)
    return np.exp(d.sum(axis=1) / np.maximum(m.sum(axis=1), 1.0))


# %% bug gspo_sequence_ratio: float32 log-probs give a float32 ratio
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp), np.asarray(old_logp)
    m = np.asarray(mask) > 0
    d = np.where(m, new - old, 0)
    return np.exp(d.sum(axis=1) / np.maximum(m.sum(axis=1), 1)).astype(new.dtype)


# %% valid gspo_sequence_ratio: np.mean of the active log-ratios row by row (another summation order)
def gspo_sequence_ratio(new_logp, old_logp, mask):
    new, old = np.asarray(new_logp, dtype=np.float64), np.asarray(old_logp, dtype=np.float64)
    act = np.asarray(mask) != 0
    return np.array([math.exp(float(np.mean((n - o)[a]))) if a.any() else 1.0
                     for n, o, a in zip(new, old, act)], dtype=np.float64)  # fmt: skip


# %% bug gspo_objective: a response counts as empty when its first token is masked (right padding assumed)
def gspo_objective(new_logp, old_logp, advantages, mask, eps_low=3e-4, eps_high=4e-4):
    s = gspo_sequence_ratio(new_logp, old_logp, mask)
    A = np.asarray(advantages, dtype=np.float64)
    c = np.minimum(s * A, np.clip(s, 1 - eps_low, 1 + eps_high) * A)
    active = np.asarray(mask, dtype=np.float64)[:, 0] > 0
    return float(np.where(active, c, 0.0).mean())


# ---- mutants of the references that compute the same contract (tests/grading/mutation.py)

# %% equivalent reduce_loss: df89f11c35 masked = np.where(m > 0, ell, 0.0) -> np.where(m != 0, ...)
# The docstring's mask holds 0/1 (bool, int or float): m is 0.0 or 1.0 after the cast, and for
# those m > 0 and m != 0 are the same test. They differ only for a negative or NaN mask entry,
# which no input allowed by the docstring contains.

# %% equivalent reduce_loss: 4ee03ea350 ell.ndim != 2 -> ell.ndim > 2
# Differs only when per_token_loss and mask have the SAME shape and it is 0-D or 1-D (differing
# shapes raise in both). The docstring takes (G, T) arrays and names ValueError only for "shapes
# that differ", so a 1-D pair is outside the contract; what either version does with it is not a
# promise. (Same-shape 1-D "response" input even raises an AxisError, a ValueError, in both.)

# %% equivalent reduce_loss: 37d632d5d2 ell.ndim != 2 -> ell.ndim < 2
# As above for 3-D and higher: a same-shape (G, T, K) pair is not a (G, T) input and the docstring
# promises no error for it; every (G, T) input and every pair of differing shapes behaves the same.

# %% equivalent clip_higher_objective: 7663c6d7b6 if A.ndim == 1 -> if A.ndim <= 1
# Differs only for a 0-D (scalar) advantages argument, which then fails to index. The docstring
# allows (G,) or (G, T) advantages only; for those ndim == 1 and ndim <= 1 are the same test.

# %% equivalent clip_higher_objective: 1f27050c4f np.where(m > 0, j, 0.0) -> np.where(m != 0, j, 0.0)
# The mask is 0/1 (bool, int or float) by the docstring; for 0.0 and 1.0, m > 0 and m != 0 agree.

# %% equivalent overlong_reward: e945d3becd y <= start -> y < start
# The two differ only at |y| == L_max - L_cache, where the ramp branch gives
# (start - y) / L_cache = 0.0 / L_cache = +0.0 exactly: the same value as the zero branch.

# %% equivalent overlong_reward: 2a4f1c5698 y <= L_max -> y < L_max
# The two differ only at |y| == L_max, where the ramp gives (L_max - L_cache - L_max) / L_cache =
# -L_cache / L_cache = -1.0 exactly (integer lengths and limits below 2**53 are exact in float64):
# the same value as the over-limit branch.

# %% equivalent dynamic_sampling_filter: 07df30e7af value = r[b, 0] -> value = r[b, -1]
# value is read only for a row found flat (all entries == its first), so its last entry equals
# its first; with G == 0 both index an empty row and raise the same IndexError.

# %% equivalent dynamic_sampling_filter: ddc6026ea4 len(ids) != B -> len(ids) > B
# Differs only for prompt_ids shorter than B. The docstring takes "a length-B sequence" and
# promises no error for another length, so such an input is outside the contract.

# %% equivalent dynamic_sampling_filter: d2903a506f len(ids) != B -> len(ids) < B
# As above, for prompt_ids longer than B: not a length-B sequence, no documented behaviour.

# %% equivalent dynamic_sampling_filter: def893e558 r.ndim != 2 -> r.ndim < 2
# Differs only for 3-D and higher rewards. The docstring takes a (B, G) array and names the 1-D
# case as the ValueError; 0-D and 1-D still raise, every (B, G) input is unchanged.

# %% equivalent gspo_sequence_ratio: a573e62252 np.where(m > 0, ...) -> np.where(m != 0, ...)
# The mask is 0/1 (bool, int or float) by the docstring; for 0.0 and 1.0, m > 0 and m != 0 agree.

# %% equivalent gspo_objective: 8c3cc04faf mask.sum(axis=1) > 0 -> mask.sum(axis=1) != 0
# A row sum of a 0/1 mask is a non-negative count, so "> 0" and "!= 0" are the same test.
