"""The CPU lab's GRU policy and character tokenizer: padding invariance, cache, sampler contract."""

from __future__ import annotations

import pytest
import torch
from test_sampling import teacher_forced_logprobs

from helpers.policies import CharTokenizer, GRUConfig, GRUPolicy, build_gru_policy
from helpers.sampling import sample_group, sample_groups


@pytest.fixture(scope="module")
def gru():
    policy, tok = build_gru_policy(d_embed=16, d_hidden=32, n_layers=2, seed=0)
    return policy.eval(), tok


# ------------------------------------------------------------------------------------------
# tokenizer


def test_char_tokenizer_round_trip_and_specials():
    tok = CharTokenizer()
    assert (tok.pad_token_id, tok.eos_token_id, tok.bos_token_id) == (0, 1, 2)
    assert tok.vocab_size == len(tok) == 3 + len(tok.alphabet)
    ids = tok.encode("Q: 12+7=? A: 19")
    assert tok.decode(ids) == "Q: 12+7=? A: 19"
    assert tok.encode("1+1", add_special_tokens=True)[0] == tok.bos_token_id
    assert tok("1+1")["input_ids"] == tok.encode("1+1")
    assert tok.decode([*ids, tok.eos_token_id, tok.pad_token_id]) == "Q: 12+7=? A: 19"
    assert tok.decode([tok.eos_token_id], skip_special_tokens=False) == "<eos>"
    assert tok.decode(torch.tensor(ids)) == "Q: 12+7=? A: 19"
    assert tok.token_ids("01") == [3, 4] and tok.token_ids(["<eos>", "+"]) == [1, tok.stoi["+"]]
    m = tok.mask("0123456789")
    assert m.dtype == torch.bool and m.shape == (tok.vocab_size,) and int(m.sum()) == 10
    with pytest.raises(ValueError, match="alphabet"):
        tok.encode("x")
    with pytest.raises(ValueError, match="vocabulary"):
        tok.token_ids("x")
    with pytest.raises(ValueError, match="repeated"):
        CharTokenizer("00")
    assert CharTokenizer("ab").vocab_size == 5


# ------------------------------------------------------------------------------------------
# GRU forward


def test_gru_init_is_seeded_and_leaves_global_rng_alone():
    state = torch.get_rng_state()
    a, b = GRUPolicy(GRUConfig(vocab_size=10, seed=3)), GRUPolicy(GRUConfig(vocab_size=10, seed=3))
    c = GRUPolicy(GRUConfig(vocab_size=10, seed=4))
    assert torch.equal(torch.get_rng_state(), state)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embed.weight, c.embed.weight)


def test_left_padding_does_not_change_the_result(gru):
    policy, tok = gru
    ids = torch.tensor([tok.encode("Q: 12+7=? A:")])  # (1, 12)
    pad = torch.full((1, 5), tok.pad_token_id)
    padded = torch.cat([pad, ids], 1)  # (1, 17)
    mask = torch.cat([torch.zeros(1, 5, dtype=torch.long), torch.ones_like(ids)], 1)
    with torch.no_grad():
        plain = policy(ids, use_cache=True)
        left = policy(padded, attention_mask=mask, use_cache=True)
    torch.testing.assert_close(left.logits[:, 5:], plain.logits, atol=1e-6, rtol=0)
    torch.testing.assert_close(left.past_key_values, plain.past_key_values, atol=1e-6, rtol=0)
    assert left.cache is left.past_key_values  # the transformers 5.x name


def test_cached_steps_equal_one_full_forward(gru):
    """Feeding tokens one at a time through the state equals one forward; the mask may cover
    past + current tokens, as in HF decoding."""
    policy, tok = gru
    ids = torch.tensor([tok.encode("12+7=19"), tok.encode("3+45=48")])  # (2, 7)
    with torch.no_grad():
        full = policy(ids).logits  # (2, 7, V)
        out = policy(ids[:, :3], attention_mask=torch.ones(2, 3), use_cache=True)
        steps = [out.logits]
        for t in range(3, 7):
            out = policy(
                ids[:, t : t + 1], attention_mask=torch.ones(2, t + 1), past_key_values=out.past_key_values,
                use_cache=True,
            )  # fmt: skip
            steps.append(out.logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-6, rtol=0)
    assert policy(ids).past_key_values is None  # no state unless use_cache


def test_gru_trains(gru):
    """The masked step loop is differentiable (the lab trains through left-padded batches)."""
    policy, tok = build_gru_policy(d_hidden=16, seed=1)
    ids = torch.tensor([[0, 0] + tok.encode("1+2=3"), tok.encode("10+2=12")])
    mask = (torch.arange(7) >= torch.tensor([[2], [0]])).long()
    logits = policy(ids, attention_mask=mask).logits
    logits.sum().backward()
    assert all(p.grad is not None for p in policy.parameters())


# ------------------------------------------------------------------------------------------
# the sampler on the GRU, under a grammar


def answer_grammar(tok: CharTokenizer):
    """Up to three digits then EOS: step 0 a digit, steps 1-2 a digit or EOS, step 3 only EOS."""
    digits = tok.mask("0123456789")
    digit_or_eos = digits | tok.mask(["<eos>"])
    eos = tok.mask(["<eos>"])

    def grammar(generated, step):  # (N, t), int -> (N, V)
        m = digits if step == 0 else digit_or_eos if step < 3 else eos
        return m.expand(generated.shape[0], -1)

    return grammar


def test_sampler_on_gru_respects_grammar_and_stores_behaviour_logprobs(gru):
    policy, tok = gru
    grammar = answer_grammar(tok)
    prompts = ["Q: 12+7=? A:", "Q: 3+4=? A:", "1+1="]
    g = torch.Generator().manual_seed(0)
    s = sample_groups(
        policy, tok, prompts, 8, max_new_tokens=6, allowed_tokens=grammar, generator=g
    )
    assert s.completion_ids.shape[1] <= 4  # everything stops by step 3
    assert s.stop_reason == ["eos"] * 24
    for t in range(s.completion_ids.shape[1]):
        live = s.completion_mask[:, t] == 1
        allowed = grammar(s.completion_ids[:, :t], t)  # (N, V)
        assert allowed[live, s.completion_ids[live, t]].all()
    assert all(text.isdigit() and 1 <= len(text) <= 3 for text in s.texts)
    with torch.no_grad():
        ref = teacher_forced_logprobs(policy, s, allowed=grammar, temperature=1.0)
    torch.testing.assert_close(s.logprobs, ref, atol=1e-5, rtol=0)
    assert (s.logprobs[:, 3] == 0).all()  # EOS forced at step 3: log 1 (or masked)


def test_sampler_on_gru_greedy_and_seeded(gru):
    policy, tok = gru
    a = sample_group(policy, tok, "Q: 1+2=? A:", 3, temperature=0.0, max_new_tokens=5)
    assert (a.completion_ids == a.completion_ids[0]).all() and (a.logprobs == 0).all()
    b = sample_group(policy, tok, "Q: 1+2=? A:", 3, generator=torch.Generator().manual_seed(9))
    c = sample_group(policy, tok, "Q: 1+2=? A:", 3, generator=torch.Generator().manual_seed(9))
    assert torch.equal(b.completion_ids, c.completion_ids)
