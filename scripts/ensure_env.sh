#!/usr/bin/env bash
# Create .venv with Python 3.11 and install the locked dependencies (requirements.lock, made from
# requirements.txt by scripts/lock.sh) plus the helpers package, once. Sourced by notebook.sh and
# test.sh; re-installs only when requirements.lock or pyproject.toml change (a stamp inside .venv
# records their hash).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${COURSE_VENV:-$ROOT/.venv}"

find_python() {
  local cand
  for cand in "${PYTHON:-}" python3.11 python3 python; do
    [ -n "$cand" ] || continue
    command -v "$cand" >/dev/null 2>&1 || continue
    if "$cand" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
      echo "$cand"; return 0
    fi
  done
  return 1
}

stamp_of() { cat "$ROOT/requirements.lock" "$ROOT/pyproject.toml" | sha256sum | cut -c1-16; }

if [ ! -x "$VENV/bin/python" ]; then
  if ! PY="$(find_python)"; then
    echo "error: Python 3.11 was not found." >&2
    echo "  fix: install Python 3.11 (python.org, pyenv, or 'apt install python3.11 python3.11-venv')," >&2
    echo "       or point PYTHON at it: PYTHON=/path/to/python3.11 $0 ..." >&2
    exit 3
  fi
  echo "==> creating $VENV with $PY (first use only)"
  "$PY" -m venv "$VENV"
fi

want="$(stamp_of)"
have="$(cat "$VENV/.course-stamp" 2>/dev/null || true)"
if [ "$want" != "$have" ]; then
  echo "==> installing the locked dependencies into .venv (a few minutes on first use)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip
  "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar on -r "$ROOT/requirements.lock"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps -e "$ROOT"
  echo "$want" > "$VENV/.course-stamp"
  echo "==> environment ready"
fi
export PATH="$VENV/bin:$PATH"
