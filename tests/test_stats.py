"""helpers.stats: the Wilson interval solves its own score equation, the paired interval covers
the true difference about 95% of the time on simulated prompts, and bad input is refused."""

from __future__ import annotations

import math
import random

import pytest

from helpers.stats import Z95, paired_difference, wilson_interval


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (47, 100), (100, 100), (1, 250)])
def test_wilson_endpoints_solve_the_score_equation(k, n):
    lo, hi = wilson_interval(k, n)
    p = k / n
    for p0, sign in ((lo, 1), (hi, -1)):
        if 0 < p0 < 1:  # an endpoint inside (0, 1) is where the score statistic reaches +-z
            assert (p - p0) / math.sqrt(p0 * (1 - p0) / n) == pytest.approx(sign * Z95, abs=1e-9)
    assert 0 <= lo <= p <= hi <= 1
    if k == 0:
        assert lo == 0
    if k == n:
        assert hi == 1


def test_wilson_width_at_n_100_is_about_two_standard_errors_each_side():
    lo, hi = wilson_interval(47, 100)
    assert (hi - lo) / 2 == pytest.approx(Z95 * math.sqrt(0.47 * 0.53 / 100), abs=0.003)


def _simulate(n, p_before, p_gain, p_loss, rng):
    before = [int(rng.random() < p_before) for _ in range(n)]
    after = [int(rng.random() >= p_loss) if b else int(rng.random() < p_gain) for b in before]
    return before, after


def test_paired_interval_covers_the_true_difference_about_95_percent():
    rng = random.Random(0)
    n, p_before, p_gain, p_loss = 200, 0.45, 0.35, 0.10
    true = (1 - p_before) * p_gain - p_before * p_loss  # 0.1475
    covered = 0
    reps = 1000
    for _ in range(reps):
        d = paired_difference(*_simulate(n, p_before, p_gain, p_loss, rng))
        covered += d.low <= true <= d.high
    assert 0.93 <= covered / reps <= 0.97, covered / reps


def test_paired_is_narrower_than_independent_when_prompts_agree():
    before = [1] * 40 + [0] * 50 + [0] * 10
    after = [1] * 40 + [0] * 50 + [1] * 10  # 10 prompts gained, none lost
    d = paired_difference(before, after)
    assert (d.before, d.after, d.diff, d.gained, d.lost) == (0.4, 0.5, pytest.approx(0.1), 10, 0)
    lo1, hi1 = wilson_interval(40, 100)
    lo2, hi2 = wilson_interval(50, 100)
    assert d.high - d.low < (hi1 - lo1 + hi2 - lo2) / 2
    assert d.excludes_zero and "a measured change" in str(d)


def test_swapping_before_and_after_negates_the_interval():
    rng = random.Random(1)
    before, after = _simulate(120, 0.5, 0.2, 0.15, rng)
    d, e = paired_difference(before, after), paired_difference(after, before)
    assert (e.diff, e.low, e.high) == pytest.approx((-d.diff, -d.high, -d.low), abs=1e-12)


def test_no_change_is_reported_as_no_difference():
    d = paired_difference([1, 0] * 50, [1, 0] * 50)
    assert d.diff == 0 and d.low < 0 < d.high and "no difference measured" in str(d)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: wilson_interval(5, 3), "successes <= n"),
        (lambda: paired_difference([1, 0], [1]), "same prompts"),
        (lambda: paired_difference([], []), "no prompts"),
        (lambda: paired_difference([0.5], [1]), "0/1 outcomes"),
    ],
)
def test_bad_input_is_refused_with_a_reason(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_empty_rate_is_nan():
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_paired_endpoints_solve_tangos_score_equation_and_no_change_is_not_certainty():
    from helpers.stats import _tango_z

    before, after = (
        [1] * 30 + [0] * 50 + [1] * 8 + [0] * 12,
        [1] * 30 + [0] * 50 + [0] * 8 + [1] * 12,
    )
    d = paired_difference(before, after)
    assert (d.gained, d.lost, d.diff) == (12, 8, pytest.approx(0.04))
    assert _tango_z(d.low, 100, 8, 12) == pytest.approx(Z95, abs=1e-6)
    assert _tango_z(d.high, 100, 8, 12) == pytest.approx(-Z95, abs=1e-6)
    same = paired_difference([1, 0] * 50, [1, 0] * 50)
    assert same.high == pytest.approx(Z95**2 / (100 + Z95**2), abs=1e-6)  # not a zero-width [0, 0]
