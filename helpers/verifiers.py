"""Verifiers: programs that turn a completion into a reward, each with a passport.

What it implements
- ``verify_numeric_answer`` is the numeric checker of lesson 9.1.4, with the verifier stack of
  lesson 9.1.3 made explicit: extraction (last ``\\boxed{...}``, else the last number in the text),
  canonicalisation (thousands separators, ``\\frac``), exact parsing with ``Fraction``, a
  tolerance check, and a named failure category for every way a response can fail.
- ``verify_arithmetic``, ``verify_format`` and ``verify_arithmetic_sloppy`` are the task verifiers
  of the BaseLM lab (lesson 9.5), ``verify(task, completion) -> float``. The sloppy one is
  broken on purpose (the reward-hacking audit).
- Every verifier is a ``Verifier`` object: callable for the reward, ``.check`` for the reward with
  its category and parts, ``.passport`` for the record a run stores (name, version, rules,
  config, and a hash of them).

Where it departs from the lessons' plain description
- Bad input is a category, never an exception: any ``str`` (empty, megabytes, ``1e999999999``,
  unbalanced braces, control characters) and any non-``str`` get a reward of 0.0 and a category
  in bounded, linear time. Numbers longer than ``max_number_chars`` digits, or with an exponent
  larger than that, are refused (``parse_error``) before ``Fraction`` builds a big integer.
- The "last number" reading fails closed (version 1.2, classes closed in 1.3): when the last
  number of an unboxed response is part of a larger expression the grammar does not parse (a
  power ``2^{10}``, ``5\u00b2``, ``10**3``; a product or sum ``2 * 5``, ``3-5``; a LaTeX group
  ``\\sqrt{8}``; an argument of a LaTeX command, with or without braces, spaces or an ``[...]``
  option, ``\\sqrt 8``, ``\\sqrt[3] 8``, ``\\frac 1 2``, ``1 \\over 2``, ``\\log 8``,
  ``\\log\\left(8\\right)``, or after letters that follow a command, ``\\frac ab 2`` (so
  ``\\alpha is 5`` is refused too); a subscript or superscript, ``log_2 8``, ``\\sqrt^2 8``; a
  function written as a word, ``log 8``, ``sqrt(8)``; a factorial, ``!`` after the number on its
  line, ``5!``, ``5 !``; digits grouped by spaces, apostrophes or a comma that is not a
  thousands group, ``1 234 567``, ``1'234'567``, ``1.234,56``; a dash before the number that is
  not a sign glued to it, see below), the response is a ``parse_error``, never the smaller
  number. "Spaces" here are every Unicode space (``str.isspace``), LaTeX spacing (``\\,``
  ``\\;`` ``\\quad`` ``~``) and an empty group ``{}`` that is no command's argument.
- Signs and dashes: a sign is part of the number only when it is glued to the digits, ASCII
  ``-``/``+`` or the minus sign U+2212 (``-5`` and ``\u22125`` read as -5). Any other dash before
  the number never pays the unsigned number: a detached ``-`` or U+2212 (``- 5``, ``\u2212 5``,
  also ``- 5`` at the start of a line, which could be a list bullet or a minus sign) is an
  operator, and every Unicode dash (category Pd: ``\u2013 5``, ``\u20145``, full-width
  ``\uff0d 5``) and the other minus-like marks are not minus signs, glued or spaced: all are a
  ``parse_error``, whatever the reference's sign. A dash *after* the number is punctuation.
  ``\\frac{a}{b}`` in running text is the fraction a/b. Beyond those named classes the reading
  is an allow-list (``_context``): next to the number, spaces, line breaks and LaTeX spacing
  (``\\,`` ``\\quad`` ``~``) skipped, and ``$``, backticks and currency signs read through, may
  stand only words that are not function, operator or negation words, punctuation, ``=``, ``:``
  (not a ratio ``3:5``), a tag (``<answer>``), markdown bold or a ``*``/``+`` list bullet, a
  parenthetical of words after it, LaTeX math delimiters, a bracket pair that holds the number
  alone, and commands that take no number (spacing ``\\quad``, "so" arrows and relations
  ``\\Rightarrow``, ``\\approx``, delimiters ``\\left(`` with their bracket, and
  ``\\text{...}`` of words before it; a bare group ``{x} 5`` does not). Any other symbol
  (``\u221a8``, ``2\u03c0``, ``|8|``, ``\u00b13``, ``2(4)``) refuses the reading, and so does a
  digit anywhere after the last standalone number (``\\frac12``, ``x2``, ``1\u00bd``).
- A percent sign after the number is dropped: ``50%`` and ``50\\%`` read as 50, the number of
  percent, as the tasks state percentages (a reference of 0.5 does not match it; a task whose
  answer is a fraction of one must ask for it). Two percent signs (``50%%``) are a parse_error.
- The specification leaves the tolerance open; ours is stated:
  ``|x - ref| <= max(abs_tol, rel_tol*|ref|)`` with ``abs_tol=1e-6`` (six decimal places) and
  ``rel_tol=1e-9``, compared exactly in rationals,
  the tolerances read as the decimals they are written as (``Fraction("1e-06")``, not the binary
  float ``Fraction(1e-6)``, which is slightly below 10**-6). The lesson's own example
  (``\\boxed{3/7}`` against ``"0.428571"``) passes through ``abs_tol``. So an integer reference
  is *not* compared exactly: ``\\boxed{12.0000001}`` is paid for 12. What holds is narrower: a
  wrong *integer* is never paid for an integer reference below 10**9 in magnitude (there
  ``|x - ref| >= 1 > max(1e-6, 1e-9*|ref|)``); from 10**9 up ``1000000001`` is paid for 10**9.
- ``verify_format`` accepts strict JSON only: ``NaN`` and ``Infinity`` (which Python's ``json``
  accepts by default) are parse errors.

Not a general mathematical verifier: no symbolic equality (sqrt(8) vs 2*sqrt(2)), sets,
intervals, or units.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from helpers.tasks import FORMAT_PREFIX, Task

CATEGORIES = (
    "correct",  # the extracted answer matches the reference
    "wrong",  # an answer was extracted and parsed, and it does not match
    "no_answer",  # no \boxed{} and no number anywhere in the text
    "parse_error",  # an answer was found but is not a number we accept (or is too long)
    "too_long",  # the response is over max_chars; not read at all
    "invalid_input",  # the response is not a str (None, bytes, int, ...)
    "invalid_reference",  # the reference answer itself does not parse: a task bug, not the model's
    "error",  # an unexpected exception inside a verifier; reward 0 (tests keep this at zero)
)

# ---------------------------------------------------------------------------------------------
# Number grammar. ASCII only (``\d`` would also match Arabic-Indic and other digits).
# An integer part is either grouped by thousands ("1,234,567": 1-3 digits, then groups of exactly
# three) or a plain run of digits. "1, 2" and "1,23" are not grouped, so lists stay lists.
_INT = r"(?:[0-9]{1,3}(?:(?:,|\{,\})[0-9]{3})+(?![0-9])|[0-9]+)"  # "{,}" is LaTeX's comma
_NUMBER = (
    r"(?P<sign>[-+\u2212]?)"  # ASCII minus/plus, or the Unicode minus sign
    rf"(?P<int>{_INT})"
    rf"(?:/(?P<den>{_INT})"  # a fraction of two integers, "3/7"
    r"|(?P<dec>\.[0-9]+)?(?P<exp>[eE][-+]?[0-9]+)?)"  # or a decimal, maybe with an exponent
)
_NUMBER_FULL = re.compile(_NUMBER, re.ASCII)
# In running text a number must stand alone: not glued to a word, a decimal point or a slash on
# the left ("x2", "v1.5", "2/3/4"), nor to a word, ".digit" or "/digit" on the right ("42nd",
# "1.2.3"). The left look-behind gives each digit run one starting point, so the scan is linear.
# A LaTeX fraction "\\frac{a}{b}" (or \\dfrac, \\tfrac) is one token, tried before the numbers
# inside it.
_FRAC_TOKEN = r"[-+\u2212]?\\[dt]?frac\{[^{}]*\}\{[^{}]*\}"
_NUMBER_IN_TEXT = re.compile(
    rf"(?<![\w./])(?:{_FRAC_TOKEN}|{_NUMBER})(?!\w|\.[0-9]|/[0-9])", re.ASCII
)
_FRAC = re.compile(r"([-+\u2212]?)\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}", re.ASCII)
# What may not touch the last number of a response read without a box (``read_tail``).
# Every dash of Unicode (category Pd) but the ASCII hyphen-minus, which is a sign or an operator,
# and the other minus-like marks (hyphen bullet, modifier minus, heavy minus).
_DASHES = (  # every Unicode dash (category Pd) is here: a test checks
    "\u02d7\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2796\u2e17\u2e1a"
    "\u2e3a\u2e3b\u2e40\u2e5d\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
)
_SUPERSCRIPTS = "\u00b2\u00b3\u00b9\u2070\u2071\u2074\u2075\u2076\u2077\u2078\u2079" + "".join(
    map(chr, range(0x207A, 0x2080))
)  # superscript digits, signs, brackets and n
_OPERATORS = "+-*/^\u2212\u00d7\u00f7\u00b7\u22c5\u2217"  # + - * / ^, minus, times, divide, dots
_LATEX_OPERATORS = ("\\times", "\\cdot", "\\div", "\\pm", "\\mp", "\\ast")
# LaTeX commands that may stand next to the last number without taking it as an argument: spacing,
# arrows of "so", delimiters, and (before the number, with a braced argument of their own) text.
_SPACING_COMMANDS = frozenset("quad qquad enspace thinspace medspace thickspace".split())
_SO_COMMANDS = frozenset(
    "therefore implies Rightarrow Longrightarrow rightarrow to iff approx equiv sim simeq cong "
    "hfill".split()
)
_TEXT_COMMANDS = frozenset(
    "text textbf textit textrm textnormal textsf mbox emph mathbf mathrm".split()
)
_DELIMITER_COMMANDS = frozenset(
    "left right bigl bigr Bigl Bigr biggl biggr Biggl Biggr langle rangle lbrace rbrace end".split()
)
_OPENING_DELIMITERS = frozenset("left bigl Bigl biggl Biggl".split())  # they take the next bracket
# Function names written as words ("log 8", "sqrt(8)"): the number is their argument.
_FUNCTION_WORDS = frozenset("log ln lg exp sqrt sin cos tan cot sec csc".split())
_COMMAND_AT_END = re.compile(r"\\([A-Za-z]+)\*?$")
_MAX_ATOM = 200  # characters of one {...} or [...] group read backwards (bounded work)
_GROUP_SPACES = " \u00a0\u2007\u2009\u202f"  # space, no-break, figure, thin, narrow no-break
_APOSTROPHES = "'\u2019"
_BOXED = "\\boxed{"
MAX_SHOWN = 200  # characters of an extracted answer kept in a result (the rest is cut)


@dataclass(frozen=True)
class NumericResult:
    """What ``verify_numeric_answer`` decided.

    reward:    1.0 if category is "correct", else 0.0.
    category:  one of ``CATEGORIES``.
    extracted: the text taken as the answer (box contents or number token), cut to its first
               ``MAX_SHOWN`` characters, or None.
    value:     the parsed exact value of ``extracted``, or None.
    detail:    for a ``parse_error`` of the last-number reading, why the number was refused
               ("part of a power", ...); otherwise None.
    """

    reward: float
    category: str
    extracted: str | None = None
    value: Fraction | None = None
    detail: str | None = None


def extract_boxed(text: str) -> tuple[str | None, bool]:
    """Contents of the last ``\\boxed{`` in ``text`` (nested braces allowed) and whether one exists.

    Returns ``(contents, True)``; ``(None, True)`` when the last ``\\boxed{`` is never closed;
    ``(None, False)`` when there is no ``\\boxed{``. "Last" means the last opening, so for nested
    boxes the innermost one wins. One forward scan: linear in the length of the text.
    """
    start = text.rfind(_BOXED)
    if start < 0:
        return None, False
    depth = 1
    i = start + len(_BOXED)
    for j in range(i, len(text)):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[i:j], True
    return None, True


def _last_match(text: str) -> re.Match | None:
    last = None
    for m in _NUMBER_IN_TEXT.finditer(text):
        last = m
    return last


def last_number(text: str) -> str | None:
    """The last standalone number, fraction or ``\\frac{a}{b}`` in ``text``, or None.

    Examples: "1,234", "-3/7", "2.5e3", "\\frac{1}{2}". This only finds the token; whether the
    verifier may use it is ``read_tail``'s decision.
    """
    m = _last_match(text)
    return None if m is None else m.group(0)


def _glue(text: str, start: int, end: int, token: str) -> str | None:
    """Why the token ``text[start:end]`` is part of a larger expression, or None if it stands alone.

    Looks at a bounded neighbourhood only (plus one run of spaces on each side): linear time.
    """
    # LaTeX spacing (\\, \\; \\quad ~ ...) and a degree sign read as the spaces they are; same
    # length, so every index still holds (one pass over the text: linear)
    text = _LATEX_SPACE.sub(lambda m: " " * len(m.group(0)), text)
    if text[start - 2 : start] == "**" and text[end : end + 2] == "**":  # markdown bold, "**81**"
        text = f"{text[: start - 2]}  {text[start:end]}  {text[end + 2 :]}"
    line_start = text.rfind("\n", 0, start) + 1
    if text[end : end + 2] == "**" and text.count("**", line_start, start) % 2 == 1:
        text = f"{text[:end]}  {text[end + 2 :]}"  # the end of bold: "**Answer: 81**"
    bullet = text[:start].rstrip(" \t")
    if (  # not "-": "- 5" may be a detached minus sign, and a dash before the number is refused
        bullet[-1:] in ("*", "+")
        and len(bullet) < start
        and not bullet[:-1].strip(" \t")[-1:].strip()
    ):
        text = f"{bullet[:-1]} {text[len(bullet) :]}"  # a list bullet at a line's start: "* 81"
    plain = text[:start].rstrip(_SPACE)
    if plain.endswith("**") and len(plain) > 2 and len(plain) < start and not plain[-3].isspace():
        if not plain[-3].isdigit():  # the end of markdown bold, "**Answer:** 81"
            text = f"{plain[:-2]}  {text[len(plain) :]}"
    left = text[start - 1] if start > 0 else "\n"  # one character each; a newline at the ends
    right = text[end] if end < len(text) else "\n"
    signed = token[:1] in "+-\u2212"
    if left in "{}" or right in "{}":
        return "inside a LaTeX group ({...}: a power, a root, a macro argument, {,})"
    if right in _SUPERSCRIPTS:
        return "followed by a superscript (a power)"
    if left in _APOSTROPHES and start > 1 and text[start - 2].isdigit():
        return "digits grouped by an apostrophe"
    if left == "," and start > 1 and text[start - 2] in "0123456789":
        return "after a comma glued to a digit (a decimal comma or a broken thousands group)"
    if (
        left in _GROUP_SPACES
        and start > 1
        and text[start - 2] in "0123456789"
        and re.fullmatch(r"[0-9]{3}(?:\.[0-9]+)?", token, re.ASCII)
    ):
        return "digits grouped by spaces"
    if any(c.isnumeric() for c in text[end:]):  # "\\frac12", "x2", "1½", "log₂": not standalone
        return "a digit follows the last standalone number (it is not the last number)"
    before = text[:start].rstrip(_SPACE) or "\n"
    after = text[end:].lstrip(_SPACE) or "\n"
    if before[-1] in _OPERATORS or before.endswith(_LATEX_OPERATORS):
        return "after an operator (part of a sum, product, quotient or power)"
    if after[0] in _OPERATORS or after.startswith(_LATEX_OPERATORS):
        return "before an operator (part of a sum, product or power)"
    if before[-1] in _DASHES and not signed:
        return "after a dash that is not a minus sign"
    if right == "!":
        return "followed by ! (a factorial)"
    if right == "\\" and text[end + 1 : end + 2].isalpha():
        return "followed by a LaTeX macro"
    command = _COMMAND_AT_START.match(after)
    if command and command.group(1) not in _HARMLESS_COMMANDS | _TEXT_COMMANDS:
        return "before a LaTeX command (81 \\sqrt{2}: a product)"
    return _argument_of(before) or _context(text, start, end)


# What may stand next to a number that is read alone: an allow-list, so a symbol nobody listed
# (a Unicode operator, a root sign, a constant, a bar) refuses the reading instead of passing it.
_LEFT_OK = frozenset('=:;,"?\u2192\u21d2\u27f9\u27f6\uff1a\uff0c\u3001\uff1b')  # = : ; , " ? arrows
# of "so", full-width colon, comma and semicolon
_RIGHT_OK = frozenset('.,;:?"\u3002\uff0c\uff1b\uff1a\u2026\uff1f\u3001')  # also full-width, "…"
_MINUS_LIKE = "\u02d7\u2796\ufe63\uff0d"  # modifier, heavy, small and full-width minus signs
_STOP_WORDS = frozenset(
    "is are was were be equals equal gives give get gets got makes make answer so thus hence "
    "then therefore final result total".split()
)
# words that make the number an argument or an operand ("log base 2 of 8", "10 choose 3")
_OPERATOR_WORDS = _FUNCTION_WORDS | frozenset(
    "arcsin arccos arctan sinh cosh tanh abs gcd lcm mod choose binom root logarithm base power "
    "times plus minus over divided squared cubed factorial negative raised twice thrice half "
    "double triple not less more greater fewer least most floor ceil ceiling percent between "
    "modulo inverse reciprocal".split()
)
_ENCLOSERS = {"(": ")", "[": "]"}
_SIZED_CLOSER = re.compile(r"\\(?:right|bigr|Bigr|biggr|Biggr)\s*(?=[)\]])")
_SIZED_OPENER = re.compile(r"\\(?:left|bigl|Bigl|biggl|Biggl)\s*$")
_CLOSERS = {")": "(", "]": "["}


def _context(text: str, start: int, end: int, depth: int = 0) -> str | None:
    """The allow-list reading of what stands around ``text[start:end]`` (a number, or a bracket
    group that holds it), spaces and line breaks skipped: None when both sides are plain text or
    punctuation, else why not. A bracket pair around the number is read as a unit (``(81)``), and
    the text around the pair is read again (``-(12)``, ``10/(2)``, ``(5)!`` are refused)."""
    i, j = start, end
    while i > 0 and text[i - 1] in _SPACE:
        i -= 1
    while j < len(text) and text[j] in _SPACE:
        j += 1
    sized = _SIZED_CLOSER.match(text, j)  # "\\right)" closes like ")"
    if sized:
        j = sized.end()
    left = text[i - 1] if i > 0 else ""
    right = text[j] if j < len(text) else ""
    # a bracket pair around the number: the pair is the unit; read what stands around it
    if right in _CLOSERS or (left in _ENCLOSERS and text[i - 2 : i] not in ("\\(", "\\[")):
        if depth >= 3:
            return "inside too many brackets to read"
        if right in _CLOSERS:
            k, level = i, 0  # the matching opener, read back from the number (bounded)
            while k > max(0, i - _MAX_ATOM):
                k -= 1
                c = text[k]
                level += (c in _CLOSERS) - (c in _ENCLOSERS)
                if level < 0:
                    break
            else:
                return "inside a bracket whose opening is too far back to read"
            if text[k] != _CLOSERS[right]:
                return "inside brackets that do not match"
            if left not in _ENCLOSERS:
                return "inside brackets with other content (a pair, an interval, a list: (3, 5))"
        else:
            if _ENCLOSERS[left] != right:
                return "inside a bracket that does not close right after it"
            k = i - 1
        sized = _SIZED_OPENER.search(text[max(0, k - 8) : k])
        if sized:  # "\\left(" opens like "("
            k -= len(sized.group(0))
        if k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_.\\"):
            return "an argument of a function (gcd(12, 18), log2(8))"
        if (
            k > 0
            and text[k - 1] in _SPACE
            and _WORD_AT_END.search(text[max(0, k - 16) : k].rstrip())
        ):
            word = _WORD_AT_END.search(text[max(0, k - 16) : k].rstrip()).group(1).lower()
            if word in _OPERATOR_WORDS:
                return "an argument of a function (sqrt (8))"
        inner = (
            _context_left(text, i, start) if right in _CLOSERS and left not in _ENCLOSERS else None
        )
        return inner or _context(text, k, j + 1, depth + 1)
    return _context_left(text, i, start) or _context_right(text, j, end)


def _context_left(text: str, i: int, start: int) -> str | None:
    """The left side: ``text[i - 1]`` is the first character before the number, spaces skipped."""
    while i > 0 and (text[i - 1] in "$`" or unicodedata.category(text[i - 1]) == "Sc"):
        i -= 1  # math, code and currency marks say nothing: read what stands before them
        while i > 0 and text[i - 1] in _SPACE:
            i -= 1
    if i == 0:
        return None
    left = text[i - 1]
    if left == "=" and (
        text[i - 2 : i - 1] in ("!", "<", ">") or text[max(0, i - 5) : i - 1] == "\\not"
    ):
        return "after an inequality (!=, <=, \\not=)"
    if left in (":", "\uff1a") and text[: i - 1].rstrip(_SPACE)[-1:].isdigit():
        return "after a ratio or a time (3:5, 3:45)"
    if left in _LEFT_OK or (left == ">" and text[i - 2 : i - 1] in ("-", "=")):
        return None
    if left == ">" and re.search(r"<[A-Za-z_][\w.-]*>$", text[max(0, i - 40) : i]):
        return None  # inside a tag, "<answer>81</answer>"
    if left == "(" and text[i - 2 : i] == "\\(" or left == "[" and text[i - 2 : i] == "\\[":
        return None  # \\( 81 \\): LaTeX math
    if left == "." and not text[i - 2 : i - 1].isdigit():
        return None  # the end of a sentence
    if left == "'" and not text[i - 2 : i - 1].isdigit():
        return None  # a quote
    if left == "*" and text[i - 2 : i - 1] == "*" and i > 2 and not text[i - 3].isspace():
        return None  # the end of markdown bold, "**Answer:** 81"
    if left == "}" and i < start:  # a group before a space (\\text{...} 81); its command was read
        k, level = i - 1, 0
        while k > max(0, i - 1 - _MAX_ATOM):
            level += (text[k] == "}") - (text[k] == "{")
            if level == 0:
                break
            k -= 1
        if level or _operand_words(text[k + 1 : i - 1]):
            return "after a group whose words make it an operand (\\text{ times } 3)"
        command = _COMMAND_AT_END.search(text[max(0, k - 64) : k].rstrip(_SPACE))
        if not command or command.group(1) not in _TEXT_COMMANDS:
            return "after a LaTeX group that is not the text of \\text{...} ({x} 5)"
        words = text[k + 1 : i - 1].rstrip(_SPACE)
        if words[-1:] and (words[-1] in _OPERATORS or words[-1] in _DASHES):
            return "after a group that ends in an operator or a dash (\\text{x =} \u2013 5)"
        if words[-1:].isascii() and words[-1:].isdigit():
            return "after a group that ends in a number (\\mathbf{2} 5: two numbers side by side)"
        return None
    if left.isascii() and left.isalpha():
        word = _WORD_AT_END.search(text[max(0, i - 64) : i])
        glued = text[max(0, i - 64) : i][: word.start()][-1:] if word else ""
        if glued and (glued in "0123456789^_" or glued in _SUPERSCRIPTS):
            return "after a word glued to a number, a power or a subscript (2^2a 5, x_2b 5)"
        tokens = re.findall(r"[A-Za-z]+|[0-9]+|\S", text[max(0, i - 80) : i])[-5:]
        if tokens[-1] in ("x", "X") and len(tokens) > 1 and tokens[-2].isdigit():
            return "after a product sign (5 x 3)"
        if _operand_words(text[max(0, i - 80) : i]):
            return "an argument or operand of a word (log 8, square root of 16, 3 times 4)"
        return None
    if left.isascii() and left.isdigit():
        k = i - 1
        while k > 0 and text[k - 1] in "0123456789.,":
            k -= 1
        argument = re.search(r"(?:\\[A-Za-z]+|[_^])[\s\[\]0-9{}]*$", text[max(0, k - 64) : k])
        if "\n" in text[i:start] and not argument:
            return None  # a number on a line of its own, after a line that ends in a number
        return "after another number (two numbers side by side: 1 2, \\frac 1 2)"
    return "after a symbol the grammar does not read (\u221a8, 2\u03c0, |8|, \u00b13)"


def _operand_words(before: str) -> bool:
    """Whether the words just before a number (up to five, back to a stop word such as "is")
    make it an argument or operand: "log 8", "square root of 16", "less than 5", "negative 5"."""
    for token in reversed(re.findall(r"[A-Za-z]+|[0-9]+|\S", before[-80:])[-5:]):
        word = token.lower()
        if word in _STOP_WORDS or not token.isalnum():
            return False
        if word in _OPERATOR_WORDS:
            return True
    return False


def _context_right(text: str, j: int, end: int) -> str | None:
    """The right side: ``text[j]`` is the first character after the number, spaces skipped."""

    def skip(k: int) -> int:
        while k < len(text) and text[k] in _SPACE:
            k += 1
        return k

    if text[j : j + 1] == "%" or text[j : j + 2] == "\\%":  # one percent sign is dropped
        j = skip(j + (1 if text[j] == "%" else 2))
        if text[j : j + 1] == "%" or text[j : j + 2] == "\\%":
            return "followed by two percent signs"
    while j < len(text) and text[j] in "$`":  # math and code marks say nothing: read past them
        j = skip(j + 1)
    if j < len(text) and text[j] == "(":  # a parenthetical of words: "7 (approximately)"
        close = text.find(")", j, j + _MAX_ATOM)
        inner = text[j + 1 : close] if close > 0 else "("
        if close < 0 or "(" in inner or _operand_words_after(inner):
            return "before a bracket that makes it an operand (2(4), 5 (squared))"
        j = skip(close + 1)
    if j >= len(text):
        return None
    right = text[j]
    if right == "<" and re.match(r"</[A-Za-z_][\w.-]*>", text[j : j + 40]):
        return None  # the end of a tag, "<answer>81</answer>"
    if right in _RIGHT_OK or (right in _DASHES and right not in _MINUS_LIKE):
        return None  # punctuation; a dash after the number too ("5\u2014"), not a minus sign
    if right == "!":
        return None if "\n" in text[end:j] else "followed by ! (a factorial)"
    if right == "*" and text[j : j + 2] == "**" and j == end:
        return None  # markdown bold, "**81**"
    if text[j : j + 2] in ("\\)", "\\]", "\\\\"):
        return None  # the end of LaTeX math, or of a line
    if right == "\\":
        command = _COMMAND_AT_START.match(text, j)
        if command and command.group(1) in _TEXT_COMMANDS:
            group = re.match(r"\s*\{([^{}]*)\}", text[command.end() : command.end() + _MAX_ATOM])
            inner = group.group(1) if group else ""
            if inner.lstrip().startswith("!") or _operand_words_after(inner):
                return "before a text group whose words make it an operand (3 \\text{ squared})"
            return None
        if command and command.group(1) in _HARMLESS_COMMANDS:
            return None
        return "before a LaTeX command"
    if right.isascii() and right.isalpha():
        if _operand_words_after(text[j : j + 64]):
            return "before a word that makes it an operand (5 squared, 10 choose 3, 2 times 3)"
        return None
    return "before a symbol the grammar does not read (8\u03c0, 8|, 8~)"


def _operand_words_after(after: str) -> bool:
    """Whether the first words after a number make it an operand: "squared", "times 3", "x 3"."""
    words = re.findall(r"[A-Za-z]+", after[:64])[:2]
    if not words:
        return False
    first = words[0].lower()
    return first in _OPERATOR_WORDS or (first == "x" and bool(re.match(r"\s*x\s*[0-9]", after)))


# every Unicode space (str.isspace: the Zs spaces, tabs, line breaks, U+2028, ...): an em space or
# an ideographic space between a command and the number is a space, not a symbol that hides it
_SPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
# LaTeX spacing, an empty group "{}" that is no command's argument (a separator: "-{}5",
# "\u2013{} 5") and a degree sign read as spaces; "\\{}" is an escaped brace, "\\text{}" an argument
_LATEX_SPACE = re.compile(
    r"(?<!\\)(?:\\[,;:! ]|\\(?:quad|qquad|enspace|thinspace|medspace|thickspace)(?![A-Za-z])|~"
    r"|\^\{?\\circ\}?|\u00b0|(?<![A-Za-z])\{[ \t]*\})"
)
_COMMAND_AT_START = re.compile(r"\\([A-Za-z]+)")
_HARMLESS_COMMANDS = _SPACING_COMMANDS | _SO_COMMANDS | _DELIMITER_COMMANDS


def _strip_argument(s: str) -> tuple[str, str] | None:
    """Remove one LaTeX argument from the end of ``s``: a ``{...}`` or ``[...]`` group (of at most
    ``_MAX_ATOM`` characters), an opening ``(``, a run of digits, or one letter standing alone.
    ``(rest, kind)``, or None when ``s`` does not end in one."""
    c = s[-1:]
    if c in ("}", "]"):
        opener = "{" if c == "}" else "["
        depth = 0
        for j in range(len(s) - 1, max(-1, len(s) - 1 - _MAX_ATOM), -1):
            depth += (s[j] == c) - (s[j] == opener)
            if depth == 0:
                return s[:j], "group" if c == "}" else "option"
        return "", "overlong"
    if c in ("(", "["):
        return s[:-1], "paren"
    if c and c in "0123456789":
        j = len(s)
        while j > 0 and s[j - 1] in "0123456789.,":
            j -= 1
        return s[:j], "number"
    if c.isascii() and c.isalpha() and (len(s) == 1 or not (s[-2].isalnum() or s[-2] == "\\")):
        return s[:-1], "letter"
    if c and s[-2:-1] in ("^", "_") and c not in _SPACE:
        return s[:-1], "letter"  # a one-character script: "x^*", "f^'"
    return None


def _argument_of(before: str) -> str | None:
    """Why the number after ``before`` (right-stripped) is an argument of what precedes it: a
    LaTeX command (``\\sqrt 8``, ``\\sqrt[3] 8``, ``\\frac 1 2``, ``1 \\over 2``, ``\\log 8``),
    a subscript or superscript (``log_2 8``) or a function written as a word (``log 8``,
    ``sqrt(8)``); None when it is none of these. Reads at most three arguments back."""
    s, kinds = before, []
    for _ in range(4):
        command = _COMMAND_AT_END.search(s[-64:])
        if command:
            name = command.group(1)
            if name in _OPENING_DELIMITERS and kinds[-1:] == ["paren"]:  # \log\left( 8 \right)
                s = s[: len(s) - len(command.group(0))].rstrip(_SPACE)
                kinds.append("delimiter")  # read what takes the bracket
                continue
            if name in _DELIMITER_COMMANDS and kinds[-1:] != ["group"]:  # "\\end{cases} 5" reads
                return "after a delimiter command that has no bracket (\\left 8)"
            if name in _HARMLESS_COMMANDS or (name in _TEXT_COMMANDS and kinds[-1:] == ["group"]):
                return None
            return "an argument of a LaTeX command (\\sqrt 8, \\frac 1 2, 1 \\over 2, \\log 8)"
        if s.endswith("_") or (s.endswith("^") and kinds):
            return "after a subscript or superscript (log_2 8)"
        if kinds in ([], ["paren"]):
            word = _WORD_AT_END.search(s[-16:])
            if word and word.group(1).lower() in _FUNCTION_WORDS:
                return "an argument of a function (log 8, sqrt(8))"
        stripped = _strip_argument(s)
        word = _WORD_AT_END.search(s[-64:]) if stripped is None else None
        if word:  # letters right after a command are its arguments in math mode: \\frac ab 2
            command = _COMMAND_AT_END.search(s[: len(s) - len(word.group(1))].rstrip(_SPACE)[-64:])
            if command and command.group(1) not in _HARMLESS_COMMANDS | _TEXT_COMMANDS:
                return "letters after a LaTeX command are its arguments (\\frac ab 2)"
        if stripped is None:
            return None
        s, kind = stripped[0].rstrip(_SPACE), stripped[1]
        if kind == "overlong":
            return f"after a LaTeX group longer than {_MAX_ATOM} characters (not read)"
        kinds.append(kind)
    return None


_WORD_AT_END = re.compile(r"(?<![A-Za-z])([A-Za-z]+)$")


def read_tail(text: str) -> tuple[str | None, str | None]:
    """The last-number reading of a response without a box: ``(token, problem)``.

    ``(None, None)``: no number in the text. ``(token, None)``: the last standalone number,
    fraction or ``\\frac{a}{b}``, which stands alone. ``(token, reason)``: the last number is part
    of a larger expression the grammar does not parse (a power, an operator, a LaTeX group, digits
    grouped by spaces or apostrophes, a decimal comma, an argument of a LaTeX command, a factorial,
    a dash that is not a sign glued to the digits); the verifier fails closed on it
    (``parse_error``) instead of reading a smaller number.
    """
    m = _last_match(text)
    if m is None:
        return None, None
    return m.group(0), _glue(text, m.start(), m.end(), m.group(0))


def parse_number(token: str, max_number_chars: int = 100) -> Fraction | None:
    """Exact value of a number written in our grammar, or None if it is not one.

    ``token`` must be a whole number token (surrounding spaces allowed) or a LaTeX
    ``\\frac{a}{b}`` / ``\\dfrac`` / ``\\tfrac`` of two such integers. Thousands separators are
    removed; ``{,}`` (LaTeX's grouped comma) counts as a comma. Refused (None): anything else,
    zero denominators, more than ``max_number_chars`` digits, or an exponent whose size exceeds
    ``max_number_chars``. Never raises for a ``str``.
    """
    s = token.strip().replace("{,}", ",")
    if len(s) > 4 * max_number_chars + 16:  # cheap early refusal, before any regex work
        return None
    frac = _FRAC.fullmatch(s)
    if frac is not None:
        sign, num, den = frac.groups()
        num, den = num.strip(), den.strip()
        if not (re.fullmatch(_INT, num, re.ASCII) and re.fullmatch(_INT, den, re.ASCII)):
            return None
        s = f"{sign}{num}/{den}"
    m = _NUMBER_FULL.fullmatch(s)
    if m is None:
        return None
    intpart, den, dec, exp = m.group("int", "den", "dec", "exp")
    digits = intpart.replace(",", "") + (den or "").replace(",", "") + (dec or "")[1:]
    if len(digits) + len(exp or "") > max_number_chars:
        return None
    if exp is not None and abs(int(exp[1:])) > max_number_chars:
        return None  # 1e999999999 would ask Fraction for a billion-digit integer
    clean = s.replace(",", "").replace("\u2212", "-")
    try:
        return Fraction(clean)
    except (ValueError, ZeroDivisionError):
        return None


def verify_numeric_answer(
    response: Any,
    reference: Any,
    *,
    rel_tol: float = 1e-9,
    abs_tol: float = 1e-6,
    max_chars: int | None = 20_000,
    max_number_chars: int = 100,
) -> NumericResult:
    """Score ``response`` against the numeric ``reference`` (lesson 9.1.4).

    1. Extract: the contents of the last ``\\boxed{...}`` if there is one (they must be a single
       number, else ``parse_error``; an unclosed last box is also ``parse_error``), otherwise
       the last standalone number, fraction or ``\\frac{a}{b}`` in the text (none:
       ``no_answer``). That reading fails closed (``read_tail``): a last number that is part of
       a larger expression (``2^{10}``, ``5\u00b2``, ``3-5``, ``1 234 567``, ``1.234,56``, an
       argument of a LaTeX command ``\\sqrt 8``, a factorial ``5!``, a dash before it that is not
       a sign glued to it, ``- 5``, ``\u2013 5``) is ``parse_error``, with the reason in
       ``.detail``. A percent sign after the number is dropped (``50%`` reads as 50).
    2. Canonicalise and parse exactly (``parse_number``): thousands separators, ``\\frac{a}{b}``,
       decimals, ``a/b``, exponents; ``Fraction``, never ``float``.
    3. Compare in rationals: correct iff ``|x - ref| <= max(abs_tol, rel_tol * |ref|)``.

    Defaults: ``abs_tol=1e-6`` (a decimal correct to six places matches, so ``\\boxed{3/7}``
    matches "0.428571"), ``rel_tol=1e-9``. So an integer reference is not compared exactly:
    ``12.0000001`` matches 12 (through ``abs_tol``); a wrong *integer* never matches an integer
    reference below 10**9, and from 10**9 up ``rel_tol * |ref| >= 1`` lets an off-by-one pass.
    Responses over ``max_chars`` characters are ``too_long`` (``None``: no cap). Never raises for
    any ``response`` or ``reference``; raises ``ValueError`` only for negative, NaN or infinite
    tolerances. The tolerances are read as the decimals they are written as (``Fraction("1e-06")``).

    >>> verify_numeric_answer(r"Final: \\boxed{3/7}", "0.428571").reward
    1.0
    """
    if not (0 <= rel_tol < math.inf and 0 <= abs_tol < math.inf):  # also catches NaN
        raise ValueError(
            f"tolerances must be finite and >= 0, got rel_tol={rel_tol}, abs_tol={abs_tol}"
        )
    if not isinstance(reference, str):
        return NumericResult(0.0, "invalid_reference")
    ref = parse_number(reference, max_number_chars)
    if ref is None:
        return NumericResult(0.0, "invalid_reference")
    if not isinstance(response, str):
        return NumericResult(0.0, "invalid_input")
    if max_chars is not None and len(response) > max_chars:
        return NumericResult(0.0, "too_long")

    boxed, has_box = extract_boxed(response)
    if has_box:
        extracted = boxed
        if extracted is None:
            return NumericResult(0.0, "parse_error")
    else:
        extracted, problem = read_tail(response)
        if extracted is None:
            return NumericResult(0.0, "no_answer")
        if problem is not None:
            return NumericResult(0.0, "parse_error", extracted[:MAX_SHOWN], detail=problem)
    value = parse_number(extracted, max_number_chars)
    shown = extracted[:MAX_SHOWN]
    if value is None:
        return NumericResult(0.0, "parse_error", shown)
    tol = max(_decimal(abs_tol), _decimal(rel_tol) * abs(ref))
    ok = abs(value - ref) <= tol
    return NumericResult(1.0 if ok else 0.0, "correct" if ok else "wrong", shown, value)


def _decimal(x: float) -> Fraction:
    """A tolerance as the decimal it is written as: ``Fraction("1e-06")``, exactly 10**-6.

    ``Fraction(1e-6)`` would be the binary float, 10**-6 minus about 4.5e-23.
    """
    return Fraction(repr(float(x)))


# ---------------------------------------------------------------------------------------------
# Verifier objects and passports


@dataclass(frozen=True)
class Verdict:
    """A task verifier's decision: the reward, a category from ``CATEGORIES``, and its parts."""

    reward: float
    category: str
    components: dict = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Verifier:
    """A reward rule with a passport. ``v(task, completion) -> float``; ``v.check`` -> ``Verdict``.

    name, version: identify the rule; bump ``version`` whenever its behaviour changes.
    rules:         the canonicalisation and acceptance rules in words (they are hashed).
    config:        the keyword arguments passed to ``fn`` (tolerances, length caps).
    fn:            ``fn(task, completion, **config) -> Verdict``.
    """

    name: str
    version: str
    rules: tuple[str, ...]
    config: dict
    fn: Callable[..., Verdict]

    def check(self, task: Task, completion: Any) -> Verdict:
        """The verdict on one completion; an unexpected exception becomes category "error"."""
        try:
            return self.fn(task, completion, **self.config)
        except Exception as e:  # a reward function must not crash a training run
            return Verdict(0.0, "error", {"exception": f"{type(e).__name__}: {e}"[:200]})

    def __call__(self, task: Task, completion: Any) -> float:
        return self.check(task, completion).reward

    @property
    def passport(self) -> dict:
        """Name, version, rules, config and ``config_hash`` (16 hex of sha256 of the rest)."""
        body = {
            "name": self.name,
            "version": self.version,
            "rules": list(self.rules),
            "config": dict(self.config),
        }
        canon = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return {**body, "config_hash": hashlib.sha256(canon.encode()).hexdigest()[:16]}

    def __repr__(self) -> str:
        return f"Verifier({self.name!r}, version={self.version!r})"


def _numeric(task: Task, completion: Any, **config: Any) -> Verdict:
    r = verify_numeric_answer(completion, task.answer, **config)
    return Verdict(r.reward, r.category, {"extracted": r.extracted, "reference": task.answer})


def _last_integer(task: Task, completion: Any, *, max_chars: int | None, **numeric: Any) -> Verdict:
    if task.family == "arithmetic":
        return _numeric(task, completion, max_chars=max_chars, **numeric)
    if not isinstance(task.answer, str) or not re.fullmatch(r"[-+]?[0-9]+", task.answer, re.ASCII):
        return Verdict(0.0, "invalid_reference", {"reference": task.answer})  # a task bug
    if not isinstance(completion, str):
        return Verdict(0.0, "invalid_input")
    if max_chars is not None and len(completion) > max_chars:
        return Verdict(0.0, "too_long")
    token, problem = read_tail(completion)
    if token is None:
        return Verdict(0.0, "no_answer")
    parts = {"extracted": token[:MAX_SHOWN], "reference": task.answer}
    if problem is not None:
        return Verdict(0.0, "parse_error", {**parts, "detail": problem})
    plain = token.replace(",", "").lstrip("+-\u2212")
    if not plain.isdigit() or len(plain) > numeric["max_number_chars"]:
        return Verdict(0.0, "wrong", parts)  # the last number is not an integer
    ok = int(token.replace(",", "").replace("\u2212", "-")) == int(task.answer)
    return Verdict(1.0 if ok else 0.0, "correct" if ok else "wrong", parts)


def _format(task: Task, completion: Any, *, max_chars: int | None) -> Verdict:
    if not isinstance(completion, str):
        return Verdict(0.0, "invalid_input")
    if max_chars is not None and len(completion) > max_chars:
        return Verdict(0.0, "too_long")
    text = FORMAT_PREFIX + completion
    decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=str, parse_float=str)
    try:
        obj, end = decoder.raw_decode(text)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return Verdict(0.0, "parse_error")
    ok = isinstance(obj, dict) and "answer" in obj
    parts = {"json_chars": end, "trailing_chars": len(text) - end}
    return Verdict(1.0 if ok else 0.0, "correct" if ok else "wrong", parts)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not strict JSON")


def _sloppy(task: Task, completion: Any) -> Verdict:
    if not isinstance(completion, str):
        return Verdict(0.0, "invalid_input")
    ok = str(task.answer) in completion
    return Verdict(1.0 if ok else 0.0, "correct" if ok else "wrong", {"found": ok})


_NUMERIC_CONFIG = {"rel_tol": 1e-9, "abs_tol": 1e-6, "max_chars": 20_000, "max_number_chars": 100}
_NUMERIC_RULES = (
    "extract: contents of the last \\boxed{ (innermost if nested; must be one number); "
    "else the last standalone number, fraction or \\frac{a}{b} in the text",
    "the last-number reading fails closed: a last number touching a power, superscript, "
    "operator, LaTeX group or macro, an argument of a LaTeX command (\\sqrt 8, \\sqrt[3] 8, "
    "\\frac 1 2, 1 \\over 2, \\frac ab 2, \\log\\left(8\\right)), a subscript (log_2 8), a "
    "function word (log 8, sqrt(8)), a factorial (5!, 5 !), or digits grouped by spaces, "
    "apostrophes or a glued comma is a parse_error; spaces are any Unicode space, LaTeX spacing "
    "or an empty group {}",
    "a sign counts only glued to the digits (-5, +5, U+2212 minus); any other dash before the "
    "last number is a parse_error whatever the reference: - or U+2212 detached by spaces "
    "(- 5, also a '- 5' bullet), and every Unicode dash (Pd) or minus-like mark, glued or spaced",
    "beyond those, an allow-list: next to the last number (spaces, line breaks and LaTeX spacing "
    "skipped; $, backticks and currency read through) only words that are not function, operator "
    "or negation words, punctuation, = and : (not a ratio), a tag, markdown bold or a * or + "
    "bullet, a parenthetical of words after it, LaTeX math delimiters, a bracket pair holding the "
    "number alone, or a command that takes no number (a delimiter command only with its "
    "bracket); a bare {...} group, any other symbol, a relation such as != or \\le, or a digit "
    "after the last standalone number, is a parse_error",
    "a percent sign after the last number is dropped: 50% reads as 50 (not 0.5); 50%% is a "
    "parse_error",
    "an unclosed last \\boxed{ is a parse_error; text with no number is no_answer",
    "thousands separators: 1-3 digits then groups of exactly 3 ('1,234', '1{,}234'); "
    "'1, 2' is a list",
    "accepted forms: integers, decimals, a/b, \\frac{a}{b}, exponents, leading + - or U+2212",
    "parse exactly with fractions.Fraction; zero denominators, NaN and inf are parse_error",
    "more than max_number_chars digits, or a larger exponent, is parse_error",
    "correct iff |x - ref| <= max(abs_tol, rel_tol * |ref|), computed in rationals, with the "
    "tolerances read as written decimals (Fraction('1e-06'), not the binary float); not exact "
    "for integers: 12.0000001 matches 12, a wrong integer never matches below 10**9",
    "responses over max_chars characters are too_long; non-str is invalid_input",
)

NUMERIC = Verifier("numeric", "1.3", _NUMERIC_RULES, dict(_NUMERIC_CONFIG), _numeric)
"""``verify_numeric_answer`` as a task verifier: ``NUMERIC(task, completion)``."""

verify_arithmetic = Verifier(
    "arithmetic",
    "1.3",
    (
        "family 'arithmetic' (free response): the numeric rules, see the 'numeric' passport",
        "other families: the last standalone number in the completion (same number grammar, "
        "same fail-closed reading) must be an integer equal to task.answer",
        "other families: a task.answer that is not an integer is invalid_reference",
        "tests answer correctness, not compliance with an 'only a number' instruction",
        "completions over max_chars characters are too_long; non-str is invalid_input",
    ),
    dict(_NUMERIC_CONFIG),
    _last_integer,
)
"""Final-answer verifier of the BaseLM lab (lesson 9.5): the last emitted integer is the sum."""

verify_format = Verifier(
    "format",
    "1.0",
    (
        "text = FORMAT_PREFIX + completion, with FORMAT_PREFIX = '{\"answer\":'",
        "text must start with one strict JSON object (json raw_decode; NaN/Infinity rejected)",
        "the object must contain the key 'answer'; any JSON value is accepted",
        "text after the first object is allowed (narrow contract: not full output validation)",
        "completions over max_chars characters are too_long; non-str is invalid_input",
    ),
    {"max_chars": 20_000},
    _format,
)
"""Format verifier of the BaseLM lab (lesson 9.5): does the completion close ``{"answer":``?"""

verify_arithmetic_sloppy = Verifier(
    "arithmetic_sloppy",
    "1.0",
    (
        "BROKEN ON PURPOSE: reward 1 if str(task.answer) occurs anywhere in the completion",
        "exploit: emit many numbers, or both options, and one of them contains the answer",
    ),
    {},
    _sloppy,
)
"""The audit's broken verifier (lesson 9.5): the answer may appear *anywhere*.

A policy can hack it by emitting many numbers or repeating both options ("81 or 79"): some
substring is the sum, so the reward is 1 while the final answer is wrong or absent. The strict
``verify_arithmetic`` reads only the last integer: it rejects " 810" and " 81 or 79", but it still
pays an echo that ends on the sum (" 79 or 81"); compare both on held-out prompts.
"""

VERIFIERS = {
    v.name: v for v in (NUMERIC, verify_arithmetic, verify_format, verify_arithmetic_sloppy)
}
