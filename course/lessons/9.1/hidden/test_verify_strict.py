# each row written by hand: (response, reference, reward, category)
_HIDDEN_STRICT = [
    (r"Hence $\boxed{3/7}$.", "0.428571", 1.0, "correct"),  # reference tolerance, $ and . after
    (r"\boxed{7}", "5", 0.0, "wrong"),
    (r"\boxed{0.4285}", "3/7", 0.0, "wrong"),  # off by 7e-5 > abs_tol
    (r"\boxed{\boxed{5}}", "5", 0.0, "parse_error"),  # nested: outer contents are not a number
    (r"\boxed{5", "5", 0.0, "parse_error"),  # never closed
    (r"\boxed{5} and \boxed{6", "5", 0.0, "parse_error"),  # the last box is never closed
    (r"\boxed{3 or 5}", "5", 0.0, "parse_error"),
    (r"\boxed{}", "5", 0.0, "parse_error"),
    (r"\boxed{1/0}", "5", 0.0, "parse_error"),
    (r"\boxed{5}\boxed{x}", "5", 0.0, "parse_error"),  # rule 4 before rule 5
    (r"\boxed{5} \boxed{5}", "5", 1.0, "correct"),  # the same value twice is one commitment
    (r"\boxed{4} then \boxed{5}", "5", 0.0, "multiple_answers"),
    (r"\boxed{12} \boxed{13} and more", "13", 0.0, "multiple_answers"),  # rule 5 before rule 6
    (r"\boxed{0.4285714} or \boxed{3/7}", "3/7", 0.0, "multiple_answers"),  # exact comparison
    (r"\boxed{1,234}", "1234", 1.0, "correct"),
    (r"\boxed{\frac{1}{2}}", "0.5", 1.0, "correct"),  # braces inside the box
    ("We get \\boxed{12}\n\n", "12", 1.0, "correct"),  # trailing whitespace is fine
    (r"79, 80, 81, 82 - I pick \boxed{81}", "81", 1.0, "correct"),  # working numbers are allowed
    (r"\boxed{-3}.", "-3", 1.0, "correct"),
    (r"\boxed{5}}", "5", 0.0, "trailing_text"),  # a stray brace after the box
    (r"\boxed{81} (I think)", "81", 0.0, "trailing_text"),
    ("the answer is 3 or 5", "5", 0.0, "no_answer"),
    ("", "5", 0.0, "no_answer"),
    (None, "5", 0.0, "invalid_input"),
    (b"\\boxed{5}", "5", 0.0, "invalid_input"),
    ("x" * 20_001, "5", 0.0, "too_long"),
    ("x" * 19_991 + r"\boxed{5}", "5", 1.0, "correct"),  # exactly 20,000 characters is allowed
    # contract: rule-5 (a later box smaller than the first; equal as Fraction with another spelling)
    (r"\boxed{81} or maybe \boxed{79}", "79", 0.0, "multiple_answers"),
    (r"\boxed{3/6} so \boxed{0.50} = \boxed{1/2}", "0.5", 1.0, "correct"),
    (r"\boxed{2} \boxed{2} \boxed{1}", "2", 0.0, "multiple_answers"),
    # contract: rule-6 (any disallowed character after the last box, right after it or later)
    (r"\boxed{81}x", "81", 0.0, "trailing_text"),
    (r"\boxed{5}!", "5", 0.0, "trailing_text"),
    (r"\boxed{81}ab", "81", 0.0, "trailing_text"),
    (r"\boxed{5}. Done", "5", 0.0, "trailing_text"),
    ("$\\boxed{5}$ .\n", "5", 1.0, "correct"),  # whitespace, '.' and '$' mixed are all allowed
    ("\\boxed{5}\t\u00a0.", "5", 1.0, "correct"),  # str.isspace: tab and no-break space
    # contract: boxes, rule-4 (unclosed boxes: counted to the end of the response)
    (r"\boxed{4} \boxed{57", "4", 0.0, "parse_error"),  # unclosed at depth 1: never a value
    (r"\boxed{4} \boxed{5 \boxed{5}", "4", 0.0, "parse_error"),
    ("w" * 300 + r"\boxed{5", "5", 0.0, "parse_error"),  # an unclosed box far into the response
    (r"\boxed{{5}}", "5", 0.0, "parse_error"),  # braces belong to the box: contents are '{5}'
    # contract: boxes, rule-3 (a box starts only at the 7 characters \boxed{, brace included)
    (r"the answer is \boxed 5", "5", 0.0, "no_answer"),
    ("\\boxed {5}", "5", 0.0, "no_answer"),
    (r"\boxed5 and \boxed", "5", 0.0, "no_answer"),
    (r"\boxed{5} \boxed", "5", 0.0, "trailing_text"),
    (r"\boxed \boxed{5}", "5", 1.0, "correct"),
    # contract: rule-5 (exactly as Fraction: two values that are one float are still two values)
    (r"\boxed{0.1} \boxed{0.10000000000000001}", "0.1", 0.0, "multiple_answers"),
    # contract: rule-7 (the final comparison decides: invalid reference, tolerance of the reference)
    (r"\boxed{5}", "abc", 0.0, "invalid_reference"),
    (r"\boxed{5.0000001}", "5", 1.0, "correct"),
    (r"\boxed{5.01}", "5", 0.0, "wrong"),
]
# contract: return-types, rule-1, rule-2, rule-3, rule-4, rule-5, rule-6, rule-7, rule-order, working
for _row in _HIDDEN_STRICT:
    _check_strict(*_row)
# contract: options (rel_tol, abs_tol and max_chars are passed on to the final comparison)
assert verify_strict(r"\boxed{0.4286}", "3/7", abs_tol=1e-3) == (1.0, "correct"), (
    "pass tolerances on"
)
assert verify_strict(r"\boxed{1000.5}", "1000", rel_tol=1e-3) == (1.0, "correct"), "pass rel_tol on"
assert verify_strict("y" * 50 + r"\boxed{5}", "5", max_chars=40) == (0.0, "too_long"), (
    "pass max_chars on"
)
assert verify_strict("y" * 25_000 + r"\boxed{5}", "5", max_chars=30_000) == (1.0, "correct"), (
    "pass max_chars on to verify_numeric_answer as well (its default is 20,000)"
)
assert verify_strict(response=r"\boxed{5}", reference="5") == (1.0, "correct"), (
    "response and reference can be passed by keyword, as the signature says"
)
# contract: differential (seeded responses built from pieces that trip each rule)
# @reference verify_strict
_rng = np.random.default_rng(9104)
_PIECES = ["\\boxed{", "}", "{", "5", "3/7", "0.5", "1/2", "-2", "1,234", "0.4285714", "81",
           "\\frac{1}{2}", " ", ".", "$", "\n", "x", " or ", "so ", "5}", "{}"]  # fmt: skip
for _case in range(400):
    _resp = "".join(_rng.choice(_PIECES, int(_rng.integers(1, 9))))
    if _case % 7 == 0:
        _resp = "w" * int(_rng.integers(250, 400)) + _resp
    _refa = str(_rng.choice(["5", "0.5", "81", "3/7", "-2", "1234", "abc"]))
    _kw = {}
    if _case % 5 == 0:
        _kw = {"max_chars": int(_rng.integers(max(len(_resp) - 3, 0), len(_resp) + 3)),
               "abs_tol": float(_rng.choice([1e-6, 1e-2])), "rel_tol": 1e-9}  # fmt: skip
    _want = _ref_verify_strict(_resp, _refa, **_kw)
    _got = verify_strict(_resp, _refa, **_kw)
    assert type(_got) is tuple and _got == _want, (
        f"verify_strict({_resp!r}, {_refa!r}, **{_kw}) should be {_want!r}, got {_got!r}"
    )
del _ref_verify_strict
