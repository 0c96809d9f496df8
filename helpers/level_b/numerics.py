"""Numerics of a level-B run: inf/NaN losses and gradient norms, and the optimiser steps fp16's
loss scaler skipped.

Qwen3 is published in bf16, and its activations can overflow fp16's range (max 65 504) on a T4. The
command line exits with status 1 when ``numerics_report`` is not ``ok``.
"""

from __future__ import annotations

import math


def _step_monitor(trainer):
    """A ``TrainerCallback`` that records, per optimiser step, whether the optimiser really stepped:
    with fp16 the loss scaler skips a step whose gradients overflowed
    (``accelerator.optimizer_step_was_skipped``). ``.skipped`` lists those global steps (1-based)."""
    from transformers import TrainerCallback

    class StepMonitor(TrainerCallback):
        def __init__(self):
            self.skipped: list[int] = []

        def on_optimizer_step(self, args, state, control, **kwargs):
            if getattr(trainer.accelerator, "optimizer_step_was_skipped", False):
                self.skipped.append(state.global_step + 1)  # incremented after this callback
            return control

    return StepMonitor()


def numerics_report(log_history: list[dict], skipped: list[int], precision: str = "fp32") -> dict:
    """inf/NaN losses and gradient norms in TRL's log, and the optimiser steps the loss scaler
    skipped. ``ok`` is False if any logged loss is not finite, if a gradient norm is not finite
    without fp16 (there nothing skips the step: the weights are then corrupted), or if more than
    ``max(2, steps // 5)`` steps were skipped (a few early skips are the fp16 scaler calibrating its
    scale; persistent ones mean the forward or backward overflows fp16)."""
    rows = [r for r in log_history if "step" in r and "train_runtime" not in r]

    def bad(key):
        return [int(r["step"]) for r in rows if key in r and not math.isfinite(float(r[key]))]

    steps = max([int(r["step"]) for r in rows], default=0)
    loss_bad, grad_bad = bad("loss"), bad("grad_norm")
    allowed = max(2, steps // 5)
    problems = []
    if loss_bad:
        problems.append(f"non-finite loss at steps {loss_bad}")
    if grad_bad and precision != "fp16":
        problems.append(
            f"non-finite gradient norm at steps {grad_bad} (no loss scaler to skip them)"
        )
    if len(skipped) > allowed:
        problems.append(f"{len(skipped)} of {steps} optimiser steps skipped (allowed {allowed})")
    return {
        "steps": steps,
        "nonfinite_loss_steps": loss_bad,
        "nonfinite_grad_norm_steps": grad_bad,
        "skipped_optimizer_steps": list(skipped),
        "allowed_skips": allowed,
        "ok": not problems,
        "problems": problems,
    }
