"""Research scripts and benchmarks use the lessons' reference functions, never a copy of them.

A lesson's graded functions have one home, the lesson's solution cells; ``course.reference`` makes
them importable. A copy in a probe, a record maker or a benchmark drifts from the lesson unseen (the
training-step benchmark's copy of ``group_advantages`` had TRL's sample std and eps 1e-4, the CPU
lab's record maker's a ``std > 0`` guard where the lesson tests max == min), so these tests check
that the scripts hold the lesson's own function objects, and that no script under dev/ or bench/
defines a function named like a lesson's graded function."""

from __future__ import annotations

import ast
import math
import warnings

import torch

from course.build_lessons import LESSONS, graded_functions
from course.reference import reference
from tests.conftest import ROOT

GRADED = {name: lesson for lesson in LESSONS for name in graded_functions(lesson)}


def test_reference_is_every_graded_function_of_each_lesson_once():
    for lesson in LESSONS:
        ref = reference(lesson)
        assert sorted(vars(ref)) == sorted(graded_functions(lesson)), lesson
        assert reference(lesson) is ref, "cached: every caller gets the same objects"
        for name, fn in vars(ref).items():
            assert callable(fn) and fn.__name__ == name, (lesson, name)
    # the lesson's own behaviour, not a stand-in: 9.5's degenerate-group rule (max == min), which a
    # std > 0 guard misses on a float32 row of 1.2s
    flat = torch.full((1, 7), 1.2)
    assert float(flat.std(unbiased=False)) > 0
    assert torch.equal(reference("9.5").group_advantages(flat), torch.zeros(1, 7))


def test_no_script_defines_a_lessons_graded_function():
    copies = []
    for path in sorted([*(ROOT / "dev").rglob("*.py"), *(ROOT / "bench").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in GRADED:
                copies.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
                              f"(lesson {GRADED[node.name]}: use course.reference)")  # fmt: skip
    assert not copies, "\n".join(copies)


def test_baselm_lab_settings_probe_runs_lesson_95s_train_step():
    from dev.baselm_lab_settings import lab

    ref = reference("9.5")
    assert lab.train_step is ref.train_step
    assert lab.STEPS["std"] is ref.train_step
    mean = lab.STEPS["mean"]  # the same code, only its group_advantages replaced
    assert mean.__code__ is ref.train_step.__code__
    changed = {k for k, v in mean.__globals__.items() if ref.train_step.__globals__.get(k) is not v}
    assert changed == {"group_advantages"}
    assert mean.__globals__["group_advantages"] is lab.mean_only_advantages


def test_gru_lab_smoke_record_runs_lesson_95s_functions():
    from dev.records import gru_lab_smoke

    ref = reference("9.5")
    assert gru_lab_smoke.REFERENCE_FNS == {
        "advantages_fn": ref.group_advantages,
        "loss_fn": ref.clipped_grpo_loss,
        "entropy_fn": ref.token_entropy,
        "pass_at_k_fn": ref.pass_at_k,
        "clip_fraction_fn": ref.clip_fractions,
        "kl_fn": ref.kl_to_reference,
    }
    for key, fn in gru_lab_smoke.REFERENCE_FNS.items():
        assert fn is getattr(ref, fn.__name__), key


def test_bench_step_times_lesson_95s_functions(monkeypatch):
    from bench.bench_step import grpo_token_step
    from helpers.standins import tiny_trainer

    ref = reference("9.5")
    called = []
    for name in ("group_advantages", "clipped_grpo_loss", "kl_to_reference"):
        real = getattr(ref, name)

        def spy(*a, _real=real, _name=name, **kw):
            called.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(ref, name, spy)
    trainer = tiny_trainer(grpo_token_step, "mixed", 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = trainer.run_step()
    assert called == ["group_advantages", "clipped_grpo_loss", "kl_to_reference"]
    assert row["updates"] == 1 and math.isfinite(row["kl"])  # a number, not NaN or inf
