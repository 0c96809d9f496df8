"""The level-B command line: ``python -m helpers.level_b`` (the instructor's GPU smoke script calls it).

One run of a profile with a few overrides; writes the passport, TRL's log history and the dashboard
under ``--out``, prints the config, weights and measured time and memory, and exits with status 1
if the numerics failed (``numerics.numerics_report``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from helpers.level_b.config import default_config
from helpers.level_b.model import QWEN_ID, RANDOM_QWEN
from helpers.level_b.training import run


def main(argv: list[str] | None = None) -> int:
    from helpers import level_b  # the package's docstring describes the command

    p = argparse.ArgumentParser(
        prog="python -m helpers.level_b", description=level_b.__doc__.split("\n")[0]
    )
    p.add_argument(
        "--model",
        default=None,
        help=f"hub id, directory, or {RANDOM_QWEN!r} (default: the BaseLM artifact)",
    )
    p.add_argument("--smoke", action="store_true", help="the smoke profile (few steps)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--max-steps", type=int, default=None, help="override max_steps")
    p.add_argument("--precision", default=None, choices=("fp32", "fp16", "bf16"))
    p.add_argument("--max-completion-length", type=int, default=None, help="override the cap")
    p.add_argument("--use-vllm", action="store_true", help="level C: generate with vLLM")
    p.add_argument("--vllm-mode", default="colocate", choices=("colocate", "server"))
    p.add_argument("--out", default="level_b_out", help="directory for passport and history")
    args = p.parse_args(argv)

    cfg = default_config(args.model, smoke=args.smoke, device=args.device)
    # A directory of a hub model (copied to a machine without the hub) keeps the T4 profile.
    if (
        args.model
        and Path(args.model).is_dir()
        and not (Path(args.model) / "passport.json").exists()
    ):
        hub = default_config(QWEN_ID, smoke=args.smoke, device=args.device)
        cfg = dataclasses.replace(hub, model_id=args.model)
    if args.model == RANDOM_QWEN:  # T4 shapes without the hub: plain prompts (no chat template)
        cfg = dataclasses.replace(cfg, conversational=False, enable_thinking=None)
    if args.max_steps is not None:
        cfg.max_steps = args.max_steps
    if args.precision is not None:
        cfg.precision = args.precision
    if args.use_vllm:
        cfg.use_vllm, cfg.vllm_mode = True, args.vllm_mode
    if args.max_completion_length is not None:
        cfg.max_completion_length = args.max_completion_length
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg.output_dir = str(out / "trl")
    import time

    import torch

    if cfg.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    res = run(cfg)
    wall = time.time() - t0
    measured = {"wall_s": round(wall, 1), "s_per_step": round(wall / max(1, cfg.max_steps), 2)}
    if cfg.device == "cuda":
        measured["peak_gpu_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
        measured["peak_gpu_reserved_gib"] = round(torch.cuda.max_memory_reserved() / 2**30, 3)
        measured["gpu"] = torch.cuda.get_device_name(0)
    import resource

    measured["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    steps = [r["step_time"] for r in res["log_history"] if "step_time" in r]
    measured["step_time_s"] = [round(x, 3) for x in steps]
    measured["numerics"] = res["numerics"]
    res["passport"]["extra"]["measured"] = measured
    (out / "passport.json").write_text(json.dumps(res["passport"], indent=1, default=str))
    (out / "log_history.json").write_text(json.dumps(res["log_history"], indent=1, default=str))
    res["dashboard"].to_json(out / "dashboard.json")
    print(json.dumps({"config": asdict(cfg), "weights": res["weights"], "measured": measured}))
    last = {k: v[-1] for k, v in res["history"].items() if v and not _nan(v[-1])}
    print("last step:", json.dumps(last))
    num = res["numerics"]
    if not num["ok"]:
        print(
            f"NUMERICS FAILED ({cfg.precision}): " + "; ".join(num["problems"]) + ". In fp16 a "
            "bf16-trained model can overflow (max 65 504): rerun with --precision fp32, or bf16 on a "
            "GPU that has it.",
            file=sys.stderr,
        )
        return 1
    print(f"numerics ok ({cfg.precision}): no inf/NaN loss, {len(num['skipped_optimizer_steps'])} "
          f"skipped optimiser steps of {num['steps']}")  # fmt: skip
    return 0


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)
