import warnings as _w

with _w.catch_warnings(), np.errstate(all="ignore"):
    _w.simplefilter("ignore")  # values decide; keep stderr clean even if a solution warns
    # contract: degenerate, shape-dtype
    # degenerate groups: all 0, all 1, all 0.3 (float mean of ten 0.3 is not exactly 0.3)
    for _r in [
        np.zeros(8),
        np.ones(8),
        np.full(10, 0.3),
        np.full(13, 0.3),
        np.full(7, 0.1),
        np.array([0.7]),
    ]:
        for _eps in (1e-6, 0.0):
            _out = group_advantages(_r, eps=_eps)
            assert type(_out) is np.ndarray
            _got = np.array(_out, dtype=np.float64)
            assert _got.shape == _r.shape and np.all(_got == 0.0), (_r, _eps, _got)
    # contract: hand-values
    # one success: sqrt(G-1) and -1/sqrt(G-1), population std (hand values)
    for _G, _s in [
        (2, 1.0),
        (4, 1.7320508075688772),
        (8, 2.6457513110645907),
        (16, 3.872983346207417),
    ]:
        _r = np.zeros(_G)
        _r[3 % _G] = 1.0
        _got = np.array(group_advantages(_r, eps=0.0), dtype=np.float64)
        _want = np.full(_G, -1.0 / _s)
        _want[3 % _G] = _s
        np.testing.assert_allclose(_got, _want, rtol=1e-9)
    # default eps enters as std + 1e-6: G=8 one success, std = sqrt(7)/8
    _got = np.array(group_advantages(np.array([0, 0, 0, 0, 0, 0, 0, 1.0])), dtype=np.float64)
    np.testing.assert_allclose(_got[-1], (7 / 8) / (math.sqrt(7) / 8 + 1e-6), rtol=1e-12)
    # wrong ddof must fail: ddof=1 would give +-0.7071 here and 2.4749 for G=8
    np.testing.assert_allclose(
        np.array(group_advantages([0.0, 1.0], eps=0.0), dtype=np.float64), [-1.0, 1.0], rtol=1e-12
    )
    assert (
        abs(
            float(np.array(group_advantages(np.eye(8)[0], eps=0.0), dtype=np.float64)[0])
            - 2.6457513110645907
        )
        < 1e-9
    )
    # contract: eps
    # eps placement: outside the sqrt. [0, 1] with eps=0.5: 0.5 / (0.5 + 0.5) = 0.5 (inside-sqrt would give 0.577)
    np.testing.assert_allclose(
        np.array(group_advantages(np.array([0.0, 1.0]), eps=0.5), dtype=np.float64),
        [-0.5, 0.5],
        rtol=1e-12,
    )
    # k successes: G=8, k=2 -> sqrt(3) and -1/sqrt(3)
    _got = np.array(group_advantages(np.array([1, 0, 0, 1, 0, 0, 0, 0]), eps=0.0), dtype=np.float64)
    np.testing.assert_allclose(
        _got,
        np.where(np.array([1, 0, 0, 1, 0, 0, 0, 0]) == 1, math.sqrt(3), -1 / math.sqrt(3)),
        rtol=1e-9,
    )
    # non-binary: [2, 4, 9]: mean 5, deviations [-3, -1, 4], population var 26/3
    _sd = math.sqrt(26 / 3)
    np.testing.assert_allclose(
        np.array(group_advantages([2, 4, 9], eps=0.0), dtype=np.float64),
        [-3 / _sd, -1 / _sd, 4 / _sd],
        rtol=1e-12,
    )
    # contract: per-group, degenerate
    # (B, G) mixing degenerate and informative rows
    _R = np.array([[1.0, 0, 0, 0], [0.5, 0.5, 0.5, 0.5], [1.0, 1, 0, 0], [0.3, 0.3, 0.3, 0.3]])
    _out = group_advantages(_R, eps=0.0)
    assert type(_out) is np.ndarray
    _got = np.array(_out, dtype=np.float64)
    _want = np.array(
        [
            [math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3)],
            [0, 0, 0, 0],
            [1, 1, -1, -1],
            [0, 0, 0, 0],
        ]
    )
    assert _got.shape == (4, 4)
    np.testing.assert_allclose(_got, _want, rtol=1e-9, atol=0)
    assert np.all(_got[[1, 3]] == 0.0)
    np.testing.assert_allclose(_got.sum(axis=1), 0.0, atol=1e-12)  # zero-sum per group
    # contract: shape-dtype, no-modify
    # int input -> float64 output; input not modified
    _ri = np.array([1, 0, 0, 0])
    _out = group_advantages(_ri)
    assert type(_out) is np.ndarray and _out.dtype == np.float64
    assert np.array_equal(np.array(_ri), [1, 0, 0, 0])
    _rf = np.array([[3.0, 1.0]])
    group_advantages(_rf)
    assert np.array_equal(np.array(_rf, dtype=np.float64), [[3.0, 1.0]]), (
        "the input must not be modified"
    )
    # contract: shape-errors (not 1-D or 2-D, or an empty group axis)
    for _bad in [np.zeros((2, 2, 2)), np.zeros((3, 0)), np.zeros(0), np.zeros((0, 0)), np.float64(1.0),
                 np.zeros((1, 2, 3))]:  # fmt: skip
        try:
            group_advantages(_bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"shape {np.shape(_bad)} must raise ValueError")
    # contract: shape-dtype (no groups at all, B = 0, is not an error: an empty (0, G) result)
    _out = group_advantages(np.zeros((0, 4)))
    assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (0, 4), (
        "B = 0 groups of G = 4: return an empty float64 array of shape (0, 4)"
    )
    # contract: shape-dtype (float32 and nested-list input give float64, computed from the values)
    _r32 = np.array([[0.1, 0.7, 0.2], [0.3, 0.3, 0.3]], dtype=np.float32)
    _out = group_advantages(_r32, eps=0.0)
    assert type(_out) is np.ndarray and _out.dtype == np.float64, "float32 rewards: float64 output"
    _x = _r32.astype(np.float64)
    _want = (_x - _x.mean(1, keepdims=True)) / _x.std(1, keepdims=True)
    _want[1] = 0.0
    np.testing.assert_allclose(_out, _want, rtol=1e-5, atol=1e-6)
    assert np.all(_out[1] == 0.0), "a degenerate float32 group gives exact zeros too"
    _out = group_advantages([[1, 0], [0.5, 0.5]], eps=0.0)
    assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == (2, 2)
    # contract: no-modify (degenerate rows of 0.3 and informative rows, float64, left as they were)
    _keep = np.array([[0.3, 0.3, 0.3], [0.0, 1.0, 0.5], [2.0, 2.0, 2.0]])
    _in = _keep.copy()
    for _eps in (1e-6, 0.0):
        _out = group_advantages(_in, eps=_eps)
        assert np.array_equal(_in, _keep), "the rewards were modified in place"
        assert not np.shares_memory(_out, _in), "return a new array"
    # contract: tiny-spread (a spread of 1e-9 is not degenerate: only max == min is)
    _out = np.array(group_advantages(np.array([0.0, 1e-9]), eps=0.0), dtype=np.float64)
    np.testing.assert_allclose(_out, [-1.0, 1.0], rtol=1e-9)
    _out = np.array(group_advantages(np.array([[0.0, 0.0, 0.0, 1e-9]])), dtype=np.float64)
    _sd = math.sqrt(3) / 4 * 1e-9
    np.testing.assert_allclose(_out[0], np.array([-0.25, -0.25, -0.25, 0.75]) * 1e-9 / (_sd + 1e-6),
                               rtol=1e-9, atol=0)  # fmt: skip
    assert np.all(_out != 0.0), "a tiny but nonzero spread still has nonzero advantages"
    # contract: tiny-spread (however small: 1e-20 is below any threshold a tolerance would pick)
    _out = np.array(group_advantages(np.array([0.0, 1e-20]), eps=0.0), dtype=np.float64)
    np.testing.assert_allclose(_out, [-1.0, 1.0], rtol=1e-9,
                               err_msg="test max == min exactly, not a spread below a threshold")  # fmt: skip
    _out = np.array(group_advantages(np.array([[0.0, 0.0, 0.0, 1e-20]])), dtype=np.float64)
    assert np.all(_out != 0.0), "a spread of 1e-20 is not degenerate: only max == min is"
    # contract: tiny-spread (a spread whose square underflows: one reward of 1e-170 among zeros has
    # a float64 variance and std of exactly 0, yet max != min, so the group is not degenerate)
    _out = np.array(group_advantages(np.array([[0.0, 0.0, 0.0, 1e-170]])), dtype=np.float64)
    assert np.all(_out[0, :3] < 0.0) and _out[0, 3] > 0.0, (
        f"one reward of 1e-170 among zeros gave {_out}: max != min, so not degenerate, even though "
        "its float std is exactly 0 (detect degenerate groups by max == min alone)"
    )
    # contract: differential, per-group, degenerate, eps (seeded (B, G) and (G,) batches against the
    # reference: binary, continuous, degenerate and tiny-spread rows mixed, eps 0 to 0.5;
    # tolerance rtol 1e-9 and atol 1e-9 for float64 input, rtol 1e-5 and atol 1e-6 for float32)
    # @reference group_advantages
    _rng = np.random.default_rng(9201)
    for _case in range(60):
        _B, _G = int(_rng.integers(1, 7)), int(_rng.choice([1, 2, 3, 4, 5, 8, 16]))
        _R = _rng.random((_B, _G))
        for _b in range(_B):
            _kind = int(_rng.integers(0, 5))
            if _kind == 0:
                _R[_b] = (_rng.random(_G) < _rng.random()).astype(float)
            elif _kind == 1:
                _R[_b] = float(_rng.choice([0.0, 1.0, 0.3, 0.1, -2.5]))
            elif _kind == 2:
                _R[_b] = 1e-9 * (_rng.random(_G) < 0.5)
            elif _kind == 3:
                _R[_b] = _rng.normal(0, 10, _G)
        _eps = float(_rng.choice([0.0, 1e-6, 1e-4, 0.5]))
        _dt = np.float32 if _case % 4 == 3 else np.float64
        _in = (_R[0] if _case % 3 == 0 else _R).astype(_dt)
        _want = _ref_group_advantages(_in, _eps)
        _keep = _in.copy()
        _out = group_advantages(_in, eps=_eps)
        assert type(_out) is np.ndarray and _out.dtype == np.float64 and _out.shape == _in.shape, (
            f"case {_case}: return float64 of shape {_in.shape}"
        )
        assert np.array_equal(_in, _keep), f"case {_case}: the rewards were modified"
        _tol = {"rtol": 1e-9, "atol": 1e-9} if _dt is np.float64 else {"rtol": 1e-5, "atol": 1e-6}
        np.testing.assert_allclose(_out, _want, **_tol, err_msg=f"case {_case}, eps = {_eps}")
        _deg = _in.max(-1) == _in.min(-1)  # degenerate groups: exact zeros, not rounding residue
        assert np.all(_out[_deg] == 0.0), f"case {_case}: degenerate groups must give exact zeros"
    del _ref_group_advantages
