"""Run lesson 9.5's BaseLM lab in its full profile and commit what it measured.

Executes ``source_notebooks/9.5/9.5.ipynb`` (the instructor's solutions) top to bottom in a
temporary folder with nbclient, then reads every BaseLM run it saved (``runs/<name>/passport.json``,
``history.json`` and ``heldout.json``) and writes ``course/records/baselm_lab.json``: per run, the
held-out greedy pass rates before and after under each verifier with the 95% paired interval
(``helpers.stats.paired_difference``), attempts/skips, and for the K sweep the degenerate-group
fraction and the within-group reward std; plus the BaseLM weights hash, the seeds, the CPU and the
library versions. The registry row 9.5-11 quotes this file, and ``tests/test_lab_record.py`` checks
that it does. One seed (0) per run; the numbers belong to this machine's CPU (see lesson 9.5).
It also times the lab: wall seconds per heading from nbclient's cell timestamps, the required part
(every heading not marked optional) and each optional exercise, and the kernel's peak RSS; the
"BaseLM lab" section of BENCHMARKS.md is rewritten from them.

Run: ``python course/make_baselm_lab_record.py`` (about 70 s on a quiet 2-core machine, several
times that under load).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.baselm import _cpu_model, baselm_dir  # noqa: E402
from helpers.stats import paired_difference  # noqa: E402

NOTEBOOK = ROOT / "source_notebooks" / "9.5" / "9.5.ipynb"
OUT = ROOT / "course" / "records" / "baselm_lab.json"
RUNS = ("format_smoke", "arith_main", "arith_sloppy", "arith_no_kl")
SWEEP = ("sweep_K2", "sweep_K8", "sweep_K16")


def execute(workdir: Path, timeout: int = 3600) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    for key in ("COURSE_SMOKE", "NBGRADER_EXECUTION"):  # the full profile: the kernel inherits this
        os.environ.pop(key, None)
    t0 = time.time()
    NotebookClient(nb, timeout=timeout, resources={"metadata": {"path": str(workdir)}}).execute()
    nbformat.write(nb, workdir / "executed.ipynb")
    return time.time() - t0


def _stamp(x: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()


def section_seconds(executed: Path) -> dict[str, float]:
    """Wall seconds of the code cells under each heading (## or ###) of the executed notebook,
    from the timestamps nbclient records in each cell's metadata."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    out: dict[str, float] = {}
    head = "(top)"
    for c in nb.cells:
        if c.cell_type == "markdown":
            for ln in c.source.splitlines():
                if ln.startswith("## ") or ln.startswith("### "):
                    head = ln.lstrip("#").strip()
                    break
            continue
        ex = c.metadata.get("execution", {})
        if "iopub.execute_input" in ex and "shell.execute_reply" in ex:
            dt_ = _stamp(ex["shell.execute_reply"]) - _stamp(ex["iopub.execute_input"])
            out[head] = round(out.get(head, 0.0) + dt_, 1)
    return out


def timing(sections: dict[str, float], notebook_seconds: float, peak_rss_mb: float) -> dict:
    """Required part (everything but sections marked optional) and each optional part."""
    optional = {h: s for h, s in sections.items() if "optional" in h.lower()}
    required = round(sum(s for h, s in sections.items() if h not in optional), 1)
    return {
        "required_seconds": required,
        "optional_seconds": optional,
        "notebook_seconds": round(notebook_seconds, 1),
        "kernel_peak_rss_mb": round(peak_rss_mb, 1),
        "sections": sections,
    }


def summarise(runs_dir: Path) -> dict:
    out = {}
    for name in RUNS + SWEEP:
        d = runs_dir / name
        held = json.loads((d / "heldout.json").read_text())
        extra = json.loads((d / "passport.json").read_text())["extra"]
        hist = json.loads((d / "history.json").read_text())["history"]
        rates = {}
        for v in held["before"]:
            pd = paired_difference(held["before"][v], held["after"][v])
            rates[v] = {
                "before": pd.before,
                "after": pd.after,
                "diff": round(pd.diff, 4),
                "ci95": [round(pd.low, 4), round(pd.high, 4)],
                "gained": pd.gained,
                "lost": pd.lost,
                "excludes_zero": pd.excludes_zero,
            }
        out[name] = {
            "n_heldout": len(held["prompts"]),
            "rates": rates,
            "steps": extra["steps_run"],
            "groups_attempted": int(sum(hist["groups"])),
            "groups_skipped": int(sum(hist["skipped"])),
            "initial_pass_rate": extra["data"].get("initial_pass_rate"),
        }
    sweep = json.loads((runs_dir / "sweep.json").read_text())
    for k, v in sweep.items():
        out[f"sweep_K{k}"]["sweep"] = v
    return out


def _diff(x: dict) -> str:
    lo, hi = x["ci95"]
    verdict = "" if x["excludes_zero"] else ", no difference measured"
    return (
        f"{x['before']:.2f} -> {x['after']:.2f} ({x['diff']:+.2f} [{lo:+.2f}, {hi:+.2f}]{verdict})"
    )


def figures(record: dict) -> list[str]:
    """The phrases of the registry row 9.5-11, each made from the record (the test checks them)."""
    r = record["runs"]
    out = [
        f"BaseLM weights sha256 {record['baselm_weights_sha256'][:12]}",
        f"{record['machine']['cpu']}, {record['machine']['torch_cpu_capability']} kernels",
        f"format smoke {r['format_smoke']['steps']} steps: {_diff(r['format_smoke']['rates']['format'])}"
        f" on {r['format_smoke']['n_heldout']} items",
        f"main run: {_diff(r['arith_main']['rates']['strict'])}",
        f"sloppy-verifier run: {_diff(r['arith_sloppy']['rates']['strict'])} under the strict verifier"
        f" and {_diff(r['arith_sloppy']['rates']['sloppy'])} under the sloppy one",
        f"beta = 0: {_diff(r['arith_no_kl']['rates']['strict'])}",
    ]
    for k in (2, 8, 16):
        sw = r[f"sweep_K{k}"]["sweep"]
        out.append(
            f"K={k}: degenerate groups {sw['degenerate_frac']:.2f}, within-group reward std "
            f"{sw['within_group_reward_std']:.2f}, held-out {_diff(r[f'sweep_K{k}']['rates']['strict'])}"
        )
    return out


def timing_table(record: dict) -> str:
    """The "BaseLM lab" section of BENCHMARKS.md, from the record's timing."""
    t = record["timing"]
    rows = [f"| required part (everything not marked optional) | {t['required_seconds']:.0f} |"]
    rows += [f"| optional: {h} | {s:.0f} |" for h, s in t["optional_seconds"].items()]
    rows.append(f"| whole notebook (kernel start to end) | {t['notebook_seconds']:.0f} |")
    detail = [f"| {h} | {s:.1f} |" for h, s in t["sections"].items()]
    m = record["machine"]
    return "\n".join([
        "## BaseLM lab (lesson 9.5, full profile)",
        "",
        f"Run by `{record['command']}` on {record['created']}: {m['cpu']}, {m['cores']} cores, torch "
        f"{record['versions']['torch']} ({m['torch_cpu_capability']} kernels); wall seconds of the "
        "code cells under each heading, from nbclient's per-cell timestamps; the machine may have "
        "been shared, so these are upper bounds for a quiet 2-core laptop. Peak resident memory of "
        f"the kernel: {t['kernel_peak_rss_mb']:.0f} MB.",
        "",
        "| part | wall s |",
        "|---|---|",
        *rows,
        "",
        "<details><summary>every heading</summary>",
        "",
        "| heading | wall s |",
        "|---|---|",
        *detail,
        "",
        "</details>",
    ])  # fmt: skip


def write_benchmarks_section(record: dict) -> None:
    from bench.common import write_section

    write_section("baselm_lab", timing_table(record))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep the executed notebook and runs/ in this folder",
    )
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="baselm-lab-") as tmp:
        work = Path(tmp)
        seconds = execute(work)
        if a.keep:
            shutil.copytree(work, a.keep, dirs_exist_ok=True)
        runs = summarise(work / "runs")
        sections = section_seconds(work / "executed.ipynb")
    import resource

    # the kernel was this process's child and has exited: its peak RSS is the children's maximum
    kernel_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    import torch
    import transformers

    baselm = json.loads((baselm_dir() / "passport.json").read_text())
    record = {
        "command": "python course/make_baselm_lab_record.py",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "notebook_seconds": round(seconds, 1),
        "baselm_weights_sha256": baselm["weights_sha256"],
        "seeds": {"trainer": 0, "lora": 0},
        "machine": {
            "cpu": _cpu_model(),
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "cores": os.cpu_count(),
        },
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "runs": runs,
        "timing": timing(sections, seconds, kernel_rss),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(record, indent=1) + "\n")
    for name, r in runs.items():
        if "rates" in r:
            for v, x in r["rates"].items():
                print(f"{name:14s} {v:7s} {x['before']:.2f} -> {x['after']:.2f}  ci95 {x['ci95']}")
        else:
            print(name, r)
    print(f"wrote {a.out} ({seconds:.0f} s of notebook)")
    write_benchmarks_section(record)
    print("registry 9.5-11 phrases:\n  " + "\n  ".join(figures(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
