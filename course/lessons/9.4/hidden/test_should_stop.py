# @data _HELD clinic_heldout.json
# @reference should_stop
_held = [(_r["name"], load_log(_r["log"])) for _r in _HELD["runs"]]
_KEYS = (
    "reward",
    "accuracy",
    "entropy",
    "kl_ref",
    "informative_rate",
    "verifier_error_rate",
    "clip_high_reused",
    "heldout_pass@4",
    "heldout_acc",
    "train_pass@4",
)
_WHEN = ("above", "below", "drop_from_best", "rise_from_start")


def _values(log, key):
    part = log["steps"] if key in log["steps"] else log["evals"]
    return [v for v in part[key] if v == v]


# contract: differential, step-keys, eval-keys, kinds, patience, return-type
# every held-out run, keys of both parts, every kind, thresholds drawn around the run's own values,
# patience 1 to 4: the same step (an int) or None as the course's function
_rng = np.random.default_rng(9407)
for _name, _log in _held:
    for _case in range(12):
        _key = str(_rng.choice(_KEYS))
        _when = str(_rng.choice(_WHEN))
        _vals = _values(_log, _key) or [0.0]  # a key measured at no step (one epoch: no reuse)
        if _when == "drop_from_best":
            _th = float(_rng.choice([0.05, 0.1, 0.2, 0.4]))
        elif _when == "rise_from_start":
            _th = float(_rng.choice([-0.05, 0.0, 0.02, 0.1]) * (1 + abs(_vals[0])))
        else:
            _th = float(np.quantile(_vals, _rng.uniform(0.1, 0.9)))
        _rule = {"key": _key, "when": _when, "threshold": _th}
        if _rng.random() < 0.7:
            _rule["patience"] = int(_rng.integers(1, 5))
        _want, _got = _ref_should_stop(_log, _rule), should_stop(_log, _rule)
        assert (_got is None and _want is None) or (type(_got) is int and _got == _want), (
            f"{_name} {_rule}"
        )
# contract: patience
# a point where the condition fails starts the count again: alternating holds never reach patience 2
_alt = {"steps": {"step": list(range(1, 21)), "x": [0.0, 1.0] * 10}, "evals": {}}
_one = {
    "steps": {"step": list(range(1, 21)), "x": [1.0] * 20},
    "evals": {"eval_step": [0, 10, 20], "y": [1.0, 0.0, 1.0]},
}
assert (
    should_stop(
        {"steps": {"step": [1, 2, 3], "x": [1.0, 1.0, 1.0]}, "evals": {}},
        {"key": "x", "when": "above", "threshold": 0.0},
    )
    is None
)
_alt["evals"] = {"eval_step": list(range(0, 60, 10)), "y": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]}
assert should_stop(_alt, {"key": "y", "when": "below", "threshold": 0.5, "patience": 1}) == 10
assert should_stop(_alt, {"key": "y", "when": "below", "threshold": 0.5, "patience": 2}) is None
assert should_stop(_one, {"key": "y", "when": "below", "threshold": 0.5, "patience": 1}) == 10
assert (
    should_stop(_one, {"key": "x", "when": "above", "threshold": 0.5, "patience": 3}) == WINDOW + 2
)
# contract: step-keys, window
# a step key is its trailing-window mean from the first full window on; its first point is step WINDOW
_ramp = {"steps": {"step": list(range(1, 31)), "x": [float(i) for i in range(30)]}, "evals": {}}
assert (
    should_stop(_ramp, {"key": "x", "when": "above", "threshold": 1.5}) == WINDOW
)  # mean(0..4) = 2
assert should_stop(_ramp, {"key": "x", "when": "above", "threshold": 9.5}) == 13  # mean(8..12) = 10
assert should_stop(_ramp, {"key": "x", "when": "rise_from_start", "threshold": 3.0}) == WINDOW + 4
# contract: nan
# NaN meets no condition and leaves the best so far unchanged
_nan = {
    "steps": {"step": [1]},
    "evals": {"eval_step": [0, 10, 20, 30], "y": [1.0, math.nan, 2.0, 1.5]},
}
assert should_stop(_nan, {"key": "y", "when": "drop_from_best", "threshold": 0.2}) == 30
assert should_stop(_nan, {"key": "y", "when": "below", "threshold": 10.0, "patience": 2}) == 30
_nan["evals"]["y"] = [math.nan, 1.0, 2.0, 2.0]
assert should_stop(_nan, {"key": "y", "when": "rise_from_start", "threshold": -100.0}) is None
# contract: drop-from-best
# the largest value so far includes the current one; the threshold is relative
_d = {"steps": {"step": [1]}, "evals": {"eval_step": [0, 10, 20, 30], "y": [0.5, 1.0, 0.85, 0.79]}}
assert should_stop(_d, {"key": "y", "when": "drop_from_best", "threshold": 0.2}) == 30
assert should_stop(_d, {"key": "y", "when": "drop_from_best", "threshold": 0.1}) == 20
# a negative best: (1 - 0.2) * -1 = -0.8 > -1, so it fires at once
_d["evals"]["y"] = [-1.0, -2.0, -1.5, 3.0]
assert should_stop(_d, {"key": "y", "when": "drop_from_best", "threshold": 0.2}) == 0
# contract: eval-keys
# an evaluation key is any key of log["evals"] but eval_step, whatever its name
_ev = {"steps": {"step": [1, 2]}, "evals": {"eval_step": [0, 10, 20], "acc": [0.9, 0.4, 0.8]}}
assert should_stop(_ev, {"key": "acc", "when": "below", "threshold": 0.5}) == 10
# contract: drop-from-best, negative
# values below zero (a reward with a penalty for wrong answers): threshold 0 stops at the first value
# strictly below the best so far, not at the first negative one
_neg = {
    "steps": {"step": [1]},
    "evals": {"eval_step": [0, 10, 20, 30], "r": [-1.0, -1.0, -0.5, -2.0]},
}
assert should_stop(_neg, {"key": "r", "when": "drop_from_best", "threshold": 0.0}) == 30
# contract: steps-first
# a key in both parts is read from log["steps"]; "step" and "eval_step" are not values
_both = {
    "steps": {"step": list(range(1, 11)), "y": [5.0] * 10},
    "evals": {"eval_step": [0, 5], "y": [0.0, 0.0]},
}
assert should_stop(_both, {"key": "y", "when": "above", "threshold": 1.0}) == WINDOW
for _bad in ("step", "eval_step"):
    try:
        should_stop(_both, {"key": _bad, "when": "above", "threshold": 0.0})
    except ValueError:
        pass
    else:
        raise AssertionError(f"{_bad!r} is not a value: ValueError")
# contract: errors
# a key in neither part, an unknown when, a threshold not a finite int or float, a patience not an int >= 1
for _rule in (
    {"key": "nope", "when": "above", "threshold": 0.0},
    {"key": "y", "when": "over", "threshold": 0.0},
    {"key": "y", "when": "above", "threshold": math.nan},
    {"key": "y", "when": "above", "threshold": math.inf},
    {"key": "y", "when": "above", "threshold": "0.5"},
    {"key": "y", "when": "above", "threshold": None},
    {"key": "y", "when": "above", "threshold": True},
    {"key": "y", "when": "above", "threshold": 0.0, "patience": 0},
    {"key": "y", "when": "above", "threshold": 0.0, "patience": 1.5},
    {"key": "y", "when": "above", "threshold": 0.0, "patience": 2.0},  # a whole float is no int
    {"key": "y", "when": "above", "threshold": 0.0, "patience": np.bool_(True)},
    {"key": "y", "when": "above", "threshold": 0.0, "patience": True},
    {"key": "y", "when": "above", "threshold": 0.0, "patience": -2},
):
    try:
        should_stop(_both, _rule)
    except ValueError:
        pass
    else:
        raise AssertionError(f"{_rule} must raise ValueError")
assert (
    should_stop(_both, {"key": "y", "when": "above", "threshold": 1, "patience": np.int64(2)})
    == WINDOW + 1
)
# NumPy scalars count as thresholds (a value read from an array is one)
assert should_stop(_both, {"key": "y", "when": "above", "threshold": np.float32(1.0)}) == WINDOW
# contract: causal, no-modify
# on a prefix of the log the rule fires at the same step, if that step is in the prefix
for _name, _log in _held[:8]:
    _rule = {
        "key": "entropy",
        "when": "below",
        "threshold": float(np.nanmedian(_log["steps"]["entropy"])),
    }
    _full = should_stop(_log, _rule)
    if _full is not None:
        _n = _log["steps"]["step"].index(_full) + 1
        _cut = {"steps": {k: v[:_n] for k, v in _log["steps"].items()}, "evals": _log["evals"]}
        assert should_stop(_cut, _rule) == _full
        _cut = {"steps": {k: v[: _n - 1] for k, v in _log["steps"].items()}, "evals": _log["evals"]}
        assert should_stop(_cut, _rule) is None
