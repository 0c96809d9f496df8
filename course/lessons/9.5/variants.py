# ruff: noqa: F811, F821, E731
"""Variants of lesson 9.5's graded functions (see tests/grading/harness.py for the format).

Each ``bug`` is a plausible wrong answer built on a pitfall the lesson names; each ``valid`` is a
correct answer written differently from the reference. Names the lesson defines (torch, np, math,
warnings, kl_estimate, group_advantages, completion_log_prob, grpo_loss, ...) are available, as in a
student's notebook. train_step calls group_advantages, completion_log_prob, grpo_loss and
kl_estimate; clipped_grpo_loss and grpo_loss call kl_estimate: a bug there may also fail those cells.
"""

# %% depends test_clipped_grpo_loss: kl_estimate
# %% depends test_grpo_loss: kl_estimate
# %% depends test_train_step: group_advantages kl_estimate completion_log_prob grpo_loss


# %% bug group_advantages: sample std (n - 1, torch's default unbiased=True) instead of the population std
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(dim=-1, keepdim=True)
    adv = (r - r.mean(dim=-1, keepdim=True)) / (std + eps)
    return torch.where(torch.nan_to_num(std) > 0, adv, torch.zeros_like(adv))


# %% bug group_advantages: no degenerate guard ((r - mean) / (std + eps) on an all-equal group)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    mean = r.mean(dim=-1, keepdim=True)
    return (r - mean) / (r.std(dim=-1, keepdim=True, unbiased=False) + eps)


# %% bug group_advantages: eps inside the square root, sqrt(var + eps)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    var = r.var(dim=-1, keepdim=True, unbiased=False)
    adv = (r - r.mean(dim=-1, keepdim=True)) / torch.sqrt(var + eps)
    return torch.where(var > 0, adv, torch.zeros_like(adv))


# %% bug group_advantages: eps dropped ((r - mean) / std, guarded)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    adv = (r - r.mean(dim=-1, keepdim=True)) / std
    return torch.where(std > 0, adv, torch.zeros_like(adv))


# %% bug group_advantages: normalises over the whole batch instead of within each group
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(unbiased=False)
    if std == 0:
        return torch.zeros_like(r)
    return (r - r.mean()) / (std + eps)


# %% bug group_advantages: centres in place (r -= mean), modifying the caller's rewards
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    r -= r.mean(dim=-1, keepdim=True)
    r /= std + eps
    return torch.where(std > 0, r, torch.zeros_like(r))


# %% valid group_advantages: var(correction=0).sqrt(), degenerate test by max == min
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(rewards).__name__}")
    if rewards.dim() not in (1, 2) or rewards.size(-1) < 1:
        raise ValueError(f"bad shape {tuple(rewards.shape)}")
    r = rewards.to(torch.float32) if not torch.is_floating_point(rewards) else rewards.clone()
    flat = r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)
    sd = r.var(dim=-1, correction=0, keepdim=True).sqrt()
    a = (r - r.mean(dim=-1, keepdim=True)) / (sd + eps)
    return a.masked_fill(flat, 0.0)


# %% valid group_advantages: a loop over groups in Python floats (math.fsum), rebuilt as a tensor
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("rewards must be (K,) or (B, K) with K >= 1")
    dtype = rewards.dtype if rewards.is_floating_point() else torch.float32
    rows = rewards.reshape(-1, rewards.shape[-1]).tolist()
    out = []
    for row in rows:
        if max(row) == min(row):
            out.append([0.0] * len(row))
            continue
        mu = math.fsum(row) / len(row)
        sd = math.sqrt(math.fsum((x - mu) ** 2 for x in row) / len(row))
        out.append([(x - mu) / (sd + eps) for x in row])
    return torch.tensor(out, dtype=dtype).reshape(rewards.shape)


# %% bug kl_estimate: the log-ratio in the wrong direction (d = logp - ref_logp)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = logp - ref_logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(d) - d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: k3 without the exp (the log-ratio used as if it were the ratio: r - log r - 1)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = ref_logp - logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return d - torch.log(d) - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: k1 with the wrong sign (d instead of -d)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = ref_logp - logp
    if estimator == "k1":
        return d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(d) - d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: k3 of the reversed ratio, exp(-d) + d - 1 (KL(ref || policy)'s form)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = ref_logp - logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(-d) + d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: k2 without the 1/2 (d**2)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = ref_logp - logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return d**2
    if estimator == "k3":
        return torch.exp(d) - d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: detaches logp (the KL leash then has no gradient)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = ref_logp.detach() - logp.detach()
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(d) - d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: an unknown estimator name silently falls back to k3
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = ref_logp - logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    return torch.exp(d) - d - 1


# %% valid kl_estimate: a table of estimators on logp - ref_logp, k3 written with expm1
def kl_estimate(logp, ref_logp, estimator="k3"):
    if tuple(logp.shape) != tuple(ref_logp.shape):
        raise ValueError(f"logp {tuple(logp.shape)} and ref_logp {tuple(ref_logp.shape)} differ")
    table = {
        "k1": lambda x: x,  # x = log pi_theta - log pi_ref = -d
        "k2": lambda x: x * x / 2,
        "k3": lambda x: torch.expm1(-x) + x,
    }
    if estimator not in table:
        raise ValueError(f"estimator must be one of {sorted(table)}, got {estimator!r}")
    return table[estimator](logp - ref_logp)


# %% bug clipped_grpo_loss: clipping on the wrong branch (only the upper clip, applied for A > 0)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    obj = torch.where(A > 0, torch.clamp(ratio, max=1 + clip_eps) * A, ratio * A)
    pg = -obj
    kl = kl_estimate(new_logp, ref_logp, "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg + kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug clipped_grpo_loss: max instead of min in the objective (the optimistic bound)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    pg = -torch.maximum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp, ref_logp, "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg + kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug clipped_grpo_loss: one global mean over all active tokens (per-token instead of per-response)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    pg = -torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp, ref_logp, "k3")
    glob = lambda x: (x * mask).sum() / mask.sum().clamp(min=1)
    loss = glob(pg + kl_coef * kl)
    return loss, {"pg": float(glob(pg.detach())), "kl": float(glob(kl.detach()))}


# %% bug clipped_grpo_loss: the KL term subtracted (pg - beta * k3), a reward for drifting away
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    pg = -torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp, ref_logp, "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg - kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug clipped_grpo_loss: token count not clamped (a response with no active token gives 0/0 = NaN)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    pg = -torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp, ref_logp, "k3")
    n_tok = mask.sum(dim=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg + kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug clipped_grpo_loss: the ratio inverted, exp(old - new)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(old_logp - new_logp)
    A = advantages[:, None]
    pg = -torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp, ref_logp, "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg + kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% valid clipped_grpo_loss: the piecewise form per advantage sign, a loop over responses
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    active = mask > 0
    rows, pg_rows, kl_rows = [], [], []
    for i in range(new_logp.shape[0]):
        m = active[i]
        n = int(m.sum())
        if n == 0:
            zero = (new_logp[i] * 0.0).sum()  # keeps the graph, value 0
            rows.append(zero)
            pg_rows.append(0.0)
            kl_rows.append(0.0)
            continue
        lr = new_logp[i][m] - old_logp[i][m]
        rho, a = lr.exp(), advantages[i]
        if float(a) >= 0:
            surr = torch.clamp(rho, max=1 + clip_eps) * a
        else:
            surr = torch.clamp(rho, min=1 - clip_eps) * a
        d = ref_logp[i][m] - new_logp[i][m]
        k3 = torch.expm1(d) - d
        rows.append((-surr + kl_coef * k3).sum() / n)
        pg_rows.append(float((-surr).detach().sum()) / n)
        kl_rows.append(float(k3.detach().sum()) / n)
    N = len(rows)
    return torch.stack(rows).sum() / N, {"pg": sum(pg_rows) / N, "kl": sum(kl_rows) / N}


# %% bug token_entropy: p * log p with no 0 * log 0 guard (a -inf logit gives NaN)
def token_entropy(logits, mask):
    logp = logits.log_softmax(dim=-1)
    H = -(logp.exp() * logp).sum(dim=-1)
    return float((H * mask).sum() / mask.sum().clamp(min=1))


# %% bug token_entropy: mean over every position, padding included
def token_entropy(logits, mask):
    logp = logits.log_softmax(dim=-1)
    p = logp.exp()
    H = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(dim=-1)
    return float(H.mean())


# %% bug pass_at_k: the biased plug-in estimate 1 - (1 - c/n)**k
def pass_at_k(n, c, k):
    return 1.0 - (1.0 - c / n) ** k


# %% bug pass_at_k: off by one in the product (i from 1 to k)
def pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(1, k + 1))


# %% bug clip_fractions: counts clipping by the ratio alone, whatever the advantage sign
def clip_fractions(ratio, advantages, mask, *, clip_eps):
    low = (ratio < 1 - clip_eps).float()
    high = (ratio > 1 + clip_eps).float()
    n = mask.sum().clamp(min=1)
    return float((low * mask).sum() / n), float((high * mask).sum() / n)


# %% bug clip_fractions: divides by all N * T positions instead of the active tokens
def clip_fractions(ratio, advantages, mask, *, clip_eps):
    A = advantages[:, None]
    low = ((ratio < 1 - clip_eps) & (A < 0)).float()
    high = ((ratio > 1 + clip_eps) & (A > 0)).float()
    return float((low * mask).sum() / mask.numel()), float((high * mask).sum() / mask.numel())


# %% bug kl_to_reference: padding not masked (mean over every position)
def kl_to_reference(logp, ref_logp, mask):
    d = ref_logp - logp
    return float((torch.exp(d) - d - 1).mean())


# %% bug kl_to_reference: k1 (the plain log-ratio) instead of k3
def kl_to_reference(logp, ref_logp, mask):
    k1 = logp - ref_logp
    return float((k1 * mask).sum() / mask.sum().clamp(min=1))


# %% valid token_entropy: Python loop over active positions, softmax entries filtered
def token_entropy(logits, mask):
    total, count = 0.0, 0
    for i, t in (mask > 0).nonzero().tolist():
        p = torch.softmax(logits[i, t].double(), dim=-1)
        p = p[p > 0]
        total += float(-(p * p.log()).sum())
        count += 1
    return total / count if count else math.nan


# %% valid pass_at_k: math.comb (exact integers), 1.0 where n - c < k
def pass_at_k(n, c, k):
    n, c, k = int(n), int(c), int(k)
    if n - c < k:
        return 1.0
    return float(1 - math.comb(n - c, k) / math.comb(n, k))


# %% valid clip_fractions: boolean indexing of the active tokens and .mean()
def clip_fractions(ratio, advantages, mask, *, clip_eps):
    act = mask > 0
    if not bool(act.any()):
        return math.nan, math.nan
    A = advantages[:, None].expand_as(ratio)
    r, a = ratio[act], A[act]
    low = ((r < 1 - clip_eps) & (a < 0)).double().mean()
    high = ((r > 1 + clip_eps) & (a > 0)).double().mean()
    return float(low), float(high)


# %% valid kl_to_reference: reuses kl_estimate on the active tokens only
def kl_to_reference(logp, ref_logp, mask):
    act = mask > 0
    if not bool(act.any()):
        return math.nan
    return float(kl_estimate(logp[act], ref_logp[act], "k3").mean())


# %% bug completion_log_prob: prompt tokens included (every column with attention_mask == 1 summed)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = logits.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = attention_mask[:, 1:] == 1
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: padding after EOS not masked (every column >= prompt_len summed)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = logits.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :].expand_as(tok)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: no shift (logits at column j scored against the token at column j)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = logits.logits.float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, :, None]).squeeze(-1)  # (N, L)
    keep = (torch.arange(L) >= prompt_len)[None, :] & (attention_mask == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: the mask read at the predicting column (attention_mask[:, :-1]), off by one
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = logits.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, :-1] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: the boundary off by one (columns >= prompt_len - 1: the prompt's last token counted)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = logits.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len - 1)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: attention_mask not passed to the model (left padding attended to)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, position_ids=position_ids)
    logp = logits.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: computed under torch.no_grad (no gradient reaches the model)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    with torch.no_grad():
        out = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = out.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: the mean over completion tokens instead of the sum
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    logp = logits.logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1) / keep.sum(1).clamp(min=1)


# %% valid completion_log_prob: cross_entropy with ignore_index=-100 on the shifted targets
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    import torch.nn.functional as F

    L = input_ids.shape[1]
    if prompt_len < 1 or prompt_len > L:
        raise ValueError(f"prompt_len {prompt_len} outside [1, {L}]")
    if position_ids is None:
        position_ids = torch.clamp(torch.cumsum(attention_mask.long(), 1) - 1, min=0)
    logits = model(
        input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids
    ).logits
    logits = logits.double() if logits.dtype == torch.float64 else logits.float()
    targets = input_ids[:, 1:].clone()
    targets[attention_mask[:, 1:] == 0] = -100
    targets[:, : prompt_len - 1] = -100  # target column j + 1 < P is a prompt token
    nll = F.cross_entropy(logits[:, :-1].transpose(1, 2), targets, reduction="none")
    return -nll.sum(dim=1)


# %% valid completion_log_prob: one forward pass, then a Python loop over completion positions
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not (1 <= prompt_len <= L):
        raise ValueError("prompt_len must be in [1, L]")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
    lg = logits.logits
    logp = torch.log_softmax(lg.to(torch.promote_types(lg.dtype, torch.float32)), dim=-1)
    sums = []
    for i in range(N):
        terms = [
            logp[i, j - 1, input_ids[i, j]]
            for j in range(prompt_len, L)
            if int(attention_mask[i, j]) == 1
        ]
        sums.append(torch.stack(terms).sum() if terms else 0.0 * logp[i, 0, 0])
    return torch.stack(sums)


# %% bug grpo_loss: sign error in the policy term (+(A * logp).mean(), gradient ascent on a loss)
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A, ref = advantages.detach(), ref_logp.detach()
    return (A * logp).mean() + kl_coef * kl_estimate(logp, ref, kl_estimator).mean()


# %% bug grpo_loss: advantages not detached (gradient flows into them)
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    ref = ref_logp.detach()
    return -(advantages * logp).mean() + kl_coef * kl_estimate(logp, ref, kl_estimator).mean()


# %% bug grpo_loss: reference not detached (the KL term pulls the reference toward the policy)
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A = advantages.detach()
    return -(A * logp).mean() + kl_coef * kl_estimate(logp, ref_logp, kl_estimator).mean()


# %% bug grpo_loss: KL direction swapped (kl_estimate(ref_logp, logp): the reverse KL's estimator)
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A, ref = advantages.detach(), ref_logp.detach()
    return -(A * logp).mean() + kl_coef * kl_estimate(ref, logp, kl_estimator).mean()


# %% bug grpo_loss: the KL term with a minus sign
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A, ref = advantages.detach(), ref_logp.detach()
    return -(A * logp).mean() - kl_coef * kl_estimate(logp, ref, kl_estimator).mean()


# %% bug grpo_loss: sums over completions instead of the mean
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A, ref = advantages.detach(), ref_logp.detach()
    return -(A * logp).sum() + kl_coef * kl_estimate(logp, ref, kl_estimator).sum()


# %% bug grpo_loss: the kl_estimator argument ignored (always k3)
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A, ref = advantages.detach(), ref_logp.detach()
    return -(A * logp).mean() + kl_coef * kl_estimate(logp, ref, "k3").mean()


# %% valid grpo_loss: dot products over N, the estimator written inline
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    N = logp.numel()
    a = advantages.detach().to(logp.dtype)
    d = ref_logp.detach().to(logp.dtype) - logp
    if kl_estimator == "k1":
        kl = -d
    elif kl_estimator == "k2":
        kl = d.pow(2) / 2
    elif kl_estimator == "k3":
        kl = torch.expm1(d) - d
    else:
        raise ValueError(kl_estimator)
    return (-torch.dot(a, logp) + kl_coef * kl.sum()) / N


# %% bug train_step: degenerate groups not dropped (all rows in the loss, zero-advantage rows included in the means)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    args = (sample.input_ids, sample.attention_mask, sample.prompt_len, sample.position_ids)
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv, trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask.float()
    entropy = -(sample.logprobs * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: the reference unfrozen and given to the optimizer, the KL written inline without detaching it
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    ref_params = list(trainer.reference.parameters())
    if not any(p is ref_params[0] for g in trainer.optimizer.param_groups for p in g["params"]):
        trainer.reference.requires_grad_(True)
        trainer.optimizer.add_param_group({"params": ref_params})
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    ref_logp = completion_log_prob(trainer.reference, *args)
    kl_rows = kl_estimate(logp, ref_logp, "k3")
    loss = -(adv[rows] * logp).mean() + trainer.config.kl_coef * kl_rows.mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl_rows.detach().mean()), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: the reference refreshed to the current policy after each update (treated like the old policy)
def train_step(trainer, tasks):
    import copy

    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    trainer.reference = copy.deepcopy(trainer.policy).eval()
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: trainer.update called twice (once on the policy term, once on the KL term)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(grpo_loss(logp, ref_logp, adv[rows], 0.0))
    logp2 = completion_log_prob(trainer.policy, *args)
    trainer.update(trainer.config.kl_coef * kl_estimate(logp2, ref_logp, "k3").mean())
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: kl and entropy reported as 0.0 (not NaN) on a skipped step
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": 0.0, "entropy": 0.0,
           "skipped": int((~informative).sum()), "groups": B, "loss": 0.0}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: advantages normalised over the whole batch (rewards not grouped by prompt)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    adv = group_advantages(rewards)  # one group of N
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: the reference log-probs taken from the policy (KL to itself, always 0)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    ref_logp = logp.detach()
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: entropy averaged over every row's completion tokens (degenerate groups included)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask.float()
    entropy = -(sample.logprobs * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% valid train_step: informative groups found in a loop, row indices gathered, advantages per group
def train_step(trainer, tasks):
    K = trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    keep_rows, keep_adv, skipped = [], [], 0
    for b in range(len(tasks)):
        r = rewards[b * K : (b + 1) * K]
        if bool((r == r[0]).all()):
            skipped += 1
            continue
        keep_rows.extend(range(b * K, (b + 1) * K))
        keep_adv.append(group_advantages(r))
    result = {"reward": rewards.mean().item(), "skipped": skipped, "groups": len(tasks)}
    if not keep_rows:
        return {**result, "kl": float("nan"), "entropy": float("nan"), "loss": float("nan")}
    idx = torch.tensor(keep_rows)
    ids, am, pos = sample.input_ids[idx], sample.attention_mask[idx], sample.position_ids[idx]
    logp = completion_log_prob(trainer.policy, ids, am, sample.prompt_len, pos)
    with torch.no_grad():
        ref = completion_log_prob(trainer.reference, ids, am, sample.prompt_len, pos)
    loss = grpo_loss(logp, ref, torch.cat(keep_adv), trainer.config.kl_coef)
    d = ref - logp.detach()
    kl = (torch.expm1(d) - d).mean().item()
    cm = sample.completion_mask[idx]
    ent = -(sample.logprobs[idx][cm == 1]).mean().item()
    trainer.update(loss)
    return {**result, "kl": kl, "entropy": ent, "loss": loss.item()}


# %% depends test_train_step: group_advantages kl_estimate completion_log_prob grpo_loss
# --- planted bugs added with later hidden tests (each caught by the hidden test named beside it in
# the lesson): the "depends" header above only repeats the one at the top.


# %% bug clipped_grpo_loss: the KL term computed on detached log-probs (the leash exerts no gradient)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    pg = -torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp.detach(), ref_logp, "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg + kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug kl_to_reference: the log-ratio in the wrong direction (d = logp - ref_logp)
def kl_to_reference(logp, ref_logp, mask):
    d = logp - ref_logp
    return float(((torch.exp(d) - d - 1) * mask).sum() / mask.sum().clamp(min=1))


# %% bug token_entropy: 0.0 for an empty mask (count clamped at 1): claims "no entropy" where nothing was measured
def token_entropy(logits, mask):
    logp = logits.log_softmax(dim=-1)
    p = logp.exp()
    H = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(dim=-1)
    return float((H * mask).sum() / mask.sum().clamp(min=1))


# %% bug clip_fractions: (0.0, 0.0) for an empty mask (count clamped at 1) instead of NaN
def clip_fractions(ratio, advantages, mask, *, clip_eps):
    A = advantages[:, None]
    low = ((ratio < 1 - clip_eps) & (A < 0)).float()
    high = ((ratio > 1 + clip_eps) & (A > 0)).float()
    n = mask.sum().clamp(min=1)
    return float((low * mask).sum() / n), float((high * mask).sum() / n)


# %% bug kl_to_reference: 0.0 for an empty mask (count clamped at 1): a false "no drift"
def kl_to_reference(logp, ref_logp, mask):
    d = ref_logp - logp
    k3 = torch.exp(d) - d - 1
    return float((k3 * mask).sum() / mask.sum().clamp(min=1))


# %% bug train_step: kl measured after the update (a second forward pass), not from the step's own pass
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    trainer.update(loss)
    with torch.no_grad():
        kl = kl_estimate(completion_log_prob(trainer.policy, *args), ref_logp, "k3").mean()
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug group_advantages: degenerate group detected by std > 0 (torch's std leaves ~1e-8 on one float32 row of 0.1s)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    adv = (r - r.mean(dim=-1, keepdim=True)) / (std + eps)
    return torch.where(std > 0, adv, torch.zeros_like(adv))


# %% bug group_advantages: degenerate when max == min OR std == 0 (belt and braces: a spread whose square underflows gets zeros)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    deg = (r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)) | (std == 0)
    adv = (r - r.mean(dim=-1, keepdim=True)) / (std + eps)
    return torch.where(deg, torch.zeros_like(adv), adv)


# %% bug clipped_grpo_loss: exp and k3 before the mask (masked float32 values of 100 overflow: inf * 0 = NaN)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    ratio = torch.exp(new_logp - old_logp)
    A = advantages[:, None]
    pg = torch.maximum(-ratio * A, -torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_logp, ref_logp, "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    loss = two(pg + kl_coef * kl)
    return loss, {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug completion_log_prob: position_ids never passed to the model (right only for shift-invariant RoPE models)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    logp = logits[:, :-1].float().log_softmax(dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% depends test_train_step: group_advantages kl_estimate completion_log_prob grpo_loss
# --- planted bugs of issue 11's miss classes: (a) a documented clause not honoured, (b) visible
# only on non-tame inputs, (c) invisible to a rotary model stub, (d) an output no test read.


# %% bug group_advantages: (a) r = rewards.float() then centred in place: a float32 caller's tensor is modified (float64 and integer inputs are copies)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards.float() if not rewards.dtype == torch.float64 else rewards.clone()
    flat = r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    r -= r.mean(dim=-1, keepdim=True)
    return torch.where(flat, torch.zeros_like(r), r / (std + eps))


# %% bug group_advantages: (a) an integer tensor gives float64 (computed as .double()), not float32
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.double()
    flat = r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)
    adv = (r - r.mean(dim=-1, keepdim=True)) / (r.std(dim=-1, keepdim=True, unbiased=False) + eps)
    return torch.where(flat, torch.zeros_like(adv), adv)


# %% bug group_advantages: (a) a list or array is converted with torch.as_tensor instead of raising TypeError
def group_advantages(rewards, eps=1e-6):
    rewards = torch.as_tensor(rewards)
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    flat = r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)
    adv = (r - r.mean(dim=-1, keepdim=True)) / (r.std(dim=-1, keepdim=True, unbiased=False) + eps)
    return torch.where(flat, torch.zeros_like(adv), adv)


# %% bug group_advantages: (b) degenerate by std < 1e-8 (a group of tiny but nonzero spread is zeroed)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("bad shape")
    r = rewards if rewards.is_floating_point() else rewards.float()
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    flat = (r.amax(dim=-1, keepdim=True) == r.amin(dim=-1, keepdim=True)) | (std < 1e-8)
    adv = (r - r.mean(dim=-1, keepdim=True)) / (std + eps)
    return torch.where(flat, torch.zeros_like(adv), adv)


# %% valid group_advantages: computed in float64 and cast back to the input's dtype (other rounding on tiny spreads)
def group_advantages(rewards, eps=1e-6):
    if not isinstance(rewards, torch.Tensor):
        raise TypeError("rewards must be a torch.Tensor")
    if rewards.ndim not in (1, 2) or rewards.shape[-1] == 0:
        raise ValueError("rewards must be (K,) or (B, K) with K >= 1")
    out_dtype = rewards.dtype if rewards.is_floating_point() else torch.float32
    r = rewards.double()
    dev = r - r.mean(dim=-1, keepdim=True)
    sd = dev.pow(2).mean(dim=-1, keepdim=True).sqrt()
    adv = torch.where(r.amax(-1, keepdim=True) == r.amin(-1, keepdim=True), 0.0, dev / (sd + eps))
    return adv.to(out_dtype)


# %% bug kl_estimate: (a) shapes checked by broadcasting ((3, 1) against (3,) gives a (3, 3) result, no ValueError)
def kl_estimate(logp, ref_logp, estimator="k3"):
    torch.broadcast_shapes(logp.shape, ref_logp.shape)  # raises only if they cannot broadcast
    d = ref_logp - logp
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(d) - d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug kl_estimate: (b) the log-ratio clamped to [-10, 10] "for stability" (wrong only for extreme log-ratios)
def kl_estimate(logp, ref_logp, estimator="k3"):
    if logp.shape != ref_logp.shape:
        raise ValueError("shapes differ")
    d = torch.clamp(ref_logp - logp, -10.0, 10.0)
    if estimator == "k1":
        return -d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(d) - d - 1
    raise ValueError(f"unknown estimator {estimator!r}")


# %% bug clipped_grpo_loss: (b) the log-ratio clamped to [-2, 2] before exp (only ratios beyond e^2 tell)
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    active = mask > 0
    z = torch.zeros_like(new_logp)
    new_a = torch.where(active, new_logp, z)
    ratio = torch.exp(torch.clamp(new_a - torch.where(active, old_logp, z), -2.0, 2.0))
    A = advantages[:, None]
    pg = torch.maximum(-ratio * A, -torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_a, torch.where(active, ref_logp, z), "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    return two(pg + kl_coef * kl), {"pg": float(two(pg.detach())), "kl": float(two(kl.detach()))}


# %% bug clipped_grpo_loss: (d) metrics "pg" and "kl" returned as 0-dim tensors, not Python floats
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    active = mask > 0
    z = torch.zeros_like(new_logp)
    new_a = torch.where(active, new_logp, z)
    ratio = torch.exp(new_a - torch.where(active, old_logp, z))
    A = advantages[:, None]
    pg = torch.maximum(-ratio * A, -torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    kl = kl_estimate(new_a, torch.where(active, ref_logp, z), "k3")
    n_tok = mask.sum(dim=1).clamp(min=1)
    two = lambda x: ((x * mask).sum(dim=1) / n_tok).mean()
    return two(pg + kl_coef * kl), {"pg": two(pg.detach()), "kl": two(kl.detach())}


# %% valid clipped_grpo_loss: one weighted sum with per-token weights mask / (n_i * N), k3 with expm1
def clipped_grpo_loss(new_logp, old_logp, ref_logp, advantages, mask, *, clip_eps, kl_coef):
    act = mask > 0
    w = mask / (mask.sum(dim=1, keepdim=True).clamp(min=1) * mask.shape[0])  # (N, T)
    lr = torch.where(act, new_logp - torch.where(act, old_logp, new_logp), 0.0)
    rho = lr.exp()
    A = advantages.unsqueeze(1)
    surr = torch.minimum(rho * A, rho.clamp(1 - clip_eps, 1 + clip_eps) * A)
    d = torch.where(act, ref_logp - torch.where(act, new_logp, ref_logp), 0.0)
    k3 = torch.expm1(d) - d
    loss = (w * (-surr + kl_coef * k3)).sum()
    return loss, {"pg": float((w * -surr).sum()), "kl": float((w * k3).sum())}


# %% bug pass_at_k: (b) n - c <= k counted as certain (wrong exactly when n - c == k)
def pass_at_k(n, c, k):
    if n - c <= k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


# %% bug clip_fractions: (b) a ratio exactly on a bound counted as clipped (<= 1 - eps, >= 1 + eps)
def clip_fractions(ratio, advantages, mask, *, clip_eps):
    n = float(mask.sum())
    if n == 0:
        return math.nan, math.nan
    A = advantages[:, None]
    low = ((ratio <= 1 - clip_eps) & (A < 0)).float()
    high = ((ratio >= 1 + clip_eps) & (A > 0)).float()
    return float((low * mask).sum() / n), float((high * mask).sum() / n)


# %% bug token_entropy: (b) per-row mean entropy, then the mean over rows (rows of unequal length weigh alike)
def token_entropy(logits, mask):
    if float(mask.sum()) == 0:
        return math.nan
    logp = logits.log_softmax(dim=-1)
    p = logp.exp()
    H = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(dim=-1)
    n = mask.sum(dim=1)
    rows = (H * mask).sum(dim=1)[n > 0] / n[n > 0]
    return float(rows.mean())


# %% valid clip_fractions: Python integer counts divided by the active count
def clip_fractions(ratio, advantages, mask, *, clip_eps):
    act = mask > 0
    n = int(act.sum())
    if n == 0:
        return float("nan"), float("nan")
    A = advantages[:, None].expand_as(ratio)
    lo = int((act & (ratio < 1 - clip_eps) & (A < 0)).sum())
    hi = int((act & (ratio > 1 + clip_eps) & (A > 0)).sum())
    return lo / n, hi / n


# %% valid token_entropy: H = logsumexp(l) - sum(p * l) over the finite logits
def token_entropy(logits, mask):
    act = mask > 0
    if not bool(act.any()):
        return float("nan")
    lg = logits[act]  # (n, V)
    p = lg.softmax(dim=-1)
    finite = torch.isfinite(lg)
    pl = torch.where(finite, p * torch.where(finite, lg, 0.0), 0.0).sum(dim=-1)
    return float((torch.logsumexp(lg, dim=-1) - pl).mean())


# %% bug completion_log_prob: (a) log-softmax in the logits' own dtype (bfloat16 logits give a bfloat16 sum)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask,
                   position_ids=position_ids).logits  # fmt: skip
    tok = logits[:, :-1].log_softmax(dim=-1).gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: (c) the position_ids argument ignored, always re-derived from the mask (a sampler's own positions are lost)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    position_ids = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
    logits = model(input_ids=input_ids, attention_mask=attention_mask,
                   position_ids=position_ids).logits  # fmt: skip
    logp = logits[:, :-1].to(torch.promote_types(logits.dtype, torch.float32)).log_softmax(-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% bug completion_log_prob: (c) positions 0..L-1 when none are given (left padding shifts every real token)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    N, L = input_ids.shape
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len")
    if position_ids is None:
        position_ids = torch.arange(L).expand(N, L)
    logits = model(input_ids=input_ids, attention_mask=attention_mask,
                   position_ids=position_ids).logits  # fmt: skip
    logp = logits[:, :-1].to(torch.promote_types(logits.dtype, torch.float32)).log_softmax(-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    keep = (torch.arange(1, L) >= prompt_len)[None, :] & (attention_mask[:, 1:] == 1)
    return torch.where(keep, tok, torch.zeros_like(tok)).sum(dim=1)


# %% valid completion_log_prob: logits minus logsumexp, positions filled with 1 on padding (as in HF generate)
def completion_log_prob(model, input_ids, attention_mask, prompt_len, position_ids=None):
    L = input_ids.shape[1]
    if not 1 <= prompt_len <= L:
        raise ValueError("prompt_len must be in [1, L]")
    if position_ids is None:
        position_ids = (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)
    lg = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).logits
    lg = lg[:, :-1].to(torch.promote_types(lg.dtype, torch.float32))
    tok = lg.gather(-1, input_ids[:, 1:, None]).squeeze(-1) - torch.logsumexp(lg, dim=-1)
    cols = torch.arange(L - 1)[None, :] + 1
    keep = (cols >= prompt_len) & (attention_mask[:, 1:] > 0)
    return (tok * keep).sum(dim=1)


# %% bug grpo_loss: (b) the k3 log-ratio clamped to [-5, 5] (wrong only when policy and reference are far apart)
def grpo_loss(logp, ref_logp, advantages, kl_coef, kl_estimator="k3"):
    A, ref = advantages.detach(), ref_logp.detach()
    d = torch.clamp(ref - logp, -5.0, 5.0)
    table = {"k1": -d, "k2": 0.5 * d**2, "k3": torch.exp(d) - d - 1}
    return -(A * logp).mean() + kl_coef * table[kl_estimator].mean()


# %% bug train_step: (c) positions 0..L-1 passed instead of the sample's position_ids (right only for RoPE models)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    ids, mask = sample.input_ids[rows], sample.attention_mask[rows]
    pos = torch.arange(ids.shape[1]).expand_as(ids)
    logp = completion_log_prob(trainer.policy, ids, mask, sample.prompt_len, pos)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, ids, mask, sample.prompt_len, pos)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: (d) "loss" logs the policy term alone (the KL term left out of the logged value)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    pg = float(-(adv[rows] * logp.detach()).mean())
    out.update(kl=float(kl), entropy=float(entropy), loss=pg)
    return out


# %% bug train_step: (b) entropy as the mean of per-row means (rows of unequal length weigh alike)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = (-(sample.logprobs[rows] * cm).sum(1) / cm.sum(1).clamp(min=1)).mean()
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: (a) the reference scored with gradient enabled (not under torch.no_grad), then detached
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.max(dim=1).values != grouped.min(dim=1).values
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    ref_logp = completion_log_prob(trainer.reference, *args).detach()
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: (e) a group is informative when its reward variance is above 0 (float32's var underflows to 0 for a spread of 1e-30)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.var(dim=1, unbiased=False) > 0
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: (f) the group's spread measured by a hand-written population std above 0 (squares of 1e-30 underflow in float32)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    centred = grouped - grouped.mean(dim=1, keepdim=True)
    informative = (centred**2).mean(dim=1).sqrt() > 0
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# %% bug train_step: (g) a group is informative when its population std is above 0 (torch.std of float32 rewards rounds a subnormal spread to 0)
def train_step(trainer, tasks):
    B, K = len(tasks), trainer.config.k
    sample = trainer.sample(tasks)
    rewards = trainer.score(tasks, sample)
    grouped = rewards.view(B, K)
    adv = group_advantages(grouped).reshape(-1)
    informative = grouped.std(dim=1, unbiased=False) > 0
    out = {"reward": float(rewards.mean()), "kl": math.nan, "entropy": math.nan,
           "skipped": int((~informative).sum()), "groups": B, "loss": math.nan}  # fmt: skip
    if not bool(informative.any()):
        return out
    rows = informative.repeat_interleave(K)
    args = (sample.input_ids[rows], sample.attention_mask[rows], sample.prompt_len,
            sample.position_ids[rows])  # fmt: skip
    logp = completion_log_prob(trainer.policy, *args)
    with torch.no_grad():
        ref_logp = completion_log_prob(trainer.reference, *args)
    loss = grpo_loss(logp, ref_logp, adv[rows], trainer.config.kl_coef)
    kl = kl_estimate(logp.detach(), ref_logp, "k3").mean()
    trainer.update(loss)
    cm = sample.completion_mask[rows].float()
    entropy = -(sample.logprobs[rows] * cm).sum() / cm.sum().clamp(min=1)
    out.update(kl=float(kl), entropy=float(entropy), loss=float(loss.detach()))
    return out


# --- survivors of the mutation run (tests/grading/mutation.py) argued equivalent, one by one


# %% equivalent pass_at_k: 7dc28d3054 if n - c < k: -> if n + c < k:
# The shortcut only saves work: for n - c < k <= n the product holds the factor (n - c - i) = 0 at
# i = n - c < k, every denominator n - i >= n - k + 1 >= 1, so 1 - (+-0.0) = 1.0 exactly, as the
# reference returns; n + c < k is never true when n - c >= k. k > n (C(n, k) = 0: the formula of
# the docstring is undefined, k samples cannot be drawn from n) is outside the contract.
# %% equivalent pass_at_k: c41076094a if n - c < k: -> if n | c < k:
# n | c >= n >= k for every k <= n, so the branch is never taken and the product runs; it is 1.0
# exactly whenever n - c < k (a zero factor at i = n - c, denominators >= 1). Same value for all
# 0 <= c <= n, 1 <= k <= n (the domain of C(n - c, k) / C(n, k)).
# %% equivalent pass_at_k: 7426739ff3 if n - c < k: -> if n ^ c < k:
# n - c <= n ^ c for 0 <= c <= n (n - c = (n ^ c) - 2 (~n & c)), so n ^ c < k implies n - c < k
# and the shortcut returns 1.0 only where the reference does; elsewhere the product is evaluated and
# gives 1.0 exactly when n - c < k (a zero factor, denominators >= 1 for k <= n).
# %% equivalent pass_at_k: 53ffaf244e if n - c < k: -> if n << c < k:
# n << c = n * 2**c >= n >= k for k <= n, so the shortcut is never taken; the product gives exactly
# 1.0 when n - c < k (a zero factor at i = n - c) and the reference value otherwise.
# %% equivalent token_entropy: 1530d97055 if n == 0: -> if n == -1:
# n = float(mask.sum()) is never negative for a 0/1 mask; when it is 0 the mutant goes on to
# float((H * mask).sum() / 0.0), and torch's 0.0 / 0.0 is NaN: the documented NaN either way.
# %% equivalent token_entropy: 48c30758e3 if n == 0: -> if n < 0:
# As 1530d97055: a 0/1 mask never sums below 0, and with n == 0 the division 0.0 / 0.0 is NaN.
# %% equivalent token_entropy: f8e397c76b if n == 0: -> if n <= 0:
# n = mask.sum() >= 0 for a 0/1 mask, so n <= 0 is n == 0.
# %% equivalent token_entropy: aa663150e7 H = -torch.where(p > 0, ...) -> H = -torch.where(p != 0, ...)
# p = exp(log_softmax(logits)) is never negative, so p != 0 is p > 0 for every logits row that is
# a distribution (at least one finite logit: softmax of a row of only -inf is undefined, NaN).
# %% equivalent kl_to_reference: 9ff80293e8 if n == 0: -> if n == -1:
# n = float(mask.sum()) is never negative for a 0/1 mask; with n == 0 the mutant returns
# float(0.0 / 0.0) = NaN, the documented value.
# %% equivalent kl_to_reference: 02554047ee if n == 0: -> if n < 0:
# As 9ff80293e8: a 0/1 mask never sums below 0, and 0.0 / 0.0 is NaN.
# %% equivalent kl_to_reference: aa5687356a if n == 0: -> if n <= 0:
# n = mask.sum() >= 0 for a 0/1 mask, so n <= 0 is n == 0.
# %% equivalent kl_to_reference: 1cb933d476 torch.where(mask > 0, ref_logp - logp, 0.0) -> (..., 1.0)
# The fill value is the log-ratio used at masked positions only; k3(1.0) = e - 2 is finite and is
# multiplied by mask == 0 there, so it adds exactly 0 to the sum, as k3(0.0) = 0 does.
# %% equivalent kl_to_reference: a9ae9c741d torch.where(mask > 0, ref_logp - logp, 0.0) -> (..., -1.0)
# As 1cb933d476: k3(-1.0) = exp(-1) is finite and multiplied by mask == 0, adding exactly 0.
# %% equivalent kl_to_reference: b938c6f5ec torch.where(mask > 0, ...) -> torch.where(mask != 0, ...)
# The mask is 0/1 (the module's convention for all four diagnostics: 1 marks an active token), and
# for values in {0, 1} mask != 0 is mask > 0.
# %% equivalent clip_fractions: 2cef79f8a9 if n == 0: -> if n == -1:
# n = float(mask.sum()) is never negative for a 0/1 mask; with n == 0 the mutant returns
# (float(0.0 / 0.0), float(0.0 / 0.0)) = (NaN, NaN), the documented pair.
# %% equivalent clip_fractions: ef558881ef if n == 0: -> if n < 0:
# As 2cef79f8a9: a 0/1 mask never sums below 0, and with n == 0 both divisions give NaN.
# %% equivalent clip_fractions: 0badf79769 if n == 0: -> if n <= 0:
# n = mask.sum() >= 0 for a 0/1 mask, so n <= 0 is n == 0.
# %% equivalent clip_fractions: d90ec4019f (ratio < 1 - clip_eps) & (A < 0) -> (ratio < 1 - clip_eps) * (A < 0)
# Both operands are bool tensors; torch's bool * bool is the elementwise logical and (a bool
# tensor), the same values as &, and .float() turns either into the same 0/1 floats.
# %% equivalent clip_fractions: c43305ccf3 (ratio > 1 + clip_eps) & (A > 0) -> (ratio > 1 + clip_eps) * (A > 0)
# As d90ec4019f: bool * bool is the logical and in torch.
# %% equivalent clipped_grpo_loss: da1595c7ac active = mask > 0 -> active = mask != 0
# The docstring's mask is 1.0 on the response's tokens and 0.0 on padding; for values in {0, 1}
# mask != 0 is mask > 0.
# %% equivalent train_step: 8f3c795c39 cm.sum().clamp(min=1) -> cm.sum().clamp(min= 2)
# cm holds the completion tokens of the informative rows; an informative group has K >= 2 rows
# (a group of one is always degenerate) and every sampled completion has at least one token (the
# sampler's completion mask covers each generated token up to and including EOS), so cm.sum() >= 2
# and the clamp never acts, at 1 or at 2.
# %% equivalent train_step: 93755bef0b cm.sum().clamp(min=1) -> cm.sum().clamp(min= 0)
# As 8f3c795c39: cm.sum() >= 2 whenever this line runs, so clamping at 0 or at 1 changes nothing.
# %% equivalent train_step: 66b1e2398a grouped.max(dim=1).values != grouped.min(dim=1).values -> ... > ...
# A group's max is never below its min, so max != min is max > min for every real-valued reward
# (the verifier returns numbers; a NaN reward is not a reward).
# %% equivalent completion_log_prob: 59fe437f72 if not 1 <= prompt_len <= L: -> if not 0 <= prompt_len <= L:
# The docstring's domain is 1 <= P <= L and it documents no error: the two checks agree on every
# P in that domain (neither raises), and P = 0 (where only the reference raises) is outside it.
# %% equivalent completion_log_prob: f9e2fb7361 (target_col >= prompt_len)[None, :] & (...) -> ... * (...)
# Both operands are bool tensors; torch's bool * bool is the elementwise logical and (a bool
# tensor), so torch.where selects the same entries.
# %% equivalent completion_log_prob: 64e80d2b92 attention_mask[:, 1:] == 1 -> attention_mask[:, 1:] >= 1
# The attention mask is 0/1 (the docstring: 1 on real tokens, 0 on padding); for values in {0, 1}
# mask >= 1 is mask == 1.
# %% equivalent group_advantages: 452049ee01 rewards.shape[-1] == 0 -> rewards.shape[-1] <= 0
# A tensor's size is never negative, so shape[-1] <= 0 is shape[-1] == 0.
# %% equivalent group_advantages: 6f7fe716d1 r.amax(...) == r.amin(...) -> r.amax(...) <= r.amin(...)
# A group's max is never below its min, so max <= min holds exactly when max == min (and for a
# NaN reward both comparisons are False).
