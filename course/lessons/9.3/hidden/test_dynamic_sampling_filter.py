# contract: prompt-ids, reasons (string prompt ids, a +-1 reward scheme: all -1 is 'all_equal')
_R = np.array([[-1.0, -1.0, -1.0], [1.0, -1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 2.0]])
_kept, _rej = dynamic_sampling_filter(_R, prompt_ids=["q7", "q3", "q9", "q1"])
assert [int(i) for i in _kept] == [1, 3]
assert [int(d["index"]) for d in _rej] == [0, 2]
assert all(isinstance(d["prompt_id"], str) for d in _rej)  # str or a subclass such as np.str_
assert [str(d["prompt_id"]) for d in _rej] == ["q7", "q9"]  # str(): an exact str, no lying __eq__
assert [str(d["reason"]) for d in _rej] == ["all_equal", "all_correct"]
# contract: partition, kept (the stream can be rebuilt: every index exactly once)
_R = np.random.default_rng(3).integers(0, 2, size=(40, 3)).astype(float)
_kept, _rej = dynamic_sampling_filter(_R)
_all = sorted([int(i) for i in _kept] + [int(d["index"]) for d in _rej])
assert _all == list(range(40)), "kept and rejected indices must partition range(B)"
_want_kept = [b for b in range(40) if 0 < _R[b].sum() < 3]
assert [int(i) for i in _kept] == _want_kept
for d in _rej:
    _b = int(d["index"])
    assert str(d["reason"]) == ("all_correct" if _R[_b].sum() == 3 else "all_wrong")
# contract: kept, order (everything kept / everything rejected)
_kept, _rej = dynamic_sampling_filter(np.array([[0.0, 1.0], [1.0, 0.0]]))
assert [int(i) for i in _kept] == [0, 1] and len(_rej) == 0
_kept, _rej = dynamic_sampling_filter(np.array([[1.0, 1.0], [0.0, 0.0]]))
assert type(_kept) is np.ndarray and _kept.shape == (0,) and np.issubdtype(_kept.dtype, np.integer)
assert [str(d["reason"]) for d in _rej] == ["all_correct", "all_wrong"]
# contract: g1 (G == 1: a single response is always an all-equal group)
_kept, _rej = dynamic_sampling_filter(np.array([[1.0], [0.25]]))
assert _kept.shape == (0,) and [str(d["reason"]) for d in _rej] == ["all_correct", "all_equal"]
# contract: 1d-error (1-D input is rejected)
try:
    dynamic_sampling_filter(np.array([1.0, 0.0, 1.0]))
except ValueError:
    pass
else:
    raise AssertionError("a 1-D rewards array must raise ValueError")
# contract: reasons (the common value decides: exactly 1 / exactly 0, anything else 'all_equal',
# also above 1; -0.0 equals 0)
_R = np.array([[2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [-0.0, 0.0, 0.0], [0.999, 0.999, 0.999],
               [-1.0, -1.0, -1.0], [1e-300, 1e-300, 1e-300], [1 - 1e-12] * 3])  # fmt: skip
_kept, _rej = dynamic_sampling_filter(_R)
assert [str(d["reason"]) for d in _rej] == ["all_equal", "all_correct", "all_wrong", "all_equal",
                                            "all_equal", "all_equal", "all_equal"], (
    f"rows 2, 1, -0, 0.999, -1, 1e-300 and 1 - 1e-12 (not exactly 1: all_equal), got "
    f"{[d['reason'] for d in _rej]}")  # fmt: skip
# contract: exact (exactly equal: a tiny but nonzero spread is informative and kept)
_R = np.array(
    [[0.3, 0.3, 0.3 + 1e-12], [1.0, 1.0 - 1e-15, 1.0], [0.5, 0.5, 0.5], [0.0, 1e-300, 0.0]]
)
_kept, _rej = dynamic_sampling_filter(_R)
assert [int(i) for i in _kept] == [0, 1, 3], (
    f"rows whose rewards differ by 1e-12, 1e-15 or 1e-300 are NOT all equal, got kept = {list(_kept)}"
)
assert [int(d["index"]) for d in _rej] == [2] and str(_rej[0]["reason"]) == "all_equal"
# contract: types (index is an int, the default prompt_id is the row index as an int, kept is an
# integer array: not strings or floats that only int() turns back)
_kept, _rej = dynamic_sampling_filter(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
for _d in _rej:
    for _key in ("index", "prompt_id"):
        _x = _d[_key]
        assert isinstance(_x, (int, np.integer)) and not isinstance(_x, (bool, np.bool_)), (
            f"{_key!r} must be an int or NumPy integer, got {type(_x).__name__} {_x!r}"
        )
    assert _d["index"] == _d["prompt_id"]
assert np.issubdtype(np.asarray(_kept).dtype, np.integer) and list(_kept) == [0]
# contract: prompt-ids (ids of any type are passed through as given, also for many rows)
_B = 300
_R = np.zeros((_B, 2))
_R[::3, 0] = 1.0  # rows 0, 3, 6, ... informative
_ids = [f"p{b}" for b in range(_B)]
_kept, _rej = dynamic_sampling_filter(_R, prompt_ids=_ids)
assert [int(i) for i in _kept] == list(range(0, _B, 3))
assert [str(d["prompt_id"]) for d in _rej] == [_ids[b] for b in range(_B) if b % 3], (
    "prompt_id = prompt_ids[b]"
)
_kept, _rej = dynamic_sampling_filter(np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]),
                                      prompt_ids=np.array([70, 71, 72]))  # fmt: skip
assert [int(d["prompt_id"]) for d in _rej] == [70, 72]
# contract: no-modify (the rewards array is left as it was)
_R = np.array([[1.0, 1.0], [0.0, 1.0]])
dynamic_sampling_filter(_R, prompt_ids=["a", "b"])
np.testing.assert_array_equal(_R, [[1.0, 1.0], [0.0, 1.0]])
# contract: differential (seeded random batches against the reference: binary, partial-credit and
# +-1 rewards, tiny spreads, G and B from 1, int and float dtypes, with and without prompt_ids)
# @reference dynamic_sampling_filter
_rng = np.random.default_rng(935)
for _case in range(40):
    _B, _G = int(_rng.integers(1, 12)), int(_rng.integers(1, 6))
    _kind = _case % 4
    if _kind == 0:
        _R = _rng.integers(0, 2, (_B, _G))  # integer 0/1
    elif _kind == 1:
        _R = _rng.choice([0.0, 0.5, 1.0], (_B, _G), p=[0.45, 0.1, 0.45])
    elif _kind == 2:
        _R = _rng.choice([-1.0, 1.0], (_B, _G))
    else:
        _R = np.repeat(_rng.choice([0.0, 1.0, 0.3], (_B, 1)), _G, axis=1)
        _R[_rng.random(_B) < 0.4, -1] += 1e-12  # tiny but nonzero spread
    _ids = None if _case % 2 else [f"q{int(_rng.integers(1000))}-{b}" for b in range(_B)]
    _wk, _wr = _ref_dynamic_sampling_filter(_R, _ids)
    _k, _r = dynamic_sampling_filter(_R.copy(), None if _ids is None else list(_ids))
    assert type(_k) is np.ndarray and np.issubdtype(_k.dtype, np.integer), f"case {_case}"
    assert [int(i) for i in _k] == [int(i) for i in _wk], (
        f"case {_case}: kept {list(_k)}, expected {list(_wk)}"
    )
    assert isinstance(_r, list) and len(_r) == len(_wr), (
        f"case {_case}: {len(_r)} rejections, expected {len(_wr)}"
    )
    for _d, _w in zip(_r, _wr):
        assert isinstance(_d["index"], (int, np.integer)) and int(_d["index"]) == _w["index"], (
            f"case {_case}"
        )
        assert str(_d["reason"]) == _w["reason"], (
            f"case {_case}: row {_w['index']}: {_d['reason']!r}"
        )
        if _ids is None:
            assert (
                isinstance(_d["prompt_id"], (int, np.integer))
                and int(_d["prompt_id"]) == _w["prompt_id"]
            )
        else:
            assert isinstance(_d["prompt_id"], str) and str(_d["prompt_id"]) == _w["prompt_id"], (
                f"case {_case}"
            )
del _ref_dynamic_sampling_filter
