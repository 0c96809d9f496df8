# The trainers are built twice from the same code and seed (helpers/standins.py): in the student's
# kernel (their train_step runs there; what it did comes back as data) and here (``local_standins``:
# the models the expected values are computed with, and the reference's stand-ins).


def _seq_logp(net, sample, r):
    """Independent: the completion's log-prob of row r, scored unpadded one prefix at a time."""
    real = sample.input_ids[r][sample.attention_mask[r] == 1]
    n_prompt = int(sample.prompt_mask[r].sum())
    total = 0.0
    with torch.inference_mode():
        lp = net(input_ids=real[None, :]).logits[0].float().log_softmax(-1)  # (L, V)
        for j in range(n_prompt, len(real)):
            total += float(lp[j - 1, real[j]])
    return total


def _fetch_sample(live):
    """The kernel trainer's last sample, as tensors here."""
    s = live.last_sample
    names = ("input_ids", "attention_mask", "prompt_mask", "completion_mask", "logprobs")
    return SimpleNamespace(**{n: getattr(s, n) for n in names})


for _seed in (0, 1, 2):
    _tr = tiny_trainer(train_step, "mixed", first=local_standins.first_prompt(_seed), seed=_seed,
                       kl_coef=0.3)  # fmt: skip
    spy_updates(_tr)  # trainer.update records the loss and takes no step
    _hrow = _tr.run_step()
    _r = _tr.last_rewards.view(2, 4)
    _inf = _r.max(1).values != _r.min(1).values
    if int(_inf.sum()) != 1 or _tr.last_sample is None:
        continue  # need exactly one informative group for this check; try the next seed
    break
else:
    raise AssertionError("test set-up: no seed gave exactly one informative group")
_here = local_standins.tiny_trainer(seed=_seed, kl_coef=0.3)  # the same models, built here
assert _hrow["skipped"] == 1 and _hrow["groups"] == 2, _hrow
_calls = _tr.spied
assert len(_calls) == 1, f"trainer.update must be called exactly once, got {len(_calls)} calls"
_s2 = _fetch_sample(_tr)
local_standins.load_params(_here.policy, param_state(_tr.policy))
_rows = [i for i in range(8) if bool(_inf[i // 4])]
_lp_pol = np.array([_seq_logp(_here.policy, _s2, i) for i in _rows])
_lp_ref = np.array([_seq_logp(_here.reference, _s2, i) for i in _rows])
_rr = _r[_inf].reshape(-1).double().numpy()
_A = (_rr - _rr.mean()) / (_rr.std() + 1e-6)
_dd = _lp_ref - _lp_pol
_k3 = np.exp(_dd) - _dd - 1
_want = -(_A * _lp_pol).mean() + 0.3 * _k3.mean()
np.testing.assert_allclose(float(_calls[0]["loss"]), _want, rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(_hrow["kl"], _k3.mean(), rtol=1e-4, atol=1e-6)
_cm = _s2.completion_mask[_rows].float()
np.testing.assert_allclose(
    _hrow["entropy"], float(-(_s2.logprobs[_rows] * _cm).sum() / _cm.sum()), rtol=1e-5
)
np.testing.assert_allclose(_hrow["reward"], float(_tr.last_rewards.mean()), rtol=1e-6)
assert _calls[0]["requires_grad"], (
    "the loss passed to trainer.update must carry the policy's gradient"
)
# a real step: only LoRA weights move, the reference does not
restore_updates(_tr)
_hbefore = param_state(_tr.policy)  # the policy the step's forward pass sees (before its update)
_hrow = _tr.run_step()
if _hrow["skipped"] < _hrow["groups"]:
    assert _tr.updates == 1
    _hafter = param_state(_tr.policy)
    _moved = [n_ for n_ in _hbefore if not np.array_equal(_hbefore[n_], _hafter[n_])]
    assert _moved and all("lora_" in n_ for n_ in _moved), _moved[:3]
    # contract: kl-before-update ("kl" comes from the step's own forward pass, not re-measured)
    local_standins.load_params(_here.policy, _hbefore)
    _s3 = _fetch_sample(_tr)
    _r3 = _tr.last_rewards.view(2, 4)
    _rows3 = [i for i in range(8) if bool(_r3[i // 4].max() != _r3[i // 4].min())]
    _lp0 = np.array([_seq_logp(_here.policy, _s3, i) for i in _rows3])
    _d3 = np.array([_seq_logp(_here.reference, _s3, i) for i in _rows3]) - _lp0
    np.testing.assert_allclose(_hrow["kl"], (np.exp(_d3) - _d3 - 1).mean(), rtol=1e-4, atol=1e-6)
_ref_state, _ref_here = param_state(_tr.reference), local_standins.param_state(_here.reference)
assert set(_ref_state) == set(_ref_here) and all(
    np.array_equal(_ref_state[n_], _ref_here[n_]) for n_ in _ref_here
), "the reference's weights changed"
assert not any(trainable(_tr.reference).values()), "the reference must stay frozen"
_tr.check_reference()


# contract: differential (train_step against the reference on a stand-in trainer whose policy and
# reference are absolute-position stubs: their logits depend on position_ids and on the attention
# mask, and they record every call's keyword arguments and grad mode; ragged left padding,
# completions of several lengths with junk log-probs after EOS, groups that are degenerate,
# binary, continuous or of a tiny but nonzero spread: one reward of 1e-7, 1e-30 (float32's variance
# and a std built from float32 squares underflow to 0; torch.std, computed in double, does not) or
# 1e-45 (float32's smallest subnormal: its population std rounds to 0 too; a kernel that flushes
# subnormals to zero, torch.set_flush_denormal(True), would see an all-zero group there). "Not all
# equal" is max != min, not a spread above 0. B and K from 1 up)
# @reference group_advantages kl_estimate completion_log_prob grpo_loss train_step
_n_inf = 0
# every case at spread 1e-7; then five cases with a tiny-spread group of K >= 2 (in 27 beside a
# degenerate group, in 35 alone) at 1e-30 and at 1e-45. The tiny group's advantages (below 1e-23)
# are far under the tolerances: those reruns test which rows are kept (skipped, kl, entropy, the
# loss's means), the 1e-7 cases test the values
_cases = [(c_, 1e-7) for c_ in range(24)]
_cases += [(c_, s_) for s_ in (1e-30, 1e-45) for c_ in (2, 3, 18, 27, 35)]
for _case, _spread in _cases:
    _hw = local_standins.stand_in_trainer(_case, _spread)  # the reference runs on this one, here
    _want = _ref_train_step(_hw.trainer, _hw.tasks)
    _lw = _hw.log
    _hs = stand_in_trainer(_case, _spread)  # the same stand-in in the kernel
    _got = train_step(_hs.trainer, _hs.tasks)
    _ls = _hs.log
    # contract: keys, types
    assert isinstance(_got, dict), f"case {_case} (spread {_spread:g}): return a dict"
    for _key in ("reward", "kl", "entropy", "loss"):
        assert _key in _got and type(_got[_key]) is float, (
            f"case {_case} (spread {_spread:g}): {_key!r} -> {_got}"
        )
    for _key in ("skipped", "groups"):
        assert _key in _got and type(_got[_key]) is int, (
            f"case {_case} (spread {_spread:g}): {_key!r} -> {_got}"
        )
    # contract: sample-score
    assert _ls["sample"] == 1 and _ls["score"] == 1, (
        f"case {_case} (spread {_spread:g}): {_ls['sample'], _ls['score']}"
    )
    # contract: values (every documented key, NaN where the reference has NaN)
    for _key in ("reward", "kl", "entropy", "loss", "skipped", "groups"):
        np.testing.assert_allclose(_got[_key], _want[_key], rtol=1e-4, atol=1e-6,
                                   err_msg=f"case {_case} (spread {_spread:g}): {_key!r}")  # fmt: skip
    _pc, _rc = _hs.trainer.policy.calls, _hs.trainer.reference.calls
    if not _lw["updates"]:
        # contract: skip-all
        assert not _ls["updates"] and not _pc and not _rc, (
            f"case {_case} (spread {_spread:g}): every group degenerate: no forward pass and no update"
        )
        continue
    _n_inf += 1
    # contract: one-update
    assert len(_ls["updates"]) == 1, f"case {_case} (spread {_spread:g}): call trainer.update once"
    _loss, _grads = _ls["updates"][0]
    _wloss, _wgrads = _lw["updates"][0]
    assert type(_loss) is torch.Tensor and _loss.ndim == 0 and _loss.requires_grad, _case
    np.testing.assert_allclose(float(_loss.detach()), float(_wloss.detach()), rtol=1e-4, atol=1e-6)
    for _g, _w in zip(_grads, _wgrads, strict=True):
        assert _g is not None, (
            f"case {_case} (spread {_spread:g}): the loss must reach every policy parameter"
        )
        np.testing.assert_allclose(_g.numpy(), _w.numpy(), rtol=1e-3, atol=1e-6,
                                   err_msg=f"case {_case} (spread {_spread:g}): gradient of the loss")  # fmt: skip
    # contract: forward-args (positions and mask passed; policy with grad, reference under no_grad)
    assert _pc and _rc, (
        f"case {_case} (spread {_spread:g}): score the rows with the policy and with the reference"
    )
    assert all(_c["grad"] for _c in _pc[:1]), "the policy's forward pass must carry gradient"
    assert not any(_c["grad"] for _c in _rc), "score the reference under torch.no_grad()"
    for _c in _pc + _rc:
        assert _c["attention_mask"] is not None and _c["position_ids"] is not None, (
            f"case {_case} (spread {_spread:g}): pass the sample's attention_mask and position_ids"
        )
        _act = np.asarray(_c["attention_mask"]) == 1
        _wp = np.asarray((_c["attention_mask"].long().cumsum(1) - 1).clamp(min=0))
        np.testing.assert_array_equal(np.asarray(_c["position_ids"])[_act], _wp[_act])
assert _n_inf >= 24 and _n_inf < 34, f"test set-up: only {_n_inf} informative cases"
del _ref_train_step, _ref_group_advantages, _ref_kl_estimate, _ref_completion_log_prob
del _ref_grpo_loss
