"""The CPU lab engine: a GRU policy trained by a clipped group-relative update on arithmetic.

Lesson 9.5, section 9.5.4: "a small but genuine autoregressive model" (embedding -> GRU -> LM head,
``helpers.policies.GRUPolicy``) answers addition prompts token by token under a constrained
grammar; a versioned verifier scores correctness, intermediate consistency and format separately;
each prompt gets a group sampled by a frozen *old* policy; the current policy takes several clipped
update epochs on that batch; a frozen *reference* (the initial weights) gives teacher-forced KL
diagnostics; held-out combinations, pass@k and prompt-level coverage are measured by fresh
generation. The fixed smoke profile reproduces the lesson's failure pattern: mean training accuracy
rises while entropy and pass@4 fall, successes concentrate on fewer prompts and held-out transfer
collapses.

The task. Prompt ``"23+18="``; operands in ``[operand_lo, operand_hi]``. Response grammar
``T,O;S<eos>``: T = sum of the tens digits, O = sum of the ones digits, S = the answer
(``"3,11;41"``). T and O have 1-2 digits, S 1-3; the grammar is the allowed-token mask of the
behaviour policy. Split rule: pair (a, b) is held out iff ``(a + 2 * b) % 7 == 0``. Like
``helpers.tasks.is_heldout`` (a rule modulo 7 too, on another range and coefficients) it keeps every
digit-level fact (3+3, 4+9, ...) in both pools, so only the combination is new; the lab keeps its
own rule so that its committed histories do not move when the task module's split changes.

Verifier ``gru_lab_arithmetic`` (``LAB_VERIFIER``, a ``helpers.verifiers.Verifier`` with a passport):
``correct`` (S = a + b), ``consistent`` (S = 10 T + O, checkable without the reference),
``format`` (canonical numbers, ended by ``<eos>``); reward = w_correct*correct +
w_consistent*consistent + w_format*format. A truncated response (no ``<eos>``) scores 0 on all three.

The graded pieces are arguments, never implemented here. ``run_lab(profile, **fns)`` takes
(N rows = prompts * G, T completion tokens, V vocabulary; ``mask`` is float 0/1, 1 on the
generated tokens up to and including ``<eos>``; ``loss_fn`` and ``clip_fraction_fn`` get the
*loss* mask, which under ``Perturbation(truncation_contract="mask")`` has all-zero rows for the
truncated responses: divide by a count clamped to at least 1)::

    advantages_fn(rewards (B, G)) -> (B, G)           group-relative advantages, one row per prompt
    loss_fn(new_logp (N, T), old_logp (N, T), ref_logp (N, T), advantages (N,), mask (N, T),
            *, clip_eps: float, kl_coef: float) -> (loss: 0-dim tensor, metrics: dict[str, float])
    entropy_fn(logits (N, T, V), mask (N, T)) -> float
        mean token entropy over active tokens; ``logits`` are the behaviour logits (tempered, with
        -inf on grammar-disallowed tokens, which contribute 0)
    pass_at_k_fn(n: int, c: int, k: int) -> float      unbiased pass@k from c successes in n samples
    clip_fraction_fn(ratio (N, T), advantages (N,), mask (N, T), *, clip_eps: float)
        -> (low: float, high: float)   fraction of active tokens with ratio < 1-eps and A < 0 (low)
                                       or ratio > 1+eps and A > 0 (high)
    kl_fn(logp (N, T), ref_logp (N, T), mask (N, T)) -> float
        KL(policy || reference) estimated on tokens sampled from the policy (the course uses k3)

All log-probs are those of the behaviour distribution (temperature and grammar mask applied).

How the lab departs from the description above and from a real run:

1. A pretraining phase on a noisy corpus (a fraction of carry answers drop the carry, other answers
   get +-1 errors) makes a policy that starts diverse with moderate accuracy. Real RLVR starts
   from a pretrained LM; the noise plays the role of its spread of habits.
2. The smoke profile is tuned to fail: a small prompt pool, a high learning rate, several epochs
   per batch and no KL term. It shows that one mean reward is not enough evidence, not that GRPO
   must collapse.
3. Stored old log-probs are checked against a teacher-forced rescoring by the frozen old copy
   (``old_logp_maxdiff``); the KL diagnostic uses the rollout tokens, so it is KL(old || ref).
"""

from __future__ import annotations

import copy
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor
from tqdm.auto import tqdm

from helpers.passport import make_passport, tensor_hash
from helpers.policies import CharTokenizer, GRUPolicy, build_gru_policy
from helpers.sampling import GroupSample, sample_groups
from helpers.tasks import Task
from helpers.verifiers import Verdict, Verifier

# The smoke profile's history as the instructor's reference functions produced it (written by the
# instructor's lab-history script); shipped with the library so lessons 9.4 and 9.5 can read it.
SMOKE_HISTORY = Path(__file__).resolve().parent / "data" / "gru_lab_smoke.json"

LAB_VERSION = "1.0"
ALPHABET = "0123456789+=,;"
SEGMENT_DIGITS = (2, 2, 3)  # max digits of T, O, S
SEPARATORS = (",", ";", "<eos>")  # what closes each segment
SPLIT_RULE = "pair (a, b) is held out iff (a + 2*b) % 7 == 0"


# --------------------------------------------------------------------------------------------
# Profiles


@dataclass(frozen=True)
class LabProfile:
    """One lab run, fully specified; ``run_lab`` derives everything else from it."""

    name: str = "smoke"
    """Label stored in the passport."""
    seed: int = 0
    """Seeds the weights, the pretraining corpus, the prompt pool and every sampling generator."""
    threads: int = 1
    """torch CPU threads during the run (fixed: the thread count can change float sums)."""
    operand_lo: int = 10
    """Smallest operand."""
    operand_hi: int = 49
    """Largest operand (two-digit operands keep the prompt length fixed at 6 tokens)."""
    pool_size: int = 24
    """Train prompts the RL phase sees (drawn once from the train pairs)."""
    n_heldout: int = 48
    """Held-out prompts evaluated (drawn once from the held-out pairs)."""
    d_embed: int = 32
    """GRU embedding width."""
    d_hidden: int = 128
    """GRU hidden width."""
    pretrain_steps: int = 1500
    """Supervised steps on the noisy corpus before RL (all train pairs, never held-out ones)."""
    pretrain_batch: int = 64
    """Sequences per pretraining step."""
    pretrain_lr: float = 3e-3
    """Adam learning rate of pretraining."""
    p_clean: float = 0.6
    """Probability that a corpus response is fully correct (when the carry is not dropped)."""
    p_carry_drop: float = 0.5
    """Probability that a carry case is written without the carry ("3,1;31" for 15+16)."""
    steps: int = 60
    """RL steps; each samples one rollout batch from a fresh frozen old copy."""
    prompts_per_step: int = 8
    """B: prompts per rollout batch (drawn without replacement from the pool)."""
    group_size: int = 6
    """G: completions per prompt."""
    temperature: float = 1.0
    """Behaviour temperature (training rollouts and sampled evaluation)."""
    max_new_tokens: int = 9
    """Generation budget; the grammar allows 10 tokens, so an over-long answer is truncated."""
    lr: float = 3e-3
    """Adam learning rate of the RL phase."""
    num_iterations: int = 4
    """Update epochs over each rollout batch (1 = the ratio is always 1 at the gradient)."""
    clip_eps: float = 0.2
    """Clip range of the ratio, symmetric."""
    kl_coef: float = 0.0
    """beta of the KL term passed to ``loss_fn`` (0: KL is only a diagnostic)."""
    max_grad_norm: float = 1.0
    """Gradient clipping of the RL update (0 = off)."""
    w_correct: float = 1.0
    """Verifier weight of correctness."""
    w_consistent: float = 0.1
    """Verifier weight of intermediate consistency."""
    w_format: float = 0.1
    """Verifier weight of format."""
    eval_every: int = 10
    """Evaluate (fresh generation) every this many steps, and before the first and after the last."""
    eval_samples: int = 16
    """n: samples per prompt for pass@k and coverage at evaluation."""
    pass_k: int = 4
    """k of the logged pass@k."""


@dataclass(frozen=True)
class Perturbation:
    """Changes induced on top of a profile (lesson 9.4's diagnosis clinic); the defaults change
    nothing. A run with a perturbation records it in its passport's config (``perturbation``)."""

    truncation_contract: str = "zero"
    """What a truncated response (no ``<eos>``) teaches: "zero" (it keeps its reward, 0, and its
    tokens stay in the loss) or "mask" (its reward still enters its group's baseline, but its
    tokens leave the loss, as in DAPO's overlong filtering: nothing pushes it down)."""
    wrong_penalty: float = 0.0
    """Subtracted from the reward of a response that ended with ``<eos>`` and was scored wrong (a
    truncated response, and a call the verifier failed, keep reward 0): with a penalty above
    w_consistent + w_format, every wrong answer scores below an unfinished one."""
    verifier_fault_step: int = 0
    """From this RL step on, training verifier calls fail (0 = never). A failed call scores 0 with
    category "timeout" (fail-closed), as a verifier service that times out under load would;
    evaluation calls are never faulted."""
    verifier_fault_rate: float = 0.0
    """Probability that a training verifier call fails once the fault has started."""

    def __post_init__(self) -> None:
        if self.truncation_contract not in ("zero", "mask"):
            raise ValueError(
                f"truncation_contract must be 'zero' or 'mask', got {self.truncation_contract!r}"
            )
        for name in ("wrong_penalty", "verifier_fault_step"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if not 0 <= self.verifier_fault_rate <= 1:
            raise ValueError(
                f"verifier_fault_rate must be in [0, 1], got {self.verifier_fault_rate}"
            )


PROFILES: dict[str, LabProfile] = {
    "smoke": LabProfile(),
    "tiny": LabProfile(
        name="tiny", pool_size=4, n_heldout=4, d_hidden=32, pretrain_steps=30, pretrain_batch=16,
        steps=3, prompts_per_step=2, group_size=4, eval_every=2, eval_samples=4, num_iterations=2,
    ),
}  # fmt: skip


# --------------------------------------------------------------------------------------------
# Task, grammar, verifier


def is_heldout(a: int, b: int) -> bool:
    """The lab's split rule (see the module docstring for why it differs from ``tasks``)."""
    return (a + 2 * b) % 7 == 0


def split_pairs(lo: int, hi: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(train pairs, held-out pairs) of operands in [lo, hi]; disjoint by ``is_heldout``."""
    pairs = [(a, b) for a in range(lo, hi + 1) for b in range(lo, hi + 1)]
    return [p for p in pairs if not is_heldout(*p)], [p for p in pairs if is_heldout(*p)]


def make_task(a: int, b: int) -> Task:
    """The prompt ``"a+b="`` with reference answer ``a+b``."""
    split = "heldout" if is_heldout(a, b) else "train"
    return Task(
        prompt=f"{a}+{b}=",
        answer=str(a + b),
        family="arithmetic",
        meta={"a": a, "b": b, "split": split},
    )


def reference_response(a: int, b: int) -> str:
    """The correct response text (without ``<eos>``): ``"T,O;S"``."""
    return f"{a // 10 + b // 10},{a % 10 + b % 10};{a + b}"


def make_tokenizer() -> CharTokenizer:
    """The lab's tokenizer: digits, ``+ = , ;`` and the specials (V = 17)."""
    return CharTokenizer(ALPHABET)


class Grammar:
    """The response grammar ``D{1,2} , D{1,2} ; D{1,3} <eos>`` as an allowed-token mask.

    ``grammar(generated (N, t), step) -> (N, V) bool`` is the sampler's ``allowed_tokens``;
    ``grammar.masks(completion_ids (N, T)) -> (N, T, V)`` gives the same masks for teacher forcing.
    After ``<eos>`` only ``<eos>`` and ``<pad>`` are allowed (those draws are discarded anyway).
    """

    __name__ = "lab_grammar"

    def __init__(self, tokenizer: CharTokenizer):
        self.V = tokenizer.vocab_size
        self.digits = torch.tensor(tokenizer.token_ids("0123456789"))
        self.closers = torch.tensor(
            tokenizer.token_ids([",", ";", "<eos>"])
        )  # closes segment 0, 1, 2
        self.eos, self.pad = tokenizer.eos_token_id, tokenizer.pad_token_id
        self.max_digits = torch.tensor(SEGMENT_DIGITS)

    def _state(self, generated: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """(segment index, digits in it, finished) of each row, each (N,)."""
        N = generated.shape[0]
        seg = torch.zeros(N, dtype=torch.long)
        nd = torch.zeros(N, dtype=torch.long)
        done = torch.zeros(N, dtype=torch.bool)
        for t in range(generated.shape[1]):
            tok = generated[:, t].cpu()
            is_digit = torch.isin(tok, self.digits)
            closes = torch.isin(tok, self.closers[:2])
            done |= (tok == self.eos) | (tok == self.pad)
            nd = torch.where(is_digit, nd + 1, torch.where(closes, 0, nd))
            seg = seg + closes.long()
        return seg.clamp(max=2), nd, done

    def __call__(self, generated: Tensor, step: int | None = None) -> Tensor:
        seg, nd, done = self._state(generated)
        N = seg.shape[0]
        allowed = torch.zeros(N, self.V, dtype=torch.bool)
        allowed[:, self.digits] = (nd < self.max_digits[seg])[:, None]
        allowed[torch.arange(N), self.closers[seg]] = nd >= 1
        allowed[done] = False
        allowed[done, self.eos] = True
        allowed[done, self.pad] = True
        return allowed.to(generated.device)

    def masks(self, completion_ids: Tensor) -> Tensor:
        """(N, T) completions -> (N, T, V) bool: the mask in force when token t was drawn."""
        T = completion_ids.shape[1]
        return torch.stack([self(completion_ids[:, :t], t) for t in range(T)], dim=1)


_RESPONSE = re.compile(r"([0-9]{1,2}),([0-9]{1,2});([0-9]{1,3})<eos>", re.ASCII)


def _lab_verdict(
    task: Task, completion: str, *, w_correct: float, w_consistent: float, w_format: float
) -> Verdict:
    if not isinstance(completion, str):
        return Verdict(0.0, "invalid_input", {"correct": 0.0, "consistent": 0.0, "format": 0.0})
    m = _RESPONSE.fullmatch(completion)
    if m is None:
        category = "truncated" if not completion.endswith("<eos>") else "parse_error"
        return Verdict(0.0, category, {"correct": 0.0, "consistent": 0.0, "format": 0.0})
    t, o, s = (int(g) for g in m.groups())
    correct = float(s == int(task.answer))
    consistent = float(s == 10 * t + o)
    fmt = float(all(g == str(int(g)) for g in m.groups()))  # no leading zeros
    reward = w_correct * correct + w_consistent * consistent + w_format * fmt
    parts = {"correct": correct, "consistent": consistent, "format": fmt}
    return Verdict(reward, "correct" if correct else "wrong", parts)


def make_verifier(
    w_correct: float = 1.0, w_consistent: float = 0.1, w_format: float = 0.1
) -> Verifier:
    """The lab verifier; ``v.check(task, completion).components`` holds the three components.

    ``completion`` is the response text followed by ``"<eos>"`` when the policy emitted it.
    """
    rules = (
        "response = T,O;S followed by <eos>; T, O 1-2 digits, S 1-3 digits (the sampling grammar)",
        "no <eos> (cut by max_new_tokens): category truncated, every component 0",
        "correct = [S == a + b]",
        "consistent = [S == 10*T + O] (self-consistency of the intermediate step; no reference)",
        "format = [no number has a leading zero]",
        "reward = w_correct*correct + w_consistent*consistent + w_format*format",
    )
    config = {"w_correct": w_correct, "w_consistent": w_consistent, "w_format": w_format}
    return Verifier("gru_lab_arithmetic", LAB_VERSION, rules, config, _lab_verdict)


def score(
    verifier: Verifier,
    tasks: list[Task],
    sample: GroupSample,
    fault: Callable[[], bool] | None = None,
) -> dict[str, Tensor]:
    """Verifier results of every row: ``reward``, ``correct``, ``consistent``, ``format``,
    ``parse_error`` and ``verifier_error`` (N,). ``fault()`` True makes that call fail (category
    "timeout", every component 0); ``verifier_error`` also counts a verifier that raised ("error").
    The lab's grammar only lets ``<eos>`` close a parsable answer, so ``parse_error`` is 0 here."""
    keys = ("reward", "correct", "consistent", "format", "parse_error", "verifier_error")
    rows: dict[str, list[float]] = {key: [] for key in keys}
    for i, (text, stop) in enumerate(zip(sample.texts, sample.stop_reason)):
        failed = fault is not None and fault()
        v = (
            Verdict(0.0, "timeout", {})
            if failed
            else verifier.check(tasks[i // sample.k], text + ("<eos>" if stop == "eos" else ""))
        )
        rows["reward"].append(v.reward)
        for key in ("correct", "consistent", "format"):
            rows[key].append(v.components.get(key, 0.0))
        rows["parse_error"].append(float(v.category == "parse_error"))
        rows["verifier_error"].append(float(v.category in ("timeout", "error")))
    return {k: torch.tensor(v, dtype=torch.float32) for k, v in rows.items()}


# --------------------------------------------------------------------------------------------
# Pretraining on a noisy corpus


def noisy_response(a: int, b: int, rng: random.Random, p_clean: float, p_carry_drop: float) -> str:
    """One corpus response for (a, b): correct, carry dropped, or off by one somewhere."""
    t, o = a // 10 + b // 10, a % 10 + b % 10
    if o >= 10 and rng.random() < p_carry_drop:
        return f"{t},{o - 10};{10 * t + o - 10}"  # consistent but wrong: the carry is lost
    if rng.random() < p_clean:
        return reference_response(a, b)
    kind = rng.randrange(4)
    if kind == 0:
        t += rng.choice((-1, 1))
    elif kind == 1:
        o = max(0, o + rng.choice((-1, 1)))
    elif kind == 2:  # right steps, wrong composition
        return f"{t},{o};{a + b + rng.choice((-10, -1, 1, 10))}"
    else:
        t, o = t + rng.choice((-1, 1)), max(0, o + rng.choice((-1, 1)))
    return f"{t},{o};{10 * t + o}"


def pretrain(
    model: GRUPolicy, tok: CharTokenizer, pairs: list, p: LabProfile, progress: bool = True
) -> list[float]:
    """Next-token cross-entropy on response tokens of the noisy corpus; returns the losses."""
    rng = random.Random(f"pretrain/{p.seed}")
    opt = torch.optim.Adam(model.parameters(), lr=p.pretrain_lr)
    P = len(make_task(*pairs[0]).prompt)
    losses = []
    for _ in tqdm(range(p.pretrain_steps), desc="pretrain", disable=not progress, leave=False):
        rows = []
        for a, b in (rng.choice(pairs) for _ in range(p.pretrain_batch)):
            text = make_task(a, b).prompt + noisy_response(a, b, rng, p.p_clean, p.p_carry_drop)
            rows.append(tok.encode(text) + [tok.eos_token_id])
        L = max(map(len, rows))
        ids = torch.tensor([r + [tok.pad_token_id] * (L - len(r)) for r in rows])  # (B, L)
        logits = model(ids[:, :-1]).logits  # (B, L-1, V)
        target = ids[:, 1:].clone()
        target[:, : P - 1] = tok.pad_token_id  # the prompt is given, not learned (pad = ignored)
        loss = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=tok.pad_token_id)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# --------------------------------------------------------------------------------------------
# Teacher forcing


def behaviour_logits(
    model: GRUPolicy, sample: GroupSample, grammar: Grammar, temperature: float
) -> Tensor:
    """(N, T, V) logits of the behaviour distribution at each completion token, teacher-forced:
    the model's logits / temperature with -inf on grammar-disallowed tokens."""
    P, T = sample.prompt_len, sample.completion_ids.shape[1]
    logits = model(sample.input_ids[:, : P + T - 1]).logits[:, P - 1 :]  # (N, T, V)
    allowed = grammar.masks(sample.completion_ids).to(logits.device)  # (N, T, V)
    return (logits / temperature).masked_fill(~allowed, float("-inf"))


def token_logprobs(logits: Tensor, completion_ids: Tensor, mask: Tensor) -> Tensor:
    """(N, T) log-prob of each completion token under ``logits``; 0 where ``mask`` is 0."""
    lp = logits.log_softmax(dim=-1).gather(2, completion_ids[..., None]).squeeze(2)  # (N, T)
    return torch.where(mask > 0, lp, torch.zeros_like(lp))


def _frozen(model: GRUPolicy) -> GRUPolicy:
    return copy.deepcopy(model).requires_grad_(False).eval()


def _state_hash(model: GRUPolicy) -> str:
    return tensor_hash(torch.cat([p.detach().flatten() for p in model.state_dict().values()]))


# --------------------------------------------------------------------------------------------
# Evaluation by fresh generation


def success_concentration(successes: Tensor) -> float:
    """1 - (effective number of prompts carrying the successes) / (number of prompts).

    ``successes`` (P,) counts per prompt; the effective number is exp(entropy) of the shares
    c_i / sum(c). 0 when successes are spread evenly over all prompts, -> 1 when one prompt holds
    them all; 1.0 when there is no success at all.
    """
    total = float(successes.sum())
    if total == 0:
        return 1.0
    share = successes.double() / total
    H = -float((share[share > 0] * share[share > 0].log()).sum())
    return 1.0 - math.exp(H) / successes.numel()


def top_share(successes: Tensor, frac: float = 0.2) -> float:
    """Fraction of all successes held by the top ``frac`` of prompts (0 with no success)."""
    total = float(successes.sum())
    top = max(1, round(frac * successes.numel()))
    return float(successes.sort(descending=True).values[:top].sum()) / total if total else 0.0


@torch.no_grad()
def evaluate(
    model, tok, grammar, verifier, tasks, p: LabProfile, fns: dict, tag: str, seed: int
) -> dict:
    """Sampled accuracy, pass@k, coverage, concentration, entropy and greedy accuracy on ``tasks``."""
    prompts, n = [t.prompt for t in tasks], p.eval_samples
    gen = torch.Generator().manual_seed(seed)  # the same draws at every evaluation point
    s = sample_groups(model, tok, prompts, n, max_new_tokens=p.max_new_tokens, temperature=p.temperature,
                      allowed_tokens=grammar, generator=gen)  # fmt: skip
    correct = score(verifier, tasks, s)["correct"].view(len(tasks), n)  # (P, n)
    c = correct.sum(dim=1)  # (P,)
    mask = s.completion_mask.float()
    greedy = sample_groups(model, tok, prompts, 1, max_new_tokens=p.max_new_tokens, temperature=0,
                           allowed_tokens=grammar)  # fmt: skip
    return {
        f"{tag}_acc": float(correct.mean()),
        f"{tag}_pass@{p.pass_k}": sum(fns["pass_at_k_fn"](n, int(ci), p.pass_k) for ci in c)
        / len(tasks),
        f"{tag}_coverage": int((c > 0).sum()),
        f"{tag}_concentration": success_concentration(c),
        f"{tag}_top20_share": top_share(c),
        f"{tag}_entropy": float(
            fns["entropy_fn"](behaviour_logits(model, s, grammar, p.temperature), mask)
        ),
        f"{tag}_greedy_acc": float(score(verifier, tasks, greedy)["correct"].mean()),
    }


# --------------------------------------------------------------------------------------------
# The run


@dataclass
class LabResult:
    """What ``run_lab`` returns.

    history:  dict of lists. Per RL step (key ``step``): reward, accuracy, the reward components
              (correct, consistent, format), truncation_rate, parse_fail_rate (parse errors),
              verifier_error_rate (failed verifier calls), len_mean, entropy, kl_ref, clip_low,
              clip_high (means over all update epochs, epoch 0 included, where the ratio is 1),
              clip_low_reused, clip_high_reused (epochs 1.. only; NaN with one epoch), ratio_max
              (largest ratio seen before an update), ratio_max_final (after the last update),
              skipped (1.0 when every group was degenerate and kl_coef = 0, or no token is left in
              the loss: no optimizer step, the update metrics are NaN), loss, informative_rate
              (share of groups whose rewards have max > min), old_logp_maxdiff, time_s. Under the
              "mask" contract the clip fractions, ratio maxima and loss run over the loss tokens,
              entropy and kl_ref over every generated token. Per
              evaluation point (key ``eval_step``, 0 = before RL): train_* and heldout_* acc,
              pass@k, coverage, concentration, top20_share, entropy, greedy_acc.
    passport: ``helpers.passport.make_passport`` of the profile, with the verifier passport,
              versions, reference hashes and the callables' names under ``extra``.
    samples:  a few decoded training completions at the first and last step, for reading.
    """

    history: dict[str, list]
    passport: dict
    samples: dict[str, list[str]] = field(default_factory=dict)

    def failure_pattern(self) -> dict[str, bool]:
        """``failure_pattern(self.history)`` at the profile's k."""
        return failure_pattern(self.history, k=self.passport["config"]["pass_k"])


def failure_pattern(history: dict[str, list], k: int = 4) -> dict[str, bool]:
    """The lab's five warning signs, first vs last evaluation point.

    accuracy_up: train sampled accuracy rose; entropy_down: train-prompt entropy fell;
    pass_at_k_down: train pass@k fell; concentration_up: train successes concentrated on fewer
    prompts; heldout_down: held-out greedy accuracy fell.
    """

    def delta(key: str) -> float:
        return history[key][-1] - history[key][0]

    return {
        "accuracy_up": delta("train_acc") > 0,
        "entropy_down": delta("train_entropy") < 0,
        "pass_at_k_down": delta(f"train_pass@{k}") < 0,
        "concentration_up": delta("train_concentration") > 0,
        "heldout_down": delta("heldout_greedy_acc") < 0,
    }


def run_lab(
    profile: LabProfile | str = "smoke",
    *,
    advantages_fn: Callable,
    loss_fn: Callable,
    entropy_fn: Callable,
    pass_at_k_fn: Callable,
    clip_fraction_fn: Callable,
    kl_fn: Callable,
    perturbation: Perturbation | None = None,
    progress: bool = True,
) -> LabResult:
    """Pretrain, then RL with the given graded functions; see the module docstring for their shapes.
    ``perturbation`` induces a pathology on top of the profile (lesson 9.4's clinic).

    Deterministic: the same profile (and functions) gives the same history on the same CPU build.
    """
    p = PROFILES[profile] if isinstance(profile, str) else profile
    fns = dict(advantages_fn=advantages_fn, loss_fn=loss_fn, entropy_fn=entropy_fn,
               pass_at_k_fn=pass_at_k_fn, clip_fraction_fn=clip_fraction_fn, kl_fn=kl_fn)  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(p.threads)
    try:
        return _run(p, perturbation or Perturbation(), fns, progress)
    finally:
        torch.set_num_threads(threads)


def _run(p: LabProfile, q: Perturbation, fns: dict, progress: bool) -> LabResult:
    t_start = time.perf_counter()
    tok = make_tokenizer()
    grammar = Grammar(tok)
    verifier = make_verifier(p.w_correct, p.w_consistent, p.w_format)
    train_pairs, held_pairs = split_pairs(p.operand_lo, p.operand_hi)
    rng = random.Random(f"pool/{p.seed}")
    pool = [make_task(*ab) for ab in rng.sample(train_pairs, p.pool_size)]
    held = [make_task(*ab) for ab in rng.sample(held_pairs, p.n_heldout)]

    model, _ = build_gru_policy(tok, d_embed=p.d_embed, d_hidden=p.d_hidden, seed=p.seed)
    pre_losses = pretrain(model, tok, train_pairs, p, progress)
    t_pretrain = time.perf_counter() - t_start
    ref = _frozen(model)  # the reference: initial (post-pretraining) weights, never updated
    ref_hash = _state_hash(ref)

    history: dict[str, list] = {}

    def log(row: dict) -> None:
        rows_before = len(history.get("step" if "step" in row else "eval_step", []))
        for key, v in row.items():  # a key first seen late is NaN on the earlier rows
            history.setdefault(key, [math.nan] * rows_before).append(v)

    def run_eval(step: int) -> None:
        model.eval()
        row = {"eval_step": step}
        row |= evaluate(model, tok, grammar, verifier, pool, p, fns, "train", seed=p.seed + 1)
        row |= evaluate(model, tok, grammar, verifier, held, p, fns, "heldout", seed=p.seed + 2)
        log(row)

    run_eval(0)
    opt = torch.optim.Adam(model.parameters(), lr=p.lr)
    gen = torch.Generator().manual_seed(p.seed)  # every rollout draw
    fault_rng = random.Random(f"fault/{p.seed}")  # the induced verifier fault (none by default)
    samples: dict[str, list[str]] = {}
    loss_keys: dict[str, None] = {}  # loss_fn metric names seen so far, in order
    bar = tqdm(range(1, p.steps + 1), desc="RL", disable=not progress)
    for step in bar:
        t0 = time.perf_counter()
        old = _frozen(model)  # the behaviour policy of this rollout batch
        batch = rng.sample(pool, p.prompts_per_step)
        s = sample_groups(old, tok, [t.prompt for t in batch], p.group_size, max_new_tokens=p.max_new_tokens,
                          temperature=p.temperature, allowed_tokens=grammar, generator=gen)  # fmt: skip
        mask = s.completion_mask.float()  # (N, T)
        faulty = q.verifier_fault_step and step >= q.verifier_fault_step
        r = score(
            verifier,
            batch,
            s,
            (lambda: fault_rng.random() < q.verifier_fault_rate) if faulty else None,
        )
        ended = torch.tensor([x == "eos" for x in s.stop_reason])  # (N,)
        if q.wrong_penalty:
            scored_wrong = ended & (r["correct"] == 0) & (r["verifier_error"] == 0)  # (N,)
            r["reward"] = r["reward"] - q.wrong_penalty * scored_wrong.float()
        B, G = p.prompts_per_step, p.group_size
        rewards = r["reward"].view(B, G)
        adv = fns["advantages_fn"](rewards).reshape(B * G).detach()  # (N,)
        old_logp = s.logprobs.detach()  # (N, T) stored at sampling time
        with torch.no_grad():
            old_logits = behaviour_logits(old, s, grammar, p.temperature)
            rescored = token_logprobs(old_logits, s.completion_ids, mask)
            ref_logp = token_logprobs(
                behaviour_logits(ref, s, grammar, p.temperature), s.completion_ids, mask
            )

        loss_mask = mask  # (N, T) the tokens the update sees
        if q.truncation_contract == "mask":  # truncated rows leave the loss (not the baseline)
            loss_mask = mask * ended.to(mask.dtype)[:, None]
        model.train()
        losses, lows, highs, rmax, metrics = [], [], [], [], {}
        # No signal at all (every group degenerate and no KL term, or every token masked out of the
        # loss): skip the update, otherwise Adam's momentum would still move the weights on a zero
        # gradient.
        informative = rewards.max(dim=1).values > rewards.min(dim=1).values  # (B,)
        skipped = (not bool(informative.any()) and p.kl_coef == 0) or not bool(loss_mask.any())
        for _ in range(0 if skipped else p.num_iterations):
            new_logp = token_logprobs(
                behaviour_logits(model, s, grammar, p.temperature), s.completion_ids, mask
            )
            loss, m = fns["loss_fn"](
                new_logp, old_logp, ref_logp, adv, loss_mask, clip_eps=p.clip_eps, kl_coef=p.kl_coef
            )
            opt.zero_grad()
            loss.backward()
            if p.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(model.parameters(), p.max_grad_norm)
            opt.step()
            ratio = torch.exp(new_logp.detach() - old_logp)  # (N, T)
            low, high = fns["clip_fraction_fn"](ratio, adv, loss_mask, clip_eps=p.clip_eps)
            losses.append(float(loss.detach()))
            lows.append(float(low))
            highs.append(float(high))
            rmax.append(float((ratio * loss_mask).max()))
            for key, v in (m or {}).items():
                metrics.setdefault(f"loss_{key}", []).append(float(v))
        ratio_max_final = math.nan
        if not skipped:
            with torch.no_grad():  # the ratio after the last update (the loop measured before each)
                final_logp = token_logprobs(
                    behaviour_logits(model, s, grammar, p.temperature), s.completion_ids, mask
                )
                ratio_max_final = float((torch.exp(final_logp - old_logp) * loss_mask).max())

        def mean(xs: list[float]) -> float:
            return sum(xs) / len(xs) if xs else math.nan

        if step == 1 or step == p.steps:
            samples[f"step_{step}"] = [
                f"{batch[i // G].prompt}{s.texts[i]}" for i in range(0, B * G, G)
            ]
        log({
            "step": step,
            "reward": float(rewards.mean()),
            "accuracy": float(r["correct"].mean()),
            "correct": float(r["correct"].mean()),
            "consistent": float(r["consistent"].mean()),
            "format": float(r["format"].mean()),
            "truncation_rate": sum(x == "length" for x in s.stop_reason) / len(s.stop_reason),
            "parse_fail_rate": float(r["parse_error"].mean()),
            "verifier_error_rate": float(r["verifier_error"].mean()),
            "len_mean": float(s.lengths.float().mean()),
            "entropy": float(fns["entropy_fn"](old_logits, mask)),
            "kl_ref": float(fns["kl_fn"](old_logp, ref_logp, mask)),
            "clip_low": mean(lows),
            "clip_high": mean(highs),
            "clip_low_reused": mean(lows[1:]),
            "clip_high_reused": mean(highs[1:]),
            "ratio_max": max(rmax, default=math.nan),
            "ratio_max_final": ratio_max_final,
            "skipped": float(skipped),
            "loss": mean(losses),
            "informative_rate": float(informative.float().mean()),  # max > min, exactly
            "old_logp_maxdiff": float(((rescored - old_logp).abs() * mask).max()),
            "time_s": time.perf_counter() - t0,
            **{key: mean(metrics.get(key, [])) for key in {**loss_keys, **dict.fromkeys(metrics)}},
        })  # fmt: skip
        loss_keys.update(dict.fromkeys(metrics))  # a skipped step logs NaN for these
        bar.set_postfix(acc=f"{history['accuracy'][-1]:.2f}", H=f"{history['entropy'][-1]:.3f}")
        if step % p.eval_every == 0 or step == p.steps:
            run_eval(step)

    extra = {
        "lab_version": LAB_VERSION,
        "split_rule": SPLIT_RULE,
        "grammar": "D{1,2} , D{1,2} ; D{1,3} <eos> (allowed-token mask of the behaviour policy)",
        "alphabet": ALPHABET,
        "pool": [t.prompt for t in pool],
        "heldout": [t.prompt for t in held],
        "callables": {
            k: f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', repr(f))}"
            for k, f in fns.items()
        },
        "loss_reduction": "whatever loss_fn does; the reference: token mean per response, then mean over responses",
        "kl_diagnostic": "kl_fn(stored old log-probs, reference log-probs) on the rollout tokens: KL(old || ref)",
        "pretrain_final_loss": pre_losses[-1] if pre_losses else None,
        "reference_hash_start": ref_hash,
        "reference_hash_end": _state_hash(ref),
        "old_logp_maxdiff": max(history["old_logp_maxdiff"], default=0.0),
        "time_pretrain_s": round(t_pretrain, 2),
        "time_total_s": round(time.perf_counter() - t_start, 2),
        "threads": p.threads,
    }
    config = asdict(p) | ({"perturbation": asdict(q)} if q != Perturbation() else {})
    passport = make_passport(config, verifier=verifier, extra=extra)
    return LabResult(history=history, passport=passport, samples=samples)


LAB_VERIFIER = make_verifier()
