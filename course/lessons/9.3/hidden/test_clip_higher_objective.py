# contract: interval (symmetric clip, eps_high = eps_low, caps 1.25 at 1.2)
_out = np.array(
    clip_higher_objective(_rho[:1], np.array([2.0]), np.ones((1, 4)), 0.2, 0.2), dtype=np.float64
)
np.testing.assert_allclose(_out, [[1.4, 2.0, 2.4, 2.4]], atol=1e-12)
# contract: masked-zero, padding (masked positions are exactly 0 even with garbage ratios there;
# A = 0 gives 0)
_rho = np.array([[1.5, 1.0, 37.0], [0.5, 1e6, 2.0]])
_m = np.array([[1, 1, 0], [1, 0, 0]])
_out = clip_higher_objective(_rho, np.array([0.5, 0.0]), _m)
assert type(_out) is np.ndarray
np.testing.assert_allclose(
    np.array(_out, dtype=np.float64), [[0.64, 0.5, 0.0], [0.0, 0.0, 0.0]], atol=1e-12
)
# contract: adv-shapes, interval ((G, T) per-token advantages, mixed signs, custom eps)
_rho = np.array([[0.6, 1.1, 1.6]])
_A = np.array([[-2.0, 3.0, 1.0]])
_out = np.array(
    clip_higher_objective(_rho, _A, np.ones((1, 3)), eps_low=0.3, eps_high=0.5), dtype=np.float64
)
np.testing.assert_allclose(_out, [[-1.4, 3.3, 1.5]], atol=1e-12)
# contract: mask-dtypes, adv-shapes (bool mask, shape preserved)
_out = np.array(
    clip_higher_objective(np.ones((3, 2)), np.array([1.0, -1.0, 0.5]), np.ones((3, 2), bool)),
    dtype=np.float64,
)
np.testing.assert_allclose(_out, [[1.0, 1.0], [-1.0, -1.0], [0.5, 0.5]], atol=1e-12)
# contract: interval, formula (ratios exactly on each bound and far outside it, both signs of A:
# the min keeps an unclipped ratio far above the range for A < 0 and far below it for A > 0)
_rho = np.array([[0.8, 1.28, 1e-6, 50.0, 1e9]])
for _a in (1.5, -1.5):
    _want = np.minimum(_rho * _a, np.clip(_rho, 0.8, 1.28) * _a)
    _out = clip_higher_objective(_rho, np.array([_a]), np.ones((1, 5)))
    np.testing.assert_allclose(np.array(_out, dtype=np.float64), _want, rtol=1e-12, atol=1e-12,
                               err_msg=f"A = {_a}: ratios {_rho.tolist()}")  # fmt: skip
# contract: dtype (float64 also for float32 ratios and advantages, and for int masks)
_out = clip_higher_objective(np.array([[0.5, 1.5]], dtype=np.float32), np.array([1.0], dtype=np.float32),
                             np.array([[1, 1]], dtype=np.int8))  # fmt: skip
assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (1, 2), (
    f"return a float64 (G, T) array for float32 input, got {getattr(_out, 'dtype', type(_out))}"
)
np.testing.assert_allclose(_out, [[0.5, 1.28]], rtol=1e-6)
# contract: differential (seeded random inputs against the reference: ratios on the bounds, near 1,
# and beyond exp(+-2) and exp(+-20); (G,) and (G, T) advantages with zeros and both signs; ragged
# masks of every dtype; float32 inputs; G and T from 1; several eps pairs)
# @reference clip_higher_objective
_rng = np.random.default_rng(933)
for _case in range(60):
    _G, _T = int(_rng.integers(1, 6)), int(_rng.integers(1, 9))
    _el, _eh = [(0.2, 0.28), (0.2, 0.2), (0.1, 0.5), (0.3, 0.0), (0.05, 0.1)][_case % 5]
    _logr = _rng.normal(0, 0.3, (_G, _T))
    _pick = _rng.random((_G, _T))
    _logr[_pick < 0.3] = _rng.choice([-1, 1], int((_pick < 0.3).sum())) * _rng.uniform(
        2, 25, int((_pick < 0.3).sum())
    )
    _rho = np.exp(_logr)
    _rho[(_pick >= 0.3) & (_pick < 0.4)] = 1.0 - _el  # exactly on the lower bound
    _rho[(_pick >= 0.4) & (_pick < 0.5)] = 1.0 + _eh  # exactly on the upper bound
    _A = _rng.normal(0, 1.5, _G if _case % 2 else (_G, _T))
    _A[_rng.random(_A.shape) < 0.2] = 0.0
    _act = _rng.random((_G, _T)) < 0.7
    _rho[~_act] = _rng.choice([0.0, 1e6, 37.0, -5.0])
    _m = [_act, _act.astype(int), _act.astype(np.float32), _act.astype(np.float64)][_case % 4]
    _f32 = _case % 6 == 5
    if _f32:
        _rho, _A = _rho.astype(np.float32), _A.astype(np.float32)
    _want = _ref_clip_higher_objective(_rho, _A, _m, _el, _eh)
    _out = clip_higher_objective(_rho.copy(), _A.copy(), _m.copy(), eps_low=_el, eps_high=_eh)
    assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (_G, _T), (
        f"case {_case}"
    )
    assert np.all(_out[~_act] == 0.0), f"case {_case}: masked positions must be exactly 0.0"
    # float64: 1e-12 relative (and absolute, where the term is 0); float32 inputs: 1e-5 (computing
    # in float32 and casting is fine)
    _tol = 1e-5 if _f32 else 1e-12
    np.testing.assert_allclose(_out, _want, rtol=_tol, atol=_tol, err_msg=f"case {_case}")
del _ref_clip_higher_objective
