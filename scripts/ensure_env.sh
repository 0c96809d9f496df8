# Create .venv with Python 3.11 and install the locked dependencies plus the helpers package, once.
# Sourced by notebook.sh (the student's set: requirements.lock) and, in the instructor's repository,
# by its test runner (COURSE_DEPS=dev: the student's set plus tests, lint, mutation testing and
# JupyterHub, from the dev lock). The course's lock script makes both locks. Re-installs only when
# the lock or pyproject.toml change (a stamp inside .venv records which set and their hash); a venv
# with the dev set serves a student too.
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

DEPS="${COURSE_DEPS:-student}"
case "$DEPS" in
  student) LOCK="$ROOT/requirements.lock" ;;
  dev) LOCK="$ROOT/requirements-dev.lock" ;;
  *) echo "error: COURSE_DEPS must be 'student' or 'dev', not '$DEPS'" >&2; exit 2 ;;
esac
hash_of() {  # with the venv's Python: macOS has no sha256sum; an empty hash would match nothing
  [ -f "$ROOT/$1" ] || { echo "error: $ROOT/$1 is missing (extract the course bundle again, or in a git clone: git checkout -- $1)" >&2; exit 2; }
  "$VENV/bin/python" -c 'import hashlib, sys
h = hashlib.sha256()
for f in sys.argv[1:]:
    h.update(open(f, "rb").read())
print(h.hexdigest()[:16])' "$ROOT/$1" "$ROOT/pyproject.toml"
}
stamp_of() {  # what a venv with that set holds: "student H" or "dev H' student H"
  if [ "$1" = dev ]; then
    echo "dev $(hash_of requirements-dev.lock) student $(hash_of requirements.lock)"
  else
    echo "student $(hash_of requirements.lock)"
  fi
}

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

# a venv left from another Python is named before anything is installed into it
if ! "$VENV/bin/python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
  echo "error: $VENV is not a Python 3.11 environment" >&2
  echo "  fix: remove it and let the next start make it again: rm -rf $(printf %q "$VENV") && ./notebook.sh 9.1" >&2
  exit 3
fi

want="$(stamp_of "$DEPS")"
have="$(cat "$VENV/.course-stamp" 2>/dev/null || true)"
if [ "$DEPS" = student ] && [[ "$have" == "dev "*" $want" ]]; then
  want="$have"  # a venv with the dev set holds this student's set at the same versions
fi
if [ "$want" != "$have" ]; then
  echo "==> installing the locked dependencies ($(basename "$LOCK")) into .venv (a few minutes on first use)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip
  # what the lock installed last time and this one dropped goes first (scripts/venv_follow_lock.py);
  # the install below then puts back whatever this platform still needs
  if [ -f "$VENV/.course-lock" ]; then
    "$VENV/bin/python" "$ROOT/scripts/venv_follow_lock.py" "$VENV/.course-lock" "$LOCK" "$ROOT/pyproject.toml"
  fi
  # torch's build: on Linux without an NVIDIA GPU, the CPU build, installed alone from PyTorch's CPU
  # index before the lock (scripts/torch_index.sh says why); nothing else comes from that index
  TORCH_INDEX="$(bash "$ROOT/scripts/torch_index.sh" "$VENV/bin/python")" || exit $?
  if [ -n "$TORCH_INDEX" ]; then
    TORCH_PIN="$(grep -E '^torch==' "$LOCK")" || { echo "error: $LOCK pins no torch" >&2; exit 2; }
    echo "==> torch: the CPU build ($TORCH_PIN) from $TORCH_INDEX (COURSE_TORCH=default: pip's own choice)"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps --index-url "$TORCH_INDEX" "$TORCH_PIN"
  fi
  "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar on -r "$LOCK"
  cp "$LOCK" "$VENV/.course-lock"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps -e "$ROOT"
  echo "$want" > "$VENV/.course-stamp"
  echo "==> environment ready"
fi
export PATH="$VENV/bin:$PATH"
