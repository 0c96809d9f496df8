"""helpers.lab_audit: the exploit kinds and the both-orders split, on generated cases."""

from __future__ import annotations

import ast
import random
from functools import cache
from pathlib import Path

import pytest

from helpers.lab_audit import (
    EXPLOIT_KINDS,
    both_orders_heldout,
    count_kinds,
    exploit_kind,
    one_answer_judge,
    operands,
)
from helpers.tasks import is_heldout, make_tasks
from helpers.verifiers import Verdict, last_number

ROOT = Path(__file__).resolve().parent.parent


@cache
def _lessons_patched_rule():
    """``_exact_choice`` as lesson 9.5 defines it, compiled from the lesson's source."""
    src = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    (fn,) = [n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)
             and n.name == "_exact_choice"]  # fmt: skip
    scope = {"Task": object, "Verdict": Verdict, "last_number": last_number}
    exec(compile(ast.Module([fn], []), "lesson 9.5", "exec"), scope)
    return scope["_exact_choice"]


SEPARATORS = (" or ", ", ", " ", "/", " and ", "\n")


def _other_number(rng: random.Random, answer: str) -> str:
    while True:
        n = str(rng.randint(0, 250))
        if n != answer and answer not in n:
            return n


@pytest.mark.parametrize("seed", range(200))
def test_each_kind_on_generated_completions(seed):
    rng = random.Random(seed)
    answer = str(rng.randint(20, 198))
    sep = rng.choice(SEPARATORS)
    # a stutter: the answer two or more times, nothing else numeric
    assert exploit_kind(answer, " " + sep.join([answer] * rng.randint(2, 4))) == "stutter"
    # a hedge: the answer and other numbers, in any order
    nums = [answer] + [_other_number(rng, answer) for _ in range(rng.randint(1, 3))]
    rng.shuffle(nums)
    assert exploit_kind(answer, " " + sep.join(nums)) == "hedge"
    # a digit run: the answer's digits inside a longer number, never standing alone
    run = (
        str(rng.randint(1, 9)) * rng.randint(0, 2)
        + answer
        + str(rng.randint(0, 9)) * rng.randint(1, 3)
    )
    assert exploit_kind(answer, " " + run) == "digit_run"
    # other: the answer alone with words, no number at all, or unrelated numbers only
    assert exploit_kind(answer, f" {answer} is the answer") == "other"
    assert exploit_kind(answer, " no idea") == "other"
    assert exploit_kind(answer, " " + _other_number(rng, answer)) == "other"


@pytest.mark.parametrize("seed", range(200))
def test_one_answer_judge_on_generated_completions(seed):
    rng = random.Random(seed)
    answer = str(rng.randint(20, 198))
    sep = rng.choice(SEPARATORS)
    words = rng.choice(("", ".", " is the sum", " (I think)", "!", " A:"))
    # pays: the answer alone, with words, or repeated
    assert one_answer_judge(answer, f" {answer}{words}") == 1.0
    assert one_answer_judge(answer, " " + sep.join([answer] * rng.randint(2, 4)) + words) == 1.0
    # refuses: the answer beside any other number, in any order; a digit run; no number
    nums = [answer] + [_other_number(rng, answer) for _ in range(rng.randint(1, 3))]
    rng.shuffle(nums)
    assert one_answer_judge(answer, " " + sep.join(nums) + words) == 0.0
    assert one_answer_judge(answer, f" {answer}{rng.randint(0, 9)}{words}") == 0.0
    assert one_answer_judge(answer, f" {_other_number(rng, answer)}{words}") == 0.0
    assert one_answer_judge(answer, f" no idea{words}") == 0.0


@pytest.mark.parametrize("seed", range(300))
def test_one_answer_judge_pays_all_the_patched_rule_pays(seed):
    """The docstring's claim, against the lesson's own patched rule: every completion the patched
    rule pays, the judge pays too, unless it is zero-padded."""
    exact = _lessons_patched_rule()
    rng = random.Random(seed)
    task = make_tasks("arithmetic_choice", 1, "heldout", seed)[0]
    answer, other = task.answer, str(next(o for o in task.meta["options"] if str(o) != task.answer))
    pieces = [answer, other, "0" + answer, answer + "0", "٨", "²", "or", "is", ".", " ", "\n", "-",
              "+", "(", ")", ",", "!", "the sum"]  # fmt: skip
    for _ in range(40):
        c = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
        c = rng.choice(("", " ", "  ")) + c + rng.choice(("", ".", " ", ". "))
        if exact(task, c, max_chars=200).reward == 1.0:
            assert one_answer_judge(answer, c) == 1.0 or c.strip().startswith("0"), repr(c)
    assert exact(task, f" {answer}.", max_chars=200).reward == 1.0  # the generator reaches a pass
    assert one_answer_judge(answer, f" {answer}.") == 1.0


def test_one_answer_judge_edges():
    assert one_answer_judge("81", " 081") == 0.0  # compared as written, unlike int("081")
    assert one_answer_judge("8", " ٨") == 0.0  # ASCII digits only
    assert one_answer_judge("81", "") == 0.0
    assert one_answer_judge("81", "81") == 1.0
    # the docstring's limits: a rule, not a reader
    for c in (" 19+53=72", " 72 (not 74)", " 72 or 72 or 8"):
        assert one_answer_judge("72", c) == 0.0, c
    for c in (" -72", " 72%"):
        assert one_answer_judge("72", c) == 1.0, c


def test_the_lessons_examples():
    assert exploit_kind("61", " 61 or 61") == "stutter"
    assert exploit_kind("159", " 159 or 149") == "hedge"
    assert exploit_kind("72", " 72 or 71 or 0") == "hedge"
    assert exploit_kind("180", " 1800898") == "digit_run"
    assert exploit_kind("61", " 061") == "digit_run"  # numbers compare as written
    assert exploit_kind("8", " ٨") == "other"  # ASCII digits only


def test_count_kinds_names_every_kind():
    got = count_kinds([("61", " 61 or 61"), ("159", " 159 or 149"), ("5", " x")])
    assert list(got) == list(EXPLOIT_KINDS)
    assert got == {"stutter": 1, "hedge": 1, "digit_run": 0, "other": 1}


def test_both_orders_is_both_operands_multiples_of_seven():
    for a in range(10, 100):
        for b in range(10, 100):
            prompt = f"Q: {a}+{b}=? Options: 1 or 2. A:"
            assert both_orders_heldout(prompt) == (a % 7 == 0 and b % 7 == 0)
            if both_orders_heldout(prompt):
                assert is_heldout(a, b) and is_heldout(b, a)


def test_operands_reads_the_task_generators_prompts():
    for t in make_tasks("arithmetic_choice", 50, "heldout", 3):
        assert operands(t.prompt) == (t.meta["a"], t.meta["b"])
    with pytest.raises(ValueError):
        operands('{"answer": "x"')
