"""Which cells of a submission grading may leave out: the lesson's own demo cells that nothing
graded needs.

The verdict (course/grading/verdict.py) calls only the student's functions, so a cell that only
shows something (a plot, a table, a self-check) need not run again when the course grades.

**Candidates.** A code cell of the submission is a candidate when

- its source is, up to leading and trailing whitespace, the source of one of the lesson's own
  non-graded code cells, taken from the course's release notebook (``lesson_cells``), never from
  the submission: a cell the student wrote or changed always runs;
- it parses (as plain Python, or after IPython's transformation of at most ``MAX_MAGICS`` magic
  lines), is not over ``MAX_CELL``, binds names only in ways the analysis sees (no
  ``from ... import *``, nothing of ``DYNAMIC``: ``exec``, a magic such as ``%%time`` that runs
  its text as code, ...), and stores into no attribute or item of an object it did not make
  itself (made: from a literal, a call or arithmetic; not a name, an attribute or item of another
  object, or a loop variable: ``CONFIG["eps"] = ...``, ``o = CFG["opt"]; o["lr"] = 2``,
  ``for p in model.ps: p.frozen = True`` and ``setattr(...)`` are such stores), at its top level
  or in a function or class it defines (``_binds``, ``_writes``).

Every other code cell runs: solutions, test cells, the student's own cells. When the submission's
code is over ``MAX_TOTAL``, or the analysis fails in any way, every cell runs.

**A candidate runs too** (``skippable``, applied until nothing changes, since a candidate that runs
needs its own inputs in turn) when

- a running cell j reads, when it runs, a name the candidate binds, the candidate comes before j,
  and j has not surely bound the name itself before the read;
- a running cell reads a name the candidate binds inside a function or lambda body (read when the
  function is called, perhaps after the whole notebook has run), wherever the candidate is;
- it reads a name that a cell the student wrote (a cell whose source is none of the lesson's code
  cells: the solutions, the student's own cells) binds to anything but an import, a literal
  constant or a function that changes no global state (``_student_state``), or that any running
  cell binds to a function that does (``_writes``): the candidate could change that object, or
  call the function that changes it.

A cell that can reach a global through a string or run text as code (it mentions one of
``DYNAMIC``: ``globals``, ``vars()``, ``eval``, ``__main__``, ``sys.modules``, IPython's ``Out``,
a magic, ...) or whose analysis fails reads every identifier in its text.

**What this cannot see**, and why the lessons are safe from it: a name built at run time from
pieces (``globals()[f"w{i}"]``: the identifiers of the text are read, not ``w3``); state outside the
notebook's names that a demo changes by a call (``np.random.seed``, ``torch.manual_seed``, a file
it writes, a module's attribute) or a method call on an object a lesson cell made. The lessons'
graded functions and tests do not depend on either: every planted bug, valid alternative and
mutant is graded with exactly the cells this module leaves out (tests/grading/harness.py), and
tests/test_demos.py checks the rules against execution on generated notebooks.

A cell left out gets one line of output saying so (``NOTE``). ``GuardedExecute.skip_demos =
False`` (course/nbgrader_config.py) runs every cell.
"""

from __future__ import annotations

import ast
import re
import symtable
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names through which code reaches a global by a string, runs text as code, or binds a name the
# syntax tree does not show; ``Out``, ``_oh``, ``In``, ``_ih``: IPython's history. ``vars`` and
# ``dir`` count only without an argument (``vars(obj)`` is obj's own attributes).
DYNAMIC = frozenset({"globals", "locals", "vars", "dir", "eval", "exec", "compile", "__import__",
                     "__builtins__", "__main__", "get_ipython", "importlib", "run_path", "runpy",
                     "Out", "_oh", "In", "_ih"})  # fmt: skip
HISTORY = re.compile(r"_i?\d+$")  # IPython's _12, _i12 (not ``_``, the usual throwaway name)
MAX_CELL = 64 * 1024  # characters of one cell the analysis reads
MAX_TOTAL = 1024 * 1024  # characters of all code cells together
MAX_MAGICS = 50  # lines of one cell for IPython to transform (magics, ``!`` lines, ``x?``)
NOTE = "(a demo cell of the lesson: not run again when the course grades)\n"


@dataclass(frozen=True)
class LessonCells:
    """The lesson's own code cells (its release notebook), by stripped source."""

    demos: frozenset[str]  # the non-graded ones
    code: frozenset[str]  # all of them


def lesson_cells(cells: Iterable[dict]) -> LessonCells:
    """The stripped sources of a lesson notebook's code cells (its release's cells)."""
    demos, code = set(), set()
    for c in cells:
        if c.get("cell_type") != "code":
            continue
        code.add(_source(c).strip())
        if not _graded(c):
            demos.add(_source(c).strip())
    return LessonCells(frozenset(demos), frozenset(code))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _graded(cell: dict) -> bool:
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return bool(meta.get("grade") or meta.get("solution") or meta.get("task"))


class _Cell:
    """One cell's source, as Python (IPython's transformation of magics and ``!`` lines, where
    plain Python does not parse), its syntax tree and its scopes; ``tree`` is None when any of that
    fails, or the cell is over ``MAX_CELL`` or has more than ``MAX_MAGICS`` lines to transform."""

    def __init__(self, src: str) -> None:
        self.src, self.py, self.tree, self.table, self.dynamic = src, src, None, None, False
        if len(src) > MAX_CELL:
            return
        try:
            try:
                self.tree = ast.parse(src)  # plain Python means the same to IPython
            except SyntaxError:
                from IPython.core.inputtransformer2 import TransformerManager

                if sum(_escape(line) for line in src.splitlines()) > MAX_MAGICS:
                    raise  # IPython's transformation takes time for each such line
                self.py = TransformerManager().transform_cell(src)
                self.tree = ast.parse(self.py)
            self.table = symtable.symtable(self.py, "<cell>", "exec")
            self.dynamic = _dynamic(self.tree)
        except Exception:  # noqa: BLE001 (IndentationError, RecursionError, IPython's RuntimeError)
            self.tree = self.table = None

    def every(self) -> set[str]:
        return set(IDENT.findall(self.py))


def _escape(line: str) -> bool:
    """A line IPython transforms: a magic, a shell escape, a help request."""
    stripped = line.strip()
    return stripped[:1] in ("%", "!") or stripped.endswith("?") or stripped[:1] == "?"


def _dynamic(tree: ast.AST) -> bool:
    """The tree names one of ``DYNAMIC`` (``vars`` and ``dir`` without an argument), IPython's
    history (``_12``), ``sys.modules``, a ``__dict__`` or a frame's globals, or imports from
    ``__main__``."""
    with_args = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in ("vars", "dir") and id(node) in with_args:
                continue
            if node.id in DYNAMIC or HISTORY.match(node.id):
                return True
        elif isinstance(node, ast.Attribute):
            if node.attr in ("__dict__", "f_globals", "_getframe") or (
                node.attr == "modules" and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):  # fmt: skip
                return True
        elif isinstance(node, ast.ImportFrom) and node.module == "__main__":
            return True
        elif isinstance(node, ast.Import) and any(a.name == "__main__" for a in node.names):
            return True
    return False


# --- what a cell reads -------------------------------------------------------------------------


def _targets(node: ast.AST) -> set[str]:
    """The plain names an assignment target binds (``a, (b, *c) = ...``: a, b, c)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Tuple | ast.List):
        return set().union(*(_targets(e) for e in node.elts))
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return set()


def _loads(node: ast.AST, local: set[str]) -> set[str]:
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
            out |= _loads(gen.iter, inner)
            out |= _loads(gen.target, inner)  # ``for ns.i in ...`` reads ns
            inner |= _targets(gen.target)
            for cond in gen.ifs:
                out |= _loads(cond, inner)
        elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return out.union(*(_loads(e, inner) for e in elts))
    return set().union(*(_loads(c, local) for c in ast.iter_child_nodes(node)))


def _now(body: list[ast.stmt], bound: set[str]) -> set[str]:
    """Names the statements read when they run that no earlier statement of theirs has surely
    bound. ``bound`` grows with what each statement surely binds: the targets of a plain
    assignment, a ``with ... as``, an import, a def or class; inside a ``for`` body, its target.
    What is under ``if``, ``while``, ``try`` or a loop may not run, so it binds nothing for what
    follows (those bodies get a copy)."""
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            out |= _loads(stmt, bound)  # the value, and what the targets read (``a[i] = ...``)
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                out |= {stmt.target.id} - bound  # x += 1 reads x
            if not isinstance(stmt, ast.AnnAssign) or stmt.value is not None:
                for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    bound |= _targets(t)
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            out |= _loads(stmt.iter, bound) | _loads(stmt.target, bound)
            out |= _now(stmt.body, bound | _targets(stmt.target))
            out |= _now(stmt.orelse, set(bound))
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                out |= _loads(item.context_expr, bound)
                if item.optional_vars is not None:
                    out |= _loads(item.optional_vars, bound)
                    bound |= _targets(item.optional_vars)
            out |= _now(stmt.body, bound)  # a with body runs: what it binds stays bound
        elif isinstance(stmt, ast.If | ast.While):
            out |= _loads(stmt.test, bound)
            out |= _now(stmt.body, set(bound)) | _now(stmt.orelse, set(bound))
        elif isinstance(stmt, ast.Try | ast.TryStar):
            out |= _now(stmt.body, set(bound)) | _now(stmt.orelse, set(bound))
            out |= _now(stmt.finalbody, set(bound))
            for h in stmt.handlers:
                out |= _loads(h.type, bound) if h.type is not None else set()
                out |= _now(h.body, bound | ({h.name} if h.name else set()))
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            bound |= {a.asname or a.name.split(".")[0] for a in stmt.names}
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out |= _loads(stmt, bound)
            bound.add(stmt.name)
        else:  # expressions, return, del, assert, raise, match, global, ...
            out |= _loads(stmt, bound)
    return out


def _reads(c: _Cell) -> tuple[set[str], set[str]]:
    """The global names the cell could read: (when it runs, later).

    "When it runs": names read outside function bodies that the cell has not surely bound itself
    before the read (``_now``). "Later": the globals a function or lambda body reads (when it is
    called, perhaps after the whole notebook has run; Python's own scope analysis, ``symtable``,
    plus ``x += 1`` and ``del x``, which read x). A cell that mentions one of ``DYNAMIC`` or whose
    analysis fails reads every identifier in its text, now and later."""
    if c.tree is None or c.dynamic:
        every = c.every()
        return every, every
    try:
        now = _now(c.tree.body, set())
        later: set[str] = set()

        def scopes(t: symtable.SymbolTable) -> None:
            for child in t.get_children():
                later.update(
                    s.get_name() for s in child.get_symbols() if s.is_global() and s.is_referenced()
                )
                scopes(child)

        scopes(c.table)
        for node in ast.walk(c.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.AugAssign) and isinstance(inner.target, ast.Name):
                        later.add(inner.target.id)
                    elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Del):
                        later.add(inner.id)
    except RecursionError:
        every = c.every()
        return every, every
    return now, later


def used_names(src: str) -> tuple[set[str], set[str]]:
    """(names read when the cell runs, names its functions read later): see ``_reads``."""
    return _reads(_Cell(src))


# --- what a cell binds -------------------------------------------------------------------------

# A value that may be an object made elsewhere: assigned from one of these, a name is an alias and
# a store into it changes that object. Any other value (a literal, a call, arithmetic) is taken to
# be a new object (a call that returns an object it keeps, ``o = cfg.get("opt")``, is not seen).
_ALIAS = (ast.Name, ast.Attribute, ast.Subscript, ast.Starred, ast.IfExp, ast.BoolOp,
          ast.NamedExpr)  # fmt: skip


class _Binds(ast.NodeVisitor):
    """Top-level bindings of a cell (``names``), what kind each is (``kinds``: import, const,
    def, other) and whether it stores into an object it did not make from a literal
    (``outside``), at its top level or in a function it defines."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.kinds: dict[str, set[str]] = {}
        self.own: set[str] = set()  # names bound, in this cell, to an object it made
        self.outside = False
        self.assigning = False

    def _bind(self, name: str, kind: str) -> None:
        self.names.add(name)
        self.kinds.setdefault(name, set()).add(kind)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.assigning = True  # its names are bound below, with their kind
            self.visit(t)
            self.assigning = False
            pairs = [(t, node.value)]
            if (isinstance(t, ast.Tuple | ast.List) and isinstance(node.value, ast.Tuple | ast.List)
                    and len(t.elts) == len(node.value.elts)):  # fmt: skip
                pairs = list(zip(t.elts, node.value.elts, strict=True))  # a, b = x, []
            for target, value in pairs:
                for n in _targets(target):
                    self._bind(n, "const" if isinstance(value, ast.Constant) else "other")
                    (self.discard if isinstance(value, _ALIAS) else self.own.add)(n)

    def discard(self, name: str) -> None:
        self.own.discard(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del) and not self.assigning:
            self._bind(node.id, "other")
            self.own.discard(node.id)

    def _store_into(self, node: ast.Attribute | ast.Subscript) -> None:
        base = node.value
        while isinstance(base, ast.Attribute | ast.Subscript):
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in self.own):
            self.outside = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self._store_into(node)
        self.generic_visit(node)

    visit_Subscript = visit_Attribute

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("setattr", "delattr"):
            self.outside = True  # setattr(obj, "x", v) is obj.x = v, with a name made at run time
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for a in node.names:
            if a.name == "*":
                self.outside = True
            self._bind(a.asname or a.name.split(".")[0], "import")

    visit_ImportFrom = visit_Import

    def _scope(self, node) -> None:  # a def or class binds its name; its body is its own scope
        self._bind(node.name, "writer" if _writes(node) else "def")
        for d in node.decorator_list:
            self.visit(d)
        if _writes(node):
            self.outside = True

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Lambda(self, node: ast.Lambda) -> None:
        if _writes(node):
            self.outside = True

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name, "other")
        self.generic_visit(node)

    def _capture(self, node: ast.MatchAs | ast.MatchStar | ast.MatchMapping) -> None:
        name = node.rest if isinstance(node, ast.MatchMapping) else node.name
        if name:
            self._bind(name, "other")
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = _capture


def _writes(node: ast.AST) -> bool:
    """A function, lambda or class whose code may change state outside itself: it declares a
    name ``global`` or ``nonlocal``, or stores into an attribute or item of an object it did not
    make from a literal (its parameters and ``self`` included)."""
    for fn in ast.walk(node):
        if isinstance(fn, ast.Global | ast.Nonlocal):
            return True
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            v = _Binds()
            body = fn.body if isinstance(fn.body, list) else [fn.body]
            for stmt in body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    v.visit(stmt)  # nested scopes are checked on their own by the walk
            if v.outside:
                return True
    return False


def _binds(c: _Cell) -> _Binds | None:
    """The cell's bindings, or None when the analysis cannot see them all (see ``_Binds``)."""
    if c.tree is None or c.dynamic:
        return None
    v = _Binds()
    try:
        for stmt in c.tree.body:  # in order: ``x = []`` then ``x[0] = 1`` stores into its own
            v.visit(stmt)
        for node in ast.walk(c.tree):  # ``global x`` in a function body binds x at the top level
            if isinstance(node, ast.Global | ast.Nonlocal):
                for n in node.names:
                    v._bind(n, "other")
    except RecursionError:
        return None
    return v


def bound_names(src: str) -> set[str] | None:
    """The names the cell binds at the top level, or None when it cannot be a candidate (it does
    not parse, mentions one of ``DYNAMIC``, imports *, or stores into an object it did not make
    from a literal)."""
    v = _binds(_Cell(src))
    return None if v is None or v.outside else v.names


def _student_state(cells: list[_Cell], binds: list[_Binds | None]) -> set[str]:
    """Names a student-written cell binds to something a demo could change or that changes
    global state: anything but imports, literal constants and functions that write nothing; a
    cell whose bindings cannot be seen gives every identifier in its text."""
    out: set[str] = set()
    for c, b in zip(cells, binds, strict=True):
        if b is None:
            out |= c.every()
        else:
            out |= {n for n, kinds in b.kinds.items() if kinds - {"import", "const", "def"}}
    return out


# --- the decision ------------------------------------------------------------------------------


def skippable(cells: Sequence[dict], lesson: LessonCells) -> set[int]:
    """Indices of ``cells`` (a submission's cells, as nbformat dicts) that grading may leave out,
    by the rules in the module docstring."""
    code = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    if sum(len(_source(cells[i])) for i in code) > MAX_TOTAL:
        return set()
    parsed = {i: _Cell(_source(cells[i])) for i in code}
    binds = {i: _binds(parsed[i]) for i in code}
    candidate = {
        i
        for i in code
        if not _graded(cells[i])
        and parsed[i].src.strip() in lesson.demos
        and binds[i] is not None
        and not binds[i].outside
    }
    student = [i for i in code if parsed[i].src.strip() not in lesson.code]
    state = _student_state([parsed[i] for i in student], [binds[i] for i in student])
    for i in code:  # and any running cell's function that changes global state
        if i not in candidate and binds[i] is not None:
            state |= {n for n, kinds in binds[i].kinds.items() if "writer" in kinds}
    reads = {i: _reads(parsed[i]) for i in code}
    needed = {k for k in candidate if (reads[k][0] | reads[k][1]) & state}
    todo = [i for i in code if i not in candidate] + sorted(needed)
    while todo:
        j = todo.pop()
        now, later = reads[j]
        for k in candidate - needed:
            names = binds[k].names
            if names & now and k < j or names & later:
                needed.add(k)
                todo.append(k)
    return candidate - needed
