"""What TRL and PEFT receive: the ``trl.GRPOConfig`` and ``peft.LoraConfig`` of a level-B run.

Lesson 9.3, step 9.3.5: a method name is not a specification, and library defaults belong to one
release, so every ``GRPOConfig`` argument that shapes the objective (``OBJECTIVE_FIELDS``) is set
explicitly by ``grpo_kwargs``; the fields TRL's loss reads that do not apply to this run are in
``NOT_APPLICABLE``, each with its reason. A test fails if a field is left to a library default.
"""

from __future__ import annotations

from typing import Any

from helpers.level_b.config import LevelBConfig

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
