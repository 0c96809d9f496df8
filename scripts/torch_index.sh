#!/usr/bin/env bash
# Which torch build a student's install takes: prints the extra pip arguments, one per line (none:
# pip's own choice). scripts/ensure_env.sh passes them to the install of the lock.
#   scripts/torch_index.sh PYTHON
# The lock pins torch==2.13.0, which pip matches with the CPU build (2.13.0+cpu) or PyPI's build:
# - macOS and Windows: PyPI's wheel is the CPU build already; nothing to add.
# - Linux: PyPI's wheel is the CUDA build (several GB of NVIDIA libraries the course never uses), so
#   on a machine without an NVIDIA GPU (no nvidia-smi) the install adds PyTorch's CPU wheel index,
#   where 2.13.0+cpu wins over 2.13.0 (a local version sorts after its public one).
# - Whoever has configured pip's sources (an index, an extra index or wheel folders, in a pip config
#   file or PIP_* variables: a university mirror, an offline wheel folder) keeps them: nothing added.
# COURSE_TORCH overrides: "cpu" (always add the CPU index), "default" (never: pip's own choice).
set -euo pipefail
PY="${1:?usage: scripts/torch_index.sh PYTHON}"
CPU_INDEX="https://download.pytorch.org/whl/cpu"

case "${COURSE_TORCH:-auto}" in
  cpu) echo "--extra-index-url"; echo "$CPU_INDEX"; exit 0 ;;
  default) exit 0 ;;
  auto) ;;
  *) echo "error: COURSE_TORCH must be 'cpu', 'default' or unset, not '${COURSE_TORCH}'" >&2; exit 2 ;;
esac
[ "$(uname -s)" = Linux ] || exit 0
command -v nvidia-smi >/dev/null 2>&1 && exit 0
for var in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX; do
  [ -n "${!var:-}" ] && exit 0
done
# (read whole before matching: grep -q stopping early would fail the pipeline under pipefail)
config="$("$PY" -m pip config list 2>/dev/null || true)"
if grep -Eq '\.(index-url|extra-index-url|find-links|no-index)=' <<<"$config"; then
  exit 0
fi
echo "--extra-index-url"
echo "$CPU_INDEX"
