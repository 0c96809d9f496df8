with np.errstate(
    all="ignore"
):  # padding garbage may make a naive solution warn; values are what count
    _new = np.array(
        [[-1.0, -2.0, 0.0, -np.inf], [-0.5, np.nan, np.nan, np.nan], [-1000.5, -3.0, 5.0, 7.0]]
    )
    _old = np.array(
        [[-1.5, -1.0, 0.0, -np.inf], [-0.5, -2.0, np.nan, 0.0], [-1000.0, -3.0, -1.0, 2.0]]
    )
    _m = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]])
    # contract: mask-dtypes, masked-garbage, dtype
    _out = token_ratios(_new, _old, _m)
    _out_b = token_ratios(_new, _old, _m.astype(bool))
    _out_f = token_ratios(_new, _old, _m.astype(np.float32))
assert type(_out) is np.ndarray and _out.dtype == np.float64
_want = np.array([[math.exp(0.5), math.exp(-1.0), 1, 1], [1, 1, 1, 1], [math.exp(-0.5), 1, 1, 1]])
for _o in (_out, _out_b, _out_f):
    _got = np.array(_o, dtype=np.float64)
    assert _got.shape == (3, 4)
    np.testing.assert_allclose(_got, _want, rtol=1e-12)
    assert np.all(_got[_m == 0] == 1.0), (
        "masked positions must be exactly 1.0 (also for -inf / nan padding)"
    )
# a fully masked row is all ones; equal log-probs give exactly 1
_got = np.array(
    token_ratios(np.full((2, 3), -5.0), np.full((2, 3), -5.0), np.array([[1, 1, 1], [0, 0, 0]])),
    dtype=np.float64,
)
assert np.all(_got == 1.0)
# contract: no-modify
_a, _b = np.array([[-1.0, -2.0]]), np.array([[-2.0, -1.0]])
token_ratios(_a, _b, np.array([[1, 0]]))
assert np.array_equal(_a, [[-1.0, -2.0]]) and np.array_equal(_b, [[-2.0, -1.0]])
# contract: shape-errors (each array alone of another shape, or not 2-D)
for _shapes in [((2, 3), (2, 3), (3, 2)), ((2, 3), (2, 4), (2, 3)), ((2, 3), (1, 3), (2, 3)),
                ((2, 3), (2, 3), (2, 2)), ((3,), (3,), (3,)), ((1, 2, 3),) * 3,
                ((2, 4), (2, 3), (2, 3)), ((2, 2), (2, 3), (2, 3))]:  # fmt: skip
    try:
        token_ratios(*(np.zeros(_s) for _s in _shapes))
    except ValueError:
        pass
    else:
        raise AssertionError(f"shapes {_shapes} must raise ValueError")
# contract: differential (seeded random inputs against the reference)
# @reference token_ratios
_rng = np.random.default_rng(92)
with np.errstate(all="ignore"):
    for _case in range(30):
        _G, _T = int(_rng.integers(1, 6)), int(_rng.integers(1, 9))
        _new = _rng.normal(-3, 3, (_G, _T))
        _old = _new + _rng.normal(0, 1.5, (_G, _T))
        _m = _rng.random((_G, _T)) < 0.7
        _new[~_m] = _rng.choice([np.nan, -np.inf, 0.0, 50.0])
        _want = _ref_token_ratios(_new, _old, _m)
        _got = np.array(token_ratios(_new.copy(), _old.copy(), _m.copy()), dtype=np.float64)
        np.testing.assert_allclose(_got, _want, rtol=1e-12, atol=0, err_msg=f"case {_case}")
# contract: shape-errors (shapes that NumPy would broadcast silently must raise too)
for _shapes in [((2, 3), (2, 3), (1, 3)), ((2, 3), (2, 3), (3,)), ((2, 3), (1, 3), (2, 3)),
                ((2, 3), (3,), (2, 3)), ((1, 3), (2, 3), (2, 3)), ((2, 1), (2, 3), (2, 3)),
                ((2, 3), (2, 3), (2, 1)), ((2, 3), (2, 3), ())]:  # fmt: skip
    try:
        with np.errstate(all="ignore"):
            token_ratios(*(np.zeros(_s) for _s in _shapes))
    except ValueError:
        pass
    else:
        raise AssertionError(f"shapes {_shapes} must raise ValueError")
# contract: differential, extreme (log-ratios of +-2.5, +-25 and +-300: no clamping, no overflow
# guard; float32 log-probs give float64 ratios, compared at rtol 1e-5 since the docstring does not
# say in which precision the difference is taken; float64 at rtol 1e-12)
with np.errstate(all="ignore"):
    for _case in range(30):
        _G, _T = int(_rng.integers(1, 6)), int(_rng.integers(1, 12))
        _old = _rng.normal(-5, 5, (_G, _T))
        _d = _rng.choice([0.0, 2.5, -2.5, 25.0, -25.0, 300.0, -300.0, 1e-9], (_G, _T))
        _d = _d * _rng.uniform(0.9, 1.1, (_G, _T))
        _m = _rng.random((_G, _T)) < 0.75
        _f32 = _case % 3 == 2
        if _f32:
            _d = np.clip(_d, -30, 30)  # exp(30) fits in float32
        _new = _old + _d
        _new[~_m] = _rng.choice([np.nan, -np.inf, np.inf, 0.0])
        _old[~_m] = _rng.choice([np.nan, -np.inf, 0.0, -1e300])
        _dt = np.float32 if _f32 else np.float64
        _n, _o = _new.astype(_dt), _old.astype(_dt)
        _mm = _m.astype((bool, np.int64, np.float32)[int(_rng.integers(0, 3))])
        _keep = (_n.copy(), _o.copy(), _mm.copy())
        _want = _ref_token_ratios(_n, _o, _mm)
        _out = token_ratios(_n, _o, _mm)
        assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (_G, _T)
        np.testing.assert_allclose(_out, _want, rtol=1e-5 if _f32 else 1e-12, atol=0,
                                   err_msg=f"extreme case {_case} ({_dt.__name__})")  # fmt: skip
        assert np.all(_out[~_m] == 1.0), f"extreme case {_case}: masked positions must be 1.0"
        # contract: no-modify (also the nan/inf garbage on padding stays as it was)
        for _a, _b in zip((_n, _o, _mm), _keep):
            assert np.array_equal(_a, _b, equal_nan=True), "an input was modified in place"
del _ref_token_ratios
