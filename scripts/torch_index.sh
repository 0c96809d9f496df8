#!/usr/bin/env bash
# Which torch build an install takes: prints the package index to take torch from, or nothing (pip's
# own choice). scripts/ensure_env.sh (and the course's lock script) installs torch alone from that index first
# (no other package comes from it), then the lock, which the installed torch already satisfies.
#   scripts/torch_index.sh PYTHON              for a student's install on this machine
#   scripts/torch_index.sh PYTHON --for-lock   for making the locks (always the CPU build)
# The lock pins torch==2.13.0, which pip matches with the CPU build (2.13.0+cpu) or PyPI's build:
# - macOS and Windows: PyPI's wheel is the CPU build already; nothing to add.
# - Linux: PyPI's wheel is the CUDA build (several GB of NVIDIA libraries the course never uses), so
#   on a machine without an NVIDIA GPU (no nvidia-smi) torch comes from PyTorch's CPU wheel index.
#   The locks are always made with the CPU build: a lock holding nvidia-*/triton breaks every Mac.
# - Whoever has configured pip's sources (an index, an extra index or wheel folders, in a pip config
#   file or PIP_* variables: a university mirror, an offline wheel folder) keeps them: nothing added.
# COURSE_TORCH overrides: "cpu" (always the CPU index), "default" (never: pip's own choice).
set -euo pipefail
PY="${1:?usage: scripts/torch_index.sh PYTHON [--for-lock]}"
FOR_LOCK="${2:-}"
CPU_INDEX="https://download.pytorch.org/whl/cpu"

case "${COURSE_TORCH:-auto}" in
  cpu) echo "$CPU_INDEX"; exit 0 ;;
  default) exit 0 ;;
  auto) ;;
  *) echo "error: COURSE_TORCH must be 'cpu', 'default' or unset, not '${COURSE_TORCH}'" >&2; exit 2 ;;
esac
for var in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS; do
  [ -n "${!var:-}" ] && exit 0
done
case "${PIP_NO_INDEX:-}" in  # pip's own spellings of "off", in any case
  ""|0|[fF]|[fF][aA][lL][sS][eE]|[nN]|[nN][oO]|[oO][fF][fF]) ;;
  *) exit 0 ;;
esac
# (read whole before matching: grep -q stopping early would fail the pipeline under pipefail)
config="$("$PY" -m pip config list 2>/dev/null || true)"
if grep -Eq '\.(index-url|extra-index-url|find-links)=' <<<"$config" ||
   grep -Eiq "\.no-index='?(1|t|true|y|yes|on)'?$" <<<"$config"; then
  exit 0
fi
if [ "$FOR_LOCK" != "--for-lock" ]; then
  [ "$(uname -s)" = Linux ] || exit 0
  command -v nvidia-smi >/dev/null 2>&1 && exit 0
fi
echo "$CPU_INDEX"
