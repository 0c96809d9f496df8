# @data _HELD clinic_heldout.json
# @reference choose_intervention
# contract: differential, return-type, no-modify
# every held-out run that shows a label, with its counterfactual reruns: the course's choice (a
# function that changes an argument in place fails at the call: the grader's boundary checks)


def _copy(x):
    return json.loads(json.dumps(x))


for _r in _HELD["runs"]:
    if not _r["labels"]:
        continue
    _labels, _after = _copy(_r["labels"]), _copy(_r["after"])
    _got = choose_intervention(_labels, _after)
    _want = _ref_choose_intervention(_r["labels"], _r["after"])
    assert _got is None or type(_got) is str, f"return a key (str) or None, got {_got!r}"
    assert _got == _want, f"a held-out run with labels {sorted(_r['labels'])}: expected {_want!r}"
    assert _labels == _r["labels"] and _after == _r["after"], "the arguments must not be modified"
# contract: generated, fixes, delays, harms, ties, order, unknown-keys, extra-fields
# generated evidence: every count of fixes and delays, delays of exactly WINDOW and WINDOW - 1 steps,
# harms, ties broken by the order of INTERVENTIONS, keys outside it, extra fields in an entry
_rng = np.random.default_rng(9409)
_keys = list(INTERVENTIONS) + ["restart_from_checkpoint"]
for _case in range(400):
    _labs = list(_rng.choice(LABELS, int(_rng.integers(0, 4)), replace=False))
    _labels = {str(_l): int(_rng.integers(5, 40)) for _l in _labs}
    _after = {}
    for _k in _rng.choice(_keys, int(_rng.integers(0, len(_keys) + 1)), replace=False):
        _later = {}
        for _l, _t in _labels.items():
            _u = _rng.random()
            if _u < 0.4:
                continue  # fixed
            _later[_l] = _t + int(_rng.choice([-3, 0, WINDOW - 1, WINDOW, WINDOW + 7]))
        if _rng.random() < 0.25:
            _later[str(_rng.choice(LABELS))] = int(_rng.integers(5, 60))  # maybe a harm
        _after[str(_k)] = {"labels": _later, "config_hash": "x" * 8}
    _want = _ref_choose_intervention(_labels, _after)
    _got = choose_intervention(_copy(_labels), _copy(_after))
    assert _got == _want, f"labels {_labels}, after {_after}: expected {_want!r}, got {_got!r}"
# contract: empty
# nothing to fix, or no evidence: None
assert choose_intervention({}, {"lower_lr": {"labels": {}}}) is None
assert choose_intervention({"kl_blowup": 7}, {}) is None
