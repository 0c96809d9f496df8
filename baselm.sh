#!/usr/bin/env bash
# Set up the BaseLM artifact (artifacts/baselm/, or $BASELM_DIR): reuse an intact one after checking
# its weights hash, else install the shipped build (helpers/data/baselm/, hash checked).
# --rebuild (alias --force) pretrains from the seeded corpus instead; --seed N and --profile tiny
# are passed through. A damaged or partial artifact is reported and set up again. See helpers/baselm.py.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/ensure_env.sh
exec python -m helpers.baselm build "$@"
