# contract: entropy-active
assert math.isclose(token_entropy(_lg, torch.tensor([[1.0, 0.0]])), math.log(2), rel_tol=1e-6)
# contract: entropy-empty
assert math.isnan(token_entropy(_lg, torch.zeros(1, 2))), "no active token: return NaN (not 0.0)"
# contract: pass-formula, pass-float
assert pass_at_k(5, 0, 2) == 0.0 and pass_at_k(5, 4, 2) == 1.0 and pass_at_k(3, 3, 3) == 1.0
_want_p = 1 - (13 * 12 * 11 * 10) / (16 * 15 * 14 * 13)
assert abs(pass_at_k(16, 3, 4) - _want_p) < 1e-12
assert math.isclose(pass_at_k(10, 2, 1), 0.2, rel_tol=1e-12)
# contract: clip-fractions, clip-float
_rt = torch.tensor([[0.5, 1.5, 1.0, 9.0], [0.5, 1.5, 1.1, 9.0]])
_mk = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
_lo, _hi = clip_fractions(_rt, torch.tensor([-1.0, 1.0]), _mk, clip_eps=0.2)
assert type(_lo) is float and type(_hi) is float
assert math.isclose(_lo, 1 / 6, rel_tol=1e-6) and math.isclose(_hi, 1 / 6, rel_tol=1e-6), (_lo, _hi)
_lo, _hi = clip_fractions(_rt, torch.tensor([0.0, 0.0]), _mk, clip_eps=0.2)
assert _lo == 0.0 and _hi == 0.0
# contract: clip-empty
_lo, _hi = clip_fractions(_rt, torch.tensor([-1.0, 1.0]), torch.zeros(2, 4), clip_eps=0.2)
assert type(_lo) is float and math.isnan(_lo) and math.isnan(_hi), (
    f"no active token: return (NaN, NaN), got {(_lo, _hi)}"
)
# contract: kl-empty
_k = kl_to_reference(torch.zeros(1, 2), torch.ones(1, 2), torch.zeros(1, 2))
assert type(_k) is float and math.isnan(_k), f"no active token: return NaN, got {_k}"
# contract: kl-k3, kl-float
_k = kl_to_reference(
    torch.tensor([[-1.0, -2.0, 5.0]]),
    torch.tensor([[-2.0, -1.0, 0.0]]),
    torch.tensor([[1.0, 1.0, 0.0]]),
)
assert type(_k) is float and math.isclose(_k, (math.exp(-1) + math.e - 2) / 2, rel_tol=1e-6)
# direction: d = ref_logp - logp = [-2, -0.5] (the reversed d gives k3 values 4.39 and 0.15)
_k = kl_to_reference(
    torch.tensor([[-1.0, -1.0]]), torch.tensor([[-3.0, -1.5]]), torch.tensor([[1.0, 1.0]])
)
assert math.isclose(_k, (math.exp(-2) + 1 + math.exp(-0.5) - 0.5) / 2, rel_tol=1e-6), _k
# contract: kl-masked (only active tokens count: float32 log-probs of -100 at a masked position, whose
# k3 overflows to inf, change nothing)
_k = kl_to_reference(
    torch.tensor([[-1.0, -100.0, -2.0]]),
    torch.tensor([[-2.0, 0.0, -1.0]]),
    torch.tensor([[1.0, 0.0, 1.0]]),
)
assert math.isclose(_k, (math.exp(-1) + math.e - 2) / 2, rel_tol=1e-6), (
    f"a masked position changed the mean over active tokens: got {_k}"
)
# contract: pass-formula (every n <= 14, c <= n, 1 <= k <= n, n - c == k included, against exact
# binomials; a large n; the result is a Python float)
for _n in range(1, 15):
    for _c in range(_n + 1):
        for _kk in range(1, _n + 1):
            _p = pass_at_k(_n, _c, _kk)
            _w = 1.0 - math.comb(_n - _c, _kk) / math.comb(_n, _kk)
            assert type(_p) is float and abs(_p - _w) < 1e-12, (_n, _c, _kk, _p, _w)
for _n, _c, _kk in ((200, 3, 50), (100, 0, 100), (64, 1, 63), (64, 1, 64), (1000, 10, 990)):
    _p = pass_at_k(_n, _c, _kk)
    assert (
        type(_p) is float and abs(_p - (1 - math.comb(_n - _c, _kk) / math.comb(_n, _kk))) < 1e-12
    )
assert pass_at_k(6, 2, 4) == pass_at_k(6, 2, 4) and abs(pass_at_k(6, 2, 4) - (1 - 1 / 15)) < 1e-12
# contract: differential (seeded random batches against the reference: ragged masks, -inf logits,
# extreme logits, ratios exactly on the clip bounds, zero advantages, float32 and float64)
# @reference lab_diagnostics
_rng = np.random.default_rng(954)
for _case in range(40):
    _N, _T, _V = int(_rng.integers(1, 5)), int(_rng.integers(1, 7)), int(_rng.integers(2, 7))
    _dt = torch.float32 if _case % 2 else torch.float64
    _mk = (_rng.random((_N, _T)) < 0.6).astype(np.float64)
    if _case % 5 == 0:
        _mk[:] = 0.0
    if _case % 5 == 1:
        _mk[:] = 1.0
    _m = torch.tensor(_mk, dtype=_dt)
    _lgt = _rng.normal(0, [1.0, 4.0, 30.0][_case % 3], (_N, _T, _V))
    _lgt[_rng.random((_N, _T, _V)) < 0.3] = -np.inf
    _lgt[..., int(_rng.integers(0, _V))] = _rng.normal(0, 1, (_N, _T))  # one finite logit per row
    _lgt = torch.tensor(_lgt, dtype=_dt)
    _keep = _lgt.clone()
    _w, _g = _ref_token_entropy(_lgt.clone(), _m.clone()), token_entropy(_lgt, _m)
    assert type(_g) is float and torch.equal(_lgt, _keep), f"case {_case}: float, input kept"
    # tolerance: entropy formulas differ by rounding of the logits' magnitude (H = lse - E[l])
    _big = float(_lgt[torch.isfinite(_lgt)].abs().max())
    _at = 1e-6 + 32 * float(torch.finfo(_dt).eps) * _big
    np.testing.assert_allclose(_g, _w, rtol=1e-5, atol=_at, err_msg=f"case {_case}: entropy")
    _eps = [0.25, 0.125, 0.5, 0.375][_case % 4]  # dyadic: 1 +- eps is exact in float32
    _rt = _rng.choice([1 - _eps, 1 + _eps, 1.0, 0.3, 3.0, 1 - _eps / 2, 1 + 2 * _eps], (_N, _T))
    _rt = torch.tensor(_rt, dtype=_dt)
    _ad = torch.tensor(_rng.choice([-1.5, -0.2, 0.0, 0.7, 2.0], _N), dtype=_dt)
    _w = _ref_clip_fractions(_rt.clone(), _ad.clone(), _m.clone(), clip_eps=_eps)
    _g = clip_fractions(ratio=_rt, advantages=_ad, mask=_m, clip_eps=_eps)  # the named parameters
    assert type(_g) is tuple and len(_g) == 2 and all(type(_x) is float for _x in _g), _g
    np.testing.assert_allclose(_g, _w, rtol=1e-6, atol=1e-7, err_msg=f"case {_case}: clip")
    _lp = torch.tensor(_rng.normal(-3, 2, (_N, _T)), dtype=_dt)
    _rl = _lp + torch.tensor(np.clip(_rng.normal(0, [0.3, 2.0, 15.0][_case % 3], (_N, _T)), -15, 15),
                             dtype=_dt)  # fmt: skip
    _w = _ref_kl_to_reference(_lp.clone(), _rl.clone(), _m.clone())
    _g = kl_to_reference(_lp, _rl, _m)
    assert type(_g) is float, f"case {_case}: a Python float"
    np.testing.assert_allclose(_g, _w, rtol=1e-5, atol=1e-6, err_msg=f"case {_case}: kl")
del _ref_token_entropy, _ref_pass_at_k, _ref_clip_fractions, _ref_kl_to_reference
