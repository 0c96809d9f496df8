"""The student's JupyterLab: which of nbgrader's parts are switched off, and the settings defaults.

One list for both places a student's JupyterLab starts: ``course open`` on the student's own machine
and the course's JupyterHub (whose instructor side writes each user's config with ``write_config``).
nbgrader's Validate button stays everywhere. Off everywhere: the Formgrader, Create Assignment and
the Course List, an instructor's tools. Off on a laptop only: the Assignments list and the Nbgrader
menu, which need nbgrader's exchange (JupyterHub has one; a laptop would show an empty list and an
empty menu).

Standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path

DISABLED_LAB = [
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
]
DISABLED_SERVER = [
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
]
# without an exchange, the Assignments list and the menu it would fill are empty
NO_EXCHANGE_LAB = ["@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu"]
NO_EXCHANGE_SERVER = ["nbgrader.server_extensions.assignment_list"]
# JupyterLab's defaults a lesson wants: no "fetch Jupyter news?" question, no update check (a
# lesson needs no network). Written as defaults (overrides.d): a student's own settings still win.
SETTINGS_DEFAULTS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}
}


def disabled(exchange: bool) -> tuple[list[str], list[str]]:
    """(lab extensions, server extensions) a student does not get, with or without an exchange."""
    if exchange:
        return list(DISABLED_LAB), list(DISABLED_SERVER)
    return DISABLED_LAB + NO_EXCHANGE_LAB, DISABLED_SERVER + NO_EXCHANGE_SERVER


def write_config(dest: Path, exchange: bool) -> Path:
    """A Jupyter config folder (put it first on ``JUPYTER_CONFIG_PATH``) that switches those off:
    JupyterLab's page config (lab extensions) and the server's config (server extensions)."""
    lab, server = disabled(exchange)
    dest = Path(dest)
    (dest / "labconfig").mkdir(parents=True, exist_ok=True)
    page = {"disabledExtensions": dict.fromkeys(lab, True)}
    (dest / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2) + "\n")
    server_config = {"ServerApp": {"jpserver_extensions": dict.fromkeys(server, False)}}
    (dest / "jupyter_server_config.json").write_text(json.dumps(server_config, indent=2) + "\n")
    return dest


def write_settings_defaults(prefix: Path) -> Path:
    """``SETTINGS_DEFAULTS`` into ``<prefix>/share/jupyter/lab/settings/overrides.d`` (``prefix``:
    the environment JupyterLab runs from)."""
    folder = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.d"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rlvr-course.json"
    path.write_text(json.dumps(SETTINGS_DEFAULTS, indent=2) + "\n")
    return path
