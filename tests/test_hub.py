"""A class on JupyterHub, end to end on 127.0.0.1, with real Unix users and nbgrader's exchange.

The test (as root) creates an instructor and three students, a private course directory for the
instructor, the exchange and the Jupyter configs of course/hub.py, and starts JupyterHub with
deploy/jupyterhub/jupyterhub_config.py (PAM login, LocalProcessSpawner: each server runs as its
Unix user). Then:

- the instructor releases 9.1 and 9.2 (``nbgrader release_assignment``);
- ana (correct) goes through the Hub in headless Chromium: log in, open the Assignments list (no
  Formgrader in her JupyterLab), fetch 9.2, open it, run a cell, submit; she also fetches and
  submits 9.1 from her account's command line;
- ben (buggy: one planted bug) fetches and submits through his server's nbgrader API, spawned by
  the Hub;
- eve (hostile) tries to list the inbound folder, read the instructor's course and ana's home and
  feedback, submits a notebook that attacks the grader, and forges a submission in ana's name;
- the instructor collects (the forged entry is refused), autogrades in the sandbox
  (course/instructor.py), generates and releases feedback; every student fetches theirs; the
  worked solution of 9.2 is released after the (past) due date and fetched.

Grades must equal the expected ones (tests/grading/students.py). The wall time is printed.
Skips only where the machine cannot do it: not root, no useradd, no JupyterHub or proxy.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from tests.conftest import ROOT, free_port

pytestmark = pytest.mark.slow

VENV_BIN = Path(sys.executable).parent
CONFIG = ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py"
COURSE_ID = "rlvr-grpo-module9"
GROUP = "rlvr-hubtest"
INSTRUCTOR, ANA, BEN, EVE = "rlvr_prof", "rlvr_ana", "rlvr_ben", "rlvr_eve"
STUDENTS = [ANA, BEN, EVE]
PAST_DUE = "2026-01-01 12:00:00 UTC"
ARTIFACTS = ROOT / "test-artifacts"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "creating Unix users and spawning their servers needs root"
    for tool in ("useradd", "userdel", "chpasswd", "groupadd"):
        if not shutil.which(tool):
            return f"{tool} is missing"
    if not (VENV_BIN / "jupyterhub").exists():
        return "JupyterHub is not installed in the course venv (./test.sh installs requirements-dev.lock)"
    if not shutil.which("configurable-http-proxy"):
        return "configurable-http-proxy is missing (npm install -g configurable-http-proxy)"
    return None


def _ensure_proxy() -> None:
    if not shutil.which("configurable-http-proxy") and os.geteuid() == 0 and shutil.which("npm"):
        subprocess.run(["bash", str(ROOT / "deploy" / "jupyterhub" / "install.sh"), "--deps-only"],
                       check=False, capture_output=True, timeout=600)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Unix users and running commands as them


def _add_user(name: str, password: str, groups: list[str]) -> None:
    subprocess.run(["userdel", "-r", name], capture_output=True)
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", "-G", ",".join(groups), name], check=True)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    os.chmod(pwd.getpwnam(name).pw_dir, 0o700)


def _home(name: str) -> Path:
    return Path(pwd.getpwnam(name).pw_dir)


def as_user(name: str, *cmd: str, config: Path | None = None, cwd: Path | None = None,
            check: bool = True, timeout: int = 900, **env_extra) -> subprocess.CompletedProcess:  # fmt: skip
    """Run ``cmd`` as the Unix user ``name`` (their uid, gid and groups, their HOME)."""
    pw = pwd.getpwnam(name)
    env = {"HOME": pw.pw_dir, "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
           "PATH": f"{VENV_BIN}:/usr/bin:/bin", "OMP_NUM_THREADS": "1", **env_extra}  # fmt: skip
    if config:
        env["JUPYTER_CONFIG_PATH"] = str(config)
    groups = [g.gr_gid for g in grp.getgrall() if name in g.gr_mem]
    out = subprocess.run(list(cmd), user=pw.pw_uid, group=pw.pw_gid, extra_groups=groups,
                         cwd=cwd or pw.pw_dir, env=env, capture_output=True, text=True,
                         timeout=timeout)  # fmt: skip
    if check and out.returncode != 0:
        raise AssertionError(f"as {name}: {' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    return out


def _write_as(name: str, path: Path, nb) -> None:
    nbformat.write(nb, path)
    pw = pwd.getpwnam(name)
    os.chown(path, pw.pw_uid, pw.pw_gid)


# ---------------------------------------------------------------------------------------------
# the Hub


class Hub:
    def __init__(self, base: Path, env: dict[str, str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(24)
        env = dict(os.environ, **env, COURSE_HUB_IP="127.0.0.1", COURSE_HUB_PORT=str(self.port),
                   COURSE_HUB_API_PORT=str(free_port()), COURSE_PROXY_API_PORT=str(free_port()),
                   COURSE_HUB_API_TOKEN=self.token, COURSE_SPAWN_TIMEOUT="300")  # fmt: skip
        env["PATH"] = f"{VENV_BIN}:{env['PATH']}"
        self.log = open(base / "hub.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(CONFIG)],
                                     cwd=base / "hub", env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        self.base = base
        self._wait(lambda: self.api("GET", "/hub/api/").status_code == 200, 120, "the Hub API")

    def api(self, method: str, path: str, **kw):
        import requests

        headers = {"Authorization": f"token {self.token}", **kw.pop("headers", {})}
        return requests.request(method, self.url + path, headers=headers, timeout=60, **kw)

    def _wait(self, ok, timeout: float, what: str):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterHub exited:\n{self.tail()}")
            try:
                if ok():
                    return
            except Exception:  # noqa: BLE001 - not up yet
                pass
            time.sleep(1)
        raise TimeoutError(f"{what} did not come up in {timeout:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.base / "hub.log").read_text()[-6000:]

    def spawn(self, user: str) -> None:
        if self.api("GET", f"/hub/api/users/{user}").status_code == 404:  # never logged in yet
            assert self.api("POST", f"/hub/api/users/{user}").status_code == 201
        r = self.api("POST", f"/hub/api/users/{user}/server")
        assert r.status_code in (201, 202, 400), r.text  # 400: already running

        def ready():
            u = self.api("GET", f"/hub/api/users/{user}").json()
            return u.get("servers", {}).get("", {}).get("ready")

        self._wait(ready, 300, f"{user}'s server")

    def user_api(self, user: str, method: str, path: str, **kw):
        return self.api(method, f"/user/{user}{path}", **kw)

    def close(self):
        from tests.test_notebook_sh import stop

        for u in [ANA, BEN, EVE]:
            try:
                self.api("DELETE", f"/hub/api/users/{u}/server")
            except Exception:  # noqa: BLE001 - best effort before stopping the Hub
                pass
        time.sleep(2)
        stop(self.proc)
        self.log.close()


# ---------------------------------------------------------------------------------------------
# the browser part (ana)


def _browser_student(hub: Hub, password: str, answers) -> dict:
    """Log in, open the Assignments list, fetch 9.2, open it, run a cell, save, submit."""
    from tests.test_browser import CHROMIUM, FLAGS, lab_settings

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        return {"skipped": f"Chromium is not installed at {CHROMIUM}"}
    home = _home(ANA)
    settings = lab_settings(home / ".jupyter" / "lab" / "user-settings")
    for p in [home / ".jupyter", *(home / ".jupyter").rglob("*")]:
        os.chown(p, pwd.getpwnam(ANA).pw_uid, pwd.getpwnam(ANA).pw_gid)
    del settings
    seen: dict = {}
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = b.new_page(viewport={"width": 1800, "height": 1000})
        page.set_default_timeout(120_000)
        try:
            page.goto(hub.url + "/hub/login")
            page.fill("input[name=username]", ANA)
            page.fill("input[name=password]", password)
            page.click("input[type=submit], button[type=submit]")
            page.wait_for_url(f"**/user/{ANA}/lab**", timeout=300_000)
            page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Nbgrader')", timeout=180_000)
            page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
            seen["menu"] = page.locator(".lm-Menu-itemLabel").all_inner_texts()
            page.click(".lm-Menu-itemLabel:text-is('Assignment List')")
            row = page.locator(".list_item:has-text('9.2'):has(button:text-is('Fetch'))")
            row.wait_for()
            row.locator("button:text-is('Fetch')").click()
            page.locator(".list_item:has-text('9.2') button:text-is('Submit')").wait_for()
            nb_path = home / "9.2" / "9.2.ipynb"
            seen["fetched"] = (
                nb_path.is_file() and nb_path.stat().st_uid == pwd.getpwnam(ANA).pw_uid
            )
            _write_as(ANA, nb_path, answers)  # her answers, typed in before she opens it
            page.goto(f"{hub.url}/user/{ANA}/lab/tree/9.2/9.2.ipynb")
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            deadline = time.time() + 180
            while (
                time.time() < deadline
                and "| Idle" not in page.locator("#jp-main-statusbar").inner_text()
            ):
                time.sleep(1)
            first_code = page.locator(".jp-CodeCell").first
            first_code.locator(".jp-InputArea-editor").click()
            page.keyboard.press("Shift+Enter")
            prompt = first_code.locator(".jp-InputPrompt")
            deadline = time.time() + 180
            while time.time() < deadline and not prompt.inner_text().strip().startswith("[1"):
                time.sleep(1)
            seen["ran_cell"] = prompt.inner_text().strip()
            page.keyboard.press("Control+s")
            time.sleep(3)
            # nbgrader's Validate (the visible tests, run by her server) before she submits
            if not page.locator(".validate-button").count():  # toolbar overflow
                page.locator(".jp-Toolbar-responsive-opener").first.click()
            page.locator(".validate-button").first.click()
            dialog = page.locator(".jp-Dialog:has-text('Validation Results')")
            dialog.wait_for(timeout=300_000)
            deadline = time.time() + 300
            while (
                time.time() < deadline
                and "Validat" in dialog.inner_text()
                and not re.search(r"Success|passes|failed|Error", dialog.inner_text())
            ):
                time.sleep(1)
            seen["validate"] = dialog.inner_text()
            page.keyboard.press("Escape")
            page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
            page.click(".lm-Menu-itemLabel:text-is('Assignment List')")
            page.locator(".list_item:has-text('9.2') button:text-is('Submit')").first.click()
            page.locator("#submitted_assignments_list .list_item:has-text('9.2')").first.wait_for()
            seen["submitted"] = True
            seen["formgrader_page"] = page.goto(f"{hub.url}/user/{ANA}/formgrader").status
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "hub-student.png"))
            raise
        finally:
            b.close()
    return seen


# ---------------------------------------------------------------------------------------------
# what eve tries from her own account

EVE_PROBE = r"""
import json, os, sys
exchange, prof_course, ana_home = sys.argv[1:4]
tries = {
    "list inbound": lambda: os.listdir(os.path.join(exchange, "rlvr-grpo-module9", "inbound")),
    "list feedback": lambda: os.listdir(os.path.join(exchange, "rlvr-grpo-module9", "feedback")),
    "list instructor course": lambda: os.listdir(prof_course),
    "read gradebook": lambda: open(os.path.join(prof_course, "gradebook.db"), "rb").read(16),
    "read source notebook": lambda: open(os.path.join(prof_course, "source_notebooks", "9.2",
                                                      "9.2.ipynb")).read(16),
    "list ana's home": lambda: os.listdir(ana_home),
    "read ana's cache": lambda: os.listdir(os.path.join(ana_home, ".local", "share", "jupyter",
                                                        "nbgrader_cache")),
}
out = {}
for name, f in tries.items():
    try:
        f()
        out[name] = "READ"
    except OSError as e:
        out[name] = type(e).__name__
print(json.dumps(out))
"""

# A cell in eve's notebook that looks for other students' work and the gradebook while it is graded.
EVE_CELL = """
import glob, os
_found = []
for _pat in ["/home/*/course/gradebook.db", "/home/*/course/submitted/*/*/*.ipynb", "/home/*"]:
    _found += glob.glob(_pat)
print("eve saw:", _found)
"""


# ---------------------------------------------------------------------------------------------
# the whole cycle, once per module


@pytest.fixture(scope="module")
def hub_class():
    why = _why_not()
    if why and "configurable-http-proxy" in why:
        _ensure_proxy()
        why = _why_not()
    if why:
        pytest.skip(why)
    from tests.grading import students as S
    from tests.grading.harness import Lesson, VariantFile, run_variants

    t0 = time.time()
    times: dict[str, float] = {}
    base = Path(tempfile.mkdtemp(prefix="rlvr-hub-", dir="/tmp"))
    os.chmod(base, 0o755)
    # The course venv's interpreter may live under a home that others cannot enter (pyenv in
    # /root): let the users traverse it (no listing) for the test, restored afterwards.
    interp = Path(os.path.realpath(sys.executable))
    opened = []
    for d in interp.parents:
        if d == Path("/"):
            break
        mode = d.stat().st_mode
        if not mode & stat.S_IXOTH:
            opened.append((d, stat.S_IMODE(mode)))
            os.chmod(d, stat.S_IMODE(mode) | 0o001)
            print(f"[hub test] {d} made traversable (o+x) for the test users; restored after")
    passwords = {u: secrets.token_urlsafe(12) for u in [INSTRUCTOR, *STUDENTS]}
    subprocess.run(["groupdel", GROUP], capture_output=True)
    subprocess.run(["groupadd", GROUP], check=True)
    hub = None
    try:
        _add_user(INSTRUCTOR, passwords[INSTRUCTOR], [GROUP])
        for u in STUDENTS:
            _add_user(u, passwords[u], [GROUP])
        from course import hub as H

        exchange = H.prepare_exchange(base / "exchange")
        course = _home(INSTRUCTOR) / "course"
        (course / "course").mkdir(parents=True)
        # the grading code, and the lesson sources: the trusted verdict reads the hidden tests
        # there (course/build_lessons.py), in the instructor's private course, never a student's
        for rel in ["nbgrader_config.py", "course/nbgrader_config.py", "course/__init__.py",
                    "course/instructor.py", "course/hub.py", "course/build_lessons.py"]:  # fmt: skip
            shutil.copy(ROOT / rel, course / rel)
        for rel in ["grading", "lessons"]:
            shutil.copytree(ROOT / "course" / rel, course / "course" / rel,
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        for lesson in ["9.1", "9.2"]:
            shutil.copytree(
                ROOT / "source_notebooks" / lesson, course / "source_notebooks" / lesson
            )
        subprocess.run(["chown", "-R", f"{INSTRUCTOR}:{INSTRUCTOR}", str(course)], check=True)
        os.chmod(course, 0o700)  # the instructor's course (solutions, gradebook) is theirs alone
        student_cfg = H.write_jupyter_config(base / "jupyter-student", exchange)
        prof_cfg = H.write_jupyter_config(base / "jupyter-instructor", exchange,
                                          course_root=course, student=False)  # fmt: skip
        (base / "hub").mkdir(mode=0o700)

        def prof(*args: str, **kw):
            return as_user(INSTRUCTOR, *args, config=prof_cfg, cwd=course, **kw)

        # --- the instructor releases 9.1 and 9.2 (9.2's due date is in the past: solutions) ----
        t = time.time()
        for lesson in ["9.1", "9.2"]:
            prof("nbgrader", "generate_assignment", lesson, "--force")
        prof("nbgrader", "db", "assignment", "add", "9.2", f"--duedate={PAST_DUE}")
        prof("nbgrader", "release_assignment", "9.1", "--force")
        prof("nbgrader", "release_assignment", "9.2", "--force")
        listed = as_user(ANA, "nbgrader", "list", config=student_cfg).stdout + as_user(
            ANA, "nbgrader", "list", config=student_cfg).stderr  # fmt: skip
        times["release"] = time.time() - t

        # --- the submissions the three students will make, and their expected points ------------
        lesson = "9.2"
        info = Lesson.load(lesson)
        first = next(iter(info.solution_cells))
        bug = next(v for v in VariantFile.load(lesson).variants
                   if v.kind == "bug" and info.function_cell[v.function] == first)  # fmt: skip
        caught = run_variants(lesson, [bug])[bug.name]
        expected = {
            ANA: S.expected_points(lesson, set()),
            BEN: S.expected_points(lesson, {c for c, failed in caught.items() if failed}),
        }
        expected_91 = S.expected_points("9.1", set())
        tests_91 = set(Lesson.load("9.1").test_cells)
        eve_nb, expected[EVE] = S.attacker(lesson, "monkeypatch")
        eve_nb.cells.insert(2, nbformat.v4.new_code_cell(EVE_CELL))

        hub = Hub(base, {
            "COURSE_VENV": str(VENV_BIN.parent), "COURSE_SHARED": str(ROOT),
            "COURSE_HUB_STATE": str(base / "hub"), "COURSE_STUDENT_CONFIG": str(student_cfg),
            "COURSE_INSTRUCTOR_CONFIG": str(prof_cfg), "COURSE_INSTRUCTORS": INSTRUCTOR,
            "COURSE_GROUP": GROUP,
        })  # fmt: skip

        # --- ana through the Hub in Chromium; then 9.1 from her terminal -------------------------
        t = time.time()
        ana_nb = S.filled(lesson)
        for cell in ana_nb.cells:  # her written answers too (Validate wants every answer given)
            if cell.cell_type == "markdown" and cell.metadata.get("nbgrader", {}).get("solution"):
                cell.source = "The group mean is a baseline; GRPO drops the learned critic."
        browser = _browser_student(hub, passwords[ANA], ana_nb)
        if "skipped" in browser:  # no Chromium: her 9.2 goes through her server's API instead
            hub.spawn(ANA)
            r = hub.user_api(ANA, "POST", "/assignments/fetch",
                             data={"course_id": COURSE_ID, "assignment_id": lesson})  # fmt: skip
            assert r.status_code == 200, r.text
            _write_as(ANA, _home(ANA) / lesson / f"{lesson}.ipynb", ana_nb)
            r = hub.user_api(ANA, "POST", "/assignments/submit",
                             data={"course_id": COURSE_ID, "assignment_id": lesson})  # fmt: skip
            assert r.status_code == 200 and r.json().get("success"), r.text
        times["ana (browser)"] = time.time() - t
        as_user(ANA, "nbgrader", "fetch_assignment", "9.1", config=student_cfg)
        _write_as(ANA, _home(ANA) / "9.1" / "9.1.ipynb", S.filled("9.1"))
        as_user(ANA, "nbgrader", "submit", "9.1", config=student_cfg)

        # --- ben through his server's nbgrader API (spawned by the Hub) --------------------------
        t = time.time()
        hub.spawn(BEN)
        times["spawn ben"] = time.time() - t
        r = hub.user_api(BEN, "GET", "/assignments", params={"course_id": COURSE_ID})
        ben_list = sorted(a["assignment_id"] for a in r.json()["value"])
        r = hub.user_api(BEN, "POST", "/assignments/fetch",
                         data={"course_id": COURSE_ID, "assignment_id": lesson})  # fmt: skip
        assert r.status_code == 200, r.text
        _write_as(BEN, _home(BEN) / lesson / f"{lesson}.ipynb", S.filled(lesson, [bug]))
        r = hub.user_api(BEN, "POST", "/assignments/submit",
                         data={"course_id": COURSE_ID, "assignment_id": lesson})  # fmt: skip
        assert r.status_code == 200 and r.json().get("success"), r.text
        ben_formgrader = hub.user_api(BEN, "GET", "/formgrader").status_code

        # --- eve: probes, a hostile notebook, a submission forged in ana's name -------------------
        probe = json.loads(as_user(EVE, sys.executable, "-c", EVE_PROBE, str(exchange),
                                   str(course), str(_home(ANA))).stdout)  # fmt: skip
        as_user(EVE, "nbgrader", "fetch_assignment", lesson, config=student_cfg)
        _write_as(EVE, _home(EVE) / lesson / f"{lesson}.ipynb", eve_nb)
        as_user(EVE, "nbgrader", "submit", lesson, config=student_cfg)
        time.sleep(1.1)  # the forged one is newer than ana's, so nbgrader collect --update takes it
        _write_as(EVE, _home(EVE) / lesson / f"{lesson}.ipynb", S.release_nb(lesson))
        forged = as_user(EVE, "nbgrader", "submit", lesson, f"--student={ANA}",
                         config=student_cfg, check=False)  # fmt: skip

        # --- the instructor: collect, autograde (sandbox), feedback ------------------------------
        t = time.time()
        collected = prof(str(VENV_BIN / "python"), "-m", "course.instructor", "hub-collect", lesson)
        prof(str(VENV_BIN / "python"), "-m", "course.instructor", "hub-collect", "9.1")
        times["collect"] = time.time() - t
        t = time.time()
        graded = prof(str(VENV_BIN / "python"), "-m", "course.instructor", "autograde", lesson,
                      "--workers", "2", "--timeout", "60", check=False)  # fmt: skip
        graded_91 = prof(str(VENV_BIN / "python"), "-m", "course.instructor", "autograde", "9.1",
                         "--workers", "2", "--timeout", "60", check=False)  # fmt: skip
        times["autograde"] = time.time() - t
        t = time.time()
        prof(str(VENV_BIN / "python"), "-m", "course.instructor", "feedback", lesson)
        prof("nbgrader", "release_feedback", lesson)
        for u in STUDENTS:
            as_user(u, "nbgrader", "fetch_feedback", lesson, config=student_cfg)
        eve_feedback_probe = as_user(EVE, sys.executable, "-c", (
            "import glob,sys; print([p for p in glob.glob(sys.argv[1] + '/*/9.2/feedback/*/*.html')"
            " if not p.startswith('/home/rlvr_eve/')])"),
            "/home", check=False).stdout  # fmt: skip
        times["feedback"] = time.time() - t
        # --- worked solutions after the (past) due date -------------------------------------------
        prof(str(VENV_BIN / "python"), "-m", "course.instructor", "solutions", lesson, "--release")
        as_user(ANA, "nbgrader", "fetch_assignment", f"{lesson}-solution", config=student_cfg)

        from nbgrader.api import Gradebook

        scores: dict[str, dict[str, float]] = {}
        tests = set(info.test_cells)
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            for L in ["9.1", "9.2"]:
                for sub in gb.assignment_submissions(L):
                    per = {g.cell.name: float(g.auto_score) for nb in sub.notebooks
                           for g in nb.grades if g.auto_score is not None}  # fmt: skip
                    scores[f"{sub.student.id}/{L}"] = per
        result = {
            "expected": expected, "scores": scores, "tests": tests, "expected_91": expected_91,
            "tests_91": tests_91, "listed": listed,
            "browser": browser, "ben_list": ben_list, "ben_formgrader": ben_formgrader,
            "probe": probe, "forged": forged, "collected": collected.stdout,
            "graded": graded, "graded_91": graded_91, "eve_feedback_probe": eve_feedback_probe,
            "homes": {u: _home(u) for u in STUDENTS}, "course": course, "exchange": exchange,
            "student_cfg": student_cfg, "lesson": lesson, "times": times,
        }  # fmt: skip
        times["total"] = time.time() - t0
        print("\n[hub test] wall time: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()))
        yield result
    finally:
        if hub is not None:
            hub.close()
        time.sleep(1)
        for u in [*STUDENTS, INSTRUCTOR]:
            subprocess.run(["userdel", "-f", "-r", u], capture_output=True)
        subprocess.run(["groupdel", GROUP], capture_output=True)
        for d, mode in opened:
            os.chmod(d, mode)
        if (base / "hub.log").exists():
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copy(base / "hub.log", ARTIFACTS / "hub.log")
        shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------------------------------------


def test_students_see_both_released_lessons(hub_class):
    assert "9.1" in hub_class["listed"] and "9.2" in hub_class["listed"], hub_class["listed"]
    assert {"9.1", "9.2"} <= set(hub_class["ben_list"])


def test_grades_equal_the_expected_ones(hub_class):
    r = hub_class
    assert r["graded"].returncode == 0, r["graded"].stdout + r["graded"].stderr
    assert "sandbox: bubblewrap" in r["graded"].stdout, r["graded"].stdout
    for student, want in r["expected"].items():
        got = {c: v for c, v in r["scores"].get(f"{student}/9.2", {}).items() if c in r["tests"]}
        assert got == want, f"{student}: got {got}, expected {want}"
    assert sum(r["expected"][BEN].values()) < sum(r["expected"][ANA].values())
    assert sum(r["expected"][EVE].values()) == 0
    # ana's 9.1, submitted from her terminal, earns every point
    ana91 = {c: v for c, v in r["scores"].get(f"{ANA}/9.1", {}).items() if c in r["tests_91"]}
    assert ana91 == r["expected_91"], ana91
    assert r["graded_91"].returncode == 0, r["graded_91"].stdout + r["graded_91"].stderr


def test_forged_submission_is_refused(hub_class):
    r = hub_class
    assert r["forged"].returncode == 0, "nbgrader itself accepts --student=<someone else>"
    assert f"claims to be {ANA}'s, but belongs to {EVE}" in r["collected"], r["collected"]
    # and ana keeps her own grade (checked in test_grades_equal_the_expected_ones)


def test_students_cannot_read_each_other_or_the_instructor(hub_class):
    probe = hub_class["probe"]
    assert probe and all(v != "READ" for v in probe.values()), probe
    assert hub_class["eve_feedback_probe"].strip() in ("[]", ""), hub_class["eve_feedback_probe"]
    eve_own = list((hub_class["homes"][EVE] / "9.2" / "feedback").glob("*/9.2.html"))
    assert len(eve_own) == 1
    inbound = hub_class["exchange"] / COURSE_ID / "inbound"
    mode = stat.S_IMODE(inbound.stat().st_mode)
    assert not mode & stat.S_IROTH and mode & stat.S_IWOTH, oct(mode)
    assert stat.S_IMODE(hub_class["course"].stat().st_mode) & 0o077 == 0
    assert stat.S_IMODE(hub_class["course"].parent.stat().st_mode) & 0o077 == 0


def test_every_student_fetched_feedback(hub_class):
    for u, home in hub_class["homes"].items():
        files = list((home / "9.2" / "feedback").glob("*/9.2.html"))
        assert len(files) == 1, f"{u} has no feedback"
        text = files[0].read_text()
        assert "### BEGIN HIDDEN TESTS" not in text


def test_hostile_code_saw_nothing_while_graded(hub_class):
    course = hub_class["course"]
    nb = nbformat.read(course / "autograded" / EVE / "9.2" / "9.2.ipynb", as_version=4)
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                  for o in c.get("outputs", []))  # fmt: skip
    assert "eve saw:" in out, "eve's probing cell did not run"
    assert "gradebook.db" not in out and "rlvr_ana" not in out, out[:500]


def test_worked_solution_reaches_the_student(hub_class):
    from course.grading.solutions import HIDDEN_NOTE

    sol = hub_class["homes"][ANA] / "9.2-solution" / "9.2-solution.ipynb"
    nb = nbformat.read(sol, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "HIDDEN TESTS" not in text and HIDDEN_NOTE in text
    src = nbformat.read(
        hub_class["course"] / "source_notebooks" / "9.2" / "9.2.ipynb", as_version=4
    )
    for c in src.cells:
        if c.metadata.get("nbgrader", {}).get("solution"):
            body = c.source.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION\n", "")
            assert body.strip()[:200] in text, c.metadata["nbgrader"]["grade_id"]


def test_browser_student_and_no_formgrader_for_students(hub_class):
    b = hub_class["browser"]
    if "skipped" in b:
        pytest.skip(b["skipped"])
    assert b["fetched"] and b["submitted"], b
    assert b["ran_cell"].startswith("[1"), b
    assert "Assignment List" in b["menu"] and "Formgrader" not in b["menu"], b["menu"]
    assert b["formgrader_page"] == 404, b
    assert "Success" in b["validate"], f"Validate on a correct notebook: {b['validate']}"
    assert hub_class["ben_formgrader"] == 404


# ---------------------------------------------------------------------------------------------
# worked solutions of every lesson (no Hub, no root needed)


def test_worked_solutions_hold_every_solution_and_no_hidden_test(tmp_path):
    import datetime as dt

    from course.grading import solutions as W
    from tests.nbgrader_course import Course
    from tests.test_autograder import hidden_lines

    lessons = sorted(p.name for p in (ROOT / "source_notebooks").iterdir() if p.is_dir())
    course = Course(tmp_path / "course", lessons)
    for lesson in lessons:
        course.release(lesson)
    with pytest.raises(SystemExit, match="no due date"):
        W.solutions(lessons[0], root=course.root)
    course.nbgrader("db", "assignment", "add", lessons[0], "--duedate=2999-01-01 00:00:00 UTC")
    with pytest.raises(SystemExit, match="is due 2999"):
        W.solutions(lessons[0], root=course.root)
    course.nbgrader("db", "assignment", "add", lessons[0], f"--duedate={PAST_DUE}")
    W.check_deadline(lessons[0], course.root, now=dt.datetime.now(dt.UTC))
    for lesson in lessons:
        out = W.solutions(lesson, root=course.root, before_deadline=lesson != lessons[0])
        text = "\n".join(c.source for c in nbformat.read(out, as_version=4).cells)
        leaked = [ln for ln in hidden_lines(lesson) if ln in text]
        assert not leaked, f"{lesson}: hidden tests in the worked solution: {leaked[:3]}"
        assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text
        src = nbformat.read(ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb", as_version=4)
        n = 0
        for c in src.cells:
            if c.metadata.get("nbgrader", {}).get("solution"):
                n += 1
                body = W.SOLUTION_MARKERS.sub("", c.source).strip()
                assert body in text, f"{lesson}: {c.metadata['nbgrader']['grade_id']} is missing"
        assert text.count("**Worked solution (") == n > 0
        assert not (course.root / "solution" / lesson).exists(), "nbgrader's raw copy is left"
