"""Student budgets: wall time and peak memory of what a student runs.

- ``./baselm.sh``: a from-scratch build into a temporary directory (``--out``, ``--force``), so
  the course's ``artifacts/baselm`` is neither touched nor reused. Budget 5 min.
- Each lesson's solution notebook (``source_notebooks/*/*.ipynb``) top to bottom with nbclient, as
  a student runs it (no ``COURSE_SMOKE``), in a temporary working directory. 9.5's required part
  is the cells before the heading "Exercise 5 (optional)" (budget 10 min), timed from nbclient's
  per-cell execution records.
- Autograde per lesson (budget 30 s): ``bench/bench_autograde.py`` (another engineer's) when present.
- Peak memory (budget 4 GB): every job runs as a child process tree; the tree's summed RSS is
  polled every 0.2 s with psutil (the kernel is a grandchild), and ``getrusage(RUSAGE_CHILDREN)``
  gives the largest single reaped process as a cross-check.
Run: ``python -m bench.bench_budgets [--quick] [--skip-build] [--lessons 9.1 9.2]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, log, machine, table, write_section

GB = 1024**3


def run_tree(cmd: list[str], cwd: Path, env: dict | None = None, timeout: float = 3600) -> dict:
    """Run ``cmd``; return wall seconds, peak summed RSS of its process tree, exit code."""
    try:
        import psutil  # a dependency of ipykernel
    except ImportError:  # pragma: no cover
        psutil = None
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    root = psutil.Process(proc.pid) if psutil else None
    peak = 0
    out_chunks = []
    import threading

    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    while proc.poll() is None:
        if root is None:
            time.sleep(0.2)
            continue
        try:
            procs = [root, *root.children(recursive=True)]
            rss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                except psutil.Error:
                    pass
            peak = max(peak, rss)
        except psutil.Error:
            pass
        if time.perf_counter() - t0 > timeout:
            proc.kill()
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    reader.join(timeout=5)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB -> bytes
    text = b"".join(c for c in out_chunks if c).decode(errors="replace")
    return {
        "wall": wall, "rss_tree": peak, "rss_child_max": after if after > before * 1024 else None,
        "rc": proc.returncode, "tail": text[-2000:],
    }  # fmt: skip


def execute_notebook(path: str, out_json: str) -> None:
    """Child side: run one notebook with nbclient in the current directory; write cell times."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": "."}}
    )
    err = None
    try:
        client.execute()
    except Exception as e:  # noqa: BLE001 - recorded, reported as a failure
        err = f"{type(e).__name__}: {str(e)[-300:]}"
    cells = []
    for c in nb.cells:
        ex = c.get("metadata", {}).get("execution", {})
        dur = None
        if "iopub.execute_input" in ex and "shell.execute_reply" in ex:
            a = datetime.datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
            b = datetime.datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
            dur = (b - a).total_seconds()
        cells.append({"type": c.cell_type, "head": c.source[:120], "seconds": dur})
    Path(out_json).write_text(json.dumps({"error": err, "cells": cells}))


def required_seconds(cells: list[dict], marker: str = "(optional)") -> float:
    """Seconds of the code cells before the first markdown heading that says optional."""
    total = 0.0
    for c in cells:
        if c["type"] == "markdown" and c["head"].lstrip().startswith("#") and marker in c["head"]:
            break
        total += c["seconds"] or 0.0
    return total


def fmt_rss(r: dict) -> str:
    s = f"{r['rss_tree'] / GB:.2f}"
    if r.get("rss_child_max"):
        s += f" ({r['rss_child_max'] / GB:.2f})"
    return s


def run(quick: bool, skip_build: bool, lessons: list[str] | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "COURSE_SMOKE"}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    rows, notes = [], []
    if not skip_build:
        with tempfile.TemporaryDirectory(prefix="bench_baselm_") as d:
            log("bench_budgets: ./baselm.sh --force --out (temporary dir) ...")
            r = run_tree(["bash", "baselm.sh", "--force", "--out", d], ROOT, env)
            ok = r["rc"] == 0
            rows.append(["`./baselm.sh` (from scratch)", f"{r['wall'] / 60:.1f} min", "<= 5 min",
                         fmt_rss(r), "met" if ok and r["wall"] <= 300 and r["rss_tree"] <= 4 * GB
                         else ("FAILED" if not ok else "NOT met")])  # fmt: skip
            if not ok:
                notes.append(f"baselm.sh failed: {r['tail'][-400:]}")
    nbs = sorted((ROOT / "source_notebooks").glob("*/*.ipynb"))
    if lessons:
        nbs = [p for p in nbs if p.stem in lessons]
    for nb in nbs:
        lesson = nb.stem
        with tempfile.TemporaryDirectory(prefix=f"bench_nb_{lesson}_") as d:
            out = Path(d) / "cells.json"
            log(f"bench_budgets: executing {nb.relative_to(ROOT)} ...")
            cmd = [sys.executable, "-m", "bench.bench_budgets", "--execute", str(nb), str(out)]
            r = run_tree(cmd, Path(d), {**env, "PYTHONPATH": str(ROOT)})
            res = json.loads(out.read_text()) if out.exists() else {"error": r["tail"], "cells": []}
        ok = r["rc"] == 0 and not res["error"]
        budget = "<= 4 GB" if lesson != "9.5" else "required part <= 10 min"
        verdict = "met" if ok and r["rss_tree"] <= 4 * GB else ("FAILED" if not ok else "NOT met")
        rows.append([f"{lesson} solution notebook, end to end", f"{r['wall'] / 60:.1f} min",
                     budget, fmt_rss(r), verdict])  # fmt: skip
        if lesson == "9.5" and res["cells"]:
            req = required_seconds(res["cells"])
            rows.append(
                [
                    "9.5 required part (cells before Exercise 5)",
                    f"{req / 60:.1f} min",
                    "<= 10 min",
                    "(same run)",
                    "met" if ok and req <= 600 else "NOT met",
                ]
            )
        slow = sorted((c for c in res["cells"] if c["seconds"]), key=lambda c: -c["seconds"])[:3]
        if slow:
            notes.append(f"{lesson} slowest cells: " + "; ".join(
                f"{c['seconds']:.0f} s `{c['head'].splitlines()[0][:60]}`" for c in slow))  # fmt: skip
        if res["error"]:
            notes.append(f"{lesson} failed: {res['error'][:300]}")
    from helpers.baselm import check_artifact

    if not check_artifact()[0]:
        notes.append(
            "BaseLM was missing during this run, so 9.5 skipped its BaseLM lab: its "
            "time here is NOT the student's; rerun `python -m bench` once it is built."
        )
    auto = ROOT / "bench" / "bench_autograde.py"
    if auto.exists() and not quick:
        log("bench_budgets: running bench/bench_autograde.py ...")
        r = run_tree([sys.executable, "-m", "bench.bench_autograde"], ROOT, env)
        rows.append(["autograde, all lessons (bench_autograde.py)", f"{r['wall']:.0f} s",
                     "<= 30 s per lesson", fmt_rss(r), "see its section" if r["rc"] == 0
                     else "FAILED"])  # fmt: skip
    else:
        notes.append(
            "Autograde per lesson: measured by `bench/bench_autograde.py` (its own section)"
            + ("" if auto.exists() else "; not present at the time of this run")
            + "."
        )
    body = [
        "## Student budgets",
        "",
        f"Machine: {machine()}. Run by `python -m bench.bench_budgets`.",
        "",
        "Wall-clock times on the shared 2-core machine (other programs were running, so these "
        "are upper bounds for a quiet laptop). Peak memory: the summed RSS of the job's whole "
        "process tree (Jupyter kernel included), polled every 0.2 s; in brackets the largest "
        "single process from `getrusage(RUSAGE_CHILDREN)`. Notebooks run as a student runs them "
        "(no `COURSE_SMOKE`).",
        "",
        table(["what", "wall", "budget", "peak RSS GB", ""], rows),
        "",
        *[f"- {n}" for n in notes],
    ]
    return "\n".join(body)


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--execute":
        execute_notebook(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="skip the BaseLM build and autograde")
    p.add_argument("--skip-build", action="store_true", help="do not time ./baselm.sh")
    p.add_argument("--lessons", nargs="*", help="only these lessons (default: all)")
    p.add_argument("--no-write", action="store_true", help="print, do not update BENCHMARKS.md")
    a = p.parse_args(argv)
    body = run(a.quick, a.skip_build or a.quick, a.lessons)
    print(body)
    if not a.no_write:
        write_section("student-budgets", body)


if __name__ == "__main__":
    main()
