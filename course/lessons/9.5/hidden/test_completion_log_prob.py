# The models are built twice from the same code and seed (helpers/standins.py): in the student's
# kernel (``tiny_llama(0)``, ``AbsPosLM()``: their function runs there) and here
# (``local_standins``: the expected values and the reference are computed on those).

# independent expected values: run each row UNPADDED (real tokens only, default positions) and sum
# the completion tokens' log-probs one prefix at a time
_net = local_standins.tiny_llama(0)
_P = 4
_ids = torch.tensor([[0, 0, 5, 6, 7, 8, 1, 0], [4, 5, 6, 7, 9, 9, 9, 1], [0, 3, 3, 2, 1, 0, 0, 0]])
_msk = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 0, 0, 0]])


def _expected(net, ids, msk, P):
    out = []
    with torch.inference_mode():
        for r in range(ids.shape[0]):
            total = 0.0
            for j in range(P, ids.shape[1]):
                if msk[r, j] == 1:
                    prefix = ids[r, :j][msk[r, :j] == 1][None, :]
                    lp = net(input_ids=prefix).logits[0, -1].float().log_softmax(-1)
                    total += float(lp[ids[r, j]])
            out.append(total)
    return np.array(out)


_want = _expected(_net, _ids, _msk, _P)
_pos = (_msk.cumsum(1) - 1).clamp(min=0)
_knet = tiny_llama(0)
# contract: teacher-forcing, shape, positions-default
for _pp in (_pos, None):  # explicit positions, and positions derived from the mask
    _ho = completion_log_prob(_knet, _ids, _msk, _P, _pp)
    assert type(_ho) is torch.Tensor and tuple(_ho.shape) == (3,)
    np.testing.assert_allclose(
        np.array(_ho.detach().numpy(), dtype=np.float64), _want, rtol=1e-4, atol=1e-4
    )
# contract: empty-row (a row whose completion is only padding gives exactly 0; P = L gives zeros)
_ho = completion_log_prob(
    UniformLM(5), torch.tensor([[2, 3, 0, 0]]), torch.tensor([[1, 1, 0, 0]]), 2
)
assert float(_ho[0].detach()) == 0.0
_ho = completion_log_prob(UniformLM(5), torch.tensor([[2, 3, 4]]), torch.tensor([[1, 1, 1]]), 3)
assert float(_ho[0].detach()) == 0.0
# contract: gradient (reaches the model's parameters: not computed under no_grad)
_knet2 = tiny_llama(0).train()
completion_log_prob(_knet2, _ids, _msk, _P, _pos).sum().backward()
assert any(_g is not None and float(np.abs(_g).sum()) > 0 for _g in param_grads(_knet2).values()), (
    "no gradient reached the model: do not compute the log-probs under torch.no_grad"
)


# an absolute-position stub (learned positions, as in GPT-2): the logits depend on position_ids and
# on the attention mask, so a rescoring that drops either is wrong; it records the kwargs it gets
def _abs_expected(stub, ids, msk, P):
    """Each row unpadded, positions 0..n-1 counted over real tokens, by hand."""
    out = []
    with torch.no_grad():
        for r in range(ids.shape[0]):
            real = [j for j in range(ids.shape[1]) if msk[r, j] == 1]
            total = 0.0
            for i in range(1, len(real)):
                if real[i] >= P:
                    lg = stub.tok[ids[r, real[i - 1]]] + stub.pos[i - 1] + 0.1 * i
                    total += float(lg.log_softmax(-1)[ids[r, real[i]]])
            out.append(total)
    return np.array(out)


_stub = AbsPosLM()
_want = _abs_expected(local_standins.AbsPosLM(), _ids, _msk, _P)
# contract: model-call, positions-default, masks
for _pp in (_pos, None):
    _n_before = len(_stub.calls)
    _ho = completion_log_prob(_stub, _ids, _msk, _P, _pp)
    np.testing.assert_allclose(
        np.array(_ho.detach().numpy(), dtype=np.float64), _want, rtol=1e-5, atol=1e-5,
        err_msg="a learned-position model gives other log-probs: pass position_ids (the given ones, "
        "or cumsum(attention_mask) - 1 clamped at 0) and the attention mask to the model",
    )  # fmt: skip
    _sc = _stub.calls
    assert len(_sc) == _n_before + 1, f"call the model once (got {len(_sc) - _n_before} calls)"
    assert _sc[-1]["position_ids"] is not None, "pass position_ids to the model"
    np.testing.assert_array_equal(np.asarray(_sc[-1]["position_ids"])[_msk == 1],
                                  _pos.numpy()[_msk == 1])  # fmt: skip
    assert _sc[-1]["attention_mask"] is not None, "pass the attention mask to the model"
    np.testing.assert_array_equal(np.asarray(_sc[-1]["attention_mask"]), _msk.numpy())

# contract: prompt-excluded (a uniform model: with P = 2 instead of 4 the count grows by the two
# prompt-side tokens)
_u = completion_log_prob(UniformLM(11), _ids, _msk, 2)
np.testing.assert_allclose(
    np.array(_u.detach().numpy(), dtype=np.float64),
    [-(_msk[r, 2:].sum().item()) * math.log(11) for r in range(3)],
    rtol=1e-5,
)

# contract: dtype (a stub with logits of a chosen dtype: float32 for half-precision logits, float64
# kept)
for _dt, _want_dt in (("float64", torch.float64), ("bfloat16", torch.float32),
                      ("float16", torch.float32), ("float32", torch.float32)):  # fmt: skip
    _ho = completion_log_prob(AbsPosLM(dtype=_dt), _ids, _msk, _P, _pos)
    assert _ho.dtype == _want_dt, f"{_dt} logits: computed in {_ho.dtype}, expected {_want_dt}"
# contract: differential (seeded random batches against the reference on absolute-position stubs
# that record their keyword arguments: ragged left padding, EOS at different columns, rows without
# completion tokens, P from 1 to L, positions given (also shifted: the sampler's own) or derived;
# float32, float64 and bfloat16 logits; values and gradients)
# @reference completion_log_prob
_rng = np.random.default_rng(955)
for _case in range(30):
    _N, _L = int(_rng.integers(1, 5)), int(_rng.integers(2, 11))
    _P = int(_rng.integers(1, _L + 1))
    _real_p = _rng.integers(1, _P + 1, _N)  # real prompt tokens per row (left padding before)
    _comp = _rng.integers(0, _L - _P + 1, _N)  # completion tokens per row (padding after)
    _cols = np.arange(_L)[None, :]
    _am = ((_cols >= _P - _real_p[:, None]) & (_cols < _P + _comp[:, None])).astype(np.int64)
    _ii = torch.tensor(np.where(_am == 1, _rng.integers(1, 11, (_N, _L)), 0))
    _am = torch.tensor(_am)
    _mode = _case % 3
    _pp = (_am.cumsum(1) - 1).clamp(min=0)
    if _mode == 1:
        _pp = _pp + torch.tensor(_rng.integers(1, 4, (_N, 1)))  # the sampler's positions, shifted
    _dt = ["float32", "float64", "bfloat16"][_case % 3 if _case % 2 else 0]
    _st, _sr = AbsPosLM(dtype=_dt), local_standins.AbsPosLM(dtype=_dt)
    _keep = (_ii.clone(), _am.clone(), _pp.clone())
    _args = (_ii, _am, _P) if _mode == 2 else (_ii, _am, _P, _pp)
    _ho = completion_log_prob(_st, *_args)
    _want = _ref_completion_log_prob(_sr, _ii.clone(), _am.clone(), _P,
                                     None if _mode == 2 else _pp.clone())  # fmt: skip
    assert type(_ho) is torch.Tensor and tuple(_ho.shape) == (_N,), (_case, tuple(_ho.shape))
    assert _ho.dtype == _want.dtype, (_case, _ho.dtype, _want.dtype)
    np.testing.assert_allclose(_ho.detach().double().numpy(), _want.detach().double().numpy(),
                               rtol=1e-5, atol=1e-5, err_msg=f"case {_case}: N={_N} L={_L} P={_P}")  # fmt: skip
    _sc = _st.calls
    assert len(_sc) == 1, f"case {_case}: call the model once, got {len(_sc)} calls"
    _c = _sc[0]
    assert _c["attention_mask"] is not None and _c["position_ids"] is not None, _case
    np.testing.assert_array_equal(np.asarray(_c["attention_mask"]), _am.numpy())
    _act = _am.numpy() == 1
    np.testing.assert_array_equal(np.asarray(_c["position_ids"])[_act], _pp.numpy()[_act])
    assert all(torch.equal(_a, _b) for _a, _b in zip((_ii, _am, _pp), _keep)), "inputs modified"
    _wt = torch.tensor(_rng.normal(0, 1, _N), dtype=_ho.dtype)
    if int(_comp.sum()) == 0:
        continue  # nothing to differentiate
    (_ho * _wt).sum().backward()
    (_want * _wt).sum().backward()
    _kg = param_grads(_st)
    for _name, _b in (("tok", _sr.tok), ("pos", _sr.pos)):
        assert _kg[_name] is not None, f"case {_case}: no gradient reached the model"
        np.testing.assert_allclose(_kg[_name], _b.grad.double().numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=f"case {_case}: gradient")  # fmt: skip
del _ref_completion_log_prob
