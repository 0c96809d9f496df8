"""Run the CPU lab's fixed smoke profile with the instructor's reference functions.

Writes ``helpers/data/gru_lab_smoke.json`` (history, passport, a few samples, the failure-pattern
checks). Lesson 9.4 draws its dashboard from that file; lesson 9.5 has students rerun the profile
with their own graded functions and compare.

    python -m dev.records.gru_lab_smoke            # run and write the file
    python -m dev.records.gru_lab_smoke --check    # run and compare to the committed file
    python -m dev.records.gru_lab_smoke --profile tiny --out /tmp/tiny.json

The run uses lesson 9.5's graded functions themselves (``course.reference``: the lesson's solution
cells, run as the trusted verdict runs them; tests/test_dev_references.py checks they are the same
objects), not a copy: ``group_advantages``, ``clipped_grpo_loss``, ``token_entropy``,
``pass_at_k``, ``clip_fractions``, ``kl_to_reference`` (the signatures of the ``helpers.gru_lab``
docstring); dev/records/clinic_runs.py runs them too. They are not shipped in ``helpers``. The
committed smoke file is made with them; its passport names the CPU and torch's float-kernel path it
was made on (``machine``), since the history reproduces to the last bit only there. A step with no
update has NaN update metrics, written as Python's json writes them (``NaN``; json.loads reads it). Earlier
copies of the file were made with an earlier copy of the functions, which differed from the lesson's
only where ``run_lab`` never goes: a constant reward row whose float32 std has rounding residue (it gave that
row advantages up to about 0.1, the lesson gives zeros; ``run_lab``'s rows of 8 x 6 or 8 x 12 of the
lab's rewards have std exactly 0), an empty mask (0 where the lesson gives NaN; ``run_lab`` skips
the update then) and large values at masked positions (``run_lab`` puts 0 there). The smoke
profile's history is the same to the last bit with either.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from course.reference import reference
from helpers.gru_lab import PROFILES, SMOKE_HISTORY, failure_pattern, run_lab

OUT = SMOKE_HISTORY
LESSON = reference("9.5")  # lesson 9.5's graded functions
# the names tests/test_gru_lab.py calls them by
group_advantages, clipped_grpo_loss = LESSON.group_advantages, LESSON.clipped_grpo_loss
token_entropy, pass_at_k = LESSON.token_entropy, LESSON.pass_at_k
clip_fractions, kl_to_reference = LESSON.clip_fractions, LESSON.kl_to_reference

REFERENCE_FNS = dict(
    advantages_fn=group_advantages,
    loss_fn=clipped_grpo_loss,
    entropy_fn=token_entropy,
    pass_at_k_fn=pass_at_k,
    clip_fraction_fn=clip_fractions,
    kl_fn=kl_to_reference,
)


def run(profile: str = "smoke", progress: bool = True) -> dict:
    """The JSON-able record of one run of ``profile`` with the reference functions."""
    result = run_lab(profile, progress=progress, **REFERENCE_FNS)
    return {
        "history": result.history,
        "passport": result.passport,
        "samples": result.samples,
        "failure_pattern": failure_pattern(result.history, k=PROFILES[profile].pass_k),
    }


def compare(new: dict, old: dict, rtol: float = 1e-6) -> list[str]:
    """Differences between two records' histories and configs (the passport's time and git fields
    are ignored); [] when they match."""
    problems = []
    if new["passport"]["config_hash"] != old["passport"]["config_hash"]:
        problems.append("profile differs (config_hash)")
    keys = set(new["history"]) | set(old["history"])
    for key in sorted(keys):
        if key not in old["history"]:  # logged by newer code than the record: nothing to compare
            continue
        a, b = new["history"].get(key), old["history"].get(key)
        if a is None or b is None or len(a) != len(b):
            problems.append(f"{key}: missing or of different length")
        elif key not in ("time_s",):
            bad = [
                i
                for i, (x, y) in enumerate(zip(a, b))
                if not (math.isnan(x) and math.isnan(y))  # a skipped step in both
                and not math.isclose(x, y, rel_tol=rtol, abs_tol=1e-9)
            ]
            if bad:
                problems.append(
                    f"{key}: differs at {len(bad)} points, first at index {bad[0]}: {a[bad[0]]} vs {b[bad[0]]}"
                )
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dev.records.gru_lab_smoke", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--profile", default="smoke", choices=sorted(PROFILES))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--check", action="store_true", help="rerun and compare to --out instead of writing"
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    args = ap.parse_args()

    record = run(args.profile, progress=not args.quiet)
    h, fp = record["history"], record["failure_pattern"]
    k = PROFILES[args.profile].pass_k
    for key in ("train_acc", "train_entropy", f"train_pass@{k}", "train_coverage", "train_concentration",
                "heldout_greedy_acc", f"heldout_pass@{k}"):  # fmt: skip
        print(f"{key:>22}: {h[key][0]:.3f} -> {h[key][-1]:.3f}")
    print(f"{'failure pattern':>22}: {fp}")
    print(f"{'time':>22}: {record['passport']['extra']['time_total_s']} s")
    if args.check:
        old = json.loads(args.out.read_text())
        problems = compare(record, old)
        for line in problems:
            print("MISMATCH", line)
        print("check:", "FAILED" if problems else "ok, the history matches", args.out)
        return 1 if problems else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
