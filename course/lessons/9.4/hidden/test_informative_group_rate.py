_close, _same = np.testing.assert_allclose, np.testing.assert_array_equal
# contract: exact
# exact comparison: 0.1 + 0.2 != 0.3 in floating point counts as informative; so does a spread of
# one ulp or 1e-300 (no tolerance of any size)
_h = informative_group_rate(np.array([0.1 + 0.2, 0.3, 1.0, 1.0]), np.array([0, 0, 1, 1]))
assert type(_h) is float and math.isclose(_h, 0.5), (
    f"exact-equality convention: expected 0.5, got {_h}"
)
_h = informative_group_rate(np.array([0.5, 0.5 + 1e-13, 2.0, 2.0, 1e-300, 0.0, 7.0, np.nextafter(7.0, 8.0)]),
                            np.array([0, 0, 1, 1, 2, 2, 3, 3]))  # fmt: skip
assert math.isclose(_h, 0.75), f"spreads 1e-13, 1e-300 and one ulp are informative: 3/4, got {_h}"
# contract: singleton
# a singleton group is uninformative; unequal group sizes are fine; a batch of one response -> 0.0
_h = informative_group_rate(np.array([1.0, 0.0, 1.0, 0.5]), np.array([0, 1, 1, 1]))
assert math.isclose(_h, 0.5)
_h = informative_group_rate(np.array([1.0]), np.array([3]))
assert type(_h) is float and _h == 0.0, f"one response, one group of one: 0.0 (not nan), got {_h!r}"
assert informative_group_rate(np.array([0.0, 1.0, 2.0]), np.array([4, 5, 6])) == 0.0
# partial credit: any two different values make a group informative
_h = informative_group_rate(np.array([0.2, 0.2, 0.2, 0.7, 0.2, 0.2]), np.array([5, 5, 5, 9, 9, 9]))
assert math.isclose(_h, 0.5)
# contract: empty
# empty batch -> nan
_h = informative_group_rate(np.array([]), np.array([], dtype=int))
assert type(_h) is float and math.isnan(_h), f"an empty batch must give nan, got {_h!r}"
_h = informative_group_rate([], [])
assert type(_h) is float and math.isnan(_h), f"an empty batch must give nan, got {_h!r}"
# contract: array-like
# lists and integer rewards
assert math.isclose(informative_group_rate([1, 1, 0, 1], [2, 2, 4, 4]), 0.5)
# all groups degenerate -> 0.0, all informative -> 1.0
assert informative_group_rate(np.zeros(6), np.repeat([0, 1, 2], 2)) == 0.0
assert informative_group_rate(np.tile([0.0, 1.0], 3), np.repeat([0, 1, 2], 2)) == 1.0
# contract: ids
# ids unsorted, negative, huge and sparse, rows of a group scattered
_h = informative_group_rate(np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]),
                            np.array([-3, 10**12, 7, -3, 7, 10**12, 10**12]))  # fmt: skip
assert math.isclose(_h, 2 / 3), f"groups -3 (1, 1), 7 (1, 0), 10**12 (0, 0, 1): 2/3, got {_h}"
# contract: no-modify
_hr, _hg = np.array([0.0, 1.0, 1.0, 1.0]), np.array([2, 1, 2, 1])
informative_group_rate(_hr, _hg)
_same(_hr, [0.0, 1.0, 1.0, 1.0])
_same(_hg, [2, 1, 2, 1])
# contract: shape-errors
# rewards and group of different shapes, or not 1-D (also 0-D and same-shape 2-D)
for _rs, _gs in [((3,), (4,)), ((4,), (3,)), ((4,), (1,)), ((1,), (4,)), ((2, 2), (2, 2)), ((4, 1), (4,)),
                 ((4,), (4, 1)), ((), ()), ((0,), (1,)), ((2, 3), (3, 2))]:  # fmt: skip
    try:
        informative_group_rate(np.zeros(_rs), np.zeros(_gs, dtype=int))
    except ValueError:
        pass
    else:
        raise AssertionError(f"rewards {_rs} with group {_gs} must raise ValueError")
# contract: differential
# seeded random batches against the course's function: 1 to 60 responses, 1 to 15 groups of unequal
# sizes (singletons included), unsorted negative and huge ids, binary, graded and tiny-spread rewards.
# Tolerance: rel 1e-12, abs 1e-15 (the answer can be 0)
# @reference informative_group_rate
_rng = np.random.default_rng(9404)
for _case in range(60):
    _N = int(_rng.integers(1, 61))
    _ids = _rng.choice(np.array([-7, -1, 0, 1, 2, 3, 5, 8, 13, 99, 10**6, 10**12, -(10**9), 4, 6]),
                       size=int(_rng.integers(1, 16)), replace=False)  # fmt: skip
    _g = _rng.choice(_ids, size=_N)
    _kind = _case % 4
    if _kind == 0:
        _r = _rng.integers(0, 2, size=_N).astype(np.float64)
    elif _kind == 1:
        _r = np.round(_rng.random(_N) * 4) / 4
    elif _kind == 2:
        _r = 0.5 + (_rng.random(_N) < 0.2) * 1e-12  # tiny but nonzero spreads
    else:
        _r = np.where(_rng.random(_N) < 0.5, 1.0, np.nextafter(1.0, 2.0))
    _want = _ref_informative_group_rate(_r.copy(), _g.copy())
    _got = informative_group_rate(_r.copy(), _g.copy())
    assert type(_got) is float, f"case {_case}: return a Python float, got {type(_got).__name__}"
    assert math.isclose(_got, _want, rel_tol=1e-12, abs_tol=1e-15), (
        f"case {_case}: expected {_want}, got {_got}"
    )
del _ref_informative_group_rate
