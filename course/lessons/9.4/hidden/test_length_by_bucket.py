_close, _same = np.testing.assert_allclose, np.testing.assert_array_equal
import warnings as _w

# contract: convention, outside, dtypes
# inner edges are half-open; outside lengths are dropped
_hmean, _hcount = length_by_bucket(np.array([1, 3, 4, 7, 8, 8, 12, -1]), np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 9.0, 9.0]),
                                 np.array([0, 2, 4, 8, 10]))  # fmt: skip
assert type(_hmean) is np.ndarray and _hmean.dtype == np.float64 and _hmean.shape == (4,)
assert type(_hcount) is np.ndarray and _hcount.dtype == np.int64 and _hcount.shape == (4,)
_same(np.array(_hcount, dtype=np.int64), [1, 1, 2, 2])
_close(np.array(_hmean, dtype=np.float64), [1.0, 0.0, 1.0, 0.25], rtol=1e-12, atol=1e-12)
# float32 rewards and int lengths still give float64 means and int64 counts
_hmean, _hcount = length_by_bucket(
    np.array([1, 2, 5], dtype=np.int32), np.array([0.1, 0.2, 0.3], dtype=np.float32), [0, 4, 8]
)
assert _hmean.dtype == np.float64 and _hcount.dtype == np.int64, (_hmean.dtype, _hcount.dtype)
_close(_hmean, [(np.float32(0.1) + np.float64(np.float32(0.2))) / 2, np.float32(0.3)], rtol=1e-6)
# contract: empty-bucket
# an empty batch: all nan, all zero counts, and no RuntimeWarning
with _w.catch_warnings():
    _w.simplefilter("error", RuntimeWarning)
    _hmean, _hcount = length_by_bucket(np.array([]), np.array([]), np.array([0.0, 5.0, 10.0]))
    _hmean2, _hcount2 = length_by_bucket([20, 30], [1.0, 0.0], [0, 5, 10])  # all outside
assert np.all(np.isnan(np.array(_hmean, dtype=np.float64))) and np.array(
    _hcount, dtype=np.int64
).tolist() == [0, 0]
assert _hcount.dtype == np.int64 and _hmean.shape == (2,)
assert np.all(np.isnan(_hmean2)) and _hcount2.tolist() == [0, 0]
# contract: last-closed, array-like
# float lengths and a single bucket; the right edge is included
_hmean, _hcount = length_by_bucket([0.0, 5.5, 10.0], [0.0, 1.0, 1.0], [0, 10])
_close(np.array(_hmean, dtype=np.float64), [2 / 3])
assert np.array(_hcount, dtype=np.int64).tolist() == [3]
# edges closer than 1 apart and fractional lengths on them
_hmean, _hcount = length_by_bucket(
    [0.0, 0.25, 0.5, 0.75, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0, 0.0, 0.0], [0.0, 0.5, 1.0]
)
_same(_hcount, [2, 4])
_close(_hmean, [0.5, 0.5], rtol=1e-12)
_hmean, _hcount = length_by_bucket([0, 1, 2, 3], [1.0, 2.0, 3.0, 4.0], [0, 1, 2, 3])
_same(_hcount, [1, 1, 2])
_close(_hmean, [1.0, 2.0, 3.5], rtol=1e-12)
# contract: no-modify
_hL, _hr, _he = np.array([5.0, 1.0, 9.0]), np.array([1.0, 0.0, 1.0]), np.array([0.0, 4.0, 8.0])
length_by_bucket(_hL, _hr, _he)
_same(_hL, [5.0, 1.0, 9.0])
_same(_hr, [1.0, 0.0, 1.0])
_same(_he, [0.0, 4.0, 8.0])
# contract: edge-errors
# bad edges raise: repeated, fewer than 2, decreasing, nan, not 1-D
for _e in ([0, 5, 5], [3], [4, 2], [0, 5, 3, 10], [0, np.nan, 5], [np.nan, 5], [], 5, [[0, 1], [2, 3]],
           [[0], [5], [10]]):  # fmt: skip
    try:
        with np.errstate(all="ignore"):
            length_by_bucket([1], [1.0], _e)
    except ValueError:
        pass
    else:
        raise AssertionError(f"edges {_e} must raise ValueError")
# contract: shape-errors
# lengths and rewards of different shapes, or not 1-D (also 0-D and same-shape 2-D)
for _ls, _rs in [((3,), (4,)), ((4,), (3,)), ((3,), (1,)), ((), ()), ((2, 2), (2, 2)), ((4,), (4, 1)),
                 ((1, 3), (1, 3))]:  # fmt: skip
    try:
        length_by_bucket(np.ones(_ls), np.ones(_rs), [0, 2])
    except ValueError:
        pass
    else:
        raise AssertionError(f"lengths {_ls} with rewards {_rs} must raise ValueError")
# contract: differential
# seeded random batches against the course's function: 0 to 50 responses, integer lengths that hit
# the edges exactly and fractional ones, lengths outside the edges, 1 to 6 buckets (some empty),
# rewards in [-1, 1] (a mean can be 0), float32 and float64. Tolerance: counts exact; means rel
# 1e-12, abs 1e-12 (float64) or rel 1e-6, abs 1e-7 (float32 rewards); nan in the same buckets
# @reference length_by_bucket
_rng = np.random.default_rng(9406)
for _case in range(60):
    _B = int(_rng.integers(1, 7))
    _e = np.cumsum(_rng.choice([1, 2, 5, 16], size=_B + 1)).astype(np.float64) - 3
    if _case % 4 == 1:
        _e = _e / 8  # fractional edges closer than 1
    _N = int(_rng.integers(0, 51))
    _L = _rng.integers(int(_e[0]) - 3, int(_e[-1]) + 4, size=_N).astype(np.float64)
    if _case % 3 == 0:
        _L = _L + _rng.choice([0.0, 0.5, 0.125], size=_N)
    _on = _rng.random(_N) < 0.3
    _L[_on] = _rng.choice(_e, size=int(_on.sum()))  # exactly on an edge
    _r = _rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 0.1, 0.7], size=_N)
    _f32 = _case % 5 == 2
    if _f32:
        _r = _r.astype(np.float32)
    _Lin = [_L, _L.tolist(), np.round(_L).astype(np.int64)][_case % 3]
    with _w.catch_warnings():
        _w.simplefilter("ignore")
        _wm, _wc = _ref_length_by_bucket(np.array(_Lin), _r.copy(), _e.copy())
    with _w.catch_warnings():
        _w.simplefilter("error", RuntimeWarning)
        _gm, _gc = length_by_bucket(_Lin, _r.copy(), _e.copy())
    assert type(_gm) is np.ndarray and _gm.dtype == np.float64 and _gm.shape == (_B,), (
        f"case {_case}"
    )
    assert type(_gc) is np.ndarray and _gc.dtype == np.int64 and _gc.shape == (_B,), f"case {_case}"
    _same(_gc, _wc, err_msg=f"case {_case}: counts, edges {_e}")
    _rt, _at = (1e-6, 1e-7) if _f32 else (1e-12, 1e-12)
    _close(_gm, _wm, rtol=_rt, atol=_at, equal_nan=True, err_msg=f"case {_case}: means, edges {_e}")
del _ref_length_by_bucket
