"""The dashboard (helpers.diagnostics), its figures (helpers.plots) and run passports
(helpers.passport), on hand-made rollouts and histories. No model; milliseconds."""

from __future__ import annotations

import dataclasses
import json
import math
from importlib import metadata
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from helpers import passport as pp  # noqa: E402
from helpers.diagnostics import (  # noqa: E402
    GROUPS,
    Dashboard,
    Rollout,
    diversity,
    peak_memory_mb,
    summarize,
    tokens_per_informative,
    warnings,
)
from helpers.plots import plot_dashboard, plot_groups, plot_history  # noqa: E402

# --- a hand-made rollout: 2 groups of k=4 ----------------------------------------------------


def hand_rollout(**optional) -> Rollout:
    lengths = [1, 2, 3, 4, 5, 6, 7, 8]
    mask = np.array([[1.0] * n + [0.0] * (8 - n) for n in lengths])  # (8, 8)
    return Rollout(
        rewards=[1, 0, 0, 1, 1, 1, 1, 1],
        group=[0, 0, 0, 0, 1, 1, 1, 1],
        lengths=lengths,
        stop_reason=["eos"] * 6 + ["length"] * 2,
        texts=["a", "a", "b", "c", "x", "x", "x", "x"],
        completion_mask=mask,
        logprobs=-0.5 * mask,
        **optional,
    )


def truncation_rate(r: Rollout) -> float:  # a lesson's function would be passed in like this
    return sum(s == "length" for s in r.stop_reason) / len(r.stop_reason)


def test_diversity_by_hand():
    # group 0: {"a", "b", "c"} of 4 -> 3/4; group 1: {"x"} of 4 -> 1/4; mean 0.5
    assert diversity(["a", "a", "b", "c", "x", "x", "x", "x"], [0, 0, 0, 0, 1, 1, 1, 1]) == 0.5
    assert diversity(["p", "q"], [3, 3]) == 1.0
    assert math.isnan(diversity([], []))


def test_dashboard_records_axes_and_calls_metrics():
    calls = []

    def tracked(r):
        calls.append(len(r.rewards))
        return truncation_rate(r)

    dash = Dashboard({"truncation_rate": tracked})
    row = dash.record(0, hand_rollout(), kl=torch.tensor(0.1), entropy=1.5)
    dash.record(1, kl=math.nan)  # a skipped step: nothing measured
    assert calls == [8], "metric functions run once per recorded rollout"
    assert row["truncation_rate"] == 0.25 and row["diversity"] == 0.5
    assert row["reward_mean"] == 0.75 and row["reward_std"] == pytest.approx(math.sqrt(0.75 * 0.25))
    assert row["len_mean"] == 4.5 and row["len_median"] == 4.5 and row["gen_tokens"] == 36
    assert row["len_p90"] == pytest.approx(np.percentile(np.arange(1, 9), 90))
    h = dash.history
    assert h["step"] == [0.0, 1.0] and h["kl"][0] == pytest.approx(0.1) and math.isnan(h["kl"][1])
    assert math.isnan(h["diversity"][1]) and math.isnan(h["entropy"][1])
    assert len(dash) == 2 and h["wall_s"][1] >= h["wall_s"][0] >= 0
    s = dash.summary()
    assert (
        s["kl"]["n"] == 1 and s["kl"]["last"] == pytest.approx(0.1) and s["entropy"]["mean"] == 1.5
    )


def test_dashboard_system_axes_of_the_minimum_dashboard():
    # seed 000's minimum dashboard: rollout age and reuse, peak memory, tokens per informative prompt
    named = {k for keys in GROUPS.values() for k in keys}
    assert {"rollout_age", "reuse", "peak_mem_mb", "gen_tokens_per_informative"} <= named
    assert "rollout_age" in GROUPS["policy & optimisation"] and "peak_mem_mb" in GROUPS["system"]

    def informative(r):  # group 0 = (1, 0, 0, 1) informative, group 1 all ones: rate 1/2
        return 0.5

    row = Dashboard({"informative_rate": informative}).record(
        0, hand_rollout(), rollout_age=2, reuse=3, peak_mem_mb=peak_memory_mb()
    )
    # 36 generated tokens for 2 groups, one informative: 36 tokens per informative prompt
    assert row["gen_tokens_per_informative"] == 36.0
    assert row["rollout_age"] == 2.0 and row["reuse"] == 3.0
    assert math.isfinite(row["peak_mem_mb"]) and row["peak_mem_mb"] > 1.0  # this process: > 1 MiB
    # no informative group: NaN, not a division by zero and not 0
    none = Dashboard({"informative_rate": lambda r: 0.0}).record(0, hand_rollout())
    assert math.isnan(none["gen_tokens_per_informative"])
    # without an informative_rate there is nothing to derive (existing callers keep their keys)
    assert "gen_tokens_per_informative" not in Dashboard().record(0, hand_rollout())
    # a value passed in explicitly wins over the derived one
    given = Dashboard({"informative_rate": informative}).record(
        0, hand_rollout(), gen_tokens_per_informative=7.0
    )
    assert given["gen_tokens_per_informative"] == 7.0
    assert tokens_per_informative(100.0, 0.25, 8) == 50.0
    assert math.isnan(tokens_per_informative(100.0, math.nan, 8))


def test_dashboard_json_round_trip_and_errors(tmp_path):
    dash = Dashboard()
    dash.record(0, hand_rollout(), kl=0.2)
    dash.record(1, kl=math.nan)
    text = dash.to_json(tmp_path / "run.json")
    assert "NaN" not in text and json.loads(text)["history"]["kl"] == [0.2, None]
    for src in (text, tmp_path / "run.json"):
        back = Dashboard.from_json(src).history
        assert back["kl"][0] == 0.2 and math.isnan(back["kl"][1])
    bad = Dashboard({"broken": lambda r: 1 / 0})
    with pytest.raises(RuntimeError, match="broken"):
        bad.record(0, hand_rollout())
    with pytest.raises(TypeError, match="number"):
        Dashboard().record(0, kl="high")
    with pytest.raises(ValueError, match="disagree"):
        dataclasses.replace(hand_rollout(), texts=["a"])


def test_rollout_from_sample_converts_to_numpy():
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    sample = SimpleNamespace(
        group=torch.tensor([0, 0]),
        lengths=mask.sum(1),
        stop_reason=["length", "eos"],
        texts=["12", "3"],
        completion_mask=mask,
        logprobs=torch.tensor([[-1.0, -2.0], [-0.5, 0.0]]),
    )
    r = Rollout.from_sample(sample, torch.tensor([1.0, 0.0]), parse=["ok", "no_answer"])
    assert isinstance(r.rewards, np.ndarray) and r.rewards.dtype == np.float64
    assert r.lengths.tolist() == [2, 1] and r.group.dtype == np.int64 and r.ratios is None
    assert r.parse == ["ok", "no_answer"]


def test_warnings_flag_trends_on_present_keys():
    n = 9
    rising, falling = list(np.linspace(0.1, 0.9, n)), list(np.linspace(2.0, 0.5, n))
    h = {
        "step": list(range(n)),
        "reward": rising,
        "entropy": falling,
        "truncation_rate": rising,
        "informative_rate": falling,
        "heldout_pass": [0.3] * n,
    }
    flags = " | ".join(warnings(h))
    for needle in (
        "entropy falling",
        "truncation rate rising",
        "informative-group rate falling",
        "held-out pass rate is not",
    ):
        assert needle in flags, flags
    assert warnings({"reward": [0.5] * n, "entropy": [1.0] * n}) == []
    assert warnings({"reward": rising[:3], "entropy": falling[:3]}) == [], "too few points"
    # NaN steps (skips) are left out, not read as zeros
    gappy = {
        "reward": rising,
        "entropy": [2.0, math.nan, 1.9, math.nan, 2.0, math.nan, 1.95, 2.0, 2.0],
    }
    assert warnings(gappy) == []
    assert summarize({"x": [math.nan, math.nan]})["x"]["n"] == 0


# --- plots ------------------------------------------------------------------------------------


def history_with_gaps() -> dict[str, list]:
    return {
        "step": [0, 1, 2, 3],
        "reward": [0.1, 0.2, 0.3, 0.5],
        "kl": [math.nan, 0.01, math.nan, 0.02],
        "entropy": [math.nan] * 4,
        "len_mean": [3, 4, 5, 6],
        "gen_tokens": [10, 10, 12, 13],
        "my_metric": [1, 2, 3, 4],
    }


def test_plot_history_one_axes_per_key_with_nan():
    h = history_with_gaps()
    fig = plot_history(h, title="run")
    assert isinstance(fig, Figure) and len(fig.axes) == 6  # every key but "step"
    fig = plot_history(h, keys=["kl", "reward"])
    assert len(fig.axes) == 2 and fig.axes[0].get_title().startswith("kl")
    assert "2 not measured" in fig.axes[0].get_title()
    fig.canvas.draw()  # renders with NaN without error
    with pytest.raises(KeyError, match="nope"):
        plot_history(h, keys=["nope"])
    dash = Dashboard()
    dash.record(0, hand_rollout(), kl=0.1)
    assert len(plot_history(dash, keys=["diversity"]).axes) == 1


def test_plot_dashboard_groups_present_axes():
    fig = plot_dashboard(history_with_gaps())
    titles = [ax.get_title().split()[0] for ax in fig.axes]
    assert sorted(titles) == sorted(
        ["reward", "kl", "entropy", "len_mean", "gen_tokens", "my_metric"]
    )
    groups = [sf.get_suptitle() for sf in fig.subfigs]
    assert groups == [
        "data & verification",
        "policy & optimisation",
        "responses",
        "system",
        "other",
    ]
    fig.canvas.draw()


def test_panels_say_what_a_number_is():
    labels = {"entropy": "entropy (sampled surprisal, informative rows)"}
    titles = [ax.get_title() for ax in plot_dashboard(history_with_gaps(), labels=labels).axes]
    assert any(t.startswith(labels["entropy"]) for t in titles) and "kl" in [
        t.split()[0] for t in titles
    ]
    fig = plot_history(history_with_gaps(), keys=["entropy", "kl"], labels=labels)
    assert fig.axes[0].get_title().startswith(labels["entropy"]) and fig.axes[
        1
    ].get_title().startswith("kl")


def test_plot_groups():
    rewards, group = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 1.0]), torch.tensor([0, 0, 0, 1, 1, 1])
    fig = plot_groups(rewards, group, informative=[True, False])
    assert len(fig.axes) == 1 and "1 uninformative" in fig.axes[0].get_title()
    assert len(plot_groups(rewards, group).axes) == 1
    with pytest.raises(ValueError, match="one flag per group"):
        plot_groups(rewards, group, informative=[True])


# --- passports --------------------------------------------------------------------------------


@dataclasses.dataclass
class Cfg:
    k: int = 8
    kl_coef: float = 0.05
    top_p: float | None = None
    tags: tuple = ("a", "b")


def test_config_hash_is_stable_and_sensitive():
    h = pp.config_hash(Cfg())
    assert h == pp.config_hash(Cfg()) and len(h) == 16 and int(h, 16) >= 0
    assert h == pp.config_hash({"tags": ["a", "b"], "top_p": None, "kl_coef": 0.05, "k": 8})
    assert h != pp.config_hash(Cfg(kl_coef=0.0))
    assert pp.config_hash({"f": truncation_rate}).isalnum()  # callables by qualified name
    with pytest.raises(TypeError, match="passport"):
        pp.config_hash({"x": object()})
    t = torch.arange(6.0).reshape(2, 3)
    assert pp.tensor_hash(t) == pp.tensor_hash(t.clone()) != pp.tensor_hash(t + 1)
    assert pp.tensor_hash(t) != pp.tensor_hash(t.reshape(3, 2))
    assert pp.tensor_hash(t.to(torch.bfloat16)) != pp.tensor_hash(t)


def test_passport_round_trip(tmp_path):
    verifier = SimpleNamespace(passport={"name": "verify_x", "version": "1", "config_hash": "abc"})
    (tmp_path / "data.txt").write_text("hello")
    p = pp.make_passport(
        Cfg(),
        verifier=verifier,
        extra={"note": "smoke"},
        tensors={"w": torch.ones(3)},
        files=[tmp_path / "data.txt"],
    )
    assert p["config"]["k"] == 8 and p["config_hash"] == pp.config_hash(Cfg())
    m = p["machine"]  # what decides a float run's last bits
    assert m["cpu"] and m["arch"] and m["cores"] >= 1
    assert m["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert p["verifier"]["name"] == "verify_x" and p["extra"] == {"note": "smoke"}
    assert {"python", "torch", "numpy", "nbgrader"} <= set(p["versions"])
    assert p["versions"]["torch"] == metadata.version("torch")
    assert set(p["git"]) == {"commit", "dirty"} and len(p["hashes"]["tensors"]["w"]) == 16
    path = pp.save_passport(p, tmp_path / "runs" / "passport.json")
    assert pp.load_passport(path) == json.loads(json.dumps(p))
    assert [f.name for f in path.parent.iterdir()] == ["passport.json"], "no temp file left behind"
    q = pp.make_passport(Cfg(kl_coef=0.0), verifier=verifier)
    diff = pp.diff_passports(p, q)
    assert diff["config.kl_coef"] == (0.05, 0.0) and "config_hash" in diff and "created" not in diff
    fn_only = pp.make_passport({"k": 1}, verifier=truncation_rate)
    assert fn_only["verifier"]["passport"] is None and fn_only["verifier"]["name"].endswith(
        "truncation_rate"
    )
