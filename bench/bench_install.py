"""The student's install before and after the split into a student set and a developer set.

Before: every student installed everything the repository's tests need (requirements-dev.lock:
the course's packages plus pytest, ruff, playwright, cosmic-ray, hypothesis, JupyterHub and their
trees). After: ./notebook.sh installs requirements.lock, the student's set at the same versions.
Both are fresh venvs made in one run, one after the other, from the same pip cache state (the
first run warms the cache: run it once before measuring, or read the second figures of
``--reps 2``), with ``pip install -r LOCK`` as scripts/ensure_env.sh runs it (ensure_env also installs
torch alone first where scripts/torch_index.sh names an index: not on this build machine). Writes the
"Install" section of BENCHMARKS.md.

Run: ``python -m bench.bench_install [--reps 2]`` (a few minutes per install).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, log, machine, median, table, write_section

SETS = {"before (requirements-dev.lock)": "requirements-dev.lock",
        "after (requirements.lock)": "requirements.lock"}  # fmt: skip
TOOLS = ["pytest", "ruff", "playwright", "cosmic_ray", "hypothesis", "jupyterhub"]


def _size_mb(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1024


def install(lock: str, where: Path) -> dict:
    """A fresh venv at ``where`` with ``lock`` installed: seconds, MB, packages, tools present."""
    py = where / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    pip = [str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    t0 = time.monotonic()
    subprocess.run([*pip, "-r", str(ROOT / lock)], check=True)
    seconds = time.monotonic() - t0
    freeze = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True)
    names = {ln.split("==")[0].lower().replace("-", "_") for ln in freeze.stdout.splitlines()}
    return {"s": seconds, "mb": _size_mb(where), "n": len(names),
            "tools": [t for t in TOOLS if t in names]}  # fmt: skip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args(argv)
    results: dict[str, list[dict]] = {name: [] for name in SETS}
    for rep in range(args.reps):
        for name, lock in SETS.items():
            tmp = Path(tempfile.mkdtemp(prefix="bench-install-"))
            try:
                log(f"rep {rep + 1}: {name} ...")
                results[name].append(install(lock, tmp / "venv"))
                log(f"  {results[name][-1]}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for name, runs in results.items():
        last = runs[-1]
        rows.append([name, f"{median([r['s'] for r in runs]):.0f} s",
                     f"{median([r['mb'] for r in runs]):.0f} MB", last["n"],
                     ", ".join(last["tools"]) or "none"])  # fmt: skip
    before, after = (results[n] for n in SETS)
    ratio_mb = median([r["mb"] for r in after]) / median([r["mb"] for r in before])
    ratio_s = median([r["s"] for r in after]) / median([r["s"] for r in before])
    body = "\n".join([
        "## Install: the student's venv before and after the student/developer split",
        "",
        f"Machine: {machine()}. Run by `python -m bench.bench_install --reps {args.reps}` "
        f"(median of {args.reps} fresh venvs per set, the sets alternating; pip's cache as the "
        "machine had it, so the figures are install time from cache and local wheels, not "
        "download time).",
        "",
        table(["set", "pip install", "venv size", "packages", "developer tools"], rows),
        "",
        f"After / before: size {ratio_mb:.2f}x, install time {ratio_s:.2f}x. The torch build is "
        "this machine's CPU wheel in both; on Linux from PyPI it is the CUDA build in both.",
    ])  # fmt: skip
    write_section("install", body)
    print(body)


if __name__ == "__main__":
    main()
