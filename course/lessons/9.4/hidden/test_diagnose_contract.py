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
        ("steps", "truncation_rate"),
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
# (six GRU-lab runs and the last two held-out runs, whose answers grow: BaseLM)
for _name, _log in _held[:6] + _held[-2:]:
    for _key in ("entropy", "kl_ref", "informative_rate", "reward", "len_mean", "truncation_rate"):
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
# contract: generated, step-numbers, evals-at-step, parse-failures, nan, length
# generated logs that the clinic's runs never show: step numbers that start anywhere and skip,
# evaluations made exactly at a step and between steps (the first one often after the first full
# window: before it no evaluation belongs to a step), a held-out curve that wanders (a random
# walk, up and down), parse failures without verifier errors, NaN in one clip key and not the other,
# lengths and truncation that start anywhere and jump up or down; every finding (label and step) must be
# the course's
_rng = np.random.default_rng(9408)


def _moves(n, lo, hi, noise):  # a key that jumps from one level to another at a random row
    a, b = _rng.uniform(lo, hi, 2)
    return np.where(np.arange(n) < _rng.integers(0, n), a, b) + _rng.normal(0.0, noise, n)


for _case in range(120):
    _n = int(_rng.integers(WINDOW, 45))
    _step = int(_rng.choice([1, 2, 50, 101])) + np.cumsum(_rng.choice([0, 1, 1, 1, 2, 3], _n))
    _step = np.unique(_step)
    _n = len(_step)
    _st = {
        "entropy": np.abs(_moves(_n, 0.2, 2.0, 0.05)),
        "kl_ref": np.abs(_moves(_n, 0.0, 0.6, 0.05)),
        "clip_low_reused": np.abs(_moves(_n, 0.0, 0.05, 0.01)),
        "clip_high_reused": np.abs(_moves(_n, 0.0, 0.05, 0.01)),
        "reward": _moves(_n, 0.0, 1.2, 0.02),
        "accuracy": np.clip(_moves(_n, 0.0, 1.0, 0.03), 0.0, 1.0),
        "informative_rate": np.clip(_moves(_n, 0.0, 0.6, 0.05), 0.0, 1.0),
        "verifier_error_rate": np.abs(_moves(_n, 0.0, 0.08, 0.01)) * (_rng.random() < 0.5),
        "parse_fail_rate": np.abs(_moves(_n, 0.0, 0.08, 0.01)),
        "len_mean": np.abs(_moves(_n, 3.0, 8.0, 0.2)),
        "truncation_rate": np.clip(_moves(_n, 0.0, 0.7, 0.03), 0.0, 1.0),
    }
    for _key, _v in _st.items():
        _v[_rng.random(_n) < _rng.choice([0.0, 0.1, 0.3])] = math.nan
    _k = int(_rng.integers(0, 6))
    _evs = np.unique(
        np.concatenate(
            [
                [0] * (_rng.random() < 0.7),
                _rng.choice(_step, _k),
                _rng.integers(5, _step[-1] + 3, _k),
            ]
        )
    )
    _evs = _evs if len(_evs) else np.array([int(_step[-1])])
    _pass = np.clip(0.6 + np.cumsum(_rng.normal(0.0, 0.08, len(_evs))), 0.0, 1.0)
    _gen = {
        "steps": {"step": [int(s) for s in _step], **{k: v.tolist() for k, v in _st.items()}},
        "evals": {"eval_step": [int(e) for e in _evs], "heldout_pass@4": _pass.tolist()},
    }
    assert _by_label(diagnose(_gen)) == _by_label(_ref_diagnose(_gen)), (
        f"a log with steps {_gen['steps']['step'][:4]}..., evaluations at {_gen['evals']['eval_step']}: "
        f"expected {_by_label(_ref_diagnose(_gen))}"
    )
# contract: strict
# the table's strict and non-strict comparisons, where a tie is exact in floating point: an entropy
# window at exactly half the start is not a collapse (one just below it is), nor is a held-out
# pass@4 at exactly 0.9 times the first
_tie = {
    "steps": {"step": list(range(1, 13)), "entropy": [1.0] * 5 + [0.5] * 7},
    "evals": {"eval_step": [0, 6], "heldout_pass@4": [1.0, 0.5]},
}
assert _by_label(diagnose(_tie)) == {}, "entropy exactly 0.5 x the start is not below it"
_tie["steps"]["entropy"] = [1.0] * 5 + [0.5 - 2.0**-20] * 7
assert _by_label(diagnose(_tie)) == {"entropy_collapse": 10}, "entropy collapse at step 10"
# and a held-out pass@4 at exactly 0.9 x the first has not dropped below it
_tie["evals"]["heldout_pass@4"] = [1.0, 0.9]
assert _by_label(diagnose(_tie)) == {}, "held-out pass@4 exactly 0.9 x the first is not below it"
# length growth holds at a window of exactly 1.2 x the start's mean length and exactly the start's
# truncation + 0.2 (both comparisons are >=), and not just below either
_len = {
    "steps": {
        "step": list(range(1, 13)),
        "len_mean": [5.0] * 5 + [6.0] * 7,
        "truncation_rate": [0.25] * 5 + [0.45] * 7,
    },
    "evals": {},
}
assert _by_label(diagnose(_len)) == {"length_growth": 10}, (
    "mean length exactly 1.2 x the start and truncation exactly the start + 0.2: length growth at 10"
)
_len["steps"]["len_mean"] = [5.0] * 5 + [6.0 - 2.0**-20] * 7
assert _by_label(diagnose(_len)) == {}, "a mean length just below 1.2 x the start is not growth"
_len["steps"]["len_mean"] = [5.0] * 5 + [9.0] * 7
_len["steps"]["truncation_rate"] = [0.25] * 5 + [0.45 - 2.0**-20] * 7
assert _by_label(diagnose(_len)) == {}, "truncation just below the start + 0.2 is not growth"
# contract: evals-at-step
# an evaluation made exactly at step t belongs to step t: the entropy has halved from step 9, the
# held-out drop is measured at step 12, so the collapse is found at 12
_at = {
    "steps": {"step": list(range(1, 21)), "entropy": [1.0] * 5 + [0.2] * 15},
    "evals": {"eval_step": [0, 12], "heldout_pass@4": [1.0, 0.5]},
}
assert _by_label(diagnose(_at)) == {"entropy_collapse": 12}, (
    "an evaluation at step 12 is seen at 12"
)
# steps that skip: an evaluation made at step 12 belongs to the first logged step at or after it
# (13 here), never to the step logged before it
_gap = {
    "steps": {"step": list(range(1, 11)) + list(range(13, 21)), "entropy": [1.0] * 5 + [0.2] * 13},
    "evals": {"eval_step": [0, 12], "heldout_pass@4": [1.0, 0.5]},
}
assert _by_label(diagnose(_gap)) == {"entropy_collapse": 13}, "an evaluation at 12 is seen at 13"
# the latest evaluation decides, not any earlier one: a dip at step 3 that recovered by step 8 is not
# a drop when the entropy halves at step 9
_at["evals"] = {"eval_step": [0, 3, 8], "heldout_pass@4": [1.0, 0.5, 1.0]}
assert _by_label(diagnose(_at)) == {}, "pass@4 back at its first value: no collapse"
