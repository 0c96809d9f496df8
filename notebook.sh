#!/usr/bin/env bash
# Open a lesson of Module 9 in JupyterLab: ./notebook.sh lists the lessons, ./notebook.sh 9.2 opens
# one (first use: creates .venv and installs), ./notebook.sh 9.2 --submit --as NAME hands it in,
# ./notebook.sh --doctor checks the machine; ./notebook.sh --help says more.
# This is the course command (helpers/cli.py) started with whichever Python 3 is here: it lists and
# checks names with the standard library, and makes the Python 3.11 environment when it needs it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
for py in "${PYTHON:-}" python3.11 python3 python; do
  [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
  # -P (3.11+): the current folder is not on the import path, so no file of the student's shadows ours
  safe="$("$py" -c 'import sys; sys.exit(1) if sys.version_info < (3, 8) else print("-P" if sys.version_info >= (3, 11) else "")' 2>/dev/null)" || continue
  PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" exec "$py" $safe -m helpers.cli --notebook-sh "$@"
done
echo "error: Python 3.11 was not found (no Python 3 at all on the PATH)." >&2
echo "  fix: install Python 3.11 (python.org, pyenv, or 'apt install python3.11 python3.11-venv')," >&2
echo "       or point PYTHON at it: PYTHON=/path/to/python3.11 $0 ..." >&2
exit 3
