"""The small GRU policy of the CPU lab, and the character tokenizer it reads.

The CPU lab (section 9.5.4) trains "a small but genuine autoregressive model: an embedding
layer, a GRU, and a language-model head" under a constrained grammar. This module builds that model
so it speaks the same calling convention as a Hugging Face causal LM, which is all the group sampler
(``helpers.sampling``) relies on:

    out = model(input_ids, attention_mask=..., position_ids=..., past_key_values=..., use_cache=True)
    out.logits           # (B, T, V)
    out.past_key_values  # the recurrent state, fed back on the next call (also readable as out.cache)

So ``sample_group(gru, CharTokenizer(), ...)`` and ``sample_group(baselm, baselm_tokenizer, ...)``
run the same code. The "cache" of a GRU is simply its hidden state ``h`` of shape (L, B, H).

Left padding is handled exactly, not approximately: a position whose ``attention_mask`` is 0 leaves
the hidden state untouched (a masked step loop), so a left-padded prompt gives the same next-token
logits as the unpadded one. When the mask is all ones the fast cuDNN/ATen GRU runs over the whole
sequence in one call.

BaseLM (the real-model branch) is loaded by ``helpers.baselm.load_baselm``; nothing of it is
re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch import Tensor

# --------------------------------------------------------------------------------------------
# Tokenizer

SPECIAL_TOKENS = ("<pad>", "<eos>", "<bos>")  # ids 0, 1, 2
DEFAULT_ALPHABET = "0123456789+-*/=()., :;?QA"  # the lab's prompts/answers: "Q: 12+7=? A: 19"


class CharTokenizer:
    """One token per character of a small alphabet, plus ``<pad>`` (0), ``<eos>`` (1), ``<bos>`` (2).

    The protocol matches the part of a Hugging Face tokenizer that the sampler uses:
    ``encode(text, add_special_tokens=False) -> list[int]``, ``decode(ids, skip_special_tokens=True)``,
    ``eos_token_id``, ``pad_token_id``, ``vocab_size``. ``token_ids(chars)`` turns a set of
    characters (or special-token names) into ids, to build grammar masks for ``allowed_tokens``.
    """

    def __init__(self, alphabet: str = DEFAULT_ALPHABET):
        if len(set(alphabet)) != len(alphabet):
            raise ValueError(f"alphabet has repeated characters: {alphabet!r}")
        self.alphabet = alphabet
        self.itos: list[str] = list(SPECIAL_TOKENS) + list(alphabet)
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.pad_token, self.eos_token, self.bos_token = SPECIAL_TOKENS
        self.pad_token_id, self.eos_token_id, self.bos_token_id = 0, 1, 2
        self.all_special_ids = [0, 1, 2]

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size}, alphabet={self.alphabet!r})"

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        """Characters -> ids; ``add_special_tokens=True`` prepends ``<bos>``."""
        unknown = sorted({c for c in text if c not in self.stoi or c in SPECIAL_TOKENS})
        if unknown:
            raise ValueError(f"characters {unknown} are not in the alphabet {self.alphabet!r}")
        ids = [self.stoi[c] for c in text]
        return [self.bos_token_id, *ids] if add_special_tokens else ids

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        """The Hugging Face call form: ``tok(text)["input_ids"]``."""
        ids = self.encode(text, add_special_tokens=add_special_tokens)
        return {"input_ids": ids, "attention_mask": [1] * len(ids)}

    def decode(self, ids: Iterable[int] | Tensor, skip_special_tokens: bool = True) -> str:
        """Ids -> text; special tokens are dropped (or written as ``<eos>`` etc.)."""
        ids = ids.tolist() if isinstance(ids, Tensor) else list(ids)
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"ids {bad} are outside the vocabulary (size {self.vocab_size})")
        special = set(self.all_special_ids)
        return "".join(self.itos[i] for i in ids if not (skip_special_tokens and i in special))

    def token_ids(self, chars: str | Iterable[str]) -> list[int]:
        """Ids of the given characters (a string) or tokens (an iterable, may name ``<eos>``)."""
        items = list(chars)
        unknown = [c for c in items if c not in self.stoi]
        if unknown:
            raise ValueError(f"tokens {unknown} are not in the vocabulary")
        return [self.stoi[c] for c in items]

    def mask(self, chars: str | Iterable[str]) -> Tensor:
        """A (V,) bool tensor, True on ``token_ids(chars)``: a ready ``allowed_tokens`` argument."""
        m = torch.zeros(self.vocab_size, dtype=torch.bool)
        m[self.token_ids(chars)] = True
        return m


# --------------------------------------------------------------------------------------------
# GRU policy


@dataclass
class GRUConfig:
    """Shape and initialisation of the lab's GRU policy."""

    vocab_size: int
    """Number of token ids (``CharTokenizer().vocab_size``); the LM head has this many outputs."""
    d_embed: int = 32
    """Width of the token embedding fed to the GRU."""
    d_hidden: int = 64
    """Width of the GRU hidden state (the whole "memory" of the policy)."""
    n_layers: int = 1
    """Stacked GRU layers; the recurrent state has shape (n_layers, B, d_hidden)."""
    seed: int = 0
    """Seed of the weight initialisation (the global torch RNG is left untouched)."""


@dataclass
class GRUOutput:
    """What ``GRUPolicy.forward`` returns: the fields a causal-LM output has."""

    logits: Tensor  # (B, T, V)
    past_key_values: Tensor | None = None  # (L, B, H) recurrent state after the last position

    @property
    def cache(self) -> Tensor | None:
        """The same state under transformers 5.x's newer name."""
        return self.past_key_values


class GRUPolicy(nn.Module):
    """Embedding -> GRU -> LM head, with a Hugging Face-like ``forward``.

    Positions where ``attention_mask`` is 0 (left padding, or tokens fed after a row finished)
    leave the hidden state unchanged; their logits are those of the carried state and mean nothing.
    """

    def __init__(self, config: GRUConfig):
        super().__init__()
        self.config = config
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            self.embed = nn.Embedding(config.vocab_size, config.d_embed)
            self.gru = nn.GRU(config.d_embed, config.d_hidden, config.n_layers, batch_first=True)
            self.head = nn.Linear(config.d_hidden, config.vocab_size)

    def init_state(self, B: int) -> Tensor:
        """The zero state (L, B, H) that every sequence starts from."""
        p = self.head.weight
        return torch.zeros(
            self.config.n_layers, B, self.config.d_hidden, dtype=p.dtype, device=p.device
        )

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor | None = None,
        past_key_values: Tensor | None = None,
        use_cache: bool = False,
        position_ids: Tensor | None = None,  # accepted for the HF interface; a GRU has no positions
        cache: Tensor | None = None,  # transformers 5.x name of past_key_values
        **_,
    ) -> GRUOutput:
        """Run ``input_ids`` (B, T) from state ``past_key_values`` (L, B, H) or zeros.

        ``attention_mask`` may cover only these T tokens or, as in HF decoding, past + current
        tokens (B, T_past + T); only its last T columns are read.
        """
        B, T = input_ids.shape
        h = cache if cache is not None else past_key_values
        h = self.init_state(B) if h is None else h  # (L, B, H)
        x = self.embed(input_ids)  # (B, T, E)
        m = None if attention_mask is None else attention_mask[:, -T:].bool()  # (B, T)
        if m is None or bool(m.all()):
            out, h = self.gru(x, h)  # (B, T, H), (L, B, H)
        else:
            outs = []
            for t in range(T):
                _, h_new = self.gru(x[:, t : t + 1], h)  # (L, B, H)
                h = torch.where(m[:, t].view(1, B, 1), h_new, h)  # masked rows keep their state
                outs.append(h[-1])  # (B, H)
            out = torch.stack(outs, dim=1)  # (B, T, H)
        logits = self.head(out)  # (B, T, V)
        return GRUOutput(logits=logits, past_key_values=h if use_cache else None)


def build_gru_policy(
    tokenizer: CharTokenizer | None = None, **config_fields
) -> tuple[GRUPolicy, CharTokenizer]:
    """A fresh ``(GRUPolicy, CharTokenizer)`` pair; ``config_fields`` go to ``GRUConfig``."""
    tokenizer = tokenizer or CharTokenizer()
    config = GRUConfig(vocab_size=tokenizer.vocab_size, **config_fields)
    return GRUPolicy(config), tokenizer


__all__ = [
    "DEFAULT_ALPHABET",
    "SPECIAL_TOKENS",
    "CharTokenizer",
    "GRUConfig",
    "GRUOutput",
    "GRUPolicy",
    "build_gru_policy",
]
