"""How strong are the hidden tests? Mutation testing of every graded reference solution.

    python -m tests.grading.mutation [LESSON ...] [--function F] [--sample N] [--survivors] [--report]

The mutants are made by cosmic-ray (its operators, pinned in pyproject.toml's dev group): every binary,
comparison, unary and boolean operator replaced, every number moved by one, ``not`` added, loops
made to run zero times, ... applied one at a time to a solution cell of the source notebook
(``### BEGIN/END SOLUTION`` removed, as a student writes it). Each mutant is graded the way the
autograder grades a submission (tests/grading/harness.py: one sandboxed kernel that has executed the
notebook with NBGRADER_EXECUTION=autograde): its code is executed in place of the reference, then
the graded test cell of its function (visible and hidden tests) and the cells that depend on it are
run. A mutant is

- ``killed`` when one of those cells fails (error output, or stderr nbgrader would count), when its
  own code fails to run, when a cell runs past the time limit, or when the kernel dies;
- ``equivalent`` when it survives and course/lessons/<lesson>/variants.py argues, under a
  ``# %% equivalent FUNCTION: KEY`` header, that it computes the same contract;
- ``survived`` otherwise: a bug no test catches.

The score of a function is killed / (mutants - equivalent). Results go to
course/lessons/<lesson>/mutation.json (every mutant with its key, line, diff and status) and the
per-function table to tests/grading/MUTATION.md. ``--survivors`` re-grades only the mutants that
survived last time (for quick work on new tests); ``--sample N`` grades a seeded sample (the
reduced run in tests/test_mutation.py). A mutant's key is a hash of its function, operator and the
changed source line before and after, so it stays the same while the reference does not change.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass, field

from course.build_lessons import lesson_dir
from tests.grading.harness import HERE, GradingKernel, Lesson, VariantFile, lessons_with_variants

REPORT = HERE / "MUTATION.md"
GOAL = 0.90
# Operators that need arguments (VariableInserter/Replacer take the names of variables to plant)
# are left out; all others of cosmic-ray's core set are used.
SKIP_OPERATORS = ("core/VariableInserter", "core/VariableReplacer")


@dataclass
class Mutant:
    key: str
    lesson: str
    cell: str  # the solution cell's grade_id
    function: str
    operator: str
    occurrence: int
    line: int  # 1-based line of the change in the cell (markers removed)
    before: str
    after: str
    code: str = field(repr=False)
    status: str = "pending"  # killed | survived | equivalent | pending
    how: str = ""  # which cells failed, or "code failed", "timeout", "kernel died"


def operators() -> list:
    from cosmic_ray.plugins import get_operator, operator_names

    return [(n, get_operator(n)) for n in sorted(operator_names()) if n not in SKIP_OPERATORS]


def _functions(code: str) -> list[tuple[int, int, str]]:
    tree = ast.parse(code)
    return [(n.lineno, n.end_lineno, n.name) for n in tree.body if isinstance(n, ast.FunctionDef)]


def mutants(lesson: str) -> list[Mutant]:
    """Every cosmic-ray mutant of every solution cell of ``lesson`` (deterministic order)."""
    from cosmic_ray.mutating import mutate_code

    info = Lesson.load(lesson)
    out, seen = [], {}
    for gid in info.solution_cells:
        code = info.reference_code(gid)
        spans = _functions(code)
        for name, op_cls in operators():
            occurrence = 0
            while (mutated := mutate_code(code, op_cls(), occurrence)) is not None:
                a, b = code.splitlines(), mutated.splitlines()
                sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
                ops = [o for o in sm.get_opcodes() if o[0] != "equal"]
                i1, i2, j1, j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
                before = " / ".join(s.strip() for s in a[i1:i2])
                after = " / ".join(s.strip() for s in b[j1:j2])
                fn = next((f for lo, hi, f in spans if lo <= i1 + 1 <= hi), gid)
                ident = f"{lesson}|{fn}|{name}|{before}|{after}"
                seen[ident] = seen.get(ident, -1) + 1
                key = hashlib.sha1(f"{ident}|{seen[ident]}".encode()).hexdigest()[:10]
                out.append(
                    Mutant(key, lesson, gid, fn, name, occurrence, i1 + 1, before, after, mutated)
                )
                occurrence += 1
    return out


def cells_for(info: Lesson, vf: VariantFile, m: Mutant) -> list[str]:
    own = info.cell_tests[m.cell]
    deps = sorted(t for t, fns in vf.depends.items() if m.function in fns and t not in own)
    return [*own, *deps]


def grade(lesson: str, todo: list[Mutant], progress: bool = True) -> None:
    """Grade ``todo`` in place (status, how), restarting the kernel whenever a mutant kills it."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    info, vf = Lesson.load(lesson), VariantFile.load(lesson)
    queue = list(todo)
    t0 = time.time()
    while queue:
        with GradingKernel(lesson) as k:
            if any(k.baseline.values()):
                raise RuntimeError(f"{lesson}: the reference fails {k.baseline}")
            limit = {g: max(20.0, 10 * s) for g, s in k.cell_seconds.items()}
            while queue:
                m = queue[0]
                cells = cells_for(info, vf, m)
                k.client.timeout = int(sum(limit[c] for c in cells)) + 5
                try:
                    got = k.try_code(m.code, cells)
                except (DeadKernelError, CellTimeoutError) as e:
                    died = isinstance(e, DeadKernelError)
                    m.status, m.how = "killed", "kernel died" if died else "timeout"
                    queue.pop(0)
                    break  # a new kernel for the rest (a timed-out one is shut down on exit)
                queue.pop(0)
                if got is None:
                    m.status, m.how = "killed", "code failed"
                elif any(got.values()):
                    m.status, m.how = "killed", " ".join(c for c, f in got.items() if f)
                else:
                    m.status, m.how = "survived", ""
                k.client.timeout = 600
                k.restore()
                if m.status == "killed" and m.how != "code failed":
                    # the reference must pass again: a mutant that damaged shared state would
                    # otherwise kill the mutants after it for free
                    if any(k.run_tests(cells).values()):
                        raise RuntimeError(f"{lesson}: state left broken by mutant {m.key}")
                if progress:
                    done = len(todo) - len(queue)
                    print(f"\r{lesson}: {done}/{len(todo)} mutants graded, {time.time() - t0:.0f} s",
                          end="", file=sys.stderr, flush=True)  # fmt: skip
    if progress:
        print(file=sys.stderr)


def apply_equivalents(lesson: str, ms: list[Mutant], complete: bool = True) -> list[str]:
    """Mark argued survivors equivalent; returns problems (an argument for a killed or unknown key).

    ``complete``: ``ms`` holds every mutant of the lesson, so an argued key that is not among them
    is a problem; for a partial run (one function, survivors, a sample) such keys are skipped."""
    vf = VariantFile.load(lesson)
    by_key = {m.key: m for m in ms}
    for m in ms:  # an argument withdrawn since the last run no longer counts
        if m.status == "equivalent":
            m.status = "survived"
    problems = []
    for key, fn in vf.equivalent_function.items():
        m = by_key.get(key)
        if m is None:
            if complete:
                problems.append(
                    f"{lesson}: equivalent {fn}: {key} is not a mutant of the reference"
                )
        elif m.function != fn:
            problems.append(f"{lesson}: equivalent {key} is a mutant of {m.function}, not {fn}")
        elif m.status == "killed":
            problems.append(f"{lesson}: {key} is argued equivalent but a test kills it: drop it")
        elif not vf.equivalent[key]:
            problems.append(f"{lesson}: equivalent {key} has no argument")
        elif m.status in ("survived", "equivalent"):
            m.status = "equivalent"
    return problems


def scores(ms: list[Mutant]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for m in ms:
        s = out.setdefault(f"{m.lesson} {m.function}", {"mutants": 0, "killed": 0, "equivalent": 0,
                                                       "survived": 0, "pending": 0})  # fmt: skip
        s["mutants"] += 1
        s[m.status] += 1
    for s in out.values():
        live = s["mutants"] - s["equivalent"]
        s["score"] = s["killed"] / live if live else 1.0
    return out


def reference_hash(lesson: str) -> str:
    info = Lesson.load(lesson)
    text = "\n".join(info.reference_code(g) for g in info.solution_cells)
    tests = "\n".join(info.nb.cells[i].source for i in info.test_cells.values())
    return hashlib.sha256((text + "\0" + tests).encode()).hexdigest()[:12]


def load(lesson: str) -> dict | None:
    p = lesson_dir(lesson) / "mutation.json"
    return json.loads(p.read_text()) if p.exists() else None


def save(lesson: str, ms: list[Mutant], seconds: float) -> None:
    from importlib.metadata import version

    record = {
        "lesson": lesson,
        "tool": f"cosmic-ray {version('cosmic-ray')} operators, graded by tests/grading/harness.py",
        "reference_and_tests_sha256": reference_hash(lesson),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
        "seconds": round(seconds),
        "mutants": [{k: v for k, v in asdict(m).items() if k != "code"} for m in ms],
    }
    (lesson_dir(lesson) / "mutation.json").write_text(json.dumps(record, indent=1) + "\n")


def report(lessons: list[str]) -> str:
    rows, survivors, total = [], [], {"mutants": 0, "killed": 0, "equivalent": 0, "survived": 0}
    meta = []
    for lesson in lessons:
        rec = load(lesson)
        if rec is None:
            continue
        meta.append(
            f"{lesson}: {len(rec['mutants'])} mutants in {rec['seconds']} s ({rec['date']})"
        )
        ms = [Mutant(**m, code="") for m in rec["mutants"]]
        for name, s in scores(ms).items():
            flag = "" if s["score"] >= GOAL else " **below goal**"
            rows.append(f"| {name} | {s['mutants']} | {s['killed']} | {s['equivalent']} | "
                        f"{s['survived']} | {s['score']:.0%}{flag} |")  # fmt: skip
            for k in total:
                total[k] += s[k]
        survivors += [f"- {m.lesson} `{m.function}` `{m.key}` line {m.line}: `{m.before}` -> "
                      f"`{m.after}`" for m in ms if m.status == "survived"]  # fmt: skip
    live = total["mutants"] - total["equivalent"]
    lines = [
        "# Mutation testing of the graded reference solutions",
        "",
        "Produced by `python -m tests.grading.mutation` (see its docstring); do not edit by hand.",
        "Score = killed / (mutants - argued equivalent); goal >= 90% per function. The argument for",
        "each equivalent mutant is under its `# %% equivalent` header in course/lessons/<lesson>/variants.py.",
        "",
        *[f"- {m}" for m in meta],
        "",
        "| lesson function | mutants | killed | equivalent | survived | score |",
        "|---|---|---|---|---|---|",
        *rows,
        f"| **all** | {total['mutants']} | {total['killed']} | {total['equivalent']} | "
        f"{total['survived']} | {total['killed'] / live if live else 1:.1%} |",
        "",
        "## Surviving mutants (no test kills them, no argument says they are equivalent)",
        "",
        *(survivors or ["None."]),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lessons", nargs="*", help="lessons (default: all)")
    ap.add_argument("--function", help="only this graded function")
    ap.add_argument("--sample", type=int, help="grade a seeded sample of N mutants per lesson")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--survivors", action="store_true", help="re-grade last run's survivors only")
    ap.add_argument("--report", action="store_true", help="only rewrite MUTATION.md from the JSON")
    args = ap.parse_args(argv)
    lessons = args.lessons or lessons_with_variants()
    bad = 0
    for lesson in [] if args.report else lessons:
        ms = mutants(lesson)
        if args.function:
            ms = [m for m in ms if m.function == args.function]
        todo = ms
        old = load(lesson)
        if args.survivors:
            if old is None:
                raise SystemExit(
                    f"no course/lessons/{lesson}/mutation.json yet: run without --survivors"
                )
            prev = {m["key"]: m for m in old["mutants"]}
            for m in ms:
                if m.key in prev and prev[m.key]["status"] == "killed":
                    m.status, m.how = "killed", prev[m.key]["how"]
            todo = [m for m in ms if m.status != "killed"]
        if args.sample:
            todo = random.Random(args.seed).sample(todo, min(args.sample, len(todo)))
        t0 = time.time()
        grade(lesson, todo)
        problems = apply_equivalents(lesson, todo, complete=todo is ms and not args.function)
        for p in problems:
            print(p, file=sys.stderr)
        bad += len(problems)
        for name, s in scores(todo).items():
            print(f"{name}: {s['killed']}/{s['mutants'] - s['equivalent']} killed "
                  f"({s['equivalent']} equivalent, {s['survived']} survived) = {s['score']:.0%}")  # fmt: skip
        if not args.sample:
            if args.function or args.survivors:  # merge into the last full record
                prev = {m["key"]: m for m in (old or {"mutants": []})["mutants"]}
                for m in todo:
                    prev[m.key] = {k: v for k, v in asdict(m).items() if k != "code"}
                merged = [
                    Mutant(**prev[m.key], code="") if m.key in prev else m for m in mutants(lesson)
                ]
                apply_equivalents(lesson, merged)
                save(lesson, merged, (old or {}).get("seconds", 0) + time.time() - t0)
            else:
                save(lesson, ms, time.time() - t0)
    if not args.sample:
        REPORT.write_text(report(lessons_with_variants()))
        print(f"wrote {REPORT.relative_to(HERE.parents[1])}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
