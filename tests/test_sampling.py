"""The group sampler: stored behaviour log-probs, reproducibility, KV cache, stops, greedy, checks.

The proof that ``GroupSample.logprobs`` describes the actual behaviour distribution is a
teacher-forced rescoring written here, independently of ``helpers.sampling``: one forward over the
whole (prompt, completion) batch, the same attention/position handling, and our own temperature,
allowed-mask, top-k and top-p code. Models are random tiny Qwen3s (BaseLM's architecture) built in
the test; everything runs on a CPU in a few seconds.
"""

from __future__ import annotations

import pytest
import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

from helpers.policies import CharTokenizer
from helpers.sampling import GroupSample, sample_group, sample_groups

PROMPTS = ["Q: 12+7=? A:", "Q: 3+4=?", "1+1="]  # three different lengths -> left padding


def tiny_qwen3(vocab_size: int, seed: int = 0) -> Qwen3ForCausalLM:
    """A random 2-layer Qwen3 with hidden 32; a large init scale makes its next-token
    distributions peaked, so top-k/top-p really cut something."""
    config = Qwen3Config(
        vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
        initializer_range=0.3, tie_word_embeddings=False,
    )  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    return model.eval()


@pytest.fixture(scope="module")
def tok() -> CharTokenizer:
    return CharTokenizer()


@pytest.fixture(scope="module")
def model(tok) -> Qwen3ForCausalLM:
    return tiny_qwen3(tok.vocab_size)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ------------------------------------------------------------------------------------------
# an independent implementation of the behaviour transforms, and teacher-forced rescoring


def transform(z, *, allowed=None, temperature=1.0, top_k=None, top_p=None):
    """(..., V) logits -> behaviour logits: allowed mask, / temperature, top-k, top-p."""
    neg = float("-inf")
    if allowed is not None:
        z = z.masked_fill(~allowed, neg)
    z = z / temperature
    if top_k is not None:
        kth = z.sort(dim=-1, descending=True).values[..., top_k - 1 : top_k]  # (..., 1)
        z = z.masked_fill(z < kth, neg)
    if top_p is not None:
        p, order = z.softmax(-1).sort(dim=-1, descending=True)
        before = p.cumsum(-1) - p  # mass of the strictly more likely tokens
        keep_sorted = before < top_p  # smallest prefix whose mass reaches top_p
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        z = z.masked_fill(~keep, neg)
    return z


def allowed_per_step(allowed, completion_ids):
    """The sampler's allowed_tokens argument as an (N, T, V) or (V,) mask, or None."""
    if allowed is None or isinstance(allowed, torch.Tensor):
        return allowed
    T = completion_ids.shape[1]
    return torch.stack([allowed(completion_ids[:, :t], t) for t in range(T)], dim=1)


def teacher_forced_logprobs(model, s: GroupSample, *, allowed=None, **warp) -> torch.Tensor:
    """(N, T) log-prob of each sampled token under the transformed distribution, 0 where masked,
    from ONE forward over input_ids (no cache)."""
    attn = s.attention_mask  # (N, P+T)
    pos = (attn.cumsum(1) - 1).clamp(min=0)  # (N, P+T)
    logits = model(input_ids=s.input_ids, attention_mask=attn, position_ids=pos).logits.float()
    P, T = s.prompt_len, s.completion_ids.shape[1]
    z = logits[:, P - 1 : P - 1 + T]  # (N, T, V): position P-1+t predicts completion token t
    z = transform(z, allowed=allowed_per_step(allowed, s.completion_ids), **warp)
    lp = z.log_softmax(-1).gather(-1, s.completion_ids[..., None])[..., 0]  # (N, T)
    return torch.where(s.completion_mask.bool(), lp, torch.zeros_like(lp))


def digits_and_eos(tok):
    return tok.mask("0123456789 ") | tok.mask(["<eos>"])


# ------------------------------------------------------------------------------------------
# (a) stored log-probs == teacher-forced rescoring

CASES = {
    "plain": dict(temperature=1.0),
    "T0.7_topk": dict(temperature=0.7, top_k=5),
    "top_p": dict(temperature=1.0, top_p=0.8),
    "allowed_topk_topp": dict(temperature=1.3, top_k=8, top_p=0.9, allowed="digits"),
}


@pytest.mark.parametrize("layout", ["one_group", "three_prompts"])
@pytest.mark.parametrize("case", list(CASES))
def test_stored_logprobs_equal_teacher_forced_rescoring(model, tok, case, layout):
    kw = dict(CASES[case])
    if kw.get("allowed") == "digits":
        kw["allowed"] = digits_and_eos(tok)
    allowed = kw.pop("allowed", None)
    prompts = PROMPTS[:1] if layout == "one_group" else PROMPTS
    s = sample_groups(
        model, tok, prompts, 4, max_new_tokens=10, allowed_tokens=allowed, generator=gen(1), **kw
    )
    N = 4 * len(prompts)
    assert s.input_ids.shape == (N, s.prompt_len + s.completion_ids.shape[1])
    assert s.group.tolist() == [i for i in range(len(prompts)) for _ in range(4)]
    if layout == "three_prompts":  # left padding really happened
        assert s.prompt_mask.sum(1).unique().numel() == 3
        assert (s.prompt_mask[:, -1] == 1).all()
    with torch.no_grad():
        ref = teacher_forced_logprobs(model, s, allowed=allowed, **kw)
    torch.testing.assert_close(s.logprobs, ref, atol=1e-5, rtol=0)
    assert (s.logprobs[s.completion_mask == 0] == 0).all()
    assert (s.logprobs[s.completion_mask == 1] < 0).any()
    if case != "plain":  # the transforms really bit: raw-softmax scores would differ
        raw = teacher_forced_logprobs(model, s)
        assert (raw - s.logprobs).abs().max() > 1e-3
    if allowed is not None:
        assert allowed[s.completion_ids[s.completion_mask == 1]].all()


def test_grammar_callable_logprobs_and_training_use(model, tok):
    """A callable grammar (per row, per step) is reproduced by rescoring; and the sample's tensors
    are ordinary tensors that a training forward/backward can use (not inference tensors)."""
    digits, sep = tok.mask("0123456789"), tok.mask("+") | tok.mask(["<eos>"])

    def grammar(generated, step):  # digit, then alternate: even steps digits, odd steps '+'/EOS
        N = generated.shape[0]
        return (digits if step % 2 == 0 else sep).expand(N, -1)

    s = sample_groups(
        model, tok, PROMPTS, 3, max_new_tokens=9, allowed_tokens=grammar, generator=gen(2)
    )
    ref = teacher_forced_logprobs(model, s, allowed=grammar)  # with grad
    torch.testing.assert_close(s.logprobs, ref.detach(), atol=1e-5, rtol=0)
    ref.sum().backward()
    assert model.model.embed_tokens.weight.grad is not None
    model.zero_grad(set_to_none=True)
    for text in s.texts:
        assert all(c.isdigit() for c in text[::2]) and all(c == "+" for c in text[1::2])


# ------------------------------------------------------------------------------------------
# (b) reproducibility, (c) KV cache == uncached loop


def test_same_seed_same_samples_different_seed_different(model, tok):
    a = sample_groups(model, tok, PROMPTS, 4, top_k=10, generator=gen(7))
    b = sample_groups(model, tok, PROMPTS, 4, top_k=10, generator=gen(7))
    c = sample_groups(model, tok, PROMPTS, 4, top_k=10, generator=gen(8))
    assert torch.equal(a.completion_ids, b.completion_ids) and a.texts == b.texts
    assert torch.equal(a.logprobs, b.logprobs)
    assert not torch.equal(a.completion_ids[:, :4], c.completion_ids[:, :4])


def uncached_loop(model, tok, prompts, k, *, max_new_tokens, generator, **warp):
    """Seed 003's readable loop, batched: re-run the whole sequence each step, no cache."""
    rows = [tok.encode(p) for p in prompts]
    P = max(map(len, rows))
    ids = torch.tensor([[tok.pad_token_id] * (P - len(r)) + r for r in rows]).repeat_interleave(
        k, 0
    )
    attn = torch.tensor([[0] * (P - len(r)) + [1] * len(r) for r in rows]).repeat_interleave(k, 0)
    done = torch.zeros(ids.shape[0], dtype=torch.bool)
    out = []
    for _ in range(max_new_tokens):
        pos = (attn.cumsum(1) - 1).clamp(min=0)
        logits = model(input_ids=ids, attention_mask=attn, position_ids=pos).logits[:, -1].float()
        probs = transform(logits, **warp).softmax(-1)
        nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]
        nxt = torch.where(done, tok.pad_token_id, nxt)
        out.append(nxt)
        ids = torch.cat([ids, nxt[:, None]], 1)
        attn = torch.cat([attn, (~done).long()[:, None]], 1)
        done = done | (nxt == tok.eos_token_id)
        if done.all():
            break
    return torch.stack(out, 1)


@pytest.mark.parametrize("warp", [dict(), dict(temperature=0.8, top_p=0.9)])
def test_kv_cache_matches_uncached_loop(model, tok, warp):
    s = sample_groups(model, tok, PROMPTS, 3, max_new_tokens=12, generator=gen(3), **warp)
    with torch.no_grad():
        ref = uncached_loop(model, tok, PROMPTS, 3, max_new_tokens=12, generator=gen(3), **warp)
    assert torch.equal(s.completion_ids, ref)


# ------------------------------------------------------------------------------------------
# (d) stops, masks, greedy


def test_stop_reasons_masks_and_early_stop(model, tok):
    """Even rows are forced to EOS at step 2, odd rows may never emit it."""
    eos = tok.eos_token_id

    def grammar(generated, step):
        N, V = generated.shape[0], tok.vocab_size
        a = torch.ones(N, V, dtype=torch.bool)
        a[:, tok.all_special_ids] = False  # <pad> <eos> <bos>: only visible characters
        if step == 2:
            a[0::2] = False
            a[0::2, eos] = True
        return a

    s = sample_groups(
        model, tok, PROMPTS[:2], 3, max_new_tokens=6, allowed_tokens=grammar, generator=gen(4)
    )
    T = s.completion_ids.shape[1]
    assert T == 6
    for i in range(6):
        if i % 2 == 0:
            assert s.stop_reason[i] == "eos"
            assert s.completion_mask[i].tolist() == [1, 1, 1, 0, 0, 0]
            assert (
                s.completion_ids[i, 2] == eos
                and (s.completion_ids[i, 3:] == tok.pad_token_id).all()
            )
            assert (s.logprobs[i, 3:] == 0).all() and len(s.texts[i]) == 2  # EOS not in text
        else:
            assert s.stop_reason[i] == "length" and s.completion_mask[i].all()
            assert len(s.texts[i]) == 6
    assert s.lengths.tolist() == [3, 6] * 3

    # when every row stops, decoding stops: T < max_new_tokens
    def all_stop(generated, step):
        return tok.mask(["<eos>"]) if step == 2 else tok.mask(tok.alphabet)

    s = sample_groups(
        model, tok, PROMPTS, 2, max_new_tokens=8, allowed_tokens=all_stop, generator=gen(4)
    )
    assert s.completion_ids.shape[1] == 3 and s.stop_reason == ["eos"] * 6
    assert torch.allclose(s.logprobs[:, 2], torch.zeros(6))  # EOS was the only choice: log 1


def test_greedy_equals_hf_generate(model, tok):
    # pick as "EOS" a token that greedy decoding emits early in row 0, so the stop path is used
    probe = sample_groups(model, tok, PROMPTS, 1, max_new_tokens=8, temperature=0.0)
    eos_tok = CharTokenizer()
    eos_tok.eos_token_id = int(probe.completion_ids[0, 2])

    s = sample_groups(model, eos_tok, PROMPTS, 1, max_new_tokens=8, temperature=0.0)
    assert "eos" in s.stop_reason
    assert (s.logprobs == 0).all()
    with torch.no_grad():
        ref = model.generate(
            input_ids=s.prompt_ids, attention_mask=s.prompt_mask, do_sample=False,
            max_new_tokens=8, eos_token_id=eos_tok.eos_token_id, pad_token_id=eos_tok.pad_token_id,
        )  # fmt: skip
    assert torch.equal(ref[:, : s.prompt_len], s.prompt_ids)
    assert torch.equal(ref[:, s.prompt_len :], s.completion_ids)


def test_sample_group_is_one_group_and_restores_train_mode(model, tok):
    model.train()
    s = sample_group(model, tok, PROMPTS[0], 5, max_new_tokens=4, generator=gen(5))
    assert model.training
    model.eval()
    assert s.k == 5 and s.n_prompts == 1 and s.group.tolist() == [0] * 5
    assert s.prompt_len == len(tok.encode(PROMPTS[0])) and (s.prompt_mask == 1).all()
    assert s.decoding["temperature"] == 1.0 and s.decoding["max_new_tokens"] == 4
    assert len(s.texts) == len(s.stop_reason) == 5


def test_hf_fast_tokenizer_protocol(model, tok):
    """The sampler drives a real PreTrainedTokenizerFast (built in memory) the same way."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {s: i for i, s in enumerate(tok.itos)}
    raw = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    raw.decoder = decoders.Fuse()
    hf = PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>"
    )
    assert hf.encode(PROMPTS[0], add_special_tokens=False) == tok.encode(PROMPTS[0])
    a = sample_groups(model, hf, PROMPTS, 2, max_new_tokens=6, generator=gen(6))
    b = sample_groups(model, tok, PROMPTS, 2, max_new_tokens=6, generator=gen(6))
    assert torch.equal(a.completion_ids, b.completion_ids) and a.texts == b.texts


# ------------------------------------------------------------------------------------------
# argument checks


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(k=0), "k"),
        (dict(temperature=-0.1), "temperature"),
        (dict(top_p=0.0), "top_p"),
        (dict(top_p=1.5), "top_p"),
        (dict(top_k=0), "top_k"),
        (dict(max_new_tokens=0), "max_new_tokens"),
        (dict(prompts=[]), "empty"),
        (dict(allowed_tokens=torch.ones(7, dtype=torch.bool)), "allowed_tokens"),
        (
            dict(allowed_tokens=lambda g, t: torch.zeros(g.shape[0], 28, dtype=torch.bool)),
            "no token",
        ),
    ],
)
def test_bad_arguments_are_explained(model, tok, kwargs, match):
    args = dict(prompts=PROMPTS, k=2, max_new_tokens=3) | kwargs
    with pytest.raises(ValueError, match=match):
        sample_groups(model, tok, args.pop("prompts"), args.pop("k"), **args)


def test_missing_pad_token_is_explained(model):
    tok = CharTokenizer()
    tok.pad_token_id = None
    with pytest.raises(ValueError, match="pad_token_id is None"):
        sample_group(model, tok, "1+1=", 2)
    with pytest.raises(TypeError, match="sample_group"):
        sample_groups(model, CharTokenizer(), "1+1=", 2)
