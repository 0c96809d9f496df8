# contract: formula, empty-row, padding, dtype (ratios 2 and 0.5 cancel; an empty row gives
# exactly 1; padding garbage ignored)
_new = np.array([[np.log(2.0), np.log(0.5), 40.0], [3.0, -7.0, 11.0]])
_old = np.array([[0.0, 0.0, -40.0], [0.0, 0.0, 0.0]])
_out = gspo_sequence_ratio(_new, _old, np.array([[1, 1, 0], [0, 0, 0]]))
assert type(_out) is np.ndarray and _out.shape == (2,)
np.testing.assert_allclose(np.array(_out, dtype=np.float64), [1.0, 1.0], atol=1e-12)
# contract: formula (old_logp is subtracted, not new alone; length-1 response is its token ratio)
_new = np.array([[-1.0, -2.0], [-0.5, 0.0]])
_old = np.array([[-1.5, -1.0], [-0.7, 0.0]])
_out = np.array(
    gspo_sequence_ratio(_new, _old, np.array([[1.0, 1.0], [1.0, 0.0]])), dtype=np.float64
)
np.testing.assert_allclose(_out, [np.exp((0.5 - 1.0) / 2), np.exp(0.2)], rtol=1e-12)
# contract: formula, mask-dtypes (against an explicit geometric mean on random data, bool mask)
_rng = np.random.default_rng(11)
_new, _old = _rng.normal(size=(4, 6)), _rng.normal(size=(4, 6))
_lens = [6, 2, 4, 1]
_m = np.arange(6)[None, :] < np.array(_lens)[:, None]
_want = [np.prod(np.exp(_new[i, :n] - _old[i, :n])) ** (1 / n) for i, n in enumerate(_lens)]
np.testing.assert_allclose(
    np.array(gspo_sequence_ratio(_new, _old, _m), dtype=np.float64), _want, rtol=1e-10
)
# contract: empty-row (exactly 1.0, also with large garbage in the padding)
_out = gspo_sequence_ratio(
    np.full((2, 3), 500.0), np.full((2, 3), -500.0), np.array([[0, 0, 0], [0, 0, 0]])
)
assert np.all(np.array(_out, dtype=np.float64) == 1.0), _out
# contract: dtype (float64 for float32 log-probs and int or float32 masks)
_out = gspo_sequence_ratio(np.array([[-1.0, -2.0]], dtype=np.float32), np.zeros((1, 2), dtype=np.float32),
                           np.array([[1, 1]], dtype=np.float32))  # fmt: skip
assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (1,), (
    f"return float64 (G,) for float32 input, got {getattr(_out, 'dtype', type(_out))}"
)
np.testing.assert_allclose(_out, [math.exp(-1.5)], rtol=1e-6)
# contract: formula (mean log-ratios beyond +-2 and +-20 are not clamped: s = exp(mean) exactly)
_new = np.array([[25.0, 25.0, 0.0], [-30.0, -24.0, 0.0], [3.0, 0.0, 0.0]])
_out = gspo_sequence_ratio(_new, np.zeros((3, 3)), np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0]]))
np.testing.assert_allclose(np.array(_out, dtype=np.float64), [math.exp(25), math.exp(-27), math.exp(3)],
                           rtol=1e-12)  # fmt: skip
# contract: differential (seeded random inputs against the reference: ragged masks with holes and
# empty rows, log-ratios from 1e-5 to beyond +-20, padding garbage, every mask dtype, float32)
# @reference gspo_sequence_ratio
_rng = np.random.default_rng(936)
for _case in range(48):
    _G, _T = int(_rng.integers(1, 7)), int(_rng.integers(1, 9))
    _scale = [1e-5, 0.05, 1.0, 3.0, 24.0][_case % 5]
    _old = _rng.normal(-2, 1, (_G, _T))
    _new = _old + _rng.normal(0, _scale, (_G, _T))
    _act = np.arange(_T)[None, :] < _rng.integers(0, _T + 1, _G)[:, None]
    if _case % 3 == 0:
        _act = _rng.random((_G, _T)) < 0.6
    _new[~_act] = _rng.choice([0.0, 40.0, -300.0])
    _m = [_act, _act.astype(int), _act.astype(np.float32), _act.astype(np.float64)][_case % 4]
    _f32 = _case % 7 == 6
    if _f32:
        _new, _old = _new.astype(np.float32), _old.astype(np.float32)
    _want = _ref_gspo_sequence_ratio(_new, _old, _m)
    _out = gspo_sequence_ratio(_new.copy(), _old.copy(), _m.copy())
    assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (_G,), (
        f"case {_case}"
    )
    assert np.all(_out[_act.sum(axis=1) == 0] == 1.0), (
        f"case {_case}: a row with no active token gives 1.0"
    )
    # s is positive: relative tolerance 1e-12 for float64 (any summation order), 1e-5 for float32
    np.testing.assert_allclose(
        _out, _want, rtol=1e-5 if _f32 else 1e-12, atol=0, err_msg=f"case {_case}"
    )
del _ref_gspo_sequence_ratio
