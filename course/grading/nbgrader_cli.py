"""``nbgrader`` as the course runs it: the same command line, started about 1.8 s sooner.

    python -m course.grading.nbgrader_cli autograde 9.1 --student alice   # = nbgrader autograde ...

nbgrader imports nbformat, nbformat imports jsonschema, and jsonschema imports the optional package
``rfc3987_syntax`` (installed with jupyter-events' ``jsonschema[format-nongpl]``) to check strings
of the "iri" format. That package builds three Earley parsers from its grammar when it is imported:
about 1.8 s of CPU in every nbgrader process on a 2-core laptop, paid once per student in a class
run, although no notebook schema uses the format. Here the package is replaced, before anything
imports it, by a stand-in that imports the real one the first time one of its names is used. What
jsonschema checks, and how, is unchanged (tests/test_nbgrader_cli.py compares the verdicts); only
the moment the parsers are built moves, from start-up to first use (in grading: never).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

DEFERRED = "rfc3987_syntax"


class _Deferred(types.ModuleType):
    """Stands in for ``DEFERRED`` until a name of it is used; then the real module takes its place
    in ``sys.modules`` and answers."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # the import system's probes (``__path__``, ``__spec__``...)
            raise AttributeError(name)
        return getattr(_real(), name)


def _real() -> types.ModuleType:
    if type(sys.modules.get(DEFERRED)) is _Deferred:
        sys.modules.pop(DEFERRED, None)  # pop: another thread may have got here first
    return importlib.import_module(DEFERRED)


def defer_slow_imports() -> bool:
    """Put the stand-in in place; False when the package is absent or already imported."""
    if DEFERRED in sys.modules or importlib.util.find_spec(DEFERRED) is None:
        return False
    stub = _Deferred(DEFERRED, "stand-in: the real module is imported on first use")

    # ``from rfc3987_syntax import is_valid_syntax`` (jsonschema's only use) reads the name at
    # import time, so that name is a function of the stand-in rather than a module attribute
    def is_valid_syntax(term: str, value: str) -> bool:
        try:
            real = _real()
        except ImportError:  # where the real import fails, jsonschema has no "iri" check at all
            return True  # and a format it does not check always conforms
        return real.is_valid_syntax(term, value)

    stub.is_valid_syntax = is_valid_syntax
    sys.modules[DEFERRED] = stub
    return True


def main() -> int:
    defer_slow_imports()
    from nbgrader.apps.nbgraderapp import main as nbgrader_main

    sys.argv[0] = "nbgrader"
    return nbgrader_main()


if __name__ == "__main__":
    sys.exit(main())
