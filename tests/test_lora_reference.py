"""LoRA adapters move and nothing else does; the reference stays frozen while the policy trains."""

from __future__ import annotations

import pytest
import torch
from test_sampling import tiny_qwen3

from helpers.lora import (
    adapter_state,
    add_lora,
    base_state_hash,
    describe_trainable,
    trainable_fraction,
)
from helpers.policies import CharTokenizer, build_gru_policy
from helpers.reference import assert_frozen, fingerprint, load_reference
from helpers.sampling import sample_groups

IDS = torch.tensor([[5, 9, 14, 3, 22, 7], [8, 8, 30, 41, 2, 17]])  # (2, 6)


def lm_loss(model) -> torch.Tensor:
    logits = model(input_ids=IDS).logits  # (2, 6, V)
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), IDS[:, 1:].flatten())


def test_lora_starts_at_zero_delta_and_is_seeded():
    base = tiny_qwen3(50)
    with torch.no_grad():
        before = base(input_ids=IDS).logits
    raw_hash = fingerprint(base)
    state = torch.get_rng_state()
    a = add_lora(base, r=8, seed=0)
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG is untouched
    assert base_state_hash(a) == raw_hash  # wrapping changed names, not base values
    with torch.no_grad():
        torch.testing.assert_close(a(input_ids=IDS).logits, before)  # B = 0: zero delta
    b = add_lora(tiny_qwen3(50), r=8, seed=0)
    c = add_lora(tiny_qwen3(50), r=8, seed=1)
    sa, sb, sc = adapter_state(a), adapter_state(b), adapter_state(c)
    assert len(sa) == 2 * 2 * 2  # 2 layers x (q_proj, v_proj) x (A, B)
    for name in sa:
        assert torch.equal(sa[name], sb[name])
        if "lora_B" in name:
            assert (sa[name] == 0).all()
        else:
            assert not torch.equal(sa[name], sc[name])


def test_optimizer_step_changes_only_adapters():
    model = add_lora(tiny_qwen3(50), r=8, seed=0)
    trainable, total, frac = trainable_fraction(model)
    assert trainable == sum(v.numel() for v in adapter_state(model).values())
    assert 0 < frac < 0.10, describe_trainable(model)
    text = describe_trainable(model)
    assert f"{trainable:,}" in text and "q_proj.lora_A" in text and "v_proj.lora_B" in text
    assert all(not p.requires_grad for n, p in model.named_parameters() if "lora_" not in n)

    base0, adapters0 = base_state_hash(model), adapter_state(model)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(2):  # step 1 moves B (A's gradient is B^T(...) = 0); step 2 moves A too
        opt.zero_grad()
        lm_loss(model).backward()
        opt.step()
    assert base_state_hash(model) == base0
    adapters1 = adapter_state(model)
    assert all(not torch.equal(adapters0[n], adapters1[n]) for n in adapters0)


def test_sampler_runs_on_the_peft_model_and_zero_delta_samples_like_the_base():
    tok = CharTokenizer()
    base = tiny_qwen3(tok.vocab_size)
    prompts = ["Q: 1+2=? A:", "7+8="]
    a = sample_groups(
        base, tok, prompts, 3, max_new_tokens=6, generator=torch.Generator().manual_seed(0)
    )
    policy = add_lora(base, seed=0)
    b = sample_groups(
        policy, tok, prompts, 3, max_new_tokens=6, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(a.completion_ids, b.completion_ids)
    torch.testing.assert_close(a.logprobs, b.logprobs)


@pytest.mark.parametrize("kind", ["qwen3_lora", "gru"])
def test_reference_stays_frozen_while_policy_trains(kind):
    if kind == "gru":
        policy, _ = build_gru_policy(d_hidden=16, seed=0)
        batch = IDS.clamp(max=policy.config.vocab_size - 1)
    else:
        policy, batch = add_lora(tiny_qwen3(50), seed=0), IDS
    ref = load_reference(policy)
    ref_fp = fingerprint(ref)
    assert ref is not policy and not ref.training
    assert all(not p.requires_grad for p in ref.parameters())
    assert fingerprint(policy) == ref_fp  # a copy: same weights at the start

    policy.train()
    opt = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(2):
        opt.zero_grad()
        logits = policy(input_ids=batch).logits
        torch.nn.functional.cross_entropy(
            logits[:, :-1].flatten(0, 1), batch[:, 1:].flatten()
        ).backward()
        opt.step()
    assert fingerprint(policy) != ref_fp  # the policy moved ...
    assert_frozen(ref, ref_fp)  # ... the reference did not

    with torch.no_grad():
        next(ref.parameters()).add_(1e-3)
    with pytest.raises(AssertionError, match="weights changed"):
        assert_frozen(ref, ref_fp)


def test_reference_from_factory_and_guards():
    policy, tok = build_gru_policy(seed=2)
    ref = load_reference(lambda: build_gru_policy(seed=2))  # a (model, tokenizer) factory
    assert fingerprint(ref) == fingerprint(policy) and not ref.training
    fp = fingerprint(ref)
    ref.train()
    with pytest.raises(AssertionError, match="train mode"):
        assert_frozen(ref, fp)
    ref.eval()
    next(ref.parameters()).requires_grad_(True)
    with pytest.raises(AssertionError, match="trainable"):
        assert_frozen(ref, fp)
    with pytest.raises(TypeError):
        load_reference(42)
