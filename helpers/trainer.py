"""The simplified-GRPO trainer scaffold of the BaseLM lab: plumbing around a step you write.

The BaseLM lab's ``GRPOTrainer`` (lesson 9.5, part 2): sample a group of K completions per prompt
at temperature 1, score each with a verifier, turn rewards into group-relative advantages, and
update a LoRA policy on the informative groups with a KL leash to a frozen reference; evaluate by
greedy generated pass rate on held-out prompts, with an optional second verifier for the
sloppy-verifier audit.

What is here and what is not. The step itself - advantages, completion log-probs, the loss, the
skip rule - is graded in lesson 9.5, so the trainer does not contain it: you pass your own
``train_step(trainer, tasks) -> dict`` and it calls your functions. The trainer owns the plumbing:
the optimizer over the trainable (LoRA) parameters only, the seeded generator and task order,
``sample`` / ``score`` / ``update`` helpers for the step, the loop with its history and progress bar,
the reference-unchanged check, evaluation, and the run passport.

Departures from the plain one-loop trainer the lab describes:
  1. The step is a function argument rather than a method to fill in, so the graded code stays in
     the notebook and this file is never a solution.
  2. Rollouts are sampled under ``torch.no_grad`` rather than ``inference_mode``: their tensors feed
     the update's forward pass, and inference tensors cannot be saved for backward.
  3. Sampled entropy is the mean negative behaviour log-prob of the sampled tokens (from the
     sampler), not a rescoring; KL and entropy are NaN on a step that measured nothing.
  4. Several prompts per step (``prompts_per_step``) are allowed; the plain loop uses one.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from helpers.reference import fingerprint
from helpers.sampling import sample_groups
from helpers.tasks import Task

REQUIRED_KEYS = ("reward", "kl", "entropy", "skipped", "groups")


@dataclass
class TrainerConfig:
    """One run's settings. Everything that decides the numbers is here (and in the passport)."""

    k: int = 8
    """Group size: completions sampled per prompt (G in the papers). At least 2."""
    max_new_tokens: int = 8
    """Completion budget during training; a completion cut here has stop_reason "length"."""
    temperature: float = 1.0
    """Rollout temperature. Keep 1.0: the step rescores with the untempered policy (the course's simplified loop, lesson 9.5)."""
    top_k: int | None = None
    """Rollout top-k truncation (None: off). Like temperature, it changes the behaviour policy."""
    top_p: float | None = None
    """Rollout nucleus truncation (None: off). Like temperature, it changes the behaviour policy."""
    lr: float = 1e-3
    """AdamW learning rate for the LoRA adapters (large next to full fine-tuning: few, small params)."""
    kl_coef: float = 0.05
    """beta, the weight of the KL leash to the reference; read by your train_step."""
    steps: int = 20
    """Default number of steps for ``train()``."""
    prompts_per_step: int = 1
    """Prompts (groups) per step; the step gets this many tasks."""
    seed: int = 0
    """Seeds the trainer's torch.Generator (sampling) and the task order."""
    grad_clip: float | None = 1.0
    """Max global gradient norm before each optimizer step (None: no clipping)."""
    eval_max_new_tokens: int | None = None
    """Completion budget for ``evaluate`` (None: same as max_new_tokens)."""


@contextlib.contextmanager
def _mode(model: torch.nn.Module, training: bool):
    """Put ``model`` in train/eval mode for a block, then restore its previous mode."""
    was = model.training
    model.train(training)
    try:
        yield model
    finally:
        model.train(was)


def _count(params) -> int:
    return sum(p.numel() for p in params)


class GRPOTrainer:
    """Simplified GRPO around your step function.

    policy:     the model being trained - a LoRA-wrapped BaseLM whose base weights are frozen.
    reference:  the frozen reference model (``reference.load_reference``), never updated.
    tokenizer:  the tokenizer of both.
    tasks:      training tasks; the step gets ``config.prompts_per_step`` of them each time,
                in a seeded order (reshuffled after every pass).
    verifier:   ``verifier(task, completion_text) -> float`` reward.
    train_step: ``train_step(trainer, tasks) -> dict`` with at least "reward" (mean), "kl",
                "entropy", "skipped" (degenerate groups skipped), "groups" (groups attempted);
                KL/entropy NaN when nothing was measured. It calls ``trainer.update(loss)`` to step.
    config:     a ``TrainerConfig`` (default: ``TrainerConfig()``).
    allow_full_finetune: permit more than half of the policy's parameters to be trainable.

    State for the step: ``policy``, ``reference``, ``tokenizer``, ``verifier``, ``config``,
    ``generator`` (seeded), ``optimizer``, ``updates`` (optimizer steps so far), ``last_sample``
    and ``last_rewards`` (of the latest ``sample``/``score``), ``history`` (dict of lists).
    """

    def __init__(
        self,
        policy: torch.nn.Module,
        reference: torch.nn.Module,
        tokenizer: Any,
        tasks: list[Task],
        verifier: Callable[[Task, str], float],
        *,
        train_step: Callable[[GRPOTrainer, list[Task]], dict],
        config: TrainerConfig | None = None,
        allow_full_finetune: bool = False,
    ):
        self.config = config = config or TrainerConfig()
        self._validate(policy, reference, tasks, verifier, train_step, config)
        trainable = [p for p in policy.parameters() if p.requires_grad]
        total = _count(policy.parameters())
        if not trainable:
            raise ValueError(
                "the policy has no trainable parameters: add LoRA adapters first (lora.add_lora)"
            )
        frac = _count(trainable) / total
        if frac > 0.5 and not allow_full_finetune:
            raise ValueError(
                f"{frac:.0%} of the policy's parameters are trainable: this looks like the raw, "
                "unfrozen model (full fine-tuning allocates optimizer state for every weight). "
                "Wrap it with lora.add_lora(model), which freezes the base, or pass "
                "allow_full_finetune=True if you really mean it."
            )
        ref_ids = {id(p) for p in reference.parameters()}
        if any(id(p) in ref_ids for p in trainable):
            raise ValueError("the policy's trainable parameters are shared with the reference")

        self.policy, self.reference, self.tokenizer = policy, reference, tokenizer
        self.tasks, self.verifier, self.train_step = list(tasks), verifier, train_step
        self.trainable_params, self.total_params = _count(trainable), total
        self.optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.0)
        self.generator = torch.Generator().manual_seed(config.seed)
        self._rng = random.Random(config.seed)
        self._order: list[int] = []
        self.reference.eval()
        self.reference_fingerprint = fingerprint(reference)
        self.step = 0  # steps run so far
        self.updates = 0  # optimizer steps so far (skipped steps do not count)
        self.last_sample = None
        self.last_rewards: torch.Tensor | None = None
        self.history: dict[str, list] = {}
        self._stats: dict[str, float] = {}

    @staticmethod
    def _validate(policy, reference, tasks, verifier, train_step, config) -> None:
        if policy is reference:
            raise ValueError("policy and reference are the same object: load a separate reference")
        if any(p.requires_grad for p in reference.parameters()):
            raise ValueError(
                "the reference has trainable parameters: it must be frozen "
                "(reference.load_reference returns a frozen copy)"
            )
        if not tasks:
            raise ValueError("no training tasks")
        if not callable(verifier) or not callable(train_step):
            raise TypeError("verifier and train_step must be callables")
        if config.k < 2:
            raise ValueError(f"k={config.k}: a group needs at least 2 completions to compare")
        if config.prompts_per_step < 1 or config.max_new_tokens < 1:
            raise ValueError("prompts_per_step and max_new_tokens must be at least 1")
        if config.temperature <= 0:
            raise ValueError("training needs sampling: temperature must be > 0 (0 is greedy)")
        if config.temperature != 1.0 or config.top_k is not None or config.top_p is not None:
            warnings.warn(
                "rollouts use temperature/top-k/top-p other than plain sampling at T=1: the "
                "completions then come from a tempered or truncated distribution, not from the "
                "policy itself, so a step that rescores them with the untempered policy treats "
                "them as samples of that policy (off-policy). Use the stored behaviour "
                "log-probs or interpret with care.",
                stacklevel=3,
            )

    # --- helpers for the step ----------------------------------------------------------------

    def next_tasks(self) -> list[Task]:
        """The next ``prompts_per_step`` tasks in the seeded order (a new shuffle per pass)."""
        out = []
        for _ in range(self.config.prompts_per_step):
            if not self._order:
                self._order = list(range(len(self.tasks)))
                self._rng.shuffle(self._order)
            out.append(self.tasks[self._order.pop()])
        return out

    def sample(self, tasks: list[Task]):
        """K completions per task with the config's decoding and the trainer's generator.

        Returns a ``sampling.GroupSample`` with N = len(tasks) * k rows; ``group`` indexes ``tasks``.
        Runs with the policy in eval mode and without gradients.
        """
        c = self.config
        t0 = time.perf_counter()
        with _mode(self.policy, False), torch.no_grad():
            sample = sample_groups(
                self.policy,
                self.tokenizer,
                [t.prompt for t in tasks],
                c.k,
                max_new_tokens=c.max_new_tokens,
                temperature=c.temperature,
                top_k=c.top_k,
                top_p=c.top_p,
                generator=self.generator,
            )
        self._stats["gen_s"] = self._stats.get("gen_s", 0.0) + time.perf_counter() - t0
        self._stats["gen_tokens"] = self._stats.get("gen_tokens", 0.0) + float(sample.lengths.sum())
        self.last_sample, self.last_rewards = sample, None
        return sample

    def score(self, tasks: list[Task], sample, verifier: Callable | None = None) -> torch.Tensor:
        """(N,) float32 rewards: ``verifier(tasks[group[i]], texts[i])`` for every row."""
        verifier = verifier or self.verifier
        groups = sample.group.tolist()
        rewards = torch.tensor(
            [float(verifier(tasks[g], text)) for g, text in zip(groups, sample.texts, strict=True)],
            dtype=torch.float32,
        )
        if sample is self.last_sample:
            self.last_rewards = rewards
        return rewards

    def update(self, loss: torch.Tensor) -> float:
        """One optimizer step on ``loss``: zero grads, backward, clip, step. Returns the grad norm
        (before clipping). Refuses a non-finite loss instead of writing NaN into the adapters."""
        if not isinstance(loss, torch.Tensor) or loss.ndim != 0:
            raise TypeError("update expects a scalar loss tensor")
        if not loss.requires_grad:
            raise ValueError(
                "the loss has no gradient: was the policy's log-prob computed under no_grad, "
                "or from the reference instead of the policy?"
            )
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"loss is {loss.item()}: a NaN usually comes from a degenerate group's zero std "
                "reaching the advantages - skip groups whose rewards are all equal"
            )
        params = [p for g in self.optimizer.param_groups for p in g["params"]]
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        max_norm = self.config.grad_clip if self.config.grad_clip is not None else math.inf
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        self.optimizer.step()
        self.updates += 1
        self._stats["grad_norm"] = float(norm)
        return float(norm)

    # --- the loop ----------------------------------------------------------------------------

    def run_step(self) -> dict[str, float]:
        """One call of ``train_step`` on the next tasks; returns and records its history row."""
        tasks = self.next_tasks()
        self._stats = {}
        updates_before = self.updates
        t0 = time.perf_counter()
        with _mode(self.policy, True):
            out = self.train_step(self, tasks)
        elapsed = time.perf_counter() - t0
        if not isinstance(out, dict):
            raise TypeError(f"train_step must return a dict, got {type(out).__name__}")
        missing = [k for k in REQUIRED_KEYS if k not in out]
        if missing:
            raise KeyError(f"train_step's dict lacks {missing}; required: {list(REQUIRED_KEYS)}")
        row = {k: _to_float(k, v) for k, v in out.items()}
        if self.updates == updates_before and (row["kl"] == 0.0 or row["entropy"] == 0.0):
            warnings.warn(
                f"step {self.step}: no update ran but kl/entropy is exactly 0.0; if nothing was "
                "measured, report NaN (a gap), not 0 (a false measurement of no drift)",
                stacklevel=2,
            )
        row = {
            "step": float(self.step),
            **row,
            "updates": float(self.updates),
            "grad_norm": self._stats.get("grad_norm", math.nan),
            "gen_tokens": self._stats.get("gen_tokens", 0.0),
            "gen_s": self._stats.get("gen_s", 0.0),
            "time_s": elapsed,
        }
        self._append(row)
        self.step += 1
        return row

    def _append(self, row: dict[str, float]) -> None:
        """Add a row to the history; a key new this step is NaN before, a missing key NaN now."""
        n = len(self.history.get("step", []))
        for k in [*self.history, *(k for k in row if k not in self.history)]:
            self.history.setdefault(k, [math.nan] * n).append(row.get(k, math.nan))

    def _set_last(self, key: str, value: float) -> None:
        n = len(self.history["step"])
        self.history.setdefault(key, [math.nan] * n)[-1] = value

    def train(
        self,
        steps: int | None = None,
        progress: bool = True,
        dashboard=None,
        eval_tasks: list[Task] | None = None,
        eval_every: int = 5,
        eval_verifier: Callable | None = None,
    ) -> dict:
        """Run ``steps`` steps (default ``config.steps``); returns ``self.history``.

        dashboard:     a ``diagnostics.Dashboard``; each step's row and its rollout (the latest
                       ``sample`` and its ``score``) are recorded into it.
        eval_tasks:    held-out tasks; every ``eval_every`` steps and after the last one, the greedy
                       pass rate (``evaluate``, scored by ``eval_verifier`` or the training
                       verifier) goes into the history as "heldout_pass" (NaN on other steps).
        Raises RuntimeError at the end if the reference's weights changed.
        """
        from tqdm.auto import tqdm

        steps = self.config.steps if steps is None else steps
        bar = tqdm(range(steps), desc="GRPO", disable=not progress, leave=True)
        for i in bar:
            row = self.run_step()
            if eval_tasks and ((i + 1) % eval_every == 0 or i == steps - 1):
                row["heldout_pass"] = self.evaluate(eval_tasks, verifier=eval_verifier)
                self._set_last("heldout_pass", row["heldout_pass"])
            if dashboard is not None:
                self._record(dashboard, row)
            bar.set_postfix(
                reward=f"{row['reward']:.2f}", kl=f"{row['kl']:.3g}", skipped=int(row["skipped"])
            )
        bar.close()
        self.check_reference()
        return self.history

    def _record(self, dashboard, row: dict[str, float]) -> None:
        from helpers.diagnostics import Rollout

        rollout = None
        if self.last_sample is not None and self.last_rewards is not None:
            rollout = Rollout.from_sample(self.last_sample, self.last_rewards)
        scalars = {k: v for k, v in row.items() if k != "step"}
        dashboard.record(int(row["step"]), rollout, **scalars)

    def check_reference(self) -> None:
        """Raise RuntimeError if the reference's weights differ from when the trainer was built."""
        now = fingerprint(self.reference)
        if now != self.reference_fingerprint:
            raise RuntimeError(
                f"the reference model changed during training (fingerprint "
                f"{self.reference_fingerprint} -> {now}): the KL leash measured drift from a "
                "moving target. The reference must be a separate, frozen copy never given to "
                "the optimizer."
            )

    # --- evaluation and records --------------------------------------------------------------

    @torch.no_grad()
    def evaluate(
        self,
        tasks: list[Task],
        verifier: Callable | None = None,
        max_new_tokens: int | None = None,
        return_samples: bool = False,
        batch_size: int = 64,
    ):
        """Greedy generated pass rate on ``tasks``: mean verifier score of one greedy completion each.

        verifier:       score with this verifier instead of the training one (the audit).
        max_new_tokens: default ``config.eval_max_new_tokens``, else ``config.max_new_tokens``.
        return_samples: also return [(prompt, completion, reward), ...].
        Uses no randomness, so it does not advance the training generator.
        """
        if not tasks:
            raise ValueError("no evaluation tasks")
        c = self.config
        budget = max_new_tokens or c.eval_max_new_tokens or c.max_new_tokens
        verifier = verifier or self.verifier
        rows = []
        with _mode(self.policy, False):
            for i in range(0, len(tasks), batch_size):
                chunk = tasks[i : i + batch_size]
                sample = sample_groups(
                    self.policy,
                    self.tokenizer,
                    [t.prompt for t in chunk],
                    1,
                    max_new_tokens=budget,
                    temperature=0.0,
                )
                rewards = self.score(chunk, sample, verifier)
                for g, text, r in zip(
                    sample.group.tolist(), sample.texts, rewards.tolist(), strict=True
                ):
                    rows.append((chunk[g].prompt, text, r))
        rate = sum(r for _, _, r in rows) / len(rows)
        return (rate, rows) if return_samples else rate

    def passport(self, **extra: Any) -> dict:
        """The run passport: config, verifier passport, versions, git commit, the train_step's
        qualified name, parameter counts, the reference fingerprint and a hash of the task list."""
        from helpers.passport import config_hash, make_passport, to_jsonable

        fields = {
            "train_step": to_jsonable(self.train_step),
            "trainable_params": self.trainable_params,
            "total_params": self.total_params,
            "reference_fingerprint": str(self.reference_fingerprint),
            "policy_class": type(self.policy).__name__,
            "tasks": {
                "n": len(self.tasks),
                "families": sorted({t.family for t in self.tasks}),
                "hash": config_hash([[t.prompt, t.answer] for t in self.tasks]),
            },
            "steps_run": self.step,
            "updates": self.updates,
            **extra,
        }
        return make_passport(self.config, verifier=self.verifier, extra=fields)


def _to_float(key: str, v: Any) -> float:
    if isinstance(v, torch.Tensor):
        if v.numel() != 1:
            raise ValueError(f"train_step's {key!r} must be a scalar, got shape {tuple(v.shape)}")
        v = v.item()
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"train_step's {key!r} must be a number, got {v!r}") from None
