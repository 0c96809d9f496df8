# @data _HELD clinic_heldout.json
_held = [(_r["name"], load_log(_r["log"]), _r["labels"]) for _r in _HELD["runs"]]
_steps = {_name: {_f["label"]: _f["step"] for _f in diagnose(_log)} for _name, _log, _ in _held}
_true = sum(len(_labels) for _, _, _labels in _held)
_pairs = [
    (_name, _lab, _steps[_name][_lab], _onset)
    for _name, _, _labels in _held
    for _lab, _onset in _labels.items()
    if _lab in _steps[_name]
]
# contract: step
# a found label's step is the first step at which its definition holds: never earlier (the evidence
# did not exist yet), never later (the run went on with a visible problem); at least half the true
# labels must be found for this to count
assert len(_pairs) >= 0.5 * _true, f"only {len(_pairs)} of {_true} true labels found"
_early = [p for p in _pairs if p[2] < p[3]]
_late = [p for p in _pairs if p[2] > p[3]]
assert not _early, f"{len(_early)} findings come before their evidence exists"
assert not _late, f"{len(_late)} findings come later than the first step their definition holds"
