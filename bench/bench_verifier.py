"""Verifier: CPU time of ``verify_numeric_answer`` on megabyte adversarial responses, with the
length cap off (the whole string is read) and on (the default ``max_chars``: refused at once).

The test suite checks only that 8x the characters costs far less than 64x the time
(``tests/test_verifiers.py::test_megabyte_responses_scale_linearly``); the absolute times live here,
because a timed assert fails under load. Run: ``python -m bench.bench_verifier [--quick]``.
"""

from __future__ import annotations

import argparse
import time

from bench.common import machine, median, table, write_section
from helpers.verifiers import verify_numeric_answer

INPUTS = {
    "letters": "a" * 1_000_000,
    "digits": "9" * 1_000_000,
    "commas": "1," * 500_000,
    "grouped": "1,234" * 200_000,
    "dashes": "-" * 1_000_000,
    "dots": "9." * 500_000,
    "slashes": "1/" * 500_000,
    "boxes": r"\boxed{" * 140_000,
    "braces": "{" * 1_000_000,
    "open box": r"\boxed{" + "{" * 999_000,
    "exponents": "1e" * 500_000,
    "words": "x1 " * 333_333,
}


def _cpu(fn, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return out


def run(quick: bool = False) -> str:
    reps = 1 if quick else 5
    rows = []
    for name, text in INPUTS.items():
        whole = _cpu(lambda t=text: verify_numeric_answer(t, "81", max_chars=None), reps)
        part = text[: len(text) // 8]
        eighth = _cpu(lambda t=part: verify_numeric_answer(t, "81", max_chars=None), reps)
        capped = _cpu(lambda t=text: verify_numeric_answer(t, "81"), reps)
        rows.append([name, f"{len(text):,}", f"{1e3 * median(whole):.0f}",
                     f"{median(whole) / max(median(eighth), 1e-6):.1f}", f"{1e6 * median(capped):.0f}"])  # fmt: skip
    return "\n".join([
        "## Verifier on megabyte responses",
        "",
        f"{machine()}. CPU time (`time.process_time`), median of {reps}.",
        "",
        table(["input", "chars", "ms, cap off", "ratio to 1/8 of it", "µs, default cap"], rows),
        "",
        "Linear work gives a ratio near 8; the suite fails above 24 (a quadratic scan gives 64).",
    ])  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="one repetition")
    p.add_argument("--no-write", action="store_true", help="print, do not update BENCHMARKS.md")
    a = p.parse_args(argv)
    body = run(a.quick)
    print(body)
    if not a.no_write:
        write_section("verifier", body)


if __name__ == "__main__":
    main()
