"""Which cells of a submission grading may leave out: the lesson's own demo cells that nothing
graded needs.

The verdict (course/grading/verdict.py) calls only the student's functions, so a cell that only
shows something (a plot, a table, a self-check) need not run again when the course grades. A code
cell of the submission is a candidate when

- its source is, up to leading and trailing whitespace, the source of one of the lesson's own
  non-graded code cells, taken from the course's release notebook (``lesson_demos``), never from
  the submission: a cell the student wrote or changed always runs;
- it parses, has no ``from ... import *``, and assigns no attribute or item of an object it did
  not create itself (``CONFIG["eps"] = ...`` changes state a later cell may read) (``bound_names``).

Every other code cell runs (solutions, test cells, the student's own cells). A candidate runs too
when a running cell may read a name it binds (``skippable``, applied until nothing changes, since
a candidate that runs needs its own inputs):

- a name read when cell j runs, not surely bound earlier in cell j itself: every candidate before
  j that binds it;
- a name read inside a function or lambda body (read when it is called, perhaps after the whole
  notebook has run): every candidate that binds it, wherever it is;
- a cell that can reach a name through a string or run text as code (it mentions ``globals``,
  ``getattr``, ``eval``, a magic, ...: ``DYNAMIC``), or that does not parse, reads every
  identifier in its text.

What this cannot see: a method call in a candidate that changes an object another cell made
(``log.append(...)``), and a name built at run time where none of ``DYNAMIC`` appears. The lessons'
demo cells are checked against both by grading with them left out: every planted bug and valid
alternative, and the mutation records, run with exactly the cells this module leaves out
(tests/grading/harness.py); tests/test_demos.py tests the rules on generated notebooks.

A cell left out gets one line of output saying so (``NOTE``). ``GuardedExecute.skip_demos =
False`` (course/nbgrader_config.py) runs every cell.
"""

from __future__ import annotations

import ast
import re
import symtable
from collections.abc import Iterable, Sequence

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# names through which code reaches a global by a string, or runs text as code
DYNAMIC = frozenset({"globals", "locals", "vars", "getattr", "hasattr", "eval", "exec", "compile",
                     "__import__", "__builtins__", "__main__", "__dict__", "modules",
                     "get_ipython", "importlib", "run_path", "runpy"})  # fmt: skip
NOTE = "(a demo cell of the lesson: not run again when the course grades)\n"


def _python(src: str) -> str:
    """The cell as Python (IPython's transformation of magics and ``!`` lines)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(src)


def _parse(src: str) -> ast.Module | None:
    try:
        return ast.parse(_python(src))
    except (SyntaxError, ValueError, TypeError):  # not Python, even after IPython's transformation
        return None


def _loads(node: ast.AST, local: frozenset[str]) -> set[str]:
    """Names ``node`` reads when it runs, less ``local`` (bound before it runs): function and
    lambda bodies are left out (read later); a comprehension's own targets are local to it."""
    if isinstance(node, ast.Name):
        return set() if isinstance(node.ctx, ast.Store) or node.id in local else {node.id}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        parts = [*getattr(node, "decorator_list", []), node.args]
        if getattr(node, "returns", None) is not None:
            parts.append(node.returns)
        return set().union(*(_loads(p, local) for p in parts))
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        out: set[str] = set()
        inner = set(local)
        for gen in node.generators:
            out |= _loads(gen.iter, frozenset(inner))
            inner |= _targets(gen.target)
            for cond in gen.ifs:
                out |= _loads(cond, frozenset(inner))
        elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return out.union(*(_loads(e, frozenset(inner)) for e in elts))
    return set().union(*(_loads(c, local) for c in ast.iter_child_nodes(node)))


def _targets(node: ast.AST) -> set[str]:
    """The plain names an assignment target binds (``a, (b, *c) = ...``: a, b, c)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Tuple | ast.List):
        return set().union(*(_targets(e) for e in node.elts))
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return set()


def _now(body: list[ast.stmt], bound: frozenset[str]) -> set[str]:
    """Names the statements read when they run that no earlier statement of theirs has surely
    bound. Surely bound after a statement: the targets of a plain assignment, a ``with ... as``,
    an import, a def or class; inside a ``for`` body, its target. What is under ``if``,
    ``while``, ``try`` or a loop may not run, so it binds nothing for what follows."""
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            out |= _loads(stmt, bound)
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                out |= {stmt.target.id} - bound  # x += 1 reads x
            if not isinstance(stmt, ast.AnnAssign) or stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                bound = bound.union(*(_targets(t) for t in targets))
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            out |= _loads(stmt.iter, bound)
            out |= _now(stmt.body, bound | _targets(stmt.target))
            out |= _now(stmt.orelse, bound)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                out |= _loads(item.context_expr, bound)
                if item.optional_vars is not None:
                    bound = bound | _targets(item.optional_vars)
            out |= _now(stmt.body, bound)
        elif isinstance(stmt, ast.If | ast.While):
            out |= _loads(stmt.test, bound)
            out |= _now(stmt.body, bound) | _now(stmt.orelse, bound)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            out |= _now(stmt.body, bound) | _now(stmt.orelse, bound) | _now(stmt.finalbody, bound)
            for h in stmt.handlers:
                out |= _loads(h.type, bound) if h.type is not None else set()
                out |= _now(h.body, bound | ({h.name} if h.name else set()))
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            bound = bound | {a.asname or a.name.split(".")[0] for a in stmt.names}
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out |= _loads(stmt, bound)
            bound = bound | {stmt.name}
        else:  # expressions, return, del, assert, raise, match, global, ...
            out |= _loads(stmt, bound)
    return out


def _dynamic(node: ast.AST) -> bool:
    """``node`` names one of ``DYNAMIC`` (as a name, or as an attribute: ``sys.modules``)."""
    if isinstance(node, ast.Name):
        return node.id in DYNAMIC
    return isinstance(node, ast.Attribute) and node.attr in DYNAMIC


def used_names(src: str) -> tuple[set[str], set[str]]:
    """The global names the cell could read: (when it runs, later).

    "When it runs": names read outside function bodies that the cell has not surely bound itself
    before the read (``_now``). "Later": the globals a function or lambda body reads (when it is
    called, maybe after the whole notebook has run; Python's own scope analysis, ``symtable``).
    A cell that can reach a name by a string (it names ``globals``, ``getattr``, ``eval``, a
    magic, ... : ``DYNAMIC``) or does not parse reads every identifier in its text, now and later.
    """
    py = _python(src)
    try:
        tree = ast.parse(py)
        table = symtable.symtable(py, "<cell>", "exec")
    except (SyntaxError, ValueError, TypeError):
        tree = table = None
    if tree is None or any(_dynamic(n) for n in ast.walk(tree)):
        every = set(IDENT.findall(py))
        return every, every
    now = _now(tree.body, frozenset())
    later: set[str] = set()

    def scopes(t: symtable.SymbolTable) -> None:
        for child in t.get_children():
            later.update(
                s.get_name() for s in child.get_symbols() if s.is_global() and s.is_referenced()
            )
            scopes(child)

    scopes(table)
    # ``x += 1`` and ``del x`` read x too, which symtable does not count as a reference
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for inner in ast.walk(node):
                if isinstance(inner, ast.AugAssign) and isinstance(inner.target, ast.Name):
                    later.add(inner.target.id)
                elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Del):
                    later.add(inner.id)
    return now, later


class _Binds(ast.NodeVisitor):
    """Top-level bindings of a module; ``outside`` is set when it stores into an object it did
    not bind, or imports *."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.outside = False

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.names.add(node.id)

    def _store_into(self, node: ast.Attribute | ast.Subscript) -> None:
        base = node.value
        while isinstance(base, ast.Attribute | ast.Subscript):
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in self.names):
            self.outside = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._store_into(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._store_into(node)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.names.add(a.asname or a.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            if a.name == "*":
                self.outside = True
            self.names.add(a.asname or a.name)

    def _scope(self, node) -> None:  # a def or class binds its name; its body is its own scope
        self.names.add(node.name)
        for d in node.decorator_list:
            self.visit(d)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def _capture(self, node: ast.MatchAs | ast.MatchStar | ast.MatchMapping) -> None:
        name = node.rest if isinstance(node, ast.MatchMapping) else node.name
        if name:
            self.names.add(name)
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = _capture


def bound_names(src: str) -> set[str] | None:
    """The names the cell binds at the top level, or None when it cannot be left out (it does not
    parse, imports *, or stores into an object it did not create)."""
    tree = _parse(src)
    if tree is None:
        return None
    v = _Binds()
    # statements in order, so that ``x = []; x[0] = 1`` is a store into the cell's own object
    for stmt in tree.body:
        v.visit(stmt)
    for node in ast.walk(tree):  # ``global x`` in a function body binds x at the top level
        if isinstance(node, ast.Global | ast.Nonlocal):
            v.names.update(node.names)
    return None if v.outside else v.names


def lesson_demos(cells: Iterable[dict]) -> set[str]:
    """The stripped sources of a lesson notebook's non-graded code cells (its release's cells)."""
    out = set()
    for c in cells:
        if c.get("cell_type") != "code":
            continue
        meta = (c.get("metadata") or {}).get("nbgrader") or {}
        if meta.get("grade") or meta.get("solution") or meta.get("task"):
            continue
        src = c.get("source", "")
        out.add(("".join(src) if isinstance(src, list) else src).strip())
    return out


def skippable(cells: Sequence[dict], demos: set[str]) -> set[int]:
    """Indices of ``cells`` (a submission's cells, as nbformat dicts) that grading may leave out,
    by the rules in the module docstring."""
    code = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    binds: dict[int, set[str] | None] = {}  # every code cell's top-level names (None: unknown)
    candidate: set[int] = set()
    for i in code:
        src = _source(cells[i])
        binds[i] = bound_names(src)
        meta = (cells[i].get("metadata") or {}).get("nbgrader") or {}
        graded = meta.get("grade") or meta.get("solution") or meta.get("task")
        if not graded and binds[i] is not None and src.strip() in demos:
            candidate.add(i)
    needed: set[int] = set()
    todo = [i for i in code if i not in candidate]
    while todo:
        j = todo.pop()
        now, later = used_names(_source(cells[j]))
        for k in candidate - needed:
            # a name read when cell j runs: any binder before j may have made its value;
            # a name read inside a function: any binder at all (the function may be called last)
            if binds[k] & now and k < j or binds[k] & later:
                needed.add(k)
                todo.append(k)
    return candidate - needed


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src
