"""Uncertainty of pass rates: one place that computes the intervals the lessons show.

A pass rate measured on n prompts is a binomial proportion; with n = 100 its standard error near
0.5 is about 0.05, so a before/after difference of 0.06 on its own says nothing. Every compared
rate in the course therefore carries a 95% interval:

- ``wilson_interval(k, n)``: the Wilson score interval of one rate k/n. Its endpoints are the two
  values p0 at which the score statistic (p_hat - p0) / sqrt(p0 (1 - p0) / n) equals -z and +z. It
  stays inside [0, 1] and behaves at k = 0 or k = n, where the textbook p_hat +- z se collapses.
- ``paired_difference(before, after)``: the difference of two rates measured on the SAME prompts
  (after minus before) with Tango's score interval for paired proportions (Tango 1998, Statistics
  in Medicine 17:891-908). Pairing matters: the prompts that stay right or stay wrong
  cancel, and only the discordant ones (right -> wrong, wrong -> right) carry the change, so the
  paired interval is narrower than two independent Wilson intervals would suggest.

An interval that contains 0 is reported as "no difference measured", not as a small gain. Both are
for 0/1 outcomes per prompt (a greedy pass); z = 1.96 gives 95%.

For a family of several such contrasts:

- ``paired_p_value(n, gained, lost)``: the two-sided p-value of the score test of "no change"
  behind the paired interval (its statistic at delta = 0), so p < 0.05 exactly when the 95%
  interval excludes 0.
- ``holm(pvalues, alpha)``: Holm's step-down procedure (Holm 1979, Scand. J. Statist. 6:65-70),
  which keeps the chance of any false "a measured change" in the family at most alpha.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` of ``successes / n``; (nan, nan) when n == 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class PairedDifference:
    """after - before on the same n prompts, with its interval and the discordant counts."""

    before: float
    after: float
    diff: float
    low: float
    high: float
    n: int
    gained: int  # wrong before, right after
    lost: int  # right before, wrong after

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    @property
    def p_value(self) -> float:
        """Two-sided p-value of "no change" (see ``paired_p_value``)."""
        return paired_p_value(self.n, self.gained, self.lost)

    def __str__(self) -> str:
        verdict = "a measured change" if self.excludes_zero else "no difference measured"
        return (
            f"{self.before:.2f} -> {self.after:.2f}, difference {self.diff:+.2f} "
            f"[{self.low:+.2f}, {self.high:+.2f}] (95%, paired, n={self.n}; "
            f"{self.gained} gained, {self.lost} lost): {verdict}"
        )


def _as_outcomes(xs: Sequence, name: str) -> list[int]:
    out = []
    for x in xs:
        v = float(x)
        if v not in (0.0, 1.0):
            raise ValueError(f"{name} must hold 0/1 outcomes per prompt, got {x!r}")
        out.append(int(v))
    return out


def _tango_z(delta: float, n: int, lost: int, gained: int) -> float:
    """Tango's score statistic for H0: p(gained) - p(lost) = delta (see ``paired_difference``)."""
    a = 2 * n
    b = -lost - gained + delta * (2 * n + lost - gained)
    c = -lost * delta * (1 - delta)
    p_lost = (-b + math.sqrt(max(0.0, b * b - 4 * a * c))) / (2 * a)  # constrained MLE
    var = 2 * p_lost + delta * (1 - delta)
    num = gained - lost - n * delta
    if var <= 0:
        return math.copysign(math.inf, num) if num else 0.0
    return num / math.sqrt(n * var)


def _solve_decreasing(f, target: float, lo: float, hi: float) -> float:
    """The x in [lo, hi] where the decreasing function f crosses target (bisection)."""
    for _ in range(100):
        mid = (lo + hi) / 2
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def paired_difference(before: Sequence, after: Sequence, z: float = Z95) -> PairedDifference:
    """after - before on paired 0/1 outcomes, with Tango's score interval (Tango 1998).

    ``before[i]`` and ``after[i]`` are the outcomes of prompt i; the two must have the same length.
    With ``gained`` (0 -> 1) and ``lost`` (1 -> 0) prompts out of n, the difference is
    (gained - lost) / n. The interval holds every delta whose score statistic
    (gained - lost - n delta) / sqrt(n (2 q + delta (1 - delta))) lies in [-z, z], q being the
    maximum-likelihood p(lost) under delta. Unlike the Wald or bootstrap interval it does not
    collapse to [0, 0] when no prompt changed (it is then about +-z^2 / (n + z^2)).
    """
    b0, a0 = _as_outcomes(before, "before"), _as_outcomes(after, "after")
    if len(b0) != len(a0):
        raise ValueError(f"before and after must score the same prompts: {len(b0)} vs {len(a0)}")
    n = len(b0)
    if n == 0:
        raise ValueError("no prompts: a rate of nothing has no interval")
    lost = sum(1 for x, y in zip(b0, a0) if x and not y)
    gained = sum(1 for x, y in zip(b0, a0) if not x and y)
    d = (gained - lost) / n
    edge = 1 - 1e-12

    def f(delta: float) -> float:
        return _tango_z(delta, n, lost, gained)

    low = _solve_decreasing(f, z, -edge, d) if d > -edge else -1.0
    high = _solve_decreasing(f, -z, d, edge) if d < edge else 1.0
    return PairedDifference(sum(b0) / n, sum(a0) / n, d, low, high, n, gained, lost)


def paired_p_value(n: int, gained: int, lost: int) -> float:
    """Two-sided p-value of Tango's score test of "no change" (delta = 0) on n paired prompts.

    At delta = 0 Tango's statistic (``_tango_z``) reduces to McNemar's score statistic without
    continuity correction, z = (gained - lost) / sqrt(gained + lost) (n cancels; z > 0 when more
    prompts were gained than lost), and p = 2 (1 - Phi(|z|)) = erfc(|z| / sqrt 2), Phi being the
    standard normal distribution function. p = 1 when no prompt changed. The paired interval
    inverts the same test, so p < 1 - 0.95 = 0.05 exactly when the 95% interval excludes 0 (up to
    the bisection's precision at the boundary).
    """
    if n <= 0 or gained < 0 or lost < 0 or gained + lost > n:
        raise ValueError(f"need 0 <= gained + lost <= n, n > 0; got n={n}, {gained=}, {lost=}")
    z = _tango_z(0.0, n, lost, gained)
    return math.erfc(abs(z) / math.sqrt(2))


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which hypotheses of the family are rejected at family-wise level
    alpha; ``True`` at position i means p-value i survives (for a paired contrast: the change is
    still measured after adjusting for the family).

    With the m p-values sorted, p_(1) <= ... <= p_(m), reject H_(1), ..., H_(k-1) where k is the
    first j with p_(j) > alpha / (m - j + 1), and nothing from H_(k) on; all m are rejected when
    no such j exists. Equivalently, the Holm-adjusted p-value of H_(j) is
    max over i <= j of min(1, (m - i + 1) p_(i)), and H_(j) is rejected when that is <= alpha.
    The chance of rejecting any true hypothesis is at most alpha whatever the dependence between
    the tests; it rejects everything Bonferroni (p <= alpha / m) rejects, and possibly more.
    """
    ps = [float(p) for p in pvalues]
    if any(not 0 <= p <= 1 for p in ps):  # also refuses nan
        raise ValueError(f"p-values must lie in [0, 1], got {ps}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    m = len(ps)
    rejected = [False] * m
    for rank, i in enumerate(sorted(range(m), key=ps.__getitem__)):
        if ps[i] > alpha / (m - rank):
            break
        rejected[i] = True
    return rejected
