"""helpers.stats: the Wilson interval solves its own score equation, the paired interval covers
the true difference about 95% of the time on simulated prompts, and bad input is refused."""

from __future__ import annotations

import math
import random

import pytest

from helpers.stats import Z95, holm, paired_difference, paired_p_value, wilson_interval


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


# --- Published values -------------------------------------------------------------------------
# The tests above check the intervals against their own score equations; these pin them to numbers
# printed by independent sources, compared to within half a unit of the last printed digit.


# Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Statistics in Medicine 17:857-872, Table I, method 3 (score interval without
# continuity correction), 95%. The last row is from the R package contingencytables (Fagerland,
# Lydersen & Laake), github.com/ocbe-uio/contingencytables, tests/testthat/test-ch2.R (commit
# b1fde68): Wilson_score_CI_1x2(ligarden_2010) prints "0.8125 (95% CI 0.5699 to 0.9341)", with
# ligarden_2010 = c(X = 13, n = 16) in R/datasets.R.
@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (13, 16, 0.5699, 0.9341),
    ],
)
def test_wilson_matches_published_intervals(k, n, low, high):
    assert wilson_interval(k, n) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def _paired_table(n11, n12, n21, n22):
    """Per-prompt outcomes for the paired 2x2 table [[n11, n12], [n21, n22]]: the row variable is
    ``before``, the column variable ``after`` (n12: right before, wrong after, i.e. lost; n21:
    wrong before, right after, i.e. gained)."""
    before = [1] * n11 + [1] * n12 + [0] * n21 + [0] * n22
    after = [1] * n11 + [0] * n12 + [1] * n21 + [0] * n22
    return before, after


Z90 = 1.6448536269514722  # the 0.95 quantile of the standard normal: a 90% interval

# Each source reports delta = pi_1+ - pi_+1 = (n12 - n21) / N, the ROW proportion minus the COLUMN
# proportion, i.e. before - after here; paired_difference reports after - before, so the published
# (estimate, L, U) must come back as (-estimate, -U, -L). decimals: the published rounding.
#  - contingencytables (Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables",
#    2017), github.com/ocbe-uio/contingencytables, tests/testthat/test-ch8.R (commit b1fde68),
#    Tango_asymptotic_score_CI_paired_2x2:
#      cavo_2012 = rbind(c(59, 6), c(16, 80)) (R/datasets.R; complete response before and after
#        consolidation therapy, Cavo et al. 2012) -> "estimate = -0.0621 (95% CI -0.1240 to -0.0054)"
#      matrix(c(0, 0, 3, 0), 2), column-major, i.e. n12 = 3 -> "1.0000 (95% CI -0.1230 to 1.0000)"
#      matrix(c(0, 3, 0, 0), 2), i.e. n21 = 3 -> "-1.0000 (95% CI -1.0000 to 0.1230)"
#  - ratesci (P. Laud), github.com/PeteLaud/ratesci, tests/testthat/test3.R, test "legacy & new
#    methods match published examples" (added in commit dae1df8, Feb 2018, when pairbinci's RD
#    interval was Tango's score interval), pairbinci(x = c(a, b, c, d)) with b = n12, c = n21:
#      "paired methods examples from Fagerland et al 2014" (Stat Med 33:2850-2875; airway
#        hyper-responsiveness before and after stem cell transplantation, Bentur et al. 2009, also
#        contingencytables' bentur_2009): c(1, 1, 7, 12) -> (-0.517, -0.026)
#      "paired methods examples from Agresti & Min 2005" (Stat Med 24:729-740):
#        c(53, 16, 8, 9) -> (-0.020, 0.207)
#      under the heading "Tango" (no paper named there; pairbinci cites Tango 1998, Stat Med
#        17:891-908, and Tango 1999, Stat Med 18:3511-3513; the papers' own tables were not checked):
#        c(4, 9, 3, 16) -> (-0.027, 0.390); c(43, 0, 1, 0) at level 0.90 -> (-0.096, 0.037)
PUBLISHED_TANGO = [
    pytest.param((59, 6, 16, 80), Z95, -0.1240, -0.0054, 4, id="contingencytables-cavo_2012"),
    pytest.param((0, 3, 0, 0), Z95, -0.1230, 1.0000, 4, id="contingencytables-n12=3"),
    pytest.param((0, 0, 3, 0), Z95, -1.0000, 0.1230, 4, id="contingencytables-n21=3"),
    pytest.param((1, 1, 7, 12), Z95, -0.517, -0.026, 3, id="ratesci-Fagerland2014-bentur"),
    pytest.param((53, 16, 8, 9), Z95, -0.020, 0.207, 3, id="ratesci-AgrestiMin2005"),
    pytest.param((4, 9, 3, 16), Z95, -0.027, 0.390, 3, id="ratesci-Tango-4-9-3-16"),
    pytest.param((43, 0, 1, 0), Z90, -0.096, 0.037, 3, id="ratesci-Tango-43-0-1-0-90pct"),
]


@pytest.mark.parametrize("table, z, pub_low, pub_high, decimals", PUBLISHED_TANGO)
def test_paired_interval_matches_published_tango_intervals(table, z, pub_low, pub_high, decimals):
    n11, n12, n21, n22 = table
    d = paired_difference(*_paired_table(*table), z=z)
    n = n11 + n12 + n21 + n22
    assert (d.n, d.gained, d.lost) == (n, n21, n12)
    assert d.diff == pytest.approx(-(n12 - n21) / n, abs=1e-12)  # after - before = -(published)
    tol = 0.5 * 10**-decimals + 1e-9
    assert d.low == pytest.approx(-pub_high, abs=tol)
    assert d.high == pytest.approx(-pub_low, abs=tol)


def test_published_cavo_estimate_is_the_negated_difference():
    # contingencytables prints "estimate = -0.0621" for cavo_2012: before - after = (6 - 16) / 161.
    d = paired_difference(*_paired_table(59, 6, 16, 80))
    assert round(-d.diff, 4) == -0.0621 and d.excludes_zero


# --- Multiplicity: the p-value of "no change" and Holm's procedure -----------------------------


def _normal_upper_tail(z: float, steps: int = 20000) -> float:
    """P(Z > z) for z >= 0 by Simpson's rule on the standard normal density over [z, z + 12]:
    independent of math.erf."""
    h = 12 / steps
    f = [math.exp(-((z + i * h) ** 2) / 2) / math.sqrt(2 * math.pi) for i in range(steps + 1)]
    return h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))


@pytest.mark.parametrize(
    "n, gained, lost", [(199, 29, 16), (199, 17, 52), (100, 12, 8), (50, 3, 0), (199, 72, 3)]
)
def test_p_value_is_mcnemars_score_test_at_delta_zero(n, gained, lost):
    from helpers.stats import _tango_z

    z = (gained - lost) / math.sqrt(gained + lost)  # McNemar, no continuity correction
    assert _tango_z(0.0, n, lost, gained) == pytest.approx(z, rel=1e-12)  # sign: gained - lost
    p = paired_p_value(n, gained, lost)
    assert p == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(abs(z) / math.sqrt(2)))), abs=1e-14)
    assert p == pytest.approx(2 * _normal_upper_tail(abs(z)), rel=1e-8)
    assert paired_p_value(n, lost, gained) == p  # two-sided


def test_p_value_of_nothing_changed_is_one_and_z_1_96_gives_0_05():
    assert paired_p_value(10, 0, 0) == 1.0
    assert math.erfc(Z95 / math.sqrt(2)) == pytest.approx(0.05, abs=1e-15)


def test_p_value_below_0_05_exactly_when_the_95_interval_excludes_zero():
    """The interval inverts the same score test, so the two verdicts agree (away from the
    boundary, where the interval's bisection has finite precision)."""
    n = 60
    for gained in range(0, 25):
        for lost in range(0, 25):
            before, after = _paired_table(10, lost, gained, n - 10 - lost - gained)
            d = paired_difference(before, after)
            p = d.p_value
            assert p == paired_p_value(n, gained, lost)
            if abs(p - 0.05) > 1e-6:
                assert (p < 0.05) == d.excludes_zero, (gained, lost, p, d)


def test_p_value_refuses_impossible_counts():
    with pytest.raises(ValueError, match="gained \\+ lost <= n"):
        paired_p_value(10, 8, 5)


def test_holm_hand_worked_examples():
    # m = 4, alpha = 0.05: thresholds 0.05/4, 0.05/3, 0.05/2, 0.05/1 = 0.0125, 0.0167, 0.025, 0.05.
    # Sorted 0.005 <= 0.0125 yes; 0.01 <= 0.0167 yes; 0.03 <= 0.025 no: stop, so 0.04 is not
    # rejected either, although 0.04 <= 0.05.
    assert holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]
    # 0.005, 0.01, 0.02, 0.04 each pass their threshold: all rejected, where Bonferroni
    # (p <= 0.0125) rejects only the first two.
    assert holm([0.01, 0.04, 0.02, 0.005]) == [True, True, True, True]
    assert holm([0.2, 0.5]) == [False, False]
    assert holm([]) == []
    assert holm([0.03, 0.03], alpha=0.05) == [False, False]  # 0.03 > 0.05 / 2
    assert holm([0.02, 0.02], alpha=0.05) == [True, True]  # ties: 0.02 <= 0.025, then <= 0.05


def _holm_by_adjusted_p(ps, alpha):
    """Holm through its adjusted p-values, max_{i<=j} min(1, (m - i + 1) p_(i)) (an independent
    formulation of the same procedure)."""
    m = len(ps)
    order = sorted(range(m), key=ps.__getitem__)
    adj, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adj[i] = running
    return [a <= alpha for a in adj]


def _random_families():
    rng = random.Random(2)
    return [[rng.random() ** 3 for _ in range(rng.randint(1, 15))] for _ in range(300)]


def test_holm_matches_its_adjusted_p_value_form():
    for ps in _random_families():  # cubed uniforms: many small p-values
        for alpha in (0.05, 0.1):
            assert holm(ps, alpha) == _holm_by_adjusted_p(ps, alpha)


def test_holm_matches_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    for ps in _random_families():
        reject, *_ = multitest.multipletests(ps, alpha=0.05, method="holm")
        assert holm(ps) == list(reject)


def test_holm_refuses_bad_p_values():
    with pytest.raises(ValueError, match="p-values"):
        holm([0.1, math.nan])
    with pytest.raises(ValueError, match="p-values"):
        holm([1.5])
