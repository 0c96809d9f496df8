"""Level B: the real-model branch, on TRL's ``GRPOTrainer`` with PEFT LoRA adapters.

Lessons 9.3 (section 9.3.5) and 9.5 (9.5.3-9.5.4). Level B is "a roughly 0.6B model, LoRA, short completions,
few generations, and an explicit smoke configuration"; its goal is to watch the data path of a
production trainer, not to reproduce a report. Step 9.3.5 adds the rule this package is built
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

Modules, one concept each (everything is re-exported here: ``from helpers.level_b import run``):

    config      LevelBConfig, one run's settings, and default_config, the two profiles
    trl_config  the GRPOConfig and LoraConfig TRL receives; OBJECTIVE_FIELDS, NOT_APPLICABLE
    model       QWEN_ID, loading the model (BaseLM, a directory, the hub, random Qwen3 shapes)
    data        the prompt set as a datasets.Dataset
    reward      a helpers.verifiers verifier as a TRL reward function
    training    build_trainer, the run passport, run
    numerics    inf/NaN losses and the optimiser steps fp16's loss scaler skipped
    dashboard   TRL's logged metrics -> the course dashboard
    colab       the Colab set-up cell and its version pins (PINS)
    cli         the command line, ``python -m helpers.level_b`` (__main__)
"""

from helpers.level_b.cli import main
from helpers.level_b.colab import COLAB_SETUP, PINS, colab_pip_lines, colab_python
from helpers.level_b.config import LevelBConfig, Precision, default_config
from helpers.level_b.dashboard import TRL_KEYS, history_to_dashboard
from helpers.level_b.data import make_dataset
from helpers.level_b.model import (
    QWEN3_06B_SHAPE,
    QWEN_ID,
    RANDOM_QWEN,
    load_model,
    random_qwen3_06b,
)
from helpers.level_b.numerics import numerics_report
from helpers.level_b.reward import reward_function
from helpers.level_b.training import build_trainer, passport, run
from helpers.level_b.trl_config import (
    NOT_APPLICABLE,
    OBJECTIVE_FIELDS,
    grpo_config,
    grpo_kwargs,
    lora_config,
)

__all__ = [
    "COLAB_SETUP",
    "LevelBConfig",
    "NOT_APPLICABLE",
    "OBJECTIVE_FIELDS",
    "PINS",
    "Precision",
    "QWEN3_06B_SHAPE",
    "QWEN_ID",
    "RANDOM_QWEN",
    "TRL_KEYS",
    "build_trainer",
    "colab_pip_lines",
    "colab_python",
    "default_config",
    "grpo_config",
    "grpo_kwargs",
    "history_to_dashboard",
    "load_model",
    "lora_config",
    "main",
    "make_dataset",
    "numerics_report",
    "passport",
    "random_qwen3_06b",
    "reward_function",
    "run",
]
