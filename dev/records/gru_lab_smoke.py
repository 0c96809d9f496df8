"""Run the CPU lab's fixed smoke profile with the instructor's reference functions.

Writes ``helpers/data/gru_lab_smoke.json`` (history, passport, a few samples, the failure-pattern
checks). Lesson 9.4 draws its dashboard from that file; lesson 9.5 has students rerun the profile
with their own graded functions and compare.

    python -m dev.records.gru_lab_smoke            # run and write the file
    python -m dev.records.gru_lab_smoke --check    # run and compare to the committed file
    python -m dev.records.gru_lab_smoke --profile tiny --out /tmp/tiny.json

The functions below are the instructor side of lesson 9.5's graded cells (same signatures as the
``helpers.gru_lab`` docstring); they are not shipped in ``helpers``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch
from torch import Tensor

from helpers.gru_lab import PROFILES, SMOKE_HISTORY, failure_pattern, run_lab

OUT = SMOKE_HISTORY
EPS = 1e-6


def group_advantages(rewards: Tensor) -> Tensor:
    """(B, G) rewards -> (B, G) advantages (r - mean) / (std + eps), population std (divide by G).

    A group whose rewards are all equal gets zeros (no signal), not 0/eps noise.
    """
    mean = rewards.mean(dim=1, keepdim=True)  # (B, 1)
    std = rewards.std(dim=1, keepdim=True, unbiased=False)  # (B, 1)
    adv = (rewards - mean) / (std + EPS)
    return torch.where(std > 0, adv, torch.zeros_like(adv))


def masked_mean_per_row(x: Tensor, mask: Tensor) -> Tensor:
    """(N, T) values -> (N,) mean over each row's active tokens; an empty row gives 0."""
    return (x * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """(N, T) per-token k3 estimate of KL(pi || ref) on tokens drawn from pi: e^d - d - 1, d = ref - pi."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1


def grpo_loss(
    new_logp: Tensor,
    old_logp: Tensor,
    ref_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip_eps: float,
    kl_coef: float,
) -> tuple[Tensor, dict[str, float]]:
    """DeepSeekMath's clipped GRPO loss (to minimise): token terms averaged within each response,
    then over responses.

    new_logp, old_logp, ref_logp: (N, T) behaviour log-probs of the sampled tokens (current with
    grad, old and reference without). advantages: (N,). mask: (N, T) float 1 on active tokens.
    Per token: -min(rho A, clip(rho, 1-eps, 1+eps) A) + kl_coef * k3.
    """
    ratio = torch.exp(new_logp - old_logp)  # (N, T)
    A = advantages[:, None]  # (N, 1)
    pg_loss1 = -ratio * A
    pg_loss2 = -torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A
    pg_loss = torch.maximum(pg_loss1, pg_loss2)  # (N, T)
    kl = k3(new_logp, ref_logp)  # (N, T)
    per_token = pg_loss + kl_coef * kl
    loss = masked_mean_per_row(per_token, mask).mean()
    metrics = {
        "pg": float(masked_mean_per_row(pg_loss.detach(), mask).mean()),
        "kl": float(masked_mean_per_row(kl.detach(), mask).mean()),
    }
    return loss, metrics


def token_entropy(logits: Tensor, mask: Tensor) -> float:
    """Mean entropy (nats) over active tokens of the distributions softmax(logits): (N, T, V), (N, T).

    -inf logits (grammar-disallowed tokens) have p = 0 and contribute 0, not NaN.
    """
    logp = logits.log_softmax(dim=-1)  # (N, T, V)
    p = logp.exp()
    H = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(dim=-1)  # (N, T)
    return float((H * mask).sum() / mask.sum().clamp(min=1))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al., 2021): 1 - C(n-c, k) / C(n, k), in a stable product form."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def clip_fractions(
    ratio: Tensor, advantages: Tensor, mask: Tensor, *, clip_eps: float
) -> tuple[float, float]:
    """(low, high): share of active tokens whose clipped branch is in force.

    low: ratio < 1 - eps with A < 0; high: ratio > 1 + eps with A > 0 (the TRL convention).
    """
    A = advantages[:, None]  # (N, 1)
    low = ((ratio < 1 - clip_eps) & (A < 0)).float()
    high = ((ratio > 1 + clip_eps) & (A > 0)).float()
    n = mask.sum().clamp(min=1)
    return float((low * mask).sum() / n), float((high * mask).sum() / n)


def kl_to_reference(logp: Tensor, ref_logp: Tensor, mask: Tensor) -> float:
    """Mean k3 estimate of KL(pi || ref) over active tokens; logp are pi's log-probs of its own samples."""
    return float((k3(logp, ref_logp) * mask).sum() / mask.sum().clamp(min=1))


REFERENCE_FNS = dict(
    advantages_fn=group_advantages,
    loss_fn=grpo_loss,
    entropy_fn=token_entropy,
    pass_at_k_fn=pass_at_k,
    clip_fraction_fn=clip_fractions,
    kl_fn=kl_to_reference,
)


def run(profile: str = "smoke", progress: bool = True) -> dict:
    """The JSON-able record of one run of ``profile`` with the reference functions."""
    result = run_lab(profile, progress=progress, **REFERENCE_FNS)
    return {
        "history": result.history,
        "passport": result.passport,
        "samples": result.samples,
        "failure_pattern": failure_pattern(result.history, k=PROFILES[profile].pass_k),
    }


def compare(new: dict, old: dict, rtol: float = 1e-6) -> list[str]:
    """Differences between two records' histories and configs (the passport's time and git fields
    are ignored); [] when they match."""
    problems = []
    if new["passport"]["config_hash"] != old["passport"]["config_hash"]:
        problems.append("profile differs (config_hash)")
    keys = set(new["history"]) | set(old["history"])
    for key in sorted(keys):
        if key not in old["history"]:  # logged by newer code than the record: nothing to compare
            continue
        a, b = new["history"].get(key), old["history"].get(key)
        if a is None or b is None or len(a) != len(b):
            problems.append(f"{key}: missing or of different length")
        elif key not in ("time_s",):
            bad = [
                i
                for i, (x, y) in enumerate(zip(a, b))
                if not math.isclose(x, y, rel_tol=rtol, abs_tol=1e-9)
            ]
            if bad:
                problems.append(
                    f"{key}: differs at {len(bad)} points, first at index {bad[0]}: {a[bad[0]]} vs {b[bad[0]]}"
                )
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dev.records.gru_lab_smoke", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--profile", default="smoke", choices=sorted(PROFILES))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--check", action="store_true", help="rerun and compare to --out instead of writing"
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    args = ap.parse_args()

    record = run(args.profile, progress=not args.quiet)
    h, fp = record["history"], record["failure_pattern"]
    k = PROFILES[args.profile].pass_k
    for key in ("train_acc", "train_entropy", f"train_pass@{k}", "train_coverage", "train_concentration",
                "heldout_greedy_acc", f"heldout_pass@{k}"):  # fmt: skip
        print(f"{key:>22}: {h[key][0]:.3f} -> {h[key][-1]:.3f}")
    print(f"{'failure pattern':>22}: {fp}")
    print(f"{'time':>22}: {record['passport']['extra']['time_total_s']} s")
    if args.check:
        old = json.loads(args.out.read_text())
        problems = compare(record, old)
        for line in problems:
            print("MISMATCH", line)
        print("check:", "FAILED" if problems else "ok, the history matches", args.out)
        return 1 if problems else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
