"""Tests of helpers.tasks: split disjointness, determinism per seed, well-formed prompts."""

from __future__ import annotations

from fractions import Fraction

import pytest

from helpers.tasks import (
    FORMAT_ITEMS,
    FORMAT_PREFIX,
    TASK_BUILDERS,
    format_pool_tasks,
    is_heldout,
    is_heldout_item,
    make_tasks,
)

FAMILIES = sorted(TASK_BUILDERS)
N = 120  # make_tasks rebuilds the pair pool per draw (~2 ms a task), keep N small


@pytest.mark.parametrize("family", FAMILIES)
def test_same_seed_same_tasks(family):
    assert make_tasks(family, 50, seed=7) == make_tasks(family, 50, seed=7)
    a, b = make_tasks(family, 50, seed=7), make_tasks(family, 50, seed=7)
    assert [t.meta for t in a] == [t.meta for t in b]  # meta is excluded from ==, check it too


@pytest.mark.parametrize("family", FAMILIES)
def test_different_seeds_differ(family):
    assert make_tasks(family, 50, seed=0) != make_tasks(family, 50, seed=1)


@pytest.mark.parametrize("family", FAMILIES)
def test_splits_are_disjoint(family):
    train = make_tasks(family, N, "train", seed=0) + make_tasks(family, N, "train", seed=1)
    held = make_tasks(family, N, "heldout", seed=0) + make_tasks(family, N, "heldout", seed=1)
    assert {t.prompt for t in train}.isdisjoint({t.prompt for t in held})
    assert all(t.meta["split"] == "train" for t in train)
    assert all(t.meta["split"] == "heldout" for t in held)
    if family == "format":
        assert {t.answer for t in train}.isdisjoint({t.answer for t in held})
    else:
        assert not any(is_heldout(t.meta["a"], t.meta["b"]) for t in train)
        assert all(is_heldout(t.meta["a"], t.meta["b"]) for t in held)


def test_split_rule_partitions_pairs_and_items():
    pairs = [(a, b) for a in range(10, 100) for b in range(10, 100)]
    held = [p for p in pairs if is_heldout(*p)]
    assert len(held) == 1157  # one pair in seven
    held_items = [w for i, w in enumerate(FORMAT_ITEMS) if is_heldout_item(i)]
    assert len(held_items) == 30 and len(FORMAT_ITEMS) == len(set(FORMAT_ITEMS)) == 210


def test_split_allows_transfer():
    """Every digit-level ingredient of a held-out sum occurs in training: each (ones, ones) and
    (tens, tens) digit pair, with and without a carry; only the operand pair itself is new."""
    pairs = [(a, b) for a in range(10, 100) for b in range(10, 100)]

    def ingredients(a, b):
        return {("ones", a % 10, b % 10), ("tens", a // 10, b // 10, (a % 10 + b % 10) >= 10)}

    train = set().union(*(ingredients(a, b) for a, b in pairs if not is_heldout(a, b)))
    held = set().union(*(ingredients(a, b) for a, b in pairs if is_heldout(a, b)))
    assert held <= train
    assert len({(a % 10, b % 10) for a, b in pairs if is_heldout(a, b)}) == 100


def test_heldout_pools_are_large_enough():
    """Issue 13: at least 200 distinct held-out arithmetic prompts and 30 format items."""
    assert len({t.prompt for t in make_tasks("arithmetic_choice", 240, "heldout", 0)}) >= 200
    assert len({t.answer for t in make_tasks("format", 2000, "heldout", 0)}) == 30


@pytest.mark.parametrize("split", ["heldout", "train"])
def test_format_pool_tasks_is_the_whole_pool_once(split):
    """Issue 20: the format runs are scored on every held-out item once (draws repeat items)."""
    pool = format_pool_tasks(split)
    drawn = make_tasks("format", 5000, split, 1)
    assert len(pool) == (30 if split == "heldout" else 180) == len({t.prompt for t in pool})
    assert {t.prompt for t in pool} == {t.prompt for t in drawn}  # the same items, each once
    assert all(t.meta["split"] == split and t.family == "format" for t in pool)
    assert pool[0] == next(t for t in drawn if t.answer == pool[0].answer)  # the same Task
    idx = [FORMAT_ITEMS.index(t.answer) for t in pool]
    assert idx == sorted(idx) and all(is_heldout_item(i) == (split == "heldout") for i in idx)
    with pytest.raises(ValueError, match="split"):
        format_pool_tasks("test")


def test_arithmetic_choice_answer_is_an_option():
    for t in make_tasks("arithmetic_choice", N, seed=2) + make_tasks(
        "arithmetic_choice", N, "heldout"
    ):
        a, b, options = t.meta["a"], t.meta["b"], t.meta["options"]
        assert t.answer == str(a + b)
        assert int(t.answer) in options and len(set(options)) == 2
        assert 1 <= abs(options[0] - options[1]) <= 10
        assert t.prompt == f"Q: {a}+{b}=? Options: {options[0]} or {options[1]}. A:"


def test_correct_option_position_varies():
    first = [t.meta["options"][0] == int(t.answer) for t in make_tasks("arithmetic_choice", N)]
    assert 0.25 < sum(first) / N < 0.75


def test_format_prompt_ends_with_prefix():
    for t in make_tasks("format", N) + make_tasks("format", N, "heldout"):
        assert t.prompt.endswith(FORMAT_PREFIX)
        assert t.answer in FORMAT_ITEMS and f"Item: {t.answer}." in t.prompt


def test_arithmetic_answers_are_exact():
    for t in make_tasks("arithmetic", N, seed=4):
        a, b, kind = t.meta["a"], t.meta["b"], t.meta["kind"]
        want = {"add": Fraction(a + b), "sub": Fraction(a - b), "frac": Fraction(a + 1, b)}[kind]
        assert Fraction(t.answer) == want
        assert "/" not in t.answer or Fraction(t.answer).denominator > 1  # reduced form
        assert t.prompt.endswith("Put the final answer in \\boxed{}.")


def test_bad_arguments():
    with pytest.raises(ValueError):
        make_tasks("algebra", 3)
    with pytest.raises(ValueError):
        make_tasks("format", 3, split="test")
