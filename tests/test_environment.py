"""Two dependency sets, both declared in pyproject.toml (scripts/deps.py reads them), each with its
lock. The project's dependencies are what a student runs (environment.yml installs the same); the dev
set adds the hub extra (JupyterHub) and the dev group (tests, lint, mutation testing). The locks
(scripts/lock.sh makes both; scripts/ensure_env.sh installs one) hold the exact version of every
package: requirements.lock for ./notebook.sh, requirements-dev.lock for ./test.sh, the student's
lock resolved against the developers' so both get the same versions. environment.yml and level B's
Colab pins are written from pyproject.toml and the lock, never by hand."""

from __future__ import annotations

import json
import platform
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

# Tools a student never runs: none may reach the student's lock, even as a dependency of another.
DEV_TOOLS = ["pytest", "pytest-timeout", "cosmic-ray", "hypothesis", "ruff", "playwright",
             "jupyterhub"]  # fmt: skip


def _deps():
    """scripts/deps.py, the module lock.sh runs (scripts/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_deps", ROOT / "scripts" / "deps.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _requirements(which: str = "student") -> list[str]:
    return sorted(_deps().requirements(which))


def _lock(name: str) -> dict[str, str]:
    """A lock file as {normalised name: exact version}."""
    from packaging.utils import canonicalize_name

    pins = {}
    for ln in (ROOT / name).read_text().splitlines():
        ln = ln.split("#")[0].strip()
        if ln:
            pkg, sep, version = ln.partition("==")
            assert sep and version and not any(c in version for c in "<>=!~ ;+"), ln
            pins[canonicalize_name(pkg)] = version
    return pins


def _environment_pip() -> list[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return sorted(pip)


def test_environment_yml_matches_requirements():
    assert _environment_pip() == _requirements()


def test_generated_files_are_what_the_lock_script_writes():
    """environment.yml and helpers/data/colab_pins.json are written by scripts/deps.py generate
    (lock.sh's last step) from pyproject.toml and requirements.lock: no list kept in step by hand."""
    deps = _deps()
    assert deps.stale() == [], "run: python scripts/deps.py generate"
    pins = deps.colab_pins()
    assert pins and set(pins) == set(deps._project()["tool"]["course"]["colab"])


def test_the_generated_files_follow_an_edit(tmp_path):
    """One edit of pyproject.toml (a range, a Colab package) changes what generate writes, and check
    reports both files stale until it runs."""
    import shutil
    import subprocess

    for f in ("pyproject.toml", "requirements.lock", "requirements-dev.lock", "environment.yml"):
        shutil.copy2(ROOT / f, tmp_path / f)
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "deps.py", tmp_path / "scripts" / "deps.py")
    (tmp_path / "helpers" / "data").mkdir(parents=True)
    shutil.copy2(ROOT / "helpers" / "data" / "colab_pins.json", tmp_path / "helpers" / "data")
    deps = tmp_path / "scripts" / "deps.py"
    run = [sys.executable, str(deps)]
    assert subprocess.run([*run, "check"], cwd=tmp_path).returncode == 0
    text = (tmp_path / "pyproject.toml").read_text()
    text = text.replace('"tqdm>=4.66"', '"tqdm>=4.67"').replace(
        '"tokenizers"]', '"tokenizers", "numpy"]'
    )
    (tmp_path / "pyproject.toml").write_text(text)
    out = subprocess.run([*run, "check"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 1 and "environment.yml" in out.stdout and "colab_pins" in out.stdout
    subprocess.run([*run, "generate"], cwd=tmp_path, check=True, capture_output=True)
    assert "tqdm>=4.67" in (tmp_path / "environment.yml").read_text()
    pins = json.loads((tmp_path / "helpers" / "data" / "colab_pins.json").read_text())
    assert pins["numpy"] == _lock("requirements.lock")["numpy"]


def test_environment_yml_pins_python_311():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]


def test_torch_is_pinned_exactly():
    # A looser spec pulls a multi-GB CUDA build on a CPU-only machine.
    assert "torch==2.13.0" in _requirements()


def test_required_packages_are_in_their_set():
    def names(file):
        return {re.split(r"[<>=!~ ]", r)[0].lower() for r in _requirements(file)}

    student, dev = names("student"), names("dev")
    for pkg in ["numpy", "transformers", "peft", "trl", "datasets", "accelerate", "nbgrader",
                "jupyterlab", "notebook", "ipywidgets", "matplotlib", "tqdm", "tokenizers",
                "nbclient"]:  # fmt: skip
        assert pkg in student, pkg
    assert set(DEV_TOOLS) <= dev and not set(DEV_TOOLS) & student
    assert student <= dev


@pytest.mark.parametrize(
    "req,lock",
    [("student", "requirements.lock"), ("dev", "requirements-dev.lock")],
)
def test_lock_pins_every_requirement_inside_its_range(req, lock):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = _lock(lock)
    for line in _requirements(req):
        r = Requirement(line)
        name = canonicalize_name(r.name)
        assert name in pins, f"{r.name} is required but not in {lock}: run scripts/lock.sh"
        assert r.specifier.contains(pins[name], prereleases=True), (
            f"{r.name}=={pins[name]} in {lock} is outside {line}: run scripts/lock.sh"
        )


def test_the_students_lock_is_the_developers_versions_without_the_tools():
    """What a student installs is a subset of what the tests ran with, at the same versions, and
    holds no developer tool."""
    from packaging.utils import canonicalize_name

    student, dev = _lock("requirements.lock"), _lock("requirements-dev.lock")
    differ = {n: (v, dev.get(n)) for n, v in student.items() if dev.get(n) != v}
    assert not differ, f"requirements.lock differs from requirements-dev.lock: {differ}"
    tools = sorted(set(map(canonicalize_name, DEV_TOOLS)) & set(student))
    assert not tools, f"developer tools in the student's lock: {tools}"


def test_the_venv_is_exactly_the_developers_lock():
    """./test.sh installs requirements-dev.lock: every installed distribution but the course itself
    is locked, at the locked version (a local build label such as torch's +cpu aside), so two
    installs from the lock give the same freeze. The lock is made on Linux x86_64 (scripts/lock.sh):
    elsewhere pip adds that platform's own dependencies (appnope on macOS, say), not locked."""
    import sysconfig
    from importlib import metadata

    from packaging.utils import canonicalize_name
    from packaging.version import Version

    lock = _lock("requirements-dev.lock")
    # the venv's own site-packages, not whatever a test put on sys.path (a bundle, a build folder)
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {canonicalize_name(d.metadata["Name"]): d.version
                 for d in metadata.distributions(path=site)}  # fmt: skip
    own = canonicalize_name(_project_name())
    extra = sorted(set(installed) - set(lock) - {own, "pip"})
    # where the lock is made (Linux x86_64, torch's CPU build); PyPI's CUDA torch on a machine with a
    # GPU brings nvidia-* and triton, which no lock holds
    cpu_torch = Version(installed.get("torch", "0")).local == "cpu"
    if sys.platform == "linux" and platform.machine() == "x86_64" and cpu_torch:
        assert not extra, f"installed but not in requirements-dev.lock: {extra}"
    missing = sorted(set(lock) - set(installed))
    assert not missing, f"locked but not installed: {missing} (run ./test.sh: it reinstalls)"
    wrong = {n: (installed[n], v) for n, v in lock.items()
             if Version(installed[n]).public != Version(v).public}  # fmt: skip
    assert not wrong, f"installed versions differ from the lock (installed, locked): {wrong}"


def test_installed_versions_satisfy_the_requirements():
    from importlib.metadata import version

    from packaging.requirements import Requirement

    for line in _requirements("dev"):
        req = Requirement(line)
        assert req.specifier.contains(version(req.name), prereleases=True), (
            line,
            version(req.name),
        )


def test_pyproject_lists_every_helpers_package():
    """A wheel holds only the packages pyproject.toml names ([tool.setuptools.packages.find]
    include, exact names, no wildcard): a
    subpackage of helpers left out (helpers.level_b) would be missing from the course installed
    by pip (the Colab cell of level B) while every test here, run from the tree, still passes."""
    import tomllib

    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    listed = [p for p in find["find"]["include"] if p.split(".")[0] == "helpers"]
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "helpers").rglob("__init__.py")
    }
    assert sorted(listed) == sorted(found), "pyproject.toml [tool.setuptools.packages.find] include"


def _project_name() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-dev.lock"])
def test_no_lock_holds_a_cuda_only_package(lock):
    """The lock is made with torch's CPU build: a lock resolved against PyPI's Linux (CUDA) torch
    would list nvidia-* and triton, which have no macOS wheels, and every Mac install would fail."""
    cuda = sorted(n for n in _lock(lock) if n.startswith("nvidia-") or n == "triton")
    assert not cuda, f"{lock} holds CUDA-only packages {cuda}: make the lock with the CPU torch"


def _torch_index(tmp_path, system: str, gpu: bool = False, pip_config: str = "", *args,
                 **env) -> tuple[int, list[str]]:  # fmt: skip
    """scripts/torch_index.sh on a pretend machine: `uname -s` says ``system``, nvidia-smi exists
    when ``gpu``, ``pip config list`` prints ``pip_config``, and PATH holds nothing else (a real
    nvidia-smi in /usr/bin, or the machine's own pip configuration, cannot leak in)."""
    import os
    import shlex
    import shutil
    import subprocess

    bin_ = tmp_path / f"bin-{system}-{gpu}"
    bin_.mkdir(exist_ok=True)
    stubs = {"uname": f"echo {system}", "python": f"printf '%s\\n' {shlex.quote(pip_config)}"}
    if gpu:
        stubs["nvidia-smi"] = "exit 0"
    for name, body in stubs.items():
        (bin_ / name).write_text(f"#!{shutil.which('bash')}\n{body}\n")
        (bin_ / name).chmod(0o755)
    (bin_ / "grep").unlink(missing_ok=True)
    (bin_ / "grep").symlink_to(shutil.which("grep"))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "COURSE_TORCH"))}
    base |= {"PATH": str(bin_)} | env
    out = subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / "torch_index.sh"),
                          str(bin_ / "python"), *args], env=base, capture_output=True, text=True)  # fmt: skip
    return out.returncode, out.stdout.split()


CPU = ["https://download.pytorch.org/whl/cpu"]


@pytest.mark.parametrize(
    "system, gpu, env, want",
    [
        ("Linux", False, {}, CPU),  # a Linux laptop: PyPI's torch would be the CUDA build
        ("Linux", True, {}, []),  # an NVIDIA GPU: pip's own (CUDA) build
        ("Darwin", False, {}, []),  # macOS and Windows wheels are CPU builds already
        ("Linux", False, {"PIP_INDEX_URL": "https://mirror.example/simple"}, []),
        ("Linux", False, {"PIP_FIND_LINKS": "/opt/wheels"}, []),  # an offline wheel folder
        ("Linux", False, {"PIP_NO_INDEX": "1"}, []),
        ("Linux", False, {"PIP_NO_INDEX": "0"}, CPU),  # pip's "off"
        ("Linux", False, {"PIP_NO_INDEX": "False"}, CPU),
        ("Linux", False, {"PIP_NO_INDEX": "yes"}, []),
        ("Darwin", False, {"COURSE_TORCH": "cpu"}, CPU),
        ("Linux", False, {"COURSE_TORCH": "default"}, []),
    ],
)
def test_a_linux_student_without_a_gpu_gets_the_cpu_torch(tmp_path, system, gpu, env, want):
    assert _torch_index(tmp_path, system, gpu, **env) == (0, want)


@pytest.mark.parametrize(
    "config, want",
    [
        ("global.find-links='/opt/wheels'", []),
        (":env:.index-url='https://mirror.example/simple'", []),
        ("user.extra-index-url='file:///srv/simple'", []),
        ("global.timeout='60'", CPU),  # a configuration that names no source
        ("global.no-index='false'", CPU),
        ("global.no-index='true'", []),
        ("", CPU),
    ],
)
def test_a_pip_configuration_is_respected(tmp_path, config, want):
    assert _torch_index(tmp_path, "Linux", False, config) == (0, want)


def test_the_locks_are_made_with_the_cpu_torch_on_any_machine(tmp_path):
    """--for-lock: the CPU build even with a GPU or on a Mac (a CUDA lock breaks every Mac install),
    unless pip's own sources are configured (this build machine's wheel folder)."""
    assert _torch_index(tmp_path, "Linux", True, "", "--for-lock") == (0, CPU)
    assert _torch_index(tmp_path, "Darwin", False, "", "--for-lock") == (0, CPU)
    assert _torch_index(tmp_path, "Linux", True, "global.find-links='/w'", "--for-lock") == (0, [])


def test_a_wrong_choice_is_named_and_stops_the_install(tmp_path):
    code, out = _torch_index(tmp_path, "Linux", COURSE_TORCH="cuda")
    assert code == 2 and out == []
    text = (ROOT / "scripts" / "ensure_env.sh").read_text()
    assert 'torch_index.sh" "$VENV/bin/python")" || exit $?' in text, (
        "its error must stop ensure_env"
    )


def test_an_updated_venv_drops_only_what_the_previous_lock_held(tmp_path):
    """scripts/venv_follow_lock.py removes what the previous lock held and the new one does not,
    and never what no lock holds: pip's platform additions (appnope on macOS, CUDA torch's
    nvidia-* and triton) or a package the student installed by hand."""
    import subprocess
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert purelib != sysconfig.get_paths()["purelib"]
    own = _project_name()
    for name, version in [("old_tool", "1.0"), ("Kept.Pkg", "2.0"), ("appnope", "0.1.4"),
                          ("nvidia-cublas-cu12", "12.1"), ("triton", "3.0"), ("seaborn", "0.13"),
                          ("pip", "25.0"), (own, "0.1.0")]:  # fmt: skip
        info = Path(purelib) / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (tmp_path / "old.lock").write_text(
        f"# header\nold-tool==1.0\nkept-pkg==2.0\npip==25.0\n{own}==0.1\n"
    )
    (tmp_path / "new.lock").write_text("# header\nkept_pkg==2.1\n")
    out = subprocess.run([str(py), str(ROOT / "scripts" / "venv_follow_lock.py"),
                          str(tmp_path / "old.lock"), str(tmp_path / "new.lock"),
                          str(ROOT / "pyproject.toml"), "--dry-run"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stdout.split(":")[-1].split() == ["old-tool"], out.stdout
    same = subprocess.run([str(py), str(ROOT / "scripts" / "venv_follow_lock.py"),
                           str(tmp_path / "new.lock"), str(tmp_path / "new.lock"),
                           str(ROOT / "pyproject.toml"), "--dry-run"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert same.stdout == ""
