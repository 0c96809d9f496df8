# contract: response, token, constant, padding (an empty row: counts in G for 'response' and
# contributes 0, adds nothing to 'token'; padding 99 and 7 never counts)
_l = np.array([[1.0, 2.0, 3.0, 99.0], [4.0, 99.0, 99.0, 99.0], [7.0, 7.0, 7.0, 7.0]])
_m = np.array([[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
for _mode, _L, _want in [("response", None, 2.0), ("token", None, 2.5), ("constant", 4, 10 / 12)]:
    _v = reduce_loss(_l, _m, _mode, L=_L)
    assert type(_v) is float, _mode
    assert math.isclose(_v, _want, rel_tol=1e-12), (_mode, _v, _want)
# contract: all-zero-mask, float (an all-zero mask: 0.0 everywhere, no NaN)
_z = np.zeros((2, 3))
for _mode, _L in [("response", None), ("token", None), ("constant", 3)]:
    _v = reduce_loss(np.ones((2, 3)) * 5.0, _z, _mode, L=_L)
    assert type(_v) is float and _v == 0.0, (_mode, _v)
# contract: mask-dtypes (boolean and float masks are accepted)
_l = np.array([[2.0, -1.0], [0.5, 8.0]])
_mb = np.array([[True, True], [True, False]])
assert math.isclose(reduce_loss(_l, _mb, "response"), (0.5 + 0.5) / 2, rel_tol=1e-12)
assert math.isclose(reduce_loss(_l, _mb.astype(float), "token"), 1.5 / 3, rel_tol=1e-12)
# contract: response, token, constant (unequal lengths: per-response weights are 1/(G|o_i|),
# independently written as a loop)
_rng = np.random.default_rng(7)
_G, _T = 5, 9
_lens = np.array([1, 3, 9, 4, 6])
_m = (np.arange(_T)[None, :] < _lens[:, None]).astype(float)
_l = _rng.normal(size=(_G, _T)) + 50.0 * (1 - _m)  # large finite values in the padding
_want_resp = sum(_l[i, : _lens[i]].mean() for i in range(_G)) / _G
_want_tok = sum(_l[i, : _lens[i]].sum() for i in range(_G)) / _lens.sum()
_want_const = sum(_l[i, : _lens[i]].sum() for i in range(_G)) / (_G * 12)
assert math.isclose(reduce_loss(_l, _m, "response"), _want_resp, rel_tol=1e-10, abs_tol=1e-12)
assert math.isclose(reduce_loss(_l, _m, "token"), _want_tok, rel_tol=1e-10, abs_tol=1e-12)
assert math.isclose(
    reduce_loss(_l, _m, "constant", L=12), _want_const, rel_tol=1e-10, abs_tol=1e-12
)
# 'constant' uses G = number of rows and the given L, not T and not the active count
assert math.isclose(
    reduce_loss(np.ones((2, 3)), np.ones((2, 3)), "constant", L=10), 6 / 20, rel_tol=1e-12
)
# contract: L-errors, mode-errors
for _bad in [dict(mode="constant", L=None), dict(mode="constant", L=0), dict(mode="mean", L=None),
             dict(mode="constant", L=-3), dict(mode="constant", L=-0.5)]:  # fmt: skip
    try:
        reduce_loss(np.ones((2, 2)), np.ones((2, 2)), _bad["mode"], L=_bad["L"])
    except ValueError:
        pass
    else:
        raise AssertionError(f"expected ValueError for {_bad}")
# contract: L-positive (any positive L, also 1 and below 1; L is ignored by the other modes)
_l, _m = np.array([[1.0, 2.0, 5.0], [3.0, 4.0, 6.0]]), np.array([[1, 1, 0], [1, 0, 0]])
for _L in (1, 0.5, 2.5, 4096):
    assert math.isclose(reduce_loss(_l, _m, "constant", L=_L), 6 / (2 * _L), rel_tol=1e-12), _L
for _mode, _want in [("response", (1.5 + 3.0) / 2), ("token", 6 / 3)]:
    for _L in (None, -3, 0, 7):
        assert math.isclose(reduce_loss(_l, _m, _mode, L=_L), _want, rel_tol=1e-12), (_mode, _L)
# contract: mode-errors (an unknown mode raises, even with a valid L: near misses too)
for _mode in ["mean", "tokens", "responses", "average", "sum", "", "zzz", "constants"]:
    try:
        reduce_loss(np.ones((2, 2)), np.ones((2, 2)), _mode, L=4)
    except ValueError:
        pass
    else:
        raise AssertionError(f"mode {_mode!r} is unknown and must raise ValueError")
# contract: modes (compared by value: a mode string built at run time, or an np.str_, is the same mode)
for _mode, _want in [("response", (1.5 + 3.0) / 2), ("token", 6 / 3), ("constant", 6 / 8)]:
    for _name in ("".join(list(_mode)), np.str_(_mode)):
        _v = reduce_loss(_l, _m, _name, L=4)
        assert type(_v) is float and math.isclose(_v, _want, rel_tol=1e-12), (_mode, _v)
# contract: shape-errors (shapes that differ raise ValueError, also when they would broadcast)
for _sl, _sm in [((2, 3), (1, 3)), ((1, 3), (2, 3)), ((2, 3), (2, 1)), ((2, 1), (2, 3)),
                 ((2, 3), (2, 4)), ((3, 2), (2, 3)), ((3,), (1, 3)), ((1, 3), (3,))]:  # fmt: skip
    for _mode, _L in [("response", None), ("token", None), ("constant", 4)]:
        try:
            reduce_loss(np.ones(_sl), np.ones(_sm), _mode, L=_L)
        except ValueError:
            pass
        else:
            raise AssertionError(f"per_token_loss {_sl} with mask {_sm} must raise ValueError")
# contract: all-zero-mask, empty (an empty batch, G = 0 or T = 0, gives 0.0 in every mode)
with np.errstate(all="ignore"):
    for _shape in [(0, 3), (2, 0), (0, 0)]:
        for _mode, _L in [("response", None), ("token", None), ("constant", 3)]:
            _v = reduce_loss(np.zeros(_shape), np.zeros(_shape), _mode, L=_L)
            assert type(_v) is float and _v == 0.0, (
                f"shape {_shape}, mode {_mode!r}: expected 0.0, got {_v}"
            )
# contract: token (one active token in the whole batch: its term itself)
assert math.isclose(reduce_loss(np.array([[0.0, 3.0], [9.0, 9.0]]), np.array([[0, 1], [0, 0]]), "token"),
                    3.0, rel_tol=1e-12)  # fmt: skip
# contract: differential (seeded random inputs against the reference: ragged masks with holes and
# empty rows, exact-zero terms on active tokens, padding garbage up to 1e300, every mask dtype,
# float32 losses, G and T from 1, L above and below 1)
# @reference reduce_loss
_rng = np.random.default_rng(931)
for _case in range(72):
    _G, _T = int(_rng.integers(1, 7)), int(_rng.integers(1, 10))
    _act = np.arange(_T)[None, :] < _rng.integers(0, _T + 1, _G)[:, None]
    if _case % 4 == 0:
        _act = _rng.random((_G, _T)) < 0.5  # holes, not only trailing padding
    _l = _rng.normal(0, 2, (_G, _T))
    _l[_rng.random((_G, _T)) < 0.25] = 0.0  # exact zeros, e.g. the terms of an A = 0 group
    _f32 = _case % 5 == 0
    _l[~_act] = _rng.choice([0.0, 99.0, -1e6] if _f32 else [0.0, 99.0, -1e6, 1e300])
    if _f32:
        _l = _l.astype(np.float32)
    _m = [_act, _act.astype(int), _act.astype(np.float32), _act.astype(np.float64)][_case % 4]
    _mode = ["response", "token", "constant"][_case % 3]
    _L = [1, 0.5, _T, 4096, 7.5][_case % 5] if _mode == "constant" else None
    _want = _ref_reduce_loss(_l, _m, _mode, L=_L)
    _v = reduce_loss(_l.copy(), _m.copy(), _mode, L=_L)
    assert type(_v) is float, f"case {_case}: return a Python float, got {type(_v).__name__}"
    # float64 losses: 1e-12 of the term scale (any summation order); float32 losses: 1e-5 (summing
    # in float32 is fine). The absolute part covers results that are 0 up to rounding.
    _tol = 1e-5 if _f32 else 1e-12
    _scale = max(1.0, float(np.abs(np.where(_act, _l, 0.0)).max(initial=0.0)))
    assert math.isclose(_v, _want, rel_tol=_tol, abs_tol=_tol * _scale), (
        f"case {_case}: mode {_mode!r}, L={_L}: got {_v}, expected {_want}"
    )
del _ref_reduce_loss
