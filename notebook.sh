#!/usr/bin/env bash
# Open a lesson of Module 9 in JupyterLab.
#
#   ./notebook.sh                 list the lessons
#   ./notebook.sh 9.2             open lesson 9.2 (first use: creates .venv, installs, builds BaseLM
#                                 if the lesson needs it)
#   ./notebook.sh 9.2 --fresh     archive your current copy (timestamped) and start from the release
#   ./notebook.sh 9.2 --no-browser --port 8890    headless: print the URL instead of opening it
#   ./notebook.sh 9.2 --setup-only                prepare the copy, do not start JupyterLab
#   ./notebook.sh 9.2 --submit --as ada.lovelace  check 9.2 (nbgrader validate: the visible tests),
#                                 then write submit/ada.lovelace.zip for your instructor
#                                 (your name is remembered: next time ./notebook.sh 9.3 --submit)
#   ./notebook.sh --doctor [--port N]   something wrong? check Python, the environment, BaseLM,
#                                 the port and the disk; each problem comes with its fix
#
# Your copy of a lesson lives in workspace/<lesson>/ and is never overwritten; release/ is only read.
# COURSE_RELEASE_DIR, COURSE_WORKSPACE and COURSE_SUBMIT_DIR override the folders (the tests use that).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
RELEASE="${COURSE_RELEASE_DIR:-$ROOT/release}"
WORKSPACE="${COURSE_WORKSPACE:-$ROOT/workspace}"
SUBMIT_DIR="${COURSE_SUBMIT_DIR:-$ROOT/submit}"
NEEDS_BASELM=" 9.5 "   # lessons that load the BaseLM artifact

die() { echo "error: $1" >&2; [ $# -gt 1 ] && echo "  fix: $2" >&2; exit "${3:-2}"; }

lessons() {
  local d
  for d in "$RELEASE"/*/; do
    [ -d "$d" ] || continue
    ls "$d"*.ipynb >/dev/null 2>&1 && basename "$d"
  done | sort -V
}

list_lessons() {
  echo "Module 9 - RLVR & GRPO. Lessons:"
  local l nb title
  for l in $(lessons); do
    nb="$(ls "$RELEASE/$l"/*.ipynb | head -n 1)"
    title="$(grep -m1 -o '"# [^"\\]*' "$nb" | sed 's/^"# //' || true)"
    printf '  %-5s %s\n' "$l" "$title"
  done
  echo
  echo "Open one with: ./notebook.sh <lesson>   (e.g. ./notebook.sh $(lessons | head -n 1))"
}

lesson="" fresh=0 browser=1 port=8888 setup_only=0 submit=0 student="" doctor=0
while [ $# -gt 0 ]; do
  case "$1" in
    --fresh) fresh=1 ;;
    --no-browser) browser=0 ;;
    --port) [ $# -ge 2 ] || die "--port needs a number" "./notebook.sh 9.1 --port 8890"; port="$2"; shift ;;
    --port=*) port="${1#--port=}" ;;
    --setup-only) setup_only=1 ;;
    --submit) submit=1 ;;
    --doctor) doctor=1 ;;
    --as) [ $# -ge 2 ] || die "--as needs your name" "./notebook.sh 9.1 --submit --as ada.lovelace"; student="$2"; shift ;;
    --as=*) student="${1#--as=}" ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) die "unknown option $1" "see ./notebook.sh --help" ;;
    *) [ -z "$lesson" ] || die "one lesson at a time (got $lesson and $1)" "./notebook.sh $lesson"; lesson="$1" ;;
  esac
  shift
done

if [ "$doctor" = 1 ]; then  # any Python 3 runs it: the course's own environment may be what is broken
  for py in "${PYTHON:-}" python3.11 python3 python; do
    [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && exec "$py" "$ROOT/scripts/doctor.py" --port "$port"
  done
  die "no Python at all was found" "install Python 3.11 (python.org, pyenv, or: apt install python3.11 python3.11-venv)"
fi
if [ -z "$lesson" ]; then
  list_lessons
  exit 0
fi
if ! lessons | grep -qx -- "$lesson"; then
  echo "error: there is no lesson '$lesson'." >&2
  echo "  fix: pick one of: $(lessons | tr '\n' ' ')(run ./notebook.sh to list them)" >&2
  exit 2
fi
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
  die "--port must be a number between 1 and 65535, got '$port'" "./notebook.sh $lesson --port 8890"

# --- hand in: validate, then one zip per student that the instructor's collect step reads ---------
if [ "$submit" = 1 ]; then
  nbfile="$WORKSPACE/$lesson/$lesson.ipynb"
  [ -f "$nbfile" ] || die "you have no copy of lesson $lesson yet (nothing to submit)" \
    "open it first: ./notebook.sh $lesson"
  namefile="$WORKSPACE/.student-name"
  [ -n "$student" ] || student="$(cat "$namefile" 2>/dev/null || true)"
  [ -n "$student" ] || die "say who you are, once: the zip is named after you" \
    "./notebook.sh $lesson --submit --as firstname.lastname"
  [[ "$student" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || die \
    "--as '$student': use letters, digits, '.', '_' or '-' (no spaces), starting with a letter or digit" \
    "./notebook.sh $lesson --submit --as ada.lovelace"
  mkdir -p "$WORKSPACE"
  echo "$student" >"$namefile"
  # shellcheck source=scripts/ensure_env.sh
  source "$ROOT/scripts/ensure_env.sh"
  echo "==> checking lesson $lesson (nbgrader validate runs your notebook and its visible tests)"
  # scripts/validate_summary.py reads nbgrader's Validator results as data, not validate's text
  log="$WORKSPACE/.validate.log"
  if ! out="$(cd "$WORKSPACE/$lesson" && python "$ROOT/scripts/validate_summary.py" "$lesson.ipynb" 2>"$log")"; then
    tail -n 20 "$log" >&2
    die "nbgrader could not check $nbfile (is it a valid notebook?)" \
      "open it with ./notebook.sh $lesson, or start over with ./notebook.sh $lesson --fresh" 3
  fi
  if [ "$(printf '%s\n' "$out" | tail -n 1)" = "PASSED" ]; then
    echo "    all visible tests pass (hidden tests run when your instructor grades)"
  else
    printf '%s\n' "$out"
    echo "    warning: some visible tests fail; the zip is written anyway (you can submit again)"
  fi
  mkdir -p "$SUBMIT_DIR"
  zip="$SUBMIT_DIR/$student.zip"
  python - "$WORKSPACE" "$zip" <<'PY'
import sys, zipfile
from pathlib import Path
ws, dest = Path(sys.argv[1]), Path(sys.argv[2])
tmp = dest.with_suffix(".zip.part")
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
    for nb in sorted(ws.glob("*/*.ipynb")):
        if nb.stem == nb.parent.name and not nb.is_symlink():  # workspace/<lesson>/<lesson>.ipynb
            zf.write(nb, f"workspace/{nb.parent.name}/{nb.name}")
            print(f"    {nb.parent.name}/{nb.name}")
tmp.replace(dest)
PY
  echo "==> wrote $zip (every lesson in your workspace, latest version)"
  echo "    send this file to your instructor; submitting again replaces it"
  exit 0
fi

# --- the student's copy: never overwritten -------------------------------------------------------
dest="$WORKSPACE/$lesson"
if [ "$fresh" = 1 ] && [ -d "$dest" ]; then
  stamp="$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$WORKSPACE/archive"
  mv "$dest" "$WORKSPACE/archive/$lesson-$stamp"
  echo "==> archived your previous copy to workspace/archive/$lesson-$stamp"
fi
mkdir -p "$dest"
copied=0
for src in "$RELEASE/$lesson"/*; do
  [ -e "$src" ] || continue
  if [ ! -e "$dest/$(basename "$src")" ]; then
    cp -r "$src" "$dest/"
    copied=$((copied + 1))
  fi
done
if [ "$copied" -gt 0 ]; then
  echo "==> your copy of lesson $lesson: $dest"
else
  echo "==> continuing your copy of lesson $lesson: $dest (use --fresh to start over)"
fi
notebook="$(cd "$dest" && ls ./*.ipynb | head -n 1)"
notebook="${notebook#./}"

if [ "$setup_only" = 1 ]; then
  echo "$dest/$notebook"
  exit 0
fi

# --- the environment, BaseLM, and a free port -----------------------------------------------------
# shellcheck source=scripts/ensure_env.sh
source "$ROOT/scripts/ensure_env.sh"
if [[ "$NEEDS_BASELM" == *" $lesson "* ]]; then
  "$ROOT/baselm.sh"
fi
if ! python - "$port" <<'PY'
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
PY
then
  die "port $port is busy (another Jupyter server?)" \
    "stop that server, or pick another port: ./notebook.sh $lesson --port $((port + 1))" 4
fi

# The student's JupyterLab: nbgrader's Validate button stays; the instructor's Formgrader, Create
# Assignment, Course List, the (exchange-only) Assignments list and the Nbgrader menu they would
# fill are switched off.
jconf="$WORKSPACE/.jupyter-student"
mkdir -p "$jconf/labconfig"
cat >"$jconf/labconfig/page_config.json" <<'JSON'
{"disabledExtensions": {"@jupyter/nbgrader:formgrader": true, "@jupyter/nbgrader:create-assignment": true,
  "@jupyter/nbgrader:course-list": true, "@jupyter/nbgrader:assignment-list": true,
  "@jupyter/nbgrader:menu": true}}
JSON
# No "fetch Jupyter news?" question and no update check (a lesson needs no network): a defaults
# file in the venv's JupyterLab settings, which the student's own settings still override.
overrides="$VENV/share/jupyter/lab/settings/overrides.d"
mkdir -p "$overrides"
cat >"$overrides/rlvr-course.json" <<'JSON'
{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}
JSON
cat >"$jconf/jupyter_server_config.json" <<'JSON'
{"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": false,
  "nbgrader.server_extensions.course_list": false, "nbgrader.server_extensions.assignment_list": false}}}
JSON
export JUPYTER_CONFIG_PATH="$jconf${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"

args=(--ServerApp.root_dir="$dest" --ServerApp.ip=127.0.0.1 --ServerApp.port="$port"
  --ServerApp.port_retries=0 --LabApp.default_url="/lab/tree/$notebook")
[ "$browser" = 1 ] || args+=(--no-browser)
[ "$(id -u)" != 0 ] || args+=(--allow-root)   # containers and CI run as root
echo "==> starting JupyterLab on port $port (Ctrl-C to stop; your work stays in $dest)"
cd "$dest"
exec python -m jupyter lab "${args[@]}"
