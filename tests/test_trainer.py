"""The GRPO trainer scaffold on a tiny random Llama (hidden 32, 2 layers) with LoRA adapters.

The step under test is a reference simplified-GRPO step written here (advantages, completion
log-probs, the loss with a k3 KL), because helpers never hold the graded functions. Runs in seconds.
"""

from __future__ import annotations

import copy
import json
import math
import string

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

from helpers.diagnostics import Dashboard
from helpers.policies import CharTokenizer
from helpers.tasks import make_tasks
from helpers.trainer import GRPOTrainer, TrainerConfig

ALPHABET = string.digits + string.ascii_letters + ' +-=?:.,{}"'
TIME_KEYS = {"time_s", "gen_s"}
pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")


# --- a tiny model pair and a reference GRPO step (written here, not in helpers) ---------------


def make_pair(seed: int = 0, lora: bool = True):
    """(policy, frozen reference, tokenizer): a random tiny Llama; the policy gets LoRA on q/v."""
    tok = CharTokenizer(ALPHABET)
    cfg = LlamaConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=tok.bos_token_id,
    )
    torch.manual_seed(seed)
    base = LlamaForCausalLM(cfg)
    reference = copy.deepcopy(base).eval().requires_grad_(False)
    if not lora:
        return base, reference, tok
    policy = get_peft_model(
        base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    )
    for name, p in policy.named_parameters():  # non-zero B, so the step's gradient reaches A too
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.02)
    return policy, reference, tok


def even_first_char(task, completion: str) -> float:
    """Stand-in verifier with mixed groups on a random model: 1 if the first char's code is even."""
    return float(len(completion) > 0 and ord(completion[0]) % 2 == 0)


even_first_char.passport = {"name": "even_first_char", "version": "test"}


def always(value: float):
    return lambda task, completion: value


def group_advantages(rewards, group):
    """(N,) rewards -> (N,) advantages (population std per group; zeros for a degenerate group)
    and (G,) booleans: the group is informative."""
    adv = torch.zeros_like(rewards)
    informative = []
    for g in group.unique():
        m = group == g
        r = rewards[m]
        std = r.std(unbiased=False)
        informative.append(bool(std > 0))
        if std > 0:
            adv[m] = (r - r.mean()) / std
    return adv, torch.tensor(informative)


def completion_logp(model, sample, rows):
    """(n,) summed log-probs of the completion tokens of ``rows`` (teacher-forced)."""
    ids, mask, pos = sample.input_ids[rows], sample.attention_mask[rows], sample.position_ids[rows]
    logits = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits[
        :, :-1
    ]  # (n, L-1, V)
    logp = logits.log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1)  # (n, L-1)
    P = sample.prompt_len
    return (logp[:, P - 1 :] * sample.completion_mask[rows]).sum(dim=1)  # (n,)


def grpo_step(trainer, tasks):
    """Sample -> verify -> advantages -> update on the informative groups (k3 KL on sums)."""
    s = trainer.sample(tasks)
    r = trainer.score(tasks, s)
    adv, informative = group_advantages(r, s.group)
    out = {
        "reward": r.mean(),
        "kl": math.nan,
        "entropy": math.nan,
        "skipped": int((~informative).sum()),
        "groups": len(tasks),
    }
    if not informative.any():
        return out
    rows = informative[s.group]  # (N,) bool
    logp = completion_logp(trainer.policy, s, rows)
    with torch.no_grad():
        ref_logp = completion_logp(trainer.reference, s, rows)
    d = ref_logp - logp
    kl = d.exp() - d - 1  # (n,) >= 0
    loss = -(adv[rows] * logp).mean() + trainer.config.kl_coef * kl.mean()
    trainer.update(loss)
    m = s.completion_mask[rows]
    out.update(kl=kl.mean(), entropy=-(s.logprobs[rows] * m).sum() / m.sum(), loss=loss)
    return out


def make_trainer(verifier=even_first_char, seed=0, lora=True, **overrides):
    policy, reference, tok = make_pair(seed, lora)
    cfg = TrainerConfig(
        **{
            "k": 8,
            "max_new_tokens": 6,
            "prompts_per_step": 2,
            "lr": 1e-2,
            "seed": seed,
            **overrides,
        }
    )
    tasks = make_tasks("arithmetic_choice", 8, "train", seed=0)
    return GRPOTrainer(policy, reference, tok, tasks, verifier, train_step=grpo_step, config=cfg)


def params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


# --- tests ------------------------------------------------------------------------------------


def test_step_updates_only_trainable_parameters():
    t = make_trainer()
    before, ref_before = params(t.policy), params(t.reference)
    row = t.run_step()
    assert t.updates == 1 and row["skipped"] < row["groups"], row
    after = params(t.policy)
    trainable = {n for n, p in t.policy.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    assert any(not torch.equal(before[n], after[n]) for n in trainable), "no LoRA weight moved"
    frozen_changed = [
        n for n in before if n not in trainable and not torch.equal(before[n], after[n])
    ]
    assert not frozen_changed, f"frozen weights changed: {frozen_changed[:3]}"
    assert all(torch.equal(ref_before[n], p) for n, p in t.reference.named_parameters())
    assert math.isfinite(row["kl"]) and row["kl"] >= 0 and math.isfinite(row["entropy"])
    assert math.isfinite(row["grad_norm"]) and row["gen_tokens"] > 0


def test_degenerate_groups_are_skips_with_nan_diagnostics():
    t = make_trainer(verifier=always(1.0))
    before = params(t.policy)
    row = t.run_step()
    assert row["skipped"] == row["groups"] == 2
    assert math.isnan(row["kl"]) and math.isnan(row["entropy"]) and math.isnan(row["grad_norm"])
    assert t.updates == 0 and row["updates"] == 0 and row["reward"] == 1.0
    assert all(torch.equal(before[n], p) for n, p in t.policy.named_parameters())


def test_train_history_keys_and_lengths():
    t = make_trainer()
    heldout = make_tasks("arithmetic_choice", 3, "heldout")
    h = t.train(3, progress=False, eval_tasks=heldout, eval_every=2, eval_verifier=always(0.5))
    want = {
        "step", "reward", "kl", "entropy", "skipped", "groups", "loss", "updates",
        "grad_norm", "gen_tokens", "gen_s", "time_s", "heldout_pass",
    }  # fmt: skip
    assert want <= set(h), set(h) ^ want
    assert list(h)[:6] == ["step", "reward", "kl", "entropy", "skipped", "groups"]
    assert all(len(v) == 3 for v in h.values())
    assert h["step"] == [0.0, 1.0, 2.0]
    assert math.isnan(h["heldout_pass"][0]) and h["heldout_pass"][1:] == [0.5, 0.5]
    assert h["updates"] == sorted(h["updates"]) and h["updates"][-1] == t.updates
    t.train(1, progress=False)  # resumes: the step counter and the history continue
    assert t.history["step"] == [0.0, 1.0, 2.0, 3.0] and math.isnan(t.history["heldout_pass"][3])


def test_evaluate_pass_rate_and_verifier_override():
    t = make_trainer()
    tasks = make_tasks("arithmetic_choice", 5, "heldout", seed=1)
    state = t.generator.get_state()
    rate, rows = t.evaluate(tasks, return_samples=True)
    assert 0.0 <= rate <= 1.0 and len(rows) == 5
    assert [p for p, _, _ in rows] == [task.prompt for task in tasks]
    assert rate == pytest.approx(sum(even_first_char(None, c) for _, c, _ in rows) / 5)
    assert t.evaluate(tasks, verifier=always(0.0)) == 0.0
    assert t.evaluate(tasks, verifier=always(1.0)) == 1.0
    assert t.evaluate(tasks, return_samples=True)[1] == rows, "greedy evaluation is deterministic"
    assert t.evaluate(tasks, batch_size=2, return_samples=True)[1] == rows
    assert torch.equal(t.generator.get_state(), state), (
        "evaluate must not consume training randomness"
    )
    for mode in (True, False):  # evaluate restores the policy's mode, whichever it was
        t.policy.train(mode)
        t.evaluate(tasks[:1])
        assert t.policy.training is mode
    assert len(t.evaluate(tasks, max_new_tokens=2, return_samples=True)[1][0][1]) <= 2


def test_reference_change_is_detected():
    t = make_trainer()
    t.check_reference()  # unchanged: fine
    with torch.no_grad():
        next(t.reference.parameters()).add_(1.0)
    with pytest.raises(RuntimeError, match="reference model changed"):
        t.train(1, progress=False)


def test_refuses_bad_setups():
    with pytest.raises(ValueError, match="trainable"):
        make_trainer(lora=False)  # the raw unfrozen model
    policy, reference, tok = make_pair(lora=False)
    tasks = make_tasks("format", 2)
    full = GRPOTrainer(
        policy,
        reference,
        tok,
        tasks,
        even_first_char,
        train_step=grpo_step,
        allow_full_finetune=True,
    )
    assert full.trainable_params == full.total_params
    with pytest.raises(ValueError, match="no trainable"):
        GRPOTrainer(
            reference, copy.deepcopy(reference), tok, tasks, even_first_char, train_step=grpo_step
        )
    with pytest.raises(ValueError, match="same object"):
        GRPOTrainer(policy, policy, tok, tasks, even_first_char, train_step=grpo_step)
    policy, reference, tok = make_pair()
    with pytest.raises(ValueError, match="reference has trainable"):
        GRPOTrainer(
            policy,
            reference.requires_grad_(True),
            tok,
            tasks,
            even_first_char,
            train_step=grpo_step,
        )
    with pytest.raises(ValueError, match="at least 2"):
        make_trainer(k=1)
    with pytest.warns(UserWarning, match="off-policy"):
        make_trainer(temperature=0.7)


def test_same_seed_same_history():
    runs = [make_trainer(seed=3).train(2, progress=False) for _ in range(2)]
    a, b = ({k: v for k, v in h.items() if k not in TIME_KEYS} for h in runs)
    assert json.dumps(a) == json.dumps(b)  # NaN-aware, exact
    texts = [make_trainer(seed=s).sample(make_tasks("format", 1)).texts for s in (3, 3, 4)]
    assert texts[0] == texts[1] != texts[2]


def test_step_contract_is_checked():
    t = make_trainer()
    t.train_step = lambda trainer, tasks: {"reward": 0.5}
    with pytest.raises(KeyError, match="kl"):
        t.run_step()
    with pytest.raises(FloatingPointError, match="degenerate"):
        t.update(torch.tensor(float("nan"), requires_grad=True))
    with pytest.raises(ValueError, match="no gradient"):
        t.update(torch.tensor(1.0))
    t.train_step = lambda trainer, tasks: {
        "reward": 0.5,
        "kl": 0.0,
        "entropy": 0.0,
        "skipped": 1,
        "groups": 1,
    }
    with pytest.warns(UserWarning, match="report NaN"):
        t.run_step()


def test_dashboard_and_passport():
    t = make_trainer()
    dash = Dashboard()
    t.train(2, progress=False, dashboard=dash)
    h = dash.history
    assert h["step"] == [0.0, 1.0] and {
        "reward",
        "kl",
        "diversity",
        "len_mean",
        "reward_mean",
    } <= set(h)
    assert h["reward"] == pytest.approx(h["reward_mean"])
    p = t.passport()
    json.dumps(p)
    assert p["config"]["k"] == 8 and p["config"]["prompts_per_step"] == 2
    assert p["extra"]["train_step"].endswith("grpo_step")
    assert p["verifier"]["name"] == "even_first_char"
    assert p["extra"]["updates"] == t.updates and p["extra"]["tasks"]["n"] == 8
