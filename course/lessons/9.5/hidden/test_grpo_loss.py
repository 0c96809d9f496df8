# contract: estimators (k1 and k2 variants, hand values: d = ref - logp = [-0.5, 0.5])
np.testing.assert_allclose(
    float(grpo_loss(_lp, _rf, _ad, 0.1, "k1").detach()), -0.5 + 0.1 * 0.0, atol=1e-12
)
np.testing.assert_allclose(
    float(grpo_loss(_lp, _rf, _ad, 0.2, "k2").detach()), -0.5 + 0.2 * 0.125, rtol=1e-12
)
# contract: gradient ((-A + beta (1 - e^d)) / N; an A > 0 row gets a NEGATIVE gradient)
_lp.grad = None
grpo_loss(_lp, _rf, _ad, 0.1).backward()
np.testing.assert_allclose(
    _lp.grad.numpy(),
    [(-1 + 0.1 * (1 - math.exp(-0.5))) / 2, (1 + 0.1 * (1 - math.exp(0.5))) / 2],
    rtol=1e-10,
)
assert float(_lp.grad[0]) < 0 < float(_lp.grad[1])
# contract: constants (no gradient into the reference or the advantages)
_lp.grad = None
_rg = _rf.clone().requires_grad_(True)
_ag = _ad.clone().requires_grad_(True)
grpo_loss(_lp, _rg, _ag, 0.5).backward()
assert _rg.grad is None or float(_rg.grad.abs().sum()) == 0.0, (
    "ref_logp must be a constant: detach it"
)
assert _ag.grad is None or float(_ag.grad.abs().sum()) == 0.0, (
    "advantages must be a constant: detach them"
)
# contract: means (zero advantages and ref == policy: zero loss; the mean is over N, not a sum)
_z = torch.tensor([-3.0, -1.0, -2.0], dtype=torch.float64, requires_grad=True)
assert float(grpo_loss(_z, _z.detach(), torch.zeros(3, dtype=torch.float64), 1.0).detach()) == 0.0
np.testing.assert_allclose(
    float(
        grpo_loss(_z, _z.detach(), torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64), 0.0).detach()
    ),
    2.0,
    rtol=1e-12,
)
# contract: differential (seeded random batches against the reference: N from 1 up, float32 and
# float64, log-ratios far beyond +-2, every estimator, kl_coef from 0 up, advantages and reference
# that require grad; value, gradient wrt logp, none into the constants)
# @reference kl_estimate grpo_loss
_rng = np.random.default_rng(956)
for _case in range(36):
    _N = int(_rng.integers(1, 9))
    _dt = torch.float32 if _case % 2 else torch.float64
    _est = [None, "k1", "k2", "k3"][_case % 4]
    _beta = [0.0, 0.04, 0.3, 1.5][(_case // 4) % 4]
    _l0 = torch.tensor(_rng.normal(-10, 5, _N), dtype=_dt)
    _sc = [0.3, 2.0, 15.0][_case % 3]
    _r0 = _l0 + torch.tensor(np.clip(_rng.normal(0, _sc, _N), -15, 15), dtype=_dt)
    _a0 = torch.tensor(_rng.normal(0, 1, _N) * (_rng.random(_N) < 0.8), dtype=_dt)
    _xs, _xr = _l0.clone().requires_grad_(True), _l0.clone().requires_grad_(True)
    _rg, _ag = (
        _r0.clone().requires_grad_(_case % 3 == 0),
        _a0.clone().requires_grad_(_case % 3 == 0),
    )
    _kw = {} if _est is None else {"kl_estimator": _est}
    _ho = grpo_loss(_xs, _rg, _ag, _beta, **_kw)
    _want = _ref_grpo_loss(_xr, _r0.clone(), _a0.clone(), _beta, **_kw)
    assert type(_ho) is torch.Tensor and _ho.ndim == 0, f"case {_case}: a 0-dim tensor"
    _rt, _at = (2e-5, 1e-5) if _dt == torch.float32 else (1e-10, 1e-12)
    np.testing.assert_allclose(float(_ho.detach()), float(_want.detach()), rtol=_rt, atol=_at,
                               err_msg=f"case {_case}: N={_N} {_est} beta={_beta}")  # fmt: skip
    _ho.backward()
    _want.backward()
    np.testing.assert_allclose(_xs.grad.double().numpy(), _xr.grad.double().numpy(), rtol=_rt,
                               atol=_at, err_msg=f"case {_case}: gradient wrt logp")  # fmt: skip
    for _c in (_rg, _ag):
        assert _c.grad is None or float(_c.grad.abs().sum()) == 0.0, f"case {_case}: constants"
    assert torch.equal(_rg.detach(), _r0) and torch.equal(_ag.detach(), _a0), "inputs modified"
del _ref_grpo_loss, _ref_kl_estimate
