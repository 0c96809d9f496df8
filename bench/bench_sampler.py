"""Sampler: the course's ``sample_group``/``sample_groups`` vs Hugging Face ``generate`` vs a
readable uncached loop, and vs the model's own forward passes at the same shapes (the limit).

Shapes are fixed so that every contender does the same work: K=8 completions of exactly 32 new
tokens (EOS is disallowed: ``allowed_tokens`` for the course sampler and the loop,
``min_new_tokens`` for ``generate``), temperature 1, no top-k/top-p, and every contender returns
the behaviour log-prob of each sampled token (``generate`` through ``output_scores``, turned into
log-probs after the call, inside the timed region). Prompts are the lab's (``helpers.tasks``).

Contenders, all under ``torch.inference_mode`` with 1 torch thread:
- course:   ``sample_group(model, tok, prompt, 8, max_new_tokens=32, allowed_tokens=no_eos)``.
- generate: ``model.generate(do_sample=True, num_return_sequences=8, ...)`` + log-probs.
- uncached: seed 003's readable loop: re-run the whole sequence every step, sample from the last
            column (batched over the K rows, so it is the fair uncached baseline).
- forwards: prefill + 31 cached decode steps of the model with the same shapes and a fixed
            token stream: no sampling, no bookkeeping. The floor for any sampler on this model.
Run: ``python -m bench.bench_sampler [--quick]``.
"""

from __future__ import annotations

import argparse
import warnings

import torch

from bench.common import interleaved, load_model, log, machine, median, spread, table, write_section
from helpers.sampling import positions_from_mask, sample_groups

K, T = 8, 32


def lab_prompts(n: int = 8) -> list[str]:
    from helpers.tasks import make_tasks

    half = n // 2
    tasks = make_tasks("arithmetic_choice", half, "train", seed=0) + make_tasks(
        "format", n - half, "train", seed=0
    )
    return [t.prompt for t in tasks]


def contenders(model, tok, prompts: list[str], k: int = K, t_new: int = T) -> dict:
    """name -> zero-argument callable sampling k completions of each prompt (t_new tokens)."""
    V = model.get_output_embeddings().weight.shape[0]
    no_eos = torch.ones(V, dtype=torch.bool)
    no_eos[tok.eos_token_id] = False
    g = torch.Generator().manual_seed(0)
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    N = len(prompts) * k
    ids_rep = enc.input_ids.repeat_interleave(k, 0)  # (N, P)
    attn_rep = enc.attention_mask.repeat_interleave(k, 0)  # (N, P)
    stream = torch.randint(3, V, (N, t_new), generator=torch.Generator().manual_seed(1))

    def course():
        return sample_groups(
            model, tok, prompts, k, max_new_tokens=t_new, allowed_tokens=no_eos, generator=g
        )

    def generate_one(i=None):
        sub = enc if i is None else tok([prompts[i]], return_tensors="pt", add_special_tokens=False)
        with torch.inference_mode():
            out = model.generate(
                **sub, do_sample=True, num_return_sequences=k, max_new_tokens=t_new,
                min_new_tokens=t_new, temperature=1.0, top_k=0, top_p=1.0,
                output_scores=True, return_dict_in_generate=True, pad_token_id=tok.pad_token_id,
            )  # fmt: skip
            new = out.sequences[:, sub.input_ids.shape[1] :]  # (k, T)
            scores = torch.stack(out.scores, 1).float()  # (k, T, V) processed = behaviour logits
            logp = scores.log_softmax(-1).gather(-1, new[..., None])[..., 0]  # (k, T)
        return new, logp

    def generate_each():
        return [generate_one(i) for i in range(len(prompts))]

    def uncached():
        ids, attn = ids_rep, attn_rep
        toks, lps = [], []
        with torch.inference_mode():
            for _ in range(t_new):
                logits = (
                    model(
                        input_ids=ids, attention_mask=attn, position_ids=positions_from_mask(attn)
                    )
                    .logits[:, -1]
                    .float()
                )  # (N, V)
                logp = logits.masked_fill(~no_eos, float("-inf")).log_softmax(-1)
                nxt = torch.multinomial(logp.exp(), 1, generator=g)  # (N, 1)
                toks.append(nxt)
                lps.append(logp.gather(1, nxt))
                ids = torch.cat([ids, nxt], 1)
                attn = torch.cat([attn, torch.ones_like(nxt)], 1)
        return torch.cat(toks, 1), torch.cat(lps, 1)

    def forwards():
        from helpers.sampling import _cache_kwarg, _cache_of

        kw = _cache_kwarg()
        attn = attn_rep
        with torch.inference_mode():
            out = model(
                input_ids=ids_rep, attention_mask=attn, position_ids=positions_from_mask(attn),
                use_cache=True, logits_to_keep=1,
            )  # fmt: skip
            pos = positions_from_mask(attn)[:, -1:]
            for t in range(t_new - 1):
                attn = torch.cat([attn, torch.ones_like(attn[:, :1])], 1)
                pos = pos + 1
                out = model(
                    input_ids=stream[:, t : t + 1], attention_mask=attn, position_ids=pos,
                    use_cache=True, **{kw: _cache_of(out)},
                )  # fmt: skip

    return {
        "course": course,
        "generate": generate_one if len(prompts) == 1 else generate_each,
        "uncached": uncached,
        "forwards": forwards,
    }


def check_logprobs(model, tok, prompt: str) -> float:
    """Max |stored - teacher-forced| behaviour log-prob of the course sampler (exactness check)."""
    s = sample_groups(model, tok, [prompt], K, max_new_tokens=T, generator=torch.Generator())
    with torch.no_grad():
        logits = model(
            input_ids=s.input_ids, attention_mask=s.attention_mask, position_ids=s.position_ids
        ).logits[:, s.prompt_len - 1 : -1]
        lp = logits.float().log_softmax(-1).gather(-1, s.completion_ids[..., None])[..., 0]
    return float(((lp - s.logprobs) * s.completion_mask).abs().max())


def model_share(fn, reps: int = 3) -> tuple[float, float]:
    """cProfile ``fn``: (seconds per call, share of it inside the model's forward)."""
    import cProfile
    import pstats

    fn()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(reps):
        fn()
    pr.disable()
    st = pstats.Stats(pr)
    total = max(v[3] for v in st.stats.values())
    model = max(
        (v[3] for (f, _l, n), v in st.stats.items() if n == "forward" and "modeling_" in f),
        default=0.0,
    )
    return total / reps, model / total


def thread_table(model, tok, prompt: str, reps: int) -> list[list]:
    """The course sampler at 1 and 2 torch threads, interleaved."""
    fns = contenders(model, tok, [prompt])
    n0 = torch.get_num_threads()

    def at(n):
        def f():
            torch.set_num_threads(n)
            try:
                fns["course"]()
            finally:
                torch.set_num_threads(n0)

        return f

    res = interleaved({1: at(1), 2: at(2)}, reps=reps)
    return [[n, spread(v["wall"]), spread(v["cpu"])] for n, v in res.items()]


def run(quick: bool = False, threads: int = 1) -> str:
    warnings.filterwarnings("ignore")
    torch.set_num_threads(threads)
    model, tok, source = load_model()
    prompts = lab_prompts(8)
    reps = 5 if quick else 15
    log(f"bench_sampler: {source}; one group, {reps} interleaved reps")
    one = interleaved(contenders(model, tok, prompts[:1]), reps=reps)
    log("  one group:", {n: spread(v["cpu"]) for n, v in one.items()})
    batch_fns = contenders(model, tok, prompts)
    batch_fns.pop("uncached")  # 8 prompts x 8 rows uncached is the same story, only slower
    batch = interleaved(batch_fns, reps=max(3, reps // 2))
    log("  8 prompts:", {n: spread(v["cpu"]) for n, v in batch.items()})
    err = check_logprobs(model, tok, prompts[0])
    thr = thread_table(model, tok, prompts[0], reps=3)
    fns1 = contenders(model, tok, prompts[:1])
    share = {n: model_share(fns1[n]) for n in ("course", "generate")}

    def rows(res, n_rows):
        c = median(res["course"]["cpu"])
        out = []
        for name, v in res.items():
            m = median(v["cpu"])
            out.append([
                name, spread(v["wall"]), spread(v["cpu"]),
                f"{n_rows * T / m:,.0f}", f"{m / c:.2f}",
            ])  # fmt: skip
        return out

    hdr = ["contender", "wall ms", "CPU ms", "tokens/s (CPU)", "time / course"]
    c1 = {n: median(v["cpu"]) for n, v in one.items()}
    w1 = {n: median(v["wall"]) for n, v in one.items()}
    c8 = {n: median(v["cpu"]) for n, v in batch.items()}
    w8 = {n: median(v["wall"]) for n, v in batch.items()}

    def verdict(ok):
        return "met" if ok else "NOT met"

    goals = [
        ["one group: generate / course >= 1.3", f"{c1['generate'] / c1['course']:.2f}",
         f"{w1['generate'] / w1['course']:.2f}", verdict(c1["generate"] / c1["course"] >= 1.3)],
        ["one group: uncached / course >= 3", f"{c1['uncached'] / c1['course']:.2f}",
         f"{w1['uncached'] / w1['course']:.2f}", verdict(c1["uncached"] / c1["course"] >= 3)],
        ["8 prompts: generate per prompt / course batch >= 3",
         f"{c8['generate'] / c8['course']:.2f}", f"{w8['generate'] / w8['course']:.2f}",
         verdict(c8["generate"] / c8["course"] >= 3)],
        ["one group: course / forwards <= 1.15", f"{c1['course'] / c1['forwards']:.2f}",
         f"{w1['course'] / w1['forwards']:.2f}", verdict(c1["course"] / c1["forwards"] <= 1.15)],
        ["8 prompts: course / forwards <= 1.15", f"{c8['course'] / c8['forwards']:.2f}",
         f"{w8['course'] / w8['forwards']:.2f}", verdict(c8["course"] / c8["forwards"] <= 1.15)],
        ["generate / forwards (for reference)", f"{c1['generate'] / c1['forwards']:.2f}",
         f"{w1['generate'] / w1['forwards']:.2f}", ""],
    ]  # fmt: skip
    body = [
        "## Sampler",
        "",
        f"Machine: {machine()}. Model: {source}. Run by `python -m bench.bench_sampler`.",
        "",
        f"K={K} completions of exactly {T} new tokens (EOS disallowed in every contender so the "
        "shapes match), temperature 1, no top-k/top-p, behaviour log-probs returned by all, "
        f"{threads} torch thread, `inference_mode`. Contenders interleaved in one process after a "
        "warm-up, rotating the order; median [quartiles] in ms. CPU time = this process's CPU "
        "seconds (time the OS gave to other programs is not counted), the steadier figure on "
        "this shared machine; wall clock shown too.",
        "",
        f"One group (prompt {prompts[0]!r}), {reps} reps:",
        "",
        table(hdr, rows(one, K)),
        "",
        f"Rollout batch: 8 lab prompts x K={K} = {8 * K} rows sampled together by the course "
        "sampler, against `generate` called once per prompt, and against the forwards alone at "
        f"the batch shape; {max(3, reps // 2)} reps:",
        "",
        table(hdr, rows(batch, 8 * K)),
        "",
        table(["goal", "ratio (CPU)", "ratio (wall)", ""], goals),
        "",
        "Threads (one group, course sampler, CPU and wall ms, interleaved; torch's default on "
        "this machine is 2 intra-op threads). With other jobs on both cores a second OpenMP "
        "thread spends its time waiting for a core; the lessons' tiny models want 1 thread:",
        "",
        table(["torch threads", "wall ms", "CPU ms"], thr),
        "",
        "**Why generate/course stays near "
        f"{c1['generate'] / c1['course']:.2f}x, not 1.3x.** The course sampler runs at "
        f"{c1['course'] / c1['forwards']:.2f}x the time of the model's own forward passes at the "
        "same shapes: almost every millisecond is inside `Qwen3ForCausalLM.forward`. `generate` "
        f"runs at {c1['generate'] / c1['forwards']:.2f}x of those forwards, so its own overhead "
        "(logits processors, stopping criteria, cache bookkeeping, `output_scores`) is the most "
        "any sampler built on this model can save. cProfile of one group (this run): "
        f"{100 * share['course'][1]:.0f}% of the course sampler's time is inside the model's "
        f"`forward`, against {100 * share['generate'][1]:.0f}% for `generate`; a decode step is "
        "about 30 module calls (per layer 7 linears, 4 RMSNorms, rotary embedding, SDPA) on 8 "
        "rows of a 1.6M-parameter model, so per-call overhead, not arithmetic, sets the floor. "
        "Going past 1.3x would mean replacing the model's forward "
        "itself (a hand-fused decoder or `torch.compile`, whose compile time a student would "
        "pay on every kernel start), which is outside a teaching sampler. Where the course "
        "sampler's design does pay - one batched forward for many prompts, the KV cache, one "
        "prefill per prompt - the goals are met by a wide margin. The course sampler can beat "
        "the 'forwards' floor because it prefills each distinct prompt once and repeats its KV "
        "cache K times, while the floor (and `generate`) prefill all K copies.",
        "",
        f"Exactness: the course sampler's stored log-probs match teacher-forced rescoring of the "
        f"same tokens to {err:.1e} (max abs, {K} rows x {T} tokens, EOS allowed).",
    ]
    return "\n".join(body)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-write", action="store_true", help="print, do not update BENCHMARKS.md")
    a = p.parse_args(argv)
    body = run(a.quick, a.threads)
    print(body)
    if not a.no_write:
        write_section("sampler", body)


if __name__ == "__main__":
    main()
