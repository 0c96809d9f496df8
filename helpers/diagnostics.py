"""The run dashboard: per step, every axis a run measures, in one table.

Lesson section 9.4.5 ("a minimum dashboard"): one mean reward is not evidence of a good update, so a
run logs several independent axes - data and verification (reward components, parse failures,
informative-group rate), policy and optimisation (entropy, KL, ratios, clip fractions, rollout age
and reuse), responses (pass@k, length, EOS/truncation, diversity) and system (generated tokens,
generated tokens per informative prompt, time, peak memory).

Division of labour, and the departure from a logging library:

- Quantities a lesson grades (entropy from logits, pass@k, clip fractions, truncation/EOS/parse-failure
  rates, length-by-bucket, informative-group rate) are *passed in* as functions of a ``Rollout``:
  ``Dashboard(metrics={"informative_rate": lambda r: my_rate(r.rewards, r.group)})``. The dashboard
  never computes them itself.
- The dashboard computes only ungraded axes: length mean/median/p90, generated tokens, reward
  mean/std, response diversity (distinct completions per group / k, averaged over groups), wall time.
  When a row has both ``gen_tokens`` and an ``informative_rate`` (your metric or a scalar), it also
  derives ``gen_tokens_per_informative`` = generated tokens / informative prompts (the cost of one
  useful group; NaN when no group was informative).
- Rollout age and reuse and peak memory depend on the trainer, so they are scalars you pass to
  ``record``: ``rollout_age`` (optimizer steps between the policy that sampled the batch and the one
  being updated), ``reuse`` (update passes over this batch so far), ``peak_mem_mb``
  (``peak_memory_mb()`` reads it).
- ``warnings(history)`` applies a few stopping-rule checks of section 9.4.2 to whatever keys exist.
  They are prompts to look at samples, not verdicts; thresholds are arguments.

A ``Rollout`` holds NumPy arrays (lessons 9.1-9.4 grade NumPy functions); ``Rollout.from_sample``
converts a ``sampling.GroupSample`` and its rewards.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Canonical key names. A lesson that names its metric functions with these keys gets them plotted
# in the right group (plots.plot_dashboard) and checked by warnings(); other keys are kept as-is.
GROUPS: dict[str, tuple[str, ...]] = {
    "data & verification": (
        "reward", "reward_mean", "reward_std", "informative_rate", "skipped", "groups",
        "parse_fail_rate", "verifier_error_rate",
    ),
    "policy & optimisation": (
        "loss", "kl", "entropy", "token_entropy", "ratio_mean", "ratio_max", "ratio_max_final",
        "clip_low", "clip_high", "clip_low_reused", "clip_high_reused", "clip_fraction", "grad_norm",
        "updates", "rollout_age", "reuse",
    ),
    "responses": (
        "heldout_pass", "pass@1", "pass@k", "len_mean", "len_median", "len_p90", "eos_rate",
        "truncation_rate", "diversity",
    ),
    "system": (
        "gen_tokens", "gen_tokens_per_informative", "gen_s", "time_s", "wall_s", "peak_mem_mb",
    ),
}  # fmt: skip


@dataclass
class Rollout:
    """One step's sampled groups and their scores, as NumPy arrays (N = groups * k rows, T tokens).

    rewards:         (N,) float64 verifier scores.
    group:           (N,) int64 prompt index of each row; rows of one prompt form a group.
    lengths:         (N,) int64 completion lengths in tokens.
    stop_reason:     N strings, "eos" (the model stopped) or "length" (cut by max_new_tokens).
    texts:           N decoded completions.
    completion_mask: (N, T) 1.0 on completion tokens, 0.0 on padding.
    logprobs:        (N, T) behaviour log-probs of the sampled tokens (0 where masked).
    ratios:          (N, T) new/old probability ratios, when the step computed them; else None.
    entropy:         (N, T) per-token entropy of the policy, when computed; else None.
    parse:           N parse categories ("ok", "no_answer", ...), when the verifier reports them.
    """

    rewards: np.ndarray
    group: np.ndarray
    lengths: np.ndarray
    stop_reason: list[str]
    texts: list[str]
    completion_mask: np.ndarray
    logprobs: np.ndarray
    ratios: np.ndarray | None = None
    entropy: np.ndarray | None = None
    parse: list[str] | None = None

    def __post_init__(self):
        self.rewards = _np(self.rewards, np.float64)
        self.group = _np(self.group, np.int64)
        self.lengths = _np(self.lengths, np.int64)
        self.completion_mask = _np(self.completion_mask, np.float64)
        self.logprobs = _np(self.logprobs, np.float64)
        self.ratios = None if self.ratios is None else _np(self.ratios, np.float64)
        self.entropy = None if self.entropy is None else _np(self.entropy, np.float64)
        self.stop_reason, self.texts = list(self.stop_reason), list(self.texts)
        n = len(self.rewards)
        sizes = [len(self.group), len(self.lengths), len(self.stop_reason), len(self.texts)]
        if any(s != n for s in sizes):
            raise ValueError(
                f"Rollout fields disagree on N: rewards {n}, group/lengths/stop/texts {sizes}"
            )

    @classmethod
    def from_sample(cls, sample: Any, rewards: Any, **optional: Any) -> Rollout:
        """From a ``sampling.GroupSample`` and its (N,) rewards; ``optional``: ratios, entropy, parse."""
        return cls(
            rewards=rewards,
            group=sample.group,
            lengths=sample.lengths,
            stop_reason=sample.stop_reason,
            texts=sample.texts,
            completion_mask=sample.completion_mask,
            logprobs=sample.logprobs,
            **optional,
        )


def _np(x: Any, dtype) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy() if x.is_floating_point() else x.detach().cpu().numpy()
    return np.asarray(x, dtype=dtype)


def diversity(texts: list[str], group: Any) -> float:
    """Distinct completions per group divided by the group's size, averaged over groups.

    1.0: every completion in every group differs; 1/k: each group repeats one completion.
    Exact string match - near duplicates count as distinct (semantic diversity is another axis).
    """
    group = np.asarray(group)
    fracs = []
    for g in np.unique(group):
        members = [t for t, gi in zip(texts, group, strict=True) if gi == g]
        fracs.append(len(set(members)) / len(members))
    return float(np.mean(fracs)) if fracs else math.nan


def peak_memory_mb() -> float:
    """Peak memory of this process in MiB: CUDA's peak allocated memory when a GPU is in use,
    else the peak resident set size of the process (``resource.getrusage``; NaN where unavailable).

    The two are different quantities (tensor memory on the device vs everything the process holds
    in RAM); log which one you read. Pass it to ``Dashboard.record(..., peak_mem_mb=...)``.
    """
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.max_memory_allocated() / 2**20
    except ImportError:
        pass
    try:
        import resource
        import sys

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
        return rss / 2**20 if sys.platform == "darwin" else rss / 2**10
    except (ImportError, OSError):
        return math.nan


def tokens_per_informative(gen_tokens: float, informative_rate: float, n_groups: int) -> float:
    """Generated tokens per informative prompt: ``gen_tokens / (informative_rate * n_groups)``.

    All tokens count, also those of the degenerate groups: that is the cost of one group with
    signal. NaN when no group was informative or nothing was measured (never a division by zero).
    """
    informative = informative_rate * n_groups
    if not math.isfinite(informative) or informative <= 0 or not math.isfinite(gen_tokens):
        return math.nan
    return float(gen_tokens / informative)


def rollout_axes(rollout: Rollout) -> dict[str, float]:
    """The ungraded axes of one rollout: reward mean/std, lengths, generated tokens, diversity."""
    lengths = rollout.lengths.astype(np.float64)
    empty = len(lengths) == 0
    return {
        "reward_mean": math.nan if empty else float(rollout.rewards.mean()),
        "reward_std": math.nan if empty else float(rollout.rewards.std()),  # population std (n)
        "len_mean": math.nan if empty else float(lengths.mean()),
        "len_median": math.nan if empty else float(np.median(lengths)),
        "len_p90": math.nan if empty else float(np.percentile(lengths, 90)),
        "gen_tokens": float(lengths.sum()),
        "diversity": diversity(rollout.texts, rollout.group),
    }


class Dashboard:
    """Per-step records of a run: scalars you pass, rollout axes, and your metric functions.

    metrics: name -> f(rollout) -> float, evaluated on every ``record`` that gets a rollout.
             Pass the lesson's own functions here (informative-group rate, truncation rate, ...).

    >>> dash = Dashboard({"informative_rate": lambda r: my_informative_rate(r.rewards, r.group)})
    >>> dash.record(step, Rollout.from_sample(sample, rewards), kl=0.01, entropy=1.2)
    >>> dash.history["informative_rate"], dash.summary()["diversity"]["last"]
    """

    def __init__(self, metrics: dict[str, Callable[[Rollout], float]] | None = None):
        self.metrics = dict(metrics or {})
        self.rows: list[dict[str, float]] = []
        self._t0 = time.perf_counter()

    def record(self, step: int, rollout: Rollout | None = None, **scalars: Any) -> dict[str, float]:
        """Add one row: ``step``, the given scalars, and (with a rollout) its axes and metrics."""
        row: dict[str, float] = {"step": float(step)}
        row.update({k: _scalar(v, k) for k, v in scalars.items()})
        if rollout is not None:
            row.update(rollout_axes(rollout))
            for name, fn in self.metrics.items():
                try:
                    row[name] = _scalar(fn(rollout), name)
                except Exception as e:
                    raise RuntimeError(f"dashboard metric {name!r} failed: {e}") from e
            if "informative_rate" in row and "gen_tokens_per_informative" not in row:
                n_groups = len(np.unique(rollout.group))
                row["gen_tokens_per_informative"] = tokens_per_informative(
                    row["gen_tokens"], row["informative_rate"], n_groups
                )
        row.setdefault("wall_s", time.perf_counter() - self._t0)
        self.rows.append(row)
        return row

    @property
    def history(self) -> dict[str, list[float]]:
        """Columns over all rows; a key missing from a row is NaN there (a gap, not a zero)."""
        keys: dict[str, None] = {}
        for row in self.rows:
            keys.update(dict.fromkeys(row))
        return {k: [row.get(k, math.nan) for row in self.rows] for k in keys}

    def summary(self) -> dict[str, dict[str, float]]:
        """Per key: first, last, min, max, mean over measured (non-NaN) steps, and n measured."""
        return summarize(self.history)

    def warnings(self, **thresholds: float) -> list[str]:
        """``warnings(self.history, ...)``."""
        return warnings(self.history, **thresholds)

    def to_json(self, path: str | Path | None = None) -> str:
        """The history as JSON (NaN -> null); written to ``path`` when given."""
        clean = {k: [None if _isnan(v) else v for v in vs] for k, vs in self.history.items()}
        text = json.dumps({"metrics": sorted(self.metrics), "history": clean}, indent=1)
        if path is not None:
            Path(path).write_text(text)
        return text

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> Dashboard:
        """A dashboard with the rows of ``to_json`` output (metric functions are not restored)."""
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            text = Path(text_or_path).read_text()
        hist = json.loads(text)["history"]
        dash = cls()
        n = max((len(v) for v in hist.values()), default=0)
        for i in range(n):
            dash.rows.append({k: (math.nan if v[i] is None else v[i]) for k, v in hist.items()})
        return dash

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"Dashboard({len(self.rows)} steps, keys={list(self.history)})"


def _scalar(v: Any, name: str) -> float:
    if hasattr(v, "item"):
        v = v.item()
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name!r} must be a number, got {type(v).__name__}: {v!r}") from None


def _isnan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def summarize(history: dict[str, list]) -> dict[str, dict[str, float]]:
    """Per key of a history: first, last, min, max, mean over non-NaN values, and n of them."""
    out = {}
    for k, vs in history.items():
        a = np.asarray(vs, dtype=np.float64)
        a = a[np.isfinite(a)]  # measured steps only
        stats = (a[0], a[-1], a.min(), a.max(), a.mean()) if len(a) else (math.nan,) * 5
        out[k] = dict(zip(("first", "last", "min", "max", "mean"), map(float, stats), strict=True))
        out[k]["n"] = len(a)
    return out


# --- stopping-rule checks (lesson 9.4, section 9.4.2) --------------------------------------------


def _first(history: dict[str, list], *names: str) -> tuple[str, np.ndarray] | None:
    for name in names:
        if name in history:
            return name, np.asarray(history[name], dtype=np.float64)
    return None


def trend(values: Any, min_points: int = 4) -> tuple[float, float] | None:
    """(mean of the first third, mean of the last third) of the measured values, or None when
    fewer than ``min_points`` are measured. NaN steps (nothing measured) are left out."""
    a = np.asarray(values, dtype=np.float64)
    a = a[np.isfinite(a)]
    if len(a) < min_points:
        return None
    third = max(1, len(a) // 3)
    return float(a[:third].mean()), float(a[-third:].mean())


def _change(tr: tuple[float, float] | None, rel: float) -> int:
    """+1 rising, -1 falling, 0 flat: a change larger than ``rel`` of the larger magnitude."""
    if tr is None:
        return 0
    first, last = tr
    scale = max(abs(first), abs(last), 1e-12)
    if last - first > rel * scale:
        return 1
    if first - last > rel * scale:
        return -1
    return 0


def warnings(history: dict[str, list], rel: float = 0.1, min_points: int = 4) -> list[str]:
    """Human-readable flags from a run's history, each computed only if its keys exist.

    Compares the mean of the first third of measured steps with the last third; a change larger
    than ``rel`` (relative) counts as rising/falling. Checks:
      - entropy falling while reward rises (concentration; look at group diversity and pass@k);
      - informative-group rate falling (groups turning all-equal: less signal per sample);
      - truncation rate rising (the policy stops stopping; check the truncation contract);
      - diversity falling (groups repeating one completion);
      - training reward rising while held-out pass rate does not (a proxy gap: read the samples).
    """
    flags = []
    reward = _first(history, "reward", "reward_mean")
    r_dir = _change(trend(reward[1], min_points), rel) if reward else 0

    def check(names, want, message):
        found = _first(history, *names)
        if found is None:
            return
        tr = trend(found[1], min_points)
        if _change(tr, rel) == want:
            flags.append(f"{message} ({found[0]}: {tr[0]:.3g} -> {tr[1]:.3g})")

    if r_dir == 1:
        check(("entropy", "token_entropy"), -1, "entropy falling while reward rises")
    check(("informative_rate",), -1, "informative-group rate falling")
    check(("truncation_rate",), 1, "truncation rate rising")
    check(("diversity",), -1, "response diversity falling")
    if r_dir == 1:
        held = _first(history, "heldout_pass", "pass@1")
        if (
            held is not None
            and trend(held[1], 2) is not None
            and _change(trend(held[1], 2), rel) < 1
        ):
            tr = trend(held[1], 2)
            flags.append(
                f"training reward rising but held-out pass rate is not "
                f"({held[0]}: {tr[0]:.3g} -> {tr[1]:.3g})"
            )
    return flags
