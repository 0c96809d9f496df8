"""notebook.sh: listing, the student's copy (never overwritten), --fresh, bad input, and a real
headless JupyterLab start on a free port. A fixture lesson stands in for the real releases."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from tests.conftest import ROOT, free_port

SCRIPT = ROOT / "notebook.sh"


def run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120, **kw
    )


def test_lists_lessons_without_argument(bundle):
    out = run([], bundle)
    assert out.returncode == 0
    assert "9.0" in out.stdout and "Fixture lesson" in out.stdout
    assert out.stdout.index("9.0 ") < out.stdout.index("9.10")  # version order, not string order


def test_unknown_lesson_names_the_fix(bundle):
    out = run(["9.9"], bundle)
    assert out.returncode != 0
    assert "no lesson '9.9'" in out.stderr and "9.0" in out.stderr and "fix:" in out.stderr


def test_bad_option_and_port(bundle):
    assert run(["9.0", "--bogus"], bundle).returncode != 0
    out = run(["9.0", "--port", "notaport"], bundle)
    assert out.returncode != 0 and "--port" in out.stderr


def test_copy_is_made_and_never_overwritten(bundle):
    ws = Path(bundle["COURSE_WORKSPACE"]) / "9.0"
    out = run(["9.0", "--setup-only"], bundle)
    assert out.returncode == 0, out.stderr
    nb_path = ws / "9.0.ipynb"
    assert nb_path.exists()
    nb_path.write_text(nb_path.read_text().replace("x = 1", "x = 'my work'"))
    out = run(["9.0", "--setup-only"], bundle)
    assert out.returncode == 0 and "continuing your copy" in out.stdout
    assert "my work" in nb_path.read_text()


def test_fresh_archives_then_restarts(bundle):
    ws = Path(bundle["COURSE_WORKSPACE"])
    run(["9.0", "--setup-only"], bundle)
    nb_path = ws / "9.0" / "9.0.ipynb"
    nb_path.write_text(nb_path.read_text().replace("x = 1", "x = 'my work'"))
    out = run(["9.0", "--fresh", "--setup-only"], bundle)
    assert out.returncode == 0, out.stderr
    archived = list((ws / "archive").glob("9.0-*/9.0.ipynb"))
    assert len(archived) == 1 and "my work" in archived[0].read_text()
    assert "my work" not in nb_path.read_text()


def env_without_python(bundle: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], Path]:
    """(an environment whose PATH holds every usual tool but no Python, and no existing venv; the
    PATH's folder, where a test may put a Python of its choosing)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for d in ["/usr/bin", "/bin"]:
        for tool in Path(d).iterdir():
            if not tool.name.startswith("python") and not (bindir / tool.name).exists():
                (bindir / tool.name).symlink_to(tool)
    env = dict(bundle, PATH=str(bindir), COURSE_VENV=str(tmp_path / "novenv"), PYTHON="")
    return env, bindir


def test_missing_python_names_the_fix(bundle, tmp_path):
    env, _ = env_without_python(bundle, tmp_path)
    out = run(["9.0", "--no-browser"], env)
    assert out.returncode == 3
    assert "Python 3.11 was not found" in out.stderr and "fix:" in out.stderr


def test_busy_port_names_the_fix(bundle):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = run(["9.0", "--no-browser", "--port", str(port)], bundle)
    assert out.returncode == 4
    assert f"port {port} is busy" in out.stderr and "--port" in out.stderr


def test_serves_jupyterlab_headless(bundle):
    port = free_port()
    proc = subprocess.Popen([str(SCRIPT), "9.0", "--no-browser", "--port", str(port)], env=bundle,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        deadline, status = time.time() + 90, None
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2) as r:
                    status = json.loads(r.read())
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.5)
        assert status and "version" in status, f"JupyterLab did not answer on port {port}"
    finally:
        out = stop(proc)
    assert f"http://127.0.0.1:{port}/lab" in out, out[-2000:]


def stop(proc: subprocess.Popen) -> str:
    """Stop a server started in its own session; return what it printed."""
    for sig, wait in [(signal.SIGTERM, 30), (signal.SIGKILL, 30)]:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return proc.communicate(timeout=wait)[0]
        except subprocess.TimeoutExpired:
            continue
    return ""


# ---------------------------------------------------------------------------------------------
# --submit: validate, then a zip that `course-admin collect` accepts, named after the student


def _submit_env(bundle: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return dict(bundle, COURSE_SUBMIT_DIR=str(tmp_path / "submit"))


def test_submit_needs_a_copy_and_a_name(bundle, tmp_path):
    env = _submit_env(bundle, tmp_path)
    out = run(["9.0", "--submit", "--as", "ada"], env)
    assert out.returncode == 2 and "no copy of lesson 9.0" in out.stderr and "fix:" in out.stderr
    run(["9.0", "--setup-only"], env)
    out = run(["9.0", "--submit"], env)
    assert out.returncode == 2 and "--as" in out.stderr, out.stderr
    out = run(["9.0", "--submit", "--as", "ada lovelace"], env)
    assert out.returncode == 2 and "no spaces" in out.stderr, out.stderr
    assert not (tmp_path / "submit").exists()


def test_submit_writes_a_zip_that_collect_accepts(bundle, tmp_path):
    from course.grading.collect import collect_report

    env = _submit_env(bundle, tmp_path)
    for lesson in ["9.0", "9.10"]:
        run([lesson, "--setup-only"], env)
    nb_path = Path(env["COURSE_WORKSPACE"]) / "9.0" / "9.0.ipynb"
    nb_path.write_text(nb_path.read_text().replace("x = 1", "x = 'ada was here'"))
    out = run(["9.0", "--submit", "--as", "ada.lovelace"], env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all visible tests pass" in out.stdout, out.stdout
    zip_path = tmp_path / "submit" / "ada.lovelace.zip"
    assert zip_path.is_file() and str(zip_path) in out.stdout
    # the name is remembered; a second student's zip sits next to it
    out = run(["9.10", "--submit"], env)
    assert out.returncode == 0 and "ada.lovelace.zip" in out.stdout, out.stderr
    bob = dict(env, COURSE_WORKSPACE=str(tmp_path / "bob-ws"))
    run(["9.0", "--setup-only"], bob)
    assert run(["9.0", "--submit", "--as", "bob"], bob).returncode == 0
    got, refused = collect_report(tmp_path / "submit", ["9.0", "9.10"], root=tmp_path / "course")
    assert got == {"ada.lovelace": ["9.0", "9.10"], "bob": ["9.0"]} and not refused, (got, refused)
    collected = tmp_path / "course" / "submitted" / "ada.lovelace" / "9.0" / "9.0.ipynb"
    assert "ada was here" in collected.read_text()


def test_submit_warns_when_a_visible_test_fails(bundle, tmp_path):
    env = _submit_env(bundle, tmp_path)
    run(["9.0", "--setup-only"], env)
    nb_path = Path(env["COURSE_WORKSPACE"]) / "9.0" / "9.0.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("assert x == 2, 'x should be 2'"))
    nb.cells[-1].metadata["nbgrader"] = {"grade": True, "grade_id": "test_x", "points": 1,
                                         "solution": False, "locked": True,
                                         "schema_version": 3}  # fmt: skip
    nbformat.write(nb, nb_path)
    out = run(["9.0", "--submit", "--as", "ada"], env)
    assert out.returncode == 0, out.stderr
    assert "warning: some visible tests fail" in out.stdout, out.stdout
    assert "VALIDATION FAILED ON 1 CELL(S)!" in out.stdout, out.stdout
    assert "assert x == 2" in out.stdout and "AssertionError: x should be 2" in out.stdout
    assert (tmp_path / "submit" / "ada.zip").is_file()


def test_students_jupyterlab_has_no_formgrader(bundle):
    import re
    import urllib.error

    port = free_port()
    proc = subprocess.Popen([str(SCRIPT), "9.0", "--no-browser", "--port", str(port)], env=bundle,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        url, deadline = None, time.time() + 120
        while time.time() < deadline and url is None:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            m = re.search(rf"http://127\.0\.0\.1:{port}/lab\S*token=(\w+)", line)
            url = m and m.group(1)
        assert url, "JupyterLab printed no URL"
        token = url
        base = f"http://127.0.0.1:{port}"
        page, deadline = None, time.time() + 60
        while page is None:
            try:
                with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=30) as r:
                    page = r.read().decode()
            except urllib.error.URLError:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.5)
        config = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page,
                                      re.S).group(1))  # fmt: skip
        disabled = config.get("disabledExtensions", [])
        assert "@jupyter/nbgrader:formgrader" in disabled, disabled
        assert "@jupyter/nbgrader:create-assignment" in disabled, disabled
        assert "@jupyter/nbgrader:validate-assignment" not in disabled, disabled
        assert "@jupyter/nbgrader:menu" in disabled, disabled  # it would be an empty menu
        settings = json.loads(urllib.request.urlopen(
            f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}",
            timeout=30).read())  # fmt: skip
        defaults = {k: v.get("default") for k, v in settings["schema"]["properties"].items()}
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{base}/formgrader?token={token}", timeout=30)
        assert err.value.code == 404
    finally:
        stop(proc)


def test_the_submit_summary_reads_validator_data():
    """helpers.submission.summary turns nbgrader's Validator results (data, not text) into the
    summary --submit prints: a count per kind, then each cell's first line and last error."""
    from helpers.submission import summary

    assert summary({}) == ["PASSED"] and summary({"failed": [], "changed": []}) == ["PASSED"]
    lines = summary({
        "failed": [{"source": "\nassert f(2) == 4\n", "raw_error": "\x1b[31mTraceback (most recent "
                    "call last)\x1b[39m\n  ...\nAssertionError: f(2) should be 4"},
                   {"source": "YOUR ANSWER HERE", "error": "You did not provide a response."}],
        "changed": [{"source": "assert g() == 1"}],
    })  # fmt: skip
    assert lines[0].startswith("    THE CONTENTS OF 1 TEST CELL(S) HAVE CHANGED!")
    assert lines[1] == "    VALIDATION FAILED ON 2 CELL(S)!"
    assert lines[2:] == ["      assert g() == 1  ->  changed",
                         "      assert f(2) == 4  ->  AssertionError: f(2) should be 4",
                         "      YOUR ANSWER HERE  ->  no answer written yet"]  # fmt: skip
