#!/usr/bin/env bash
# Run every test of the bundle: lint, notebook/source sync, then pytest (unit, notebook,
# autograder, BaseLM, browser). Creates .venv on first use. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/ensure_env.sh
echo "==> ruff"
ruff check .
ruff format --check .
echo "==> lesson sources and notebooks in sync"
python course/build_lessons.py --check
echo "==> pytest"
python -m pytest -q -p no:cacheprovider "$@"
