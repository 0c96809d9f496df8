"""JupyterHub for one server: Unix users (PAM), the course venv as everyone's kernel, nbgrader's
exchange, the Formgrader for the instructor only. See deploy/jupyterhub/README.md.

Every setting comes from an environment variable with the value ``install.sh`` uses (the CI test,
tests/test_hub.py, sets them to temporary folders on 127.0.0.1):

    COURSE_HUB_IP / COURSE_HUB_PORT   where the Hub listens (0.0.0.0:8000; put TLS in front)
    COURSE_HUB_STATE                  the Hub's database, cookie secret, proxy token (/srv/jupyterhub)
    COURSE_VENV                       the course's Python environment (/srv/rlvr-grpo/venv)
    COURSE_SHARED                     the shared, read-only course files (/srv/rlvr-grpo/course);
                                      its artifacts/baselm/ is the BaseLM every user reads
    COURSE_STUDENT_CONFIG             Jupyter config folder of students (course/hub.py writes it)
    COURSE_INSTRUCTOR_CONFIG          the same for instructors (with the course directory)
    COURSE_INSTRUCTORS                comma-separated Unix users with the Formgrader (Hub admins)
    COURSE_GROUP                      Unix group whose members may log in (rlvr-students)
    COURSE_HUB_API_TOKEN              optional: a service token for scripts (tests, measure_scale)
"""

import os
import pwd
from pathlib import Path

c = get_config()  # noqa: F821

env = os.environ.get
VENV = Path(env("COURSE_VENV", "/srv/rlvr-grpo/venv"))
SHARED = Path(env("COURSE_SHARED", "/srv/rlvr-grpo/course"))
STATE = Path(env("COURSE_HUB_STATE", "/srv/jupyterhub"))
STUDENT_CONFIG = env("COURSE_STUDENT_CONFIG", "/srv/rlvr-grpo/jupyter-student")
INSTRUCTOR_CONFIG = env("COURSE_INSTRUCTOR_CONFIG", "/srv/rlvr-grpo/jupyter-instructor")
INSTRUCTORS = {u for u in env("COURSE_INSTRUCTORS", "instructor").split(",") if u}
GROUP = env("COURSE_GROUP", "rlvr-students")

# --- network and state --------------------------------------------------------------------------
c.JupyterHub.ip = env("COURSE_HUB_IP", "0.0.0.0")
c.JupyterHub.port = int(env("COURSE_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env("COURSE_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env('COURSE_PROXY_API_PORT', '8001')}"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
if env("COURSE_CHP"):
    c.ConfigurableHTTPProxy.command = [env("COURSE_CHP")]

# --- who may log in: Unix accounts (PAM) in the course group, instructors as Hub admins ----------
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {GROUP}
c.Authenticator.allowed_users = set(INSTRUCTORS)
c.Authenticator.admin_users = set(INSTRUCTORS)
c.PAMAuthenticator.open_sessions = False  # no systemd-logind in containers; nothing needs it

# --- each user's server: the course venv, started as that Unix user in their home ---------------
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(VENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = int(env("COURSE_SPAWN_TIMEOUT", "120"))
c.Spawner.http_timeout = int(env("COURSE_SPAWN_TIMEOUT", "120"))
c.Spawner.environment = {
    "PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin",
    # One read-only BaseLM for everybody (helpers/baselm.py reads BASELM_DIR), never a copy per user.
    "BASELM_DIR": str(SHARED / "artifacts" / "baselm"),
    "MPLBACKEND": "Agg",
    "OMP_NUM_THREADS": env("COURSE_USER_THREADS", "1"),
}
c.Spawner.env_keep = ["LANG", "LC_ALL", "TZ"]


def _per_role(spawner):
    """Students get the student Jupyter config (no Formgrader, exchange + course id); instructors get
    theirs (Formgrader on their course directory). Home folders are kept private (0700)."""
    name = spawner.user.name
    config = INSTRUCTOR_CONFIG if name in INSTRUCTORS else STUDENT_CONFIG
    spawner.environment["JUPYTER_CONFIG_PATH"] = config
    try:
        home = pwd.getpwnam(name).pw_dir
    except KeyError:
        return
    if os.path.isdir(home):
        os.chmod(home, 0o700)


c.Spawner.pre_spawn_hook = _per_role

# An API token for scripts (tests/test_hub.py, deploy/jupyterhub/measure_scale.py): spawn and stop
# servers, reach them (the nbgrader Assignments API). Unset in a normal deployment.
if env("COURSE_HUB_API_TOKEN"):
    c.JupyterHub.services = [{"name": "course-admin", "api_token": env("COURSE_HUB_API_TOKEN")}]
    c.JupyterHub.load_roles = [{
        "name": "course-admin",
        "services": ["course-admin"],
        "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"],
    }]  # fmt: skip

# Idle servers are stopped by the Hub's own culler service only where installed (README, "Scale").
