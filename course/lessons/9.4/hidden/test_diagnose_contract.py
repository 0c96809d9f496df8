# @data _HELD clinic_heldout.json
# @reference diagnose
_held = [(_r["name"], load_log(_r["log"])) for _r in _HELD["runs"]]


def _by_label(findings):
    return {f["label"]: f["step"] for f in findings}


def _prefix(log, last_step):  # the log as it stood after step last_step
    n = sum(1 for s in log["steps"]["step"] if s <= last_step)
    k = sum(1 for s in log["evals"]["eval_step"] if s <= last_step)
    return {
        "steps": {key: v[:n] for key, v in log["steps"].items()},
        "evals": {key: v[:k] for key, v in log["evals"].items()},
    }


# contract: types, no-modify
# every held-out run: a list of dicts {label, step, metrics}, a label of LABELS at most once, an int
# step that is one of the log's step numbers, a list of str (the call may not change the log)
for _name, _log in _held:
    _out = diagnose(_log)
    assert type(_out) is list, f"return a list, got {type(_out).__name__}"
    for _f in _out:
        assert type(_f) is dict and set(_f) == {"label", "step", "metrics"}, (
            f"a finding is a dict with keys label, step, metrics; got {_f!r}"
        )
        assert _f["label"] in LABELS and type(_f["step"]) is int, (
            f"label from LABELS and an int step, got {_f!r}"
        )
        assert _f["step"] in _log["steps"]["step"], (
            "a finding's step is one of the log's step numbers"
        )
        assert type(_f["metrics"]) is list and all(type(_m) is str for _m in _f["metrics"])
    assert len({_f["label"] for _f in _out}) == len(_out), "at most one finding per label"
# contract: metrics
# the metrics of a finding name (at least) every key its definition reads
for _name, _log in _held:
    _want = {_f["label"]: set(_f["metrics"]) for _f in _ref_diagnose(_log)}
    for _f in diagnose(_log):
        if _f["label"] in _want:
            assert _want[_f["label"]] <= set(_f["metrics"]), (
                f"{_f['label']}: name the keys {sorted(_want[_f['label']])}"
            )
# contract: short
# no rule before a full window: fewer than WINDOW steps, or no step at all, give no finding
_name, _log = _held[0]
for _cut in (0, 1, WINDOW - 1):
    _short = _prefix(_log, _cut)
    assert diagnose(_short) == [], f"a log of {_cut} steps (less than one window) has no finding"
assert diagnose({"steps": {}, "evals": {}}) == []
# contract: causal
# nothing after step t decides step t: on every prefix the findings are those of the full run up to it,
# and rewriting every later step (or evaluation) changes no earlier finding
_rng = np.random.default_rng(9406)
for _name, _log in _held:
    _full = _by_label(_ref_diagnose(_log))
    _last = int(_log["steps"]["step"][-1])
    for _cut in sorted({*_full.values(), *(int(c) for c in _rng.integers(WINDOW, _last, 3))}):
        _want = {k: v for k, v in _full.items() if v <= _cut}
        assert _by_label(diagnose(_prefix(_log, _cut))) == _want, (
            f"log cut after step {_cut}: expected {_want}"
        )
    _cut = int(_rng.integers(WINDOW + 5, _last - 5))
    _poisoned = {
        "steps": {k: list(v) for k, v in _log["steps"].items()},
        "evals": {k: list(v) for k, v in _log["evals"].items()},
    }
    for _key, _v in _poisoned["steps"].items():
        if _key != "step":
            for _i, _s in enumerate(_poisoned["steps"]["step"]):
                if _s > _cut:
                    _v[_i] = float(_rng.choice([0.0, 1.0, 10.0, -1.0]))
    for _key, _v in _poisoned["evals"].items():
        if _key != "eval_step":
            for _i, _s in enumerate(_poisoned["evals"]["eval_step"]):
                if _s > _cut:
                    _v[_i] = float(_rng.choice([0.0, 1.0]))
    _got = {k: v for k, v in _by_label(diagnose(_poisoned)).items() if v <= _cut}
    _want = {k: v for k, v in _full.items() if v <= _cut}
    assert _got == _want, f"changing only what follows step {_cut} changed the findings up to it"
# contract: missing-keys
# a rule whose keys are not in the log is never evaluated; the other rules still are
for _name, _log in _held:
    for _drop in (
        ("evals", None),
        ("steps", "clip_low_reused"),
        ("steps", "accuracy"),
        ("steps", "verifier_error_rate"),
    ):
        _part, _key = _drop
        _cut = {"steps": dict(_log["steps"]), "evals": dict(_log["evals"])}
        if _key is None:
            _cut["evals"] = {}
        else:
            del _cut[_part][_key]
        assert _by_label(diagnose(_cut)) == _by_label(_ref_diagnose(_cut)), (
            f"{_name} without {_key or 'its evaluations'}"
        )
# contract: nan
# NaN-ignoring window means; a window of NaN only decides nothing (the comparison is false)
for _name, _log in _held[:6]:
    for _key in ("entropy", "kl_ref", "informative_rate", "reward"):
        _nan = {"steps": dict(_log["steps"]), "evals": _log["evals"]}
        _v = list(_nan["steps"][_key])
        for _i in range(0, len(_v), 3):
            _v[_i] = math.nan
        for _i in range(20, 20 + WINDOW):
            _v[_i] = math.nan
        _nan["steps"][_key] = _v
        assert _by_label(diagnose(_nan)) == _by_label(_ref_diagnose(_nan)), (
            f"{_name} with NaN in {_key}"
        )
