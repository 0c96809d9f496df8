_close, _same = np.testing.assert_allclose, np.testing.assert_array_equal
# contract: pooled
# pooled token mean, not a mean of per-response means: response A has 1 active token with H = ln 2,
# response B has 3 active tokens with H = 0 (one allowed token)
_L = np.full((2, 3, 2), -np.inf)
_L[0, 0] = [0.0, 0.0]
_L[1, :, 0] = 5.0
_hmask = np.array([[1, 0, 0], [1, 1, 1]])
_h = masked_token_entropy(_L, _hmask)
assert type(_h) is float
assert math.isclose(_h, math.log(2.0) / 4, rel_tol=1e-9), (
    f"pooled mean over the 4 active tokens is ln2/4 = {math.log(2) / 4:.6f}, got {_h}"
)
# contract: padding-garbage, mask-dtypes
# padding positions with nan, +inf or all -inf are ignored; bool, int and float masks alike
_L = np.zeros((2, 2, 4))
_L[0, 1] = np.nan
_L[1, 1] = -np.inf
_L[1, 1, 2] = np.inf
for _hm in (np.array([[True, False], [True, False]]), np.array([[1, 0], [1, 0]]),
            np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)):  # fmt: skip
    with np.errstate(all="ignore"):
        _h = masked_token_entropy(_L, _hm)
    assert math.isclose(_h, math.log(4.0), rel_tol=1e-9), (
        f"garbage at padding must be ignored (mask dtype {_hm.dtype}): expected ln 4, got {_h}"
    )
# contract: empty
# empty mask -> nan (not 0), for any mask dtype
_h = masked_token_entropy(np.zeros((2, 3, 5)), np.zeros((2, 3)))
assert type(_h) is float and math.isnan(_h), f"no active token must give nan, got {_h!r}"
_h = masked_token_entropy(np.full((1, 2, 3), np.nan), np.zeros((1, 2), dtype=bool))
assert type(_h) is float and math.isnan(_h), f"no active token must give nan, got {_h!r}"
# contract: differential
# shift invariance and big logits: (500 + ln 3, 500) -> H(3/4, 1/4)
_h = masked_token_entropy(np.array([[[500.0 + math.log(3.0), 500.0]]]), np.array([[1]]))
assert math.isclose(_h, _H2, rel_tol=1e-9)
# contract: neg-inf
# a near one-hot distribution with a -inf entry and a very negative finite one; a position with one
# finite logit has entropy 0 (absolute tolerance: a correct 1e-16 passes)
_h = masked_token_entropy(np.array([[[0.0, -800.0, -np.inf]]]), np.array([[1]]))
assert math.isclose(_h, 0.0, abs_tol=1e-12) and not math.isnan(_h)
_h = masked_token_entropy(
    np.array([[[-np.inf, 3.0, -np.inf], [0.0, 0.0, -np.inf]]]), np.ones((1, 2))
)
assert math.isclose(_h, math.log(2.0) / 2, rel_tol=1e-9, abs_tol=1e-12), _h
# contract: array-like
# nested lists are accepted
_h = masked_token_entropy([[[0.0, 0.0], [1.0, 1.0]]], [[1, 1]])
assert type(_h) is float and math.isclose(_h, math.log(2.0), rel_tol=1e-9), _h
# contract: dtype
# float32 logits: still a Python float, close to the float64 answer
_L32 = np.array([[[0.5, -1.0, 2.0, -np.inf], [3.0, 3.0, 3.0, 3.0]]], dtype=np.float32)
_h = masked_token_entropy(_L32, np.array([[1, 1]], dtype=np.int32))
_want = masked_token_entropy(_L32.astype(np.float64), np.array([[1, 1]]))
assert type(_h) is float, f"float32 logits must still give a Python float, got {type(_h).__name__}"
assert math.isclose(_h, _want, rel_tol=1e-5, abs_tol=1e-6), (_h, _want)
# independent reference on random logits with -inf holes, float mask weights 0/1
_rng = np.random.default_rng(3)
_L = _rng.normal(size=(3, 4, 6)) * 3
_L[_rng.random((3, 4, 6)) < 0.3] = -np.inf
_L[..., 0] = _rng.normal(size=(3, 4))  # at least one finite logit everywhere
_hmask = (_rng.random((3, 4)) < 0.6).astype(np.float64)
_hmask[0, 0] = 1.0
_vals = []
for _n in range(3):
    for _t in range(4):
        if _hmask[_n, _t]:
            _row = _L[_n, _t][np.isfinite(_L[_n, _t])]
            _q = np.exp(_row) / np.exp(_row).sum()
            _vals.append(-sum(_x * math.log(_x) for _x in _q if _x > 0))
_h = masked_token_entropy(_L, _hmask)
assert math.isclose(_h, sum(_vals) / len(_vals), rel_tol=1e-9)
# contract: no-modify
# the caller's arrays are not modified, also where they hold nan, +inf and -inf (padding)
_L[1, 1] = np.nan
_L[2, 0, 1] = np.inf
_hmask[1, 1] = _hmask[2, 0] = 0.0
_keep, _keep_m = _L.copy(), _hmask.copy()
with np.errstate(all="ignore"):
    masked_token_entropy(_L, _hmask)
_same(_L, _keep)
_same(_hmask, _keep_m)
# contract: shape-errors
# logits not 3-D, or a mask whose shape is not logits.shape[:2] (also one that would broadcast)
for _ls, _ms in [((2, 3, 4), (3, 2)), ((2, 3, 4), (2, 2)), ((2, 3, 4), (1, 3)), ((2, 3, 4), (2,)),
                 ((2, 3, 4), (2, 3, 1)), ((2, 3, 4), (2, 4)), ((2, 3), (2, 3)), ((2, 3, 4, 5), (2, 3)),
                 ((4,), (4,)), ((2, 3, 4), (3, 3))]:  # fmt: skip
    try:
        masked_token_entropy(np.zeros(_ls), np.ones(_ms))
    except ValueError:
        pass
    else:
        raise AssertionError(f"logits {_ls} with mask {_ms} must raise ValueError")
# contract: bad-logits
# an ACTIVE position with no finite logit, a nan or a +inf raises ValueError
for _bad in ([-np.inf, -np.inf], [np.nan, 0.0], [0.0, np.inf], [np.nan, np.nan], [np.inf, np.inf],
             [np.nan, -np.inf], [-np.inf, np.inf]):  # fmt: skip
    _L = np.zeros((2, 2, 2))
    _L[1, 0] = _bad
    try:
        with np.errstate(all="ignore"):
            masked_token_entropy(_L, np.array([[1, 0], [1, 1]]))
    except ValueError:
        pass
    else:
        raise AssertionError(f"an active position holding {_bad} must raise ValueError")
# contract: differential
# seeded random batches against the course's function: ragged masks, rows of different lengths,
# logits from tiny to huge spreads with a large offset per row, -inf holes, garbage at padding,
# float32 and float64 inputs. Tolerance: rel 1e-9, abs 1e-12 (float64); rel 1e-5, abs 1e-6 (float32)
# @reference masked_token_entropy
_rng = np.random.default_rng(94)
for _case in range(60):
    _N, _T, _V = int(_rng.integers(1, 5)), int(_rng.integers(1, 7)), int(_rng.integers(1, 8))
    _f32 = _case % 4 == 3
    _scales = [1e-9, 0.1, 1.0, 3.0, 30.0] if _f32 else [1e-9, 0.1, 3.0, 30.0, 1000.0]
    _scale = float(_rng.choice(_scales))
    _L = _rng.normal(size=(_N, _T, _V)) * _scale
    _L[_rng.random((_N, _T, _V)) < 0.35] = -np.inf
    _L[np.arange(_N)[:, None], np.arange(_T)[None, :], _rng.integers(0, _V, size=(_N, _T))] = 0.5
    if not _f32:  # rows far apart (offsets of ~1000): shift by each position's own max
        _L += _rng.normal(size=(_N, 1, 1)) * 1000.0
    _hm = _rng.random((_N, _T)) < _rng.uniform(0.2, 1.0)
    _L[~_hm] = _rng.choice([np.nan, -np.inf, np.inf, 0.0])
    if _f32:
        _L = _L.astype(np.float32)
    _hm = [_hm, _hm.astype(np.int64), _hm.astype(np.float64)][_case % 3]
    with np.errstate(all="ignore"):
        _want = _ref_masked_token_entropy(_L.copy(), _hm.copy())
        _got = masked_token_entropy(_L.copy(), _hm.copy())
    assert type(_got) is float, f"case {_case}: return a Python float, got {type(_got).__name__}"
    if math.isnan(_want):
        assert math.isnan(_got), f"case {_case}: no active token must give nan, got {_got}"
    else:
        _rt, _at = (1e-5, 1e-6) if _f32 else (1e-9, 1e-12)
        assert math.isclose(_got, _want, rel_tol=_rt, abs_tol=_at), (
            f"case {_case} (N, T, V = {_N}, {_T}, {_V}, {_L.dtype}): expected {_want!r}, got {_got!r}"
        )
del _ref_masked_token_entropy
