#!/usr/bin/env bash
# Run every test of the bundle: lint, notebook/source sync, then pytest (unit, notebook,
# autograder, BaseLM, browser). Creates .venv on first use. Extra arguments go to pytest.
#   ./test.sh --fast   day-to-day: lint, sync and the unit and grading tests only (no end-to-end
#                      file, nothing marked slow or browser); CI runs ./test.sh, everything
set -euo pipefail
cd "$(dirname "$0")"
fast=0
if [ "${1:-}" = --fast ]; then
  fast=1
  shift
fi
COURSE_DEPS=dev source scripts/ensure_env.sh  # the student set plus tests, lint, JupyterHub
if [ "$fast" = 0 ] && [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "==> installing Debian's chromium for the browser tests (first run only)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null ||
    echo "    chromium could not be installed; the browser tests will skip and say why"
fi
if ! command -v bwrap >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "==> installing Debian's bubblewrap for the grading sandbox (first run only)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >/dev/null ||
    echo "    bubblewrap could not be installed; grading tests run unsandboxed and the attack suite skips"
fi
# --- JupyterHub class test (tests/test_hub.py): the proxy from npm (JupyterHub itself: the hub extra in pyproject.toml)
if [ "$fast" = 0 ] && ! command -v configurable-http-proxy >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "==> installing configurable-http-proxy (npm) for the JupyterHub test (first run only)"
  if ! command -v npm >/dev/null && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >/dev/null || true
  fi
  (command -v npm >/dev/null && npm install -g -s configurable-http-proxy@5.3.0 >/dev/null) ||
    echo "    configurable-http-proxy could not be installed; tests/test_hub.py will skip and say why"
fi
# --- end of the JupyterHub block
echo "==> ruff"
ruff check .
ruff format --check .
echo "==> lesson sources and notebooks in sync"
python course/build_lessons.py --check
echo "==> BaseLM (the shipped build installed once, reused after a hash check)"
./baselm.sh
if [ "$fast" = 1 ]; then
  echo "==> pytest, fast tier (./test.sh runs everything)"
  exec python -m pytest -q -p no:cacheprovider -m "not slow and not browser and not e2e" "$@"
fi
echo "==> pytest"
python -m pytest -q -p no:cacheprovider "$@"
