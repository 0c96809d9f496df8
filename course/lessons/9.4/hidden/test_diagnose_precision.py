# @data _HELD clinic_heldout.json
_held = [(_r["name"], load_log(_r["log"]), _r["labels"]) for _r in _HELD["runs"]]
_found = {_name: {_f["label"] for _f in diagnose(_log)} for _name, _log, _ in _held}
_true = sum(len(_labels) for _, _, _labels in _held)
_hits = sum(len(_found[_name] & set(_labels)) for _name, _, _labels in _held)
# contract: precision
# for each label you report, the share of its findings that the run really shows; the mean over the
# labels you report: each must be at least 0.9, and you must find at least half of all true labels
assert _hits >= 0.5 * _true, f"only {_hits} of {_true} true labels found: precision needs findings"
_prec = []
for _lab in LABELS:
    _said = [_name for _name, _, _ in _held if _lab in _found[_name]]
    if _said:
        _prec.append(
            sum(_lab in _labels for _name, _, _labels in _held if _name in _said) / len(_said)
        )
assert min(_prec) >= 0.9, f"a label's precision on the held-out runs is {min(_prec):.2f} < 0.9"
# contract: healthy
# a healthy run gets no finding at all
for _name, _, _labels in _held:
    if not _labels:
        assert not _found[_name], "a held-out healthy run got a finding"
