#!/usr/bin/env bash
# Run every benchmark and update BENCHMARKS.md (see bench/__main__.py; pass --quick for a smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_env.sh
exec python -m bench "$@"
