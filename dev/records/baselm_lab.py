"""Run lesson 9.5's BaseLM lab in its full profile and commit what it measured.

Executes ``source_notebooks/9.5/9.5.ipynb`` (the instructor's solutions) top to bottom in a
temporary folder with nbclient, then reads every BaseLM run it saved (``runs/<name>/passport.json``,
``history.json`` and ``heldout.json``) and writes ``course/records/baselm_lab.json``: per run, the
held-out greedy pass rates before and after under each verifier with the 95% paired interval
(``helpers.stats.paired_difference``), attempts/skips, the held-out prompts' hash, for arithmetic
runs the same interval on the prompts held out in both operand orders and on the rest
(``helpers.lab_audit.both_orders_heldout``), and for the K sweep the degenerate-group fraction, the
within-group reward std and each K against each other K after training, paired on the shared
held-out prompts; plus the BaseLM weights hash, the seeds, the CPU and the
library versions; for the sloppy-verifier audit, the patched-rule pass rates of the main, sloppy
and patched runs and the rate, examples and kinds (``helpers.lab_audit.exploit_kind``) of exploiting
completions and the patched- and strict-rule pass rates at every evaluation point during training
(the notebook's ``audit.json``; kinds and curves only from notebooks that make them), and the
third rule's (``helpers.lab_audit.one_answer_judge``) pass rates and exploit rate.
The notebook runs once per seed (``COURSE_LAB_SEED``; seeds 0, 1 and 2 by default: the LoRA seed of
every run and the trainer seed of every arithmetic run and of the K sweep; the format smoke run keeps
trainer seed ``FORMAT_TRAINER_SEED`` = 0, so its three results differ in the LoRA seed only), so every
contrast is recorded three times. The registry row 9.5-11 quotes
this file, and ``tests/test_lab_record.py`` checks that it does. The numbers belong to this
machine's CPU (see lesson 9.5). It also times the lab (seed 0's execution): wall seconds per heading
from nbclient's cell timestamps, the required part (every heading not marked optional) and each
optional exercise, and the kernel's peak RSS; the "BaseLM lab" section of BENCHMARKS.md is
rewritten from them.

Run: ``python -m dev.records.baselm_lab`` (about 5 minutes per seed on a quiet 2-core
machine, several times that under load).

The replication: ``python -m dev.records.baselm_lab --replication`` runs fresh seeds (3, 4, 5) judged
on a fresh held-out stream (the lesson's ``COURSE_LAB_HELDOUT=1``: no question the tuning, the
settings probe or BaseLM's build read) into ``course/records/baselm_lab_replication.json``, in the
same format; lesson 9.5's replication paragraph quotes it (``replication_phrases``).
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

from dev import current_command
from helpers.baselm import _cpu_model, baselm_dir
from helpers.lab_audit import both_orders_heldout, exploit_kind, operands
from helpers.passport import git_state
from helpers.stats import PairedDifference, holm, paired_difference, paired_p_value

ROOT = Path(__file__).resolve().parents[2]

NOTEBOOK = ROOT / "source_notebooks" / "9.5" / "9.5.ipynb"
OUT = ROOT / "course" / "records" / "baselm_lab.json"
# the replication: fresh seeds, judged on a fresh held-out stream (lesson 9.5's COURSE_LAB_HELDOUT:
# no prompt the lab was tuned on or BaseLM's build measured)
REPLICATION = ROOT / "course" / "records" / "baselm_lab_replication.json"
REPLICATION_SEEDS = (3, 4, 5)
REPLICATION_STREAM = 1
COMMAND = "python -m dev.records.baselm_lab"  # what the record names (older records: dev.MOVED)
RUNS = ("format_smoke", "arith_main", "arith_sloppy", "arith_patched", "arith_no_kl")
AUDITED = ("arith_main", "arith_sloppy", "arith_patched")
SEEDS = (0, 1, 2)
SWEEP = ("sweep_K2", "sweep_K8", "sweep_K16")
K_CONTRASTS = ((2, 8), (8, 16), (2, 16))  # (k1, k2): K = k2 minus K = k1, after training
# the trainer seed of the lesson's fmt_cfg: COURSE_LAB_SEED sets only the format run's LoRA seed
FORMAT_TRAINER_SEED = 0


def lab_code_sha256(commit: str | None = None) -> str:
    """The code the lab runs: sha256 over the code cells of lesson 9.5's notebook and every file
    git tracks under helpers/ (the shipped BaseLM build included; the runs load the installed
    copy in artifacts/, which the record's ``baselm_weights_sha256`` names), read from the working
    tree, or from ``commit`` when given. The notebook's prose is left out, so two records whose
    lessons differ only in their text carry the same hash. Not hashed: this script, which only
    executes the notebook and summarises what it saved."""
    import hashlib
    import subprocess

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True).stdout

    def read(rel: str) -> bytes:
        return git("show", f"{commit}:{rel}") if commit else (ROOT / rel).read_bytes()

    h = hashlib.sha256()
    cells = json.loads(read(str(NOTEBOOK.relative_to(ROOT))))["cells"]
    for c in cells:
        if c["cell_type"] == "code":
            h.update("".join(c["source"]).encode() + b"\0")
    names = (
        git("ls-tree", "-r", "--name-only", commit, "helpers")
        if commit
        else git("ls-files", "helpers")
    )
    for rel in sorted(names.decode().split()):
        h.update(rel.encode() + b"\0" + read(rel) + b"\0")
    return h.hexdigest()


def execute(workdir: Path, seed: int, timeout: int = 3600, stream: int = 0) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    for key in ("COURSE_SMOKE", "NBGRADER_EXECUTION"):  # the full profile: the kernel inherits this
        os.environ.pop(key, None)
    os.environ["COURSE_LAB_SEED"] = str(seed)
    os.environ["COURSE_LAB_HELDOUT"] = str(stream)
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


def _rate(pd) -> dict:
    return {
        "before": pd.before,
        "after": pd.after,
        "diff": round(pd.diff, 4),
        "ci95": [round(pd.low, 4), round(pd.high, 4)],
        "gained": pd.gained,
        "lost": pd.lost,
        "excludes_zero": pd.excludes_zero,
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
            rates[v] = _rate(paired_difference(held["before"][v], held["after"][v]))
        out[name] = {
            "n_heldout": len(held["prompts"]),
            "heldout_hash": extra["data"]["prompts"]["heldout_hash"],
            "rates": rates,
            "steps": extra["steps_run"],
            "groups_attempted": int(sum(hist["groups"])),
            "groups_skipped": int(sum(hist["skipped"])),
            "initial_pass_rate": extra["data"].get("initial_pass_rate"),
        }
        if "strict" in held["before"]:  # arithmetic: split by whether (b, a) was a training pair
            both = [both_orders_heldout(p) for p in held["prompts"]]
            out[name]["both_orders"] = {
                where: _rate(paired_difference(
                    [x for x, k in zip(held["before"]["strict"], both) if k == keep],
                    [x for x, k in zip(held["after"]["strict"], both) if k == keep]))
                if keep in both else None  # an empty subset has no interval
                for where, keep in (("both_heldout", True), ("swapped_in_train", False))
            }  # fmt: skip
    sweep = json.loads((runs_dir / "sweep.json").read_text())
    for k, v in sweep.items():
        out[f"sweep_K{k}"]["sweep"] = {
            key: x for key, x in v.items() if key not in ("after_strict", "prompts")
            and not key.startswith("vs_K")
        }  # fmt: skip
    # K against K after training, paired on the shared held-out prompts (the lesson's cell does too)
    after = {}
    for name in SWEEP:
        held = json.loads((runs_dir / name / "heldout.json").read_text())
        after[name] = (held["prompts"], held["after"]["strict"])
    for k1, k2 in K_CONTRASTS:
        (p1, a1), (p2, a2) = after[f"sweep_K{k1}"], after[f"sweep_K{k2}"]
        assert p1 == p2, "the sweep's runs must be judged on the same held-out prompts"
        out[f"sweep_K{k2}"].setdefault("k_contrasts", {})[f"vs_K{k1}"] = _rate(
            paired_difference(a1, a2)
        )
    audit = json.loads((runs_dir / "audit.json").read_text())
    for name in AUDITED:
        a = audit[name]
        out[name]["audit"] = {
            "reward_verifier": a["reward_verifier"],
            "exact": _rate(PairedDifference(**a["exact"])),  # the notebook saved its fields
            "sloppy_after": a["sloppy_after"],
            "exploit_rate": a["exploit_rate"],
            "exploit_examples": a["exploit_examples"],
        }
        for key in ("exploit_kinds", "curve", "judge_exploit_rate"):  # notebooks since the audit
            if key in a:  # counts kinds, rescores every evaluation point and asks a third rule
                out[name]["audit"][key] = a[key]
        if "judge" in a:
            out[name]["audit"]["judge"] = _rate(PairedDifference(**a["judge"]))
    return out


def _diff(x: dict) -> str:
    lo, hi = x["ci95"]
    verdict = "" if x["excludes_zero"] else ", no difference measured"
    return (
        f"{x['before']:.2f} -> {x['after']:.2f} ({x['diff']:+.2f} [{lo:+.2f}, {hi:+.2f}]{verdict})"
    )


def _gain(x: dict) -> str:
    lo, hi = x["ci95"]
    return f"{x['diff']:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def reported_intervals(record: dict) -> list[tuple[str, str, dict]]:
    """(seed, contrast, rate) of every paired 95% interval the registry row 9.5-11 quotes; the
    lesson's prose quotes a subset of them."""
    out = []
    for seed, r in record["runs"].items():
        out += [
            (seed, "format smoke", r["format_smoke"]["rates"]["format"]),
            (seed, "main run", r["arith_main"]["rates"]["strict"]),
            (seed, "sloppy run, sloppy rule", r["arith_sloppy"]["rates"]["sloppy"]),
            (seed, "sloppy run, patched rule", r["arith_sloppy"]["audit"]["exact"]),
            (seed, "patched run, patched rule", r["arith_patched"]["audit"]["exact"]),
            (seed, "beta = 0", r["arith_no_kl"]["rates"]["strict"]),
        ]
        out += [(seed, f"K={k}", r[f"sweep_K{k}"]["rates"]["strict"]) for k in (2, 8, 16)]
    return out


SECONDARY = ("beta = 0", "K=2", "K=8", "K=16")  # the no-KL run and the K sweep
HOLM_ALPHA = 0.05


def secondary_contrasts(record: dict) -> list[tuple[str, str, dict, float, bool]]:
    """(seed, contrast, rate, p, survives) for each secondary contrast among the reported
    intervals (the no-KL run and the K sweep, every seed): p is the two-sided p-value of the
    score test of no change behind the interval (``paired_p_value``, from the recorded gained and
    lost counts), and survives says whether Holm's procedure over this family rejects "no change"
    at family-wise level HOLM_ALPHA. The main, sloppy and patched contrasts are not adjusted."""
    fam = [(s, c, x) for s, c, x in reported_intervals(record) if c in SECONDARY]
    n = {seed: r["arith_main"]["n_heldout"] for seed, r in record["runs"].items()}
    ps = [paired_p_value(n[s], x["gained"], x["lost"]) for s, _, x in fam]
    return [(*f, p, h) for f, p, h in zip(fam, ps, holm(ps, HOLM_ALPHA))]


CONTRAST_NAMES = {"beta = 0": "the no-KL run", "K=2": "K = 2", "K=8": "K = 8", "K=16": "K = 16"}


def self_disagreeing(record: dict) -> list[str]:
    """The secondary contrasts that disagree with themselves: two seeds' paired intervals that do
    not overlap (each seed's interval describes its own trained policy, none the configuration)."""
    ivs: dict[str, list[list[float]]] = {}
    for _, c, x in reported_intervals(record):
        if c in SECONDARY:
            ivs.setdefault(c, []).append(x["ci95"])
    return [c for c in SECONDARY if any(a[1] < b[0] or b[1] < a[0]
                                        for i, a in enumerate(ivs[c]) for b in ivs[c][i + 1 :])]  # fmt: skip


def _and_list(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c" ("" for none)."""
    return " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)


def _names(cs: list[str]) -> str:
    return _and_list([CONTRAST_NAMES[c] for c in cs]) or "none"


def disagreeing_phrase(here: list[str], before: list[str], seeds: list[str]) -> str:
    """The replication's self-disagreeing secondary contrasts (``here``) beside the main record's
    (``before``, on ``seeds``), with the connective their overlap calls for."""
    verb = "disagrees with itself" if len(here) <= 1 else "disagree with themselves"
    head = (
        f"Of the secondary contrasts, {_names(here)} {verb} here (two seeds' intervals that do "
        "not overlap)"
    )
    if not before:
        return f"{head}; none did on {_seeds(seeds)}"
    return f"{head}, {'as' if here else 'though'} {_names(before)} did on {_seeds(seeds)}"


def holm_phrase(record: dict) -> str:
    """How many secondary contrasts exclude 0 before and after Holm's adjustment, and which do
    not survive it (the registry row and the lesson quote it)."""
    fam = secondary_contrasts(record)
    unadjusted = sum(x["excludes_zero"] for _, _, x, _, _ in fam)
    survive = sum(h for *_, h in fam)
    out = [f"seed {s}: {c}" for s, c, _, _, h in fam if not h]
    return (
        f"{len(fam)} secondary contrasts, {unadjusted} exclude 0 unadjusted and {survive} "
        f"survive Holm's adjustment at family-wise level {HOLM_ALPHA:g}; the {len(out)} that do "
        f"not are {'; '.join(out)}"
    )


def figures(record: dict) -> list[str]:
    """The phrases of the registry row 9.5-11, each made from the record (the test checks them)."""
    out = [
        f"BaseLM weights sha256 {record['baselm_weights_sha256'][:12]}",
        f"{record['machine']['cpu']}, {record['machine']['torch_cpu_capability']} kernels",
    ]
    for seed, r in record["runs"].items():
        au = {n: r[n]["audit"] for n in AUDITED}
        out += [
            f"seed {seed}: format smoke (LoRA seed {seed}, trainer seed {FORMAT_TRAINER_SEED}) "
            f"{_diff(r['format_smoke']['rates']['format'])}",
            f"seed {seed}: main run {_diff(r['arith_main']['rates']['strict'])}",
            f"seed {seed}: sloppy-verifier run, sloppy rule {_diff(r['arith_sloppy']['rates']['sloppy'])}, "
            f"patched rule {_diff(au['arith_sloppy']['exact'])}, "
            f"exploiting completions {au['arith_sloppy']['exploit_rate']:.2f}",
            f"seed {seed}: patched-verifier run, patched rule {_diff(au['arith_patched']['exact'])}, "
            f"exploiting completions {au['arith_patched']['exploit_rate']:.2f}",
            f"seed {seed}: beta = 0 {_diff(r['arith_no_kl']['rates']['strict'])}",
        ]
        for k in (2, 8, 16):
            sw = r[f"sweep_K{k}"]["sweep"]
            out.append(
                f"seed {seed}: K={k} degenerate groups {sw['degenerate_frac']:.2f}, within-group "
                f"reward std {sw['within_group_reward_std']:.2f}, held-out "
                f"{_diff(r[f'sweep_K{k}']['rates']['strict'])}"
            )
    n = len(reported_intervals(record))
    out.append(f"{n} paired 95% intervals in all")
    out.append(holm_phrase(record))
    return out


def audit_phrases(record: dict) -> list[str]:
    """The audits a record holds when its notebook made them (records made before the lesson's
    cells drew them have none): the main run on the prompts held out in both operand orders, the
    sloppy run's exploiting completions by kind, the third rule's verdict on the sloppy run, and
    the sloppy run's patched-rule pass rate at each evaluation point. Lesson 9.5 quotes them for
    the record and for the replication (the test checks it)."""
    r = record["runs"]
    if not all("judge" in x["arith_sloppy"]["audit"] for x in r.values()):
        return []

    def per_seed(fmt) -> str:
        return "; ".join(f"seed {seed}: {fmt(x)}" for seed, x in r.items())

    def kinds(x) -> str:
        k = x["arith_sloppy"]["audit"]["exploit_kinds"]
        return ", ".join(str(k[name]) for name in ("stutter", "hedge", "digit_run", "other"))

    curves = [x["arith_sloppy"]["audit"]["curve"] for x in r.values()]
    steps = curves[0]["step"]
    assert all(c["step"] == steps for c in curves), "every seed is evaluated at the same steps"
    return [
        "held out in both orders, the main run's gain "
        + per_seed(lambda x: _gain(x["arith_main"]["both_orders"]["both_heldout"])),
        "the sloppy run's exploiting completions by kind (stutters, hedges, digit runs, other) "
        + per_seed(kinds),
        "by the third rule, the sloppy run's pass rate "
        + per_seed(lambda x: _diff(x["arith_sloppy"]["audit"]["judge"])),
        "exploiting completions by the third rule (sloppy 1, judge 0) "
        + per_seed(lambda x: f"{x['arith_sloppy']['audit']['judge_exploit_rate']:.2f}"),
        f"at steps {', '.join(map(str, steps))}: "
        + per_seed(
            lambda x: ", ".join(f"{v:.2f}" for v in x["arith_sloppy"]["audit"]["curve"]["exact"])
        ),
    ]


def _section(timing: dict, part: str) -> tuple[str, float]:
    """(heading, seconds) of the one timed section whose heading contains ``part``."""
    hits = [(h, sec) for h, sec in timing["sections"].items() if part in h]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} timed sections contain {part!r}: {list(timing['sections'])}")
    return hits[0]


def lesson_phrases(record: dict) -> list[str]:
    """What lesson 9.5's audit and statistics paragraphs quote from the record (the test checks
    it)."""
    r = record["runs"]

    def per_seed(fmt) -> str:
        return "; ".join(f"seed {seed}: {fmt(x)}" for seed, x in r.items())

    t = record["timing"]
    prompt, completion = next(iter(r.values()))["arith_sloppy"]["audit"]["exploit_examples"][0]
    sum_ = prompt.split("=?")[0].removeprefix("Q: ")
    optional = [f"{sec:.0f} s" for h, sec in t["optional_seconds"].items() if "Exercise" in h]
    # the main run's gain across seeds, from the exact counts (the stored diff is rounded)
    main = [x["arith_main"] for x in r.values()]
    gains = [
        (m["rates"]["strict"]["gained"] - m["rates"]["strict"]["lost"]) / m["n_heldout"]
        for m in main
    ]
    first = main[0]

    def across(run: str, what: str) -> str:
        """The patched-rule change of ``run`` across seeds, from the exact counts."""
        xs = [(x[run]["audit"]["exact"]["gained"] - x[run]["audit"]["exact"]["lost"])
              / x[run]["n_heldout"] for x in r.values()]  # fmt: skip
        return (f"{what} across the {len(xs)} seeds: {min(xs):+.2f} to {max(xs):+.2f}, "
                f"mean {sum(xs) / len(xs):+.2f}")  # fmt: skip

    init = first["initial_pass_rate"]
    # the histogram's first and last bins (width 1/9) hold exactly c = 0 and c = 8 of the 8 draws
    mixed = init["prompts"] - init["histogram"][0] - init["histogram"][-1]
    return [
        f"the plug-in gave {init['p_info']:.2f}, while {mixed} of the {init['prompts']} groups "
        f"({mixed / init['prompts']:.2f}) were mixed",
        f"main-run gain across the {len(gains)} seeds: {min(gains):+.2f} to {max(gains):+.2f}, "
        f"mean {sum(gains) / len(gains):+.2f}",
        across("arith_sloppy", "the sloppy run's patched-rule change"),
        across("arith_patched", "the patched run's gain"),
        "its gain " + per_seed(lambda x: _gain(x["sweep_K16"]["rates"]["strict"])),
        "K = 2 sweep run's gain " + per_seed(lambda x: _gain(x["sweep_K2"]["rates"]["strict"])),
        f"the first {first['initial_pass_rate']['prompts']} of the {first['n_heldout']} held-out prompts",
        f"{len(reported_intervals(record))} paired 95% intervals",
        holm_phrase(record),
        f"the required part takes about {t['required_seconds']:.0f} s of computation",
        "the optional BaseLM experiments " + " and ".join(optional),
        f"GRU lab about {_section(t, 'Lab, part 1')[1]:.0f} s, each 250-step BaseLM run about "
        f"{_section(t, 'the main run')[1]:.0f} s",
        f'such as `"{completion}"` for {sum_}',
        per_seed(lambda x: _diff(x["arith_main"]["rates"]["strict"])),
        "exploiting completions "
        + per_seed(lambda x: f"{x['arith_sloppy']['audit']['exploit_rate']:.2f}"),
        "patched-rule pass rate after the sloppy run "
        + per_seed(lambda x: _diff(x["arith_sloppy"]["audit"]["exact"])),
        "patched run "
        + per_seed(
            lambda x: (
                f"{_diff(x['arith_patched']['audit']['exact'])}, exploiting "
                f"{x['arith_patched']['audit']['exploit_rate']:.2f}"
            )
        ),
        *audit_phrases(record),
    ]


def _seeds(names: list[str]) -> str:
    """ "seed 0", "seeds 0 and 2", "seeds 0, 1 and 2"."""
    if not names:
        return "no seed"
    return f"seed{'s' if len(names) > 1 else ''} {_and_list(names)}"


def provenance(rep: dict, main: dict) -> str:
    """Where and from what the replication was made, against the main record: the CPU as the
    machine reports it (model name, torch's kernel path, core count), the lab code
    (``lab_code_sha256``, as each record ran it), the recorded library versions (Python, torch,
    transformers) and BaseLM's weights. Unless all match, the phrase names what differs, and
    what was not recorded, besides the seeds and the held-out stream."""
    m, m0 = rep["machine"], main["machine"]
    where = f"made on {m['cpu']} ({m['torch_cpu_capability']} kernels)"
    code, code0 = rep.get("lab_code_sha256"), main.get("lab_code_sha256")
    differs = [
        f"the {what} (the record above: {m0.get(key)})"
        for key, what in (("cpu", "CPU model"), ("torch_cpu_capability", "kernel path"),
                          ("cores", "core count"))
        if m.get(key) != m0.get(key)
    ]  # fmt: skip
    if code and code0 and code != code0:
        differs.append("the lab code")
    if rep["versions"] != main["versions"]:
        differs.append("the library versions")
    if rep["baselm_weights_sha256"] != main["baselm_weights_sha256"]:
        differs.append("BaseLM's weights")
    if not differs and code and code0:
        return (
            f"{where} from the same lab code as the record above (the notebook's code cells and "
            f"helpers/ as both records ran them, sha256 {code[:12]}), with the same versions of "
            "Python, torch and transformers and the same BaseLM weights, on a CPU reporting the "
            "same model and kernels: between the two records only the seeds and the held-out "
            "stream changed"
        )
    changed = ["the seeds", "the held-out stream", *differs]
    out = f"{where}; between the two records {', '.join(changed[:-1])} and {changed[-1]} changed"
    return out + ("" if code and code0 else "; the lab code of one of them was not recorded")


def replication_phrases(rep: dict, main: dict) -> list[str]:
    """What lesson 9.5's replication paragraph quotes from the replication record (fresh seeds,
    fresh held-out stream) and, for comparison, the main record; the test checks it."""
    r = rep["runs"]
    seeds = list(r)

    def per_seed(fmt) -> str:
        return "; ".join(f"seed {seed}: {fmt(x)}" for seed, x in r.items())

    def across(xs: list[float]) -> str:
        lo, hi = f"{min(xs):+.2f}", f"{max(xs):+.2f}"
        return (
            f"{lo} on each seed (to two decimals)"
            if lo == hi
            else f"{lo} to {hi}, mean {sum(xs) / len(xs):+.2f}"
        )

    def change(run: str, rate) -> list[float]:
        return [(rate(x[run])["gained"] - rate(x[run])["lost"]) / x[run]["n_heldout"]
                for x in r.values()]  # fmt: skip

    def starts(runs: dict) -> list[float]:
        """The main run's held-out pass rate before training, one per distinct value."""
        return sorted({x["arith_main"]["rates"]["strict"]["before"] for x in runs.values()})

    start, start0 = starts(r), starts(main["runs"])
    side = (
        "lower"
        if max(start) < min(start0)
        else "higher"
        if min(start) > max(start0)
        else "about the same"
    )
    n = sorted({x["arith_main"]["n_heldout"] for x in r.values()})
    # how far the sloppy run's patched-rule pass rate ended below the patched run's
    gap = [x["arith_patched"]["audit"]["exact"]["after"] - x["arith_sloppy"]["audit"]["exact"]["after"]
           for x in r.values()]  # fmt: skip
    # the K = 8 run over both records' seeds
    k8 = [x["sweep_K8"]["rates"]["strict"] for x in [*main["runs"].values(), *r.values()]]
    ups = sum(x["diff"] > 0 for x in k8)
    # a completion of the sloppy run that is one run of digits holding the sum (neither hedge nor
    # stutter), the first in seed order
    digit_runs = [(q, c) for x in r.values() for q, c in x["arith_sloppy"]["audit"]["exploit_examples"]
                  if c.strip().isdigit() and len(c.strip()) > 3]  # fmt: skip
    q, c = digit_runs[0]
    # the first stutter among the sloppy run's examples, in seed order
    stutter = next(
        c
        for x in r.values()
        for p, c in x["arith_sloppy"]["audit"]["exploit_examples"]
        if exploit_kind(str(sum(operands(p))), c) == "stutter"
    )
    # the main record's seeds whose sloppy run ended below every fresh seed's
    lowest = min(x["arith_sloppy"]["audit"]["exact"]["after"] for x in r.values())
    below = [
        s for s, x in main["runs"].items() if x["arith_sloppy"]["audit"]["exact"]["after"] < lowest
    ]
    losses = sum(x["diff"] < 0 for x in k8)
    ties = len(k8) - ups - losses

    split = self_disagreeing(rep)

    def count(n: int, word: str) -> str:
        return f"{n or 'no'} {word}{'' if n == 1 else 'es' if word.endswith('s') else 's'}"

    return [
        f"seeds {', '.join(seeds[:-1])} and {seeds[-1]}, judged on held-out stream "
        f"{rep['heldout_stream']} ({' or '.join(map(str, n))} prompts)",
        provenance(rep, main),
        f"Its start is {side} on these prompts ({' or '.join(dict.fromkeys(f'{v:.2f}' for v in start))}, where "
        f"stream 0 gives {' or '.join(dict.fromkeys(f'{v:.2f}' for v in start0))})",
        "main run " + per_seed(lambda x: _diff(x["arith_main"]["rates"]["strict"])),
        "main-run gain across the replication's seeds: "
        + across(change("arith_main", lambda y: y["rates"]["strict"])),
        "exploiting completions after the sloppy run "
        + per_seed(lambda x: f"{x['arith_sloppy']['audit']['exploit_rate']:.2f}"),
        f'such as `"{c}"` for {q.split("=?")[0].removeprefix("Q: ")}',
        f'A stutter (`"{stutter}"`)',
        "patched-rule pass rate after the sloppy run "
        + per_seed(lambda x: _diff(x["arith_sloppy"]["audit"]["exact"])),
        "patched run " + per_seed(lambda x: _diff(x["arith_patched"]["audit"]["exact"])),
        "the sloppy run's patched-rule change across the replication's seeds: "
        + across(change("arith_sloppy", lambda y: y["audit"]["exact"])),
        f"no fresh seed ended as low as {_seeds(below)} did (its lowest patched-rule pass rate "
        f"after the sloppy run: {lowest:.2f})",
        "the patched run's gain across the replication's seeds: "
        + across(change("arith_patched", lambda y: y["audit"]["exact"])),
        f"by {min(gap):.2f} to {max(gap):.2f} here",
        disagreeing_phrase(split, self_disagreeing(main), list(main["runs"])),
        "K = 8 sweep run's gain " + per_seed(lambda x: _gain(x["sweep_K8"]["rates"]["strict"])),
        f"over {len(k8)} seeds, {count(ups, 'gain')} "
        f"({sum(x['diff'] > 0 and x['ci95'][0] <= 0 for x in k8)} with an interval that reaches 0)"
        + (f", {count(ties, 'tie')}" if ties else "")
        + f" and {count(losses, 'loss')}",
        "K = 16 sweep run's gain " + per_seed(lambda x: _gain(x["sweep_K16"]["rates"]["strict"])),
        holm_phrase(rep),
        *audit_phrases(rep),
    ]


def registry_summary(record: dict, rep: dict) -> list[str]:
    """The cross-seed summaries of the record and of the replication that the registry row 9.5-11
    quotes next to the per-seed intervals (the test checks them)."""
    mine, theirs = lesson_phrases(record), replication_phrases(rep, record)

    def pick(phrases: list[str], start: str) -> str:
        return next(p for p in phrases if p.startswith(start))

    return [
        pick(mine, "main-run gain across the"),
        pick(mine, "the sloppy run's patched-rule change across the"),
        pick(mine, "the patched run's gain across the"),
        pick(theirs, "seeds "),
        pick(theirs, "made on "),
        pick(theirs, "main-run gain across the replication's"),
        pick(theirs, "the patched run's gain across the replication's"),
        pick(theirs, "the sloppy run's patched-rule change across the replication's"),
        pick(theirs, "no fresh seed ended as low as"),
    ]


def timing_table(record: dict) -> str:
    """The "BaseLM lab" section of BENCHMARKS.md, from the record's timing."""
    t = record["timing"]
    rows = [f"| required part (everything not marked optional) | {t['required_seconds']:.0f} |"]
    rows += [f"| optional: {h} | {s:.0f} |" for h, s in t["optional_seconds"].items()]
    rows.append(f"| whole notebook (kernel start to end) | {t['notebook_seconds']:.0f} |")
    detail = [f"| {h} | {s:.1f} |" for h, s in t["sections"].items()]
    m = record["machine"]
    made_by = f"`{record['command']}`"
    if current_command(record["command"]) != record["command"]:
        made_by += f" (today `{current_command(record['command'])}`)"
    return "\n".join([
        "## BaseLM lab (lesson 9.5, full profile)",
        "",
        f"Run by {made_by} on {record['created']}: {m['cpu']}, {m['cores']} cores, torch "
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
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep the executed notebook and runs/ in this folder",
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    ap.add_argument("--heldout-stream", type=int, default=0,
                    help="the lesson's COURSE_LAB_HELDOUT (0: the stream the lab was tuned on)")  # fmt: skip
    ap.add_argument("--replication", action="store_true",
                    help=f"seeds {' '.join(map(str, REPLICATION_SEEDS))}, held-out stream "
                         f"{REPLICATION_STREAM}, written to {REPLICATION.relative_to(ROOT)}")  # fmt: skip
    a = ap.parse_args(argv)
    if a.replication:
        a.seeds, a.heldout_stream = list(REPLICATION_SEEDS), REPLICATION_STREAM
        a.out = REPLICATION if a.out == OUT else a.out
    tree = git_state()  # the code the notebook ran, read before it runs
    code = lab_code_sha256()
    runs, seconds = {}, {}
    for i, seed in enumerate(a.seeds):
        with tempfile.TemporaryDirectory(prefix="baselm-lab-") as tmp:
            work = Path(tmp)
            seconds[str(seed)] = round(execute(work, seed, stream=a.heldout_stream), 1)
            if a.keep:
                shutil.copytree(work, a.keep / f"seed{seed}", dirs_exist_ok=True)
            runs[str(seed)] = summarise(work / "runs")
            if i == 0:
                sections = section_seconds(work / "executed.ipynb")
        print(f"seed {seed}: {seconds[str(seed)]:.0f} s of notebook", flush=True)
    import resource

    # the kernels were this process's children and have exited: the children's maximum RSS
    kernel_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    import torch
    import transformers

    baselm = json.loads((baselm_dir() / "passport.json").read_text())
    record = {
        "command": COMMAND + (" --replication" if a.replication else ""),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git": tree,
        "lab_code_sha256": code,
        "notebook_seconds": seconds,
        "baselm_weights_sha256": baselm["weights_sha256"],
        "seeds": {"trainer_and_lora": a.seeds, "timing_from": a.seeds[0]},
        "heldout_stream": a.heldout_stream,
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
        "timing": timing(sections, seconds[str(a.seeds[0])], kernel_rss),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(record, indent=1) + "\n")
    for seed, by_name in runs.items():
        for name, r in by_name.items():
            for v, x in r["rates"].items():
                print(
                    f"seed {seed} {name:14s} {v:7s} {x['before']:.2f} -> {x['after']:.2f}  ci95 {x['ci95']}"
                )
    print(f"wrote {a.out} (seconds of notebook per seed: {seconds})")
    if a.out == OUT:  # a trial run written elsewhere leaves BENCHMARKS.md alone
        write_benchmarks_section(record)
    if a.replication:
        main = json.loads(OUT.read_text())
        print(
            "lesson 9.5 replication phrases:\n  " + "\n  ".join(replication_phrases(record, main))
        )
        return 0
    print("registry 9.5-11 phrases:\n  " + "\n  ".join(figures(record)))
    print("lesson 9.5 phrases:\n  " + "\n  ".join(lesson_phrases(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
