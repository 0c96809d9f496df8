_close, _same = np.testing.assert_allclose, np.testing.assert_array_equal
_KEYS = {"low", "high", "region"}
# contract: eps
# asymmetric range: eps_high = 0.28 (Clip-Higher) frees rho = 1.25; eps_low = 0.35 frees rho = 0.7
_hrho = np.array([[0.7, 1.0, 1.3], [0.7, 1.25, 0.79]])
_hA = np.array([-1.0, 1.0])
_hmask = np.array([[1, 1, 1], [1, 1, 0]])
_h = clip_fractions(_hrho, _hA, _hmask, eps_low=0.2, eps_high=0.28)
assert math.isclose(_h["high"], 0.0) and math.isclose(_h["low"], 0.2), _h
_h = clip_fractions(_hrho, _hA, _hmask, eps_low=0.35, eps_high=0.2)
assert math.isclose(_h["low"], 0.0) and math.isclose(_h["high"], 0.2), _h
# contract: strict, zero-adv
# boundaries are strict: rho exactly 1.2 (A>0) or 0.8 (A<0) is not clipped; A = 0 never is
_h = clip_fractions(
    np.array([[1.2, 0.8, 5.0, 0.01]]), np.array([[1.0, -1.0, 0.0, 0.0]]), np.ones((1, 4))
)
assert _h["low"] == 0.0 and _h["high"] == 0.0 and _h["region"] == 0.0, _h
# exactly representable bounds (eps = 0.25, 0.5): on the bound not clipped, one ulp beyond clipped
_b = np.array([[0.75, np.nextafter(0.75, 0.0), 1.5, np.nextafter(1.5, 2.0)]])
_h = clip_fractions(
    _b, np.array([[-1.0, -1.0, 1.0, 1.0]]), np.ones((1, 4)), eps_low=0.25, eps_high=0.5
)
assert math.isclose(_h["low"], 0.25) and math.isclose(_h["high"], 0.25), _h
# contract: sign
# far outside the range on the side where the unclipped branch is smaller: never clipped
_h = clip_fractions(np.array([[1e6, 1e-9, 50.0]]), np.array([-2.0]), np.ones((1, 3)))
assert _h["high"] == 0.0 and math.isclose(_h["low"], 1 / 3), _h
_h = clip_fractions(np.array([[1e6, 1e-9, 0.0]]), np.array([3.0]), np.ones((1, 3)))
assert _h["low"] == 0.0 and math.isclose(_h["high"], 1 / 3), _h
# contract: adv-shapes
# per-token advantages (N, T)
_h = clip_fractions(
    np.array([[1.5, 1.5], [0.5, 0.5]]), np.array([[1.0, -1.0], [-1.0, 1.0]]), np.ones((2, 2))
)
assert (
    math.isclose(_h["high"], 0.25)
    and math.isclose(_h["low"], 0.25)
    and math.isclose(_h["region"], 0.5)
)
# contract: mask-dtypes, denominator
# bool mask; the denominator is the active-token count, not N*T
_h = clip_fractions(
    np.array([[2.0, 2.0, 2.0, 2.0]]), np.array([1.0]), np.array([[True, True, False, False]])
)
assert math.isclose(_h["high"], 1.0), f"2 of 2 active tokens clipped -> 1.0, got {_h['high']}"
# one active token is a denominator of 1
_h = clip_fractions(
    np.array([[1.5, 0.1], [3.0, 3.0]]), np.array([1.0, -1.0]), np.array([[1, 0], [0, 0]])
)
assert _h == {"low": 0.0, "high": 1.0, "region": 1.0}, f"one active token, clipped high: {_h}"
# pooled over tokens, not a mean of per-row fractions: row 0 has 1 active token (clipped),
# row 1 has 3 (none clipped) -> 1/4, not (1 + 0) / 2
_h = clip_fractions(np.array([[1.5, 1.5, 1.5], [1.0, 1.0, 1.0]]), np.array([1.0, 1.0]),
                    np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], dtype=np.float32))  # fmt: skip
assert math.isclose(_h["high"], 0.25), f"pooled token fraction 1/4, got {_h['high']}"
# contract: empty
# empty mask -> nan for every key, the same three keys
_h = clip_fractions(np.ones((2, 3)), np.ones(2), np.zeros((2, 3)))
assert set(_h) == _KEYS, f"the empty case must still return low, high and region, got {set(_h)}"
assert all(type(_v) is float and math.isnan(_v) for _v in _h.values()), _h
_h = clip_fractions(np.full((1, 2), 9.0), np.array([[1.0, 1.0]]), np.array([[False, False]]))
assert set(_h) == _KEYS and all(math.isnan(_v) for _v in _h.values()), _h
# contract: types, region
_h = clip_fractions(np.array([[0.5, 1.5, 1.0]]), np.array([[-1.0, 1.0, 1.0]]), np.ones((1, 3)))
assert set(_h) == _KEYS and all(type(_v) is float for _v in _h.values()), _h
assert math.isclose(_h["region"], _h["low"] + _h["high"]) and math.isclose(_h["region"], 2 / 3), _h
# contract: array-like
_h = clip_fractions([[0.5, 1.5]], [-1.0], [[1, 1]])
assert math.isclose(_h["low"], 0.5) and math.isclose(_h["high"], 0.0), _h
# contract: no-modify
_hrho, _hA, _hmask = (
    np.array([[0.5, 9.0], [1.0, 2.0]]),
    np.array([-1.0, 1.0]),
    np.array([[1, 0], [1, 1]]),
)
clip_fractions(_hrho, _hA, _hmask)
_same(_hrho, [[0.5, 9.0], [1.0, 2.0]])
_same(_hA, [-1.0, 1.0])
_same(_hmask, [[1, 0], [1, 1]])
# contract: shape-errors
# ratios/mask not 2-D or of different shapes (also shapes that would broadcast); advantages
# neither (N,) nor (N, T) (a scalar, (1,), (T,) for one row, (1, T), (N, 1), (N, T, 1))
for _rs, _As, _ms in [((3,), (3,), (3,)), ((2, 2, 2), (2, 2, 2), (2, 2, 2)), ((2, 2, 2), (2,), (2, 2, 2)),
                      ((2, 3), (2,), (1, 3)), ((1, 3), (1,), (2, 3)), ((2, 3), (2,), (2, 1)),
                      ((2, 3), (2,), (3, 2)), ((2, 3), (2,), (2, 4)), ((2, 3), (), (2, 3)),
                      ((3, 2), (1,), (3, 2)), ((1, 3), (3,), (1, 3)), ((2, 3), (1, 3), (2, 3)),
                      ((2, 3), (2, 1), (2, 3)), ((2, 3), (3,), (2, 3)), ((2, 3), (2, 3, 1), (2, 3)),
                      ((2, 3), (3, 3), (2, 3))]:  # fmt: skip
    try:
        clip_fractions(np.full(_rs, 1.5), np.ones(_As), np.ones(_ms))
    except ValueError:
        pass
    else:
        raise AssertionError(f"ratios {_rs}, advantages {_As}, mask {_ms} must raise ValueError")
# contract: differential
# seeded random batches against the course's function: 1 to 5 rows with ragged masks (bool, int,
# float), log-ratios from 0.01 to 30 in scale (ratios near 0 and huge), some exactly on the bounds,
# advantages per row or per token with zeros, several eps, float32 and float64 ratios (float32
# ratios kept off the bounds). Tolerance: rel 1e-12, abs 1e-15 per key (a fraction can be 0)
# @reference clip_fractions
_rng = np.random.default_rng(9444)
for _case in range(80):
    _N, _T = int(_rng.integers(1, 6)), int(_rng.integers(1, 9))
    _el = float(_rng.choice([0.2, 0.25, 0.1, 0.5]))
    _eh = float(_rng.choice([0.2, 0.28, 0.5, 0.125]))
    _rho = np.exp(_rng.normal(size=(_N, _T)) * float(_rng.choice([0.01, 0.1, 0.3, 3.0, 30.0])))
    _on = _rng.random((_N, _T))
    _rho[_on < 0.15] = 1 - _el
    _rho[_on > 0.85] = 1 + _eh
    _A = _rng.normal(size=(_N,) if _case % 2 else (_N, _T))
    _A[_rng.random(_A.shape) < 0.2] = 0.0
    _hm = _rng.random((_N, _T)) < _rng.uniform(0.0, 1.0)
    _hm = [_hm, _hm.astype(np.int64), _hm.astype(np.float64)][_case % 3]
    if _case % 5 == 4:
        _off = (np.abs(_rho - (1 - _el)) < 1e-5) | (np.abs(_rho - (1 + _eh)) < 1e-5)
        _rho = np.where(_off, 1.0, _rho).astype(np.float32)
    with np.errstate(all="ignore"):
        _want = _ref_clip_fractions(_rho.copy(), _A.copy(), _hm.copy(), eps_low=_el, eps_high=_eh)
        _got = clip_fractions(_rho.copy(), _A.copy(), _hm.copy(), eps_low=_el, eps_high=_eh)
    assert isinstance(_got, dict) and set(_got) == _KEYS, f"case {_case}: keys {_got!r}"
    for _key in sorted(_KEYS):
        assert type(_got[_key]) is float, f"case {_case}: {_key} must be a Python float"
        if math.isnan(_want[_key]):
            assert math.isnan(_got[_key]), f"case {_case}: no active token: {_key} must be nan"
        else:
            assert math.isclose(_got[_key], _want[_key], rel_tol=1e-12, abs_tol=1e-15), (
                f"case {_case} ({_N}x{_T}, eps {_el}/{_eh}): {_key} expected {_want[_key]}, "
                f"got {_got[_key]}"
            )
del _ref_clip_fractions
