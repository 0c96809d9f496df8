# contract: hand-values, per-row, shape-dtype, objective
_rho = np.array([[0.5, 0.9, 1.0, 1.1, 1.5, 1.2, 0.8]] * 3)
_m = np.ones_like(_rho)
_out = clipped_surrogate(_rho, np.array([2.0, -2.0, 0.0]), _m)
assert type(_out) is np.ndarray and _out.dtype == np.float64
_got = np.array(_out, dtype=np.float64)
assert _got.shape == (3, 7)
# A=+2: rho=0.5 NOT clipped (1.0 < 1.6); 1.5 clipped to 1.2 -> 2.4; boundary 1.2 -> 2.4, 0.8 -> 1.6
np.testing.assert_allclose(_got[0], [1.0, 1.8, 2.0, 2.2, 2.4, 2.4, 1.6], rtol=1e-12)
# A=-2: rho=0.5 clipped to 0.8 -> -1.6; rho=1.5 NOT clipped -> -3.0
np.testing.assert_allclose(_got[1], [-1.6, -1.8, -2.0, -2.2, -3.0, -2.4, -1.6], rtol=1e-12)
# A=0: zero everywhere
np.testing.assert_allclose(_got[2], 0.0, atol=0)
# contract: eps-clip
# other eps_clip: A=+1 rho=1.5 -> 1.1; A=-1 rho=0.5 -> -0.9; A=-1 rho=1.5 -> -1.5; A=+1 rho=0.5 -> 0.5
_got = np.array(
    clipped_surrogate(
        np.array([[1.5, 0.5], [0.5, 1.5]]), np.array([1.0, -1.0]), np.ones((2, 2)), eps_clip=0.1
    ),
    dtype=np.float64,
)
np.testing.assert_allclose(_got, [[1.1, 0.5], [-0.9, -1.5]], rtol=1e-12)
# square G = T = 3: the advantage is per ROW (response), not per column
_got = np.array(
    clipped_surrogate(np.ones((3, 3)), np.array([1.0, -2.0, 3.0]), np.ones((3, 3))),
    dtype=np.float64,
)
np.testing.assert_allclose(_got, [[1, 1, 1], [-2, -2, -2], [3, 3, 3]], rtol=1e-12)
# contract: masked (padding: masked positions are 0.0 even when the ratio there is nan, inf or huge)
with np.errstate(all="ignore"):
    _out = clipped_surrogate(
        np.array([[1.3, np.nan, np.inf], [0.7, 5.0, np.nan]]),
        np.array([1.0, -1.0]),
        np.array([[1, 0, 0], [1, 0, 0]], dtype=bool),
    )
_got = np.array(_out, dtype=np.float64)
assert np.all(np.isfinite(_got)), f"padding must not leak nan/inf into the output: {_got}"
np.testing.assert_allclose(_got, [[1.2, 0.0, 0.0], [-0.8, 0.0, 0.0]], rtol=1e-12, atol=0)
assert np.all(_got[:, 1:] == 0.0)
# inputs not modified
_r0, _a0 = np.array([[1.5, 0.5]]), np.array([1.0])
clipped_surrogate(_r0, _a0, np.array([[1, 1]]))
assert np.array_equal(_r0, [[1.5, 0.5]]) and np.array_equal(_a0, [1.0])
# contract: shape-errors (also shapes that NumPy would broadcast silently)
for _args in [
    (np.ones((2, 3)), np.ones(3), np.ones((2, 3))),
    (np.ones((2, 3)), np.ones(2), np.ones((3, 2))),
    (np.ones(3), np.ones(3), np.ones(3)),  # ratios not 2-D
    (np.ones((2, 2, 2)), np.ones(2), np.ones((2, 2, 2))),
    (np.ones((2, 3)), np.ones(2), np.ones((1, 3))),  # mask of another shape
    (np.ones((2, 3)), np.ones(2), np.ones(3)),
    (np.ones((2, 3)), np.ones(2), np.ones((2, 1))),
    (np.ones((2, 3)), np.ones(1), np.ones((2, 3))),  # advantages not (G,)
    (np.ones((2, 3)), np.ones((2, 1)), np.ones((2, 3))),
    (np.ones((2, 3)), np.float64(1.0), np.ones((2, 3))),
]:
    try:
        clipped_surrogate(*_args)
    except ValueError:
        pass
    else:
        raise AssertionError(
            f"shapes {[np.shape(_a) for _a in _args]} (ratios, advantages, mask) must raise ValueError"
        )
# contract: far-outside (an active ratio far above 1 + eps with A < 0 is NOT bounded: no dual clip,
# no cap on the ratio; far below 1 - eps with A > 0 is not lifted)
_got = np.array(
    clipped_surrogate(np.array([[50.0, 4.0, 1e-3], [50.0, 4.0, 1e-3]]), np.array([-1.0, 2.0]),
                      np.ones((2, 3), dtype=bool)),
    dtype=np.float64,
)  # fmt: skip
np.testing.assert_allclose(_got, [[-50.0, -4.0, -0.8], [2.4, 2.4, 2e-3]], rtol=1e-12)
# contract: clip-bounds (exactly on 1 - eps and 1 + eps, both signs of A, eps_clip = 0 and 1)
_rho = np.array([[0.8, 1.2, 0.7999999, 1.2000001]])
for _A in (1.5, -1.5):
    _got = np.array(clipped_surrogate(_rho, np.array([_A]), np.ones((1, 4))), dtype=np.float64)
    np.testing.assert_allclose(_got[0], np.minimum(_rho[0] * _A, np.clip(_rho[0], 0.8, 1.2) * _A),
                               rtol=1e-12)  # fmt: skip
_got = np.array(clipped_surrogate(np.array([[0.5, 2.0]] * 2), np.array([1.0, -1.0]),
                                  np.ones((2, 2)), eps_clip=0.0), dtype=np.float64)  # fmt: skip
np.testing.assert_allclose(_got, [[0.5, 1.0], [-1.0, -2.0]], rtol=1e-12)
_got = np.array(clipped_surrogate(np.array([[0.5, 3.0]] * 2), np.array([1.0, -1.0]),
                                  np.ones((2, 2)), eps_clip=1.0), dtype=np.float64)  # fmt: skip
np.testing.assert_allclose(_got, [[0.5, 2.0], [-0.5, -3.0]], rtol=1e-12)
# contract: no-modify (nan/inf padding in ratios stays in the caller's array; mask unchanged)
_r0 = np.array([[1.3, np.nan, np.inf], [0.7, 5.0, -np.inf]])
_m0 = np.array([[1, 0, 0], [1, 1, 0]])
_k0, _km = _r0.copy(), _m0.copy()
with np.errstate(all="ignore"):
    clipped_surrogate(_r0, np.array([1.0, -1.0]), _m0)
assert np.array_equal(_r0, _k0, equal_nan=True) and np.array_equal(_m0, _km), (
    "the inputs were modified in place (padding of ratios included)"
)
# contract: differential, masked, per-row, dtype (seeded ratios on and far outside the clip bounds,
# advantages of both signs and 0, ragged masks of bool/int/float, eps_clip from 0 to 1; float64
# inputs at rtol 1e-12, atol 1e-12; float32 inputs at rtol 1e-6, atol 1e-6: the docstring fixes the
# output dtype, not the precision of the arithmetic)
# @reference clipped_surrogate
_rng = np.random.default_rng(9204)
with np.errstate(all="ignore"):
    for _case in range(60):
        _G, _T = int(_rng.integers(1, 7)), int(_rng.integers(1, 10))
        _eps = float(_rng.choice([0.0, 0.1, 0.2, 0.28, 1.0]))
        _rho = _rng.choice([1.0, 1 - _eps, 1 + _eps, 0.5, 2.0, 50.0, 1e-4], (_G, _T))
        _rho = np.where(_rng.random((_G, _T)) < 0.5, _rng.lognormal(0, 0.5, (_G, _T)), _rho)
        _adv = _rng.choice([0.0, 1.0, -1.0, 2.5, -0.3], _G) * _rng.uniform(0.5, 2, _G)
        _m = _rng.random((_G, _T)) < 0.7
        _rho[~_m] = _rng.choice([np.nan, np.inf, -np.inf, 1e300, 0.0])
        _dt = np.float32 if _case % 4 == 3 else np.float64
        _rr, _aa = _rho.astype(_dt), _adv.astype(_dt)
        _mm = _m.astype((bool, np.int64, np.float64)[_case % 3])
        _want = _ref_clipped_surrogate(_rr, _aa, _mm, _eps)
        _out = clipped_surrogate(_rr, _aa, _mm, eps_clip=_eps)
        assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (_G, _T), (
            f"case {_case}: return float64 of shape ({_G}, {_T})"
        )
        _tol = 1e-12 if _dt is np.float64 else 1e-6
        np.testing.assert_allclose(_out, _want, rtol=_tol, atol=_tol, err_msg=f"case {_case}")
        assert np.all(_out[~_m] == 0.0), f"case {_case}: masked tokens must give exactly 0.0"
del _ref_clipped_surrogate
