"""One level-B run's settings (``LevelBConfig``) and its two profiles (``default_config``).

Every field that shapes the objective is written here, with the value TRL receives
(``trl_config.grpo_kwargs`` passes each one explicitly). The profiles: BaseLM on a CPU
(``model_id=None`` or a local directory, what CI runs) and Qwen3-0.6B on a Colab T4 (fp16). Values
are a smoke configuration, not a recipe (lesson 9.5, section 9.5.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from helpers.level_b.model import RANDOM_QWEN

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
