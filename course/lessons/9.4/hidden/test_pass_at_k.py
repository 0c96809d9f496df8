_close, _same = np.testing.assert_allclose, np.testing.assert_array_equal
from fractions import Fraction as _F

# contract: product-form
# large n: binomials would overflow a float; 1 - C(1999,1000)/C(2000,1000) = 1 - 1000/2000
_h = pass_at_k(2000, 1, 1000)
assert type(_h) is float and math.isclose(_h, 0.5, rel_tol=1e-9), (
    f"n=2000, c=1, k=1000 must be 0.5, got {_h}: use the product form, not float binomials"
)
# contract: formula, no-correct
# exact rational reference (absolute tolerance where the answer is 0: a correct 1e-16 passes)
for _n, _c, _k in [(16, 3, 4), (16, 0, 4), (16, 13, 4), (16, 12, 4), (1000, 3, 500), (7, 7, 7),
                   (10, 6, 4), (9, 1, 8), (1, 0, 1), (1, 1, 1), (3000, 0, 1500)]:  # fmt: skip
    _ref = 1 - _F(math.comb(_n - _c, _k), math.comb(_n, _k))
    _h = pass_at_k(_n, _c, _k)
    assert type(_h) is float
    assert math.isclose(_h, float(_ref), rel_tol=1e-9, abs_tol=1e-12), (_n, _c, _k, _h)
assert math.isclose(pass_at_k(16, 0, 4), 0.0, abs_tol=1e-12), "c = 0: no subset holds a success"
# contract: saturated
# exactly 1.0 where n - c < k; n - c == k is NOT saturated (one k-subset holds no success)
assert pass_at_k(10, 7, 4) == 1.0 and pass_at_k(4, 4, 1) == 1.0 and pass_at_k(6, 3, 4) == 1.0
_h = pass_at_k(10, 6, 4)
assert _h < 1.0 and math.isclose(_h, 1 - 1 / 210, rel_tol=1e-12), (
    f"n=10, c=6, k=4: n - c == k leaves exactly one all-wrong 4-subset of 210: 1 - 1/210, got {_h}"
)
_h = pass_at_k(np.array([10, 10, 10, 10]), np.array([5, 6, 7, 10]), 4)
assert float(_h[2]) == 1.0 and float(_h[3]) == 1.0, _h
_close(np.array(_h, dtype=np.float64)[:2], [1 - 5 / 210, 1 - 1 / 210], rtol=1e-12)
# contract: return-type, broadcast
# broadcasting a scalar n against an array c, 2-D shape kept
_h = pass_at_k(8, np.array([[0, 2], [5, 8]]), 4)
assert type(_h) is np.ndarray and _h.shape == (2, 2) and _h.dtype == np.float64
_exp = [[1 - _F(math.comb(8 - _c, 4), math.comb(8, 4)) for _c in _r] for _r in [[0, 2], [5, 8]]]
_close(np.array(_h, dtype=np.float64), np.array(_exp, dtype=np.float64), rtol=1e-12, atol=1e-12)
# an array n against a scalar c; (N, 1) against (M,); int32 inputs still give float64
_h = pass_at_k(np.array([5, 10]), 2, 2)
assert type(_h) is np.ndarray and _h.shape == (2,) and _h.dtype == np.float64, _h
_close(_h, [0.7, 1 - 28 / 45], rtol=1e-12)
_h = pass_at_k(np.array([[6], [9]], dtype=np.int32), np.array([0, 1, 3], dtype=np.int32), 3)
assert type(_h) is np.ndarray and _h.shape == (2, 3) and _h.dtype == np.float64, _h
_h = pass_at_k(np.array([5]), np.array([2]), 2)
assert type(_h) is np.ndarray and _h.shape == (1,), "a (1,) array is an array, not a scalar"
# numpy integer scalars are scalars; k may be a numpy integer
_h = pass_at_k(np.int64(5), np.int32(2), np.int64(2))
assert type(_h) is float and math.isclose(_h, 0.7, rel_tol=1e-12), _h
# 0-d arrays are scalars too (np.ndim == 0), alone or with a scalar
_h = pass_at_k(np.array(5), np.array(2), 2)
assert type(_h) is float and math.isclose(_h, 0.7, rel_tol=1e-12), (
    f"0-d array n and c must give a Python float, got {type(_h).__name__}"
)
assert type(pass_at_k(np.array(5), 2, 2)) is float, "a 0-d n with a scalar c is scalar input"
# contract: array-like
# lists are accepted and give an array
_h = pass_at_k([3, 3], [1, 2], 3)
assert type(_h) is np.ndarray
_close(np.array(_h, dtype=np.float64), [1.0, 1.0])
# contract: whole-floats
# a float holding a whole number counts as an integer
_h = pass_at_k(5.0, 2.0, 2.0)
assert type(_h) is float and math.isclose(_h, 0.7, rel_tol=1e-12), _h
_h = pass_at_k(np.array([5.0, 10.0]), np.array([2.0, 3.0]), 2)
assert type(_h) is np.ndarray
_close(np.array(_h, dtype=np.float64), [0.7, 24 / 45], rtol=1e-12)
# contract: int-errors
# non-integer n, c or k: 2.5-like floats, nan, inf, strings, a k that is not one number
for _args in [(5.5, 2, 2), (5, 1.3, 2), (5, 1.5, 2), (5, 1.7, 2), (np.array([5.0, 6.2]), 1, 2),
              (5, np.array([1.0, 2.7]), 2), (5, 2, 2.5), (5, 2, 1.2), (np.nan, 1, 1), (5, np.nan, 1),
              (np.inf, 1, 1), (5, 2, np.inf), (5, 2, np.nan), ("5", 2, 2), (5, "2", 2), (5, 2, "2"),
              (5, 2, [2]), (5, 2, np.array([2])), (5, 2, np.array([2, 3]))]:  # fmt: skip
    try:
        with np.errstate(all="ignore"):
            pass_at_k(*_args)
    except ValueError:
        pass
    else:
        raise AssertionError(f"pass_at_k{_args} must raise ValueError (non-integer n, c or k)")
# contract: range-errors
# invalid arguments raise, also when only one entry of an array is out of range
for _args in [(3, 1, 4), (5, 6, 1), (5, -1, 1), (5, 1, 0), (5, 1, -2), (np.array([5, 3]), 1, 4),
              (np.array([5, 5]), np.array([1, 6]), 2), (4, np.array([0, -1]), 1), (0, 0, 1)]:  # fmt: skip
    try:
        with np.errstate(all="ignore"):
            pass_at_k(*_args)
    except ValueError:
        pass
    else:
        raise AssertionError(f"pass_at_k{_args} must raise ValueError")
# contract: no-modify
_hn, _hc = np.array([6, 9, 12]), np.array([0, 4, 12])
pass_at_k(_hn, _hc, 3)
_same(_hn, [6, 9, 12])
_same(_hc, [0, 4, 12])
# contract: differential
# seeded random inputs against the course's function: shapes from scalars to 2-D with broadcasting,
# n from 1 to 3000, every c from 0 to n (n - c < k, == k and > k), k from 1 to min(n).
# Tolerance: rel 1e-9, abs 1e-12 (the answer can be exactly 0)
# @reference pass_at_k
_rng = np.random.default_rng(944)
for _case in range(60):
    _shape = [(), (1,), (int(_rng.integers(2, 6)),), (2, 3)][_case % 4]
    _big = _case % 5 == 4
    _n = _rng.integers(1, 3000 if _big else 40, size=_shape)
    _k = int(_rng.integers(1, int(np.min(_n)) + 1))
    _c = _n - _rng.integers(0, _n + 1)
    _c = np.where(_rng.random(_shape) < 0.3, np.clip(_n - _k, 0, None), _c)  # n - c == k often
    if _shape == ():
        _n, _c = int(_n), int(_c)
    elif _case % 3 == 0:
        _n = int(np.max(_n))  # a scalar n broadcast against the array c
        _c = np.minimum(_c, _n)
    _want = _ref_pass_at_k(_n, _c, _k)
    _got = pass_at_k(_n, _c, _k)
    if _shape == ():
        assert type(_got) is float, f"case {_case}: scalars must give a float"
    else:
        assert type(_got) is np.ndarray and _got.dtype == np.float64, f"case {_case}: {_got!r}"
        assert _got.shape == np.shape(_want), f"case {_case}: shape {_got.shape}"
    _close(np.array(_got, dtype=np.float64), _want, rtol=1e-9, atol=1e-12,
           err_msg=f"case {_case}: n={_n}, c={_c}, k={_k}")  # fmt: skip
del _ref_pass_at_k
