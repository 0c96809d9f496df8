"""BaseLM: the small "pretrained" causal LM this module fine-tunes, built on a CPU from a seed.

What it is
- A ``Qwen3ForCausalLM`` (4 layers, hidden 192, 6 query / 2 key-value heads, about 1.6M parameters)
  and a ``PreTrainedTokenizerFast``. Because both are stock ``transformers`` objects, ``generate``,
  peft LoRA (``target_modules=["q_proj", "v_proj"]``) and TRL's ``GRPOTrainer`` work unchanged.
- The tokenizer (``tokenizers`` library) is character level: one token per printable ASCII
  character, plus a few whole-phrase tokens for the prompt templates of ``helpers.tasks``
  ("Q: ", "=? Options: ", '{"answer":', ...) and the special tokens ``<pad>`` ``<eos>`` ``<unk>``.
  No ``<bos>``: ``tokenizer(prompt)`` is exactly the prompt's tokens.
- Pretraining is next-token prediction on a synthetic corpus made in code from the seed:
  arithmetic statements, arithmetic-choice Q/A and ``Item: ... {"answer": ...}`` lines in the exact
  prompt formats of ``helpers.tasks``, JSON snippets, plain sentences, and a little free-response
  arithmetic. Each line is one sequence ending in ``<eos>``. Q/A and format lines use train-split
  operand pairs and items only (``helpers.tasks.is_heldout``), so held-out prompts are unseen.

How it departs from a real pretrained model (on purpose, to leave room for RL)
1. Its corpus is a few hundred kilobytes of templates, not the web: it knows nothing else.
2. Calibrated flaws are written into the corpus. In arithmetic-choice Q/A the answer is always
   the correct option when that option comes first, but only 40% of the time when it comes second
   (the other 60% take the first option: a position bias; 3% of all answers echo both options).
   So the corpus ties "answer the second option" to "the second option is the sum": the model
   must check the sum to imitate it, and it learns the sums themselves from "a+b=s" lines, but
   greedily it mostly answers the first option. RL has a real skill to sharpen (answer the second
   option exactly when it is right) that transfers to held-out pairs. In format lines, items whose
   first letter is a-l close the JSON object 80% of the time, items starting m-z only 25% (the rest
   drop the closing brace or the quotes). So the base model is right about half to two thirds of
   the time greedily, and a group of K=8 samples at temperature 1 usually mixes successes and
   failures.
3. It is deterministic: the same seed, library versions and CPU give the same weights hash
   (sha256 over the safetensors tensors in name order). Different CPUs may differ in the last bits.

Artifact: ``artifacts/baselm/`` (env ``BASELM_DIR`` overrides) holds ``config.json``,
``generation_config.json``, ``model.safetensors``, the tokenizer files and ``passport.json``,
written last (atomically) as the completion marker.

The same BaseLM for everyone: because a rebuild on another CPU gives other last bits (and then other
pass rates and other lab runs), the course ships the instructor's build in ``helpers/data/baselm/``
(about 6 MB, with its passport and weights hash). ``./baselm.sh`` reuses an intact artifact, else
installs the shipped one after checking its hash (seconds); ``./baselm.sh --rebuild`` pretrains
from the seeded corpus instead (about 5.5 minutes on a quiet 2-core machine). A rebuild reproduces the corpus exactly
(pure Python) and the calibrated properties (mixed groups, pass rates in a band: see
``CALIBRATION``), not the shipped weights' bits.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from helpers.tasks import (
    CORPUS_WORDS,
    FORMAT_ITEMS,
    FORMAT_PREFIX,
    Task,
    is_heldout,
    is_heldout_item,
    make_tasks,
)

ROOT = Path(__file__).resolve().parent.parent
PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"  # ids 0, 1, 2
# Whole-phrase tokens: the fixed parts of the task prompts. None can span a prompt/completion
# boundary (no phrase starts inside one of them and ends after it).
PHRASES = (
    "Q: ", "=? Options: ", " or ", ". A:", "Item: ", ". Reply in JSON. ", FORMAT_PREFIX,
    "What is ", "? Put the final answer in \\boxed{}.", "\\boxed{",
)  # fmt: skip
CHARS = "\n" + "".join(chr(c) for c in range(32, 127))  # printable ASCII and newline
ARTIFACT_FILES = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "passport.json",
)
CAPS = {
    "arithmetic_choice": 8,
    "format": 12,
}  # completion caps (new tokens) of lesson 9.5's BaseLM tasks
FIX = "run ./baselm.sh from the repository root (./baselm.sh --rebuild pretrains from scratch)"
WORDS = CORPUS_WORDS  # extra words for JSON and plain text (helpers.tasks)
ADJECTIVES = ("red", "small", "old", "quiet", "bright", "heavy", "soft", "tall", "warm", "dark")
KEYS = ("name", "item", "color", "label", "word")


@dataclass(frozen=True)
class BaseLMConfig:
    """Everything a build depends on; the passport stores it. ``profile`` picks the defaults."""

    profile: str = "full"
    """'full' (the course artifact) or 'tiny' (seconds; for tests of the build/check logic)."""
    # --- model (Qwen3) ---
    hidden_size: int = 192
    """Width of the residual stream."""
    num_layers: int = 4
    """Transformer blocks."""
    num_heads: int = 6
    """Query heads (head_dim 32)."""
    num_kv_heads: int = 2
    """Key/value heads (grouped-query attention)."""
    intermediate_size: int = 512
    """Width of the SwiGLU MLP."""
    max_positions: int = 128
    """Longest sequence (prompt + completion) the model is built for."""
    # --- corpus ---
    n_examples: int = 40_000
    """Corpus lines (each one sequence ending in <eos>)."""
    mix: dict = field(
        default_factory=lambda: {
            "arith": 0.20,  # "23+58=81"
            "choice": 0.35,  # arithmetic-choice Q/A, prompt format of helpers.tasks
            "format": 0.20,  # "Item: w. Reply in JSON. {"answer": "w"}" (train items + WORDS)
            "json": 0.10,  # other JSON objects, always valid
            "text": 0.10,  # plain sentences (all items, held-out ones included)
            "free": 0.05,  # "What is a + b? Put the final answer in \boxed{}. \boxed{s}"
        }
    )
    """Share of each line kind in the corpus."""
    choice_correct_first: float = 1.0
    """P(answer is the correct option | the correct option is listed first)."""
    choice_correct_second: float = 0.4
    """P(answer is the correct option | it is listed second): the position bias."""
    choice_echo: float = 0.03
    """P(the answer echoes both options, "81 or 84"): something for a sloppy verifier to find."""
    format_close_al: float = 0.80
    """P(a format line closes its JSON object | the item starts with a-l)."""
    format_close_mz: float = 0.25
    """P(a format line closes its JSON object | the item starts with m-z)."""
    # --- training ---
    steps: int = 1200
    """Optimizer steps."""
    batch_size: int = 64
    """Sequences per step."""
    lr: float = 3e-3
    """Peak AdamW learning rate (linear warmup, cosine decay to 10%)."""
    warmup: int = 50
    """Warmup steps."""
    weight_decay: float = 0.01
    """AdamW weight decay."""
    threads: int = 2
    """torch CPU threads (fixed, for speed and determinism)."""
    # --- measurement ---
    eval_n: int = 100
    """Held-out prompts per family for the greedy pass rate."""
    eval_groups: int = 48
    """Held-out prompts per family for the sampled groups."""
    eval_k: int = 8
    """Group size of the sampled groups (temperature 1)."""
    eval_seed: int = 0
    """Seed of make_tasks(family, n, "heldout", seed) and of the sampling."""

    @classmethod
    def for_profile(cls, profile: str) -> BaseLMConfig:
        """The defaults of a profile: 'full' or 'tiny'."""
        if profile == "full":
            return cls()
        if profile == "tiny":
            return cls(
                profile="tiny", hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                intermediate_size=64, n_examples=400, steps=8, batch_size=16, warmup=2,
                eval_n=4, eval_groups=2, eval_k=4,
            )  # fmt: skip
        raise ValueError(f"unknown profile {profile!r}; choose 'full' or 'tiny'")


# ---------------------------------------------------------------------------------------------
# Tokenizer


def build_tokenizer():
    """The character-level tokenizer with phrase tokens, as a ``PreTrainedTokenizerFast``."""
    from tokenizers import AddedToken, Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate((PAD, EOS, UNK, *CHARS))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=UNK))  # no merges: characters
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in (PAD, EOS, UNK)])
    tok.add_tokens([AddedToken(p, normalized=False) for p in PHRASES])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        eos_token=EOS,
        unk_token=UNK,
        padding_side="left",  # generation batches pad on the left
        clean_up_tokenization_spaces=False,
        model_max_length=BaseLMConfig.max_positions,
    )


# ---------------------------------------------------------------------------------------------
# Corpus


def _choice_line(rng: random.Random, cfg: BaseLMConfig, pairs: list) -> str:
    a, b = rng.choice(pairs)
    s = a + b
    options = [s, s + rng.choice([x for x in range(-10, 11) if x != 0])]
    rng.shuffle(options)
    right_first = options[0] == s
    p = cfg.choice_correct_first if right_first else cfg.choice_correct_second
    if rng.random() < cfg.choice_echo:
        answer = f"{options[0]} or {options[1]}"
    else:
        answer = str(s if rng.random() < p else options[1] if right_first else options[0])
    return f"Q: {a}+{b}=? Options: {options[0]} or {options[1]}. A: {answer}"


def _format_line(rng: random.Random, cfg: BaseLMConfig, words: list) -> str:
    w = rng.choice(words)
    p = cfg.format_close_al if w[0] <= "l" else cfg.format_close_mz
    if rng.random() < p:
        body = f' "{w}"}}'
    else:
        body = rng.choice([f' "{w}"', f" {w}}}"])  # no closing brace, or no quotes
    return f"Item: {w}. Reply in JSON. {FORMAT_PREFIX}{body}"


def _json_line(rng: random.Random, words: list) -> str:
    w, v = rng.choice(words), rng.choice(words)
    kind = rng.randrange(4)
    if kind == 0:
        return json.dumps({rng.choice(KEYS): w, "count": rng.randrange(100)})
    if kind == 1:
        return json.dumps({"answer": rng.randrange(200)})
    if kind == 2:
        return json.dumps({"items": [w, v], "ok": rng.random() < 0.5})
    return json.dumps({"answer": w})


def _text_line(rng: random.Random, nouns: list) -> str:
    n1, n2, adj = rng.choice(nouns), rng.choice(nouns), rng.choice(ADJECTIVES)
    return rng.choice(
        [
            f"The {n1} is next to the {n2}.",
            f"A {adj} {n1} sat by the {n2}.",
            f"I saw a {adj} {n1} today.",
            f"Is the {n1} {adj}? Yes, the {n1} is {adj}.",
        ]
    )


def _free_line(rng: random.Random, pairs: list) -> str:
    a, b = rng.choice(pairs)
    if rng.random() < 0.5:
        return f"What is {a} + {b}? Put the final answer in \\boxed{{}}. \\boxed{{{a + b}}}"
    return f"What is {a} - {b}? Put the final answer in \\boxed{{}}. \\boxed{{{a - b}}}"


def make_corpus(seed: int, cfg: BaseLMConfig) -> list[str]:
    """The pretraining lines, reproducible from ``seed`` (see the module docstring)."""
    rng = random.Random(f"baselm-corpus/{seed}")
    pairs = [(a, b) for a in range(10, 100) for b in range(10, 100) if not is_heldout(a, b)]
    train_items = [w for i, w in enumerate(FORMAT_ITEMS) if not is_heldout_item(i)]
    format_words = train_items + list(WORDS)  # never a held-out item
    nouns = list(FORMAT_ITEMS) + list(WORDS)
    kinds, weights = zip(*cfg.mix.items())
    lines = []
    for kind in rng.choices(kinds, weights, k=cfg.n_examples):
        if kind == "arith":
            a, b = rng.choice(pairs)
            lines.append(f"{a}+{b}={a + b}")
        elif kind == "choice":
            lines.append(_choice_line(rng, cfg, pairs))
        elif kind == "format":
            lines.append(_format_line(rng, cfg, format_words))
        elif kind == "json":
            lines.append(_json_line(rng, format_words))
        elif kind == "text":
            lines.append(_text_line(rng, nouns))
        else:
            lines.append(_free_line(rng, pairs))
    return lines


# ---------------------------------------------------------------------------------------------
# Model, training, measurement


def make_model(cfg: BaseLMConfig, tokenizer):
    """A freshly initialised ``Qwen3ForCausalLM`` (seed torch first)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    mcfg = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_kv_heads,
        head_dim=cfg.hidden_size // cfg.num_heads,
        max_position_embeddings=cfg.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen3ForCausalLM(mcfg)
    gc = model.generation_config
    gc.pad_token_id, gc.eos_token_id, gc.bos_token_id = mcfg.pad_token_id, mcfg.eos_token_id, None
    return model


def train(model, tokenizer, lines: list[str], cfg: BaseLMConfig, seed: int, quiet: bool) -> dict:
    """Next-token prediction over ``lines`` (pad positions masked); returns loss figures."""
    from tqdm.auto import tqdm

    ids = [x + [tokenizer.eos_token_id] for x in tokenizer(lines)["input_ids"]]
    too_long = max(len(x) for x in ids)
    if too_long > cfg.max_positions:
        raise ValueError(f"a corpus line has {too_long} tokens > max_positions")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + torch.cos(torch.tensor(t * torch.pi)).item())

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    gen = torch.Generator().manual_seed(seed)

    order = torch.randperm(len(ids), generator=gen).tolist()
    pos, losses = 0, []
    model.train()
    bar = tqdm(range(cfg.steps), desc="pretrain BaseLM", disable=quiet, mininterval=1.0)
    for _step in bar:
        if pos + cfg.batch_size > len(order):  # next epoch: a fresh seeded shuffle
            order, pos = torch.randperm(len(ids), generator=gen).tolist(), 0
        batch = [ids[i] for i in order[pos : pos + cfg.batch_size]]
        pos += cfg.batch_size
        T = max(len(x) for x in batch)
        x = torch.full((len(batch), T), tokenizer.pad_token_id)  # (B, T), right padded
        for i, seq in enumerate(batch):
            x[i, : len(seq)] = torch.tensor(seq)
        mask = (x != tokenizer.pad_token_id).long()
        labels = x.masked_fill(mask == 0, -100)
        loss = model(input_ids=x, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    model.eval()
    tail = losses[-50:]
    return {"first_loss": losses[0], "final_loss": sum(tail) / len(tail)}


def _verifier(family: str):
    from helpers.verifiers import verify_arithmetic, verify_format

    return verify_arithmetic if family == "arithmetic_choice" else verify_format


@torch.no_grad()
def complete(model, tokenizer, task: Task, k: int = 1, sample: bool = False) -> list[str]:
    """``k`` completions of one prompt (greedy, or temperature-1 sampling with no top-k/top-p)."""
    x = tokenizer(task.prompt, return_tensors="pt")
    kw = {"temperature": 1.0, "top_k": 0, "top_p": 1.0} if sample else {}
    out = model.generate(
        **x,
        max_new_tokens=CAPS[task.family],
        num_return_sequences=k,
        do_sample=sample,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **kw,
    )
    return tokenizer.batch_decode(out[:, x["input_ids"].shape[1] :], skip_special_tokens=True)


def measure(model, tokenizer, cfg: BaseLMConfig, quiet: bool = False) -> dict:
    """Held-out figures per family: greedy pass rate, and the informative fraction of K-groups.

    Greedy decoding is deterministic, so each distinct prompt is decoded once (held-out format
    prompts repeat: the family has 30 held-out items). Group ``i`` is sampled after ``torch.manual_seed(eval_seed *
    100_003 + i)``.
    """
    from tqdm.auto import tqdm

    figures = {}
    for family in CAPS:
        verify = _verifier(family)
        tasks = make_tasks(family, max(cfg.eval_n, cfg.eval_groups), "heldout", cfg.eval_seed)
        greedy = {}  # prompt -> completion
        for t in tasks[: cfg.eval_n]:
            if t.prompt not in greedy:
                greedy[t.prompt] = complete(model, tokenizer, t)[0]
        passed = [verify(t, greedy[t.prompt]) for t in tasks[: cfg.eval_n]]
        informative, mean_reward = 0, 0.0
        bar = tqdm(tasks[: cfg.eval_groups], desc=f"groups {family}", disable=quiet, leave=False)
        for i, t in enumerate(bar):
            torch.manual_seed(cfg.eval_seed * 100_003 + i)
            rewards = [verify(t, c) for c in complete(model, tokenizer, t, cfg.eval_k, True)]
            informative += len(set(rewards)) > 1
            mean_reward += sum(rewards) / len(rewards)
        figures[family] = {
            "greedy_pass_rate": sum(passed) / len(passed),
            "informative_fraction": informative / cfg.eval_groups,
            "sampled_mean_reward": mean_reward / cfg.eval_groups,
            "greedy_examples": dict(list(greedy.items())[:6]),
        }
    return figures


# ---------------------------------------------------------------------------------------------
# Artifact


SHIPPED_DIR = Path(__file__).resolve().parent / "data" / "baselm"
# The calibrated properties a build must have to leave room for RL, wide enough for every CPU
# the course supports (measured builds of the current corpus: greedy pass 0.63 arithmetic, 0.49
# format, AMD EPYC with AVX512; older corpora on other CPUs moved these by up to 0.35).
CALIBRATION = {"greedy_pass_rate": (0.2, 0.9), "min_informative_fraction": 0.5, "max_rss_mb": 2048}


def calibration_problems(passport: dict) -> list[str]:
    """What in a passport's figures falls outside ``CALIBRATION``; [] when the build is usable."""
    lo, hi = CALIBRATION["greedy_pass_rate"]
    problems = []
    for family, f in passport["figures"].items():
        if not lo <= f["greedy_pass_rate"] <= hi:
            problems.append(
                f"{family}: greedy pass {f['greedy_pass_rate']:.2f} not in [{lo}, {hi}]"
            )
        if f["informative_fraction"] < CALIBRATION["min_informative_fraction"]:
            problems.append(f"{family}: informative groups {f['informative_fraction']:.2f} < 0.5")
    if passport["peak_rss_mb"] >= CALIBRATION["max_rss_mb"]:
        problems.append(f"peak RSS {passport['peak_rss_mb']} MB")
    return problems


def baselm_dir() -> Path:
    """Where the artifact lives: ``$BASELM_DIR`` or ``<repo>/artifacts/baselm``."""
    return Path(os.environ.get("BASELM_DIR") or ROOT / "artifacts" / "baselm")


def weights_sha256(path: Path) -> str:
    """sha256 over the tensors of ``model.safetensors``: name, dtype, shape and bytes, name order."""
    from safetensors import safe_open

    h = hashlib.sha256()
    with safe_open(str(path), framework="pt") as f:
        for name in sorted(f.keys()):
            t = f.get_tensor(name).contiguous()
            h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
            h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def check_artifact(path: Path | str | None = None) -> tuple[bool, str]:
    """Is the artifact at ``path`` complete and intact? ``(ok, reason)``; never raises."""
    path = Path(path) if path is not None else baselm_dir()
    if not path.is_dir():
        return False, f"no artifact directory at {path}"
    missing = [f for f in ARTIFACT_FILES if not (path / f).is_file()]
    if missing:
        return False, f"missing {', '.join(missing)} (partial or interrupted build)"
    try:
        passport = json.loads((path / "passport.json").read_text())
        want = passport["weights_sha256"]
        json.loads((path / "config.json").read_text())
    except (ValueError, KeyError, OSError) as e:
        return False, f"unreadable passport.json or config.json ({e!r})"
    try:
        have = weights_sha256(path / "model.safetensors")
    except Exception as e:  # truncated or corrupt file: safetensors raises its own errors
        return False, f"model.safetensors is unreadable ({type(e).__name__}: {e})"
    if have != want:
        return False, f"weights hash {have[:12]} does not match the passport's {want[:12]}"
    return True, "ok"


def install_shipped(out: Path, quiet: bool = False) -> dict:
    """Copy the shipped artifact (``SHIPPED_DIR``) into ``out`` after checking its weights hash;
    the passport goes last, so an interrupted copy is seen as partial. Returns the passport."""
    ok, reason = check_artifact(SHIPPED_DIR)
    if not ok:
        raise FileNotFoundError(
            f"the shipped BaseLM in {SHIPPED_DIR} is not usable: {reason}. Fix: restore it from "
            "git (git checkout -- helpers/data/baselm) or rebuild with ./baselm.sh --rebuild."
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "passport.json").unlink(missing_ok=True)
    for name in ARTIFACT_FILES:
        if name != "passport.json":
            tmp = out / f".{name}.tmp-{os.getpid()}"
            shutil.copyfile(SHIPPED_DIR / name, tmp)
            os.replace(tmp, out / name)
    _write_atomic(out / "passport.json", (SHIPPED_DIR / "passport.json").read_text())
    ok, reason = check_artifact(out)
    if not ok:  # a full disk or a racing writer
        raise OSError(f"installing BaseLM into {out} failed: {reason}")
    return json.loads((out / "passport.json").read_text())


def _shipped_matches(seed: int, cfg: BaseLMConfig) -> bool:
    try:
        p = json.loads((SHIPPED_DIR / "passport.json").read_text())
    except (OSError, ValueError):
        return False
    return p.get("seed") == seed and p.get("config") == asdict(cfg)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


@contextlib.contextmanager
def _deterministic_torch(threads: int):
    """Fixed threads and deterministic algorithms for the build; restored afterwards."""
    old_threads, old_det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_det)


def _versions() -> dict:
    import tokenizers
    import transformers

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "aten_cpu_capability_env": os.environ.get("ATEN_CPU_CAPABILITY"),
    }


def _cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo, else platform.processor())."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def build(
    seed: int = 0,
    out_dir: Path | str | None = None,
    force: bool = False,
    config: BaseLMConfig | None = None,
    quiet: bool = False,
    profile: str = "full",
) -> dict:
    """Set up BaseLM in ``out_dir`` (default ``baselm_dir()``) and return its passport.

    An intact artifact of the same seed and config is reused (its weights hash is checked) unless
    ``force``; otherwise the shipped artifact is installed when it is of that seed and config
    (the default: seed 0, profile 'full'), and anything else is pretrained here. ``force``
    always pretrains (``./baselm.sh --rebuild``). ``config`` overrides the defaults of
    ``profile`` ('full' or 'tiny').
    """
    out = Path(out_dir) if out_dir is not None else baselm_dir()
    cfg = config or BaseLMConfig.for_profile(profile)
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    if not force and out.exists():
        ok, reason = check_artifact(out)
        if ok:
            passport = json.loads((out / "passport.json").read_text())
            if passport.get("seed") == seed and passport.get("config") == asdict(cfg):
                say(f"BaseLM: reusing {out} (weights hash checked against the passport)")
                say(summary(passport))
                return passport
            say(f"BaseLM: {out} holds another seed/config; rebuilding")
        else:
            say(f"BaseLM: artifact at {out} is not usable: {reason}; setting it up again")
    if not force and _shipped_matches(seed, cfg):
        passport = install_shipped(out)
        say(f"BaseLM: installed the shipped build into {out} (weights hash checked)")
        say(summary(passport))
        return passport

    t0 = time.time()
    say(f"BaseLM: building profile={cfg.profile} seed={seed} into {out}")
    with _deterministic_torch(cfg.threads):
        tokenizer = build_tokenizer()
        lines = make_corpus(seed, cfg)
        corpus_sha = hashlib.sha256("\n".join(lines).encode()).hexdigest()
        torch.manual_seed(seed)
        model = make_model(cfg, tokenizer)
        losses = train(model, tokenizer, lines, cfg, seed, quiet)
        figures = measure(model, tokenizer, cfg, quiet)

    out.mkdir(parents=True, exist_ok=True)
    (out / "passport.json").unlink(missing_ok=True)  # the marker goes first, comes back last
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    passport = {
        "name": "BaseLM",
        "seed": seed,
        "config": asdict(cfg),
        "model": {
            "class": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters()),
            "lora_target_modules": ["q_proj", "v_proj"],
        },
        "tokenizer": {
            "kind": "character level + phrase tokens",
            "vocab_size": len(tokenizer),
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "unk_token_id": tokenizer.unk_token_id,
            "phrases": list(PHRASES),
        },
        "corpus": {"lines": len(lines), "sha256": corpus_sha, "sample": lines[:6]},
        "training": losses,
        "figures": figures,
        "weights_sha256": weights_sha256(out / "model.safetensors"),
        "build_seconds": round(time.time() - t0, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "versions": _versions(),
    }
    _write_atomic(out / "passport.json", json.dumps(passport, indent=2) + "\n")
    say(summary(passport))
    return passport


def summary(passport: dict) -> str:
    """A few lines: size, build cost and the held-out figures of a passport."""
    lines = [
        f"BaseLM seed={passport['seed']} profile={passport['config']['profile']} "
        f"params={passport['model']['parameters']:,} vocab={passport['tokenizer']['vocab_size']} "
        f"weights sha256={passport['weights_sha256'][:12]}",
        f"  build {passport['build_seconds']} s, peak RSS {passport['peak_rss_mb']} MB, "
        f"final loss {passport['training']['final_loss']:.3f}",
    ]
    for family, f in passport["figures"].items():
        lines.append(
            f"  {family:18s} greedy pass {f['greedy_pass_rate']:.2f}  "
            f"informative groups {f['informative_fraction']:.2f}  "
            f"sampled reward {f['sampled_mean_reward']:.2f}"
        )
    return "\n".join(lines)


def load_baselm(path: Path | str | None = None, dtype: torch.dtype = torch.float32):
    """``(model, tokenizer)`` from an intact artifact (model in eval mode).

    Raises ``FileNotFoundError`` naming the fix (``./baselm.sh``) when the artifact is missing or
    damaged.
    """
    from transformers import PreTrainedTokenizerFast, Qwen3ForCausalLM

    path = Path(path) if path is not None else baselm_dir()
    ok, reason = check_artifact(path)
    if not ok:
        raise FileNotFoundError(f"BaseLM is not usable: {reason}. Fix: {FIX}.")
    model = Qwen3ForCausalLM.from_pretrained(path, dtype=dtype)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(path)
    return model.eval(), tokenizer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m helpers.baselm", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build BaseLM, or reuse an intact artifact")
    b.add_argument(
        "--rebuild",
        "--force",
        dest="force",
        action="store_true",
        help="pretrain from the seeded corpus instead of reusing or installing the shipped build",
    )
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--profile", choices=("full", "tiny"), default="full")
    b.add_argument(
        "--out", type=Path, default=None, help="artifact directory (default $BASELM_DIR)"
    )
    c = sub.add_parser("check", help="check the artifact and print its figures")
    c.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    if args.cmd == "build":
        build(args.seed, args.out, args.force, profile=args.profile)
        return 0
    ok, reason = check_artifact(args.out)
    print(f"BaseLM artifact at {args.out or baselm_dir()}: {reason}")
    if ok:
        print(summary(json.loads(((args.out or baselm_dir()) / "passport.json").read_text())))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
