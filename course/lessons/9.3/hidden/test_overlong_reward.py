# contract: zero-zone, ramp, over-limit, dtype (every boundary, exactly as the formula)
_out = overlong_reward([0, 16, 17, 19, 20, 21, 10**6], 20, 4)
assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (7,)
np.testing.assert_allclose(
    np.array(_out, dtype=np.float64), [0, 0, -0.25, -0.75, -1.0, -1.0, -1.0], atol=1e-12
)
# contract: ramp (realistic sizes, integer division must not truncate)
_out = np.array(
    overlong_reward(np.array([3584, 3585, 3840, 4095, 4096, 4097]), 4096, 512), dtype=np.float64
)
np.testing.assert_allclose(_out, [0.0, -1 / 512, -0.5, -511 / 512, -1.0, -1.0], atol=1e-12)
# contract: L-range (L_cache == L_max: the ramp starts at length 0)
np.testing.assert_allclose(
    np.array(overlong_reward([0, 5, 10, 11], 10, 10), dtype=np.float64),
    [0.0, -0.5, -1.0, -1.0],
    atol=1e-12,
)
# contract: L-errors (L_cache <= 0 or L_cache > L_max raises ValueError)
for _Lm, _Lc in [(10, 0), (10, -2), (10, -10), (10, 11), (20, 30), (0, 1)]:
    try:
        overlong_reward([1, 2], _Lm, _Lc)
    except ValueError:
        pass
    else:
        raise AssertionError(f"L_max={_Lm}, L_cache={_Lc} must raise ValueError")
# contract: L-range (L_cache = 1: a one-token soft zone; |y| = L_max already gets -1)
np.testing.assert_allclose(np.array(overlong_reward([0, 8, 9, 10, 11], 10, 1), dtype=np.float64),
                           [0.0, 0.0, 0.0, -1.0, -1.0], atol=1e-12)  # fmt: skip
# contract: dtype, shape (array-likes of any integer dtype, and an empty one, give float64 (N,))
for _y in ([17, 3], (17, 3), np.array([17, 3], dtype=np.int32), np.array([17, 3], dtype=np.uint16),
           np.array([17.0, 3.0])):  # fmt: skip
    _out = overlong_reward(_y, 20, 4)
    assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (2,), type(_y)
    np.testing.assert_allclose(_out, [-0.25, 0.0], atol=1e-12)
_out = overlong_reward(np.array([], dtype=np.int64), 20, 4)
assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (0,)
# contract: differential (seeded random limits, lengths on and around both boundaries, zero and
# far beyond, int64 / int32 / list inputs)
# @reference overlong_reward
_rng = np.random.default_rng(934)
for _case in range(40):
    _Lm = int(_rng.integers(1, 9000))
    _Lc = int([1, _Lm, _rng.integers(1, _Lm + 1)][_case % 3])
    _st = _Lm - _Lc
    _y = np.concatenate([[0, _st, _st + 1, _Lm - 1, _Lm, _Lm + 1, 10 * _Lm + 7],
                         np.maximum(_st + _rng.integers(-_Lc - 3, _Lc + 4, 8), 0)])  # fmt: skip
    _y = np.maximum(_y, 0)
    _in = [_y, _y.astype(np.int32), _y.tolist()][_case % 3]
    _want = _ref_overlong_reward(_in, _Lm, _Lc)
    _out = overlong_reward(_in, _Lm, _Lc)
    assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == _y.shape, _case
    np.testing.assert_allclose(_out, _want, rtol=1e-12, atol=1e-12,
                               err_msg=f"case {_case}: L_max={_Lm}, L_cache={_Lc}, lengths {_y.tolist()}")  # fmt: skip
del _ref_overlong_reward
