# ruff: noqa: F811, F821, E731
"""Variants of lesson 9.4's graded functions (see tests/grading/harness.py for the format)."""


# %% bug masked_token_entropy: mean over every position, padding included
def masked_token_entropy(logits, mask):
    z = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask)
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("shapes")
    if not (m != 0).any():
        return math.nan
    with np.errstate(all="ignore"):
        zz = np.where(np.isfinite(z), z, -np.inf)
        zz = zz - np.nanmax(np.where(np.isfinite(zz), zz, -1e300), axis=-1, keepdims=True)
        logp = zz - np.log(np.exp(zz).sum(axis=-1, keepdims=True))
        p = np.exp(logp)
        H = -np.where(p > 0, p * logp, 0.0).sum(axis=-1)
    return float(np.nan_to_num(H).mean())


# %% bug masked_token_entropy: per-response means then a mean over responses (not the pooled token mean)
def masked_token_entropy(logits, mask):
    z = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("shapes")
    if not m.any():
        return math.nan
    if np.isnan(z[m]).any() or np.isposinf(z[m]).any() or not np.isfinite(z[m].max(-1)).all():
        raise ValueError("bad logits")
    per = []
    for n in range(z.shape[0]):
        if not m[n].any():
            continue
        zz = z[n][m[n]]
        zz = zz - zz.max(-1, keepdims=True)
        with np.errstate(all="ignore"):
            logp = zz - np.log(np.exp(zz).sum(-1, keepdims=True))
            p = np.exp(logp)
            per.append(float((-np.where(p > 0, p * logp, 0.0).sum(-1)).mean()))
    return float(np.mean(per))


# %% bug masked_token_entropy: 0 * log 0 computed as nan (no guard for -inf logits)
def masked_token_entropy(logits, mask):
    z = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("shapes")
    if not m.any():
        return math.nan
    zz = z[m]
    if np.isnan(zz).any() or np.isposinf(zz).any() or not np.isfinite(zz.max(-1)).all():
        raise ValueError("bad logits")
    zz = zz - zz.max(-1, keepdims=True)
    with np.errstate(all="ignore"):
        logp = zz - np.log(np.exp(zz).sum(-1, keepdims=True))
        return float((-(np.exp(logp) * logp).sum(-1)).mean())


# %% bug masked_token_entropy: no max-shift before exp (overflows for large logits)
def masked_token_entropy(logits, mask):
    z = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("shapes")
    if not m.any():
        return math.nan
    zz = z[m]
    if np.isnan(zz).any() or np.isposinf(zz).any() or not np.isfinite(zz.max(-1)).all():
        raise ValueError("bad logits")
    with np.errstate(all="ignore"):
        e = np.exp(zz)
        p = e / e.sum(-1, keepdims=True)
        return float((-np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(-1)).mean())


# %% valid masked_token_entropy: log-sum-exp per active position in a Python loop
def masked_token_entropy(logits, mask):
    z = np.array(logits, dtype=np.float64)
    m = np.array(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("logits (N, T, V) and mask (N, T) needed")
    total, count = 0.0, 0
    for n, t in zip(*np.nonzero(m)):
        row = z[n, t]
        if np.isnan(row).any() or np.isposinf(row).any() or not np.isfinite(row).any():
            raise ValueError("bad logits at an active position")
        fin = row[np.isfinite(row)]
        top = fin.max()
        lse = top + math.log(float(np.exp(fin - top).sum()))
        lp = fin - lse
        total += float(-(np.exp(lp) * lp).sum())
        count += 1
    return total / count if count else math.nan


# %% bug pass_at_k: the biased estimator 1 - (1 - c/n)**k
def pass_at_k(n, c, k):
    n_a, c_a = np.asarray(n), np.asarray(c)
    if (
        not (np.issubdtype(n_a.dtype, np.integer) and np.issubdtype(c_a.dtype, np.integer))
        or int(k) != k
    ):
        raise ValueError("integers")
    if k < 1 or np.any(k > n_a) or np.any(c_a < 0) or np.any(c_a > n_a):
        raise ValueError("range")
    out = 1.0 - (1.0 - c_a / n_a) ** k
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else np.asarray(out, dtype=np.float64)


# %% bug pass_at_k: the fraction correct c/n whatever k is (pass@1 reported as pass@k)
def pass_at_k(n, c, k):
    n_a, c_a = np.asarray(n), np.asarray(c)
    if (
        not (np.issubdtype(n_a.dtype, np.integer) and np.issubdtype(c_a.dtype, np.integer))
        or int(k) != k
    ):
        raise ValueError("integers")
    if k < 1 or np.any(k > n_a) or np.any(c_a < 0) or np.any(c_a > n_a):
        raise ValueError("range")
    out = c_a / n_a
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else np.asarray(out, dtype=np.float64)


# %% valid pass_at_k: the product without the clamp at 0 (the factor at i = n - c is exactly 0)
def pass_at_k(n, c, k):
    n_a, c_a = np.asarray(n), np.asarray(c)
    if (
        not (np.issubdtype(n_a.dtype, np.integer) and np.issubdtype(c_a.dtype, np.integer))
        or int(k) != k
    ):
        raise ValueError("integers")
    if k < 1 or np.any(k > n_a) or np.any(c_a < 0) or np.any(c_a > n_a):
        raise ValueError("range")
    n_b, c_b = np.broadcast_arrays(n_a.astype(np.int64), c_a.astype(np.int64))
    miss = np.ones(n_b.shape)
    for i in range(int(k)):
        miss = miss * (n_b - c_b - i) / (n_b - i)
    out = 1.0 - miss
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else out


# %% bug pass_at_k: the roles of c and n - c swapped (1 - C(c, k) / C(n, k))
def pass_at_k(n, c, k):
    n_a, c_a = np.asarray(n), np.asarray(c)
    if (
        not (np.issubdtype(n_a.dtype, np.integer) and np.issubdtype(c_a.dtype, np.integer))
        or int(k) != k
    ):
        raise ValueError("integers")
    if k < 1 or np.any(k > n_a) or np.any(c_a < 0) or np.any(c_a > n_a):
        raise ValueError("range")
    n_b, c_b = np.broadcast_arrays(n_a.astype(np.int64), c_a.astype(np.int64))
    miss = np.ones(n_b.shape)
    for i in range(int(k)):
        miss *= np.maximum(c_b - i, 0) / (n_b - i)
    out = 1.0 - miss
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else out


# %% bug pass_at_k: no validation (c > n or k > n go through)
def pass_at_k(n, c, k):
    n_b, c_b = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64))
    miss = np.ones(n_b.shape)
    with np.errstate(all="ignore"):
        for i in range(int(k)):
            miss *= np.maximum(n_b - c_b - i, 0) / (n_b - i)
    out = 1.0 - miss
    return float(out) if np.ndim(n) == 0 and np.ndim(c) == 0 else out


# %% valid pass_at_k: math.comb per entry (exact integers), 1.0 where n - c < k
def pass_at_k(n, c, k):
    def ints(x, name):
        a = np.asarray(x)
        if a.dtype == bool or not np.issubdtype(a.dtype, np.number):
            raise ValueError(name)
        if not np.issubdtype(a.dtype, np.integer) and not (
            np.all(np.isfinite(a)) and np.all(a == np.round(a))
        ):
            raise ValueError(name)
        return a.astype(np.int64)

    n_a, c_a = ints(n, "n"), ints(c, "c")
    if np.ndim(k) != 0 or int(k) != k:
        raise ValueError("k")
    k = int(k)
    n_b, c_b = np.broadcast_arrays(n_a, c_a)
    if k < 1 or np.any(k > n_b) or np.any(c_b < 0) or np.any(c_b > n_b):
        raise ValueError("range")
    out = np.empty(n_b.shape, dtype=np.float64)
    for idx in np.ndindex(n_b.shape):
        nn, cc = int(n_b[idx]), int(c_b[idx])
        out[idx] = 1.0 if nn - cc < k else 1.0 - math.comb(nn - cc, k) / math.comb(nn, k)
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else out


# %% bug informative_group_rate: groups taken as consecutive runs of rows (assumes sorted ids)
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("shapes")
    if r.size == 0:
        return math.nan
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    ends = np.r_[starts[1:], len(g)]
    return float(np.mean([r[s:e].max() > r[s:e].min() for s, e in zip(starts, ends)]))


# %% bug informative_group_rate: fraction of RESPONSES in informative groups, not of groups
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("shapes")
    if r.size == 0:
        return math.nan
    info = {i: r[g == i].max() > r[g == i].min() for i in np.unique(g)}
    return float(np.mean([info[i] for i in g]))


# %% bug informative_group_rate: compares with a tolerance (np.isclose), so 0.1+0.2 vs 0.3 is flat
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("shapes")
    if r.size == 0:
        return math.nan
    return float(np.mean([not np.isclose(r[g == i].max(), r[g == i].min()) for i in np.unique(g)]))


# %% bug informative_group_rate: std > 0 as the test, and ids assumed to be 0..K-1 (bincount)
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("shapes")
    if r.size == 0:
        return math.nan
    K = int(g.max()) + 1
    return float(np.mean([r[g == i].std() > 0 if (g == i).any() else False for i in range(K)]))


# %% valid informative_group_rate: a dict of sets, one pass over the rows
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("rewards and group must be (N,)")
    if r.size == 0:
        return math.nan
    seen = {}
    for gi, ri in zip(g.tolist(), r.tolist()):
        seen.setdefault(gi, set()).add(ri)
    return sum(len(v) > 1 for v in seen.values()) / len(seen)


# %% bug clip_fractions: counts clipping by the ratio alone, whatever the advantage sign
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    A = A[:, None] if A.shape == rho.shape[:1] else A
    if A.shape not in (rho.shape, (rho.shape[0], 1)):
        raise ValueError("advantages")
    n = int(m.sum())
    if n == 0:
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    low, high = (rho < 1 - eps_low) & m, (rho > 1 + eps_high) & m
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }


# %% bug clip_fractions: the sign branches swapped (low with A > 0, high with A < 0)
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    A = A[:, None] if A.shape == rho.shape[:1] else A
    if A.shape not in (rho.shape, (rho.shape[0], 1)):
        raise ValueError("advantages")
    n = int(m.sum())
    if n == 0:
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    low, high = (rho < 1 - eps_low) & (A > 0) & m, (rho > 1 + eps_high) & (A < 0) & m
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }


# %% bug clip_fractions: divides by all N*T positions instead of the active tokens
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    A = A[:, None] if A.shape == rho.shape[:1] else A
    if A.shape not in (rho.shape, (rho.shape[0], 1)):
        raise ValueError("advantages")
    if not m.any():
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    n = rho.size
    low, high = (rho < 1 - eps_low) & (A < 0) & m, (rho > 1 + eps_high) & (A > 0) & m
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }


# %% bug clip_fractions: non-strict inequalities (a ratio exactly at the bound counts as clipped)
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    A = A[:, None] if A.shape == rho.shape[:1] else A
    if A.shape not in (rho.shape, (rho.shape[0], 1)):
        raise ValueError("advantages")
    n = int(m.sum())
    if n == 0:
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    low, high = (rho <= 1 - eps_low) & (A < 0) & m, (rho >= 1 + eps_high) & (A > 0) & m
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }


# %% valid clip_fractions: counts in a Python loop over active tokens
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho = np.array(ratios, dtype=np.float64)
    A = np.array(advantages, dtype=np.float64)
    m = np.array(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("ratios and mask must share an (N, T) shape")
    if A.shape == (rho.shape[0],):
        A = np.repeat(A[:, None], rho.shape[1], axis=1)
    elif A.shape != rho.shape:
        raise ValueError("advantages must be (N,) or (N, T)")
    low = high = n = 0
    for i, t in zip(*np.nonzero(m)):
        n += 1
        low += A[i, t] < 0 and rho[i, t] < 1 - eps_low
        high += A[i, t] > 0 and rho[i, t] > 1 + eps_high
    if n == 0:
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    return {"low": float(low) / n, "high": float(high) / n, "region": float(low + high) / n}


# %% bug stop_rates: parse failures divided by all N (truncated responses counted in the denominator)
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons) or set(reasons) - {"eos", "length"}:
        raise ValueError("bad input")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = np.array([r == "eos" for r in reasons])
    return {
        "eos": eos.sum() / N,
        "truncation": (~eos).sum() / N,
        "parse_failure": float((eos & ~ok).sum() / N),
    }


# %% bug stop_rates: parse failures counted over every response, truncated ones included
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons) or set(reasons) - {"eos", "length"}:
        raise ValueError("bad input")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = np.array([r == "eos" for r in reasons])
    n_eos = int(eos.sum())
    pf = float((~ok).sum() / n_eos) if n_eos else math.nan
    return {"eos": n_eos / N, "truncation": (N - n_eos) / N, "parse_failure": pf}


# %% bug stop_rates: no degenerate guard (no EOS response divides by zero)
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons) or set(reasons) - {"eos", "length"}:
        raise ValueError("bad input")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = [r == "eos" for r in reasons]
    n_eos = sum(eos)
    return {"eos": n_eos / N, "truncation": (N - n_eos) / N,
            "parse_failure": sum(e and not o for e, o in zip(eos, ok)) / n_eos}  # fmt: skip


# %% bug stop_rates: unknown stop reasons counted as truncations instead of raising
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons):
        raise ValueError("lengths")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = np.array([r == "eos" for r in reasons])
    n_eos = int(eos.sum())
    return {"eos": n_eos / N, "truncation": (N - n_eos) / N,
            "parse_failure": float((eos & ~ok).sum() / n_eos) if n_eos else math.nan}  # fmt: skip


# %% valid stop_rates: collections.Counter and plain integers
def stop_rates(stop_reason, parse_ok):
    from collections import Counter

    reasons = [str(r) for r in stop_reason]
    ok = [bool(x) for x in np.asarray(parse_ok, dtype=bool).reshape(-1)]
    if len(ok) != len(reasons):
        raise ValueError("one parse flag per response")
    counts = Counter(reasons)
    if set(counts) - {"eos", "length"}:
        raise ValueError("stop reasons must be 'eos' or 'length'")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    fails = sum(1 for r, o in zip(reasons, ok) if r == "eos" and not o)
    n_eos = counts["eos"]
    return {"eos": n_eos / N, "truncation": counts["length"] / N,
            "parse_failure": fails / n_eos if n_eos else math.nan}  # fmt: skip


# %% bug length_by_bucket: np.digitize with right-open bins (the top edge L == edges[B] is dropped)
def length_by_bucket(lengths, rewards, edges):
    L, r, e = (np.asarray(x, dtype=np.float64) for x in (lengths, rewards, edges))
    if L.ndim != 1 or L.shape != r.shape or e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("bad input")
    B = len(e) - 1
    idx = np.digitize(L, e) - 1
    count = np.array([(idx == b).sum() for b in range(B)], dtype=np.int64)
    mean = np.array([r[idx == b].mean() if count[b] else np.nan for b in range(B)])
    return mean, count


# %% bug length_by_bucket: empty buckets get 0 instead of nan
def length_by_bucket(lengths, rewards, edges):
    L, r, e = (np.asarray(x, dtype=np.float64) for x in (lengths, rewards, edges))
    if L.ndim != 1 or L.shape != r.shape or e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("bad input")
    count, _ = np.histogram(L, bins=e)
    total, _ = np.histogram(L, bins=e, weights=r)
    return total / np.maximum(count, 1), count.astype(np.int64)


# %% bug length_by_bucket: lengths outside the edges clamped into the end buckets
def length_by_bucket(lengths, rewards, edges):
    L, r, e = (np.asarray(x, dtype=np.float64) for x in (lengths, rewards, edges))
    if L.ndim != 1 or L.shape != r.shape or e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("bad input")
    Lc = np.clip(L, e[0], e[-1])
    count, _ = np.histogram(Lc, bins=e)
    total, _ = np.histogram(Lc, bins=e, weights=r)
    mean = np.full(len(count), np.nan)
    mean[count > 0] = total[count > 0] / count[count > 0]
    return mean, count.astype(np.int64)


# %% bug length_by_bucket: no check that the edges increase
def length_by_bucket(lengths, rewards, edges):
    L, r, e = (np.asarray(x, dtype=np.float64) for x in (lengths, rewards, edges))
    if L.ndim != 1 or L.shape != r.shape or len(e) < 2:
        raise ValueError("bad input")
    B = len(e) - 1
    count = np.zeros(B, dtype=np.int64)
    total = np.zeros(B)
    for x, y in zip(L, r):
        for b in range(B):
            if e[b] <= x < e[b + 1] or (b == B - 1 and x == e[B]):
                count[b] += 1
                total[b] += y
                break
    mean = np.full(B, np.nan)
    mean[count > 0] = total[count > 0] / count[count > 0]
    return mean, count


# %% valid length_by_bucket: an explicit loop with the histogram convention written out
def length_by_bucket(lengths, rewards, edges):
    L = np.array(lengths, dtype=np.float64)
    r = np.array(rewards, dtype=np.float64)
    e = np.array(edges, dtype=np.float64)
    if L.ndim != 1 or L.shape != r.shape:
        raise ValueError("lengths and rewards must be (N,)")
    if e.ndim != 1 or e.size < 2 or np.any(e[1:] <= e[:-1]):
        raise ValueError("edges must be strictly increasing, >= 2 of them")
    B = e.size - 1
    count = np.zeros(B, dtype=np.int64)
    total = np.zeros(B, dtype=np.float64)
    for x, y in zip(L.tolist(), r.tolist()):
        for b in range(B):
            if e[b] <= x < e[b + 1] or (b == B - 1 and x == e[B]):
                count[b] += 1
                total[b] += y
                break
    mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return mean, count
