"""The course's dependency lists, read from pyproject.toml, and the files made from them.

pyproject.toml is the one place a dependency is declared: ``[project] dependencies`` (what a student
runs), the ``hub`` extra (JupyterHub) and the ``dev`` dependency group (tests, lint, mutation
testing). scripts/lock.sh resolves them into requirements.lock and requirements-dev.lock and then
runs ``generate``, which writes the two files that repeat versions elsewhere:

- environment.yml: the student's set for conda (the ranges of ``dependencies``);
- helpers/data/colab_pins.json: level B's Colab pins, the locked versions of ``[tool.course] colab``.

    python scripts/deps.py requirements student|dev   print a set, one requirement per line
    python scripts/deps.py generate                   write environment.yml and the Colab pins
    python scripts/deps.py check                      exit 1 when either file is not what generate writes

Standard library only (Python 3.11): lock.sh runs it with the Python that makes the venvs.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT = ROOT / "environment.yml"
COLAB_PINS = ROOT / "helpers" / "data" / "colab_pins.json"
LOCKS = {"student": ROOT / "requirements.lock", "dev": ROOT / "requirements-dev.lock"}


def _project(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text())


def requirements(which: str, root: Path = ROOT) -> list[str]:
    """The requirement strings of a set: "student" (the project's dependencies) or "dev" (those, the
    hub extra and the dev group)."""
    doc = _project(root)
    reqs = list(doc["project"]["dependencies"])
    if which == "dev":
        for extra in doc["project"].get("optional-dependencies", {}).values():
            reqs += extra
        for r in doc["dependency-groups"]["dev"]:
            if not isinstance(r, str):  # {include-group = ...}: not used here; refuse, never drop
                raise ValueError(f"the dev group holds {r!r}: list requirements only")
            reqs.append(r)
    elif which != "student":
        raise ValueError(f"a set is 'student' or 'dev', not {which!r}")
    return reqs


def _name(requirement: str) -> str:
    """The normalised project name of a requirement string (PEP 503)."""
    import re

    name = re.match(r"[A-Za-z0-9._-]+", requirement.strip()).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(which: str = "student", root: Path = ROOT) -> dict[str, str]:
    """A lock as {normalised name: exact version}."""
    pins = {}
    for line in (root / LOCKS[which].name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            pkg, _, version = line.partition("==")
            pins[_name(pkg)] = version.strip()
    return pins


def environment_yml(root: Path = ROOT) -> str:
    lines = [
        "# For conda users (students): the course's dependencies (pyproject.toml), written by the",
        "# course's lock script; pip inside conda resolves these ranges afresh, requirements.lock is",
        "# the exact set. On Linux without an NVIDIA GPU, first: export",
        "# PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu (else pip takes the CUDA torch).",
        "# conda env create -f environment.yml && conda activate rlvr-grpo && pip install --no-deps -e .",
        "name: rlvr-grpo",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        "  - python=3.11",
        "  - pip",
        "  - pip:",
    ]
    lines += [f"      - {r}" for r in requirements("student", root)]
    return "\n".join(lines) + "\n"


def colab_pins(root: Path = ROOT) -> dict[str, str]:
    """Level B's Colab pins: the student lock's version of each ``[tool.course] colab`` package."""
    lock = locked("student", root)
    names = _project(root)["tool"]["course"]["colab"]
    missing = [n for n in names if _name(n) not in lock]
    if missing:
        raise SystemExit(f"error: {missing} are Colab packages but not in requirements.lock")
    return {n: lock[_name(n)] for n in names}


def _colab_json(root: Path = ROOT) -> str:
    return json.dumps(colab_pins(root), indent=1) + "\n"


def generate(root: Path = ROOT) -> None:
    (root / ENVIRONMENT.name).write_text(environment_yml(root))
    (root / COLAB_PINS.relative_to(ROOT)).write_text(_colab_json(root))


def stale(root: Path = ROOT) -> list[str]:
    """The generated files that differ from what ``generate`` would write now."""
    want = {ENVIRONMENT.name: environment_yml(root),
            str(COLAB_PINS.relative_to(ROOT)): _colab_json(root)}  # fmt: skip
    return [
        f for f, text in want.items() if not (root / f).is_file() or (root / f).read_text() != text
    ]


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "requirements":
        print("\n".join(requirements(argv[1])))
    elif argv == ["generate"]:
        generate()
        print(f"wrote {ENVIRONMENT.name} and {COLAB_PINS.relative_to(ROOT)}")
    elif argv == ["check"]:
        bad = stale()
        if bad:
            print(f"out of date: {', '.join(bad)} (run: python scripts/deps.py generate)")
            return 1
    else:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
