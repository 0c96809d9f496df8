#!/usr/bin/env bash
# Build the BaseLM artifact (artifacts/baselm/, or $BASELM_DIR), or reuse an intact one after
# checking its weights hash. --force rebuilds; --seed N and --profile tiny are passed through.
# A damaged or partial artifact is reported and rebuilt. See helpers/baselm.py.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/ensure_env.sh
exec python -m helpers.baselm build "$@"
