"""helpers/doctor.py (``./notebook.sh --doctor``, ``course doctor``): every way a first start can fail is named with its
fix, and a healthy machine gets a clean bill. Each class of breakage is built for real in a
temporary folder: no Python 3.11 on PATH, a venv broken in each way one breaks (interpreter gone,
wrong version, never finished, a package missing), BaseLM absent or damaged, the port taken."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port

DOCTOR = ROOT / "helpers" / "doctor.py"
SHIPPED_BASELM = ROOT / "helpers" / "data" / "baselm"
REBUILD = "fix: rm -rf"


def doctor(env_changes: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, **env_changes)
    return subprocess.run(
        [sys.executable, str(DOCTOR), *args], env=env, capture_output=True, text=True, timeout=600
    )


def problems(out: str) -> list[str]:
    return [ln.strip() for ln in out.splitlines() if ln.strip().startswith("PROBLEM")]


def fake_python(path: Path, version: str, imports_fail: str | None = None) -> Path:
    """An executable that answers the doctor's questions as a Python ``version`` would; with
    ``imports_fail``, importing the course's packages fails with that message."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fail = f'echo "{imports_fail}" >&2; exit 1' if imports_fail else "exit 0"
    path.write_text(
        f'#!/bin/sh\ncase "$2" in\n  *version_info*) echo {version} ;;\n  *) {fail} ;;\nesac\n'
    )
    path.chmod(0o755)
    return path


def test_a_healthy_machine_has_nothing_wrong():
    port = free_port()
    out = doctor(
        {"BASELM_DIR": str(SHIPPED_BASELM), "PYTHON": sys.executable, "COURSE_VENV": sys.prefix},
        "--port",
        str(port),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert not problems(out.stdout)
    for what in (
        "course files",
        "Python 3.11",
        "environment",
        "BaseLM",
        f"port {port}",
        "workspace",
    ):
        assert f"ok       {what}" in out.stdout, out.stdout


def test_no_python_3_11_on_the_path_names_what_was_tried_and_how_to_install(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3", "3.9.18")
    fake_python(bin_dir / "python", "2.7.18")
    env = {"PATH": str(bin_dir), "PYTHON": "", "COURSE_VENV": str(tmp_path / "no-venv")}
    out = doctor(env, "--port", str(free_port()))
    assert out.returncode == 1
    line = next(p for p in problems(out.stdout) if "Python 3.11" in p)
    assert (
        "python3.11 (not found)" in line
        and "python3 (3.9.18)" in line
        and "python (2.7.18)" in line
    )
    assert "fix: install Python 3.11" in out.stdout and "PYTHON=/path/to/python3.11" in out.stdout
    assert (
        "not created yet" in out.stdout
    )  # a missing venv is not a problem: the first start makes it


def _venv_interpreter_gone(venv: Path) -> None:
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(venv / "removed" / "python3.11")


def _venv_wrong_version(venv: Path) -> None:
    fake_python(venv / "bin" / "python", "3.12.1")


def _venv_never_finished(venv: Path) -> None:
    fake_python(venv / "bin" / "python", "3.11.9")  # no .course-stamp: pip was interrupted


def _venv_package_missing(venv: Path) -> None:
    fake_python(venv / "bin" / "python", "3.11.9", "ModuleNotFoundError: No module named 'torch'")
    (venv / ".course-stamp").write_text("student 0123456789abcdef\n")


def _venv_without_python(venv: Path) -> None:
    (venv / "lib").mkdir(parents=True)


@pytest.mark.parametrize(
    "breakage, says",
    [
        (_venv_interpreter_gone, "does not run"),
        (_venv_wrong_version, "is Python 3.12.1"),
        (_venv_never_finished, "install never finished"),
        (_venv_package_missing, "No module named 'torch'"),
        (_venv_without_python, "has no bin/python"),
    ],
)
def test_a_broken_venv_is_named_with_the_rebuild(tmp_path, breakage, says):
    venv = tmp_path / "venv"
    breakage(venv)
    out = doctor({"COURSE_VENV": str(venv), "PYTHON": sys.executable}, "--port", str(free_port()))
    assert out.returncode == 1
    line = next(p for p in problems(out.stdout) if "environment" in p)
    assert says in line, out.stdout
    assert f"{REBUILD} {venv} && ./notebook.sh 9.1" in out.stdout


def _baselm_partial(d: Path) -> None:
    shutil.copytree(SHIPPED_BASELM, d)
    (d / "passport.json").unlink()


def _baselm_truncated(d: Path) -> None:
    shutil.copytree(SHIPPED_BASELM, d)
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])


def _baselm_other_weights(d: Path) -> None:
    shutil.copytree(SHIPPED_BASELM, d)
    w = d / "model.safetensors"
    data = bytearray(w.read_bytes())
    data[-1] ^= 0xFF  # one byte of the last tensor: the file still loads, the hash does not match
    w.write_bytes(bytes(data))


def test_a_baselm_not_installed_yet_is_a_note_with_the_fix(tmp_path):
    """A new course folder has no BaseLM (only lesson 9.5 needs it): the doctor names the fix but
    does not call a healthy install broken."""
    out = doctor({"BASELM_DIR": str(tmp_path / "baselm"), "PYTHON": sys.executable, "COURSE_VENV": sys.prefix},
                 "--port", str(free_port()))  # fmt: skip
    assert not [p for p in problems(out.stdout) if "BaseLM" in p], out.stdout
    line = next(ln for ln in out.stdout.splitlines() if "BaseLM" in ln)
    assert "no artifact directory" in line and "./baselm.sh" in line, out.stdout


@pytest.mark.parametrize(
    "damage, says",
    [
        (_baselm_partial, "missing passport.json"),
        (_baselm_truncated, "unreadable"),
        (_baselm_other_weights, "does not match the passport"),
    ],
)
def test_a_missing_or_damaged_baselm_is_named_with_baselm_sh(tmp_path, damage, says):
    d = tmp_path / "baselm"
    damage(d)
    out = doctor(
        {"BASELM_DIR": str(d), "PYTHON": sys.executable, "COURSE_VENV": sys.prefix},
        "--port",
        str(free_port()),
    )
    assert out.returncode == 1
    line = next(p for p in problems(out.stdout) if "BaseLM" in p)
    assert says in line, out.stdout
    assert "fix: ./baselm.sh" in out.stdout


def test_a_port_in_use_is_named_with_the_next_port(tmp_path):
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        out = doctor({"COURSE_VENV": str(tmp_path / "none")}, "--port", str(port))
        via_script = subprocess.run(
            [str(ROOT / "notebook.sh"), "--doctor", "--port", str(port)],
            env=dict(os.environ, COURSE_VENV=str(tmp_path / "none")),
            capture_output=True,
            text=True,
            timeout=600,
        )
    for o in (out, via_script):
        assert o.returncode == 1
        assert any(f"port {port}: in use" in p for p in problems(o.stdout)), o.stdout
        assert f"./notebook.sh 9.1 --port {port + 1}" in o.stdout


def test_the_doctor_needs_nothing_but_the_standard_library():
    """It must run when the course's environment is what is broken: no third-party import."""
    import ast

    tree = ast.parse(DOCTOR.read_text())
    mods = {
        a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    mods |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert mods <= set(sys.stdlib_module_names), mods - set(sys.stdlib_module_names)
