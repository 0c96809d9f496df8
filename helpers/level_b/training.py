"""The level-B run: TRL's ``GRPOTrainer`` with LoRA, its passport, and ``run``.

``build_trainer`` joins the pieces (model, prompt set, verifier reward, ``GRPOConfig``,
``LoraConfig``); ``run`` trains and returns the course's view of it: the dashboard's columns, the
passport, TRL's log, the weight hashes (the adapters move, the base does not) and the numerics
report. The loss, advantages, clipping and KL are TRL's: nothing graded is implemented here.
"""

from __future__ import annotations

from helpers.level_b.config import LevelBConfig
from helpers.level_b.dashboard import history_to_dashboard
from helpers.level_b.data import make_dataset
from helpers.level_b.model import load_model
from helpers.level_b.numerics import _step_monitor, numerics_report
from helpers.level_b.reward import reward_function
from helpers.level_b.trl_config import OBJECTIVE_FIELDS, grpo_config, lora_config


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
