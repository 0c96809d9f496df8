"""Stand-ins for the tests of lesson 9.5: small models and trainers whose behaviour a test can
predict by hand (uniform logits, learned absolute positions) and that record how they were used.

They are plain code, here to be read. When your notebook is graded, a test builds a stand-in in
your kernel and calls your function on it there; it builds the same stand-in (same seed, same
code) in the grader's own process and runs the reference on that one. What your stand-in
recorded (the calls your function made, the loss it passed to ``update``, the parameters after a
step) comes back to the grader as plain data and is compared there. A stand-in holds behaviour,
never an expected value.

Every constructor takes plain arguments (numbers, strings), so a test can ask for one by name.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

__all__ = [
    "AbsPosLM",
    "UniformLM",
    "first_prompt",
    "load_params",
    "param_grads",
    "param_state",
    "restore_updates",
    "spy_updates",
    "stand_in_trainer",
    "tiny_llama",
    "tiny_lm",
    "tiny_trainer",
    "trainable",
]


def tiny_lm(seed: int = 0):
    """A tiny random causal LM (Qwen3 architecture, hidden 32) and a character tokenizer.

    For demos and tests that need a real transformer in milliseconds; it knows nothing.
    """
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from helpers.policies import CharTokenizer

    tok = CharTokenizer('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ +-=?:.,{}"')
    cfg = Qwen3Config(vocab_size=tok.vocab_size, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=8, max_position_embeddings=128, pad_token_id=tok.pad_token_id,
                      eos_token_id=tok.eos_token_id, bos_token_id=None)  # fmt: skip
    torch.manual_seed(seed)
    return Qwen3ForCausalLM(cfg).eval(), tok


def tiny_llama(seed: int = 0):
    """A one-layer random Llama (vocabulary 11, pad 0, EOS 1) in eval mode: a real rotary model."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=11, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                      pad_token_id=0, eos_token_id=1, bos_token_id=None)  # fmt: skip
    return LlamaForCausalLM(cfg).eval()


class UniformLM(torch.nn.Module):
    """A stub causal LM whose logits are all zero: every token has log-prob -log V."""

    def __init__(self, V: int):
        super().__init__()
        self.V, self.w = V, torch.nn.Parameter(torch.zeros(()))

    def forward(self, input_ids, attention_mask=None, position_ids=None, **kw):
        return SimpleNamespace(logits=self.w + torch.zeros(*input_ids.shape, self.V))


class AbsPosLM(torch.nn.Module):
    """A learned-absolute-position stub (as GPT-2 has): logits = tok[id] + pos[position] + 0.1 *
    (real tokens attended so far), so a rescoring that drops ``position_ids`` or the attention mask
    gets other log-probs. ``dtype`` (a name: "float32", "bfloat16", ...) is the logits' dtype.

    ``calls`` records every forward call: its input_ids, attention_mask and position_ids (None when
    not passed), whether grad was enabled, and the names of any other keyword arguments.
    """

    def __init__(self, V: int = 11, L: int = 16, seed: int = 5, dtype: str = "float32"):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.tok = torch.nn.Parameter(torch.randn(V, V, generator=g))
        self.pos = torch.nn.Parameter(torch.randn(L, V, generator=g))
        self.logits_dtype = getattr(torch, dtype)
        self.calls: list[dict] = []

    def forward(self, input_ids, attention_mask=None, position_ids=None, **kw):
        self.calls.append({"input_ids": input_ids, "attention_mask": attention_mask,
                           "position_ids": position_ids, "grad": torch.is_grad_enabled(),
                           "other": sorted(kw)})  # fmt: skip
        am = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        pos = torch.arange(input_ids.shape[1]).expand_as(input_ids)
        pos = pos if position_ids is None else position_ids
        if bool((pos < 0).any()) or bool((pos >= self.pos.shape[0]).any()):
            raise IndexError("position out of range (an embedding table has no row for it)")
        seen = am.long().cumsum(1).float()[..., None]  # real tokens attended so far (causal)
        logits = self.tok[input_ids] + self.pos[pos] + 0.1 * seen
        return SimpleNamespace(logits=logits.to(self.logits_dtype))


# --- parameters as data ------------------------------------------------------------------------


def param_state(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """Every named parameter's value, as float64 arrays (a copy)."""
    return {n: p.detach().double().numpy().copy() for n, p in model.named_parameters()}


def param_grads(model: torch.nn.Module) -> dict[str, np.ndarray | None]:
    """Every named parameter's ``.grad`` as a float64 array (None where there is none)."""
    return {
        n: None if p.grad is None else p.grad.detach().double().numpy().copy()
        for n, p in model.named_parameters()
    }


def trainable(model: torch.nn.Module) -> dict[str, bool]:
    """Every named parameter's ``requires_grad``."""
    return {n: bool(p.requires_grad) for n, p in model.named_parameters()}


def load_params(model: torch.nn.Module, state: dict) -> None:
    """Set the named parameters of ``model`` to the arrays of ``state`` (as ``param_state`` gives)."""
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.as_tensor(np.asarray(state[n]), dtype=p.dtype))


# --- trainers ----------------------------------------------------------------------------------


def _verifier(kind: str, value: float, first: str | None):
    if kind == "always":
        return lambda task, completion: value
    if kind == "mixed":  # prompt ``first``: always 1; others: 1 iff the first char's code is even

        def mixed(task, completion):
            if task.prompt == first:
                return 1.0
            return float(len(completion) > 0 and ord(completion[0]) % 2 == 0)

        return mixed
    raise ValueError(f"unknown verifier {kind!r}: 'always' or 'mixed'")


def tiny_trainer(train_step=None, verifier: str = "always", value: float = 1.0,
                 first: str | None = None, seed: int = 0, **cfg):  # fmt: skip
    """A ``GRPOTrainer`` on ``tiny_lm(seed)`` with LoRA (its B matrices initialised non-zero, so the
    policy differs from the reference from the start) and a frozen copy as reference; two groups of
    K = 4 completions of 4 tokens per step over six arithmetic-choice tasks.

    ``verifier``: "always" (reward ``value`` for everything) or "mixed" (the group of prompt
    ``first`` always 1, the others 1 iff the completion's first character has an even code).
    ``train_step``: the step function (None: one that refuses to run, for a trainer built only for
    its models). ``cfg``: overrides of the ``TrainerConfig``.
    """
    from helpers.lora import add_lora
    from helpers.reference import load_reference
    from helpers.tasks import make_tasks
    from helpers.trainer import GRPOTrainer, TrainerConfig

    def no_step(trainer, tasks):
        raise RuntimeError("this trainer was built without a train_step")

    net, tok = tiny_lm(seed)
    ref = load_reference(net)
    pol = add_lora(net, r=4, alpha=8, seed=seed)
    with torch.no_grad():
        for name, p in pol.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05, generator=torch.Generator().manual_seed(seed))
    conf = TrainerConfig(**{"k": 4, "max_new_tokens": 4, "prompts_per_step": 2, "lr": 1e-2,
                            "seed": seed, **cfg})  # fmt: skip
    return GRPOTrainer(pol, ref, tok, make_tasks("arithmetic_choice", 6, "train", 0),
                       _verifier(verifier, value, first), train_step=train_step or no_step,
                       config=conf)  # fmt: skip


def first_prompt(seed: int = 0) -> str:
    """The prompt of the first task ``tiny_trainer(seed=seed)`` draws (its seeded order)."""
    return tiny_trainer(seed=seed).next_tasks()[0].prompt


def spy_updates(trainer) -> list:
    """Replace ``trainer.update`` by a recorder that takes no step: each call appends
    ``{"loss": the loss detached, "requires_grad": whether it carried gradient}`` to the list
    returned (also ``trainer.spied``). ``restore_updates`` puts the real one back."""
    spied: list = []

    def update(loss):
        spied.append({"loss": loss.detach().clone(), "requires_grad": bool(loss.requires_grad)})
        return 0.0

    trainer.update, trainer.spied = update, spied
    return spied


def restore_updates(trainer) -> None:
    """Undo ``spy_updates``: the trainer's own ``update`` steps again."""
    del trainer.update


def stand_in_trainer(case: int, spread: float = 1e-7) -> SimpleNamespace:
    """A stand-in of a trainer for ``train_step`` with the attributes its docstring names, rebuilt
    identically from ``case`` and ``spread``: policy and reference are ``AbsPosLM`` stubs (the
    reference frozen); ``sample`` returns one fixed batch (ragged left padding, completions of
    several lengths, junk log-probs after EOS) and ``score`` fixed float32 rewards: per group all
    equal, binary, continuous, or of a tiny but nonzero spread (one reward ``spread``, the others 0:
    at 1e-30 the group's float32 variance, and a std built from float32 squares, underflow to 0,
    though torch.std, computed in double, does not; at 1e-45, float32's smallest subnormal, its
    population std rounds to 0 as well); B groups of K from 1 up. ``update`` records the loss and its
    gradient wrt every policy parameter, then moves the policy (as a real step would).

    Returns ``SimpleNamespace(trainer=..., tasks=..., log=...)``; ``log`` counts the ``sample`` and
    ``score`` calls and holds ``updates``: a list of (loss, [gradient per policy parameter]).
    """
    rng = np.random.default_rng(9570 + case)
    B, K = int(rng.integers(1, 4)), 1 if case % 8 == 7 else int(rng.integers(2, 5))
    N, P, T = B * K, int(rng.integers(2, 6)), int(rng.integers(1, 6))
    real_p, comp = rng.integers(1, P + 1, N), rng.integers(1, T + 1, N)
    pm = (np.arange(P)[None, :] >= P - real_p[:, None]).astype(np.int64)
    cm = (np.arange(T)[None, :] < comp[:, None]).astype(np.int64)
    am = np.concatenate([pm, cm], axis=1)
    ids = np.where(am == 1, rng.integers(2, 13, (N, P + T)), 0)
    lps = np.where(cm == 1, -rng.exponential(1.0, (N, T)), -7.0)  # junk after EOS
    groups = []
    for b in range(B):
        kind = (case + b) % 4
        if kind == 0 or K == 1:
            groups.append(np.full(K, float(rng.choice([0.0, 1.0, 0.3]))))
        elif kind == 1:
            groups.append((np.arange(K) == rng.integers(0, K)).astype(float))
        elif kind == 2:
            groups.append(rng.normal(0, 1, K))
        else:
            groups.append(spread * (np.arange(K) == rng.integers(0, K)))  # tiny spread
    rewards = torch.tensor(np.concatenate(groups), dtype=torch.float32)
    am_t = torch.tensor(am)
    sample = SimpleNamespace(input_ids=torch.tensor(ids), attention_mask=am_t, prompt_len=P,
                             position_ids=(am_t.cumsum(1) - 1).clamp(min=0),
                             completion_mask=torch.tensor(cm),
                             logprobs=torch.tensor(lps, dtype=torch.float32), k=K)  # fmt: skip
    log: dict = {"sample": 0, "score": 0, "updates": []}
    pol, ref = AbsPosLM(V=13, L=32, seed=case), AbsPosLM(V=13, L=32, seed=1000 + case)
    ref.requires_grad_(False)

    def sample_fn(tasks):
        log["sample"] += 1
        return sample

    def score_fn(tasks, s):
        log["score"] += 1
        if s is not sample:
            raise AssertionError("score the sample that trainer.sample returned")
        return rewards.clone()

    def update_fn(loss):
        grads = torch.autograd.grad(loss, list(pol.parameters()), retain_graph=True,
                                    allow_unused=True)  # fmt: skip
        log["updates"].append((loss, [None if g is None else g.clone() for g in grads]))
        with torch.no_grad():
            for p in pol.parameters():
                p.add_(0.5)
        return 1.0

    config = SimpleNamespace(k=K, kl_coef=[0.0, 0.05, 0.4][case % 3], prompts_per_step=B)
    trainer = SimpleNamespace(policy=pol, reference=ref, sample=sample_fn, score=score_fn,
                              update=update_fn, config=config)  # fmt: skip
    tasks = [SimpleNamespace(prompt=f"task {b}", answer="0") for b in range(B)]
    return SimpleNamespace(trainer=trainer, tasks=tasks, log=log)
