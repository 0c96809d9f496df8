#!/usr/bin/env bash
# Level B smoke run on a GPU machine, for the lead (the course itself never needs a GPU).
#
#   course/level_b/gpu_smoke.sh [MODEL] [OUT]
#
# MODEL: "Qwen/Qwen3-0.6B" where the hub is reachable (Colab); a directory holding a saved model
#        (BaseLM: artifacts/baselm, or a copied Qwen3-0.6B); or "random-qwen3-0.6b" (default):
#        Qwen3-0.6B's shapes with random weights, built locally - it measures the T4 profile's
#        memory and step time without the hub (its reward is always 0, so it learns nothing).
# OUT:   where passports, log histories and dashboards go (default: $OUT or ./level_b_gpu).
#
# What it runs (about 1-3 minutes on a recent GPU, longer on a T4):
#   1. MODEL with the T4 profile (fp16 base weights, fp32 LoRA, G=4, 128 new tokens, 10 steps
#      smoke; 4 steps for the random model), peak GPU memory and step times recorded;
#   2. BaseLM in fp16 on the GPU, 2 steps, when artifacts/baselm exists (the CPU path, on CUDA);
#   3. the numerics check: every run must have finite losses (and, outside fp16, finite gradient
#      norms) and at most max(2, steps // 5) optimiser steps skipped by fp16's loss scaler. Each run
#      already exits 1 if not (helpers.level_b.numerics_report); step 3 prints the summary.
# A bf16-trained model (Qwen3) can overflow fp16 (max 65 504); the random-weight model cannot show
# that risk, since its activations are not the trained model's: only the real weights can.
# The python used must have a CUDA build of torch plus trl/peft/transformers/datasets/accelerate
# at the versions of requirements.lock (PYTHON=... picks it; default: python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL="${1:-random-qwen3-0.6b}"
OUT="${2:-${OUT:-level_b_gpu}}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"

"$PY" - <<'PY'
import importlib.metadata as m, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())
for p in ("transformers", "peft", "trl", "datasets", "accelerate"):
    print(f"  {p} {m.version(p)}")
if not torch.cuda.is_available():
    sys.exit("no CUDA device visible to this torch: install a CUDA build of torch")
print("  device", torch.cuda.get_device_name(0), "bf16", torch.cuda.is_bf16_supported())
PY

STEPS=()
[ "$MODEL" = "random-qwen3-0.6b" ] && STEPS=(--max-steps 4)
echo "==> 1. $MODEL, T4 profile (fp16)"
"$PY" -m helpers.level_b --model "$MODEL" --smoke --device cuda --precision fp16 \
    "${STEPS[@]}" --out "$OUT/t4_profile" | tee "$OUT/t4_profile.log"

if [ -f artifacts/baselm/passport.json ] && [ "$MODEL" != "artifacts/baselm" ]; then
  echo "==> 2. BaseLM on CUDA (fp16), smoke"
  "$PY" -m helpers.level_b --model artifacts/baselm --smoke --device cuda --precision fp16 \
      --out "$OUT/baselm_fp16" | tee "$OUT/baselm_fp16.log"
fi
echo "==> numerics (inf/NaN losses, skipped optimiser steps)"
"$PY" - "$OUT" <<'PY'
import json, pathlib, sys
bad = []
for pp in sorted(pathlib.Path(sys.argv[1]).glob("*/passport.json")):
    m = json.loads(pp.read_text())["extra"]["measured"]
    n = m["numerics"]
    print(f"  {pp.parent.name}: {n['steps']} steps, {m.get('s_per_step')} s/step, peak GPU "
          f"{m.get('peak_gpu_mem_gib')} GiB; non-finite losses at {n['nonfinite_loss_steps']}, "
          f"non-finite grad norms at {n['nonfinite_grad_norm_steps']}, skipped optimiser steps "
          f"{n['skipped_optimizer_steps']} -> {'ok' if n['ok'] else 'FAILED'}")
    bad += [f"{pp.parent.name}: {p}" for p in n["problems"]]
if bad:
    sys.exit("numerics failed:\n  " + "\n  ".join(bad))
PY
echo "==> done: $OUT (passport.json holds extra.measured: wall time, peak memory, step times, numerics)"
