"""TRL's logged metrics read into the course dashboard (``helpers.diagnostics.Dashboard``).

Values are copied under the course's key names (``TRL_KEYS``), never recomputed:
``informative_rate = 1 - frac_reward_zero_std`` and ``clip_low``/``clip_high`` are TRL's numbers.
"""

from __future__ import annotations

# course key -> TRL log key (TRL 1.16 names). Values are copied, never recomputed.
TRL_KEYS = {
    "reward": "reward",
    "reward_std": "reward_std",
    "entropy": "entropy",
    "kl": "kl",
    "clip_low": "clip_ratio/low_mean",
    "clip_high": "clip_ratio/high_mean",
    "clip_fraction": "clip_ratio/region_mean",
    "len_mean": "completions/mean_length",
    "len_min": "completions/min_length",
    "len_max": "completions/max_length",
    "truncation_rate": "completions/clipped_ratio",
    "len_terminated_mean": "completions/mean_terminated_length",
    "loss": "loss",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
    "tokens_seen": "num_tokens",  # cumulative prompt + completion tokens (TRL)
    "time_s": "step_time",
}


def history_to_dashboard(log_history: list[dict]):
    """A ``helpers.diagnostics.Dashboard`` with one row per logged training step of TRL.

    Keys follow the course (``TRL_KEYS``); ``informative_rate = 1 - frac_reward_zero_std`` (TRL
    counts a group as zero-std with ``torch.isclose(std, 0)``). ``kl`` appears only when beta > 0
    (TRL logs it only then: a missing KL is a gap, not a zero). With ``num_iterations > 1`` the
    steps that reuse a rollout log no reward (nothing was sampled): NaN there. Verifier category shares logged by
    ``reward_function`` keep their ``verifier/<category>`` names; ``parse_fail_rate`` sums the
    shares of parse_error and no_answer. The final summary row of ``Trainer.train`` is skipped.
    """
    from helpers.diagnostics import Dashboard

    dash = Dashboard()
    for row in log_history:
        if "step" not in row or "train_runtime" in row:
            continue
        scalars = {}
        for course_key, trl_key in TRL_KEYS.items():
            v = row.get(trl_key)
            if v is not None:
                scalars[course_key] = float(v)
        if row.get("frac_reward_zero_std") is not None:
            scalars["informative_rate"] = 1.0 - float(row["frac_reward_zero_std"])
        fails = [row[k] for k in ("verifier/parse_error", "verifier/no_answer") if k in row]
        if fails:
            scalars["parse_fail_rate"] = float(sum(v or 0.0 for v in fails))
        for k, v in row.items():
            if k.startswith(("verifier/", "rewards/")) and v is not None:
                scalars[k] = float(v)
        dash.record(int(row["step"]), **scalars)
    return dash
