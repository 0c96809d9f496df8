"""Matplotlib figures of a run: its history, the grouped dashboard, and one step's groups.

Section 9.4.5 reads several independent axes side by side, and the BaseLM lab (lesson 9.5) shows a
skipped step's missing KL/entropy as a gap, not a zero. Every function here returns a
``Figure`` and never calls ``plt.show()``: in Jupyter the returned figure renders once (as the cell's
value); in a script or a test (Agg) nothing is displayed. Figures are closed in pyplot's registry
before they are returned, so a loop that makes many does not leak them.

NaN is a gap: lines are drawn with markers, so a measured step between two gaps still shows.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from helpers.diagnostics import GROUPS

_SKIP = ("step",)


def _history_of(obj: Any) -> dict[str, list]:
    return obj.history if hasattr(obj, "history") and not isinstance(obj, dict) else obj


def _numeric_keys(history: dict[str, list]) -> list[str]:
    keys = []
    for k, vs in history.items():
        if k in _SKIP:
            continue
        try:
            np.asarray(vs, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        keys.append(k)
    return keys


def _xs(history: dict[str, list], n: int) -> np.ndarray:
    return np.asarray(history["step"], dtype=np.float64) if "step" in history else np.arange(n)


def _panel(ax, x: np.ndarray, y: np.ndarray, key: str, label: str | None = None) -> None:
    ax.plot(x, y, marker="o", markersize=3, linewidth=1.2)
    if len(x) and np.isfinite(x).any():  # the full step range, even where this key has gaps
        lo, hi = np.nanmin(x), np.nanmax(x)
        pad = 0.03 * (hi - lo) + 0.5 * (hi == lo)
        ax.set_xlim(lo - pad, hi + pad)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    missing = int(np.isnan(y).sum())
    if missing == len(y):
        ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center", color="0.5")
    ax.set_title((label or key) + (f"  ({missing} not measured)" if missing else ""), fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)


def _finish(fig: Figure) -> Figure:
    plt.close(fig)  # out of pyplot's registry: the caller decides whether to show it
    return fig


def plot_history(
    history: Any,
    keys: list[str] | None = None,
    title: str | None = None,
    ncols: int = 3,
    labels: dict[str, str] | None = None,
) -> Figure:
    """One small panel per metric against ``history["step"]`` (or the row index).

    history: a dict of lists (``GRPOTrainer.history``, ``Dashboard.history``) or a Dashboard.
    keys:    which metrics, in order; default every numeric key except "step".
    labels:  panel titles for some keys (say what a number is: ``{"entropy": "entropy (exact)"}``).
    Returns a Figure with exactly ``len(keys)`` axes.
    """
    history = _history_of(history)
    keys = list(keys) if keys is not None else _numeric_keys(history)
    missing = [k for k in keys if k not in history]
    if missing:
        raise KeyError(f"not in the history: {missing}; it has {list(history)}")
    if not keys:
        raise ValueError("nothing to plot: the history has no numeric keys")
    ncols = max(1, min(ncols, len(keys)))
    nrows = math.ceil(len(keys) / ncols)
    fig = plt.figure(figsize=(3.4 * ncols, 2.4 * nrows), layout="constrained")
    n = max(len(history[k]) for k in keys)
    x = _xs(history, n)
    for i, key in enumerate(keys):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        _panel(ax, x, np.asarray(history[key], dtype=np.float64), key, (labels or {}).get(key))
        if i >= len(keys) - ncols:
            ax.set_xlabel("step", fontsize=8)
    if title:
        fig.suptitle(title)
    return _finish(fig)


def plot_dashboard(
    dashboard_or_history: Any,
    title: str | None = None,
    ncols: int = 4,
    labels: dict[str, str] | None = None,
) -> Figure:
    """The dashboard in four groups (data & verification, policy & optimisation, responses,
    system; see ``diagnostics.GROUPS``), one row of panels per group, only the keys present.
    Keys outside the groups go to a fifth group, "other". Returns a Figure with one axes per key.
    ``labels`` titles some panels (as in ``plot_history``).
    """
    history = _history_of(dashboard_or_history)
    present = set(_numeric_keys(history))
    groups = {name: [k for k in keys if k in present] for name, keys in GROUPS.items()}
    known = {k for keys in GROUPS.values() for k in keys}
    groups["other"] = [k for k in _numeric_keys(history) if k not in known]
    groups = {name: keys for name, keys in groups.items() if keys}
    if not groups:
        raise ValueError("nothing to plot: the history has no numeric keys")
    rows = [
        (name, keys[i : i + ncols])
        for name, keys in groups.items()
        for i in range(0, len(keys), ncols)
    ]
    width = max(len(keys) for _, keys in rows)
    fig = plt.figure(figsize=(3.2 * width, 2.5 * len(rows)), layout="constrained")
    n = max(len(v) for v in history.values())
    x = _xs(history, n)
    subfigs = np.atleast_1d(fig.subfigures(len(rows), 1))
    shown = set()
    for sub, (name, keys) in zip(subfigs, rows, strict=True):
        if name not in shown:  # a group wrapped onto several rows is titled once
            sub.suptitle(name, fontsize=10, x=0.01, ha="left", fontweight="bold")
            shown.add(name)
        for j, key in enumerate(keys):
            ax = sub.add_subplot(1, width, j + 1)
            _panel(ax, x, np.asarray(history[key], dtype=np.float64), key, (labels or {}).get(key))
    if title:
        fig.suptitle(title)
    return _finish(fig)


def plot_groups(
    rewards: Any, group: Any, informative: Any = None, title: str | None = None
) -> Figure:
    """One step's rewards by group: dots per completion and a bar at the group mean.

    informative: optional (G,) booleans, one per group in sorted group order - pass your own
                 informative-group function's answer; uninformative groups are drawn grey.
    """
    rewards = np.asarray(_cpu(rewards), dtype=np.float64)  # (N,)
    group = np.asarray(_cpu(group))  # (N,)
    ids = np.unique(group)
    flags = None if informative is None else np.asarray(_cpu(informative), dtype=bool)
    if flags is not None and flags.shape != ids.shape:
        raise ValueError(
            f"informative has shape {flags.shape}, expected one flag per group {ids.shape}"
        )
    fig = plt.figure(figsize=(max(4.0, 0.6 * len(ids) + 2), 3), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    rng = np.random.default_rng(0)  # jitter only; fixed so the figure is reproducible
    for i, g in enumerate(ids):
        r = rewards[group == g]
        color = "C0" if flags is None or flags[i] else "0.6"
        ax.bar(i, r.mean(), color=color, alpha=0.35, width=0.7)
        ax.scatter(i + rng.uniform(-0.2, 0.2, len(r)), r, s=14, color=color, zorder=3)
    ax.set_xticks(range(len(ids)), [str(g) for g in ids], fontsize=8)
    ax.set_xlabel("group (prompt)")
    ax.set_ylabel("reward")
    note = "" if flags is None else f", {int((~flags).sum())} uninformative (grey)"
    ax.set_title(title or f"{len(ids)} groups{note}", fontsize=10)
    return _finish(fig)


def _cpu(x: Any) -> Any:
    return x.detach().cpu() if hasattr(x, "detach") else x
