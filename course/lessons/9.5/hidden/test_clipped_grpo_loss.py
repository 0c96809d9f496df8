# contract: metrics
assert isinstance(_met, dict) and {"pg", "kl"} <= set(_met)
assert type(_met["pg"]) is float and type(_met["kl"]) is float, _met
assert math.isclose(_met["pg"], 0.575, abs_tol=1e-9)
assert math.isclose(float(_met["kl"]), 0.0, abs_tol=1e-12)
# contract: clip, gradient (clipped tokens get 0; row 0 token 1: -rho*A/(2*2) = -0.225)
_loss.backward()
np.testing.assert_allclose(
    _new.grad.numpy(), [[0.0, -0.225, 0.0], [0.0, 0.5, 1 / 3]], rtol=1e-9, atol=1e-12
)
# contract: two-stage (the global token mean would give (-1.2 - 0.9 + 1.6 + 3 + 2) / 5 = 0.9)
assert not math.isclose(float(_loss.detach()), 0.9, abs_tol=1e-6)
# contract: kl-term (ref = new + 1 on every token -> k3 = e - 2 per token, added with kl_coef)
_loss2, _met2 = clipped_grpo_loss(
    _new.detach(), _zero, _new.detach() + 1.0, _A, _m, clip_eps=0.2, kl_coef=0.1
)
np.testing.assert_allclose(float(_loss2.detach()), 0.575 + 0.1 * (math.e - 2), rtol=1e-10)
np.testing.assert_allclose(_met2["kl"], math.e - 2, rtol=1e-10)
np.testing.assert_allclose(_met2["pg"], 0.575, rtol=1e-10)
# the KL term carries gradient: A = 0 and ref = new + 1 -> d/d new of beta * k3 = beta * (1 - e)
# per active token, divided by the response's token count and by N = 2
_n5 = _rho.log().clone().requires_grad_(True)
_A5 = torch.zeros(2, dtype=torch.float64)
_l5, _ = clipped_grpo_loss(_n5, _zero, _n5.detach() + 1.0, _A5, _m, clip_eps=0.2, kl_coef=0.1)
_l5.backward()
_g5 = 0.1 * (1 - math.e)
np.testing.assert_allclose(
    _n5.grad.numpy(), [[_g5 / 4, _g5 / 4, 0.0], [_g5 / 6, _g5 / 6, _g5 / 6]], rtol=1e-9, atol=1e-12
)
# another eps: eps = 0.1 -> row 0: (-1.1 - 0.9)/2 = -1.0; row 1: (-(-0.9*2)= 1.8 + 3 + 2)/3 = 2.2667
_loss3, _ = clipped_grpo_loss(
    _new.detach(), _zero, _new.detach(), _A, _m, clip_eps=0.1, kl_coef=0.0
)
np.testing.assert_allclose(float(_loss3.detach()), (-1.0 + 6.8 / 3) / 2, rtol=1e-10)
# contract: empty-response, masked-garbage (an empty response contributes 0: count clamped at 1)
_m4 = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
_n4 = torch.tensor([[30.0, -40.0], [0.0, 0.0]], dtype=torch.float64, requires_grad=True)
_z4 = torch.zeros(2, 2, dtype=torch.float64)
_a4 = torch.tensor([5.0, 1.0], dtype=torch.float64)
_l4, _ = clipped_grpo_loss(_n4, _z4, _z4, _a4, _m4, clip_eps=0.2, kl_coef=0.5)
assert math.isfinite(float(_l4.detach()))
np.testing.assert_allclose(float(_l4.detach()), (0.0 + -1.0) / 2, rtol=1e-10)
_l4.backward()
assert torch.all(_n4.grad[0] == 0.0), "masked tokens must get zero gradient"
# contract: masked-garbage (float32 100.0 at masked positions: same loss and gradient as zeros)
_m6 = torch.tensor([[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
_b6 = torch.tensor([[-0.3, -1.2, 0.0, 0.0], [-0.7, 0.0, 0.0, 0.0]])
_o6 = torch.tensor([[-0.5, -1.0, 0.0, 0.0], [-0.4, 0.0, 0.0, 0.0]])
_r6 = torch.tensor([[-0.4, -0.9, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]])
_a6 = torch.tensor([1.0, -1.0])
_junk = torch.tensor([[0.0, 0.0, 100.0, -100.0], [0.0, 100.0, -100.0, 100.0]])
_out6 = []
for _j in (0.0, 1.0):
    _n6 = (_b6 + _j * _junk).clone().requires_grad_(True)
    _l6, _mt6 = clipped_grpo_loss(_n6, _o6 - _j * _junk, _r6 - _j * _junk, _a6, _m6,
                                  clip_eps=0.2, kl_coef=0.1)  # fmt: skip
    _l6.backward()
    _out6.append((float(_l6.detach()), _n6.grad.clone(), _mt6))
assert math.isfinite(_out6[1][0]), (
    f"masked float32 values of +-100 gave a loss of {_out6[1][0]}: mask before exp and k3"
)
np.testing.assert_allclose(_out6[1][0], _out6[0][0], rtol=1e-6)
assert torch.isfinite(_out6[1][1]).all() and torch.all(_out6[1][1][_m6 == 0] == 0.0)
np.testing.assert_allclose(_out6[1][1].numpy(), _out6[0][1].numpy(), rtol=1e-5, atol=1e-7)
assert math.isfinite(_out6[1][2]["pg"]) and math.isfinite(_out6[1][2]["kl"]), _out6[1][2]
# contract: no-modify
assert torch.equal(_zero, torch.zeros(2, 3, dtype=torch.float64))
# contract: differential (seeded random batches against the reference: ragged masks, rows with 0 and
# 1 active tokens, ratios on and far outside the clip range, log-ratios up to +-25, finite garbage
# at masked positions, float32 and float64; loss, both metrics and the gradient wrt new_logp)
# @reference kl_estimate clipped_grpo_loss
_rng = np.random.default_rng(953)
for _case in range(40):
    _N, _T = int(_rng.integers(1, 6)), int(_rng.integers(1, 8))
    _dt = torch.float32 if _case % 2 else torch.float64
    _len = _rng.integers(0, _T + 1, _N)
    _len[0] = min(_T, 1 + _case % 2)  # a row with one (or two) active tokens
    _mk = (np.arange(_T)[None, :] < _len[:, None]).astype(np.float64)
    if _case % 3 == 0:
        _mk = _mk[:, ::-1].copy()  # active tokens at the end of the row
    _nw = _rng.normal(-2, 1.5, (_N, _T))
    _sc = [0.1, 0.4, 3.0, 25.0][_case % 4]
    _od = _nw - np.clip(_rng.normal(0, _sc, (_N, _T)), -25, 25)
    _rf = _nw + np.clip(_rng.normal(0, [0.5, 2.0, 20.0][_case % 3], (_N, _T)), -20, 20)
    _junk = _rng.choice([100.0, -100.0, 0.0, 37.5], (_N, _T))
    for _arr in (_nw, _od, _rf):
        _arr[_mk == 0] = _junk[_mk == 0]
    _ad = _rng.normal(0, 1.5, _N) * (_rng.random(_N) < 0.8)
    _eps = [0.2, 0.1, 0.28, 0.5][_case % 4]
    _beta = [0.0, 0.04, 0.5, 1.0][(_case // 4) % 4]
    _t = [torch.tensor(_v, dtype=_dt) for _v in (_nw, _od, _rf, _ad, _mk)]
    _keep = [_v.clone() for _v in _t]
    _xs = _t[0].clone().requires_grad_(True)
    _xr = _t[0].clone().requires_grad_(True)
    _ho, _hm = clipped_grpo_loss(new_logp=_xs, old_logp=_t[1], ref_logp=_t[2], advantages=_t[3],
                                 mask=_t[4], clip_eps=_eps, kl_coef=_beta)  # fmt: skip
    _want, _wm = _ref_clipped_grpo_loss(_xr, *[_v.clone() for _v in _t[1:]], clip_eps=_eps,
                                        kl_coef=_beta)  # fmt: skip
    assert type(_ho) is torch.Tensor and _ho.ndim == 0, f"case {_case}: a 0-dim loss tensor"
    assert all(type(_hm[_k]) is float for _k in ("pg", "kl")), f"case {_case}: {_hm}"
    _rt, _at = (2e-5, 1e-5) if _dt == torch.float32 else (1e-10, 1e-12)
    for _name, _g, _w in (("loss", float(_ho.detach()), float(_want.detach())),
                          ("pg", _hm["pg"], _wm["pg"]), ("kl", _hm["kl"], _wm["kl"])):  # fmt: skip
        np.testing.assert_allclose(_g, _w, rtol=_rt, atol=_at * max(1.0, abs(_w)) if _name == "kl"
                                   else _at, err_msg=f"case {_case}: {_name}")  # fmt: skip
    _ho.backward()
    _want.backward()
    assert _xs.grad is not None and torch.all(_xs.grad[_t[4] == 0] == 0), f"case {_case}: masked"
    np.testing.assert_allclose(_xs.grad.double().numpy(), _xr.grad.double().numpy(), rtol=_rt,
                               atol=_at, err_msg=f"case {_case}: gradient wrt new_logp")  # fmt: skip
    assert all(torch.equal(_a, _b) for _a, _b in zip(_t, _keep)), f"case {_case}: input modified"
del _ref_clipped_grpo_loss, _ref_kl_estimate
