"""``python -m bench``: every benchmark in one command, each result written to its marked section
of BENCHMARKS.md. BaseLM is built first with ./baselm.sh when its artifact is missing.

Options: ``--quick`` (fewer repetitions, no BaseLM build timing, no full notebooks: a smoke check
of the benchmark code), ``--only sampler step scaling budgets autograde verifier verdict``,
``--no-write``.
"""

from __future__ import annotations

import argparse
import time

from bench.common import ensure_baselm, log, write_section

METHOD = """## How the benchmarks are measured

`python -m bench` (or `bench/run_all.sh`) runs every benchmark in one command and rewrites the
sections between its own markers in this file; other sections are left alone. On a clean clone it
first builds BaseLM with `./baselm.sh` when `artifacts/baselm` is missing.

The machine these figures come from has 2 CPU cores shared with other jobs, so absolute timings are
noisy. Every comparison is therefore made inside one process: contenders are interleaved (A, B, A,
B, ... with a rotating start) after a warm-up, and each figure is a median with its quartiles.
Ratios are ratios of medians from the same run. We report CPU time (`time.process_time()`: the CPU
seconds of our process, which does not count time the OS gave to other programs) next to wall-clock
time; with one torch thread the CPU-time ratios are the steadier ones. Models run with one torch
thread (`torch.set_num_threads(1)`): on a busy 2-core machine a second OpenMP thread mostly waits
for a core (see the thread table in "Sampler"). Benchmarks are not tests: nothing here asserts a
time."""


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument(
        "--only",
        nargs="*",
        default=["sampler", "step", "scaling", "budgets", "autograde", "verifier", "verdict"],
    )
    p.add_argument("--no-build", action="store_true", help="do not run ./baselm.sh when missing")
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args(argv)
    have = ensure_baselm(build=not a.no_build)
    log(f"bench: BaseLM {'found' if have else 'missing: a random model of its config is used'}")
    if not a.no_write:
        write_section("method", METHOD)
    t0 = time.perf_counter()
    for name in a.only:
        log(f"bench: === {name} ===")
        if name == "sampler":
            from bench import bench_sampler as m

            body, section = m.run(a.quick), "sampler"
        elif name == "step":
            from bench import bench_step as m

            body, section = m.run(a.quick), "training-step"
        elif name == "scaling":
            from bench import bench_scaling as m

            body, section = m.run(a.quick), "scaling"
        elif name == "budgets":
            from bench import bench_budgets as m

            body, section = m.run(a.quick, a.quick, None), "student-budgets"
        elif name == "autograde":
            from bench import bench_autograde as m

            body, section = m.run(), "autograde"
        elif name == "verifier":
            from bench import bench_verifier as m

            body, section = m.run(a.quick), "verifier"
        elif name == "verdict":  # about 25 minutes; it also writes bench/records/verdict.json
            from bench import bench_verdict as m

            body = m.run(a.quick, write=not a.no_write)
            section = None if a.quick else "verdict"  # the section must stay the record's
        else:
            raise SystemExit(f"unknown benchmark {name!r}")
        print(body, flush=True)
        if not a.no_write and section:
            write_section(section, body)
    log(f"bench: done in {(time.perf_counter() - t0) / 60:.1f} min")


if __name__ == "__main__":
    main()
