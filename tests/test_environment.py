"""Two dependency sets, each a requirements file and its lock. requirements.txt says what a student
runs (environment.yml installs the same); requirements-dev.txt adds the tests, lint, mutation testing
and JupyterHub. The locks (scripts/lock.sh makes both; scripts/ensure_env.sh installs one) hold the
exact version of every package: requirements.lock for ./notebook.sh, requirements-dev.lock for
./test.sh, the student's lock resolved against the developers' so both get the same versions."""

from __future__ import annotations

import platform
import re
import sys

import pytest
import yaml

from tests.conftest import ROOT

# Tools a student never runs: none may reach the student's lock, even as a dependency of another.
DEV_TOOLS = ["pytest", "pytest-timeout", "cosmic-ray", "hypothesis", "ruff", "playwright",
             "jupyterhub"]  # fmt: skip


def _requirements(name: str = "requirements.txt") -> list[str]:
    lines = (ROOT / name).read_text().splitlines()
    reqs = (ln.split("#")[0].strip() for ln in lines)
    return sorted(r for r in reqs if r and not r.startswith("-r "))


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


def test_environment_yml_pins_python_311():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]


def test_torch_is_pinned_exactly():
    # A looser spec pulls a multi-GB CUDA build on a CPU-only machine.
    assert "torch==2.13.0" in _requirements()


def test_required_packages_are_in_their_set():
    def names(file):
        return {re.split(r"[<>=!~ ]", r)[0].lower() for r in _requirements(file)}

    student, dev = names("requirements.txt"), names("requirements-dev.txt")
    for pkg in ["numpy", "transformers", "peft", "trl", "datasets", "accelerate", "nbgrader",
                "jupyterlab", "notebook", "ipywidgets", "matplotlib", "tqdm", "tokenizers",
                "nbclient"]:  # fmt: skip
        assert pkg in student, pkg
    assert set(DEV_TOOLS) <= dev and not set(DEV_TOOLS) & student
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text().splitlines()


@pytest.mark.parametrize(
    "req,lock",
    [("requirements.txt", "requirements.lock"), ("requirements-dev.txt", "requirements-dev.lock")],
)
def test_lock_pins_every_requirement_inside_its_range(req, lock):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = _lock(lock)
    for line in _requirements(req) + (_requirements() if req != "requirements.txt" else []):
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
    if sys.platform == "linux" and platform.machine() == "x86_64":  # where the lock is made
        assert not extra, f"installed but not in requirements-dev.lock: {extra}"
    missing = sorted(set(lock) - set(installed))
    assert not missing, f"locked but not installed: {missing} (run ./test.sh: it reinstalls)"
    wrong = {n: (installed[n], v) for n, v in lock.items()
             if Version(installed[n]).public != Version(v).public}  # fmt: skip
    assert not wrong, f"installed versions differ from the lock (installed, locked): {wrong}"


def test_installed_versions_satisfy_the_requirements():
    from importlib.metadata import version

    from packaging.requirements import Requirement

    for line in _requirements() + _requirements("requirements-dev.txt"):
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
