"""Remove from the running venv what the previous lock held and the new one does not.

    python scripts/venv_follow_lock.py PREVIOUS_LOCK NEW_LOCK PYPROJECT [--dry-run]

scripts/ensure_env.sh runs it with the venv's Python before installing a changed lock (the install then
puts back whatever this platform still needs), so an updated venv holds what a fresh install of the
new lock would. It never removes what no lock holds: pip's
additions for this platform (appnope on macOS, CUDA torch's nvidia-* and triton on a Linux machine
with a GPU) and whatever the student installed by hand stay. Standard library only.
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def names(lock: str) -> set[str]:
    with open(lock) as f:
        return {norm(ln.split("==")[0]) for ln in f if "==" in ln and not ln.startswith("#")}


def dropped(previous: str, new: str, pyproject: str) -> list[str]:
    with open(pyproject, "rb") as f:
        own = norm(tomllib.load(f)["project"]["name"])
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {norm(d.metadata["Name"]) for d in metadata.distributions(path=site)
                 if d.metadata["Name"]}  # fmt: skip
    return sorted((names(previous) - names(new) - {own, "pip"}) & installed)


def main(argv: list[str]) -> int:
    previous, new, pyproject, *rest = argv
    gone = dropped(previous, new, pyproject)
    if gone:
        print("==> removing what the previous lock held and this one does not:", " ".join(gone))
        if rest != ["--dry-run"]:
            subprocess.run(
                [sys.executable, "-m", "pip", "uninstall", "-y", "-q", *gone], check=True
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
