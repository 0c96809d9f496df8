"""The group sampler: k completions per prompt, with the behaviour policy's own log-probabilities.

``sample_group(model, tokenizer, prompt, k)`` draws k stochastic completions of one prompt and
marks the prompt/completion boundary. Lesson 9.2 (section 9.2.1) adds the contract that makes
those samples usable as a rollout record: the log-probability stored for each action must be the
one of the *actual* behaviour distribution, after temperature, the allowed-token mask and
top-k/top-p, because it is the denominator of every importance ratio computed later.

How this sampler departs from a readable, uncached decoding loop:

1. KV cache. The prompt is run once; every later step feeds one new token per row and reuses the
   model's cache (a ``DynamicCache`` for an HF model, the hidden state for the GRU policy).
   The tests check that the tokens equal those of an uncached loop drawing from the same generator.
2. Batched groups. ``sample_groups`` decodes all prompts' groups, N = n_prompts * k rows, in one
   batch: prompts of different lengths are left-padded, positions are counted from the attention
   mask, and the mask grows by one column per step. Decoding stops as soon as every row has stopped.
3. Behaviour log-probs stored. ``GroupSample.logprobs`` holds log pi_behaviour(token) under the
   transformed distribution that was sampled from, so a trainer never has to guess which decoding
   parameters were in force. The decoding parameters are kept in ``GroupSample.decoding``.
4. Any temperature. The BaseLM lab fixes temperature 1.0 so that untempered rescoring matches it;
   here other temperatures, top-k/top-p and grammar masks are allowed *because* their log-probs are
   stored. ``temperature=0`` is greedy decoding: the behaviour policy is then deterministic and the
   stored log-prob of each chosen token is 0.0 (= log 1).

5. Speed (measured by the course's sampler benchmark): each distinct prompt is prefilled once and
   its KV cache repeated k times; with no left padding no attention mask is passed; positions are
   counted on rather than recomputed; a fixed ``allowed_tokens`` mask is checked once; the LM
   head runs on the last prompt column only. None of these changes what is sampled. Use one torch
   thread for small models on a busy 2-core machine (``torch.set_num_threads(1)``).

The sampler computes no losses and no rescoring: teacher-forced log-probabilities of a completion
are the lesson's job (and the tests' proof that the stored values are right).

Tokenizer protocol (a Hugging Face tokenizer and ``helpers.policies.CharTokenizer`` both fit):
``encode(text, add_special_tokens=False) -> list[int]``, ``decode(ids, skip_special_tokens=True)``,
``eos_token_id`` (int, list of ints, or None) and ``pad_token_id`` (must be set).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

AllowedTokens = Tensor | Callable[[Tensor, int], Tensor] | None
"""None; a (V,) bool tensor; or ``f(generated_so_far (N, t), step) -> (N, V) bool``."""


@dataclass
class GroupSample:
    """A rollout batch: N = n_prompts * k rows; rows of prompt i are ``[i*k, (i+1)*k)``.

    T is the number of decoding steps actually taken (<= max_new_tokens; decoding stops when every
    row has stopped). All tensors live on the model's device and are ordinary (non-inference)
    tensors, so they can be used directly in a training forward/backward.
    """

    prompt_ids: Tensor  # (N, P) left-padded prompt tokens (pad_token_id on the left)
    prompt_mask: Tensor  # (N, P) 1 on real prompt tokens, 0 on padding
    completion_ids: Tensor  # (N, T) sampled tokens; pad_token_id after the stop
    completion_mask: Tensor  # (N, T) 1 on generated tokens up to and including EOS, 0 after it
    logprobs: Tensor  # (N, T) float32 log-prob of each sampled token under the behaviour
    #                   distribution (after allowed mask, temperature, top-k, top-p); 0 where masked
    stop_reason: list[str]  # (N,) "eos" (emitted EOS) or "length" (ran out of max_new_tokens)
    texts: list[str]  # (N,) decoded completions, special tokens skipped, EOS not included
    group: Tensor  # (N,) prompt index of each row
    k: int = 1  # completions per prompt
    decoding: dict = field(default_factory=dict)  # the decoding parameters, for the rollout record

    @property
    def input_ids(self) -> Tensor:
        """(N, P+T) prompt followed by completion."""
        return torch.cat([self.prompt_ids, self.completion_ids], dim=1)

    @property
    def attention_mask(self) -> Tensor:
        """(N, P+T) 1 on real prompt tokens and on generated tokens up to and including EOS."""
        return torch.cat([self.prompt_mask, self.completion_mask], dim=1)

    @property
    def position_ids(self) -> Tensor:
        """(N, P+T) the positions the sampler used: real tokens count 0, 1, 2, ... per row."""
        return positions_from_mask(self.attention_mask)

    @property
    def prompt_len(self) -> int:
        """P, the boundary column: completion token t sits at column P + t of ``input_ids``."""
        return self.prompt_ids.shape[1]

    @property
    def lengths(self) -> Tensor:
        """(N,) number of generated tokens per row, EOS included."""
        return self.completion_mask.sum(dim=1)

    @property
    def n_prompts(self) -> int:
        return self.prompt_ids.shape[0] // self.k


def positions_from_mask(attention_mask: Tensor) -> Tensor:
    """(B, L) 0/1 mask -> (B, L) position ids: 0 at each row's first real token, +1 per real token.

    Padding columns get the position of the previous real token (0 before the first); their value
    is irrelevant because they are masked out of attention.
    """
    return (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)


def warp_logits(
    logits: Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Tensor:
    """(..., V) logits -> the logits actually sampled from: / temperature, then top-k, then top-p.

    Removed tokens get -inf. Top-k keeps every token whose logit is >= the k-th largest; top-p keeps
    the smallest set of most likely tokens whose probability reaches ``top_p`` (at least one). This
    is the order and tie handling of Hugging Face's warpers. ``temperature`` must be > 0 here.
    """
    z = logits / temperature
    if top_k is not None and top_k < z.shape[-1]:
        kth = torch.topk(z, top_k, dim=-1).values[..., -1:]  # (..., 1)
        z = z.masked_fill(z < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_z, order = torch.sort(z, dim=-1, descending=False)  # ascending
        cum = sorted_z.softmax(dim=-1).cumsum(dim=-1)
        drop = cum <= (1.0 - top_p)
        drop[..., -1] = False  # the most likely token always stays
        z = z.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return z


def sample_group(model, tokenizer, prompt: str, k: int, **kwargs) -> GroupSample:
    """k completions of one prompt; keyword arguments as in ``sample_groups``."""
    if not isinstance(prompt, str):
        raise TypeError(
            f"prompt must be a str, got {type(prompt).__name__}; for several use sample_groups"
        )
    return sample_groups(model, tokenizer, [prompt], k, **kwargs)


def sample_groups(
    model,
    tokenizer,
    prompts: list[str],
    k: int,
    *,
    max_new_tokens: int = 16,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    allowed_tokens: AllowedTokens = None,
    generator: torch.Generator | None = None,
) -> GroupSample:
    """k completions of each prompt, all N = len(prompts) * k rows decoded in one batch.

    max_new_tokens: at most this many generated tokens per row (EOS counts as one).
    temperature:    softmax temperature; 0 means greedy (stored log-probs are then 0.0).
    top_k, top_p:   Hugging Face-style truncation, applied after temperature (None = off).
    allowed_tokens: None, a (V,) bool tensor, or a callable ``(generated (N, t), step) -> (N, V)
                    bool`` (a grammar). Disallowed tokens get -inf before temperature/top-k/top-p.
                    The callable must not modify ``generated``; rows that already stopped hold
                    pad_token_id after their EOS. An alive row with no allowed token is an error.
    generator:      the torch.Generator every draw uses (``torch.multinomial(..., generator=g)``);
                    the same seed gives the same samples. None uses torch's global RNG.

    The model is put in eval mode while sampling (dropout off) and restored afterwards.
    """
    _check_args(prompts, k, max_new_tokens, temperature, top_k, top_p, allowed_tokens)
    pad_id, eos_ids = _special_ids(tokenizer)
    rows = [_encode(tokenizer, p) for p in prompts]
    for i, r in enumerate(rows):
        if not r:
            raise ValueError(f"prompt {i} ({prompts[i]!r}) encodes to no tokens")

    device = next(model.parameters()).device
    n, P = len(rows), max(len(r) for r in rows)
    prompt_ids = torch.full((n, P), pad_id, dtype=torch.long)  # (n, P)
    prompt_mask = torch.zeros((n, P), dtype=torch.long)  # (n, P)
    for i, r in enumerate(rows):  # left padding: the last prompt token sits in column P-1
        prompt_ids[i, P - len(r) :] = torch.tensor(r, dtype=torch.long)
        prompt_mask[i, P - len(r) :] = 1
    prompt_ids = prompt_ids.repeat_interleave(k, dim=0).to(device)  # (N, P)
    prompt_mask = prompt_mask.repeat_interleave(k, dim=0).to(device)  # (N, P)
    eos_ids = eos_ids.to(device)

    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            ids, mask, logp, hit_eos = _decode(
                model, prompt_ids, prompt_mask, pad_id, eos_ids, max_new_tokens,
                temperature, top_k, top_p, allowed_tokens, generator, k,
            )  # fmt: skip
    finally:
        model.train(was_training)

    # inference tensors cannot be saved for backward; clone them into ordinary tensors
    prompt_ids, prompt_mask, ids, mask, logp = (
        t.clone() for t in (prompt_ids, prompt_mask, ids, mask, logp)
    )
    lengths = mask.sum(dim=1).tolist()
    hit = hit_eos.tolist()
    texts = [
        tokenizer.decode(ids[i, : L - int(h)].tolist(), skip_special_tokens=True)
        for i, (L, h) in enumerate(zip(lengths, hit))
    ]
    decoding = dict(
        max_new_tokens=max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p,
        allowed_tokens=_describe_allowed(allowed_tokens),
    )  # fmt: skip
    return GroupSample(
        prompt_ids=prompt_ids,
        prompt_mask=prompt_mask,
        completion_ids=ids,
        completion_mask=mask,
        logprobs=logp,
        stop_reason=["eos" if h else "length" for h in hit],
        texts=texts,
        group=torch.arange(n, device=device).repeat_interleave(k),
        k=k,
        decoding=decoding,
    )


# --------------------------------------------------------------------------------------------
# the decoding loop


def _decode(
    model, prompt_ids, prompt_mask, pad_id, eos_ids, max_new_tokens,
    temperature, top_k, top_p, allowed_tokens, generator, k=1,
):  # fmt: skip
    """The cached decoding loop. Returns ids, mask, logprobs (N, T) and hit_eos (N,).

    ``prompt_ids`` holds each prompt k times in a row (N = n * k). Speed choices, none of which
    changes what is sampled: the prompt is prefilled once per prompt and its KV cache repeated k
    times (when the cache can do that); with no left padding no attention mask is passed at all
    (a finished row's later outputs are discarded, so it may keep attending to its own tokens);
    positions are counted on, not recomputed from the mask.
    """
    N, P = prompt_ids.shape
    device = prompt_ids.device
    ids = torch.full((N, max_new_tokens), pad_id, dtype=torch.long, device=device)  # (N, Tmax)
    mask = torch.zeros((N, max_new_tokens), dtype=torch.long, device=device)  # (N, Tmax)
    logp = torch.zeros((N, max_new_tokens), dtype=torch.float32, device=device)  # (N, Tmax)
    done = torch.zeros(N, dtype=torch.bool, device=device)  # (N,) row has emitted EOS
    hit_eos = torch.zeros(N, dtype=torch.bool, device=device)  # (N,)
    cache_kw = _cache_kwarg()
    hf = hasattr(model, "generate")
    extra = {"logits_to_keep": 1} if hf else {}  # HF: skip the LM head on P-1 prompt columns
    padded = bool((prompt_mask == 0).any())
    blocked = None  # a static allowed_tokens mask, once checked: (V,) or (N, V) bool, True = -inf
    single_eos = eos_ids[0] if eos_ids.numel() == 1 else None

    # prefill: one row per distinct prompt, then repeat its cache k times (HF caches)
    attn = prompt_mask  # (N, P+t), grows one column per step (only used when padded)
    pos = positions_from_mask(attn)  # (N, P)
    rows = slice(None, None, k) if k > 1 and hf else slice(None)
    out = model(
        input_ids=prompt_ids[rows],
        attention_mask=attn[rows] if padded else None,
        position_ids=pos[rows],
        use_cache=True,
        **extra,
    )
    cache = _cache_of(out)
    logits = out.logits[:, -1, :].float()  # (n or N, V)
    if logits.shape[0] != N:
        if hasattr(cache, "batch_repeat_interleave"):
            cache.batch_repeat_interleave(k)
            logits = logits.repeat_interleave(k, dim=0)  # (N, V)
        else:  # a cache we cannot repeat: prefill every row
            out = model(
                input_ids=prompt_ids, attention_mask=attn if padded else None,
                position_ids=pos, use_cache=True, **extra,
            )  # fmt: skip
            cache, logits = _cache_of(out), out.logits[:, -1, :].float()
    pos = pos[:, -1:]  # (N, 1) position of the last token fed
    T = 0
    for t in range(max_new_tokens):
        alive = ~done  # (N,)
        if blocked is not None:
            logits = logits.masked_fill(blocked, float("-inf"))
        elif allowed_tokens is not None:  # checks the mask; a callable is called every step
            logits = _apply_allowed(logits, allowed_tokens, ids[:, :t], t, alive)
            if isinstance(allowed_tokens, Tensor):  # checked: no row is empty, so it is constant
                blocked = ~allowed_tokens.to(device)
        tok, lp = _draw(logits, temperature, top_k, top_p, generator)  # (N,), (N,)
        tok = tok.masked_fill(done, pad_id)
        ids[:, t] = tok
        logp[:, t] = lp.masked_fill(done, 0.0)
        mask[:, t] = alive
        stopped = (tok == single_eos) if single_eos is not None else torch.isin(tok, eos_ids)
        stopped &= alive  # (N,)
        hit_eos |= stopped
        done |= stopped
        T = t + 1
        if T == max_new_tokens or bool(done.all()):
            break
        # feed the new token: real for rows that were alive, a masked pad for rows already done
        pos = pos + 1  # (N, 1); a finished row's position is irrelevant
        if padded:
            attn = torch.cat([attn, alive.long()[:, None]], dim=1)  # (N, P+t+1)
        out = model(
            input_ids=tok[:, None],
            attention_mask=attn if padded else None,
            position_ids=pos,
            use_cache=True,
            **{cache_kw: cache},
        )
        cache = _cache_of(out)
        logits = out.logits[:, -1, :].float()  # (N, V)
    return ids[:, :T], mask[:, :T], logp[:, :T], hit_eos


def _apply_allowed(
    logits: Tensor, allowed: AllowedTokens, generated: Tensor, step: int, alive: Tensor
):
    """Set disallowed logits to -inf; (N, V) -> (N, V). Rows already done are left sampleable."""
    if allowed is None:
        return logits
    N, V = logits.shape
    a = allowed(generated, step) if callable(allowed) else allowed
    if not (
        isinstance(a, Tensor) and a.dtype == torch.bool and a.shape[-1] == V and a.dim() in (1, 2)
    ):
        got = f"{a.dtype} {tuple(a.shape)}" if isinstance(a, Tensor) else type(a).__name__
        raise ValueError(
            f"allowed_tokens must give a bool tensor of shape (V,) or (N, V) with V={V}; got {got}"
        )
    a = a.to(logits.device).expand(N, V)  # (N, V)
    empty = ~a.any(dim=1)  # (N,)
    if bool((empty & alive).any()):
        row = int((empty & alive).nonzero()[0])
        raise ValueError(f"allowed_tokens allows no token for row {row} at step {step}")
    a = a | (empty & ~alive)[:, None]  # a finished row's draw is discarded; keep it well defined
    return logits.masked_fill(~a, float("-inf"))


def _draw(logits: Tensor, temperature, top_k, top_p, generator) -> tuple[Tensor, Tensor]:
    """One token per row from (N, V) logits -> (tok (N,), log-prob (N,) under the warped dist)."""
    if temperature == 0:
        return logits.argmax(dim=-1), torch.zeros(logits.shape[0], device=logits.device)
    if temperature != 1 or top_k is not None or top_p is not None:  # x / 1.0 is x: skip it
        logits = warp_logits(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    logp = logits.log_softmax(dim=-1)  # (N, V)
    probs = logp.exp()  # (N, V)
    g_device = generator.device if generator is not None else probs.device
    tok = torch.multinomial(probs.to(g_device), 1, generator=generator).to(probs.device)  # (N, 1)
    return tok[:, 0], logp.gather(1, tok)[:, 0]


# --------------------------------------------------------------------------------------------
# plumbing


def _cache_kwarg() -> str:
    """The keyword under which a causal LM takes its KV cache.

    transformers 5.x renamed ``past_key_values`` to ``cache`` (input kwarg and output field; the
    old name warns and is scheduled for removal in 5.40). Detected from the output class; the GRU
    policy accepts both names.
    """
    outputs = sys.modules.get("transformers.modeling_outputs")
    fields = getattr(getattr(outputs, "CausalLMOutputWithPast", None), "__dataclass_fields__", {})
    return "cache" if "cache" in fields else "past_key_values"


def _cache_of(out):
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def _encode(tokenizer, text: str) -> list[int]:
    try:
        ids = tokenizer.encode(text, add_special_tokens=False)
    except TypeError:  # an encode without the keyword
        ids = tokenizer.encode(text)
    return list(ids)


def _special_ids(tokenizer) -> tuple[int, Tensor]:
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is None:
        raise ValueError(
            "tokenizer.pad_token_id is None: set it before sampling, e.g. "
            "tokenizer.pad_token = tokenizer.eos_token (the completion mask, not the id, marks padding)"
        )
    eos = getattr(tokenizer, "eos_token_id", None)
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    return int(pad), torch.tensor(eos, dtype=torch.long)


def _check_args(prompts, k, max_new_tokens, temperature, top_k, top_p, allowed_tokens) -> None:
    if isinstance(prompts, str) or not isinstance(prompts, (list, tuple)):
        raise TypeError("prompts must be a list of str (for one prompt use sample_group)")
    if len(prompts) == 0:
        raise ValueError("prompts is empty: give at least one prompt")
    if not all(isinstance(p, str) for p in prompts):
        raise TypeError("every prompt must be a str")
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k (completions per prompt) must be an int >= 1, got {k!r}")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be an int >= 1, got {max_new_tokens!r}")
    if not isinstance(temperature, (int, float)) or not 0 <= temperature < float("inf"):
        raise ValueError(
            f"temperature must be a finite number >= 0 (0 = greedy), got {temperature!r}"
        )
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be None or an int >= 1, got {top_k!r}")
    if top_p is not None and not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
        raise ValueError(f"top_p must be None or in (0, 1], got {top_p!r}")
    if not (
        allowed_tokens is None or callable(allowed_tokens) or isinstance(allowed_tokens, Tensor)
    ):
        raise TypeError("allowed_tokens must be None, a (V,) bool tensor or a callable")


def _describe_allowed(allowed: AllowedTokens):
    if allowed is None:
        return None
    if isinstance(allowed, Tensor):
        return f"mask of {int(allowed.sum())} tokens"
    return getattr(allowed, "__name__", type(allowed).__name__)


__all__ = [
    "AllowedTokens",
    "GroupSample",
    "positions_from_mask",
    "sample_group",
    "sample_groups",
    "warp_logits",
]
