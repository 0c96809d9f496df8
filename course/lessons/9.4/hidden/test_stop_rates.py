_close, _same = np.testing.assert_allclose, np.testing.assert_array_equal
_KEYS = {"eos", "truncation", "parse_failure"}
# contract: no-eos, types
# no EOS at all: parse_failure is undefined (nan), not 0 or 1
_h = stop_rates(["length", "length"], [False, False])
assert _h["eos"] == 0.0 and _h["truncation"] == 1.0
assert set(_h) == _KEYS and all(type(_v) is float for _v in _h.values()), _h
assert type(_h["parse_failure"]) is float and math.isnan(_h["parse_failure"])
# every response at EOS: truncation is 0.0, the values Python floats
_h = stop_rates(["eos", "eos", "eos"], np.array([True, True, False]))
assert set(_h) == _KEYS and all(type(_v) is float for _v in _h.values()), _h
assert _h["eos"] == 1.0 and _h["truncation"] == 0.0 and math.isclose(_h["parse_failure"], 1 / 3)
# contract: empty
# empty batch
_h = stop_rates([], np.array([], dtype=bool))
assert all(type(_v) is float and math.isnan(_v) for _v in _h.values()) and set(_h) == _KEYS
# contract: ignored-flags, eos-rate, truncation-rate, parse-failure
# the parse flag of a truncated response is ignored even when True
_h = stop_rates(["length", "eos", "eos", "eos", "eos"], [True, False, True, True, True])
assert math.isclose(_h["parse_failure"], 0.25) and math.isclose(_h["truncation"], 0.2)
assert math.isclose(_h["eos"], 0.8)
# contract: flag-dtypes
# integer 0/1 parse flags and a tuple of reasons
_h = stop_rates(("eos", "eos", "eos", "length", "length", "eos"), np.array([0, 1, 1, 0, 1, 0]))
assert math.isclose(_h["eos"], 4 / 6) and math.isclose(_h["parse_failure"], 0.5)
# contract: runtime-strings
# reasons read at run time (new str objects, numpy strings): compared by value, not identity
_reasons = [_s.lower() for _s in ["EOS", "LENGTH", "EOS", "EOS"]]
_h = stop_rates(_reasons, [False, False, True, True])
assert math.isclose(_h["eos"], 0.75) and math.isclose(_h["parse_failure"], 1 / 3), _h
_h = stop_rates(np.array(["eos", "length", "length", "eos"]), np.array([True, True, True, False]))
assert math.isclose(_h["eos"], 0.5) and math.isclose(_h["parse_failure"], 0.5), _h
_h = stop_rates(json.loads('["eos", "eos", "length"]'), [True, False, False])
assert math.isclose(_h["eos"], 2 / 3) and math.isclose(_h["parse_failure"], 0.5), _h
# contract: no-modify
_hr, _hok = ["length", "eos", "length"], np.array([False, True, True])
stop_rates(_hr, _hok)
assert _hr == ["length", "eos", "length"]
_same(_hok, [False, True, True])
# contract: reason-errors
# unknown stop reason raises (also a case variant and None)
for _bad in (["eos", "stop"], ["EOS", "eos"], ["eos", None], ["length", ""]):
    try:
        stop_rates(_bad, [True, True])
    except ValueError:
        pass
    else:
        raise AssertionError(f"an unknown stop reason in {_bad} must raise ValueError")
# contract: length-errors
# len(parse_ok) != N raises, in both directions (also a length 1 that would broadcast)
for _r, _ok in [(["eos", "eos", "length"], [True]), (["eos"], [True, False, True]),
                (["eos", "length"], []), ([], [True]), (["eos", "eos"], [False, True, True])]:  # fmt: skip
    try:
        stop_rates(_r, np.array(_ok, dtype=bool))
    except ValueError:
        pass
    else:
        raise AssertionError(
            f"{len(_r)} stop reasons with {len(_ok)} parse flags must raise ValueError"
        )
# contract: differential
# seeded random batches against the course's function: N from 0 to 600 (batches larger than 256),
# reasons as built-at-run-time strings, a list, a tuple or a numpy array, flags as bools, 0/1 ints
# or a list. Tolerance: rel 1e-12, abs 1e-15 per key (a rate can be 0)
# @reference stop_rates
_rng = np.random.default_rng(9405)
for _case in range(40):
    _N = int(_rng.choice([0, 1, 2, 5, 17, 100, 257, 300, 600]))
    _pe = float(_rng.choice([0.0, 0.3, 0.9, 1.0]))
    _r = ["".join(["eo", "s"]) if _x else "".join(["len", "gth"]) for _x in _rng.random(_N) < _pe]
    _ok = _rng.random(_N) < 0.6
    _r_in = [_r, tuple(_r), np.array(_r, dtype=str)][_case % 3]
    _ok_in = [_ok, _ok.astype(np.int64), _ok.tolist()][_case % 3 if _N else 0]
    _want = _ref_stop_rates(list(_r), _ok.copy())
    _got = stop_rates(_r_in, _ok_in)
    assert isinstance(_got, dict) and set(_got) == _KEYS, f"case {_case}: keys {_got!r}"
    for _key in sorted(_KEYS):
        assert type(_got[_key]) is float, f"case {_case}: {_key} must be a Python float"
        if math.isnan(_want[_key]):
            assert math.isnan(_got[_key]), f"case {_case} (N = {_N}): {_key} must be nan"
        else:
            assert math.isclose(_got[_key], _want[_key], rel_tol=1e-12, abs_tol=1e-15), (
                f"case {_case} (N = {_N}): {_key} expected {_want[_key]}, got {_got[_key]}"
            )
del _ref_stop_rates
