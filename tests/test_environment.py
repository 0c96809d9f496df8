"""The dependency pins live in requirements.txt; environment.yml must install the same set."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return sorted(ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip())


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
