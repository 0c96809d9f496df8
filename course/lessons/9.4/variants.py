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
    def whole(x):
        a = np.asarray(x)
        if np.issubdtype(a.dtype, np.integer):
            return a
        if not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a) & (a % 1 == 0)):
            raise ValueError("integers")
        return a.astype(np.int64)

    n_a, c_a, k = whole(n), whole(c), whole(k)
    if k.ndim != 0:
        raise ValueError("one k")
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
    try:
        ok = np.ndim(k) == 0 and int(k) == k
    except (TypeError, ValueError, OverflowError):  # "2", nan, inf
        ok = False
    if not ok:
        raise ValueError("k must be one integer")
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
    if e.ndim != 1 or e.size < 2 or not np.all(e[1:] > e[:-1]):  # nan edges fail too
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


# %% bug masked_token_entropy: replaces nan by -inf in the caller's logits (in place: np.asarray does not copy float64)
def masked_token_entropy(logits, mask):
    z = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("shapes")
    if not m.any():
        return math.nan
    if np.isnan(z[m]).any() or np.isposinf(z[m]).any() or not np.isfinite(z[m].max(-1)).all():
        raise ValueError("bad logits")
    np.nan_to_num(z, copy=False, nan=-np.inf)  # "clean" the padding; ordinary inputs hold no nan
    zz = z[m] - z[m].max(-1, keepdims=True)
    with np.errstate(all="ignore"):
        logp = zz - np.log(np.exp(zz).sum(-1, keepdims=True))
        return float((-np.where(np.isfinite(logp), np.exp(logp) * logp, 0.0).sum(-1)).mean())


# %% bug masked_token_entropy: nan logits at active positions skipped (nanmax, isfinite filter) instead of raising
def masked_token_entropy(logits, mask):
    z = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("shapes")
    if not m.any():
        return math.nan
    zz = z[m]
    with np.errstate(all="ignore"):
        top = np.nanmax(np.where(np.isposinf(zz), np.nan, zz), axis=-1, keepdims=True)
        if not np.isfinite(top).all():
            raise ValueError("every active position needs a finite logit")
        zz = np.where(np.isfinite(zz), zz - top, -np.inf)
        logp = zz - np.log(np.exp(zz).sum(-1, keepdims=True))
        return float((-np.where(np.isfinite(logp), np.exp(logp) * logp, 0.0).sum(-1)).mean())


# %% bug masked_token_entropy: one max over the whole batch subtracted (positions far below it underflow to 0/0)
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
    zz = zz - zz.max()  # one shift for every position
    with np.errstate(all="ignore"):
        logp = zz - np.log(np.exp(zz).sum(-1, keepdims=True))
        return float((-np.where(np.isfinite(logp), np.exp(logp) * logp, 0.0).sum(-1)).mean())


# %% valid masked_token_entropy: H = logsumexp(z) - sum p z over finite logits (about 1e-16, not 0, for one-hot rows)
def masked_token_entropy(logits, mask):
    z = np.array(logits, dtype=np.float64)
    m = np.array(mask) != 0
    if z.ndim != 3 or m.shape != z.shape[:2]:
        raise ValueError("logits (N, T, V) and mask (N, T) needed")
    if not m.any():
        return math.nan
    zz = z[m]
    if np.isnan(zz).any() or np.isposinf(zz).any() or np.isneginf(zz).all(axis=-1).any():
        raise ValueError("bad logits at an active position")
    fin = np.isfinite(zz)
    top = np.max(np.where(fin, zz, -np.inf), axis=-1, keepdims=True)
    e = np.where(fin, np.exp(np.where(fin, zz - top, 0.0)), 0.0)
    lse = top[:, 0] + np.log(e.sum(-1))
    p = e / e.sum(-1, keepdims=True)
    H = lse - (p * np.where(fin, zz, 0.0)).sum(-1)
    return float(H.sum() / H.size)


# %% bug pass_at_k: non-whole float n or c truncated by astype(int) instead of raising
def pass_at_k(n, c, k):
    n_a, c_a = np.asarray(n), np.asarray(c)
    if n_a.dtype.kind not in "iuf" or c_a.dtype.kind not in "iuf" or int(k) != k:
        raise ValueError("integers")
    n_b, c_b = np.broadcast_arrays(n_a.astype(np.int64), c_a.astype(np.int64))
    k = int(k)
    if k < 1 or np.any(k > n_b) or np.any(c_b < 0) or np.any(c_b > n_b):
        raise ValueError("range")
    miss = np.ones(n_b.shape)
    for i in range(k):
        miss *= np.maximum(n_b - c_b - i, 0) / (n_b - i)
    out = 1.0 - miss
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else out


# %% bug pass_at_k: saturates to 1.0 where n - c <= k (n - c == k still has one all-wrong subset)
def pass_at_k(n, c, k):
    def whole(x):
        a = np.asarray(x)
        if a.dtype.kind not in "iuf" or not np.all(np.isfinite(a) & (a == np.round(a))):
            raise ValueError("integers")
        return a.astype(np.int64)

    n_a, c_a, k = whole(n), whole(c), whole(k)
    if k.ndim:
        raise ValueError("k")
    k = int(k)
    n_b, c_b = np.broadcast_arrays(n_a, c_a)
    if k < 1 or np.any(k > n_b) or np.any(c_b < 0) or np.any(c_b > n_b):
        raise ValueError("range")
    miss = np.ones(n_b.shape)
    for i in range(k):
        miss *= (n_b - c_b - i) / (n_b - i)
    out = np.where(n_b - c_b <= k, 1.0, 1.0 - miss)
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else out


# %% bug pass_at_k: a one-element array returned as a float (out.size == 1 taken for "scalar")
def pass_at_k(n, c, k):
    def whole(x):
        a = np.asarray(x)
        if a.dtype.kind not in "iuf" or not np.all(np.isfinite(a) & (a == np.round(a))):
            raise ValueError("integers")
        return a.astype(np.int64)

    n_a, c_a, k = whole(n), whole(c), whole(k)
    if k.ndim:
        raise ValueError("k")
    k = int(k)
    n_b, c_b = np.broadcast_arrays(n_a, c_a)
    if k < 1 or np.any(k > n_b) or np.any(c_b < 0) or np.any(c_b > n_b):
        raise ValueError("range")
    miss = np.ones(n_b.shape)
    for i in range(k):
        miss *= np.maximum(n_b - c_b - i, 0) / (n_b - i)
    out = 1.0 - miss
    return float(out[()] if out.ndim == 0 else out.reshape(-1)[0]) if out.size == 1 else out


# %% valid pass_at_k: log-space with math.lgamma (about 1e-16, not exactly 0, where c = 0), 1.0 where n - c < k
def pass_at_k(n, c, k):
    def whole(x, name):
        a = np.asarray(x)
        if a.dtype.kind not in "iuf":
            raise ValueError(f"{name}: not a number")
        if a.dtype.kind == "f" and not np.all(np.isfinite(a) & (np.floor(a) == a)):
            raise ValueError(f"{name}: not a whole number")
        return a.astype(np.int64)

    n_a, c_a, k_a = whole(n, "n"), whole(c, "c"), whole(k, "k")
    if k_a.ndim != 0:
        raise ValueError("k: one number")
    k = int(k_a)
    n_b, c_b = np.broadcast_arrays(n_a, c_a)
    if k < 1 or (n_b < k).any() or (c_b < 0).any() or (c_b > n_b).any():
        raise ValueError("range")
    lg = math.lgamma
    out = np.empty(n_b.shape)
    for idx in np.ndindex(n_b.shape):
        nn, cc = int(n_b[idx]), int(c_b[idx])
        if nn - cc < k:
            out[idx] = 1.0
        else:
            log_miss = lg(nn - cc + 1) - lg(nn - cc - k + 1) - lg(nn + 1) + lg(nn - k + 1)
            out[idx] = -math.expm1(log_miss)
    return float(out) if n_a.ndim == 0 and c_a.ndim == 0 else out


# %% bug informative_group_rate: spread compared with a tolerance (np.ptp > 1e-9): tiny nonzero spreads read as flat
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("shapes")
    if r.size == 0:
        return math.nan
    return float(np.mean([np.ptp(r[g == i]) > 1e-9 for i in np.unique(g)]))


# %% bug informative_group_rate: inputs ravelled, so a 2-D (N, 1) column is accepted instead of raising
def informative_group_rate(rewards, group):
    r, g = np.ravel(np.asarray(rewards, dtype=np.float64)), np.ravel(group)
    if r.shape != g.shape:
        raise ValueError("shapes")
    if r.size == 0:
        return math.nan
    return float(np.mean([r[g == i].max() > r[g == i].min() for i in np.unique(g)]))


# %% bug informative_group_rate: a batch of fewer than 2 responses returns nan (a lone response is 0.0)
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("shapes")
    if r.size < 2:
        return math.nan
    return float(np.mean([r[g == i].max() > r[g == i].min() for i in np.unique(g)]))


# %% valid informative_group_rate: vectorised with np.unique(return_inverse) and ufunc.at min/max
def informative_group_rate(rewards, group):
    r, g = np.asarray(rewards, dtype=np.float64), np.asarray(group)
    if r.ndim != 1 or r.shape != g.shape:
        raise ValueError("need two (N,) arrays")
    if r.size == 0:
        return math.nan
    _, inv = np.unique(g, return_inverse=True)
    K = int(inv.max()) + 1
    hi, lo = np.full(K, -np.inf), np.full(K, np.inf)
    np.maximum.at(hi, inv, r)
    np.minimum.at(lo, inv, r)
    return float(np.count_nonzero(hi > lo) / K)


# %% bug clip_fractions: the no-active-token dict lacks "region" (only low and high set to nan)
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    if A.shape == rho.shape[:1]:
        A = A[:, None]
    elif A.shape != rho.shape:
        raise ValueError("advantages")
    n = int(m.sum())
    if n == 0:
        return {"low": math.nan, "high": math.nan}
    low, high = (rho < 1 - eps_low) & (A < 0) & m, (rho > 1 + eps_high) & (A > 0) & m
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }


# %% bug clip_fractions: mean of per-row fractions (rows with few active tokens weigh as much as long ones)
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    if A.shape == rho.shape[:1]:
        A = A[:, None]
    elif A.shape != rho.shape:
        raise ValueError("advantages")
    rows = m.any(axis=1)
    if not rows.any():
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    cnt = m.sum(axis=1)[rows]
    low, high = (rho < 1 - eps_low) & (A < 0) & m, (rho > 1 + eps_high) & (A > 0) & m
    f = lambda x: float(np.mean(x.sum(axis=1)[rows] / cnt))
    return {"low": f(low), "high": f(high), "region": f(low | high)}


# %% bug clip_fractions: any advantages that broadcast to (N, T) accepted ((1,), (T,), scalar) instead of raising
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A, m = np.asarray(ratios, float), np.asarray(advantages, float), np.asarray(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("shapes")
    A = A[:, None] if A.shape == rho.shape[:1] else A
    A = np.broadcast_to(A, rho.shape)  # raises only when broadcasting fails
    n = int(m.sum())
    if n == 0:
        return {"low": math.nan, "high": math.nan, "region": math.nan}
    low, high = (rho < 1 - eps_low) & (A < 0) & m, (rho > 1 + eps_high) & (A > 0) & m
    return {
        "low": float(low.sum() / n),
        "high": float(high.sum() / n),
        "region": float((low | high).sum() / n),
    }


# %% valid clip_fractions: region as the float sum low + high (can differ from (low | high) / n by an ulp)
def clip_fractions(ratios, advantages, mask, eps_low=0.2, eps_high=0.2):
    rho, A = np.array(ratios, dtype=np.float64), np.array(advantages, dtype=np.float64)
    m = np.array(mask) != 0
    if rho.ndim != 2 or m.shape != rho.shape:
        raise ValueError("ratios and mask must share an (N, T) shape")
    if A.shape == (rho.shape[0],):
        A = np.repeat(A[:, None], rho.shape[1], axis=1)
    elif A.shape != rho.shape:
        raise ValueError("advantages must be (N,) or (N, T)")
    n = np.count_nonzero(m)
    if n == 0:
        return dict.fromkeys(("low", "high", "region"), math.nan)
    low = np.count_nonzero(m & (A < 0) & (rho < 1 - eps_low)) / n
    high = np.count_nonzero(m & (A > 0) & (rho > 1 + eps_high)) / n
    return {"low": float(low), "high": float(high), "region": float(low + high)}


# %% bug stop_rates: stop reasons compared with `is` (identity): strings made at run time never match "eos"
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons):
        raise ValueError("lengths")
    if set(reasons) - {"eos", "length"}:
        raise ValueError("reasons")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = np.array([r is "eos" for r in reasons], dtype=bool)  # noqa: F632
    n_eos = int(eos.sum())
    return {"eos": n_eos / N, "truncation": (N - n_eos) / N,
            "parse_failure": float((eos & ~ok).sum() / n_eos) if n_eos else math.nan}  # fmt: skip


# %% bug stop_rates: len(parse_ok) != N not checked (zip stops at the shorter of the two)
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), [bool(x) for x in np.asarray(parse_ok).reshape(-1)]
    if set(reasons) - {"eos", "length"}:
        raise ValueError("reasons")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    n_eos = reasons.count("eos")
    fails = sum(r == "eos" and not o for r, o in zip(reasons, ok))
    return {"eos": n_eos / N, "truncation": (N - n_eos) / N,
            "parse_failure": fails / n_eos if n_eos else math.nan}  # fmt: skip


# %% bug stop_rates: truncated responses' flags set to True in the caller's bool array (in place)
def stop_rates(stop_reason, parse_ok):
    reasons, ok = list(stop_reason), np.asarray(parse_ok, dtype=bool).reshape(-1)
    if len(ok) != len(reasons) or set(reasons) - {"eos", "length"}:
        raise ValueError("bad input")
    N = len(reasons)
    if N == 0:
        return {"eos": math.nan, "truncation": math.nan, "parse_failure": math.nan}
    eos = np.array([r == "eos" for r in reasons], dtype=bool)
    ok[~eos] = True  # "ignore" the truncated ones: writes into the caller's array
    n_eos = int(eos.sum())
    return {"eos": n_eos / N, "truncation": (N - n_eos) / N,
            "parse_failure": float((~ok).sum() / n_eos) if n_eos else math.nan}  # fmt: skip


# %% valid stop_rates: truncation as 1 - eos (an ulp away from (N - n_eos) / N)
def stop_rates(stop_reason, parse_ok):
    reasons = [str(r) for r in stop_reason]
    ok = np.array(parse_ok, dtype=bool).ravel()
    if ok.size != len(reasons):
        raise ValueError("one parse flag per response")
    if not set(reasons) <= {"eos", "length"}:
        raise ValueError("stop reasons must be 'eos' or 'length'")
    if not reasons:
        return dict.fromkeys(("eos", "truncation", "parse_failure"), math.nan)
    eos = np.array([r == "eos" for r in reasons], dtype=bool)
    rate = float(eos.mean())
    pf = float(np.mean(~ok[eos])) if eos.any() else math.nan
    return {"eos": rate, "truncation": 1.0 - rate, "parse_failure": pf}


# %% bug length_by_bucket: nan edges accepted (the check np.any(np.diff(e) <= 0) is False for nan)
def length_by_bucket(lengths, rewards, edges):
    L, r, e = (np.asarray(x, dtype=np.float64) for x in (lengths, rewards, edges))
    if L.ndim != 1 or L.shape != r.shape or e.ndim != 1 or len(e) < 2 or np.any(np.diff(e) <= 0):
        raise ValueError("bad input")
    count, _ = np.histogram(L, bins=e)
    total, _ = np.histogram(L, bins=e, weights=r)
    mean = np.full(len(count), np.nan)
    mean[count > 0] = total[count > 0] / count[count > 0]
    return mean, count.astype(np.int64)


# %% bug length_by_bucket: means in the rewards' dtype (float32 for float32 rewards), not float64
def length_by_bucket(lengths, rewards, edges):
    L, e = np.asarray(lengths, dtype=np.float64), np.asarray(edges, dtype=np.float64)
    r = np.asarray(rewards)
    r = r if r.dtype.kind == "f" else r.astype(np.float64)
    if L.ndim != 1 or L.shape != r.shape or e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("bad input")
    count, _ = np.histogram(L, bins=e)
    total, _ = np.histogram(L, bins=e, weights=r)
    mean = np.full(len(count), np.nan, dtype=r.dtype)
    mean[count > 0] = total[count > 0] / count[count > 0]
    return mean, count.astype(np.int64)


# %% bug length_by_bucket: lengths truncated to integers before bucketing (fractional lengths move down)
def length_by_bucket(lengths, rewards, edges):
    L = np.asarray(lengths, dtype=np.float64).astype(np.int64).astype(np.float64)
    r, e = np.asarray(rewards, dtype=np.float64), np.asarray(edges, dtype=np.float64)
    if L.ndim != 1 or L.shape != r.shape or e.ndim != 1 or len(e) < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("bad input")
    count, _ = np.histogram(L, bins=e)
    total, _ = np.histogram(L, bins=e, weights=r)
    mean = np.full(len(count), np.nan)
    mean[count > 0] = total[count > 0] / count[count > 0]
    return mean, count.astype(np.int64)


# %% valid length_by_bucket: np.searchsorted + np.bincount (another summation order than np.histogram's)
def length_by_bucket(lengths, rewards, edges):
    L = np.asarray(lengths, dtype=np.float64)
    r = np.asarray(rewards, dtype=np.float64)
    e = np.asarray(edges, dtype=np.float64)
    if L.ndim != 1 or L.shape != r.shape:
        raise ValueError("lengths and rewards must be (N,)")
    if e.ndim != 1 or e.size < 2 or not (e[1:] > e[:-1]).all():
        raise ValueError("edges must be >= 2 strictly increasing values")
    B = e.size - 1
    idx = np.searchsorted(e, L, side="right") - 1
    idx[L == e[-1]] = B - 1
    keep = (L >= e[0]) & (L <= e[-1])
    count = np.bincount(idx[keep], minlength=B).astype(np.int64)
    total = np.bincount(idx[keep], weights=r[keep], minlength=B)
    mean = np.full(B, np.nan)
    np.divide(total, count, out=mean, where=count > 0)
    return mean, count


# %% bug choose_intervention: harms ignored (a rerun with a new label is still acceptable)
def choose_intervention(labels, after):
    best, best_score = None, None
    for rank, key in enumerate(INTERVENTIONS):
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        delays = sum(lab in later and later[lab] >= labels[lab] + WINDOW for lab in labels)
        if fixes == 0:
            continue
        score = (fixes, delays, -rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


# %% bug choose_intervention: a delay needs more than WINDOW steps (> instead of >=)
def choose_intervention(labels, after):
    best, best_score = None, None
    for rank, key in enumerate(INTERVENTIONS):
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        delays = sum(lab in later and later[lab] > labels[lab] + WINDOW for lab in labels)
        harms = any(lab not in labels for lab in later)
        if fixes == 0 or harms:
            continue
        score = (fixes, delays, -rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


# %% bug choose_intervention: ties go to the last intervention in INTERVENTIONS, not the first
def choose_intervention(labels, after):
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
        score = (fixes, delays, rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


# %% bug choose_intervention: the first acceptable intervention in order, not the one with the most fixes
def choose_intervention(labels, after):
    best = None
    for key in INTERVENTIONS:
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        harms = any(lab not in labels for lab in later)
        if fixes == 0 or harms:
            continue
        return key
    return best


# %% bug choose_intervention: delays ignored: fixes, then the order
def choose_intervention(labels, after):
    best, best_score = None, None
    for rank, key in enumerate(INTERVENTIONS):
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        harms = any(lab not in labels for lab in later)
        if fixes == 0 or harms:
            continue
        score = (fixes, -rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


# %% bug choose_intervention: any later onset counts as a delay (one step later is enough)
def choose_intervention(labels, after):
    best, best_score = None, None
    for rank, key in enumerate(INTERVENTIONS):
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        delays = sum(lab in later and later[lab] > labels[lab] for lab in labels)
        harms = any(lab not in labels for lab in later)
        if fixes == 0 or harms:
            continue
        score = (fixes, delays, -rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


# %% bug choose_intervention: "none" returned when nothing is acceptable instead of None
def choose_intervention(labels, after):
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
    return best if best is not None else "none"


# %% bug choose_intervention: the delay measured the wrong way round (an earlier onset in the rerun counts as a delay)
def choose_intervention(labels, after):
    best, best_score = None, None
    for rank, key in enumerate(INTERVENTIONS):
        if key not in after:
            continue
        later = after[key]["labels"]
        fixes = sum(lab not in later for lab in labels)
        delays = sum(lab in later and labels[lab] >= later[lab] + WINDOW for lab in labels)
        harms = any(lab not in labels for lab in later)
        if fixes == 0 or harms:
            continue
        score = (fixes, delays, -rank)
        if best_score is None or score > best_score:
            best, best_score = key, score
    return best


# %% bug choose_intervention: walks after in its own order (ties by the evidence's order) and accepts keys outside INTERVENTIONS
def choose_intervention(labels, after):
    best, best_score = None, None
    for key, entry in after.items():
        later = entry["labels"]
        fixes = sum(lab not in later for lab in labels)
        delays = sum(lab in later and later[lab] >= labels[lab] + WINDOW for lab in labels)
        if fixes == 0 or any(lab not in labels for lab in later):
            continue
        if best_score is None or (fixes, delays) > best_score:
            best, best_score = key, (fixes, delays)
    return best


# %% valid choose_intervention: the candidates as tuples, max with a key (order by a negated index)
def choose_intervention(labels, after):
    order = list(INTERVENTIONS)
    candidates = []
    for key, entry in after.items():
        if key not in INTERVENTIONS:
            continue
        later = set(entry["labels"])
        fixed = set(labels) - later
        if not fixed or later - set(labels):
            continue
        delayed = [
            lab for lab in set(labels) & later if entry["labels"][lab] - labels[lab] >= WINDOW
        ]
        candidates.append((len(fixed), len(delayed), -order.index(key), key))
    return max(candidates)[3] if candidates else None


# %% valid choose_intervention: a stable sort on the tie-break, then on the counts
def choose_intervention(labels, after):
    rows = []
    for key in INTERVENTIONS:
        if key in after:
            later = after[key]["labels"]
            if any(lab not in labels for lab in later):
                continue
            fixes = len([lab for lab in labels if lab not in later])
            delays = len(
                [lab for lab in labels if lab in later and later[lab] - WINDOW >= labels[lab]]
            )
            if fixes:
                rows.append((key, fixes, delays))
    rows.sort(key=lambda r: (r[1], r[2]), reverse=True)  # stable: INTERVENTIONS order among ties
    return rows[0][0] if rows else None


# %% equivalent masked_token_entropy: bb8938bf32 np.where(finite, logp, 0.0) -> np.where(finite, logp, 1.0)
# The inner where only keeps p * logp finite where logp is -inf (p = 0 there); the outer
# np.where(finite, ..., 0.0) replaces exactly those entries by 0.0 whatever the inner value was, so
# any constant in the inner where gives the same plogp for every input.
# %% equivalent masked_token_entropy: dd319a8501 np.where(finite, logp, 0.0) -> np.where(finite, logp, -1.0)
# Same as bb8938bf32: the entries where the inner constant is used are discarded by the outer where.
# %% equivalent masked_token_entropy: 39b8dcb8dc active = mask != 0 -> active = mask > 0
# The docstring allows masks of bool or 0/1 numbers only; on {0, 1, False, True} (any dtype, -0.0
# included) "!= 0" and "> 0" select the same positions. They differ only for negative mask values,
# which no allowed input holds.
# %% equivalent masked_token_entropy: 02fd00d425 isnan(z).any() or isposinf(z).any() -> ... and ...
# The nan/+inf check is redundant: z.max(axis=-1) propagates a nan and returns +inf for a +inf entry,
# so an active position holding either makes zmax non-finite and the next check raises the same
# ValueError (the hidden bad-logits test checks nan alone, +inf alone and both).
# %% equivalent masked_token_entropy: 7f7399f8ac z.max(axis=-1) -> z.max(axis=1)
# z = logits[active] indexes a 3-D array with a 2-D bool mask, so z is always 2-D (M, V): axis 1 is
# axis -1 for every input that reaches this line (non-3-D logits raise before).
# %% equivalent masked_token_entropy: 2fc64aac4e z.max(axis=-1) -> z.max(axis=+1)
# +1 == 1: as 7f7399f8ac, z is always (M, V).
# %% equivalent masked_token_entropy: de4b0dcf07 np.exp(shifted).sum(axis=-1) -> sum(axis=1)
# shifted = z - zmax is (M, V) like z: axis 1 is the last axis.
# %% equivalent masked_token_entropy: f71ec2f0a3 np.exp(shifted).sum(axis=-1) -> sum(axis=+1)
# As de4b0dcf07 (+1 == 1).
# %% equivalent masked_token_entropy: daebe0c5f8 -plogp.sum(axis=-1) -> -plogp.sum(axis=1)
# plogp is (M, V) like z: axis 1 is the last axis.
# %% equivalent masked_token_entropy: 632d1676b6 -plogp.sum(axis=-1) -> -plogp.sum(axis=+1)
# As daebe0c5f8 (+1 == 1).
# %% equivalent pass_at_k: 5d99326955 np.maximum(n_b - c_b - i, 0) -> np.maximum(n_b - c_b - i, -1)
# n - c - i falls by 1 per factor from n - c >= 0, so before it can be negative the factor at
# i = n - c is exactly 0 / (n - i) = 0.0 and miss stays 0 (or -0.0) after it: 1 - miss is exactly
# 1.0 either way (the clamp is never what makes the product 0; the planted "valid" variant without
# the clamp passes for the same reason).
# %% equivalent pass_at_k: d7d9ee9f1a n_arr.ndim == 0 -> n_arr.ndim <= 0
# ndim is never negative: "<= 0" and "== 0" agree on every array.
# %% equivalent pass_at_k: c4d0ff5321 c_arr.ndim == 0 -> c_arr.ndim <= 0
# As d7d9ee9f1a.
# %% equivalent pass_at_k: 5fd030b288 k_arr.ndim != 0 -> k_arr.ndim > 0
# ndim is never negative: "> 0" and "!= 0" agree on every array.
# %% equivalent informative_group_rate: e9b6af2d81 if r.size == 0 -> if r.size == -1
# With the guard never taken, N == 0 reaches np.mean([]) over no groups, which is nan (with a
# RuntimeWarning on stderr, which the course's stderr policy never grades): float(nan) is the
# documented result. Every N > 0 behaves as the reference.
# %% equivalent informative_group_rate: 10adab6d6e if r.size == 0 -> if r.size < 0
# As e9b6af2d81: the guard is never taken and N == 0 still returns nan.
# %% equivalent informative_group_rate: 8e48335f06 if r.size == 0 -> if r.size <= 0
# size is never negative: "<= 0" and "== 0" agree.
# %% equivalent informative_group_rate: da31336228 max > min -> max != min
# max >= min always holds for the documented finite rewards, so "!=" and ">" agree (they could
# differ only for nan, which the docstring excludes).
# %% equivalent clip_fractions: 1a187051b6 if n == 0 -> if n == -1
# With no active token and the guard never taken, low.sum() / n is numpy's 0 / 0 = nan (a
# RuntimeWarning on stderr, not graded), so all three keys are float nan exactly as documented.
# %% equivalent clip_fractions: b062da6038 if n == 0 -> if n < 0
# As 1a187051b6: n is a count, never negative; n == 0 gives nan through 0 / 0.
# %% equivalent clip_fractions: 001f562d8e if n == 0 -> if n <= 0
# n is a count, never negative: "<= 0" and "== 0" agree.
# %% equivalent clip_fractions: 79e8cb8b4a (rho < lo) & (A < 0) -> (rho < lo) // (A < 0)
# On bool arrays floor division gives 1 // 1 = 1, 0 // 1 = 0 and x // 0 = 0 (numpy's integer
# division by zero, a RuntimeWarning only): the same 0/1 values as "&", so the counts are equal.
# %% equivalent clip_fractions: 27b4510286 (A < 0) & active -> (A < 0) // active
# As 79e8cb8b4a: bool // bool equals bool & bool elementwise (broadcasting (N, 1) against (N, T)
# is the same for both operators).
# %% equivalent clip_fractions: aa0aa1ede4 (rho > hi) & (A > 0) -> (rho > hi) // (A > 0)
# As 79e8cb8b4a.
# %% equivalent clip_fractions: 3d32ae0867 (A > 0) & active -> (A > 0) // active
# As 27b4510286.
# %% equivalent clip_fractions: b718c92cd2 (rho < lo) & (A < 0) -> (rho < lo) * (A < 0)
# The product of two bool arrays is their logical and (numpy keeps bool for bool * bool).
# %% equivalent clip_fractions: 44614d3003 (A < 0) & active -> (A < 0) * active
# As b718c92cd2.
# %% equivalent clip_fractions: 4ca6016f80 (rho > hi) & (A > 0) -> (rho > hi) * (A > 0)
# As b718c92cd2.
# %% equivalent clip_fractions: cd26549f6e (A > 0) & active -> (A > 0) * active
# As b718c92cd2.
# %% equivalent clip_fractions: d7cbe106ed (low | high) -> (low + high)
# For bool arrays numpy's "+" is the logical or, so the region count is the same.
# %% equivalent clip_fractions: 075192e659 (low | high) -> (low ^ high)
# low needs A < 0 and high needs A > 0 at the same token, so they are never both true: xor == or.
# %% equivalent clip_fractions: 05f28245ea active = m != 0 -> active = m > 0
# The docstring allows masks of bool or 0/1 only; on those "!= 0" and "> 0" agree (as the
# masked_token_entropy mutant 39b8dcb8dc).
# %% equivalent stop_rates: ba927ccd12 reshape(-1) -> reshape(-2)
# NumPy (2.4, the pinned version) treats any negative size in reshape as "the unknown dimension",
# so reshape(-2) flattens exactly like reshape(-1) for every parse_ok.
# %% equivalent stop_rates: 5f4b3efa13 reshape(-1) -> reshape(~1)
# ~1 == -2: as ba927ccd12.
# %% equivalent stop_rates: 470e12cd93 (eos & ~ok) -> (eos // ~ok)
# Bool floor division: 1 // 1 = 1, 0 // 1 = 0, x // 0 = 0 (RuntimeWarning only): the same values as
# "&", so the parse-failure count is equal.
# %% equivalent stop_rates: 186f00b6af (eos & ~ok) -> (eos * ~ok)
# The product of two bool arrays is their logical and.
# %% equivalent stop_rates: 999ae144ed if N == 0 -> if N <= 0
# N is a length, never negative: "<= 0" and "== 0" agree.
# %% equivalent stop_rates: fd07c620df r == "eos" -> r <= "eos"
# The line runs after every reason was checked to be "eos" or "length"; "length" <= "eos" is False
# ("l" > "e") and "eos" <= "eos" is True, so "<=" picks out the same responses as "==".
# %% equivalent length_by_bucket: aa86729a22 count > 0 -> count != 0
# count comes from np.histogram and is never negative: "!= 0" and "> 0" agree.
# %% equivalent length_by_bucket: 0c5ac07ca6 L.shape != r.shape -> L.shape > r.shape
# When the shapes differ but the mutated test lets them through, np.histogram(L, bins,
# weights=r) raises the documented ValueError itself ("weights should have the same shape as a"),
# for every pair of shapes; equal shapes behave as the reference.
# %% equivalent length_by_bucket: bfa22a7750 L.shape != r.shape -> L.shape is r.shape
# As 0c5ac07ca6: every shape mismatch still raises ValueError inside np.histogram.
# %% equivalent length_by_bucket: 81f93f6326 L.shape != r.shape -> L.shape < r.shape
# As 0c5ac07ca6.
# %% equivalent length_by_bucket: 15ac25116a e.ndim != 1 -> e.ndim < 1
# A multi-dimensional edges array that passes the mutated checks (len >= 2, np.diff along the last
# axis all > 0, or empty) reaches np.histogram, which raises ValueError ("bins must be 1d"): the
# documented error for every input.


# %% bug diagnose: reports the row index t, not the step number (one step early: steps start at 1)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append({"label": label, "step": int(t), "metrics": list(keys)})
                break
    return findings


# %% bug diagnose: KL blow-up read from the ratio tail (ratio_max_final) instead of the KL to the reference
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["ratio_max_final"], t) > 2.0),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: entropy collapse from the entropy alone (no held-out pass@k check)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: the held-out check reads the run's last evaluation (the future) instead of the latest one at step t
def diagnose(log):
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
        at = evals["eval_step"] <= np.inf
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: NaN counted as 0 in a window (np.nan_to_num) instead of ignored
def diagnose(log):
    steps = {k: np.asarray(v, dtype=np.float64) for k, v in log.get("steps", {}).items()}
    evals = {k: np.asarray(v, dtype=np.float64) for k, v in log.get("evals", {}).items()}
    w = WINDOW
    n = len(steps.get("step", ()))

    def window(x, t):  # NaN-ignoring mean of x[t-w+1 .. t]
        v = np.nan_to_num(x[t - w + 1 : t + 1])
        return v.mean() if v.size else math.nan

    def summed(*keys):  # row-wise sum; NaN where any term is NaN
        return sum(steps[k] for k in keys)

    def heldout_dropped(t):  # latest held-out pass@4 at or before step t vs the first one
        at = evals["eval_step"] <= steps["step"][t]
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: a window of w + 1 steps (t - w .. t)
def diagnose(log):
    steps = {k: np.asarray(v, dtype=np.float64) for k, v in log.get("steps", {}).items()}
    evals = {k: np.asarray(v, dtype=np.float64) for k, v in log.get("evals", {}).items()}
    w = WINDOW
    n = len(steps.get("step", ()))

    def window(x, t):  # NaN-ignoring mean of x[t-w+1 .. t]
        v = x[max(0, t - w) : t + 1]
        v = v[~np.isnan(v)]
        return v.mean() if v.size else math.nan

    def summed(*keys):  # row-wise sum; NaN where any term is NaN
        return sum(steps[k] for k in keys)

    def heldout_dropped(t):  # latest held-out pass@4 at or before step t vs the first one
        at = evals["eval_step"] <= steps["step"][t]
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: verifier-failure threshold tuned to the visible runs (0.2: the seed-0 fault fails 30% of calls)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.2,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: reward hacking from the reward alone (no audit accuracy)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02,
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: length growth from the mean length alone (no truncation check)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: truncation compared with 0.2 itself, not the start of the run + 0.2
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t) >= 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: length growth at a window strictly above 1.2 x the start (>, where the table says >=)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) > 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% bug diagnose: length growth read as 1.2 x the start in truncation too (relative, where the table adds 0.2)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= 1.2 * window(steps["truncation_rate"], w - 1)
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings


# %% valid diagnose: vectorised, trailing sums and counts by cumulative sums, the first step by argmax
def diagnose(log):
    st = {k: np.asarray(v, dtype=float) for k, v in log.get("steps", {}).items()}
    ev = {k: np.asarray(v, dtype=float) for k, v in log.get("evals", {}).items()}
    n, w = len(st.get("step", [])), WINDOW
    if n < w:
        return []

    def trail(x):  # (n,) trailing NaN-ignoring means; entries before the first full window NaN
        ok = ~np.isnan(x)
        c = np.concatenate([[0.0], np.cumsum(np.where(ok, x, 0.0))])
        k = np.concatenate([[0], np.cumsum(ok)])
        s, m = c[w:] - c[:-w], k[w:] - k[:-w]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(m > 0, s / np.maximum(m, 1), np.nan)
        return np.concatenate([np.full(w - 1, np.nan), out])

    def have(*keys):
        return all(k in st for k in keys)

    conds = {}
    if have("entropy") and {"eval_step", "heldout_pass@4"} <= ev.keys():
        h = trail(st["entropy"])
        held = ev["heldout_pass@4"]
        latest = np.searchsorted(ev["eval_step"], st["step"], side="right") - 1
        dropped = np.array([i >= 0 and held[i] < 0.9 * held[0] for i in latest])
        conds["entropy_collapse"] = ((h < 0.5 * h[w - 1]) & dropped, ["entropy", "heldout_pass@4"])
    if have("kl_ref"):
        conds["kl_blowup"] = (trail(st["kl_ref"]) > 0.3, ["kl_ref"])
    if have("clip_low_reused", "clip_high_reused"):
        conds["stale_rollouts"] = (
            trail(st["clip_low_reused"] + st["clip_high_reused"]) > 0.04,
            ["clip_low_reused", "clip_high_reused"],
        )
    if have("reward", "accuracy"):
        r, a = trail(st["reward"]), trail(st["accuracy"])
        conds["reward_hacking"] = (
            (r >= r[w - 1] + 0.02) & (a <= a[w - 1] - 0.1),
            ["reward", "accuracy"],
        )
    if have("informative_rate"):
        conds["signal_starvation"] = (trail(st["informative_rate"]) < 0.2, ["informative_rate"])
    if have("verifier_error_rate", "parse_fail_rate"):
        conds["verifier_failure"] = (
            trail(st["verifier_error_rate"] + st["parse_fail_rate"]) >= 0.05,
            ["verifier_error_rate", "parse_fail_rate"],
        )
    if have("len_mean", "truncation_rate"):
        ln, tr = trail(st["len_mean"]), trail(st["truncation_rate"])
        conds["length_growth"] = (
            (ln >= 1.2 * ln[w - 1]) & (tr >= tr[w - 1] + 0.2),
            ["len_mean", "truncation_rate"],
        )
    out = []
    for label in LABELS:
        if label in conds and conds[label][0].any():
            t = int(np.argmax(conds[label][0]))
            out.append(
                {"label": label, "step": int(st["step"][t]), "metrics": list(conds[label][1])}
            )
    return out[::-1]


# %% valid diagnose: one pass over the steps with every rule evaluated at each, plain Python lists
def diagnose(log):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    n = len(steps.get("step", []))

    def mean(xs):
        xs = [x for x in xs if x == x]
        return sum(xs) / len(xs) if xs else float("nan")

    def win(key, t, other=None):
        xs = steps[key][t - WINDOW + 1 : t + 1]
        if other:
            xs = [a + b for a, b in zip(xs, steps[other][t - WINDOW + 1 : t + 1])]
        return mean(xs)

    seen = {}
    for t in range(WINDOW - 1, n):
        s = steps["step"][t]
        checks = []
        if "entropy" in steps and "heldout_pass@4" in evals and "eval_step" in evals:
            held = [p for p, e in zip(evals["heldout_pass@4"], evals["eval_step"]) if e <= s]
            checks.append(
                (
                    "entropy_collapse",
                    ["entropy", "heldout_pass@4"],
                    win("entropy", t) < 0.5 * win("entropy", WINDOW - 1)
                    and bool(held)
                    and held[-1] < 0.9 * held[0],
                )
            )
        if "kl_ref" in steps:
            checks.append(("kl_blowup", ["kl_ref"], win("kl_ref", t) > 0.3))
        if "clip_low_reused" in steps and "clip_high_reused" in steps:
            checks.append(
                (
                    "stale_rollouts",
                    ["clip_high_reused", "clip_low_reused"],
                    win("clip_low_reused", t, "clip_high_reused") > 0.04,
                )
            )
        if "reward" in steps and "accuracy" in steps:
            checks.append(
                (
                    "reward_hacking",
                    ["accuracy", "reward"],
                    win("reward", t) >= win("reward", WINDOW - 1) + 0.02
                    and win("accuracy", t) <= win("accuracy", WINDOW - 1) - 0.1,
                )
            )
        if "informative_rate" in steps:
            checks.append(
                ("signal_starvation", ["informative_rate"], win("informative_rate", t) < 0.2)
            )
        if "verifier_error_rate" in steps and "parse_fail_rate" in steps:
            checks.append(
                (
                    "verifier_failure",
                    ["parse_fail_rate", "verifier_error_rate"],
                    win("verifier_error_rate", t, "parse_fail_rate") >= 0.05,
                )
            )
        if "len_mean" in steps and "truncation_rate" in steps:
            checks.append(
                (
                    "length_growth",
                    ["truncation_rate", "len_mean"],
                    win("len_mean", t) >= 1.2 * win("len_mean", WINDOW - 1)
                    and win("truncation_rate", t) >= win("truncation_rate", WINDOW - 1) + 0.2,
                )
            )
        for label, keys, holds in checks:
            if holds and label not in seen:
                seen[label] = {"label": label, "step": int(s), "metrics": keys}
    return list(seen.values())


# %% bug diagnose: the single-metric baseline (helpers.clinic.single_metric_baseline): each label from one metric
def diagnose(log):
    from helpers.clinic import single_metric_baseline

    return single_metric_baseline(log)


# %% bug diagnose: the verifier-failure sum without parse_fail_rate (verifier_error_rate alone; parse failures never count)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(steps["verifier_error_rate"], t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: an evaluation made exactly at step t is left out (eval_step < t)
def diagnose(log):
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
        at = evals["eval_step"] < steps["step"][t]
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: the held-out drop measured against the best evaluation so far, not the first
def diagnose(log):
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
        return held.size > 0 and held[-1] < 0.9 * held.max()

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: stale rollouts as the sum of the two window means (rows where one key is NaN still count the other)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: (
                window(steps["clip_low_reused"], t) + window(steps["clip_high_reused"], t) > 0.04
            ),
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: evaluations matched to steps by assuming step number = row index + 1
def diagnose(log):
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
        at = evals["eval_step"] <= t + 1
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: the step reported as row index + 1 (right only when the log's steps are 1, 2, 3, ...)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append({"label": label, "step": t + 1, "metrics": list(keys)})
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: entropy collapse at a window of at most half the start (<=, where the table says <)
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) <= 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: the start of a run read from its first step, not the mean of its first window
def diagnose(log):
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
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * steps["entropy"][0] and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= steps["reward"][0] + 0.02
                and window(steps["accuracy"], t) <= steps["accuracy"][0] - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * steps["len_mean"][0]
                and window(steps["truncation_rate"], t) >= steps["truncation_rate"][0] + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: the held-out drop taken from any evaluation so far, not the latest (a dip that recovered still counts)
def diagnose(log):
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
        return held.size > 0 and bool((held < 0.9 * held[0]).any())

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug diagnose: each evaluation given to the last logged step at or before it (with a gap in the steps, an evaluation made after step t is read at t)
def diagnose(log):
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
        at = np.searchsorted(steps["step"], evals["eval_step"], "right") - 1 <= t
        held = evals["heldout_pass@4"][at]
        return held.size > 0 and held[-1] < 0.9 * held[0]

    rules = {
        "entropy_collapse": (
            ("entropy", "heldout_pass@4"),
            lambda t: (
                window(steps["entropy"], t) < 0.5 * window(steps["entropy"], w - 1)
                and heldout_dropped(t)
            ),
        ),
        "kl_blowup": (("kl_ref",), lambda t: window(steps["kl_ref"], t) > 0.3),
        "stale_rollouts": (
            ("clip_low_reused", "clip_high_reused"),
            lambda t: window(summed("clip_low_reused", "clip_high_reused"), t) > 0.04,
        ),
        "reward_hacking": (
            ("reward", "accuracy"),
            lambda t: (
                window(steps["reward"], t) >= window(steps["reward"], w - 1) + 0.02
                and window(steps["accuracy"], t) <= window(steps["accuracy"], w - 1) - 0.1
            ),
        ),
        "signal_starvation": (
            ("informative_rate",),
            lambda t: window(steps["informative_rate"], t) < 0.2,
        ),
        "verifier_failure": (
            ("verifier_error_rate", "parse_fail_rate"),
            lambda t: window(summed("verifier_error_rate", "parse_fail_rate"), t) >= 0.05,
        ),
        "length_growth": (
            ("len_mean", "truncation_rate"),
            lambda t: (
                window(steps["len_mean"], t) >= 1.2 * window(steps["len_mean"], w - 1)
                and window(steps["truncation_rate"], t)
                >= window(steps["truncation_rate"], w - 1) + 0.2
            ),
        ),
    }
    findings = []
    for label, (keys, holds) in rules.items():
        needs = set(keys) - {"heldout_pass@4"}
        if not needs <= steps.keys() or (
            "heldout_pass@4" in keys and not {"eval_step", "heldout_pass@4"} <= evals.keys()
        ):
            continue
        for t in range(w - 1, n):
            if holds(t):
                findings.append(
                    {"label": label, "step": int(steps["step"][t]), "metrics": list(keys)}
                )
                break
    return findings
    ### END SOLUTION


# %% bug should_stop: patience counts every point where the condition held, not consecutive ones
def should_stop(log, rule):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        raise ValueError(f"unknown 'when': {when!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not math.isfinite(threshold)
    ):
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
        run = run + 1 if holds else run
        if run >= patience:
            return int(point)
    return None


# %% bug should_stop: returns the point's index, not its step number
def should_stop(log, rule):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        raise ValueError(f"unknown 'when': {when!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not math.isfinite(threshold)
    ):
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
            return int(points.index(point))
    return None


# %% bug should_stop: a step key read raw, without the trailing-window mean
def should_stop(log, rule):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        raise ValueError(f"unknown 'when': {when!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not math.isfinite(threshold)
    ):
        raise ValueError(f"threshold must be a finite real number, got {threshold!r}")
    if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)) or patience < 1:
        raise ValueError(f"patience must be an integer >= 1, got {patience!r}")
    if key in steps and key != "step":
        x = np.asarray(steps[key], dtype=np.float64)
        values = []
        for t in range(WINDOW - 1, len(x)):
            v = x[t - WINDOW + 1 : t + 1]
            v = v[~np.isnan(v)]
            values.append(float(x[t]))
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


# %% bug should_stop: NaN poisons the best so far (max with NaN)
def should_stop(log, rule):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        raise ValueError(f"unknown 'when': {when!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not math.isfinite(threshold)
    ):
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
        best = float(np.max([best, value]))
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


# %% bug should_stop: drop from the best measured against the previous best, the current value left out
def should_stop(log, rule):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        raise ValueError(f"unknown 'when': {when!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not math.isfinite(threshold)
    ):
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
        holds = {
            "above": value > threshold,
            "below": value < threshold,
            "drop_from_best": value < (1 - threshold) * best,
            "rise_from_start": value > values[0] + threshold,
        }[when]
        if not math.isnan(value):
            best = max(best, value)
        run = run + 1 if holds else 0
        if run >= patience:
            return int(point)
    return None


# %% bug should_stop: bad rules not refused: an unknown when or a NaN threshold is silently never met
def should_stop(log, rule):
    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    threshold, patience = rule.get("threshold"), rule.get("patience", 1)
    if when not in ("above", "below", "drop_from_best", "rise_from_start"):
        return None
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.integer, np.floating))
        or not math.isfinite(threshold)
    ):
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


# %% valid should_stop: NumPy throughout (np.fmax.accumulate for the best so far, run lengths by a loop over a bool array)
def should_stop(log, rule):
    import numbers

    steps, evals = log.get("steps", {}), log.get("evals", {})
    key, when = rule.get("key"), rule.get("when")
    th, pat = rule.get("threshold"), rule.get("patience", 1)
    if when not in {"above", "below", "drop_from_best", "rise_from_start"}:
        raise ValueError("when")
    if isinstance(th, bool) or not isinstance(th, numbers.Real) or not np.isfinite(th):
        raise ValueError("threshold")
    if isinstance(pat, bool) or not isinstance(pat, numbers.Integral) or pat < 1:
        raise ValueError("patience")
    if key in steps and key != "step":
        x = np.asarray(steps[key], dtype=float)
        if len(x) < WINDOW:
            return None
        win = np.lib.stride_tricks.sliding_window_view(x, WINDOW)
        cnt = (~np.isnan(win)).sum(axis=1)
        with np.errstate(invalid="ignore"):
            vals = np.where(cnt > 0, np.nansum(win, axis=1) / np.maximum(cnt, 1), np.nan)
        pts = np.asarray(steps["step"])[WINDOW - 1 :]
    elif key in evals and key != "eval_step":
        vals, pts = np.asarray(evals[key], dtype=float), np.asarray(evals["eval_step"])
    else:
        raise ValueError("key")
    if vals.size == 0:
        return None
    best = np.fmax.accumulate(np.where(np.isnan(vals), -np.inf, vals))
    with np.errstate(invalid="ignore"):
        ok = {
            "above": vals > th,
            "below": vals < th,
            "drop_from_best": vals < (1 - th) * best,
            "rise_from_start": vals > vals[0] + th,
        }[when]
    run = 0
    for i, hit in enumerate(ok):
        run = run + 1 if hit else 0
        if run >= pat:
            return int(pts[i])
    return None


# %% equivalent diagnose: a6d7893fd9 w - 1 -> w ^ 1 (the entropy baseline's window)
# w is WINDOW = 5, a constant of helpers.clinic that no test can change: 5 ^ 1 = 4 = 5 - 1.
# %% equivalent diagnose: 203aa04fda w - 1 -> w ^ 1 (the reward baseline's window)
# As a6d7893fd9.
# %% equivalent diagnose: 1be3369c2f w - 1 -> w ^ 1 (the accuracy baseline's window)
# As a6d7893fd9.
# %% equivalent diagnose: a674b72ed1 range(w - 1, n) -> range(w ^ 1, n)
# As a6d7893fd9.
# %% equivalent diagnose: 05feaaba1a w - 1 -> w ^ 1 (the mean length's baseline window)
# As a6d7893fd9.
# %% equivalent diagnose: 04c6b2e41b w - 1 -> w ^ 1 (the truncation rate's baseline window)
# As a6d7893fd9.
# %% equivalent diagnose: 9558e7dd8d held.size > 0 -> held.size > 1
# With one evaluation held[-1] is held[0], and x < 0.9 x is false for every x >= 0: pass@4 is a
# probability, so the extra case the original accepts can never hold.
# %% equivalent diagnose: d4b486a1a3 held.size > 0 -> held.size != 0
# A size is never negative.
# %% equivalent diagnose: 275ae9b11f needs <= steps.keys() -> needs < steps.keys()
# needs never holds "step"; a log with steps that lacks "step" has n = 0 and no finding either way,
# and one with "step" makes needs a proper subset whenever it is a subset.
# %% equivalent diagnose: 9d4bafc76a reward >= r0 + 0.02 -> >
# A tie, not graded (contracts.md): reward and accuracy are continuous in the GRU-lab runs, and
# whether a window mean equals r0 + 0.02 exactly depends on the order of summation there, so a test
# of it would fail valid solutions that sum in another order. (In the BaseLM runs they are multiples
# of 1/64, whose window sums are exact in any order; the rule is graded the same way on every run.)
# %% equivalent diagnose: 72b4eff151 accuracy <= acc0 - 0.1 -> <
# As 9d4bafc76a.
# %% equivalent diagnose: 4848d9e53a kl > 0.3 -> >=
# As 9d4bafc76a: kl_ref is continuous.
# %% equivalent diagnose: 98149b7158 clip sum > 0.04 -> >=
# As 9d4bafc76a: the two reused-clip fractions are token fractions with varying denominators.
# %% equivalent should_stop: f6a41505ff range(WINDOW - 1, len(x)) -> range(WINDOW ^ 1, len(x))
# WINDOW = 5: 5 ^ 1 = 4 = 5 - 1.
# %% equivalent should_stop: 1f891f0884 steps["step"][WINDOW - 1 :] -> [WINDOW ^ 1 :]
# As f6a41505ff.
# %% equivalent should_stop: 68a27cc4f6 run >= patience -> run == patience
# run grows by one per point from 0 and the function returns the first time it reaches patience
# (an int >= 1, validated), so it is never above it.
# %% equivalent choose_intervention: 43d2aa0f16 fixes == 0 -> fixes <= 0
# fixes is a count of labels, never negative.
# %% equivalent choose_intervention: 205638bc41 score > best_score -> score >= best_score
# Two scores are never equal: their last entry, -rank, differs for every key.
# %% equivalent choose_intervention: 084ecae4b4 -rank -> ~rank
# ~rank is -rank - 1: the same order among keys.
# %% equivalent choose_intervention: 1c4509c5f1 -rank -> not rank
# The keys are visited in the order of INTERVENTIONS and a later key replaces the best only with a
# strictly larger score, so among equal (fixes, delays) the earliest key already wins: the rank
# term (negated, or as not rank, which favours rank 0, the earliest too) never changes the choice.
