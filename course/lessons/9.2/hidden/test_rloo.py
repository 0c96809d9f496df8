# contract: hand-values, shape-dtype
# hand values: [2, 4, 9] -> others' means [6.5, 5.5, 3]
_out = rloo_baseline([2, 4, 9])
assert type(_out) is np.ndarray and _out.dtype == np.float64
np.testing.assert_allclose(np.array(_out, dtype=np.float64), [6.5, 5.5, 3.0], rtol=1e-12)
# G = 2 swaps the two rewards
np.testing.assert_allclose(
    np.array(rloo_baseline(np.array([0.25, 0.75])), dtype=np.float64), [0.75, 0.25], rtol=1e-12
)
# contract: per-group, advantages (B, G): per row, last axis
_R = np.array([[1.0, 0, 0, 0], [1.0, 1, 0, 0], [0.5, 0.5, 0.5, 0.5]])
_out = rloo_baseline(_R)
assert type(_out) is np.ndarray
_got = np.array(_out, dtype=np.float64)
assert _got.shape == (3, 4)
np.testing.assert_allclose(
    _got,
    [[0, 1 / 3, 1 / 3, 1 / 3], [1 / 3, 1 / 3, 2 / 3, 2 / 3], [0.5, 0.5, 0.5, 0.5]],
    rtol=1e-12,
    atol=1e-15,
)
_out = rloo_advantages(_R)
assert type(_out) is np.ndarray
_got = np.array(_out, dtype=np.float64)
np.testing.assert_allclose(
    _got,
    [[1, -1 / 3, -1 / 3, -1 / 3], [2 / 3, 2 / 3, -2 / 3, -2 / 3], [0, 0, 0, 0]],
    rtol=1e-12,
    atol=1e-12,
)
# contract: identity (r - b = G/(G-1) (r - mean), written independently)
_r = np.array([0.1, 0.9, 0.4, 0.4, 0.0])
np.testing.assert_allclose(
    np.array(rloo_advantages(_r), dtype=np.float64),
    5 / 4 * (_r - _r.sum() / 5),
    rtol=1e-12,
    atol=1e-15,
)
# contract: no-modify
_keep = _r.copy()
rloo_baseline(_r)
rloo_advantages(_r)
assert np.array_equal(_r, _keep)
# contract: errors (G < 2, or not 1-D / 2-D), for both functions
for _bad in [np.zeros((3, 1)), np.zeros(1), np.zeros((2, 2, 2)), np.zeros(0), np.float64(1.0)]:
    for _fn in (rloo_baseline, rloo_advantages):
        try:
            _fn(_bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{_fn.__name__} on shape {np.shape(_bad)} must raise ValueError")
# contract: shape-dtype (float32 and int input give float64 of the input's shape)
for _fn in (rloo_baseline, rloo_advantages):
    for _in in (np.array([[0.1, 0.7, 0.2]], dtype=np.float32), np.array([1, 0, 0, 1])):
        _out = _fn(_in)
        assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == _in.shape, (
            f"{_fn.__name__}: {_in.dtype} input of shape {_in.shape} must give float64 of that shape"
        )
# contract: degenerate (a group of equal rewards: zeros up to rounding, |A| ~ 1e-16)
np.testing.assert_allclose(np.array(rloo_advantages(np.full((2, 10), 0.3)), dtype=np.float64),
                           0.0, atol=1e-12)  # fmt: skip
# contract: differential, identity, per-group (seeded batches against the reference, several rows
# of different content; rtol 1e-12 and atol 1e-12, since a correct A can be 1e-16 where b - r = 0)
# @reference rloo
_rng = np.random.default_rng(9202)
for _case in range(40):
    _B, _G = int(_rng.integers(1, 6)), int(_rng.choice([2, 3, 4, 5, 8, 16]))
    _R = np.where(_rng.random((_B, _G)) < 0.5, _rng.random((_B, _G)), _rng.integers(0, 2, (_B, _G)))
    _R[_rng.random(_B) < 0.3] = 0.3
    _dt = np.float32 if _case % 4 == 3 else np.float64
    _in = (_R[0] if _case % 3 == 0 else _R).astype(_dt)
    _keep = _in.copy()
    _tol = {"rtol": 1e-12, "atol": 1e-12} if _dt is np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    for _fn, _ref in ((rloo_baseline, _ref_rloo_baseline), (rloo_advantages, _ref_rloo_advantages)):
        _out = _fn(_in)
        assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == _in.shape
        np.testing.assert_allclose(_out, _ref(_in), **_tol, err_msg=f"{_fn.__name__} case {_case}")
        assert np.array_equal(_in, _keep), f"{_fn.__name__} modified its input"
    _x = _in.astype(np.float64)
    np.testing.assert_allclose(np.array(rloo_advantages(_in), dtype=np.float64),
                               _G / (_G - 1) * (_x - _x.mean(-1, keepdims=True)), **_tol)  # fmt: skip
del _ref_rloo_baseline, _ref_rloo_advantages
