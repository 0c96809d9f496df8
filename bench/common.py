"""Shared plumbing for the benchmarks: the model, interleaved timing, the machine record, and the
marked sections of BENCHMARKS.md.

Timing on a shared 2-core machine is noisy, so every comparison here is measured the same way:
the contenders run in one process, interleaved (A, B, A, B, ...), after a warm-up, and the
reported figure is the median over repetitions; ratios are ratios of medians taken in that one run.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"


# --- the model ---------------------------------------------------------------------------------


def load_model(require_baselm: bool = False):
    """``(model, tokenizer, source)``: BaseLM if its artifact is intact, else (unless
    ``require_baselm``) a randomly initialised Qwen3 of BaseLM's configuration and tokenizer."""
    from helpers import baselm

    ok, reason = baselm.check_artifact()
    if ok:
        model, tok = baselm.load_baselm()
        return model, tok, "BaseLM (artifacts/baselm)"
    if require_baselm:
        raise FileNotFoundError(f"BaseLM missing: {reason}")
    tok = baselm.build_tokenizer()
    cfg = baselm.BaseLMConfig()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = baselm.make_model(cfg, tok)
    return model.eval(), tok, "random Qwen3 with BaseLM's config (artifact missing)"


def ensure_baselm(build: bool = True) -> bool:
    """True if BaseLM is usable; if missing and ``build``, run ./baselm.sh first."""
    from helpers import baselm

    ok, _ = baselm.check_artifact()
    if ok or not build:
        return ok
    script = ROOT / "baselm.sh"
    if not script.exists():
        print("bench: ./baselm.sh not found; using a random model of BaseLM's config", flush=True)
        return False
    print("bench: BaseLM missing, building it with ./baselm.sh ...", flush=True)
    subprocess.run(["bash", str(script)], cwd=ROOT, check=True)
    return baselm.check_artifact()[0]


# --- timing ------------------------------------------------------------------------------------


def interleaved(fns: dict[str, Callable[[], object]], reps: int, warmup: int = 1) -> dict:
    """Run each function ``warmup`` times, then ``reps`` rounds of A, B, C, ... in turn (rotating
    the start so no contender always runs first).

    Returns {name: {"wall": sorted seconds, "cpu": sorted seconds}}. CPU time (``process_time``:
    this process, all its threads) does not count the time the OS gave our cores to other
    programs, so on a shared machine its ratios are steadier than wall-clock ratios.
    """
    names = list(fns)
    for _ in range(warmup):
        for n in names:
            fns[n]()
    times = {n: {"wall": [], "cpu": []} for n in names}
    for r in range(reps):
        order = names[r % len(names) :] + names[: r % len(names)]
        for n in order:
            c0, t0 = time.process_time(), time.perf_counter()
            fns[n]()
            t1, c1 = time.perf_counter(), time.process_time()
            times[n]["wall"].append(t1 - t0)
            times[n]["cpu"].append(c1 - c0)
    return {n: {k: sorted(v) for k, v in d.items()} for n, d in times.items()}


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> str:
    """'median [q1-q3]' in ms."""
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return f"{1e3 * statistics.median(xs):.1f} [{1e3 * q[0]:.1f}-{1e3 * q[2]:.1f}]"


# --- records -----------------------------------------------------------------------------------


def machine() -> str:
    """One line: CPU, cores, load, versions, threads, date."""
    import peft
    import transformers

    try:
        import trl

        trl_v = trl.__version__
    except Exception:  # pragma: no cover - trl is pinned, but the sampler bench does not need it
        trl_v = "absent"
    from helpers.passport import cpu_model

    cpu = cpu_model()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{cpu}, {os.cpu_count()} cores (load avg {load:.1f} at start), Python "
        f"{platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} "
        f"intra-op / {torch.get_num_interop_threads()} inter-op threads), transformers "
        f"{transformers.__version__}, peft {peft.__version__}, trl {trl_v}; "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}"
    )


def write_section(name: str, body: str, path: Path = BENCHMARKS_MD) -> None:
    """Replace the text between ``<!-- bench:NAME:begin -->`` and ``<!-- bench:NAME:end -->`` in
    BENCHMARKS.md (appending the marked section if absent); other text is left alone."""
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    pat = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pat.search(text):
        text = pat.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text if text.endswith("\n") else text + "\n")


def table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def log(*a) -> None:
    print(*a, flush=True, file=sys.stdout)
