"""Measure the Hub path for N simulated students on this machine: spawn, fetch, submit.

    sudo .venv/bin/python -m deploy.jupyterhub.measure_scale --students 20   # from the repository root

As root: creates N throwaway Unix users (rlvr_s00 ...), a private instructor course, the exchange,
starts JupyterHub with deploy/jupyterhub/jupyterhub_config.py on 127.0.0.1, releases 9.2, then
for every student (in turn, through the Hub API): spawn the server, fetch 9.2 through the nbgrader
Assignments API, submit it. Prints the times, the memory (RSS) of the idle user servers and of one
server with a running 9.2 kernel, then removes the users. Nothing is graded (grading cost: see
course/docs/INSTRUCTOR.md, "Class on JupyterHub"). Uses the helpers of tests/test_hub.py.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course import hub as H
from tests import test_hub as T

ROOT = Path(__file__).resolve().parents[2]


def rss_mb(user: str) -> float:
    """Resident memory of every process of ``user`` (MB)."""
    uid = pwd.getpwnam(user).pw_uid
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for line in open(f"/proc/{pid}/status"):  # noqa: SIM115
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=20)
    a = ap.parse_args()
    why = T._why_not()
    if why:
        raise SystemExit(f"cannot measure: {why}")
    names = [f"rlvr_s{i:02d}" for i in range(a.students)]
    base = Path(tempfile.mkdtemp(prefix="rlvr-scale-", dir="/tmp"))
    os.chmod(base, 0o755)
    opened = []
    for d in Path(os.path.realpath(sys.executable)).parents:
        if d != Path("/") and not d.stat().st_mode & 0o001:
            opened.append((d, d.stat().st_mode & 0o7777))
            os.chmod(d, (d.stat().st_mode & 0o7777) | 0o001)
    subprocess.run(["groupadd", T.GROUP], capture_output=True)
    hub = None
    out: dict = {"students": a.students, "cores": os.cpu_count()}
    try:
        T._add_user(T.INSTRUCTOR, secrets.token_urlsafe(12), [T.GROUP])
        for n in names:
            T._add_user(n, secrets.token_urlsafe(12), [T.GROUP])
        exchange = H.prepare_exchange(base / "exchange")
        course = T._home(T.INSTRUCTOR) / "course"
        (course / "course").mkdir(parents=True)
        for rel in [
            "nbgrader_config.py",
            "course/nbgrader_config.py",
            "course/__init__.py",
            "course/build_lessons.py",
        ]:
            shutil.copy(ROOT / rel, course / rel)
        for rel in ["grading", "lessons"]:  # the trusted verdict reads the hidden tests there
            shutil.copytree(ROOT / "course" / rel, course / "course" / rel)
        shutil.copytree(ROOT / "source_notebooks" / "9.2", course / "source_notebooks" / "9.2")
        subprocess.run(["chown", "-R", f"{T.INSTRUCTOR}:{T.INSTRUCTOR}", str(course)], check=True)
        student_cfg = H.write_jupyter_config(base / "jupyter-student", exchange)
        prof_cfg = H.write_jupyter_config(base / "jupyter-instructor", exchange,
                                          course_root=course, student=False)  # fmt: skip
        (base / "hub").mkdir(mode=0o700)
        for args in (["generate_assignment", "9.2", "--force"], ["release_assignment", "9.2"]):
            T.as_user(T.INSTRUCTOR, "nbgrader", *args, config=prof_cfg, cwd=course)
        t = time.time()
        hub = T.Hub(base, {
            "COURSE_VENV": str(T.VENV_BIN.parent), "COURSE_SHARED": str(ROOT),
            "COURSE_HUB_STATE": str(base / "hub"), "COURSE_STUDENT_CONFIG": str(student_cfg),
            "COURSE_INSTRUCTOR_CONFIG": str(prof_cfg), "COURSE_INSTRUCTORS": T.INSTRUCTOR,
            "COURSE_GROUP": T.GROUP,
        })  # fmt: skip
        out["hub_start_s"] = round(time.time() - t, 1)
        spawn, cycle = [], []
        for n in names:
            t = time.time()
            hub.spawn(n)
            spawn.append(time.time() - t)
            t = time.time()
            data = {"course_id": T.COURSE_ID, "assignment_id": "9.2"}
            assert hub.user_api(n, "POST", "/assignments/fetch", data=data).status_code == 200
            r = hub.user_api(n, "POST", "/assignments/submit", data=data)
            assert r.status_code == 200 and r.json().get("success"), r.text
            cycle.append(time.time() - t)
        out["spawn_s"] = {"median": round(statistics.median(spawn), 1), "max": round(max(spawn), 1),
                          "total": round(sum(spawn), 1)}  # fmt: skip
        out["fetch_submit_s"] = {"median": round(statistics.median(cycle), 2),
                                 "max": round(max(cycle), 2)}  # fmt: skip
        idle = [rss_mb(n) for n in names]
        out["idle_server_rss_mb"] = {
            "median": round(statistics.median(idle)),
            "max": round(max(idle)),
        }
        # one server with the lesson's kernel running (imports numpy, torch, helpers)
        r = hub.user_api(names[0], "POST", "/api/sessions", json={
            "path": "9.2/9.2.ipynb", "type": "notebook", "name": "9.2.ipynb",
            "kernel": {"name": "python3"}})  # fmt: skip
        assert r.status_code in (200, 201), r.text
        time.sleep(10)
        code = ("import torch, numpy, helpers, matplotlib.pyplot as plt; "
                "from helpers import baselm; print('ok')")  # fmt: skip
        kernel = r.json()["kernel"]["id"]
        T.as_user(names[0], str(T.VENV_BIN / "python"), "-c",
                  "import sys; from jupyter_client import BlockingKernelClient as C; "
                  "import glob; f = glob.glob(f'/home/{sys.argv[1]}/.local/share/jupyter/runtime/"
                  "kernel-{sys.argv[2]}.json')[0]; c = C(connection_file=f); c.load_connection_file();"
                  " c.start_channels(); c.execute_interactive(sys.argv[3], timeout=300)",
                  names[0], kernel, code)  # fmt: skip
        out["server_with_kernel_rss_mb"] = round(rss_mb(names[0]))
        print(json.dumps(out, indent=2))
    finally:
        if hub is not None:
            for n in names:
                try:
                    hub.api("DELETE", f"/hub/api/users/{n}/server")
                except Exception:  # noqa: BLE001
                    pass
            time.sleep(3)
            from tests.test_notebook_sh import stop

            stop(hub.proc)
        for n in [*names, T.INSTRUCTOR]:
            subprocess.run(["userdel", "-f", "-r", n], capture_output=True)
        subprocess.run(["groupdel", T.GROUP], capture_output=True)
        for d, mode in opened:
            os.chmod(d, mode)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
