# contract: formula (the lesson's tenfold example: Dr. GRPO keeps the factor of ten)
_b = np.array([[0.0, 1.0, 1.0, 1.0], [0.0, 0.1, 0.1, 0.1]])
_out = dr_grpo_advantages(_b)
assert type(_out) is np.ndarray
_out = np.array(_out, dtype=np.float64)
np.testing.assert_allclose(
    _out, [[-0.75, 0.25, 0.25, 0.25], [-0.075, 0.025, 0.025, 0.025]], atol=1e-12
)
# contract: dtype (integer rewards must give float advantages, not integer truncation)
_out = dr_grpo_advantages(np.array([1, 0, 0]))
assert type(_out) is np.ndarray and _out.dtype == np.float64, (
    "return float64 even for integer rewards"
)
np.testing.assert_allclose(np.array(_out, dtype=np.float64), [2 / 3, -1 / 3, -1 / 3], atol=1e-12)
# contract: degenerate (groups whose float mean is exact give exact zeros, no NaN)
_out = np.array(
    dr_grpo_advantages(np.array([[0.5, 0.5, 0.5], [-1.0, -1.0, -1.0]])), dtype=np.float64
)
np.testing.assert_array_equal(_out, np.zeros((2, 3)))
# contract: degenerate (ten 0.3s: zeros up to rounding, not exact, and no division blows them up)
_out = np.array(dr_grpo_advantages(np.full((2, 10), 0.3)), dtype=np.float64)
assert _out.shape == (2, 10) and np.abs(_out).max() < 1e-15, _out
# contract: no-modify (the caller's array is not modified: 2-D, 1-D, float32 and int inputs)
for _in in (np.array([[2.0, 0.0, 1.0, 5.0]]), np.array([2.0, 0.0, 1.0]),
            np.array([1.5, 0.5], dtype=np.float32), np.array([[3, 1], [0, 0]])):  # fmt: skip
    _keep = _in.copy()
    dr_grpo_advantages(_in)
    np.testing.assert_array_equal(_in, _keep, err_msg="do not modify the input in place")
    assert _in.dtype == _keep.dtype
# contract: shapes, array-like (list input; each row sums to zero)
_out = np.array(dr_grpo_advantages([[3.0, 1.0, 2.0], [10.0, -2.0, 4.0]]), dtype=np.float64)
np.testing.assert_allclose(_out, [[1.0, -1.0, 0.0], [6.0, -6.0, 0.0]], atol=1e-12)
# contract: dtype, shapes (float64 and the input's shape for float32, int and list inputs, G = 1, B = 1)
for _x in (np.array([0.25, 1.0, 0.0], dtype=np.float32), np.array([[1, 2], [3, 7]], dtype=np.int32),
           [[0.5, 2.0, 1.0]], np.array([7.0]), np.array([[7.0], [-1.0]]), [1, 0, 0, 1]):  # fmt: skip
    _out = dr_grpo_advantages(_x)
    assert type(_out) is np.ndarray and _out.dtype == np.float64, (
        f"return float64 for {np.asarray(_x).dtype} input, got {getattr(_out, 'dtype', type(_out))}"
    )
    assert _out.shape == np.shape(_x), f"input shape {np.shape(_x)} must be kept, got {_out.shape}"
# contract: differential (seeded random inputs against the reference: one group and batches, sizes
# from 1, binary / integer / tiny-spread / wide-scale / float32 rewards)
# @reference dr_grpo_advantages
_rng = np.random.default_rng(93)
for _case in range(48):
    _G = int(_rng.integers(1, 10))
    _shape = (_G,) if _case % 3 == 0 else (int(_rng.integers(1, 7)), _G)
    _kind = _case % 6
    if _kind == 0:
        _r = _rng.integers(0, 2, _shape).astype(np.float64)
    elif _kind == 1:
        _r = _rng.integers(-3, 4, _shape)  # integer dtype
    elif _kind == 2:
        _r = 0.3 + 1e-9 * _rng.normal(size=_shape)  # tiny but nonzero spread
    elif _kind == 3:
        _r = _rng.normal(0, 10.0 ** float(_rng.integers(-3, 5)), _shape)
    elif _kind == 4:
        _r = _rng.normal(size=_shape).astype(np.float32)
    else:
        _r = np.round(_rng.random(_shape), 1) + 0.1 * (_rng.random(_shape) < 0.3)
    _want = _ref_dr_grpo_advantages(_r)
    _in = _r.copy()
    _out = dr_grpo_advantages(_in)
    np.testing.assert_array_equal(_in, _r, err_msg=f"case {_case}: the input was modified")
    assert type(_out) is np.ndarray and _out.dtype == np.float64, f"case {_case}: float64 array"
    assert _out.shape == _r.shape, f"case {_case}: shape {_out.shape}, expected {_r.shape}"
    # float64 input: 1e-12 of the reward scale (another summation order is fine); float32 input:
    # 1e-5 (computing in float32 and casting is fine). The absolute part covers exact zeros.
    _tol = 1e-5 if _r.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(_out, _want, rtol=_tol, atol=_tol * max(1.0, float(np.abs(_r).max())),
                               err_msg=f"case {_case}: rewards {_r.tolist()}")  # fmt: skip
    if _kind == 2:  # the tiny spread is kept, not rounded away (1e-12 << 1e-9)
        np.testing.assert_allclose(_out, _want, rtol=1e-3, atol=1e-12, err_msg=f"case {_case}")
del _ref_dr_grpo_advantages
