"""Task families for the module: prompts with a checkable reference answer, made from a seed.

Three families (the BaseLM lab's `arithmetic_choice_task` / `format_task`, plus free-response
arithmetic for the verifier lesson, 9.1):

- ``arithmetic_choice``: a two-digit addition with two numeric options, one of them the sum.
  Two options keep a checkable arithmetic decision while a small base model still produces both
  successes and failures inside a group (free response was almost always all-wrong for BaseLM).
- ``format``: the prompt ends with the opening ``{"answer":`` of a JSON object; completing it into a
  valid object is the success criterion (see ``verifiers.verify_format``).
- ``arithmetic``: free-response addition/subtraction whose answer may be an integer or a fraction,
  for the numeric verifier of lesson 9.1.

Split rule (train and held-out are disjoint by construction): every task is keyed by its operand
pair ``(a, b)``; the pair is held out iff ``(3 * a + 5 * b) % 7 == 0`` (one pair in seven, 1,157 of
the 8,100 two-digit pairs). Train tasks are drawn only from the other pairs, so a held-out prompt
never appears in training, and the rule does not depend on the seed: two seeds give different draws
from the same two pools. The rule allows transfer: it depends on the operands modulo 7, not on
their digits, so every ones-digit fact (3 + 9), every tens-digit fact and every carry occurs in
both pools; only the combination of the two operands is new. (An earlier rule, ``(7a + 3b) % 5``,
depended on the ones digits only: 20 of the 100 ones-digit pairs never occurred in training, so no
model could learn them there.) Format items are split by index: item ``i`` is held out iff
``i % 7 == 3`` (30 of the 210 items).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Literal

Family = Literal["arithmetic_choice", "format", "arithmetic"]
Split = Literal["train", "heldout"]

FORMAT_PREFIX = '{"answer":'
_NAMED_ITEMS = (
    "apple", "river", "seven", "blue", "window", "cloud", "tiger", "paper", "green", "stone",
    "music", "north", "bread", "light", "horse", "sugar", "table", "winter", "glass", "forest",
    "orange", "silver", "candle", "rocket", "garden", "planet", "coffee", "yellow", "bridge", "pencil",
)  # fmt: skip
# BaseLM's other words (its JSON and plain-text lines, helpers.baselm); no format item is one of
# them. First letters cover a-z.
CORPUS_WORDS = (
    "anchor", "arrow", "autumn", "basket", "button", "butter", "cactus", "copper", "castle",
    "desert", "dragon", "dinner", "engine", "eagle", "feather", "fabric", "flower", "ginger",
    "guitar", "hammer", "harbor", "honey", "island", "igloo", "jacket", "jungle", "kettle",
    "kitten", "ladder", "lemon", "lantern", "marble", "meadow", "mirror", "needle", "nickel",
    "napkin", "ocean", "olive", "otter", "pepper", "pillow", "puzzle", "quartz", "quilt",
    "rabbit", "ribbon", "radio", "saddle", "shadow", "spider", "tunnel", "turtle", "tomato",
    "umbrella", "uncle", "velvet", "violin", "valley", "wagon", "walnut", "wizard", "xylophone",
    "yogurt", "zebra", "zipper",
)  # fmt: skip


def _made_up_items(n: int) -> tuple[str, ...]:
    """``n`` pronounceable made-up words (consonant-vowel-consonant-vowel, or with a final
    consonant), drawn from a fixed seed so that the pool is the same everywhere."""
    cons, vows = "bdfgklmnprstvz", "aeiou"
    words = sorted(
        {c1 + v1 + c2 + v2 for c1 in cons for v1 in vows for c2 in cons for v2 in vows}
        | {c1 + v1 + c2 + v2 + c3 for c1 in "bdkmprst" for v1 in "aiou" for c2 in "lmnr"
           for v2 in "aeo" for c3 in "kns"}
    )  # fmt: skip
    words = [w for w in words if w not in CORPUS_WORDS and w not in _NAMED_ITEMS]
    return tuple(random.Random("format-items/v2").sample(words, n))


FORMAT_ITEMS = _NAMED_ITEMS + _made_up_items(180)
"""The format family's 210 items: 30 everyday words, then 180 made-up words; index = position."""


@dataclass(frozen=True)
class Task:
    """One prompt and what a verifier needs to score a completion of it.

    prompt:  the text the policy continues (the completion starts right after it).
    answer:  the reference answer as text ("81", "3/7"; for ``format`` the item word).
    family:  which task family made it.
    meta:    family-specific fields (operands, options, split) for audits and plots.
    """

    prompt: str
    answer: str
    family: Family
    meta: dict = field(default_factory=dict, compare=False, hash=False)


def is_heldout(a: int, b: int) -> bool:
    """The split rule: operand pair (a, b) belongs to the held-out pool (one pair in seven)."""
    return (3 * a + 5 * b) % 7 == 0


def is_heldout_item(index: int) -> bool:
    """The format family's split rule: ``FORMAT_ITEMS[index]`` is held out (one item in seven)."""
    return index % 7 == 3


@cache
def _pairs(split: Split, lo: int = 10, hi: int = 99) -> tuple[tuple[int, int], ...]:
    want = split == "heldout"
    return tuple(
        (a, b) for a in range(lo, hi + 1) for b in range(lo, hi + 1) if is_heldout(a, b) == want
    )


def arithmetic_choice_task(rng: random.Random, split: Split = "train") -> Task:
    """Two-digit addition with two options; the correct option's position is random.

    The distractor differs from the sum by 1..10 (either sign), so both options look plausible.
    """
    a, b = rng.choice(_pairs(split))
    s = a + b
    d = rng.choice([x for x in range(-10, 11) if x != 0])
    options = [s, s + d]
    rng.shuffle(options)
    prompt = f"Q: {a}+{b}=? Options: {options[0]} or {options[1]}. A:"
    meta = {"a": a, "b": b, "options": tuple(options), "split": split}
    return Task(prompt=prompt, answer=str(s), family="arithmetic_choice", meta=meta)


def _format_pool(split: Split) -> list[str]:
    return [w for i, w in enumerate(FORMAT_ITEMS) if is_heldout_item(i) == (split == "heldout")]


def _format_item_task(item: str, split: Split) -> Task:
    prompt = f"Item: {item}. Reply in JSON. {FORMAT_PREFIX}"
    return Task(prompt=prompt, answer=item, family="format", meta={"item": item, "split": split})


def format_task(rng: random.Random, split: Split = "train") -> Task:
    """A prompt that ends with the opening ``{"answer":`` of a JSON object.

    Items are split by index (``is_heldout_item``), so train and held-out items differ: 180 train
    items, 30 held-out.
    """
    return _format_item_task(rng.choice(_format_pool(split)), split)


def format_pool_tasks(split: Split = "heldout") -> list[Task]:
    """Every item of the format family's ``split`` once, in ``FORMAT_ITEMS`` order (30 held-out,
    180 train): the whole pool, for scoring a policy on all of it rather than on draws."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    return [_format_item_task(item, split) for item in _format_pool(split)]


def arithmetic_task(rng: random.Random, split: Split = "train") -> Task:
    """Free-response arithmetic: ``a+b`` or ``a-b``, or a sum of two fractions with denominator b.

    The reference answer is exact text: an integer, or a reduced fraction ``p/q``.
    """
    a, b = rng.choice(_pairs(split))
    kind = rng.choice(["add", "sub", "frac"])
    if kind == "add":
        q, ans = f"What is {a} + {b}?", Fraction(a + b)
    elif kind == "sub":
        q, ans = f"What is {a} - {b}?", Fraction(a - b)
    else:
        q, ans = f"What is {a}/{b} + 1/{b}?", Fraction(a + 1, b)
    text = str(ans.numerator) if ans.denominator == 1 else f"{ans.numerator}/{ans.denominator}"
    prompt = f"{q} Put the final answer in \\boxed{{}}."
    meta = {"a": a, "b": b, "kind": kind, "split": split}
    return Task(prompt=prompt, answer=text, family="arithmetic", meta=meta)


TASK_BUILDERS = {
    "arithmetic_choice": arithmetic_choice_task,
    "format": format_task,
    "arithmetic": arithmetic_task,
}


def make_tasks(family: Family, n: int, split: Split = "train", seed: int = 0) -> list[Task]:
    """``n`` tasks of one family and split, reproducible from ``seed``.

    Draws are with replacement from the split's pool; the held-out pool of ``format`` has 30
    items, so expect repeats there (``format_pool_tasks`` lists each item once).
    """
    if family not in TASK_BUILDERS:
        raise ValueError(f"unknown task family {family!r}; choose one of {sorted(TASK_BUILDERS)}")
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    rng = random.Random(f"{family}/{split}/{seed}")
    return [TASK_BUILDERS[family](rng, split) for _ in range(n)]
