"""Paths and the nbgrader command shared by the grading modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The nbgrader command as the course runs it: the same program, started ~1.8 s sooner
# (course/grading/nbgrader_cli.py); -P keeps the course root (the cwd) off sys.path.
NBGRADER = [sys.executable, "-P", "-m", "course.grading.nbgrader_cli"]


def nbgrader_env(root: Path = ROOT, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def nbgrader(*args: str, root: Path = ROOT, check: bool = True, quiet: bool = False, **kw):
    """Run one nbgrader command from the course root, echoing it (so the real command stays visible)."""
    if not quiet:
        print("$ nbgrader " + " ".join(args), flush=True)
    env = kw.pop("env", None) or nbgrader_env(root)
    out = subprocess.run([*NBGRADER, *args], cwd=root, env=env, capture_output=True,
                         text=True, **kw)  # fmt: skip
    if check and out.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out


def db_url(root: Path) -> str:
    return f"sqlite:///{root / 'gradebook.db'}"
