# contract: k2
_hg = np.array(kl_estimate(_lp, _ref, "k2").detach().numpy(), dtype=np.float64)
np.testing.assert_allclose(_hg, [0.5, 0.5, 0.0], atol=1e-6)
# contract: k3, shape (default is k3; float64 hand values; shape (2, 2) kept)
_a = torch.tensor([[-0.1, -3.0], [-2.5, -0.2]], dtype=torch.float64)
_b = torch.tensor([[-0.6, -1.0], [-2.5, -0.9]], dtype=torch.float64)
_dd = np.array([[-0.5, 2.0], [0.0, -0.7]])
_ho = kl_estimate(_a, _b)
assert type(_ho) is torch.Tensor and tuple(_ho.shape) == (2, 2)
np.testing.assert_allclose(
    np.array(_ho.numpy(), dtype=np.float64), np.exp(_dd) - _dd - 1, rtol=1e-12
)
# contract: gradient (flows into logp: d k3 / d logp = 1 - exp(d); d k1 / d logp = 1)
_x = torch.tensor([-1.0, -2.0], dtype=torch.float64, requires_grad=True)
_r2 = torch.tensor([-2.0, -1.0], dtype=torch.float64)
kl_estimate(_x, _r2, "k3").sum().backward()
np.testing.assert_allclose(_x.grad.numpy(), [1 - math.exp(-1), 1 - math.e], rtol=1e-10)
_x.grad = None
kl_estimate(_x, _r2, "k1").sum().backward()
np.testing.assert_allclose(_x.grad.numpy(), [1.0, 1.0], rtol=1e-12)
# contract: k1, k3 (k3 >= 0 everywhere, k1 is not)
_g2 = torch.Generator().manual_seed(3)
_u, _v = torch.randn(100, generator=_g2), torch.randn(100, generator=_g2)
assert float(kl_estimate(_u, _v, "k3").min()) >= 0.0
assert float(kl_estimate(_u, _v, "k1").min()) < 0.0
# contract: value-errors (an unknown estimator name, or shapes that differ even if they broadcast)
for _e in ("k4", "k0", "k10", "k25", "K3", "k", "", "kl"):
    try:
        kl_estimate(_lp, _ref, _e)
    except ValueError:
        pass
    else:
        raise AssertionError(f"the unknown estimator {_e!r} must raise ValueError")
for _sa, _sb in (
    ((3,), (2,)),
    ((2,), (3,)),
    ((3, 1), (3,)),
    ((1,), (3,)),
    ((3,), ()),
    ((2, 3), (3, 2)),
):
    try:
        kl_estimate(torch.zeros(_sa), torch.zeros(_sb), "k3")
    except ValueError:
        pass
    else:
        raise AssertionError(f"shapes {_sa} and {_sb} differ: must raise ValueError")
# contract: names (an estimator name built at run time is the same name)
for _i in (1, 2, 3):
    _name = "".join(["k", str(_i)])
    _hg = kl_estimate(_lp, _ref, _name).detach().double().numpy()
    np.testing.assert_allclose(_hg, kl_estimate(_lp, _ref, f"k{_i}").detach().double().numpy())
# contract: differential (seeded random inputs against the reference: shapes () to 3-D and empty,
# float32 and float64, log-ratios far beyond +-2 (up to +-20), value and gradient)
# @reference kl_estimate
_rng = np.random.default_rng(952)
for _case in range(36):
    _shape = [(), (0,), (5,), (2, 3), (2, 3, 4), (7,)][_case % 6]
    _dt = torch.float32 if _case % 2 else torch.float64
    _est = ["k1", "k2", "k3"][_case % 3]
    _scale = [0.3, 2.0, 20.0][(_case // 3) % 3]
    _a = torch.tensor(_rng.normal(-4, 2, _shape), dtype=_dt)
    _b = (_a + torch.tensor(np.clip(_rng.normal(0, _scale, _shape), -20, 20), dtype=_dt)).detach()
    _x = _a.clone().requires_grad_(True)
    _xr = _a.clone().requires_grad_(True)
    _w = torch.tensor(_rng.normal(0, 1, _shape), dtype=_dt)
    _ho = kl_estimate(_x, _b.clone(), _est)
    _want = _ref_kl_estimate(_xr, _b.clone(), _est)
    assert type(_ho) is torch.Tensor and _ho.shape == _want.shape, (_case, _ho.shape, _want.shape)
    _rt, _at = (1e-5, 1e-5) if _dt == torch.float32 else (1e-10, 1e-12)
    np.testing.assert_allclose(_ho.detach().double().numpy(), _want.detach().double().numpy(),
                               rtol=_rt, atol=_at, err_msg=f"case {_case}: {_est}, {_dt}")  # fmt: skip
    if _x.numel():
        (_ho * _w).sum().backward()
        (_want * _w).sum().backward()
        np.testing.assert_allclose(_x.grad.double().numpy(), _xr.grad.double().numpy(), rtol=_rt,
                                   atol=_at, err_msg=f"case {_case}: gradient wrt logp")  # fmt: skip
del _ref_kl_estimate
