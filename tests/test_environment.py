"""What the course needs is in requirements.txt (environment.yml installs the same set); the exact
versions every install gets are in requirements.lock (scripts/lock.sh makes it from requirements.txt;
scripts/ensure_env.sh installs it)."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return sorted(ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip())


def _lock() -> dict[str, str]:
    """requirements.lock as {normalised name: exact version}."""
    from packaging.utils import canonicalize_name

    pins = {}
    for ln in (ROOT / "requirements.lock").read_text().splitlines():
        ln = ln.split("#")[0].strip()
        if ln:
            name, sep, version = ln.partition("==")
            assert sep and version and not any(c in version for c in "<>=!~ ;+"), ln
            pins[canonicalize_name(name)] = version
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


def test_required_packages_are_pinned():
    names = {re.split(r"[<>=!~ ]", r)[0].lower() for r in _requirements()}
    for pkg in ["numpy", "transformers", "peft", "trl", "datasets", "accelerate", "nbgrader",
                "jupyterlab", "notebook", "ipywidgets", "matplotlib", "tqdm", "tokenizers",
                "pytest", "nbclient"]:  # fmt: skip
        assert pkg in names, pkg


def test_installed_versions_satisfy_pins():
    from importlib.metadata import version

    from packaging.requirements import Requirement

    for line in _requirements():
        req = Requirement(line)
        assert req.specifier.contains(version(req.name), prereleases=True), (
            line,
            version(req.name),
        )


def test_lock_pins_every_requirement_inside_its_range():
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    lock = _lock()
    for line in _requirements():
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in lock, f"{req.name} is required but not locked: run scripts/lock.sh"
        assert req.specifier.contains(lock[name], prereleases=True), (
            f"{req.name}=={lock[name]} in requirements.lock is outside {line}: run scripts/lock.sh"
        )


def test_the_venv_is_exactly_the_lock():
    """Every installed distribution but the course itself is locked, at the locked version (a local
    build label such as torch's +cpu aside): two installs from the lock give the same freeze."""
    from importlib import metadata

    from packaging.utils import canonicalize_name
    from packaging.version import Version

    lock = _lock()
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    own = canonicalize_name(_project_name())
    extra = sorted(set(installed) - set(lock) - {own, "pip"})
    assert not extra, f"installed but not in requirements.lock: {extra}"
    missing = sorted(set(lock) - set(installed))
    assert not missing, f"locked but not installed: {missing} (run ./test.sh: it reinstalls)"
    wrong = {n: (installed[n], v) for n, v in lock.items()
             if Version(installed[n]).public != Version(v).public}  # fmt: skip
    assert not wrong, f"installed versions differ from the lock (installed, locked): {wrong}"


def _project_name() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
