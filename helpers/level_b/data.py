"""The level-B prompt set: ``helpers.tasks`` tasks as a ``datasets.Dataset`` for TRL.

Each row carries the prompt (plain text, or a one-message chat list for a chat template) and the
columns the reward function reads (``answer``, ``family``, ``split``, ``meta``).
"""

from __future__ import annotations

import json


def make_dataset(
    family: str, n: int, split: str = "train", seed: int = 0, *, conversational: bool = False
):
    """``n`` tasks of ``family`` as a ``datasets.Dataset``.

    Columns: ``prompt`` (text, or a one-message chat list when ``conversational``), ``answer``,
    ``family``, ``split`` and ``meta`` (the task's meta as JSON text). TRL passes every column but
    ``prompt`` to the reward functions as keyword lists, one entry per completion.
    """
    from datasets import Dataset

    from helpers.tasks import make_tasks

    tasks = make_tasks(family, n, split=split, seed=seed)  # type: ignore[arg-type]
    rows = {
        "prompt": [
            [{"role": "user", "content": t.prompt}] if conversational else t.prompt for t in tasks
        ],
        "answer": [t.answer for t in tasks],
        "family": [t.family for t in tasks],
        "split": [split] * len(tasks),
        "meta": [json.dumps(t.meta, sort_keys=True) for t in tasks],
    }
    return Dataset.from_dict(rows)
