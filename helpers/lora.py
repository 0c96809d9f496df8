"""LoRA adapters on a causal LM through peft, seeded, with a report of what is trainable.

The BaseLM lab's policy: BaseLM with rank-8 adapters on the attention query/value projections, every
base weight frozen; only the adapters get gradients and optimizer state. A LoRA layer replaces
``W x`` by ``W x + (alpha / r) * B A x`` with A (r, d_in) drawn at random and B (d_out, r) zero, so
the adapted model starts exactly equal to the base model (a zero delta).

The lab also warns about "changing initialization between verifier comparisons": two runs that
must differ only in their reward have to start from the same adapter basis. ``add_lora`` therefore
draws A from its own ``seed`` (inside a forked RNG: the global torch RNG is not touched), so the
same seed gives the same A matrices. ``adapter_state`` and ``base_state_hash`` let a test or a
lesson show that training moved the adapters and nothing else.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch
import torch.nn as nn
from peft import LoraConfig, get_peft_model

from helpers.reference import fingerprint

ADAPTER_TAG = "lora_"  # every peft LoRA parameter name contains it (lora_A, lora_B, ...)


def add_lora(
    model: nn.Module,
    *,
    r: int = 8,
    alpha: int = 16,
    dropout: float = 0.0,
    target_modules: Sequence[str] = ("q_proj", "v_proj"),
    seed: int = 0,
):
    """Wrap ``model`` with LoRA adapters (a peft ``PeftModelForCausalLM``); base weights frozen.

    r: adapter rank; alpha: scale numerator (delta = alpha / r * B A); dropout: on the adapter
    input; target_modules: names of the linear layers to adapt; seed: draws the A matrices.
    Note that peft injects the adapter layers into ``model`` itself: keep no un-wrapped copy in use.
    """
    if r < 1:
        raise ValueError(f"r must be >= 1, got {r}")
    config = LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=list(target_modules),
        bias="none",
        task_type="CAUSAL_LM",
    )
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        # peft 0.21 reads transformers' deprecated `is_gradient_checkpointing`: harmless noise
        warnings.filterwarnings(
            "ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning
        )
        torch.manual_seed(seed)
        peft_model = get_peft_model(model, config)
    return peft_model


def trainable_fraction(model: nn.Module) -> tuple[int, int, float]:
    """(trainable parameter count, total count, trainable / total)."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return trainable, total, trainable / max(total, 1)


def describe_trainable(model: nn.Module) -> str:
    """One line for a notebook: how many parameters train, and in which tensors."""
    trainable, total, frac = trainable_fraction(model)
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    kinds = sorted({_kind(n) for n in names})
    where = f" in {len(names)} tensors ({', '.join(kinds[:6])})" if names else ""
    return f"trainable {trainable:,} of {total:,} parameters ({100 * frac:.2f}%){where}"


def _kind(name: str) -> str:
    """'...layers.0.self_attn.q_proj.lora_A.default.weight' -> 'q_proj.lora_A'."""
    parts = name.split(".")
    i = next((i for i, s in enumerate(parts) if s.startswith(ADAPTER_TAG)), len(parts) - 1)
    return ".".join(parts[max(i - 1, 0) : i + 1])


def adapter_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """Detached copies of the adapter parameters, by name (for before/after comparisons)."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if ADAPTER_TAG in n}


def base_state_hash(model: nn.Module) -> str:
    """``fingerprint`` of every non-adapter parameter; equals the un-wrapped model's fingerprint."""
    return fingerprint(model, exclude=ADAPTER_TAG)


__all__ = [
    "add_lora",
    "adapter_state",
    "base_state_hash",
    "describe_trainable",
    "trainable_fraction",
]
