"""Tests of helpers.verifiers: positive, negative and adversarial cases, fuzzing, passports.

The list follows seed 000 step 9.1.4's checklist: every accepted format, plausible wrong answers,
the gold number inside a wrong derivation, several boxes, zero denominators, NaN/inf/overflow,
very long responses, control sequences and code. Hypothesis checks the contract on random text:
never raises, a known category, and never a false positive.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import unicodedata
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from helpers.tasks import FORMAT_PREFIX, Task, make_tasks
from helpers.verifiers import (
    CATEGORIES,
    NUMERIC,
    VERIFIERS,
    extract_boxed,
    last_number,
    parse_number,
    read_tail,
    verify_arithmetic,
    verify_arithmetic_sloppy,
    verify_format,
    verify_numeric_answer,
)

FUZZ = settings(max_examples=250, deadline=None)


def cat(response, reference="81", **kw):
    r = verify_numeric_answer(response, reference, **kw)
    assert r.category in CATEGORIES
    assert r.reward == (1.0 if r.category == "correct" else 0.0)
    return r.category


# --- the seed's example and accepted formats --------------------------------------------------


def test_seed_example():
    r = verify_numeric_answer(r"Final: \boxed{3/7}", "0.428571")
    assert (r.reward, r.category, r.extracted, r.value) == (1.0, "correct", "3/7", Fraction(3, 7))


@pytest.mark.parametrize(
    "response, reference",
    [
        (r"\boxed{81}", "81"),
        (r"So the sum is \boxed{ 81 }.", "81"),
        ("23 + 58 = 81", "81"),
        ("The answer is 81.", "81"),
        ("81", "81"),
        ("+81", "81"),
        (r"\boxed{-5}", "-5"),
        ("x = -5", "-5"),
        ("x = \u22125", "-5"),  # Unicode minus
        (r"\boxed{1,234}", "1234"),
        ("The total is 1,234,567 dollars.", "1234567"),
        (r"\boxed{1{,}234}", "1234"),
        (r"\boxed{2.5}", "5/2"),
        ("it comes to 2.50", "2.5"),
        (r"\boxed{5/2}", "2.5"),
        (r"\boxed{\frac{3}{7}}", "3/7"),
        (r"\boxed{\dfrac{3}{7}}", "3/7"),
        (r"\boxed{-\tfrac{3}{7}}", "-3/7"),
        (r"\boxed{6/14}", "3/7"),  # unreduced fractions are equal values
        (r"\boxed{0.4285714}", "3/7"),
        ("about 0.428571", "3/7"),
        (r"\boxed{2.5e3}", "2500"),
        (r"\boxed{1E-2}", "0.01"),
        (r"\boxed{81.0}", "81"),
        (r"\boxed{\boxed{81}}", "81"),  # nested: the innermost (last opened) box
        (r"\boxed{81} ok", "81"),
    ],
)
def test_accepted_formats(response, reference):
    assert cat(response, reference) == "correct"


def test_tolerance_rule_is_abs_or_rel():
    assert cat("0.4285719", "3/7") == "correct"  # |diff| < 1e-6
    assert cat("0.428570", "3/7") == "wrong"  # |diff| > 1e-6
    assert cat("1000000001", "1000000000") == "correct"  # rel_tol 1e-9 of 1e9 is 1
    assert cat("1000001", "1000000") == "wrong"  # integers below 1e9 must be exact
    assert cat("82", "81", abs_tol=1) == "correct"
    assert cat("82", "81", abs_tol=0, rel_tol=0) == "wrong"
    with pytest.raises(ValueError):
        verify_numeric_answer("1", "1", rel_tol=float("nan"))


# --- wrong answers, derivations, several boxes -----------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        r"\boxed{80}",
        r"\boxed{82}",
        "81 + 1 = 82",  # gold number inside a wrong derivation, different final answer
        r"First 23+58 = 81, but wait, carry the one: \boxed{91}",
        r"\boxed{81} no, actually \boxed{18}",  # several boxes: the last wins
        r"\boxed{-81}",
        r"\boxed{8.1}",
        r"\boxed{810/100}",
        "81 or 79",  # both options: the last one counts
    ],
)
def test_plausible_wrong_answers(response):
    assert cat(response, "81") == "wrong"


def test_last_box_wins_over_later_numbers():
    assert cat(r"\boxed{81} (checked with 23+58 in 2 steps)", "81") == "correct"
    assert cat(r"\boxed{18} although some say 81", "81") == "wrong"


@pytest.mark.parametrize(
    "response, category",
    [
        ("", "no_answer"),
        ("no digits here", "no_answer"),
        ("x2 v3 42nd", "no_answer"),  # numbers glued to words are not numbers
        ("version 1.2.3", "no_answer"),
        ("nan", "no_answer"),
        ("inf Infinity", "no_answer"),
        (r"\boxed{}", "parse_error"),
        (r"\boxed{81", "parse_error"),  # unclosed
        (r"\boxed{81 apples}", "parse_error"),
        (r"\boxed{x = 81}", "parse_error"),
        (r"\boxed{81 or 80}", "parse_error"),
        (r"\boxed{nan}", "parse_error"),
        (r"\boxed{\infty}", "parse_error"),
        (r"\boxed{inf}", "parse_error"),
        (r"\boxed{1/0}", "parse_error"),
        ("81/0", "parse_error"),
        (r"\boxed{\frac{81}{0}}", "parse_error"),
        (r"\boxed{0/0}", "parse_error"),
        ("1e999999999", "parse_error"),
        (r"\boxed{1e999999999}", "parse_error"),
        (r"\boxed{1e-999999999}", "parse_error"),
        (r"\boxed{" + "9" * 10_000 + "}", "parse_error"),
        ("9" * 10_000, "parse_error"),
        (r"\boxed{" * 2000, "parse_error"),
        (r"\boxed{" + "{" * 5000 + "81", "parse_error"),
        (r"\boxed{81}" + r"\boxed{", "parse_error"),  # the last box is the unclosed one
        (r"\boxed{1,2}", "parse_error"),  # not a thousands grouping: a list
        (r"\boxed{1234,567}", "parse_error"),
        (r"\boxed{٨١}", "parse_error"),  # non-ASCII digits are not accepted
        (None, "invalid_input"),
        (b"81", "invalid_input"),
        (81, "invalid_input"),
        (["81"], "invalid_input"),
        ("81" + " " * 20_000, "too_long"),
    ],
)
def test_failure_categories(response, category):
    assert cat(response, "81") == category


def test_thousands_separators_do_not_merge_lists():
    assert last_number("pick 1, 2") == "2"
    assert last_number("1,234 and 5") == "5"
    assert last_number("total 1,234") == "1,234"
    assert last_number("1,2345") == "2345"
    assert cat("[1,2]", "12") == "parse_error"  # a comma glued to a digit is not a grouping
    assert cat("pick 1, 2", "2") == "correct"  # a list: the last item stands alone


@pytest.mark.parametrize(
    "reference", ["", "abc", "1/0", "nan", "inf", "1e999999", None, 81, b"81", "9" * 200]
)
def test_invalid_reference(reference):
    assert cat(r"\boxed{81}", reference) == "invalid_reference"


@pytest.mark.parametrize(
    "response",
    [
        "\x00\x01\x02",
        "\x1b[31m81\x1b[0m",  # ANSI colour codes glue digits to letters
        "81\x00",
        "__import__('os').system('echo 81')",
        "eval('40+41')",
        "'; DROP TABLE answers; --",
        r"\boxed{\input{/etc/passwd}}",
        r"\boxed{\def\x{81}\x}",
        "<|endoftext|>81<|im_end|>",
        "{{81}}",
        "\u202e18\u202c",  # right-to-left override: still the digits 1, 8
        "\ud800",  # a lone surrogate
    ],
)
def test_control_sequences_and_code(response):
    r = verify_numeric_answer(response, "81")
    assert r.category in CATEGORIES
    # Nothing is executed; only a literal standalone 81 could score, never the code's result.
    if r.category == "correct":
        assert r.extracted.strip() == "81"


def test_injection_never_evaluated():
    assert cat("eval('40+41')", "81") == "parse_error"  # 41 is part of a sum: not read alone
    assert cat("eval('40 - 41') gives 41", "81") == "wrong"
    assert cat(r"\boxed{40+41}", "81") == "parse_error"


def test_extract_boxed():
    assert extract_boxed(r"a \boxed{x{y}z} b") == ("x{y}z", True)
    assert extract_boxed("no box") == (None, False)
    assert extract_boxed(r"\boxed{open") == (None, True)
    assert extract_boxed(r"\boxed{1}\boxed{2}") == ("2", True)


def test_parse_number():
    assert parse_number("3/7") == Fraction(3, 7)
    assert parse_number("-1,234.5") == Fraction(-2469, 2)
    assert parse_number(r"\frac{1,000}{3}") == Fraction(1000, 3)
    assert parse_number("1e100") == 10**100
    assert parse_number("1e101") is None
    assert parse_number("1" * 101) is None
    assert parse_number("1/0") is None
    assert parse_number("1.5/2") is None
    assert parse_number("1{,}234{,}567") == 1234567


# --- the last-number reading fails closed (issue: a smaller number is never read) ---------------

# (response, reference that the old reading would have paid, what the tail reading finds)
FAIL_CLOSED = [
    (r"The answer is \frac{1}{2}", "2", "wrong"),  # \frac in text is the fraction, not 2
    (r"so it is \dfrac{1}{2}", "2", "wrong"),
    (r"so it is \tfrac{3}{4}", "4", "wrong"),
    ("2^{10}", "10", "parse_error"),  # a power
    ("2^10", "10", "parse_error"),
    ("5\u00b2", "5", "parse_error"),  # superscript two
    ("10\u00b3", "10", "parse_error"),
    ("10**100000", "100000", "parse_error"),
    ("2 * 5", "5", "parse_error"),
    ("2 \\times 5", "5", "parse_error"),
    ("2\\cdot5", "2", "parse_error"),
    ("the answer is 3-5", "5", "parse_error"),  # a difference, not the number 5
    ("x = - 5", "5", "parse_error"),  # a detached sign is not dropped
    ("1/ 2", "2", "parse_error"),
    ("5 + x", "5", "parse_error"),
    ("an en dash \u20135", "5", "parse_error"),
    ("an em dash \u20145", "5", "parse_error"),
    ("full-width minus \uff0d5", "5", "parse_error"),
    ("small hyphen-minus \ufe635", "5", "parse_error"),
    ("1 234 567", "567", "parse_error"),  # digits grouped by spaces
    ("1\u202f234\u202f567", "567", "parse_error"),  # narrow no-break spaces
    ("1\u00a0234", "234", "parse_error"),
    ("1'234'567", "567", "parse_error"),  # grouped by apostrophes
    ("1\u2019234", "234", "parse_error"),
    ("1.234,56", "56", "parse_error"),  # European decimal comma
    ("3,5", "5", "parse_error"),
    ("1{,}234", "234", "wrong"),  # LaTeX's grouped comma: the number 1234
    ("1{,}2", "2", "parse_error"),
    (r"\sqrt{8}", "8", "parse_error"),  # inside a LaTeX group
    (r"\textbf{81}", "81", "parse_error"),  # also a group: box it instead
    (r"81\text{ cm}", "81", "parse_error"),  # followed by a macro
    # an argument of a LaTeX command, without braces (version 1.2)
    (r"\frac 1 2", "2", "parse_error"),
    (r"1 \over 2", "2", "parse_error"),
    (r"\sqrt 8", "8", "parse_error"),
    (r"2\sqrt 2", "2", "parse_error"),
    (r"\binom 5 2", "2", "parse_error"),
    (r"\sqrt[3] 8", "8", "parse_error"),
    (r"\log 8", "8", "parse_error"),
    (r"\frac{1} 2", "2", "parse_error"),
    (r"81 \pi", "81", "parse_error"),  # a product
    ("log_2 8", "8", "parse_error"),  # a subscript
    ("log 8", "8", "parse_error"),  # a function written as a word
    ("sqrt(8)", "8", "parse_error"),
    ("x = \u2013 5", "5", "parse_error"),  # a dash, then a space
    ("x = \uff0d 5", "5", "parse_error"),
    ("x = \u2014 5", "5", "parse_error"),
    ("5!", "5", "parse_error"),  # a factorial
]


@pytest.mark.parametrize("response, reference, category", FAIL_CLOSED)
def test_tail_reading_fails_closed(response, reference, category):
    r = verify_numeric_answer(response, reference)
    assert r.category == category, (response, r)
    if category == "parse_error":
        assert r.detail  # the reason is reported


@pytest.mark.parametrize(
    "response, reference",
    [
        (r"The answer is \frac{1}{2}.", "0.5"),
        (r"$-\dfrac{3}{7}$", "-3/7"),
        (r"\frac{1,000}{3}", "1000/3"),
        ("1{,}234", "1234"),
        ("23 + 58 = 81", "81"),  # the working is fine when the answer comes last
        ("2^{10} = 1024", "1024"),
        ("x = -5", "-5"),
        ("x = \u22125", "-5"),
        (r"\(81\)", "81"),
        ("81%", "81"),
        ("pick 1, 2", "2"),
        ("at 12:30 we have 81", "81"),
        ("the answer \u2013 as computed \u2013 is 81", "81"),
        ("5\u2014", "5"),  # a dash after the number is punctuation
        ("Score: 139 or 140", "140"),
        (r"\text{The answer is } 81", "81"),  # text before the number is not its command
        (r"x = 81 \quad", "81"),
        (r"\Rightarrow 81", "81"),
        (r"$\left( 81 \right)$", "81"),
        ("the catalog lists 81", "81"),  # a word that ends like a function name is not one
        (r"81\%", "81"),  # a percent sign is dropped: 81% reads as 81 (the docstring says so)
    ],
)
def test_tail_reading_keeps_well_formed_answers(response, reference):
    assert cat(response, reference) == "correct"


def test_read_tail():
    assert read_tail("no number") == (None, None)
    assert read_tail("so 81.") == ("81", None)
    token, why = read_tail("2^{10}")
    assert token == "10" and "group" in why
    assert read_tail(r"x \frac{1}{2}") == (r"\frac{1}{2}", None)
    assert read_tail(r"\frac{1}{2}^{3}")[1] is not None
    assert last_number(r"it is \frac{1}{2}") == r"\frac{1}{2}"


def test_last_number_rule_pays_a_hedge_that_ends_on_gold():
    # The last number wins, so "42, never 43" is paid for 43 (the gold number inside a wrong
    # answer); a listed negation word is refused, an unlisted one is not: no word list closes
    # the class. The strict verifier of lesson 9.1 (A4) rejects both.
    assert cat("42, never 43", "43") == "correct"
    assert cat("42, not 43", "43") == "parse_error"
    assert cat(r"\boxed{42}, not 43", "43") == "wrong"


def test_tolerance_constants_are_decimals():
    # Fraction(1e-6) < 10**-6 and Fraction(1e-9) > 10**-9: the tolerances are read as written.
    assert Fraction(1e-6) < Fraction("1e-6") and Fraction(1e-9) > Fraction("1e-9")  # the premise
    assert cat("0.000001", "0") == "correct"  # exactly abs_tol away
    assert cat("0.0000010000000001", "0") == "wrong"
    assert cat("1.000001", "1") == "correct"
    big = 10**27  # rel_tol * ref = 10**18 exactly
    assert cat(str(big + 10**18), str(big)) == "correct"
    assert cat(str(big + 10**18 + 1), str(big)) == "wrong"  # Fraction(1e-9) would accept it
    for bad in (float("inf"), float("nan"), -1e-9):
        with pytest.raises(ValueError):
            verify_numeric_answer("1", "1", abs_tol=bad)


def test_tolerance_false_positives_are_documented():
    # The tolerance is a design choice with false positives of its own (lesson 9.1.4 shows them).
    assert cat("123456789100", "123456789012") == "correct"  # 88 <= 1e-9 * 1.2e11
    assert cat(r"\boxed{1e-7}", "5e-7") == "correct"  # 4e-7 <= abs_tol
    assert cat("0", "9e-7") == "correct"
    assert cat("123456789100", "123456789012", rel_tol=0) == "wrong"


# --- the fail-closed reading as a class: generated spellings (issue: \\frac 1 2 was paid) ---

from helpers import verifiers as V  # noqa: E402

# spaces as a model writes them: Unicode spaces, tabs, line breaks and LaTeX's spacing commands
SPACE_PIECES = [*V._GROUP_SPACES, "\t", "\n", "\\,", "\\;", "\\:", "\\ ", "~", "\\quad "]
SPACES = st.lists(st.sampled_from(SPACE_PIECES), max_size=3).map("".join)
SOME_SPACE = st.lists(st.sampled_from(SPACE_PIECES), min_size=1, max_size=3).map("".join)
ANSWER = st.integers(0, 10**6).map(str)
LEAD = st.sampled_from(["", "so the answer is ", "$", "We get $x = ", "Thus ", "**Answer:** "])
COMMAND = st.from_regex(r"[A-Za-z]{1,10}", fullmatch=True).filter(
    lambda n: n not in V._HARMLESS_COMMANDS | V._TEXT_COMMANDS
)
ARGUMENT = st.one_of(
    st.integers(0, 999).map(str),
    st.sampled_from(list("abnxy")),
    st.integers(0, 999).map(lambda k: "{" + str(k) + "}"),
    st.sampled_from(["{x}", "{a+b}", "{\\pi}"]),
)


@st.composite
def command_spellings(draw):
    """``\\cmd[opt] arg N``: the answer N as the first or later argument of a LaTeX command."""
    parts = [draw(LEAD), "\\" + draw(COMMAND) + draw(st.sampled_from(["", "*"]))]
    if draw(st.booleans()):
        parts.append(draw(SPACES) + "[" + draw(st.sampled_from(["3", "n", "k+1"])) + "]")
    for _ in range(draw(st.integers(0, 2))):
        arg = draw(ARGUMENT)
        parts.append((draw(SPACES) if arg[0] == "{" else draw(SOME_SPACE)) + arg)
    last = parts[-1][-1]
    parts.append((draw(SPACES) if last in "}]" else draw(SOME_SPACE)) + draw(ANSWER))
    return "".join(parts)


@FUZZ
@given(spelling=command_spellings())
def test_an_argument_of_a_latex_command_is_never_read(spelling):
    token, _ = read_tail(spelling)
    r = verify_numeric_answer(spelling, token)
    assert r.category == "parse_error" and r.detail, (spelling, r)


@FUZZ
@given(lead=LEAD, n=ANSWER, gap=SPACES, command=COMMAND, sep=SOME_SPACE)
def test_a_latex_command_after_the_number_is_a_product(lead, n, gap, command, sep):
    r = verify_numeric_answer(f"{lead}{n}{sep}\\{command}{gap}", n)
    assert r.category == "parse_error", r


def test_the_dash_set_is_unicodes():
    import unicodedata

    pd = {c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Pd"}
    assert pd - {"-"} <= set(V._DASHES), sorted(pd - {"-"} - set(V._DASHES))


@FUZZ
@given(lead=LEAD, dash=st.sampled_from(V._DASHES), gap=SPACES, gap2=SPACES, n=ANSWER)
def test_a_dash_before_the_number_is_never_a_minus(lead, dash, gap, gap2, n):
    r = verify_numeric_answer(f"{lead}{gap}{dash}{gap2}{n}", n)
    assert r.category == "parse_error", r


@FUZZ
@given(
    lead=LEAD,
    n=ANSWER,
    sub=ARGUMENT,
    word=st.sampled_from(sorted(V._FUNCTION_WORDS)),
    caps=st.booleans(),
    sep=SOME_SPACE,
    paren=st.booleans(),
)
def test_subscripts_functions_and_factorials(lead, n, sub, word, caps, sep, paren):
    word = word.capitalize() if caps else word
    assert cat(f"{lead}{word}_{sub}{sep}{n}", n) == "parse_error"
    assert cat(f"{lead}{word}({n})" if paren else f"{lead}{word}{sep}{n}", n) == "parse_error"
    assert cat(f"{lead}{n}!", n) == "parse_error"


@FUZZ
@given(
    lead=LEAD,
    n=ANSWER,
    sep=SOME_SPACE,
    text=st.text(alphabet="abc :=", max_size=12),
    harmless=st.sampled_from(sorted(V._SPACING_COMMANDS | V._SO_COMMANDS)),
)
def test_commands_that_take_no_number_may_stand_next_to_it(lead, n, sep, text, harmless):
    # (glued to the brace, "\\text{is}81", the number is read as inside the group: refused)
    assert cat(f"{lead}\\text{{{text}}}{sep}{n}", n) == "correct"
    assert cat(f"{lead}\\{harmless} {n}", n) == "correct"
    assert cat(f"{lead}{n} \\{harmless}", n) == "correct"


# Found by the review of version 1.2's first draft: each is paid by a reading that checks only the
# characters it lists. The reading now allows only plain text and punctuation next to the number.
REVIEW_PAID = [
    ("The answer is \u221a8", "8"), ("\u221b27", "27"), ("2\u221a3", "3"), ("2\u03c0", "2"),
    ("1\u20442", "2"), ("1\u22152", "2"), ("1\u00bd", "1"), ("\u00b13", "3"), ("log\u2082 8", "8"),
    ("12\u2088", "12"), ("5 \uff0b 3", "3"), ("5 \u2219 3", "3"), ("5 \u2a2f 3", "3"), ("5 ~ 3", "3"),
    ("5 x 3", "3"), ("10/(2)", "2"), ("3*(4)", "4"), ("2(4)", "4"), ("-(12)", "12"), ("|-7|", "-7"),
    ("(5)!", "5"), ("(12)\u00b2", "12"), (r"We split 2 ways, so each part is \frac12", "2"),
    (r"Half of 3 is \tfrac32", "3"), (r"x = 5 ... \sqrt8", "5"), (r"so 3 and \log8", "3"),
    ("log2(8)", "8"), ("log2 8", "8"), ("np.log2(8)", "8"), ("log10(1000)", "1000"),
    ("arcsin(0.5)", "0.5"), ("sinh(1)", "1"), ("abs(-3)", "-3"), ("gcd(12, 18)", "18"),
    (r"\gcd(12, 18)", "18"), (r"\operatorname{lcm}(4, 6)", "6"), ("binom(5, 2)", "2"),
    ("the square root of 16", "16"), ("log base 2 of 8", "8"), ("17 mod 5", "5"),
    ("10 choose 3", "3"), ("5 squared", "5"), ("5 factorial", "5"), (r"8 \text{ times } 3", "3"),
    (r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", "2"), ("2 ^" + " " * 801 + "10", "10"),
    ("10" + " " * 65 + "* x", "10"), ("\\sqrt" + " " * 801 + "8", "8"),
    ("\\frac{" + "a" * 250 + "} 8", "8"), ("x = \u2013\n5", "5"), ("2 +\n3", "3"), ("2^\n10", "10"),
    ("$$\\frac 1\n2$$", "2"), ("7 \u2796 y", "7"), ("[1, 2]", "2"),
    # the second review: LaTeX spacing, $, words, relations, lists, ratios, percent signs
    ("50%%", "50"), ("50" + "%" * 1000, "50"), ("50" + " \\%" * 1000, "50"),
    (r"$4\,\times\,3$", "3"), (r"2\,+\,3", "3"), (r"3\,\frac{1}{2}", "1/2"), (r"\pi\,2", "2"),
    (r"\sqrt\,16", "16"), (r"\sqrt\;16", "16"), (r"x = 10^\,3", "3"), (r"\log_2\,8", "8"),
    (r"\mathrm{log}\,8", "8"), (r"\sqrt\quad 16", "16"), (r"2^\quad 3", "3"),
    ("It costs $5 + $3.", "3"), ("$12 - $3", "3"), ("$5 \u00d7 $3", "3"), (r"2^$3$", "3"),
    (r"\sqrt $16$", "16"), ("The answer is negative 5.", "5"), ("2 raised to 3", "3"),
    ("twice 8", "8"), ("half of 8", "8"), ("It is not 5", "5"), ("It is less than 5", "5"),
    ("floor 3.5", "3.5"), ("5 percent of 8", "8"), (r"3 \text{ squared}", "3"),
    (r"3 \text{ factorial}", "3"), (r"3 \text{!}", "3"), (r"\text{square root of } 16", "16"),
    (r"x \neq 5", "5"), (r"x \ne 5", "5"), (r"x \not= 5", "5"), ("x != 5", "5"), (r"\ge 3", "3"),
    ("<= 3", "3"), (">= 3", "3"), ("The point is (3, 5).", "5"), ("The interval is [3, 5].", "5"),
    ("The ratio is 3:5.", "5"), ("The time is 3:45.", "45"), ("between 3 and 5", "5"),
    ("The answer is 3 !", "3"), ("(3) !", "3"),
    # version 1.3: a hyphen bullet is a detached minus sign too ("- 42" could be -42)
    ("- 42", "42"), ("- 42", "-42"),
]  # fmt: skip
REVIEW_KEPT = [
    (r"x \approx 3.14", "3.14"), (r"\ln 2 \approx 0.693", "0.693"), (r"\mathbf{Answer:} 42", "42"),
    ("x = 12 \\mathrm{cm}", "12"), ("Answer: 5 \\hfill", "5"), ("**Answer:** 42", "42"),
    ("The answer is **42**", "42"), ("It is (42).", "42"), ("costs \u20ac81", "81"),
    (r"\(81\)", "81"), (r"\[81\]", "81"), ("$81$", "81"), ("3 times 4 is 12", "12"),
    ("Total: 45\n\n45", "45"), ("-> 81", "81"), ("so 81 apples", "81"), ("x = 5\n!", "5"),
    ("The answer is 7 (approximately).", "7"), ("Answer: 12 (twelve)", "12"),
    ("Final answer: 42 (option C)", "42"), ("`42`", "42"), (r"$12\,\text{cm}$", "12"),
    (r"$12\ \text{cm}$", "12"), ("**Answer: 42**", "42"), ("**The answer is 12**.", "12"),
    (r"42^\circ", "42"), ("42\u00b0", "42"), ("<answer>7</answer>", "7"), ("* 42", "42"),
    ("Answer\uff1a7", "7"), ("7\u3002", "7"), ("7\u2026", "7"), ("x = -3", "-3"),
    (r"$\frac{3}{4}$", "3/4"), ("Therefore, the final answer is 7", "7"), ("It costs $12.", "12"),
    ("3 + 4 = 7\nSo the answer is\n7", "7"),
]  # fmt: skip


@pytest.mark.parametrize("response, reference", REVIEW_PAID)
def test_what_the_review_found_paid_is_refused(response, reference):
    r = verify_numeric_answer(response, reference, max_chars=None)
    assert r.category == "parse_error" and r.detail, (response, r)


@pytest.mark.parametrize("response, reference", REVIEW_KEPT)
def test_plain_text_and_punctuation_around_the_number_are_read(response, reference):
    assert cat(response, reference) == "correct"


# every symbol and number form except the degree sign, which reads as a unit mark (a space, like
# LaTeX's ^\circ: "42\u00b0" is 42)
SYMBOLS = [chr(c) for c in range(0x80, 0x30000)
           if unicodedata.category(chr(c)) in ("Sm", "So", "Sk", "No", "Nl") and chr(c) != "\u00b0"]  # fmt: skip


def test_every_symbol_on_either_side_refuses_the_reading():
    """The same class as the property test below, enumerated: all 8 000-odd symbols, glued and
    spaced, on both sides (hypothesis samples; this leaves none out)."""
    paid = [(c, side) for c in SYMBOLS for gap in ("", " ") for side, text in
            (("left", f"x {c}{gap}7"), ("right", f"7{gap}{c}"))
            if verify_numeric_answer(text, "7").category == "correct"
            and not (side == "left" and c in V._LEFT_OK)
            and not (side == "right" and c in V._DASHES and c not in V._MINUS_LIKE)]  # fmt: skip
    assert not paid, paid[:20]


# the signs the number grammar reads glued to the digits that are symbols too (+ and - are ASCII)
GLUED_SIGNS = [c for c in SYMBOLS if V._NUMBER_FULL.fullmatch(f"{c}5")]


def test_the_only_glued_sign_among_the_symbols_is_the_minus_sign():
    assert GLUED_SIGNS == ["\u2212"]
    assert cat("\u22120", "0") == "correct" and cat("\u22125", "5") == "wrong"
    assert cat("\u22125", "-5") == "correct" and cat("\u2212 5", "5") == "parse_error"


@FUZZ
@given(symbol=st.sampled_from(SYMBOLS), gap=SPACES, n=ANSWER, lead=LEAD)
def test_no_symbol_nobody_listed_stands_next_to_the_number(symbol, gap, n, lead):
    """The allow-list closes the class: any mathematical or other symbol, any number form, on
    either side (spaces allowed), refuses the reading, except the listed arrows of "so" before it
    and typographic dashes after it, and the minus sign U+2212 glued to the digits, which is the
    number's sign (the grammar's rule: "\u22125" reads as -5, so "\u22120" is 0)."""
    if symbol in GLUED_SIGNS and gap == "":
        assert cat(f"{lead}{symbol}{n}", n) == ("correct" if int(n) == 0 else "wrong"), symbol
    elif symbol not in V._LEFT_OK:
        assert cat(f"{lead}{symbol}{gap}{n}", n) == "parse_error", symbol
    if symbol not in V._DASHES or symbol in V._MINUS_LIKE:
        assert cat(f"{lead}{n}{gap}{symbol}", n) == "parse_error", symbol


# --- the classes closed in version 1.3 (issue 20, section 3: a class, not a list) -----------------

# Every Unicode space, LaTeX's spacing, and an empty group: what a model may put between a command,
# a dash or a sign and the number.
EVERY_SPACE = [c for c in map(chr, range(0x110000)) if c.isspace()]
GAP_PIECES = [
    *EVERY_SPACE,
    "\\,",
    "\\;",
    "\\:",
    "\\!",
    "\\ ",
    "~",
    "\\quad ",
    "\\qquad ",
    "{}",
    "{ }",
]
GAP = st.lists(st.sampled_from(GAP_PIECES), max_size=3).map("".join)
SOME_GAP = st.lists(st.sampled_from(GAP_PIECES), min_size=1, max_size=3).map("".join)
# command names: the ones a model writes, and random letters
LATEX_NAMES = st.sampled_from(
    "frac dfrac tfrac cfrac sqrt binom dbinom choose over atop log ln lg exp sin cos tan arcsin "
    "sinh lim sum prod int min max gcd lcm det mathbf mathrm mathit mathbb boldsymbol bm "
    "operatorname displaystyle textstyle hat bar vec overline underline cancel not neg lnot "
    "minus pm mp cdot times div ast circ deg left right bigl bigr Bigl text textbf mbox".split()
) | st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True)
OPTIONS = st.sampled_from(
    ["", "[3]", "[n]", "[k+1]", "[ 3 ]", "_2", "_{2}", "_{10}", "^2", "^{n}", "_b^{2}", "^*", "{}",
     "{x}", "{2}", "a", "3", "\\left(", "\\bigl("]
)  # fmt: skip
# every dash: ASCII hyphen-minus, category Pd, U+2212 minus and the other minus-like marks
EVERY_DASH = sorted(
    {"-", "\u2212", *V._DASHES, *V._MINUS_LIKE}
    | {c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Pd"}
)
NUMBER = st.one_of(
    st.integers(0, 10**9).map(str),
    st.decimals(0, 10**6, places=3, allow_nan=False).map(str),
    st.fractions(0, 1000, max_denominator=20).map(str),
)


def never_pays(response, reference):
    r = verify_numeric_answer(response, reference, max_chars=None)
    assert r.category in CATEGORIES and r.category != "error", (response, r)
    assert r.reward == 0.0, (response, reference, r)
    return r


@st.composite
def command_before_number(draw):
    """``\\name[opt]_sub^sup  N``: a command before the number, spaces and arguments between."""
    name = draw(LATEX_NAMES)
    assume(name not in V._SPACING_COMMANDS | V._SO_COMMANDS | V._TEXT_COMMANDS)
    parts = [draw(LEAD), "\\", name, draw(st.sampled_from(["", "*"]))]
    for _ in range(draw(st.integers(0, 2))):
        parts += [draw(GAP), draw(OPTIONS)]
    n = draw(NUMBER)
    parts += [draw(SOME_GAP), n, draw(st.sampled_from(["", ".", "\\right)", ")", " \\bigr)"]))]
    return "".join(parts), n


@FUZZ
@given(spelling=command_before_number())
def test_a_number_after_a_latex_command_never_pays(spelling):
    response, n = spelling
    r = never_pays(response, n)
    if n.replace(".", "").isdigit():  # the last number is n: the reading is refused, with a reason
        assert r.category == "parse_error" and r.detail, (response, r)


@FUZZ
@given(
    lead=LEAD,
    word=st.sampled_from(sorted(V._FUNCTION_WORDS) + ["lb", "ld", "f", "Log"]),
    mark=st.sampled_from(["_", "^"]),
    sub=st.sampled_from(["2", "{2}", "10", "b", "{b}", "{10}"]),
    gap=SOME_GAP,
    n=NUMBER,
)
def test_a_number_after_a_subscript_never_pays(lead, word, mark, sub, gap, n):
    never_pays(f"{lead}{word}{mark}{sub}{gap}{n}", n)


@FUZZ
@given(lead=LEAD, before=GAP, dash=st.sampled_from(EVERY_DASH), gap=GAP, n=NUMBER, tail=LEAD)
def test_a_dash_before_the_number_never_pays_the_unsigned_number(lead, before, dash, gap, n, tail):
    """Any dash, spaced or glued, never pays the unsigned number; a detached one (any space, at
    the start of a line too: "- 5" may be a bullet or a minus) pays neither sign."""
    glued_sign = gap == "" and dash in "-\u2212"
    text = f"{lead}{before}{dash}{gap}{n}"
    if not glued_sign:
        never_pays(text, n)
        never_pays(text, f"-{n}")
    elif Fraction(n) != 0:
        never_pays(text, n)  # "-5" is -5, never 5
        assert cat(f"x = {dash}{n}", f"-{n}") == "correct"  # ... and a glued sign is read


@FUZZ
@given(lead=LEAD, n=NUMBER, gap=st.sampled_from(["", " ", "\\,", "\u2009", "\t", "{}"]),
       end=st.sampled_from(["", ".", " ", "!", "$", "\n"]))  # fmt: skip
def test_a_factorial_never_pays(lead, n, gap, end):
    never_pays(f"{lead}{n}{gap}!{end}", n)
    never_pays(rf"{lead}\boxed{{{n}!}}", n)


@FUZZ
@given(n=st.integers(-(10**9), 10**9), lead=st.sampled_from(["", "The answer is ", "x = ", "So "]),
       end=st.sampled_from(["", ".", " ", "\n", "?", ".\n"]))  # fmt: skip
def test_plain_correct_answers_still_pay(n, lead, end):
    for response in (f"{lead}{n}{end}", rf"\boxed{{{n}}}", rf"{lead}$\boxed{{{n}}}$", f"**{n}**",
                     f"{lead}{str(n).replace('-', chr(0x2212))}{end}", f"* {n}"):  # fmt: skip
        assert cat(response, str(n)) == "correct", response


# Each spelling that version 1.2 still paid (the list, then what generating the class
# found: Unicode spaces other than the listed ones, an empty group, \\left( after a command, a
# hyphen bullet, a bare group, a delimiter command without its bracket).
STILL_PAID_IN_1_2 = [
    (r"\frac 1 2", "2"), (r"1 \over 2", "2"), (r"\sqrt 8", "8"), (r"2\sqrt 2", "2"),
    (r"\binom 5 2", "2"), (r"\sqrt[3] 8", "8"), (r"\log 8", "8"), ("log_2 8", "8"),
    ("x = \u2013 5", "5"), ("x = \uff0d 5", "5"), ("x = \u2014 5", "5"), ("x = \u2212 5", "5"),
    ("x = \u2212 5", "-5"), ("x = - 5", "5"), ("x = - 5", "-5"), ("x = \u2010 5", "5"),
    ("x = \u2e3a 5", "5"), ("x = \ufe63 5", "5"), ("5!", "5"), ("5 !", "5"),
    # found by the generators above
    ("\u2014{} 7780", "7780"), ("-{}5", "5"), ("-{}5", "-5"), ("x = \u2013{ }5", "5"),
    ("\\sqrt\u3000{}\\,9434", "9434"), ("\\sin*\u2003a\u2003{2}\\;819", "819"),
    ("\\sqrt\u2003 8", "8"), ("\\log\u205f8", "8"), ("\\mathrm*\\;{}\\quad {}\u20092164", "2164"),
    (r"\log\left( 8 \right)", "8"), (r"\foo \left( 8 \right)", "8"),
    (r"\sqrt \bigl[ 8 \bigr]", "8"),
    (r"\left\left( 9538)", "9538"), (r"\left 1971", "1971"), (r"\right 8010", "8010"),
    (r"\right* a 3457", "3457"), (r"\mathbf{2} 1895", "1895"), (r"\text{2}  7136", "7136"),
    ("{x} 5", "5"), ("\u2014{x} 5", "5"), ("\\text{x =} \u2013 5", "5"), (r"\text{so} - 5", "5"),
    ("x^2a 3162", "3162"), (r"\frac aa 0", "0"), (r"\frac ab 2", "2"), (r"\sqrt xy 8", "8"),
    (r"\frac^*a 0", "0"), ("x^* 5", "5"), (r"\right (4086)", "4086"), ("- 42", "42"), ("x =\n- 5", "5"), ("\\quad - 1596", "1596"),
    ("~-\t8840", "8840"), (" -  4147", "4147"), ("\n\t-\\; 1005", "1005"),
]  # fmt: skip


@pytest.mark.parametrize("response, reference", STILL_PAID_IN_1_2)
def test_what_version_1_2_still_paid_is_refused(response, reference):
    r = never_pays(response, reference)
    assert r.category == "parse_error" and r.detail, (response, r)


def test_percent_is_the_number_of_percent():
    # 50% is 50 (the tasks state percentages), not 0.5; two percent signs are refused
    assert cat("50%", "50") == cat(r"50\%", "50") == "correct"
    assert cat("50%", "0.5") == "wrong"
    assert cat("50%%", "50") == "parse_error"


@FUZZ
@given(ref=st.integers(-(10**9) + 1, 10**9 - 1), delta=st.integers(-3, 3).filter(bool))
def test_a_wrong_integer_is_never_paid_below_1e9(ref, delta):
    # what the docstrings claim about integers, and no more: not an exact comparison
    assert cat(str(ref + delta), str(ref)) == "wrong"
    assert cat(rf"\boxed{{{ref}.0000001}}", str(ref)) == "correct"  # within abs_tol: paid


def test_the_tolerance_is_not_exact_for_integers():
    assert cat(r"\boxed{12.0000001}", "12") == "correct"
    assert cat("1000000001", "1000000000") == "correct"  # rel_tol * 10**9 = 1
    assert cat("999999999", "999999998") == "wrong"
    doc = " ".join(verify_numeric_answer.__doc__.split()) + " ".join(V.__doc__.split())
    assert "not compared exactly" in doc and "12.0000001" in doc


def test_the_sloppy_docstring_says_what_the_strict_rule_still_pays():
    import ast
    import inspect

    body = ast.parse(inspect.getsource(V)).body  # the string after the assignment documents it
    at = next(
        i
        for i, node in enumerate(body)
        if isinstance(node, ast.Assign)
        and ast.unparse(node.targets[0]) == "verify_arithmetic_sloppy"
    )
    doc = " ".join(body[at + 1].value.value.split())
    task = choice_task()
    for completion in ('" 810"', '" 81 or 79"'):
        assert completion in doc
        assert verify_arithmetic(task, completion.strip('"')) == 0.0
        assert verify_arithmetic_sloppy(task, completion.strip('"')) == 1.0
    assert '" 79 or 81"' in doc  # an echo that ends on the sum: both rules pay it
    assert (
        verify_arithmetic(task, " 79 or 81") == verify_arithmetic_sloppy(task, " 79 or 81") == 1.0
    )


@functools.cache
def _lesson_9_5_choice_rule():
    """Lesson 9.5's patched choice rule (``verify_choice_exact``), taken from the lesson source."""
    import ast
    from pathlib import Path

    from helpers.verifiers import Verdict, Verifier

    source = Path(__file__).resolve().parents[1] / "course" / "lessons" / "9.5" / "lesson.py"
    wanted = [
        node
        for node in ast.parse(source.read_text()).body
        if (isinstance(node, ast.FunctionDef) and node.name == "_exact_choice")
        or (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "verify_choice_exact")
    ]
    assert len(wanted) == 2, "lesson 9.5 no longer defines _exact_choice / verify_choice_exact"
    namespace = {"Task": Task, "Verdict": Verdict, "Verifier": Verifier, "last_number": last_number}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), str(source), "exec"), namespace)
    return namespace["verify_choice_exact"]


@pytest.mark.parametrize(
    "completion, category",
    [(" 81", "correct"), (" 81.", "correct"), (" 79", "wrong"), (" \u0668\u0661", "no_answer"),
     (" \u00b2", "no_answer"), (" \u00b9", "no_answer"), (" \uff18\uff11", "no_answer"),
     (" 8\u0661", "parse_error"), (" \u0668", "no_answer"), (" 81\u00b2", "parse_error")],
)  # fmt: skip
def test_the_patched_choice_rule_reads_ascii_digits_only(completion, category):
    # str.isdigit() alone took Arabic-Indic digits for 81 and raised on a superscript two
    v = _lesson_9_5_choice_rule()
    assert "ASCII digits" in " ".join(v.passport["rules"])
    verdict = v.check(choice_task(), completion)
    assert verdict.category == category, (completion, verdict)


@FUZZ
@given(text=st.text(max_size=8))
def test_the_patched_choice_rule_never_raises(text):
    verdict = _lesson_9_5_choice_rule().check(choice_task(), text)
    assert verdict.category in CATEGORIES and verdict.category != "error"
    assert verdict.reward == 0.0 or text.strip().removesuffix(".").strip() == "81"


# --- bounded time ------------------------------------------------------------------------------

MEGABYTE_INPUTS = [
    "a" * 1_000_000,
    "9" * 1_000_000,
    "1," * 500_000,
    "1,234" * 200_000,
    "-" * 1_000_000,
    "9." * 500_000,
    "1/" * 500_000,
    r"\boxed{" * 140_000,
    "{" * 1_000_000,
    "}" * 1_000_000,
    r"\boxed{" + "{" * 999_000,
    "1e" * 500_000,
    "x1 " * 333_333,
    "{}" * 500_000,  # version 1.3 reads an empty group as spaces
    "\\left(" * 166_666,
    "\u3000" * 999_999 + "-",
]


def _cpu_seconds(fn, reps: int = 3) -> float:
    """Least CPU time of ``reps`` calls (``time.process_time``: not the time the OS gave to other
    programs, so a loaded machine changes it little)."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


@pytest.mark.parametrize("response", MEGABYTE_INPUTS, ids=range(len(MEGABYTE_INPUTS)))
def test_megabyte_responses_scale_linearly(response):
    # A guard against super-linear behaviour, not a benchmark (bench/bench_verifier.py times it):
    # 8x the characters must cost well under 8^2 = 64x the CPU time. Linear work gives about 8x;
    # the bound 24 leaves room for noise, and a quadratic scan (64x) or worse fails it. The cap
    # is switched off here so that the whole string is read.
    small = response[: len(response) // 8]
    r = verify_numeric_answer(response, "81", max_chars=None)
    assert r.category in CATEGORIES and r.reward == 0.0
    t_small = _cpu_seconds(lambda: verify_numeric_answer(small, "81", max_chars=None))
    t_big = _cpu_seconds(lambda: verify_numeric_answer(response, "81", max_chars=None))
    assert t_big <= 24 * max(t_small, 1e-3), (t_small, t_big)
    assert verify_numeric_answer(response, "81").category == "too_long"  # default cap


# --- hypothesis --------------------------------------------------------------------------------

ANY_TEXT = st.text(max_size=300)
# Text rich in the characters the parser cares about.
PARSER_TEXT = st.text(
    alphabet=st.sampled_from(list("0123456789,./-+eE{}\\ boxedfrac\n\x00\u2212")) | st.characters(),
    max_size=200,
)


@FUZZ
@given(response=ANY_TEXT | PARSER_TEXT, reference=st.sampled_from(["81", "3/7", "-5", "0.5"]))
def test_fuzz_never_raises_and_category_known(response, reference):
    r = verify_numeric_answer(response, reference)
    assert r.category in CATEGORIES and r.category != "error"
    assert r.reward in (0.0, 1.0)
    assert (r.reward == 1.0) == (r.category == "correct")


@FUZZ
@given(response=st.one_of(st.none(), st.binary(), st.integers(), st.floats(), st.lists(st.text())))
def test_fuzz_non_str_input(response):
    assert verify_numeric_answer(response, "81").category == "invalid_input"
    for v in VERIFIERS.values():
        task = Task(prompt="", answer="81", family="arithmetic_choice")
        assert v(task, response) == 0.0


NUMBER_OR_WORD = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.fractions(max_denominator=50).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from(["nan", "inf", "1/0", r"\boxed{", "}", "{", "=", "+", ",", ".", "\\frac"]),
    st.text(alphabet="abcxyz ,.;:\n", max_size=5),
)


@FUZZ
@given(parts=st.lists(NUMBER_OR_WORD, max_size=12), ref=st.integers(-1000, 1000))
def test_fuzz_no_false_positive(parts, ref):
    """Text in which no number has the reference value is never marked correct."""
    assume(all(parse_number(p) != ref for p in parts))
    r = verify_numeric_answer(" ".join(parts), str(ref))
    assert r.category != "correct"


@FUZZ
@given(
    before=st.lists(NUMBER_OR_WORD, max_size=6),
    ref=st.integers(-1000, 1000),
    delta=st.integers(1, 100),
    boxed=st.booleans(),
)
def test_fuzz_gold_in_wrong_place(before, ref, delta, boxed):
    """The gold answer before a different final answer never scores (a box beats plain text)."""
    if boxed:  # gold as text and in an earlier box, then a different last box
        gold, final = [str(ref), rf"\boxed{{{ref}}}"], rf"\boxed{{{ref + delta}}}"
    else:  # no boxes: gold as text, then a different last number
        gold, final = [str(ref), f"{ref}/1", f"{ref}.0"], str(ref + delta)
    before = [p for p in before if "boxed" not in p]
    text = " ".join([*before, *gold, "so the answer is", final])
    assert verify_numeric_answer(text, str(ref)).category == "wrong"


@FUZZ
@given(
    prefix=st.text(alphabet="abc xyz=.\n", max_size=30),
    ref=st.fractions(max_denominator=100).filter(lambda f: abs(f) < 10**6),
    style=st.sampled_from(["plain", "boxed", "frac", "decimal"]),
)
def test_fuzz_correct_answer_is_found(prefix, ref, style):
    if style == "frac":
        sign = "-" if ref < 0 else ""
        text = rf"\boxed{{{sign}\frac{{{abs(ref.numerator)}}}{{{ref.denominator}}}}}"
    elif style == "decimal":
        text = f"{float(ref):.9f}"
    elif style == "boxed":
        text = rf"\boxed{{{ref}}}"
    else:
        text = str(ref)
    r = verify_numeric_answer(f"{prefix} {text}", str(ref))
    assert r.category == "correct", (text, r)


# --- task verifiers ----------------------------------------------------------------------------


def choice_task(answer="81", options=(81, 79)):
    return Task(
        prompt=f"Q: 23+58=? Options: {options[0]} or {options[1]}. A:",
        answer=answer,
        family="arithmetic_choice",
        meta={"options": options},
    )


@pytest.mark.parametrize(
    "completion, reward",
    [
        (" 81", 1.0),
        (" 81\nQ: 1+1=? A: 2", 0.0),  # the model kept going: the last integer is 2
        (" The answer is 81.", 1.0),  # answer correctness, not "only a number" compliance
        (" 79 or 81", 1.0),
        (" 81 or 79", 0.0),
        (" 79", 0.0),
        (" 81.5", 0.0),  # the last number is not an integer
        (" 8,1", 0.0),
        (" 79-81", 0.0),  # the last integer is part of a difference: fails closed
        (" 79 - 81", 0.0),
        (" 2^81", 0.0),
        (" 79\u201381", 0.0),  # en dash
        (" 81 is 80+1", 0.0),
        (" eighty-one", 0.0),
        ("", 0.0),
        (" 1810", 0.0),
        (None, 0.0),
        (" 81" + " " * 20_000, 0.0),
    ],
)
def test_verify_arithmetic_choice(completion, reward):
    assert verify_arithmetic(choice_task(), completion) == reward


def test_verify_arithmetic_free_response_delegates_to_numeric():
    for t in make_tasks("arithmetic", 30, seed=1):
        assert verify_arithmetic(t, rf"Working... \boxed{{{t.answer}}}") == 1.0
        assert verify_arithmetic.check(t, rf"\boxed{{{t.answer}}}").category == "correct"
        assert verify_arithmetic(t, rf"\boxed{{{t.answer}}} \boxed{{1/3000}}") == 0.0
        assert NUMERIC(t, rf"\boxed{{{t.answer}}}") == 1.0


def test_verify_arithmetic_on_generated_tasks():
    for t in make_tasks("arithmetic_choice", 50, seed=3):
        wrong = next(o for o in t.meta["options"] if str(o) != t.answer)
        assert verify_arithmetic(t, f" {t.answer}") == 1.0
        assert verify_arithmetic(t, f" {wrong}") == 0.0


def test_sloppy_verifier_is_exploitable():
    task = choice_task()
    exploits = [" 79 81 79", " 81 or 79", " 1 2 3 ... 79 80 81 82 83", " 1810", " 818181 0"]
    for c in exploits:
        assert verify_arithmetic_sloppy(task, c) == 1.0
        assert verify_arithmetic(task, c) == 0.0, c
    assert verify_arithmetic_sloppy(task, " 79") == 0.0
    assert verify_arithmetic_sloppy(task, None) == 0.0


@pytest.mark.parametrize(
    "completion, category",
    [
        (' "apple"}', "correct"),
        (' "apple"} and then some text {', "correct"),  # text after the first object is allowed
        (" 42}", "correct"),
        (' {"nested": [1, 2, null]}}', "correct"),
        (" null}", "correct"),
        (' "apple", "extra": true}', "correct"),
        (' "apple"', "parse_error"),  # never closed
        (" apple}", "parse_error"),
        (" NaN}", "parse_error"),  # strict JSON only
        (" Infinity}", "parse_error"),
        (" -Infinity}", "parse_error"),
        (' "apple",}', "parse_error"),
        (" 'apple'}", "parse_error"),
        (' "a\x00b"}', "parse_error"),  # raw control character in a string
        ("", "parse_error"),
        (" " + "[" * 50 + "]" * 50 + "}", "correct"),
        (" " + "[" * 5000 + "]" * 5000 + "}", "parse_error"),  # deeper than json's recursion
        (None, "invalid_input"),
        (' "apple"}' + " " * 20_000, "too_long"),
    ],
)
def test_verify_format(completion, category):
    task = Task(
        prompt=f"Item: apple. Reply in JSON. {FORMAT_PREFIX}", answer="apple", family="format"
    )
    v = verify_format.check(task, completion)
    assert v.category == category
    assert v.reward == (1.0 if category == "correct" else 0.0)


def test_verify_format_adversarial_without_cap():
    uncapped = dataclasses.replace(verify_format, config={"max_chars": None})
    task = make_tasks("format", 1)[0]
    for c in [" " + "[" * 200_000, " " + "{" * 200_000, " 1" + "0" * 100_000 + "}", '"' * 10**6]:
        t0 = time.perf_counter()
        assert uncapped.check(task, c).category in ("parse_error", "correct")
        assert time.perf_counter() - t0 < 1.0
    assert uncapped.passport["config_hash"] != verify_format.passport["config_hash"]


@FUZZ
@given(completion=st.text(max_size=200), family=st.sampled_from(["arithmetic_choice", "format"]))
def test_fuzz_task_verifiers_never_raise(completion, family):
    task = Task(prompt="", answer="81" if family != "format" else "apple", family=family)
    for name, v in VERIFIERS.items():
        verdict = v.check(task, completion)
        assert verdict.category in CATEGORIES
        assert v(task, completion) in (0.0, 1.0)
        if (name == "format") == (family == "format"):  # a verifier on its own task family
            assert verdict.category != "error"


@pytest.mark.parametrize("answer", ["not a number", "2.5", "3/7", "", " 81", None, 81])
def test_non_integer_reference_is_invalid_reference(answer):
    bad = Task(prompt="", answer=answer, family="arithmetic_choice")
    assert verify_arithmetic.check(bad, " 81").category == "invalid_reference"
    assert verify_arithmetic(bad, " 81") == 0.0


def test_check_turns_exceptions_into_error_category():
    def boom(task, completion):
        raise RuntimeError("a bug inside the verifier")

    broken = dataclasses.replace(verify_arithmetic, fn=boom, config={})
    v = broken.check(choice_task(), " 81")
    assert v.category == "error" and "RuntimeError" in v.components["exception"]
    assert broken(choice_task(), " 81") == 0.0


# --- passports ---------------------------------------------------------------------------------


def test_passports_stable_and_distinct():
    hashes = set()
    for name, v in VERIFIERS.items():
        p = v.passport
        assert set(p) == {"name", "version", "rules", "config", "config_hash"}
        assert p["name"] == name and len(p["config_hash"]) == 16
        assert all(isinstance(r, str) for r in p["rules"])
        assert v.passport == p  # stable across calls
        p["config"]["max_chars"] = -1  # a caller's copy, not the verifier's config
        assert v.passport["config_hash"] == p["config_hash"]
        hashes.add(p["config_hash"])
    assert len(hashes) == len(VERIFIERS)
    assert set(VERIFIERS) == {"numeric", "arithmetic", "format", "arithmetic_sloppy"}


def test_passport_hash_is_pinned():
    # Changing a rule, the version or the config must change these; update them on purpose.
    assert verify_arithmetic.passport["config_hash"] == PINNED["arithmetic"]
    assert {n: v.passport["config_hash"] for n, v in VERIFIERS.items()} == PINNED


PINNED = {
    "numeric": "67d0a2fb204b5152",
    "arithmetic": "a2075064a4432d75",
    "format": "f8886095093c40e3",
    "arithmetic_sloppy": "b1a5caa94fcad5bc",
}
