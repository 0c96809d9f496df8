"""Every clause of every graded function's docstring is checked by a hidden assert.

course/lessons/<lesson>/contracts.md holds, for each graded function, a table:

    ## token_ratios
    | clause (quoted from the docstring) | checked by |
    |---|---|
    | if the three arrays do not have the same 2-D shape | shape-errors |
    | TRL's GRPOTrainer (1.16) divides by G - 1 | not a clause: a fact about TRL |

A clause is quoted verbatim from the docstring (whitespace may differ; inline backticks are kept). The
"checked by" column names one or more tags (comma-separated); each tag must appear in a
``# contract: TAG[, TAG ...]`` comment inside the hidden tests of the function's test cell, on or
just above the assert that checks the clause. A row whose second column starts with
``not a clause:`` quotes text that promises nothing testable (a pointer to TRL, an explanation) and
says why. Section headers ("Args:", "Returns:") need no row. Every other non-blank line of the docstring must be covered: at least half of its characters lie
inside quoted clauses. A clause with no assert fails here; so does a docstring line no row quotes.
"""

from __future__ import annotations

import ast
import re

import pytest

from tests.conftest import ROOT
from tests.grading.harness import Lesson, lessons_with_variants

CONTRACTS = ROOT / "course" / "lessons"  # <lesson>/contracts.md
TAG = re.compile(r"#\s*contract:\s*([\w\-, ]+)")
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS(.*?)(?:### END HIDDEN TESTS|\Z)", re.S)
NOT_A_CLAUSE = "not a clause:"
SECTION = re.compile(r"^[A-Z][a-z]+( [a-z]+)?:$")


def norm(text: str) -> str:
    return " ".join(text.split())


def parse_contract(lesson: str) -> dict[str, list[tuple[str, str]]]:
    path = CONTRACTS / lesson / "contracts.md"
    out: dict[str, list[tuple[str, str]]] = {}
    fn = None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            fn = line[3:].strip().strip("`")
            out.setdefault(fn, [])
        elif line.startswith("|") and fn and not re.match(r"^\|\s*-{3,}\s*\|", line):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) != 2 or cells[0].startswith("clause (quoted"):
                continue
            out[fn].append((cells[0].replace("\\|", "|"), cells[1]))
    return out


def docstring(lesson: Lesson, fn: str) -> str:
    tree = ast.parse(lesson.reference_code(lesson.function_cell[fn]))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn)
    return ast.get_docstring(node) or ""


def hidden_tags(lesson: Lesson, fn: str) -> set[str]:
    cells = "\n".join(lesson.test_code[t] for t in lesson.tests_of(fn))
    return {t.strip() for region in HIDDEN.findall(cells) for m in TAG.findall(region)
            for t in m.split(",") if t.strip()}  # fmt: skip


def uncovered_lines(doc: str, quotes: list[str]) -> list[str]:
    flat = norm(doc)
    covered = [False] * len(flat)
    for q in quotes:
        start = flat.find(q)
        while start >= 0:
            for i in range(start, start + len(q)):
                covered[i] = True
            start = flat.find(q, start + 1)
    out, pos = [], 0
    for raw in doc.splitlines():
        line = norm(raw)
        if not line:
            continue
        at = flat.find(line, pos)
        pos = at + len(line)
        if SECTION.match(line):  # "Args:", "Returns:", "Raises:", "Conventions:" promise nothing
            continue
        chars = [i for i in range(at, at + len(line)) if flat[i] != " "]
        if sum(covered[i] for i in chars) * 2 < len(chars):
            out.append(line)
    return out


CASES = [
    (lesson, fn) for lesson in lessons_with_variants() for fn in Lesson.load(lesson).function_cell
]


@pytest.mark.parametrize("lesson,fn", CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_every_docstring_clause_has_a_hidden_assert(lesson, fn):
    info = Lesson.load(lesson)
    assert (CONTRACTS / lesson / "contracts.md").exists(), (
        f"write course/lessons/{lesson}/contracts.md"
    )
    table = parse_contract(lesson).get(fn)
    assert table, f"course/lessons/{lesson}/contracts.md has no '## {fn}' table"
    doc, tags = norm(docstring(info, fn)), hidden_tags(info, fn)
    problems = []
    for quote, checked in table:
        if norm(quote) not in doc:
            problems.append(f"not in the docstring of {fn}: {quote!r}")
        if checked.startswith(NOT_A_CLAUSE):
            if not checked[len(NOT_A_CLAUSE) :].strip():
                problems.append(f"say why {quote!r} is not a clause")
            continue
        for tag in (t.strip() for t in checked.split(",")):
            if tag not in tags:
                problems.append(f"clause {quote!r}: no '# contract: {tag}' in the hidden tests of "
                                f"{info.test_of(fn)}")  # fmt: skip
    for line in uncovered_lines(docstring(info, fn), [norm(q) for q, _ in table]):
        problems.append(f"docstring line of {fn} that no clause quotes: {line!r}")
    assert not problems, "\n".join(problems)


def test_contract_files_name_only_graded_functions():
    for lesson in lessons_with_variants():
        path = CONTRACTS / lesson / "contracts.md"
        if path.exists():
            extra = set(parse_contract(lesson)) - set(Lesson.load(lesson).function_cell)
            assert not extra, f"{path.name}: tables for functions that are not graded: {extra}"
