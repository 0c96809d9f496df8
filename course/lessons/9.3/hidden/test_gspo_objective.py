# contract: empty-row, float (an empty response contributes 0 but counts in G; a naive s=1 would add A=5)
_new3 = np.vstack([_new, [[0.3, 0.1, 0.2]]])
_m3 = np.vstack([_m, [[0, 0, 0]]])
_v = gspo_objective(_new3, np.zeros((3, 3)), np.array([1.0, -1.0, 5.0]), _m3)
assert type(_v) is float
assert math.isclose(_v, (1.0004 - 0.9997) / 3, rel_tol=1e-9), _v
# contract: formula, interval (the sign branches: A<0 with s above the range is not clipped)
_new = np.array([[np.log(1.5), 0.0]])
_v = gspo_objective(
    _new, np.zeros((1, 2)), np.array([-2.0]), np.array([[1, 0]]), eps_low=0.2, eps_high=0.28
)
assert math.isclose(_v, -3.0, rel_tol=1e-12)
_v = gspo_objective(
    _new, np.zeros((1, 2)), np.array([2.0]), np.array([[1, 0]]), eps_low=0.2, eps_high=0.28
)
assert math.isclose(_v, 2.56, rel_tol=1e-12)
# contract: sequence-ratio (token ratios (2, 0.5): geometric mean 1, not the arithmetic 1.25)
_new = np.array([[np.log(2.0), np.log(0.5)]])
_v = gspo_objective(
    _new, np.zeros((1, 2)), np.array([1.0]), np.ones((1, 2)), eps_low=0.2, eps_high=0.2
)
assert math.isclose(_v, 1.0, rel_tol=1e-12)
# contract: defaults, interval (the default interval is [1 - 3e-4, 1 + 4e-4]: s just inside passes
# unclipped, s beyond it is capped; A < 0 below the range is capped at 1 - 3e-4)
_lg = np.log(np.array([[1.00035], [0.99975], [1.3], [0.5]]))
_v = gspo_objective(_lg, np.zeros((4, 1)), np.array([1.0, 1.0, 2.0, -1.0]), np.ones((4, 1)))
assert math.isclose(_v, (1.00035 + 0.99975 + 2 * 1.0004 - 0.9997) / 4, rel_tol=1e-12), _v
# contract: float, empty-row (all responses empty: 0.0; A = 0: 0.0)
_v = gspo_objective(np.ones((2, 2)), np.zeros((2, 2)), np.array([3.0, -1.0]), np.zeros((2, 2)))
assert type(_v) is float and _v == 0.0, _v
_v = gspo_objective(np.ones((2, 2)), np.zeros((2, 2)), np.zeros(2), np.ones((2, 2)))
assert type(_v) is float and _v == 0.0, _v
# contract: differential (seeded random inputs against the reference: s on both sides of and far
# outside the clip interval, advantages of both signs and 0, empty rows, float32, several eps)
# @reference gspo_sequence_ratio gspo_objective
_rng = np.random.default_rng(937)
for _case in range(48):
    _G, _T = int(_rng.integers(1, 7)), int(_rng.integers(1, 9))
    _eps = [
        {},
        dict(eps_low=0.2, eps_high=0.2),
        dict(eps_low=3e-4, eps_high=4e-4),
        dict(eps_low=0.1, eps_high=0.3),
    ][_case % 4]
    _scale = [1e-4, 3e-4, 0.05, 1.0, 22.0][_case % 5]
    _old = _rng.normal(-2, 1, (_G, _T))
    _new = _old + _rng.normal(0, _scale, (_G, _T))
    _act = np.arange(_T)[None, :] < _rng.integers(0, _T + 1, _G)[:, None]
    if _case % 2:
        _act = _act[:, ::-1]  # left padding: the first token of a non-empty response may be masked
    if _case % 5 == 4:
        _act = _rng.random((_G, _T)) < 0.5  # holes
    _new[~_act] = _rng.choice([0.0, 40.0])
    _A = _rng.normal(0, 1, _G)
    _A[_rng.random(_G) < 0.2] = 0.0
    _m = [_act, _act.astype(int), _act.astype(np.float64)][_case % 3]
    _f32 = _case % 7 == 6
    if _f32:
        _new, _old, _A = _new.astype(np.float32), _old.astype(np.float32), _A.astype(np.float32)
    _want = _ref_gspo_objective(_new, _old, _A, _m, **_eps)
    _v = gspo_objective(_new.copy(), _old.copy(), _A.copy(), _m.copy(), **_eps)
    assert type(_v) is float, f"case {_case}: return a Python float, got {type(_v).__name__}"
    _tol = 1e-5 if _f32 else 1e-12
    # terms can be as large as max(s, 1 + eps_high) * |A| and cancel in the mean: scale by that
    _s = _ref_gspo_sequence_ratio(_new, _old, _m)
    _mag = max(1.0, float((np.maximum(_s, 2.0) * np.abs(_A.astype(np.float64))).max()))
    assert math.isclose(_v, _want, rel_tol=_tol, abs_tol=_tol * _mag), (
        f"case {_case}: got {_v}, expected {_want}"
    )
del _ref_gspo_sequence_ratio, _ref_gspo_objective
