"""The level-B reward: a ``helpers.verifiers`` verifier wrapped as a TRL reward function.

One reward per completion; the share of each verdict category is logged through TRL as
``verifier/<category>`` (read into the dashboard by ``dashboard.history_to_dashboard``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _completion_text(completion: Any) -> Any:
    """TRL gives a str (plain prompts) or a list of messages (chat prompts)."""
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return "".join(str(m.get("content", "")) for m in completion)
    return completion


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list):
        return "".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    return str(prompt)


def reward_function(verifier) -> Callable[..., list[float]]:
    """A TRL reward function that scores each completion with a ``helpers.verifiers`` verifier.

    ``f(prompts, completions, answer, family, meta, **kwargs) -> list[float]``, one reward per
    completion. The verdict categories are logged through TRL's ``log_metric`` (when given) as
    ``verifier/<category>``: the share of completions in each category at that step.
    """
    from helpers.tasks import Task

    def reward(prompts, completions, answer, family=None, meta=None, **kwargs) -> list[float]:
        n = len(completions)
        family = family or [None] * n
        meta = meta or ["{}"] * n
        rewards, counts = [], {}
        for p, c, a, fam, m in zip(prompts, completions, answer, family, meta, strict=True):
            task = Task(_prompt_text(p), str(a), fam or "arithmetic", json.loads(m or "{}"))
            verdict = verifier.check(task, _completion_text(c))
            rewards.append(float(verdict.reward))
            counts[verdict.category] = counts.get(verdict.category, 0) + 1
        log_metric = kwargs.get("log_metric")
        if log_metric is not None:
            for cat, k in sorted(counts.items()):
                log_metric(f"verifier/{cat}", k / n)
        return rewards

    reward.__name__ = f"verify_{verifier.name}"
    return reward
