"""The frozen reference policy pi_ref, and a fingerprint that proves it stayed frozen.

Lesson 9.2 (section 9.2.1) keeps three roles apart: the old policy that sampled the batch, the current
policy being optimised, and the reference policy, an optional KL anchor. Lesson 9.5's pitfall list
names the failure this module guards against: "a reference model that isn't frozen" makes the KL
term measure nothing. So the reference is loaded once, every parameter has ``requires_grad=False``,
it stays in eval mode, and a trainer can check at any time that its weights hash to the value
recorded when it was loaded:

    ref = load_reference(policy)          # or load_reference(load_baselm) for a fresh copy
    ref_fp = fingerprint(ref)
    ...train the policy...
    assert_frozen(ref, ref_fp)            # AssertionError if anything about ref changed
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable

import torch
import torch.nn as nn


def load_reference(factory_or_model: nn.Module | Callable[[], object]) -> nn.Module:
    """A frozen reference model: ``requires_grad_(False)`` and ``.eval()``.

    Given a module, returns a deep copy (so later training of the original cannot reach it).
    Given a factory, calls it once and uses what it returns; a ``(model, tokenizer)`` pair such as
    ``load_baselm()``'s is accepted and only the model is kept.
    """
    if isinstance(factory_or_model, nn.Module):
        ref = copy.deepcopy(factory_or_model)
    elif callable(factory_or_model):
        ref = factory_or_model()
        if isinstance(ref, tuple):
            ref = ref[0]
    else:
        raise TypeError("load_reference takes an nn.Module or a zero-argument factory")
    if not isinstance(ref, nn.Module):
        raise TypeError(f"the factory returned {type(ref).__name__}, not an nn.Module")
    ref.requires_grad_(False)
    ref.eval()
    return ref


def fingerprint(model: nn.Module, exclude: str | None = None) -> str:
    """A short hash (16 hex digits) of every parameter's shape, dtype and values, in order.

    Parameter *names* are not hashed, so a model and the same model wrapped by peft (whose base
    weights get longer names) hash alike once the adapters are excluded (``exclude="lora_"``).
    """
    h = hashlib.sha256()
    for name, p in model.named_parameters():
        if exclude is not None and exclude in name:
            continue
        t = p.detach().to("cpu").contiguous().reshape(-1)
        h.update(f"{tuple(p.shape)}{t.dtype};".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:16]


def assert_frozen(ref: nn.Module, expected_fingerprint: str) -> None:
    """Raise AssertionError unless ``ref`` is frozen, in eval mode and unchanged since loading."""
    grad = [n for n, p in ref.named_parameters() if p.requires_grad]
    if grad:
        raise AssertionError(f"reference has {len(grad)} trainable parameters, e.g. {grad[0]}")
    if ref.training:
        raise AssertionError(
            "reference is in train mode; call .eval() (dropout would make it random)"
        )
    now = fingerprint(ref)
    if now != expected_fingerprint:
        raise AssertionError(
            f"reference weights changed: fingerprint {now} != {expected_fingerprint}"
        )


__all__ = ["assert_frozen", "fingerprint", "load_reference"]
