"""Level B: the real-model branch, on TRL's ``GRPOTrainer`` with PEFT LoRA adapters.

Lessons 9.3 (section 9.3.5) and 9.5 (9.5.3-9.5.4). Level B is "a roughly 0.6B model, LoRA, short completions,
few generations, and an explicit smoke configuration"; its goal is to watch the data path of a
production trainer, not to reproduce a report. Step 9.3.5 adds the rule this module is built
around: a method name is not a specification, and library defaults belong to one release, so
every argument that shapes the objective is written in ``LevelBConfig`` and passed to TRL
explicitly (``OBJECTIVE_FIELDS``; a test fails if one is left to a default).

One code path, two models (the model id is a parameter):

- ``model_id=None`` or a local directory: BaseLM (``helpers.baselm``, built on a CPU by
  ``./baselm.sh``) or any saved causal LM, in float32 on the CPU. This is what CI runs.
- ``model_id="Qwen/Qwen3-0.6B"``: the Colab T4 profile, loaded from the Hugging Face hub (the
  loading code is the ordinary ``from_pretrained``; nothing here can run it offline).

    cfg = default_config()                 # BaseLM, CPU, smoke
    out = run(cfg)                         # trains; {"history", "passport", "log_history", ...}
    dash = history_to_dashboard(out["log_history"])

How this departs from the course's own loops (lesson 9.5's GRU and BaseLM labs):

1. The loss, advantages, clipping and KL are TRL's, not the course's. The course's TRL-equivalence
   test proves that its reference losses equal TRL's ``_compute_loss`` on identical inputs for
   every variant used here, and names the conventions where they differ (TRL's group std divides by
   G - 1 and adds eps = 1e-4; lesson 9.2 uses G and 1e-6).
2. The dashboard is filled from TRL's logged metrics (``history_to_dashboard``), not recomputed:
   ``informative_rate = 1 - frac_reward_zero_std`` and ``clip_low``/``clip_high`` are TRL's numbers
   under the course's key names. Nothing graded is implemented here.
3. TRL samples with ``model.generate``: the behaviour policy is the sampler's warped distribution
   (temperature, top-p, top-k), and TRL's old log-probs are a teacher-forced rescoring at the same
   temperature. With ``num_iterations=1`` (and generation aligned with the optimiser steps) TRL
   skips that rescoring and uses the current log-probs, detached, as the old ones (ratio exactly 1
   on the first pass). The exception is vLLM generation with its importance-sampling correction
   (level C): then TRL always rescores the old log-probs, because vLLM's sampler and the trainer
   can disagree.
4. The KL term (when ``beta > 0``) is TRL's per-token k3 without the ratio weighting
   (``use_bias_correction_kl=False``, against TRL 1.16's default ``True``), which is the course's
   objective: its value estimates KL(pi || ref), its on-policy gradient is that of KL(ref || pi)
   (lesson 9.5, part 1). ``True`` would weight it by the token ratio, giving the gradient of
   KL(pi || ref) per token. The T4 profile has ``beta=0``, where the flag changes nothing.
5. Numerics: ``run`` counts inf/NaN losses and gradient norms and the optimiser steps that fp16's
   loss scaler skipped (``numerics``); the command line exits with status 1 if a loss was not
   finite or if skips persist. Qwen3 is published in bf16, and its activations can overflow fp16's
   range (max 65 504) on a T4.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

QWEN_ID = "Qwen/Qwen3-0.6B"

# The GRPOConfig fields that decide the objective, the behaviour policy or the optimisation, and so
# must be set explicitly (never left to the library's default). A test checks that the GRPOConfig
# built here received every one of them as an explicit argument, and that every GRPOConfig field
# that TRL's loss reads is either listed here or in ``NOT_APPLICABLE`` with a reason.
OBJECTIVE_FIELDS = (
    # advantages and reward aggregation
    "scale_rewards", "multi_objective_aggregation", "reward_weights",
    # ratio, clipping, reduction
    "loss_type", "importance_sampling_level", "epsilon", "epsilon_high", "delta",
    "num_iterations", "off_policy_mask_threshold", "top_entropy_quantile",
    # KL and entropy
    "beta", "use_bias_correction_kl", "entropy_coef", "use_adaptive_entropy", "sync_ref_model",
    # behaviour policy (sampling)
    "num_generations", "max_completion_length", "temperature", "top_p", "top_k", "min_p",
    "repetition_penalty", "mask_truncated_completions", "generation_kwargs", "use_vllm",
    "use_transformers_continuous_batching",
    # batch geometry: global batch, accumulation, rollout reuse
    "per_device_train_batch_size", "gradient_accumulation_steps", "steps_per_generation",
    "max_steps", "shuffle_dataset",
    # optimiser
    "learning_rate", "lr_scheduler_type", "warmup_steps", "weight_decay", "max_grad_norm", "optim",
    "adam_beta1", "adam_beta2", "adam_epsilon",
    # numerics and determinism
    "bf16", "fp16", "cast_lm_head_to_fp32", "activation_checkpointing", "disable_dropout",
    "seed", "data_seed",
)  # fmt: skip

NOT_APPLICABLE = {
    "sapo_temperature_pos": "only read by loss_type='sapo'",
    "sapo_temperature_neg": "only read by loss_type='sapo'",
    "vespo_k_pos": "only read by loss_type='vespo'",
    "vespo_k_neg": "only read by loss_type='vespo'",
    "vespo_lambda_pos": "only read by loss_type='vespo'",
    "vespo_lambda_neg": "only read by loss_type='vespo'",
    "entropy_target": "only read when use_adaptive_entropy=True",
    "entropy_coef_delta": "only read when use_adaptive_entropy=True",
    "entropy_coef_min": "only read when use_adaptive_entropy=True",
    "entropy_coef_max": "only read when use_adaptive_entropy=True",
    "vllm_importance_sampling_correction": "only read when use_vllm=True",
    "vllm_importance_sampling_mode": "only read when use_vllm=True",
    "vllm_importance_sampling_clip_min": "only read when use_vllm=True",
    "vllm_importance_sampling_clip_max": "only read when use_vllm=True",
    "router_aux_loss_coef": "mixture-of-experts models only",
    "ds3_gather_for_generation": "DeepSpeed ZeRO-3 only",
    "num_generations_eval": "evaluation only (no eval set here)",
    "per_device_eval_batch_size": "evaluation only (no eval set here)",
    "log_multimodal": "logging of images",
    "pad_to_multiple_of": "padding of token ids; padded positions are masked out of the loss",
    "gradient_checkpointing_kwargs": "only read when activation checkpointing is on",
    "chat_template_kwargs": "set for chat prompts (conversational=True); unused for plain text",
}

Precision = Literal["fp32", "fp16", "bf16"]


@dataclass
class LevelBConfig:
    """One level-B run. Every field that shapes the objective is here, with the value TRL receives.

    Values are a smoke configuration, not a recipe (lesson 9.5, section 9.5.3: G, eps, beta, temperature
    and the learning rate interact with model size, reward scale, lengths and the loss reduction).
    """

    # --- model and data ---
    model_id: str | None
    """Hub id ("Qwen/Qwen3-0.6B") or a local directory; None = the BaseLM artifact (baselm_dir())."""
    smoke: bool
    """True: the short smoke profile (a few steps: proves the loop runs, claims nothing else)."""
    device: str
    """"cpu" or "cuda" (resolved from "auto" by default_config)."""
    precision: Precision
    """"fp32": float32 weights, no autocast. "fp16": float16 base weights, float32 LoRA adapters,
    fp16 autocast with loss scaling (a T4 has no bfloat16). "bf16": bfloat16 weights and autocast."""
    task_family: str
    """helpers.tasks family: "arithmetic_choice", "format" or "arithmetic"."""
    n_train: int
    """Training prompts drawn (train split, helpers.tasks split rule)."""
    conversational: bool
    """True: prompts are chat messages (the model's chat template applies); False: plain text."""
    enable_thinking: bool | None
    """Qwen3 chat template switch (None: not passed; False: no <think> block)."""
    verifier: str
    """Name in helpers.verifiers.VERIFIERS ("arithmetic", "format", "numeric", ...)."""
    # --- advantages ---
    scale_rewards: str
    """"group": (r - group mean) / (group std + 1e-4), std with G - 1; "batch": batch std;
    "none": no scaling (Dr. GRPO)."""
    multi_objective_aggregation: str
    """How several reward functions combine (one is used here: "sum_then_normalize")."""
    # --- ratio, clipping, reduction ---
    loss_type: str
    """Reduction: "grpo" (per-response mean, then mean), "bnpo" (local token mean), "dr_grpo"
    (sum / (rows * max_completion_length)), "dapo" (sum / active tokens of the global batch)."""
    importance_sampling_level: str
    """"token": one ratio per token; "sequence": GSPO's length-normalised sequence ratio."""
    epsilon: float
    """Lower clip: ratios below 1 - epsilon stop the gradient of negative-advantage terms."""
    epsilon_high: float
    """Upper clip (DAPO's clip-higher when > epsilon)."""
    delta: float | None
    """Two-sided clipping cap on the ratio (INTELLECT-2); None = off."""
    num_iterations: int
    """Updates per rollout batch (mu); 1 = on-policy, the ratio is exactly 1 on the first pass."""
    off_policy_mask_threshold: float | None
    """DeepSeek-V3.2's off-policy sequence mask; None = off."""
    top_entropy_quantile: float
    """Keep only the top quantile of tokens by entropy in the loss; 1.0 = all tokens."""
    # --- KL and entropy ---
    beta: float
    """KL coefficient (k3 estimator to the reference = base model with adapters disabled); 0 = none."""
    use_bias_correction_kl: bool
    """Multiply the per-token KL by the importance ratio (TRL 1.16's default: True). False here: the
    course's k3 leash, whose on-policy gradient is that of KL(ref || pi); True turns it into the
    gradient of KL(pi || ref) and removes the value's off-policy bias on reused batches."""
    entropy_coef: float
    """Entropy bonus coefficient (0 = none)."""
    # --- behaviour policy ---
    num_generations: int
    """Completions per prompt (G)."""
    max_completion_length: int
    """New-token cap; a completion that hits it is truncated (and dr_grpo's constant L)."""
    mask_truncated_completions: bool
    """True: truncated completions are removed from the loss (their rewards stay in the group mean
    and std); False: trained as scored. True here (TRL's default: False): a completion cut at the
    cap has no final answer, and scoring it 0 pushes down an unfinished but possibly sound
    derivation. The risk the course teaches (masking removes the signal against never stopping) is
    watched through ``truncation_rate``; for longer runs DAPO's soft overlong penalty
    (``trl.rewards.get_soft_overlong_punishment``) is the course's recommendation."""
    temperature: float
    """Sampling temperature (TRL rescales the training logits by the same value)."""
    top_p: float
    """Nucleus sampling (1.0 = off)."""
    top_k: int
    """Top-k sampling (0 = off)."""
    min_p: float | None
    """Min-p sampling (None = off)."""
    repetition_penalty: float
    """1.0 = off (any other value changes the behaviour policy but not TRL's rescoring)."""
    # --- LoRA ---
    lora_r: int
    """Adapter rank."""
    lora_alpha: int
    """Adapter scale numerator: delta W = alpha / r * B A."""
    lora_dropout: float
    """Dropout on the adapter input (0 keeps old and new log-probs comparable)."""
    lora_target_modules: list[str]
    """Linear layers that get adapters."""
    # --- optimisation and batch geometry ---
    learning_rate: float
    """AdamW peak learning rate."""
    lr_scheduler_type: str
    """Learning-rate schedule ("constant" for a smoke run)."""
    warmup_steps: int
    """Warm-up steps."""
    weight_decay: float
    """AdamW weight decay on the adapters."""
    max_grad_norm: float
    """Gradient clipping norm."""
    per_device_train_batch_size: int
    """Completions (not prompts) per device per micro-batch; a multiple of num_generations here.
    TRL shuffles a generation batch before it splits it into micro-batches, so with
    ``steps_per_generation > 1`` a micro-batch need not hold whole groups."""
    gradient_accumulation_steps: int
    """Micro-batches per optimiser step."""
    steps_per_generation: int
    """Optimiser micro-steps served by one generation batch (= gradient_accumulation_steps here)."""
    max_steps: int
    """Optimiser steps."""
    activation_checkpointing: bool
    """Recompute activations in backward (memory for time; TRL's default is True, ours is explicit)."""
    seed: int
    """Seeds the adapters' initialisation, the sampling and the data order."""
    # --- level C (on paper): generation by vLLM ---
    use_vllm: bool = False
    """Generate with vLLM instead of ``model.generate`` (needs the vllm package and a GPU)."""
    vllm_mode: str = "colocate"
    """"colocate": vLLM shares the training GPUs; "server": a separate ``trl vllm-serve`` process."""
    vllm_importance_sampling_correction: bool = True
    """With vLLM: re-weight by pi_old(trainer) / pi(vLLM) per token (generator-trainer mismatch)."""
    # --- bookkeeping ---
    output_dir: str = "level_b_out"
    """Where TRL writes its logs (no checkpoints are saved: save_strategy="no")."""
    logging_steps: int = 1
    """Log every step (the dashboard needs every step)."""
    notes: dict = field(default_factory=dict)
    """Free-form remarks stored in the passport (e.g. why a value was chosen)."""

    @property
    def global_batch(self) -> int:
        """Completions per optimiser step on one device."""
        return self.per_device_train_batch_size * self.gradient_accumulation_steps

    @property
    def prompts_per_step(self) -> int:
        return self.global_batch // self.num_generations


def _resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def default_config(
    model_id: str | None = None, smoke: bool = True, device: str = "auto"
) -> LevelBConfig:
    """The level-B profile for a model: BaseLM on a CPU (``model_id=None`` or a directory), or the
    Colab T4 profile for ``"Qwen/Qwen3-0.6B"`` (any other hub id gets the T4 profile too).

    The T4 profile uses fp16: a T4 (compute capability 7.5) has no bfloat16 arithmetic, so bf16
    would be emulated or refused. fp16's narrow range is why the base weights are fp16 but the
    LoRA adapters and their optimiser state stay float32, under a loss-scaled autocast.
    """
    device = _resolve_device(device)
    local = model_id is None or (model_id != RANDOM_QWEN and Path(model_id).is_dir())
    common = dict(
        smoke=smoke,
        device=device,
        multi_objective_aggregation="sum_then_normalize",
        scale_rewards="group",
        loss_type="dapo",
        importance_sampling_level="token",
        epsilon=0.2,
        epsilon_high=0.28,
        delta=None,
        off_policy_mask_threshold=None,
        top_entropy_quantile=1.0,
        use_bias_correction_kl=False,
        entropy_coef=0.0,
        mask_truncated_completions=True,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        min_p=None,
        repetition_penalty=1.0,
        lora_dropout=0.0,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        seed=0,
    )
    if local:
        # BaseLM on a CPU: rank-8 q/v adapters (as in the BaseLM lab), its own 8-token answer cap, G = 4.
        return LevelBConfig(
            model_id=model_id,
            precision="fp32",
            task_family="arithmetic_choice",
            n_train=64 if smoke else 512,
            conversational=False,
            enable_thinking=None,
            verifier="arithmetic",
            beta=0.04,
            num_iterations=2,
            num_generations=4,
            max_completion_length=8,
            lora_r=8,
            lora_alpha=16,
            lora_target_modules=["q_proj", "v_proj"],
            learning_rate=5e-3,
            per_device_train_batch_size=8,  # the whole generation batch: 2 prompts x 4 completions
            gradient_accumulation_steps=1,
            steps_per_generation=1,
            max_steps=2 if smoke else 60,
            activation_checkpointing=False,
            notes={"profile": "baselm-cpu"},
            **common,
        )
    # Qwen3-0.6B on a Colab T4: chat prompts without a thinking block, boxed numeric answers.
    return LevelBConfig(
        model_id=model_id,
        precision="fp16" if device == "cuda" else "fp32",
        task_family="arithmetic",
        n_train=64 if smoke else 1024,
        conversational=True,
        enable_thinking=False,
        verifier="numeric",
        beta=0.0,
        num_iterations=1,
        num_generations=4,
        max_completion_length=128 if smoke else 256,
        lora_r=16,
        lora_alpha=32,
        lora_target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
        learning_rate=2e-5,
        per_device_train_batch_size=8,  # 8 completions: TRL shuffles the 16 of a generation batch
        gradient_accumulation_steps=2,
        steps_per_generation=2,
        max_steps=10 if smoke else 200,
        activation_checkpointing=False,
        notes={"profile": "qwen3-0.6b-t4", "precision": "fp16: the T4 has no bf16"},
        **common,
    )


# ---------------------------------------------------------------------------------------------
# Data and reward


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


# ---------------------------------------------------------------------------------------------
# TRL and PEFT configuration


def grpo_kwargs(cfg: LevelBConfig) -> dict[str, Any]:
    """Every argument given to ``trl.GRPOConfig``: all of ``OBJECTIVE_FIELDS`` plus plumbing."""
    kw: dict[str, Any] = {
        # advantages and reward aggregation
        "scale_rewards": cfg.scale_rewards,
        "multi_objective_aggregation": cfg.multi_objective_aggregation,
        "reward_weights": [1.0],
        # ratio, clipping, reduction
        "loss_type": cfg.loss_type,
        "importance_sampling_level": cfg.importance_sampling_level,
        "epsilon": cfg.epsilon,
        "epsilon_high": cfg.epsilon_high,
        "delta": cfg.delta,
        "num_iterations": cfg.num_iterations,
        "off_policy_mask_threshold": cfg.off_policy_mask_threshold,
        "top_entropy_quantile": cfg.top_entropy_quantile,
        # KL and entropy
        "beta": cfg.beta,
        "use_bias_correction_kl": cfg.use_bias_correction_kl,
        "entropy_coef": cfg.entropy_coef,
        "use_adaptive_entropy": False,
        "sync_ref_model": False,
        # behaviour policy
        "num_generations": cfg.num_generations,
        "max_completion_length": cfg.max_completion_length,
        "temperature": cfg.temperature,
        "top_p": cfg.top_p,
        "top_k": cfg.top_k,
        "min_p": cfg.min_p,
        "repetition_penalty": cfg.repetition_penalty,
        "mask_truncated_completions": cfg.mask_truncated_completions,
        "generation_kwargs": None,  # nothing beyond the sampling fields above
        "use_vllm": cfg.use_vllm,  # False: model.generate (level C would use vLLM)
        "use_transformers_continuous_batching": False,
        # batch geometry
        "per_device_train_batch_size": cfg.per_device_train_batch_size,
        "gradient_accumulation_steps": cfg.gradient_accumulation_steps,
        "steps_per_generation": cfg.steps_per_generation,
        "max_steps": cfg.max_steps,
        "shuffle_dataset": True,
        # optimiser
        "learning_rate": cfg.learning_rate,
        "lr_scheduler_type": cfg.lr_scheduler_type,
        "warmup_steps": cfg.warmup_steps,
        "weight_decay": cfg.weight_decay,
        "max_grad_norm": cfg.max_grad_norm,
        "optim": "adamw_torch",
        "adam_beta1": 0.9,
        "adam_beta2": 0.999,
        "adam_epsilon": 1e-8,
        # numerics and determinism
        "bf16": cfg.precision == "bf16",
        "fp16": cfg.precision == "fp16",
        "cast_lm_head_to_fp32": False,
        "activation_checkpointing": cfg.activation_checkpointing,  # new name of gradient_checkpointing
        "disable_dropout": True,
        "seed": cfg.seed,
        "data_seed": cfg.seed,
        # plumbing (does not change the objective)
        "output_dir": cfg.output_dir,
        "logging_steps": cfg.logging_steps,
        "save_strategy": "no",
        "report_to": [],
        "use_cpu": cfg.device == "cpu",
        "dataloader_num_workers": 0,
        "remove_unused_columns": False,
        "log_completions": False,
        "disable_tqdm": False,  # a progress bar (True would print every log dict instead)
    }
    if cfg.use_vllm:  # these change the objective once vLLM generates: explicit too
        kw.update(
            vllm_mode=cfg.vllm_mode,
            vllm_importance_sampling_correction=cfg.vllm_importance_sampling_correction,
            vllm_importance_sampling_mode="sequence_mask",
            vllm_importance_sampling_clip_min=None,
            vllm_importance_sampling_clip_max=3.0,
        )
    if cfg.enable_thinking is not None:
        kw["chat_template_kwargs"] = {"enable_thinking": cfg.enable_thinking}
    missing = set(OBJECTIVE_FIELDS) - set(kw)
    if missing:  # a guard for whoever edits this function
        raise AssertionError(f"objective-shaping fields not set: {sorted(missing)}")
    return kw


def grpo_config(cfg: LevelBConfig):
    """The ``trl.GRPOConfig`` of a run (every objective-shaping field explicit)."""
    from trl import GRPOConfig

    return GRPOConfig(**grpo_kwargs(cfg))


def lora_config(cfg: LevelBConfig):
    """The ``peft.LoraConfig`` of a run (TRL wraps the model with it)."""
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=list(cfg.lora_target_modules),
        bias="none",
        task_type="CAUSAL_LM",
        init_lora_weights=True,  # A random (Kaiming-uniform), B = 0: the adapted model starts equal
    )


# ---------------------------------------------------------------------------------------------
# Model, trainer, run


def load_model(cfg: LevelBConfig):
    """``(model, tokenizer)`` for ``cfg.model_id``: the BaseLM artifact, a local directory or a
    hub id. fp16/bf16 load the base weights in that dtype (the adapters TRL adds stay float32)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cfg.precision]
    if cfg.model_id is None:
        from helpers.baselm import load_baselm

        model, tok = load_baselm(dtype=dtype)
    elif cfg.model_id == RANDOM_QWEN:
        model, tok = random_qwen3_06b(cfg.seed, dtype)
    else:
        # A hub id ("Qwen/Qwen3-0.6B") downloads on first use; a directory loads offline.
        model = AutoModelForCausalLM.from_pretrained(cfg.model_id, dtype=dtype)
        tok = AutoTokenizer.from_pretrained(cfg.model_id)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"  # TRL pads prompts on the left
    if cfg.device == "cuda":
        model = model.to("cuda")
    return model, tok


RANDOM_QWEN = "random-qwen3-0.6b"
"""Model id of a randomly initialised model with Qwen3-0.6B's shapes (no hub needed)."""

QWEN3_06B_SHAPE = dict(
    vocab_size=151_936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
    num_attention_heads=16, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True,
    max_position_embeddings=40_960, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
)  # fmt: skip
"""Qwen3-0.6B's architecture numbers (its config.json on the hub; check before relying on them)."""


def random_qwen3_06b(seed: int = 0, dtype=None):
    """``(model, tokenizer)``: Qwen3-0.6B's shapes with random weights, for measuring memory and
    time where the hub is unreachable. The tokenizer is character level (BaseLM's characters) plus
    filler tokens ``<xN>`` up to the 151,936-entry vocabulary, so logits have the real width. The
    random model never emits <eos>: every completion runs to max_completion_length (the worst case
    for time and memory) and earns reward 0 (no learning signal; the backward pass still runs)."""
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    from helpers.baselm import CHARS, EOS, PAD, UNK

    base = [PAD, EOS, UNK, *CHARS]
    fill = [f"<x{i}>" for i in range(QWEN3_06B_SHAPE["vocab_size"] - len(base))]
    vocab = {t: i for i, t in enumerate(base + fill)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=UNK))
    tk.decoder = decoders.Fuse()
    tk.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in (PAD, EOS, UNK)])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token=PAD, eos_token=EOS, unk_token=UNK, padding_side="left"
    )
    torch.manual_seed(seed)
    mcfg = Qwen3Config(**QWEN3_06B_SHAPE, pad_token_id=0, eos_token_id=1, bos_token_id=None)
    model = Qwen3ForCausalLM(mcfg)
    if dtype is not None:
        model = model.to(dtype)
    gc = model.generation_config
    gc.pad_token_id, gc.eos_token_id, gc.bos_token_id = 0, 1, None
    return model, tok


def build_trainer(cfg: LevelBConfig, model=None, tokenizer=None, reward_funcs=None):
    """A ``trl.GRPOTrainer`` for ``cfg``: LoRA through ``peft_config``, one verifier reward.

    ``model``/``tokenizer`` default to ``load_model(cfg)``; ``reward_funcs`` to the verifier of
    ``cfg.verifier`` (a test may pass a shaped stand-in to get signal from an untrained model). The global RNGs are seeded with
    ``cfg.seed`` first, so the adapters' random A matrices are the same for the same seed.
    """
    from transformers import set_seed
    from trl import GRPOTrainer

    from helpers.verifiers import VERIFIERS

    if cfg.global_batch % cfg.num_generations:
        raise ValueError(
            f"per_device_train_batch_size * gradient_accumulation_steps = {cfg.global_batch} "
            f"must be a multiple of num_generations = {cfg.num_generations}"
        )
    if model is None or tokenizer is None:
        model, tokenizer = load_model(cfg)
    set_seed(cfg.seed)
    train = make_dataset(
        cfg.task_family, cfg.n_train, "train", cfg.seed, conversational=cfg.conversational
    )
    return GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs or [reward_function(VERIFIERS[cfg.verifier])],
        args=grpo_config(cfg),
        train_dataset=train,
        processing_class=tokenizer,
        peft_config=lora_config(cfg),
    )


def passport(cfg: LevelBConfig, trainer=None) -> dict:
    """The run passport: the config, every GRPOConfig argument as TRL holds it, the LoRA config,
    the verifier passport and the library versions (``helpers.passport.make_passport``)."""
    from helpers import passport as pp
    from helpers.verifiers import VERIFIERS

    args = trainer.args if trainer is not None else grpo_config(cfg)
    held = {k: getattr(args, k) for k in OBJECTIVE_FIELDS}
    lora = lora_config(cfg)
    extra = {
        "trainer": "trl.GRPOTrainer",
        "grpo_config": held,
        "lora_config": {
            "r": lora.r,
            "lora_alpha": lora.lora_alpha,
            "lora_dropout": lora.lora_dropout,
            "target_modules": sorted(lora.target_modules),
            "bias": lora.bias,
        },
        "kl_estimator": "k3: exp(ref - new) - (ref - new) - 1, per token (TRL)"
        if cfg.beta
        else None,
        "advantage": f"scale_rewards={cfg.scale_rewards!r}: std with G - 1 (Bessel), eps 1e-4",
        "global_batch_completions": cfg.global_batch,
        "prompts_per_step": cfg.prompts_per_step,
        "bitsandbytes": _version("bitsandbytes"),
        "model_source": cfg.model_id or "BaseLM artifact (helpers.baselm.baselm_dir())",
    }
    files = []
    if cfg.model_id is None:
        from helpers.baselm import baselm_dir

        if (baselm_dir() / "passport.json").is_file():
            files.append(baselm_dir() / "passport.json")
    return pp.make_passport(cfg, verifier=VERIFIERS[cfg.verifier], extra=extra, files=files)


def _version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def run(cfg: LevelBConfig, model=None, tokenizer=None, reward_funcs=None) -> dict:
    """Train ``cfg.max_steps`` steps. Returns ``history`` (the dashboard's columns),
    ``passport``, ``log_history`` (TRL's), ``dashboard`` and ``weights`` (hashes of the base and
    adapter weights before and after: the adapters move, the base does not)."""
    from helpers.lora import adapter_state, base_state_hash
    from helpers.passport import tensor_hash

    trainer = build_trainer(cfg, model, tokenizer, reward_funcs)
    monitor = _step_monitor(trainer)
    trainer.add_callback(monitor)
    before_base = base_state_hash(trainer.model)
    before_lora = {k: tensor_hash(v) for k, v in adapter_state(trainer.model).items()}
    trainer.train()
    after_lora = {k: tensor_hash(v) for k, v in adapter_state(trainer.model).items()}
    weights = {
        "base_before": before_base,
        "base_after": base_state_hash(trainer.model),
        "lora_tensors": len(after_lora),
        "lora_changed": sum(before_lora[k] != after_lora[k] for k in after_lora),
    }
    dash = history_to_dashboard(trainer.state.log_history)
    return {
        "history": dash.history,
        "dashboard": dash,
        "passport": passport(cfg, trainer),
        "log_history": list(trainer.state.log_history),
        "weights": weights,
        "numerics": numerics_report(trainer.state.log_history, monitor.skipped, cfg.precision),
        "trainer": trainer,
    }


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


# ---------------------------------------------------------------------------------------------
# TRL's logged metrics -> the course dashboard

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


# ---------------------------------------------------------------------------------------------
# Colab

PINS = {
    "trl": "1.16.0",
    "peft": "0.21.2",
    "transformers": "5.24.0",
    "datasets": "5.2.0",
    "accelerate": "1.16.0",
    "tokenizers": "0.23.3",
}
"""Exact versions for Colab: the versions of requirements.lock, which this module was tested with
(inside requirements.txt's ranges). torch is Colab's own CUDA build, deliberately not pinned to the CPU wheel used here."""

COLAB_SETUP = f"""\
# Level B on Colab: Runtime > Change runtime type > T4 GPU, then run this cell once.
# Installs the versions the course was tested with, then the course's helpers package (no deps:
# the pins are its dependencies). Colab's own CUDA build of torch is kept.
# COURSE_SOURCE is where pip finds the course's helpers package; your instructor gives it: the
# course repository's git URL ("git+https://HOST/PATH.git") or the path of the course wheel
# (built with `pip wheel --no-deps .` in the course repository) uploaded to this Colab session.
COURSE_SOURCE = ""
if not COURSE_SOURCE.strip():
    raise ValueError("COURSE_SOURCE is empty: set it to the course repository's git URL or to the "
                     "path of the uploaded course wheel (ask your instructor), then rerun this cell")
!pip install -q {" ".join(f'"{k}=={v}"' for k, v in PINS.items())}
!pip install -q --no-deps "{{COURSE_SOURCE}}"
import torch, trl, peft, transformers
from helpers import level_b
print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "trl", trl.__version__,
      "peft", peft.__version__, "transformers", transformers.__version__)
if torch.cuda.is_available():
    print(torch.cuda.get_device_name(0), "bf16 supported:", torch.cuda.is_bf16_supported())
cfg = level_b.default_config("{QWEN_ID}", smoke=True)
print({{k: v for k, v in level_b.passport(cfg)["extra"]["grpo_config"].items()}})
"""
"""The Colab set-up cell. ``COURSE_SOURCE`` is deliberately empty: the course has no public
repository address to put there, so the cell stops with a clear message until the instructor (or
the student, on the instructor's word) fills it in."""


def colab_pip_lines(cell: str = COLAB_SETUP) -> list[str]:
    """The ``!pip install`` lines of the Colab cell (without the ``!``)."""
    return [ln.strip()[1:] for ln in cell.splitlines() if ln.strip().startswith("!pip")]


def colab_python(cell: str = COLAB_SETUP) -> str:
    """The cell without its shell lines: the Python a test can run."""
    return "\n".join(ln for ln in cell.splitlines() if not ln.strip().startswith("!"))


# ---------------------------------------------------------------------------------------------
# Command line (the GPU smoke script calls this)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m helpers.level_b", description=__doc__.split("\n")[0]
    )
    p.add_argument(
        "--model",
        default=None,
        help=f"hub id, directory, or {RANDOM_QWEN!r} (default: the BaseLM artifact)",
    )
    p.add_argument("--smoke", action="store_true", help="the smoke profile (few steps)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--max-steps", type=int, default=None, help="override max_steps")
    p.add_argument("--precision", default=None, choices=("fp32", "fp16", "bf16"))
    p.add_argument("--max-completion-length", type=int, default=None, help="override the cap")
    p.add_argument("--use-vllm", action="store_true", help="level C: generate with vLLM")
    p.add_argument("--vllm-mode", default="colocate", choices=("colocate", "server"))
    p.add_argument("--out", default="level_b_out", help="directory for passport and history")
    args = p.parse_args(argv)

    cfg = default_config(args.model, smoke=args.smoke, device=args.device)
    # A directory of a hub model (copied to a machine without the hub) keeps the T4 profile.
    if (
        args.model
        and Path(args.model).is_dir()
        and not (Path(args.model) / "passport.json").exists()
    ):
        hub = default_config(QWEN_ID, smoke=args.smoke, device=args.device)
        cfg = dataclasses.replace(hub, model_id=args.model)
    if args.model == RANDOM_QWEN:  # T4 shapes without the hub: plain prompts (no chat template)
        cfg = dataclasses.replace(cfg, conversational=False, enable_thinking=None)
    if args.max_steps is not None:
        cfg.max_steps = args.max_steps
    if args.precision is not None:
        cfg.precision = args.precision
    if args.use_vllm:
        cfg.use_vllm, cfg.vllm_mode = True, args.vllm_mode
    if args.max_completion_length is not None:
        cfg.max_completion_length = args.max_completion_length
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg.output_dir = str(out / "trl")
    import time

    import torch

    if cfg.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    res = run(cfg)
    wall = time.time() - t0
    measured = {"wall_s": round(wall, 1), "s_per_step": round(wall / max(1, cfg.max_steps), 2)}
    if cfg.device == "cuda":
        measured["peak_gpu_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
        measured["peak_gpu_reserved_gib"] = round(torch.cuda.max_memory_reserved() / 2**30, 3)
        measured["gpu"] = torch.cuda.get_device_name(0)
    import resource

    measured["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    steps = [r["step_time"] for r in res["log_history"] if "step_time" in r]
    measured["step_time_s"] = [round(x, 3) for x in steps]
    measured["numerics"] = res["numerics"]
    res["passport"]["extra"]["measured"] = measured
    (out / "passport.json").write_text(json.dumps(res["passport"], indent=1, default=str))
    (out / "log_history.json").write_text(json.dumps(res["log_history"], indent=1, default=str))
    res["dashboard"].to_json(out / "dashboard.json")
    print(json.dumps({"config": asdict(cfg), "weights": res["weights"], "measured": measured}))
    last = {k: v[-1] for k, v in res["history"].items() if v and not _nan(v[-1])}
    print("last step:", json.dumps(last))
    num = res["numerics"]
    if not num["ok"]:
        print(
            f"NUMERICS FAILED ({cfg.precision}): " + "; ".join(num["problems"]) + ". In fp16 a "
            "bf16-trained model can overflow (max 65 504): rerun with --precision fp32, or bf16 on a "
            "GPU that has it.",
            file=sys.stderr,
        )
        return 1
    print(f"numerics ok ({cfg.precision}): no inf/NaN loss, {len(num['skipped_optimizer_steps'])} "
          f"skipped optimiser steps of {num['steps']}")  # fmt: skip
    return 0


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


if __name__ == "__main__":
    sys.exit(main())

__all__ = [
    "COLAB_SETUP",
    "LevelBConfig",
    "NOT_APPLICABLE",
    "OBJECTIVE_FIELDS",
    "PINS",
    "QWEN3_06B_SHAPE",
    "RANDOM_QWEN",
    "TRL_KEYS",
    "build_trainer",
    "default_config",
    "grpo_config",
    "history_to_dashboard",
    "lora_config",
    "numerics_report",
    "make_dataset",
    "passport",
    "random_qwen3_06b",
    "reward_function",
    "run",
]
