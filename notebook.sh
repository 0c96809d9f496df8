#!/usr/bin/env bash
# Open a lesson of Module 9 in JupyterLab: ./notebook.sh lists the lessons, ./notebook.sh 9.2 opens
# one (first use: creates .venv and installs), ./notebook.sh 9.2 --submit --as NAME hands it in,
# ./notebook.sh --doctor checks the machine; ./notebook.sh --help says more.
# This is the course command (helpers/cli.py) started with whichever Python 3.8+ is here: it lists
# and checks names with the standard library, and makes the Python 3.11 environment when it needs it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
# The command runs from the course folder (so its own helpers are the ones imported, on any Python):
# folders given relative to where you are stay where you meant them.
for var in COURSE_RELEASE_DIR COURSE_WORKSPACE COURSE_SUBMIT_DIR COURSE_VENV; do
  val="${!var:-}"
  if [ -n "$val" ] && [ "${val#/}" = "$val" ]; then export "$var=$PWD/$val"; fi
done
cd "$ROOT"
for py in "${PYTHON:-}" python3.11 python3 python; do
  [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
  "$py" -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null || continue
  exec "$py" -m helpers.cli --notebook-sh "$@"
done
echo "error: Python 3.11 was not found (no Python 3.8 or newer on the PATH)." >&2
echo "  fix: install Python 3.11 (python.org, pyenv, or 'apt install python3.11 python3.11-venv')," >&2
echo "       or point PYTHON at it: PYTHON=/path/to/python3.11 $0 ..." >&2
exit 3
