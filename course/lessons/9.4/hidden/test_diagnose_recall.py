# @data _HELD clinic_heldout.json
_held = [(_r["name"], load_log(_r["log"]), _r["labels"]) for _r in _HELD["runs"]]
_found = {_name: {_f["label"] for _f in diagnose(_log)} for _name, _log, _ in _held}
# contract: recall
# held-out runs (other seeds, other settings, two pathologies at once): for each label, the share of the
# runs that show it in which you find it; every label's recall must be at least 0.9
_recall = []
for _lab in LABELS:
    _pos = [_name for _name, _, _labels in _held if _lab in _labels]
    if _pos:
        _recall.append(sum(_lab in _found[_n] for _n in _pos) / len(_pos))
assert min(_recall) >= 0.9, f"a label's recall on the held-out runs is {min(_recall):.2f} < 0.9"
