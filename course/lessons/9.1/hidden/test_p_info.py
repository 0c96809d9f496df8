# contract: hand-values, scalar-float
# hand-worked values: 1 - 1/256 - 81/256 = 174/256; 1 - 2/256; 1 - 1e-8 - 0.9**8
_h = p_info(0.25, 4)
assert type(_h) is float and math.isclose(_h, 174 / 256, rel_tol=1e-12), (
    f"P_info(0.25, 4) = 174/256, got {_h}"
)
assert math.isclose(p_info(0.5, 8), 0.9921875, rel_tol=1e-12), "P_info(0.5, 8) = 1 - 2/256"
assert math.isclose(p_info(0.75, 4), 174 / 256, rel_tol=1e-12), "P_info is symmetric in p and 1-p"
# contract: input-kinds, scalar-float
assert math.isclose(p_info(np.float64(0.1), np.int64(8)), 0.56953278, rel_tol=1e-9), "NumPy scalars"
assert type(p_info(np.float64(0.1), 8)) is float, "a NumPy scalar p must also give a Python float"
assert type(p_info(np.array(0.1), 8)) is float, "a 0-d array p must give a Python float"
# contract: exact-zeros
assert p_info(0.0, 16) == 0.0 and p_info(1.0, 16) == 0.0, "p = 0 and p = 1 must give exactly 0.0"
# G = 1 is zero for every p, exactly
_g1 = p_info(np.linspace(0, 1, 11), 1)
assert type(_g1) is np.ndarray and np.array(_g1, dtype=np.float64).shape == (11,)
assert np.all(np.array(_g1, dtype=np.float64) == 0.0), "G = 1: one draw cannot disagree with itself"
# contract: new-array, input-kinds (shape and dtype preserved; list input counts as an array)
_m = p_info(np.array([[0.1, 0.5, 0.9], [0.0, 0.25, 1.0]]), 8)
assert type(_m) is np.ndarray and _m.dtype == np.float64 and _m.shape == (2, 3), (
    "shape (2, 3) float64"
)
_ref = [[0.56953278, 0.9921875, 0.56953278], [0.0, 1 - 0.25**8 - 0.75**8, 0.0]]
np.testing.assert_allclose(np.array(_m, dtype=np.float64), _ref, rtol=1e-9, atol=1e-15)
_l = p_info([0.5, 0.5], 2)
assert type(_l) is np.ndarray and _l.shape == (2,), "a list of probabilities is array input"
# contract: new-array (one element is still an array of p's shape: only 0-d p gives a float)
_o = p_info(np.array([0.5]), 2)
assert type(_o) is np.ndarray and _o.shape == (1,), (
    f"p of shape (1,) gives an array of shape (1,), got {type(_o).__name__} {np.shape(_o)}"
)
_o = p_info([[0.25]], 4)
assert type(_o) is np.ndarray and _o.shape == (1, 1), "p of shape (1, 1) keeps its shape"
# contract: accuracy
# numerical care: 1 - (1-p)^G - p^G = G p - ... for tiny p; 1 - (1 - 1e-12)**8 has ~1e-4 rel. error
assert math.isclose(p_info(1e-12, 8), 8e-12, rel_tol=1e-9), (
    "tiny p: use log1p/expm1 (expected 8e-12)"
)
_q = 2.0**-40  # p = 1 - q is exact in float64; P = 4q - 6q^2 + 4q^3 - q^4 - q^4
assert math.isclose(p_info(1.0 - _q, 4), 4 * _q - 6 * _q**2, rel_tol=1e-9), (
    "p close to 1: use symmetry"
)
assert p_info(0.3, 200) >= 0.0 and p_info(0.3, 200) <= 1.0
# contract: errors (G not an integer >= 1, bool G, some p outside [0, 1] or NaN, in any shape)
for _bad_p, _bad_G in [(0.5, 0), (0.5, -3), (0.5, 2.5), (1.5, 4), (-0.1, 4), (float("nan"), 4),
                       (0.5, True), (0.5, np.int64(0)), (np.array([0.2, np.nan]), 4),
                       (np.array([[0.5], [1.0000001]]), 3), ([0.1, -1e-300], 2),
                       (0.5, 4.0), (0.5, np.float64(3.0))]:  # fmt: skip
    try:
        p_info(_bad_p, _bad_G)
    except ValueError:
        pass
    else:
        raise AssertionError(f"p_info({_bad_p!r}, {_bad_G!r}) must raise ValueError")
# contract: input-kinds (list of lists, NumPy integer G, an empty array keeps its shape)
_o = p_info([[0.25], [0.75]], np.int32(4))
assert type(_o) is np.ndarray and _o.dtype == np.float64 and _o.shape == (2, 1)
np.testing.assert_allclose(_o, [[174 / 256], [174 / 256]], rtol=1e-12)
for _shape in [(0,), (2, 0)]:
    _o = p_info(np.zeros(_shape), 3)
    assert type(_o) is np.ndarray and _o.dtype == np.float64 and _o.shape == _shape, (
        f"an empty p of shape {_shape} gives an empty float64 array of that shape"
    )
# contract: new-array (float32 input gives float64; the input is never written, also for G == 1)
_p32 = np.array([0.1, 0.5, 0.9, 1e-6], dtype=np.float32)
_o = p_info(_p32, 8)
assert type(_o) is np.ndarray and _o.dtype == np.float64, "float32 p must give a float64 array"
_x64 = _p32.astype(np.float64)
_want = 1 - _x64**8 - (1 - _x64) ** 8
_want[3] = -math.expm1(8 * math.log1p(-_x64[3])) - _x64[3] ** 8
np.testing.assert_allclose(_o, _want, rtol=1e-9, err_msg="compute in float64")
for _G in (1, 4):
    _x = np.array([0.2, 0.7, 0.0, 1.0])
    _o = p_info(_x, _G)
    assert np.array_equal(_x, [0.2, 0.7, 0.0, 1.0]), f"G = {_G}: p was modified in place"
    assert not np.shares_memory(_o, _x), f"G = {_G}: return a new array, not p itself or a view"
_rng = np.random.default_rng(91)
# contract: exact-zeros (G == 1 gives exactly 0.0 for every p, not a rounding residue such as 1e-17)
_x = _rng.random(2000)
assert np.all(np.array(p_info(_x, 1), dtype=np.float64) == 0.0), "G = 1 must give exactly 0.0"
assert all(p_info(float(_v), 1) == 0.0 for _v in _x[:200]), "G = 1, scalar p: exactly 0.0"
assert np.all(np.array(p_info(np.array([0.0, 1.0] * 3), 7), dtype=np.float64) == 0.0)
# contract: range
_o = np.array(p_info(_rng.random(3000) ** 3, 300), dtype=np.float64)
assert np.all((_o >= 0.0) & (_o <= 1.0)), "P_info lies in [0, 1]"
# contract: differential, accuracy (relative error about 1e-12; tested at 1e-10): tiny p, and 1 - p
# tiny but not a power of two, where p**G = (1 - q)**G rounds (no symmetry: errors up to 5e-9)
# @reference p_info
with np.errstate(all="ignore"):
    for _case in range(48):
        _G = int(_rng.choice([1, 2, 3, 4, 5, 8, 16, 64, 200]))
        _n = int(_rng.integers(1, 40))
        _kind = _case % 4
        if _kind == 0:
            _p = _rng.random(_n)
        elif _kind == 1:
            _p = 10.0 ** _rng.uniform(-15, -3, _n)
        elif _kind == 2:
            _p = 1.0 - 10.0 ** _rng.uniform(-15, -5, _n)
        else:
            _p = _rng.choice([0.0, 1.0, 0.5, 0.25, 1e-9, 1 - 3e-9, 0.999], _n)
        _want = _ref_p_info(_p, _G)
        # exact zeros are part of the contract ("exactly 0.0 where p is 0 or 1, and everywhere
        # when G == 1"): atol = 0, and every nonzero expected value is compared relatively
        _got = p_info(_p.copy(), _G)
        np.testing.assert_allclose(np.array(_got, dtype=np.float64), _want, rtol=1e-10, atol=0,
                                   err_msg=f"case {_case}, G = {_G}")  # fmt: skip
        _s = float(_p[0])
        _g = p_info(_s, _G)
        assert type(_g) is float and math.isclose(_g, _ref_p_info(_s, _G), rel_tol=1e-10), (
            f"p_info({_s!r}, {_G}) = {_g!r}, expected {_ref_p_info(_s, _G)!r}"
        )
del _ref_p_info
