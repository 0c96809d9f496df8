# contract: degenerate (groups with values whose float mean is inexact (0.1, 1.2, 0.3), several K)
for _v in (0.0, 1.0, 0.1, 1.2, 0.3, 1.1):
    for _K in (1, 2, 6, 7, 8, 16):
        _hg = np.array(group_advantages(torch.full((3, _K), _v)).numpy(), dtype=np.float64)
        assert _hg.shape == (3, _K) and np.all(_hg == 0.0), (_v, _K, _hg)
        for _shape in ((_K,), (1, _K)):  # one group: torch's std leaves residue on some of these
            _hg = np.array(group_advantages(torch.full(_shape, _v)).numpy(), dtype=np.float64)
            assert _hg.shape == _shape and np.all(_hg == 0.0), (
                f"a degenerate group of {_K} x {_v} gave {_hg}: detect it by max == min"
            )
# contract: degenerate (only max == min: a spread of 1e-20 is below any threshold a tolerance picks)
_hg = group_advantages(torch.tensor([0.0, 1e-20], dtype=torch.float64), eps=0.0)
np.testing.assert_allclose(_hg.double().numpy(), [-1.0, 1.0], rtol=1e-9,
                           err_msg="test max == min exactly, not a spread below a threshold")  # fmt: skip
# contract: degenerate (a spread whose square underflows: one reward of 1e-170 among float64 zeros,
# or of 1e-30 among float32 zeros, has a variance of exactly 0, yet max != min: not degenerate.
# The float64 row also has a torch.std of 0; torch's float32 std is computed in double and gives
# ~4e-31 for the float32 row, whose population std reaches 0 only at float32's smallest subnormal,
# 1e-45 (there the three zeros' advantages round to 0 as well, so only the top one is checked))
for _t in (torch.tensor([[0.0, 0.0, 0.0, 1e-170]], dtype=torch.float64),
           torch.tensor([[0.0, 0.0, 0.0, 1e-30]])):  # fmt: skip
    _hg = np.array(group_advantages(_t).double().numpy(), dtype=np.float64)
    assert np.all(_hg[0, :3] < 0.0) and _hg[0, 3] > 0.0, (
        f"one reward of {float(_t[0, 3]):.0e} among zeros ({_t.dtype}) gave {_hg}: max != min, so "
        "not degenerate, even where its variance is 0 (detect degenerate groups by max == min alone)"
    )
_hg = np.array(group_advantages(torch.tensor([[0.0, 0.0, 0.0, 1e-45]])).double().numpy())
assert _hg[0, 3] > 0.0, (
    f"one reward of 1.4e-45 (float32's smallest subnormal) among zeros gave {_hg}: max != min, so "
    "not degenerate, even where its std is 0 (detect degenerate groups by max == min alone)"
)
# contract: formula, eps (hand values: K = 8, one success; default eps = 1e-6 enters as std + eps)
_hg = np.array(group_advantages(torch.eye(8, dtype=torch.float64)[2]).numpy(), dtype=np.float64)
_sd = math.sqrt(7) / 8
np.testing.assert_allclose(_hg[2], (7 / 8) / (_sd + 1e-6), rtol=1e-12)
np.testing.assert_allclose(_hg[0], (-1 / 8) / (_sd + 1e-6), rtol=1e-12)
# contract: eps (outside the sqrt: [0, 1] with eps = 0.5 -> +-0.5 / (0.5 + 0.5))
_hg = np.array(group_advantages(torch.tensor([0.0, 1.0], dtype=torch.float64), eps=0.5).numpy())
np.testing.assert_allclose(_hg, [-0.5, 0.5], rtol=1e-12)
# contract: population-std (non-binary [2, 4, 9]: mean 5, population variance 26/3)
_sd = math.sqrt(26 / 3)
_hg = np.array(
    group_advantages(torch.tensor([2.0, 4.0, 9.0], dtype=torch.float64), eps=0.0).numpy()
)
np.testing.assert_allclose(_hg, [-3 / _sd, -1 / _sd, 4 / _sd], rtol=1e-12)
# contract: dtype, no-modify (dtype kept; integer input -> float32 output; input not modified)
_in = torch.tensor([[3.0, 1.0, 1.0]], dtype=torch.float64)
_ho = group_advantages(_in)
assert type(_ho) is torch.Tensor and _ho.dtype == torch.float64
assert torch.equal(_in, torch.tensor([[3.0, 1.0, 1.0]], dtype=torch.float64)), "input modified"
_ho = group_advantages(torch.tensor([1, 0, 0, 0]))
assert type(_ho) is torch.Tensor and _ho.dtype == torch.float32, (
    f"an integer tensor is treated as float32: expected float32, got {_ho.dtype}"
)
np.testing.assert_allclose(np.array(_ho.numpy(), dtype=np.float64)[0], math.sqrt(3), rtol=1e-5)
# contract: rows-independent (zero sum per informative row)
_R = torch.tensor([[1.0, 0, 0, 0], [0.2, 0.2, 0.2, 0.2], [1.0, 1, 0, 0]])
_hg = np.array(group_advantages(_R, eps=0.0).numpy(), dtype=np.float64)
np.testing.assert_allclose(_hg[2], [1, 1, -1, -1], rtol=1e-6)
assert np.all(_hg[1] == 0.0)
np.testing.assert_allclose(_hg.sum(axis=1), 0.0, atol=1e-6)
# contract: value-errors (not 1-D or 2-D, or K == 0)
for _bad in (torch.zeros(2, 2, 2), torch.zeros(3, 0), torch.zeros(0), torch.tensor(1.0)):
    try:
        group_advantages(_bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"shape {tuple(_bad.shape)} must raise ValueError")
# contract: type-error
for _bad in ([1.0, 0.0], np.array([1.0, 0.0]), 1.0):
    try:
        group_advantages(_bad)
    except TypeError:
        pass
    else:
        raise AssertionError(f"a {type(_bad).__name__} must raise TypeError (not a torch.Tensor)")
# contract: shape (B = 0 groups of K = 3 is an empty batch, not an error)
_ho = group_advantages(torch.zeros(0, 3))
assert type(_ho) is torch.Tensor and tuple(_ho.shape) == (0, 3), tuple(_ho.shape)
# contract: new-tensor (the output is not a view of the input: writing into it leaves the input)
_in = torch.tensor([[0.0, 1.0], [2.0, 2.0]])
_ho = group_advantages(_in)
_ho.add_(7.0)
assert torch.equal(_in, torch.tensor([[0.0, 1.0], [2.0, 2.0]])), "return a new tensor, not a view"
# contract: differential (seeded random groups against the reference: binary, continuous, constant
# rows, tiny but nonzero spreads, B and K from 1 up, float32 / float64 / integer input)
# @reference group_advantages
_rng = np.random.default_rng(95)
for _case in range(60):
    _B, _K = int(_rng.integers(1, 6)), int(_rng.integers(1, 10))
    _kind = _case % 5
    if _kind == 0:
        _x = (_rng.random((_B, _K)) < 0.4).astype(np.float64)
    elif _kind == 1:
        _x = _rng.normal(0, 3, (_B, _K))
    elif _kind == 2:  # tiny but nonzero spreads around 0.5 (float64) or around 0
        _x = 0.5 + 1e-9 * _rng.integers(0, 3, (_B, _K))
    elif _kind == 3:
        _x = _rng.choice([0.1, 0.3, 1.2], (_B, 1)) * np.ones((_B, _K))  # constant rows
        _x[0] = _rng.normal(0, 1, _K)
    else:
        _x = 1e-9 * _rng.integers(-2, 3, (_B, _K))
    _dt = [torch.float64, torch.float32, torch.int64][_case % 3] if _kind in (0, 1) else None
    _dt = _dt or (torch.float64 if _kind == 2 else torch.float32)
    _in = torch.tensor(np.round(_x * 3) if _dt == torch.int64 else _x, dtype=_dt)
    if _case % 4 == 1:
        _in = _in[0]  # one group, shape (K,)
    _keep = _in.clone()
    _e = [1e-6, 0.0, 0.5, 1e-3][_case % 4]
    _want = _ref_group_advantages(_in.clone(), eps=_e)
    _ho = group_advantages(_in, eps=_e) if _e != 1e-6 else group_advantages(_in)
    assert type(_ho) is torch.Tensor and _ho.shape == _in.shape, (_case, _ho.shape, _in.shape)
    assert _ho.dtype == _want.dtype, f"case {_case}: dtype {_ho.dtype}, expected {_want.dtype}"
    assert torch.equal(_in, _keep), f"case {_case}: the input was modified"
    _w, _g = _want.double().numpy(), _ho.detach().double().numpy()
    # tolerance: rounding of r - mean (a few ulps of max |r|) over the smallest std + eps
    _xd = _in.double().reshape(-1, _in.shape[-1]).numpy()
    _sd = _xd.std(axis=1)[np.ptp(_xd, axis=1) > 0]
    _cond = np.abs(_xd).max() / (_sd.min() + _e) if _sd.size else 1.0
    _tiny = np.finfo(np.float32 if _want.dtype == torch.float32 else np.float64).eps
    np.testing.assert_allclose(_g, _w, rtol=1e-5 if _want.dtype == torch.float32 else 1e-10,
                               atol=64 * _tiny * max(1.0, _cond),
                               err_msg=f"case {_case}: input {_in}, eps={_e}")  # fmt: skip
    _flat = (_in.amax(-1, keepdim=True) == _in.amin(-1, keepdim=True)).expand_as(_in).numpy()
    assert np.all(_g[_flat] == 0.0), f"case {_case}: a degenerate group must give exact zeros"
del _ref_group_advantages
