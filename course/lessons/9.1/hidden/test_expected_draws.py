# contract: degenerate, return-float
# the pooled rate misleads: pool {0, 1} has mean 0.5, P_info(0.5, 8) = 0.992, but no prompt is informative
_x = expected_draws(np.array([0.0, 1.0]), 10, 8)
assert type(_x) is float and _x == math.inf, (
    f"pool [0, 1]: inf (a pooled rate would say 10.08), got {_x}"
)
# contract: degenerate (inf only when the mean P_info is exactly 0; a tiny mean is a finite count,
# not "below some threshold")
_x = expected_draws(np.array([0.0, 1e-200]), 1, 2)
assert type(_x) is float and math.isfinite(_x) and math.isclose(_x, 1e200, rel_tol=1e-9), (
    f"pool [0, 1e-200], G = 2: mean P_info is 1e-200, not 0, so 1e200 draws; got {_x}: compare "
    "the mean with 0 exactly, and compute P_info accurately (1 - (1-p)**G rounds to 0 here)"
)
# contract: mean-of-p-info, hand-values
# pool [0, 1, 0.5, 0.5], G = 4: P_info(0.5, 4) = 1 - 2/16 = 0.875; mean = 1.75/4 = 0.4375; 12/0.4375
_x = expected_draws(np.array([0.0, 1.0, 0.5, 0.5]), 12, 4)
assert math.isclose(_x, 12 / 0.4375, rel_tol=1e-12), (
    f"expected 27.428571 (pooled would give 13.71), got {_x}"
)
# p = 0.1, G = 8, B = 64: 64 / (1 - 1e-8 - 0.43046721)
_x = expected_draws(np.full(7, 0.1), 64, 8)
assert math.isclose(_x, 64 / 0.56953278, rel_tol=1e-9), f"expected 112.3727, got {_x}"
# contract: input-kinds, degenerate (list input, non-integer B, G = 1 is never informative)
assert math.isclose(expected_draws([0.1, 0.9], 2.5, 2), 2.5 / 0.18, rel_tol=1e-12), (
    "P_info(0.1, 2) = 0.18"
)
_x = expected_draws(np.array([0.3, 0.6]), 3, 1)
assert type(_x) is float and _x == math.inf, "G = 1 is never informative"
# one informative prompt out of four, B = 1: P_info(0.5, 2) = 0.5, mean = 0.125 -> 8 draws
assert math.isclose(expected_draws(np.array([0.0, 0.0, 1.0, 0.5]), 1, 2), 8.0, rel_tol=1e-12)
# contract: errors (empty, 0-d or 2-D pool; B <= 0; p and G checked as p_info checks them)
for _bad in [
    (np.array([]), 4, 8),
    (np.array([0.5]), 0, 8),
    (np.array([0.5]), -1, 8),
    (np.array([1.2]), 4, 8),
    (0.5, 4, 2),
    (np.array(0.5), 4, 2),
    (np.array([[0.5, 0.5]]), 4, 2),
    (np.full((3, 2), 0.5), 4, 2),
    (np.zeros((0, 3)), 4, 2),
    (np.array([0.5]), -0.5, 2),
    (np.array([0.5, np.nan]), 4, 8),
    (np.array([0.5, -0.2]), 4, 8),
    (np.array([0.5]), 4, 0),
    (np.array([0.5]), 4, 2.5),
    (np.array([0.5]), 4, 2.0),  # a whole float is not an integer G (as p_info checks it)
    (np.array([0.5]), 4, True),
]:
    try:
        expected_draws(*_bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"expected_draws{_bad!r} must raise ValueError")
# contract: differential, mean-of-p-info, degenerate (seeded pools mixing never/always solved,
# tiny and ordinary rates; E[N] >= B; inf exactly when no prompt can be informative)
# @reference p_info expected_draws
_rng = np.random.default_rng(911)
for _case in range(40):
    _J = int(_rng.integers(1, 60))
    _G = int(_rng.choice([1, 2, 3, 4, 8, 16, 64]))
    _pool = _rng.random(_J)
    _pick = _rng.random(_J)
    _pool[_pick < 0.3] = 0.0
    _pool[(_pick >= 0.3) & (_pick < 0.5)] = 1.0
    _pool[(_pick >= 0.5) & (_pick < 0.6)] = 10.0 ** _rng.uniform(-12, -4)
    if _case % 5 == 0:
        _pool = _rng.choice([0.0, 1.0], _J)  # a pool that is never informative
    _B = float(_rng.uniform(0.1, 100.0)) if _case % 2 else int(_rng.integers(1, 65))
    _want = _ref_expected_draws(_pool, _B, _G)
    _keep = _pool.copy()
    _got = expected_draws(_pool, _B, _G)
    assert type(_got) is float, f"return a Python float, got {type(_got).__name__}"
    assert np.array_equal(_pool, _keep), "success_rates was modified"
    if _want == math.inf:
        assert _got == math.inf, f"case {_case}: no prompt is informative, expected inf, got {_got}"
    else:
        assert _got >= _B and math.isclose(_got, _want, rel_tol=1e-12), (
            f"case {_case}: J = {_J}, G = {_G}, B = {_B}: expected {_want!r}, got {_got!r}"
        )
del _ref_p_info, _ref_expected_draws
