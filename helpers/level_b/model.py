"""Which model level B trains, and loading it: the BaseLM artifact, a local directory, a hub id,
or a randomly initialised model with Qwen3-0.6B's shapes.

``QWEN_ID`` is the Colab T4 model; ``RANDOM_QWEN`` names the random stand-in that measures memory
and time where the hub is unreachable (``random_qwen3_06b``). A hub id loads with the ordinary
``from_pretrained`` (nothing here can run it offline). The LoRA adapters are not added here: TRL
wraps the model with ``trl_config.lora_config`` when the trainer is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from helpers.level_b.config import LevelBConfig

QWEN_ID = "Qwen/Qwen3-0.6B"


def load_model(cfg: LevelBConfig):
    """``(model, tokenizer)`` for ``cfg.model_id``: the BaseLM artifact, a local directory or a
    hub id. fp16/bf16 load the base weights in that dtype (the adapters TRL adds stay float32)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cfg.precision]
    if cfg.model_id is None:
        from helpers.baselm import load_baselm

        model, tok = load_baselm(dtype=dtype)
    elif cfg.model_id == RANDOM_QWEN:
        model, tok = random_qwen3_06b(cfg.seed, dtype)
    else:
        # A hub id ("Qwen/Qwen3-0.6B") downloads on first use; a directory loads offline.
        model = AutoModelForCausalLM.from_pretrained(cfg.model_id, dtype=dtype)
        tok = AutoTokenizer.from_pretrained(cfg.model_id)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"  # TRL pads prompts on the left
    if cfg.device == "cuda":
        model = model.to("cuda")
    return model, tok


RANDOM_QWEN = "random-qwen3-0.6b"
"""Model id of a randomly initialised model with Qwen3-0.6B's shapes (no hub needed)."""

QWEN3_06B_SHAPE = dict(
    vocab_size=151_936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
    num_attention_heads=16, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True,
    max_position_embeddings=40_960, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
)  # fmt: skip
"""Qwen3-0.6B's architecture numbers (its config.json on the hub; check before relying on them)."""


def random_qwen3_06b(seed: int = 0, dtype=None):
    """``(model, tokenizer)``: Qwen3-0.6B's shapes with random weights, for measuring memory and
    time where the hub is unreachable. The tokenizer is character level (BaseLM's characters) plus
    filler tokens ``<xN>`` up to the 151,936-entry vocabulary, so logits have the real width. The
    random model never emits <eos>: every completion runs to max_completion_length (the worst case
    for time and memory) and earns reward 0 (no learning signal; the backward pass still runs)."""
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    from helpers.baselm import CHARS, EOS, PAD, UNK

    base = [PAD, EOS, UNK, *CHARS]
    fill = [f"<x{i}>" for i in range(QWEN3_06B_SHAPE["vocab_size"] - len(base))]
    vocab = {t: i for i, t in enumerate(base + fill)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=UNK))
    tk.decoder = decoders.Fuse()
    tk.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in (PAD, EOS, UNK)])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token=PAD, eos_token=EOS, unk_token=UNK, padding_side="left"
    )
    torch.manual_seed(seed)
    mcfg = Qwen3Config(**QWEN3_06B_SHAPE, pad_token_id=0, eos_token_id=1, bos_token_id=None)
    model = Qwen3ForCausalLM(mcfg)
    if dtype is not None:
        model = model.to(dtype)
    gc = model.generation_config
    gc.pad_token_id, gc.eos_token_id, gc.bos_token_id = 0, 1, None
    return model, tok
