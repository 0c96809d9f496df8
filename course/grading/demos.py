"""Which cells of a submission grading may leave out: the lesson's own demo cells that nothing
graded needs.

The verdict (course/grading/verdict.py) calls only the student's functions, so a cell that only
shows something (a plot, a table, a self-check) need not run again when the course grades.

**Candidates.** A code cell of the submission is a candidate when

- its source is, up to leading and trailing whitespace, the source of one of the lesson's own
  non-graded code cells, taken from the course's release notebook (``lesson_cells``), never from
  the submission: a cell the student wrote or changed always runs;
- its analysis succeeds (``_Cell``: it parses as Python, or after IPython's transformation of its
  magics within ``MAX_TRANSFORM`` and ``MAX_MAGICS``; it is within ``MAX_CELL``);
- it binds names only in ways the analysis sees: no ``from ... import *``, nothing of ``DYNAMIC``
  (``exec``, ``globals()``, a magic such as ``%%time`` that runs its text as code, ...), no
  mention of IPython's history (``HISTORY``);
- it stores into no attribute or item of an object it did not make (made: a ``_fresh`` value,
  such as a literal, a call's result or arithmetic; not a name, an attribute or item of another
  object, or a loop variable: ``CONFIG["eps"] = ...``, ``o = CFG["opt"]; o["lr"] = 2``,
  ``for p in model.ps: p.frozen = True`` and ``setattr(...)`` are such stores), neither at its
  top level nor in a def, lambda or class it defines (``_Binds``, ``_writes``).

Every other code cell runs: solutions, test cells, the student's own cells.

**A candidate runs too** (applied until nothing changes, since a candidate that runs needs its
own inputs in turn) when

- a running cell j reads, when it runs, a name the candidate binds, the candidate comes before j,
  and j has not surely bound the name itself before the read (``_now``);
- a running cell reads a name the candidate binds inside a function or lambda body (read when the
  function is called, perhaps after the whole notebook has run), wherever the candidate is;
- the same two rules for the name of an object the candidate may change by a method call
  (``log.append(...)``, ``rng.normal()``: ``_Binds.touched``), unless the name is a module's or a
  builtin;
- it binds the name of a function or class a graded solution cell defines (the verdict looks the
  graded functions up by name after the whole notebook has run);
- it reads a name that the student made something a demo could change (``_student_state``: a
  name a cell that is none of the lesson's code cells binds to anything but an import, a literal
  constant or a plain function), or a function that may change state outside itself (it writes,
  ``_writes``, or reads a name of the first kind or another such function): the candidate could
  change that object, or call the function that changes it.

Nothing is left out when a cell that runs can reach a global through a string or run text as
code (it mentions one of ``DYNAMIC`` or ``DYNAMIC_ATTRS``: ``globals``, ``vars()``, ``eval``,
``__main__``, ``sys.modules``, a frame, ``get_type_hints``, pandas' ``query``, a magic, ...: the
text may be anything), or reads IPython's history (``Out``, ``_12``, a ``_`` it has not surely
bound); nor when the notebook's code is over ``MAX_TOTAL``, or the analysis takes more than
``MAX_SECONDS`` or fails. A cell whose analysis fails reads every identifier in its text. The
analysis runs in the grader's own process: ``skippable`` never raises, and every step of it is
bounded by the limits above.

**What this cannot see**, and why the lessons are safe from it: state outside the notebook's names
that a demo changes by a call (``np.random.seed``, ``torch.manual_seed``, a file it writes, a
module's attribute); a demo that calls a lesson cell's function which changes a lesson object by a
method call; a call that returns an object it keeps, taken to be a new object. The lessons'
graded functions and tests do not depend on any of these: every planted bug and valid alternative
and every mutant is graded with the cells this module leaves out of the notebook holding it
(tests/grading/harness.py: the reference's, less any demo the variant makes needed, which runs
first; on 9.5 one planted bug does, its ``train_step`` storing into its trainer argument), and
tests/test_demos.py checks the rules against execution on generated notebooks.

A cell left out gets one line of output saying so (``NOTE``). ``GuardedExecute.skip_demos =
False`` (course/nbgrader_config.py) runs every cell.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
BUILTINS = frozenset(dir(builtins))
# Names through which code reaches a global by a string, runs text as code, or binds a name the
# syntax tree does not show. ``vars`` and ``dir`` count only without an argument (``vars(obj)`` is
# obj's own attributes).
DYNAMIC = frozenset({"globals", "locals", "vars", "dir", "eval", "exec", "compile", "__import__",
                     "__builtins__", "builtins", "__main__", "get_ipython", "importlib",
                     "run_path", "runpy", "get_type_hints", "currentframe"})  # fmt: skip
# Attributes that do the same: a frame's or a function's globals; and, called on a string,
# pandas' and numexpr's expressions that read ``@name`` from the caller's globals
# (``df.query("v < @x")``; not ``model.eval()``).
DYNAMIC_ATTRS = frozenset({"__dict__", "f_globals", "f_locals", "f_back", "_getframe",
                           "currentframe", "get_type_hints", "__globals__"})  # fmt: skip
EXPRESSION_ATTRS = frozenset({"query", "eval"})  # with any argument: the text may be a variable
TEXT_ATTRS = frozenset({"evaluate"})  # numexpr's, only on a string (``trainer.evaluate(x)``)
# IPython's history of inputs and outputs: leaving cells out changes it.
HISTORY = frozenset({"Out", "_oh", "In", "_ih", "_i", "_ii", "_iii"})  # ``_``: see _skippable
HISTORY_N = re.compile(r"_i?\d+$")  # _12, _i12
MAX_CELL = 64 * 1024  # characters of one cell the analysis reads
MAX_TOTAL = 1024 * 1024  # characters of all code cells together (each counted as at least 100)
MAX_TRANSFORM = 8 * 1024  # characters of a cell IPython may transform (magics, ``!`` lines, ``x?``)
MAX_MAGICS = 50  # ... and lines of it to transform
MAX_SECONDS = 20.0  # the whole analysis; past it, every cell runs
ESCAPE = re.compile(r"^\s*[%!?,;/]|=\s*[%!]|\?\s*$")  # a line IPython transforms
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
        if not graded(c):
            demos.add(_source(c).strip())
    return LessonCells(frozenset(demos), frozenset(code))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def graded(cell: dict) -> bool:
    """An nbgrader solution, test or task cell (everything else is not graded)."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return bool(meta.get("grade") or meta.get("solution") or meta.get("task"))


class _Cell:
    """One cell's source, as Python (IPython's transformation of magics and ``!`` lines, where
    plain Python does not parse), its syntax tree and its scopes. ``tree`` is None when any of
    that fails, or the cell is over ``MAX_CELL``, or it needs IPython's transformation and is over
    ``MAX_TRANSFORM`` or has more than ``MAX_MAGICS`` lines to transform (each one costs IPython
    a pass over the cell). ``dynamic``: it mentions one of ``DYNAMIC`` (``_dynamic``);
    ``history``: it mentions IPython's history."""

    def __init__(self, src: str) -> None:
        self.src, self.py, self.tree, self.table = src, src, None, None
        self.dynamic = self.history = False
        if len(src) > MAX_CELL:
            return
        try:
            try:
                self.tree = ast.parse(src)  # plain Python means the same to IPython
            except SyntaxError:
                from IPython.core.inputtransformer2 import TransformerManager

                lines = src.splitlines()
                if (
                    len(src) > MAX_TRANSFORM
                    or sum(map(bool, map(ESCAPE.search, lines))) > MAX_MAGICS
                ):
                    raise
                self.py = TransformerManager().transform_cell(src)
                self.tree = ast.parse(self.py)
            self.table = symtable.symtable(self.py, "<cell>", "exec")
            self.dynamic = _dynamic(self.tree)
            self.history = any(
                isinstance(n, ast.Name) and (n.id in HISTORY or HISTORY_N.match(n.id))
                for n in ast.walk(self.tree)
            )
        except Exception:  # noqa: BLE001 (IndentationError, RecursionError, IPython's RuntimeError)
            self.tree = self.table = None

    def every(self) -> set[str]:
        return set(IDENT.findall(self.py))


def _text(node: ast.AST) -> bool:
    """A string literal or an f-string."""
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _dynamic(tree: ast.AST) -> bool:
    """The tree names one of ``DYNAMIC`` (``vars`` and ``dir`` without an argument) or of
    ``DYNAMIC_ATTRS`` as an attribute, calls one of ``EXPRESSION_ATTRS`` with an argument or one
    of ``TEXT_ATTRS`` on a string, names ``sys.modules``, or imports ``__main__`` or
    ``sys.modules``."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    with_args = {id(n.func) for n in calls if n.args}
    on_text = {
        id(n.func)
        for n in calls
        if any(_text(a) for a in [*n.args, *(k.value for k in n.keywords)])
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in ("vars", "dir") and id(node) in with_args:
                continue
            if node.id in DYNAMIC:
                return True
        elif isinstance(node, ast.Attribute):
            if node.attr in DYNAMIC_ATTRS or (
                node.attr == "modules" and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ) or (node.attr in EXPRESSION_ATTRS and id(node) in with_args) or (
                node.attr in TEXT_ATTRS and id(node) in on_text
            ):  # fmt: skip
                return True
        elif isinstance(node, ast.ImportFrom) and (
            node.module == "__main__" or node.module == "sys"
            and any(a.name == "modules" for a in node.names)
        ):  # fmt: skip
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
    What is under ``if``, ``while``, ``try``, ``with`` or a loop may not run to its end, so it
    binds nothing for what follows (those bodies get a copy)."""
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
            # the body may stop early and the manager swallow the error (contextlib.suppress)
            out |= _now(stmt.body, set(bound))
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
        # ``global x`` then ``x += 1`` or ``del x`` reads x too, which symtable does not count as
        # a reference (without ``global`` x is the function's own)
        declared: set[str] = set()
        tables = list(c.table.get_children())
        while tables:
            t = tables.pop()
            declared.update(s.get_name() for s in t.get_symbols() if s.is_declared_global())
            tables.extend(t.get_children())
        stack = [(c.tree, False)]  # one pass; inside: under a def or lambda
        while stack:
            node, inside = stack.pop()
            if inside and isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                later.update({node.target.id} & declared)
            elif inside and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
                later.update({node.id} & declared)
            inside = inside or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            stack.extend((child, inside) for child in ast.iter_child_nodes(node))
    except RecursionError:
        every = c.every()
        return every, every
    return now, later


def used_names(src: str) -> tuple[set[str], set[str]]:
    """(names read when the cell runs, names its functions read later): see ``_reads``."""
    return _reads(_Cell(src))


# --- what a cell binds -------------------------------------------------------------------------


def _fresh(value: ast.AST) -> bool:
    """The value is a new object, not one made elsewhere: a literal or comprehension of new
    objects, a call's result, arithmetic, an f-string, a lambda. A name, an attribute, an item or
    anything that may evaluate to one (``a or b``, ``x if c else y``) is not. (A call that returns
    an object it keeps, ``o = cfg.get("opt")``, is taken to be new: not seen.)"""
    if isinstance(value, ast.Constant | ast.Call | ast.BinOp | ast.UnaryOp | ast.Compare
                  | ast.JoinedStr | ast.Lambda):  # fmt: skip
        return True
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return all(_fresh(e) for e in value.elts)
    if isinstance(value, ast.Dict):  # keys are hashable values; what is stored is the values
        return None not in value.keys and all(map(_fresh, value.values))
    if isinstance(value, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        return _fresh(value.elt)
    if isinstance(value, ast.DictComp):
        return _fresh(value.value)
    return False


def _pairs(target: ast.AST, value: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) pairs of an assignment, unpacked where both sides are displays of the same
    length without a star (``a, (b, c) = x, (y, [])``); otherwise the whole of each."""
    if (isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List)
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts])):  # fmt: skip
        return [p for t, v in zip(target.elts, value.elts, strict=True) for p in _pairs(t, v)]
    return [(target, value)]


def _header(node: ast.AST) -> list[ast.AST]:
    """What runs when a def, lambda or class statement runs: decorators, defaults, annotations,
    bases and keywords (not the body)."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    a = node.args
    args = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    return [
        *getattr(node, "decorator_list", []),
        *a.defaults,
        *[d for d in a.kw_defaults if d is not None],
        *[x.annotation for x in args if x is not None and x.annotation is not None],
        *([node.returns] if getattr(node, "returns", None) is not None else []),
    ]


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class _Binds(ast.NodeVisitor):
    """The bindings of one scope's statements: ``names``, the kind of each (``kinds``: import,
    const, def, writer, other: ``writer`` is a def or class whose code may change state outside
    itself, ``_writes``) and whether the statements store into an object they did not make
    (``outside``: an attribute or item of a name not bound here to a ``_fresh`` value, or
    ``setattr``/``delattr``). Nested scopes are not entered; with ``top`` (a cell's own top
    level) each def, lambda and class it reaches is checked by ``_writes``, which counts as a
    store into an outside object."""

    def __init__(self, top: bool = True) -> None:
        self.names: set[str] = set()
        self.kinds: dict[str, set[str]] = {}
        self.own: set[str] = set()  # names bound here to an object made here
        self.outside = False
        self.top = top
        self.targets: set[str] = set()  # the names the assignment being visited binds itself
        self.touches: set[str] = set()  # names whose object a method call here may change

    def _bind(self, name: str, kind: str) -> None:
        self.names.add(name)
        self.kinds.setdefault(name, set()).add(kind)
        self.own.discard(name)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.targets = _targets(t)  # bound below, with their kind
            self.visit(t)
            self.targets = set()
            for target, value in _pairs(t, node.value):
                for n in _targets(target):
                    self._bind(n, "const" if isinstance(value, ast.Constant) else "other")
                    if _fresh(value):
                        self.own.add(n)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del) and node.id not in self.targets:
            self._bind(node.id, "other")

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

    @property
    def touched(self) -> set[str]:
        """Names whose object a method call here may change, less those bound here (a reader
        after this cell reads what it binds, and then needs it anyway)."""
        return self.touches - self.names

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("setattr", "delattr"):
            self.outside = True  # setattr(obj, "x", v) is obj.x = v, with a name made at run time
        base = f
        while isinstance(base, ast.Attribute | ast.Subscript):
            base = base.value
        if base is not f and isinstance(base, ast.Name) and base.id not in self.own:
            self.touches.add(base.id)  # x.m(...) may change x (``log.append``, ``rng.normal``)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for a in node.names:
            if a.name == "*":
                self.outside = True
            self._bind(a.asname or a.name.split(".")[0], "import")

    visit_ImportFrom = visit_Import

    def _scope(self, node) -> None:
        for part in _header(node):
            self.visit(part)
        writes = self.top and _writes(node)
        if writes:
            self.outside = True
        if not isinstance(node, ast.Lambda):  # a def or class binds its name
            self._bind(node.name, "writer" if writes else "def")

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _scope

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
    """A def, lambda or class whose code may change state outside itself: it or a scope inside it
    declares a name ``global`` or ``nonlocal``, or stores into an attribute or item of an object
    it did not make (its parameters and ``self`` included). Each scope is read once."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Global | ast.Nonlocal):
            return True
        if isinstance(inner, _SCOPES):
            v = _Binds(top=False)
            for stmt in inner.body if isinstance(inner.body, list) else [inner.body]:
                v.visit(stmt)
            if v.outside:
                return True
    return False


def _binds(c: _Cell) -> _Binds | None:
    """The cell's bindings, or None when the analysis cannot see them all (see ``_Binds``)."""
    if c.tree is None or c.dynamic or c.history:
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
    """The names the cell binds at the top level, or None when it cannot be a candidate (its
    analysis fails, it mentions one of ``DYNAMIC`` or IPython's history, imports *, or stores into
    an object it did not make)."""
    v = _binds(_Cell(src))
    return None if v is None or v.outside else v.names


def _student_state(cells: list[_Cell], binds: list[_Binds | None]) -> set[str]:
    """Names the student's cells (those that are none of the lesson's code cells) bind to
    something a demo could change or that changes state: anything but imports, literal constants
    and plain functions; a cell whose bindings cannot be seen gives every identifier in its
    text."""
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
    by the rules in the module docstring; none when the analysis would take more than
    ``MAX_SECONDS`` or the notebook is too big to read."""
    try:
        return _skippable(cells, lesson, time.monotonic() + MAX_SECONDS)
    except Exception:  # noqa: BLE001 (too slow, or a malformed notebook: run every cell)
        return set()


class _TooSlow(Exception):
    pass


def _skippable(cells: Sequence[dict], lesson: LessonCells, deadline: float) -> set[int]:
    code = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    if sum(max(100, len(_source(cells[i]))) for i in code) > MAX_TOTAL:
        return set()
    parsed, binds, reads = {}, {}, {}
    for i in code:
        if time.monotonic() > deadline:
            raise _TooSlow
        parsed[i] = _Cell(_source(cells[i]))
        binds[i] = _binds(parsed[i])
        reads[i] = _reads(parsed[i])
    candidate = {
        i
        for i in code
        if not graded(cells[i])
        and parsed[i].src.strip() in lesson.demos
        and binds[i] is not None
        and not binds[i].outside
    }
    running = [i for i in code if i not in candidate]
    for i in running:  # IPython's history depends on every cell that ran before
        if (
            parsed[i].history
            or parsed[i].dynamic  # it may run any text, read any name: it needs every cell
            or {"_", "__", "___"} & (reads[i][0] | reads[i][1])
        ):
            return set()
    # What the student made that a demo could change, and functions that change global state
    student = [i for i in code if parsed[i].src.strip() not in lesson.code]
    state = _student_state([parsed[i] for i in student], [binds[i] for i in student])
    for i in running:
        if binds[i] is not None:
            state |= {n for n, kinds in binds[i].kinds.items() if "writer" in kinds}
    grown = True
    while grown:  # a function that reads such a thing may change it: it is such a thing too
        grown = False
        if time.monotonic() > deadline:
            raise _TooSlow
        for i in running:
            if binds[i] is not None and reads[i][1] & state:
                defs = {n for n, kinds in binds[i].kinds.items() if "def" in kinds} - state
                state |= defs
                grown = grown or bool(defs)
    # The verdict calls the graded functions after the whole notebook: whatever binds their names
    final: set[str] = set()
    for i in code:
        if ((cells[i].get("metadata") or {}).get("nbgrader") or {}).get("solution"):
            b = binds[i]
            final |= (
                parsed[i].every()
                if b is None
                else {n for n, kinds in b.kinds.items() if kinds & {"def", "writer"}}
            )
    # a candidate counts as binding what it binds and the objects its method calls may change
    # (not a module: ``plt.plot``, ``np.random.seed`` are state outside the notebook's names)
    imports = {n for b in binds.values() if b for n, kinds in b.kinds.items() if "import" in kinds}
    binders: dict[str, list[int]] = {}
    for k in candidate:
        for name in binds[k].names | (binds[k].touched - imports - BUILTINS):
            binders.setdefault(name, []).append(k)
    needed = {k for k in candidate if (reads[k][0] | reads[k][1]) & state or binds[k].names & final}
    todo = running + sorted(needed)
    while todo:
        if time.monotonic() > deadline:
            raise _TooSlow
        j = todo.pop()
        now, later = reads[j]
        for name in now | later:
            for k in binders.get(name, ()):
                if k not in needed and (name in later or k < j):
                    needed.add(k)
                    todo.append(k)
    return candidate - needed
