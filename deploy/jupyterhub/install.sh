#!/usr/bin/env bash
# Install and start the course's JupyterHub on one Linux server (run as root). See README.md here.
#
#   sudo deploy/jupyterhub/install.sh                 install everything, then start the Hub
#   sudo deploy/jupyterhub/install.sh --no-start      install only (start later: see README)
#   sudo deploy/jupyterhub/install.sh --deps-only     only JupyterHub (course venv) and the proxy (npm)
#
# Settings (environment variables, with their defaults):
#   COURSE_INSTRUCTOR=instructor     the Unix account that grades (created if missing)
#   COURSE_GROUP=rlvr-students       students' Unix group (add students: useradd -m -G rlvr-students NAME)
#   COURSE_PREFIX=/srv/rlvr-grpo     shared, read-only: course files, venv, Jupyter configs
#   COURSE_EXCHANGE=/srv/nbgrader/exchange
#   COURSE_HUB_STATE=/srv/jupyterhub
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
INSTRUCTOR="${COURSE_INSTRUCTOR:-instructor}"
GROUP="${COURSE_GROUP:-rlvr-students}"
PREFIX="${COURSE_PREFIX:-/srv/rlvr-grpo}"
EXCHANGE="${COURSE_EXCHANGE:-/srv/nbgrader/exchange}"
STATE="${COURSE_HUB_STATE:-/srv/jupyterhub}"
JUPYTERHUB_PIN="$(grep -E '^jupyterhub==' "$REPO/requirements-dev.lock" | head -n 1)"
CHP_VERSION="5.3.0"

die() { echo "error: $1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (it creates users, folders, and spawns servers as users)"

deps() {
  local venv="$1"
  "$venv/bin/pip" install -q "$JUPYTERHUB_PIN" -c "$REPO/requirements-dev.lock"  # its deps locked too
  if ! command -v configurable-http-proxy >/dev/null; then
    command -v npm >/dev/null || apt-get install -y -qq nodejs npm
    npm install -g "configurable-http-proxy@$CHP_VERSION"
  fi
}

if [ "${1:-}" = "--deps-only" ]; then
  deps "$REPO/.venv"
  exit 0
fi

echo "==> shared course files in $PREFIX (read-only for users; no solutions, no gradebook)"
mkdir -p "$PREFIX"
# The student bundle is what users may read; the instructor's course (with solutions) stays private.
(cd "$REPO" && .venv/bin/python -m course.instructor bundle --out "$PREFIX/dist")
rm -rf "$PREFIX/course"
mv "$PREFIX/dist/rlvr-grpo-module9" "$PREFIX/course"
rm -rf "$PREFIX/dist"
if [ -d "$REPO/artifacts/baselm" ]; then
  mkdir -p "$PREFIX/course/artifacts" && cp -r "$REPO/artifacts/baselm" "$PREFIX/course/artifacts/"
fi

echo "==> the users' Python: $PREFIX/venv (course requirements + JupyterHub, installed, not editable)"
[ -x "$PREFIX/venv/bin/python" ] || python3.11 -m venv "$PREFIX/venv"
# torch's CPU build alone first on a server without an NVIDIA GPU (scripts/torch_index.sh says why)
idx="$(bash "$PREFIX/course/scripts/torch_index.sh" "$PREFIX/venv/bin/python")"
if [ -n "$idx" ]; then
  "$PREFIX/venv/bin/pip" install -q --no-deps --index-url "$idx" "$(grep -E '^torch==' "$PREFIX/course/requirements.lock")"
fi
"$PREFIX/venv/bin/pip" install -q -r "$PREFIX/course/requirements.lock"
"$PREFIX/venv/bin/pip" install -q "$PREFIX/course"
deps "$PREFIX/venv"
[ -d "$PREFIX/course/artifacts/baselm" ] || (cd "$PREFIX/course" && BASELM_DIR="$PREFIX/course/artifacts/baselm" "$PREFIX/venv/bin/python" -m helpers.baselm build)

echo "==> accounts: group $GROUP, instructor $INSTRUCTOR"
getent group "$GROUP" >/dev/null || groupadd "$GROUP"
id "$INSTRUCTOR" >/dev/null 2>&1 || { useradd -m -G "$GROUP" "$INSTRUCTOR"; echo "    set a password: passwd $INSTRUCTOR"; }
HOME_I="$(getent passwd "$INSTRUCTOR" | cut -d: -f6)"
chmod 700 "$HOME_I"
if [ ! -d "$HOME_I/course" ]; then
  git clone -q "$REPO" "$HOME_I/course"
  chown -R "$INSTRUCTOR:$INSTRUCTOR" "$HOME_I/course"
fi

echo "==> nbgrader exchange $EXCHANGE (777) and the Jupyter configs of students and instructor"
# from the repository, whose course package holds hub.py (the users' venv has the bundle's helpers only)
(cd "$REPO" && "$PREFIX/venv/bin/python" - "$EXCHANGE" "$PREFIX" "$HOME_I/course") <<'PY'
import sys
from pathlib import Path
from course import hub
exchange, prefix, course = sys.argv[1:4]
hub.prepare_exchange(exchange)
hub.write_jupyter_config(Path(prefix) / "jupyter-student", exchange)
hub.write_jupyter_config(Path(prefix) / "jupyter-instructor", exchange, course_root=course, student=False)
PY
chmod -R a+rX,go-w "$PREFIX"
mkdir -p "$STATE" && chmod 700 "$STATE"
cp "$HERE/jupyterhub_config.py" "$STATE/jupyterhub_config.py"

cat <<EOF
==> installed. Start the Hub:
    cd $STATE && COURSE_VENV=$PREFIX/venv COURSE_SHARED=$PREFIX/course \\
      COURSE_STUDENT_CONFIG=$PREFIX/jupyter-student COURSE_INSTRUCTOR_CONFIG=$PREFIX/jupyter-instructor \\
      COURSE_INSTRUCTORS=$INSTRUCTOR COURSE_GROUP=$GROUP COURSE_HUB_STATE=$STATE \\
      $PREFIX/venv/bin/jupyterhub -f $STATE/jupyterhub_config.py
EOF
[ "${1:-}" = "--no-start" ] && exit 0
cd "$STATE"
export COURSE_VENV="$PREFIX/venv" COURSE_SHARED="$PREFIX/course" COURSE_HUB_STATE="$STATE"
export COURSE_STUDENT_CONFIG="$PREFIX/jupyter-student" COURSE_INSTRUCTOR_CONFIG="$PREFIX/jupyter-instructor"
export COURSE_INSTRUCTORS="$INSTRUCTOR" COURSE_GROUP="$GROUP"
exec "$PREFIX/venv/bin/jupyterhub" -f "$STATE/jupyterhub_config.py"
