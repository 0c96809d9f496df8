"""The trusted verdict's parts: the plain-data wire (course/grading/wire.py), the channel into a
kernel (course/grading/boundary.py) and the trusted test cells (course/build_lessons.py).

- the wire round-trips generated plain data exactly (type for type, bit for bit) and refuses, as a
  class, everything else: subclasses of builtins and of ndarray, object and structured dtypes,
  foreign objects, over-deep nesting; a corrupted message never raises anything but NotPlainData;
- the channel, against a real kernel: an in-place change fails the call (nothing is written back),
  aliasing kept, the student's exceptions mapped to builtin classes (never SystemExit), lying objects refused, a call past its
  limit reported as a timeout, an unknown function as NameError;
- the channel with torch, against a second kernel: gradients through a call equal those of the same
  computation done here (a live model's included), grad mode crosses, Live objects read, call and
  are freed in the kernel, a graded call never leaves a Live, a Remote argument is the function;
- the verdict process started ahead (``--wait``, as the grader starts it with each kernel): it
  grades only on a request read from stdin, ends quietly without one, and has made the slow
  imports (9.5's transformers) before it is asked;
- the trusted test cells use only names their preamble and the graded functions provide, and the
  source notebooks of these lessons hold no hidden test.
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import random
import re
import subprocess
import sys
import time

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course.build_lessons import LESSONS, graded_functions, trusted_tests
from course.grading import wire
from course.grading.verdict import kernel_names, preamble
from tests.conftest import ROOT

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "<U3", "|S4"]  # fmt: skip


def _arrays():
    return st.sampled_from(DTYPES).flatmap(
        lambda d: hnp.arrays(
            np.dtype(d), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
        )  # fmt: skip
    )


SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20) | st.binary(max_size=20)
    | _arrays().map(lambda a: a.reshape(-1)[0] if a.size else np.float64(0.0))
)  # fmt: skip
PLAIN = st.recursive(
    SCALARS | _arrays(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=3)
    ),
    max_leaves=12,
)


def same(a, b) -> bool:
    """Type for type and bit for bit (NaN equal to NaN, -0.0 unequal to 0.0)."""
    if type(a) is not type(b):
        return False
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is np.ndarray:
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if type(a) is float:
        return a.hex() == b.hex()
    return a == b


@settings(max_examples=300, deadline=None)
@given(PLAIN)
def test_plain_data_round_trips_exactly(value):
    back = wire.loads(wire.dumps(value))
    assert same(back, value), (value, back)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=300),
       st.lists(st.floats() | st.none() | st.integers(), max_size=6))  # fmt: skip
def test_a_list_of_floats_crosses_as_floats_exactly(floats, mixed):
    """A list of floats only (a run's log) crosses as one "floats" node, bit for bit (NaN payload,
    -0.0, inf); a list with anything else in it does not, and comes back the same."""
    for value in (floats, mixed, {"steps": {"reward": floats, "skipped": mixed}}):
        back = wire.loads(wire.dumps(value))
        assert same(back, value), (value, back)
    if len(floats) >= wire.FLOATS_MIN:
        assert wire.encode(floats)["t"] == "floats"
        raw = np.array(floats, dtype="<f8").tobytes()
        assert np.array(wire.loads(wire.dumps(floats)), dtype="<f8").tobytes() == raw
    if any(type(x) is not float for x in mixed):
        assert type(wire.encode(mixed)) is list


class LieFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class LieArray(np.ndarray):
    def __eq__(self, other):
        return True


class Anything:
    def __eq__(self, other):
        return True

    def __float__(self):
        return 0.0

    def __array__(self, *a, **k):
        return np.zeros(3)


def _deep(n):
    v = 1.0
    for _ in range(n):
        v = [v]
    return v


NOT_PLAIN = [
    LieFloat(1.0), np.zeros(3).view(LieArray), Anything(), np.array([Anything()], dtype=object),
    np.zeros(2, dtype=[("a", "f8")]), np.zeros(2, dtype="datetime64[s]"), np.zeros(2, "V8"),
    {1, 2}, frozenset(), (x for x in range(2)), type, len, np.float64, _deep(wire.MAX_DEPTH + 2),
    [1.0, Anything()], {"k": LieFloat(2.0)}, (np.zeros(2), np.zeros(1).view(LieArray)),
    type("S", (str,), {})("s"), type("I", (int,), {})(3), np.matrix([[1.0]]),
]  # fmt: skip


@pytest.mark.parametrize("value", NOT_PLAIN, ids=lambda v: type(v).__name__)
def test_everything_else_is_refused(value):
    with pytest.raises(wire.NotPlainData):
        wire.dumps(value)


def test_a_corrupted_message_raises_only_not_plain_data():
    """Random corruption of valid messages (bytes flipped, cut, JSON fields replaced): loads either
    returns plain data that encodes again, or raises NotPlainData."""
    rng = random.Random(7)
    seeds = [np.arange(6.0).reshape(2, 3), [1, (2.5, "x"), {"a": np.int8(3)}], b"\x00\xff", "é",
             [0.5, -0.0, float("nan"), 1e308]]  # fmt: skip
    trees = [wire.encode(v) for v in seeds]
    bad_specs = ["|O8", ">f8", "V8", "<M8[s]", "<U999999", "f8", "<f8,<i4", 7, None, "<U-1"]
    for _ in range(600):
        tree = json.loads(json.dumps(rng.choice(trees)))
        text = json.dumps(tree)
        kind = rng.randrange(4)
        if kind == 0:
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice('{}[]",:0aZ-') + text[i + 1 :]
        elif kind == 1:
            text = text[: rng.randrange(len(text))]
        elif kind == 2 and isinstance(tree, dict):
            key = rng.choice(list(tree))
            tree[key] = rng.choice([bad_specs[rng.randrange(len(bad_specs))], [-1], [2**40], "AAA"])
            text = json.dumps(tree)
        import base64

        msg = base64.b64encode(text.encode()).decode()
        try:
            out = wire.loads(msg)
        except wire.NotPlainData:
            continue
        wire.dumps(out)  # what came back is plain data
    for junk in ["", "%%%", "A" * 7, 12, None, b"AAAA", "A" * (wire.MAX_TEXT + 4)]:
        with pytest.raises(wire.NotPlainData):
            wire.loads(junk)


# --- the channel, against a real (unsandboxed) kernel --------------------------------------------

KERNEL_CODE = r"""
import numpy as np, time
np.seterr(over="raise")  # the notebook's own errstate: applies unless a test sets one

def overflows():
    return np.float64(1e308) * 10

def huge(n):
    return np.zeros(n)

def stops(x):
    raise StopIteration

class Mine(ValueError):
    pass

def add_one_in_place(a):
    a += 1
    return None

def same_array(a):
    return a

def a_view(a):
    return a[1:]

def a_copy(a):
    return a.copy()

def raises_mine(x):
    raise Mine("my message")

def raises_exit(x):
    raise SystemExit(3)

def lies(x):
    class L(float):
        def __eq__(self, o):
            return True
    return L(1.0)

def slow(x):
    time.sleep(x)
    return x

def echo(*a, **k):
    return a, k

def appends(lst):
    lst.append(99)

def divides(a, b):
    return np.asarray(a) / np.asarray(b)

def warns(x):
    import warnings
    warnings.warn("from the student", RuntimeWarning)
    return x
"""


def _kernel_channel(code: str, timeout: float, early: bool = False, **kw):
    """A real (unsandboxed) kernel that has run ``code``, and a channel into it; ``early``: its
    server installed before ``code`` ran, as the grader does (else after, as ``Channel`` alone)."""
    from jupyter_client.manager import start_new_kernel

    from course.grading.boundary import Channel, install_server

    km, kc = start_new_kernel(kernel_name="python3", **kw)
    try:
        server = install_server(km.connection_file, timeout=60) if early else None
        reply = kc.execute_interactive(code, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        ch = Channel(km.connection_file, timeout=timeout, server=server)
        yield ch
        ch.close()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def channel():
    yield from _kernel_channel(KERNEL_CODE, 20, early=True)  # as the grader installs it


def test_an_in_place_change_fails_the_call_leaves_the_callers_data_and_aliasing_is_kept(channel):
    from course.grading.boundary import InputModified, Remote

    a = np.arange(4.0)
    with pytest.raises(InputModified, match="add_one_in_place changed its argument 0 in place"):
        Remote(channel, "add_one_in_place")(a)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0], "the kernel's change reached the caller's array"
    lst = [1]
    with pytest.raises(InputModified, match="argument 0"):
        Remote(channel, "appends")(lst)
    assert lst == [1]
    b = np.arange(5.0)
    assert Remote(channel, "same_array")(b) is b
    v = Remote(channel, "a_view")(b)
    assert np.shares_memory(v, b) and v.tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="read-only"):  # a view, but not a way into the input
        v[0] = 99.0
    assert b.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    c = Remote(channel, "a_copy")(b)
    assert not np.shares_memory(c, b) and c.tolist() == b.tolist()


STASH_KERNEL = """
_seen = []
def f(x):
    _seen.append(x)
    return "everything I was given: " + repr(_seen)
"""


def test_no_visible_message_quotes_what_a_hidden_test_passed(monkeypatch):
    """A kernel that stashes every argument and answers with the stash (so a failed visible
    assertion would print it): every cell's visible tests run before any hidden test, and after a
    hidden test (or in a later round) no message quotes the kernel."""
    from course.build_lessons import TrustedTest
    from course.grading import verdict

    visible = 'assert f(1.5) == 3.0, f"got {f(1.5)}"'
    cells = {
        "test_a": TrustedTest("test_a", 1, "### BEGIN HIDDEN TESTS\nf(31337.25)", 1),
        "test_b": TrustedTest("test_b", 1, visible + "\n### BEGIN HIDDEN TESTS\nf(2.0)", 2),
        "test_c": TrustedTest("test_c", 1, "f(0.5)\n### BEGIN HIDDEN TESTS\n" + visible, 2),
    }
    monkeypatch.setattr(verdict, "trusted_tests", lambda lesson: cells)
    monkeypatch.setattr(verdict, "graded_functions", lambda lesson: ["f"])
    for ch in _kernel_channel(STASH_KERNEL, 20):
        got = {v.grade_id: v for v in verdict.run_lesson(ch, "9.1")}
        assert not got["test_b"].passed and "got everything I was given" in got["test_b"].message
        assert not got["test_c"].passed and "31337" not in got["test_c"].message
        assert all("31337" not in v.message for v in got.values()), got
        later = {v.grade_id: v for v in verdict.run_lesson(ch, "9.1", hidden_seen=True)}
        assert "everything" not in later["test_b"].message, later["test_b"]
        assert "a visible test failed" in later["test_b"].message


WAIT = [sys.executable, "-m", "course.grading.verdict", "9.1", "--wait"]


@pytest.mark.parametrize("request_line", ["", "not json\n", '{"cells": ["x"]}\n', "[1]\n"])
def test_a_waiting_verdict_without_a_request_ends_quietly(request_line):
    out = subprocess.run(WAIT, input=request_line, capture_output=True, text=True, cwd=ROOT,
                         timeout=120)  # fmt: skip
    assert (out.returncode, out.stdout) == (0, ""), out.stderr[-2000:]


def test_a_waiting_verdict_grades_the_cells_its_request_names(channel):
    cells = list(trusted_tests("9.1"))[:2]
    req = {"connection_file": channel.connection_file, "cells": cells, "timeout": 20}
    out = subprocess.run(WAIT, input=json.dumps(req) + "\n", capture_output=True, text=True,
                         cwd=ROOT, timeout=180)  # fmt: skip
    got = [json.loads(line) for line in out.stdout.splitlines()]
    # this kernel defines none of 9.1's functions: each named cell fails, naming what is missing
    assert [v["grade_id"] for v in got] == cells, (out.stdout, out.stderr[-2000:])
    assert not any(v["passed"] for v in got) and all("NameError" in v["message"] for v in got), got


def test_the_warm_up_makes_the_imports_of_9_5s_tests():
    """After the warm-up, building every stand-in imports no new package and no model family (a
    lazily loaded submodule of a package already imported is cheap and allowed)."""
    prog = (
        "import sys\nfrom course.grading.verdict import warm\nwarm('9.5')\n"
        "before = set(sys.modules)\nfrom helpers import standins as s\ns.tiny_llama(0)\n"
        "s.tiny_trainer(); s.stand_in_trainer(0); s.AbsPosLM(); s.UniformLM(3)\n"
        "new = set(sys.modules) - before\n"
        "tops = {m.split('.')[0] for m in before}\n"
        "print(sorted(m for m in new if m.split('.')[0] not in tops or '.models.' in m))\n"
    )
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, cwd=ROOT,
                         timeout=180)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", f"imported after the warm-up: {out.stdout}"


def test_channel_maps_exceptions_refuses_lies_and_times_out(channel):
    from course.grading.boundary import CallTimeout, NotPlainReturn, Remote, StudentRaised

    with pytest.raises(ValueError, match="my message") as err:
        Remote(channel, "raises_mine")(1)
    assert type(err.value) is ValueError and err.value.course_function == "raises_mine"
    with pytest.raises(StudentRaised):  # never SystemExit in the grader
        Remote(channel, "raises_exit")(1)
    with pytest.raises(NotPlainReturn, match="not plain data"):
        Remote(channel, "lies")(1)
    with pytest.raises(NameError):
        Remote(channel, "no_such_function")(1)
    with pytest.raises(StudentRaised):  # never StopIteration: it would end a test's loop silently
        Remote(channel, "stops")(1)
    with pytest.raises(FloatingPointError):  # the notebook's np.seterr(over="raise")
        Remote(channel, "overflows")()
    with np.errstate(over="ignore"):  # a test's errstate wins
        assert Remote(channel, "overflows")() == np.inf
    with pytest.raises(NotPlainReturn, match="over the size limit"):  # refused, not read
        Remote(channel, "huge")(7_000_000)
    assert Remote(channel, "huge")(3).tolist() == [0.0, 0.0, 0.0], "the channel lost its framing"
    args = (np.float32(1.5), np.array(["ab", "c"]), b"\x00", -0.0, math.nan, 2**70, None)
    got = Remote(channel, "echo")(*args, key=(1, [2.0]))
    assert same(got, (args, {"key": (1, [2.0])}))
    channel.timeout = 1.0
    try:  # the student's warnings meet the test's filters, the test's errstate reaches the kernel
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with pytest.raises(RuntimeWarning, match="from the student"):
                Remote(channel, "warns")(1)
            with pytest.raises(RuntimeWarning):
                Remote(channel, "divides")(np.zeros(2), np.zeros(2))
            with np.errstate(all="ignore"):
                assert np.isnan(Remote(channel, "divides")(np.zeros(2), np.zeros(2))).all()
        with np.errstate(all="raise"), pytest.raises(FloatingPointError):
            Remote(channel, "divides")(np.ones(2), np.zeros(2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert Remote(channel, "warns")(5) == 5
        with pytest.raises(CallTimeout):
            Remote(channel, "slow")(3.0)
    finally:
        channel.timeout = 20


def _forged(replies):
    """A Channel whose kernel is a forger: each call gets the next crafted answer text."""
    from course.grading.boundary import Channel

    ch = object.__new__(Channel)
    ch.calls, ch.timeout, ch.deadline, ch.dropped = 0, 5.0, None, []
    ch.served = 0

    def exchange(request):
        ch.served += 1
        return replies[ch.served - 1]

    ch._exchange = exchange
    return ch


def test_crafted_answers_never_escape_as_anything_but_a_failed_call():
    """Answers a forged kernel server could send (wrong shapes, crafted MRO names and warning
    categories, write-back to positions that do not exist, aliases on a dict, huge warning texts):
    each ends as a value, an Exception or a ChannelError; never SystemExit/KeyboardInterrupt, never
    a write outside the call's arguments, never a flood."""
    import warnings

    from course.grading.boundary import ChannelError, Remote

    env = wire.envelope
    ok = wire.encode
    crafted = [
        "%%%", "", env([]), env(["ok"]), env({"a": 1}), env(["ok", ok(1.0), [], [], "x"]),
        env(["raise", "builtins.SystemExit", "x", [], []]),
        env(["raise", ["builtins.SystemExit", "builtins.BaseException"], "x", [], []]),
        env(["raise", ["builtins.KeyboardInterrupt"], "x", [], []]),
        env(["raise", ["__main__.ValueError", "builtins.Exception"], "x" * 10**6, [], []]),
        env(["raise", ["builtins.UnicodeDecodeError"], "x", [], []]),
        env(["raise", 7, None, [], []]),
        env(["ok", ok({"k": np.zeros(2)}), [[[0], 0, 0, [8], True]], [], []]),
        env(["ok", ok(np.zeros(3)), [[[], 5, 0, [8], False]], [], []]),
        env(["ok", ok(np.zeros(3)), [[[], 0, 10**9, [10**9], False]], [], []]),
        env(["ok", ok(1.0), [], [[["builtins.SystemExit"], "w"]] * 10**4, []]),
        env(["ok", ok(1.0), [], [[["builtins.UserWarning"], "w" * 10**6]], []]),
        env(["ok", ok(1.0), [], [], [[99, wire.dumps(5)], ["zz", wire.dumps(1)], [0, "!!"]]]),
        env(["missing", "x", [], []]), env(["bad", "x" * 10**6, [], []]),
        env(["live", 3, [], []]),  # a graded call never gets a Live
        env(["ok", {"t": "ref", "k": "h", "v": 3}, [], None, [], []]),  # nor a reference
        env(["ok", ok([{i * (2**61 - 1): 0 for i in range(1000)}] * 30), [], None, [], []]),
    ]  # fmt: skip
    ch = _forged(crafted)
    arr = np.arange(3.0)
    outcomes = []
    for _ in crafted:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                outcomes.append(type(Remote(ch, "f")(arr)))
            except (Exception, ChannelError) as err:
                outcomes.append(type(err))
        assert len(caught) <= 50 and all(len(str(w.message)) <= 400 for w in caught)
    assert ch.served == len(crafted), "a crafted answer was never read"
    assert AttributeError not in outcomes, outcomes  # the channel itself broke, not the answer
    assert arr.tolist() == [0.0, 1.0, 2.0], "a forged answer wrote into the caller's argument"
    # forged alias claims (every offset and stride a view of arr with the answer's values can
    # have): the answer may share memory with the input, never write into it
    forged = [
        env(["ok", ok(arr[k:].copy()), [[[], 0, 8 * k, [8], False]], None, [], []])
        for k in range(3)
    ]
    forged += [env(["ok", ok(arr[::-1].copy()), [[[], 0, 16, [-8], False]], None, [], []]),
               env(["ok", ok([arr[1:].copy(), 1]), [[[0], 0, 8, [8], False]], None, [], []])]  # fmt: skip
    ch = _forged(forged)
    for _ in forged:
        got = Remote(ch, "f")(arr)
        view = got[0] if type(got) is list else got
        assert np.shares_memory(view, arr) and not view.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            view[...] = -1.0
    assert arr.tolist() == [0.0, 1.0, 2.0]
    # a forged "I returned the argument itself" hands the test its own input, as `return x` would
    ch = _forged([env(["ok", ok(arr.copy()), [[[], 0, 0, [8], True]], None, [], []])])
    assert Remote(ch, "f")(arr) is arr
    from course.grading.boundary import Live, NotPlainReturn

    assert Live not in outcomes and wire.Ref not in outcomes, outcomes
    assert outcomes[-3:] == [NotPlainReturn] * 3, outcomes[-3:]


# --- the channel with torch: remote autograd, live objects, write-back ---------------------------

# The same source runs in the kernel and here: a gradient through the channel is compared with the
# gradient of the very same computation done here.
TORCH_FUNCS = r"""
import torch

def poly(a, b, c=None):
    out = (a * b).sin() + a ** 2
    return out if c is None else out + c * b

def pieces(a, b):
    return (a * b, {"s": (a ** 3).sum(), "n": 3, "e": b.exp()})

def itself(a):
    return a

def run(model, ids, scale=None):
    logits = model(ids).logits
    return logits if scale is None else logits * scale
"""

TORCH_KERNEL_CODE = r"""
import gc, sys, types, weakref

def detached(a):
    return (a * 2).detach()

def grad_on():
    return torch.is_grad_enabled()

def head(model):
    return lambda ids: model(ids).logits

def pair(model, w):
    return (model, w)  # not plain data: stays in the kernel

def run_pair(p, ids, x):
    model, w = p
    return model(ids).logits * w * x

def bump(t):
    with torch.no_grad():
        t.add_(1)

def shape_of(x):
    if type(x) in (list, tuple):
        return type(x)(shape_of(v) for v in x)
    if type(x) is dict:
        return {k: shape_of(v) for k, v in x.items()}
    return type(x).__name__

def same_object(a, b):
    return a is b

def is_notebook_fn(f, name):
    return f is globals()[name]

def apply(f, x):
    return f(x)

def square(x):
    return x * x

class Thing:
    pass

_refs = []

def make_thing():
    t = Thing()
    _refs.append(weakref.ref(t))
    return t

def alive():
    gc.collect()
    return [r() is not None for r in _refs]

def live_count():
    # the grading server's table of live objects: a closure cell of its serve_one
    found = [f for f in gc.get_objects() if type(f) is types.FunctionType
             and f.__name__ == "serve_one" and "live" in f.__code__.co_freevars]
    assert len(found) == 1, len(found)
    f = found[0]
    return len(f.__closure__[f.__code__.co_freevars.index("live")].cell_contents)

kernel_side = types.ModuleType("kernel_side")
vars(kernel_side).update({k: v for k, v in dict(globals()).items()
                          if callable(v) and not k.startswith("_")})
sys.modules["kernel_side"] = kernel_side
"""


@pytest.fixture(scope="module")
def tch():
    """A second kernel, with torch and the stand-ins, and a channel into it."""
    yield from _kernel_channel(TORCH_FUNCS + TORCH_KERNEL_CODE, 30, cwd=str(ROOT))


def _local():
    ns: dict = {}
    exec(TORCH_FUNCS, ns)
    return ns


def _close(got, want):
    import torch

    assert (got is None) == (want is None), (got, want)
    if want is not None:
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-12)


def _flush(ch):
    """Collect dropped Live objects here and free them in the kernel; its live-table size."""
    import gc

    from course.grading.boundary import Remote

    gc.collect()
    return Remote(ch, "live_count")()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_through_a_call_match_the_local_computation(tch, dtype):
    import torch

    from course.grading.boundary import Remote

    local = _local()
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(3)
    a0, b0, c0 = (torch.randn(5, generator=g, dtype=dt) for _ in range(3))

    def inputs():
        base = a0.clone().requires_grad_(True)
        b = b0.clone().requires_grad_(True)
        return base, b, c0.clone()  # c does not require grad

    def compute(f):
        base, b, c = inputs()
        a = base * 1.5  # a non-leaf input: the gradient reaches its leaf
        y1 = f["poly"](a, b, c=c)
        t, d = f["pieces"](a, b)
        y2 = f["poly"](a, a)  # one tensor passed twice
        same = f["itself"](b)
        loss1 = (y1 * torch.arange(5, dtype=dt)).sum() + (t * d["e"]).sum() + d["s"] * 2
        loss1.backward(retain_graph=True)  # a is shared by both losses
        ((y2**2).sum() + (same * same).sum()).backward()  # a second result: gradients add up
        return (y1, t, d, y2, same), (base.grad, b.grad, c.grad)

    remote = {n: Remote(tch, n) for n in ("poly", "pieces", "itself")}
    (r_out, r_grads), (l_out, l_grads) = compute(remote), compute(local)
    r_y1, r_t, r_d, r_y2, r_same = r_out
    assert r_d["n"] == 3 and type(r_d["n"]) is int
    flat = [(r_y1, l_out[0]), (r_t, l_out[1]), (r_d["s"], l_out[2]["s"])]
    flat += [(r_d["e"], l_out[2]["e"]), (r_y2, l_out[3]), (r_same, l_out[4])]
    for got, want in flat:
        assert got.dtype == dt and got.requires_grad and got.grad_fn is not None
        _close(got.detach(), want.detach())
    for got, want in zip(r_grads, l_grads):
        _close(got, want)
    assert r_grads[0].dtype == dt and r_grads[2] is None


def test_backward_twice_through_one_result_doubles_the_gradient(tch):
    import torch

    from course.grading.boundary import Remote

    a = torch.linspace(-1, 1, 4, dtype=torch.float64, requires_grad=True)
    b = torch.full((4,), 0.5, dtype=torch.float64, requires_grad=True)
    y = Remote(tch, "poly")(a, b)
    y.sum().backward(retain_graph=True)
    once = a.grad.clone(), b.grad.clone()
    y.sum().backward()
    _close(a.grad, 2 * once[0])
    _close(b.grad, 2 * once[1])
    want = torch.autograd.grad(_local()["poly"](a, b).sum(), [a, b])
    _close(once[0], want[0])
    _close(once[1], want[1])


def test_a_detached_answer_has_no_gradient_and_no_grad_reaches_the_kernel(tch):
    import torch

    from course.grading.boundary import KernelModule, Remote

    a = torch.ones(3, requires_grad=True)
    y = Remote(tch, "detached")(a)
    assert not y.requires_grad and y.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError):
        y.sum().backward()
    assert Remote(tch, "grad_on")() is True
    with torch.no_grad():
        assert Remote(tch, "grad_on")() is False
        y = Remote(tch, "poly")(a, a)
        model = KernelModule(tch, "helpers.standins").AbsPosLM()
        logits = Remote(tch, "run")(model, torch.tensor([[1, 2, 3]]))
    with torch.inference_mode():
        assert Remote(tch, "grad_on")() is False
    assert not y.requires_grad and not logits.requires_grad
    calls = model.calls
    assert len(calls) == 1 and calls[0]["grad"] is False
    grads = KernelModule(tch, "helpers.standins").param_grads(model)
    assert grads == {"tok": None, "pos": None}


def test_a_live_model_gets_the_gradients_of_the_local_computation(tch):
    import torch

    from course.grading.boundary import KernelModule, Live, Remote
    from helpers import standins

    sk, kside = KernelModule(tch, "helpers.standins"), KernelModule(tch, "kernel_side")
    ids = torch.tensor([[1, 4, 2, 0], [3, 3, 5, 7]])
    w = torch.linspace(-2, 2, 11)
    model = sk.AbsPosLM()
    assert isinstance(model, Live)
    scale = torch.tensor(1.5, requires_grad=True)
    logits = Remote(tch, "run")(model, ids, scale=scale)
    (logits * w).sum().backward()
    logits2 = kside.head(model)(ids[:1])  # a Live called: its answer carries gradient too
    (logits2**2).mean().backward()
    grads = sk.param_grads(model)

    local, lscale = standins.AbsPosLM(), torch.tensor(1.5, requires_grad=True)
    want = _local()["run"](local, ids, scale=lscale)
    (want * w).sum().backward()
    (local(ids[:1]).logits ** 2).mean().backward()
    _close(logits.detach(), want.detach())
    _close(scale.grad, lscale.grad)
    assert sorted(grads) == ["pos", "tok"]
    for name, g in standins.param_grads(local).items():
        np.testing.assert_allclose(grads[name], g, rtol=1e-6, atol=1e-7)
    assert type(grads["tok"]) is np.ndarray and np.abs(grads["tok"]).sum() > 0


def test_a_module_call_and_a_live_container_carry_gradient(tch):
    import torch

    from course.grading.boundary import KernelModule
    from helpers import standins

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, -1.0], requires_grad=True)
    KernelModule(tch, "torch").mul(a, b).sum().backward()
    assert a.grad.tolist() == [3.0, -1.0] and b.grad.tolist() == [1.0, 2.0]

    # a Live that is a container holding a tensor that requires grad in the kernel: the call's
    # inputs are the test's tensors, not the live object's
    sk, kside = KernelModule(tch, "helpers.standins"), KernelModule(tch, "kernel_side")
    ids = torch.tensor([[2, 1, 0]])
    model = sk.AbsPosLM()
    p = kside.pair(model, torch.tensor(2.0, requires_grad=True))
    x = torch.tensor(0.5, requires_grad=True)
    kside.run_pair(p, ids, x).sum().backward()
    local, lx = standins.AbsPosLM(), torch.tensor(0.5, requires_grad=True)
    (local(ids).logits * 2.0 * lx).sum().backward()
    _close(x.grad, lx.grad)
    for name, g in standins.param_grads(local).items():
        np.testing.assert_allclose(sk.param_grads(model)[name], g, rtol=1e-6)


def test_live_attributes_methods_and_private_names(tch):
    import torch

    from course.grading.boundary import KernelModule, Live, Remote
    from helpers import standins

    sk = KernelModule(tch, "helpers.standins")
    model = sk.AbsPosLM(V=7, L=8, seed=2)
    ids = torch.tensor([[1, 2, 3]])
    Remote(tch, "run")(model, ids)
    calls = model.calls
    assert type(calls) is list and len(calls) == 1 and type(calls[0]) is dict
    assert torch.equal(calls[0]["input_ids"], ids) and calls[0]["position_ids"] is None
    assert calls[0]["grad"] is True and calls[0]["other"] == []
    tok = model.tok  # a snapshot of the kernel's parameter: no graph into the kernel
    local = standins.AbsPosLM(V=7, L=8, seed=2)
    assert torch.equal(tok.detach(), local.tok.detach()) and tok.grad_fn is None
    (tok * 2).sum().backward()
    assert sk.param_grads(model) == {"tok": None, "pos": None}

    trained = model.train()
    assert isinstance(trained, Live) and model.training is True
    assert isinstance(model.eval(), Live) and model.training is False
    assert Remote(tch, "same_object")(model, trained) is True
    assert isinstance(model.forward, Live)
    for name in ("_parameters", "_modules", "_secret", "__wrapped__"):
        with pytest.raises(AttributeError):
            getattr(model, name)
    with pytest.raises(AttributeError):
        _ = sk._private
    with pytest.raises(AttributeError):  # the kernel's AttributeError, as the builtin
        _ = model.no_such_attribute
    assert "kernel" in repr(model)

    box = [model, (model, 1), {"k": model, "t": torch.zeros(1)}]
    want = ["AbsPosLM", ("AbsPosLM", "int"), {"k": "AbsPosLM", "t": "Tensor"}]
    assert Remote(tch, "shape_of")(box) == want
    assert box[0] is model  # the caller's container is not replaced


def test_live_handles_are_freed_in_the_kernel(tch):
    import gc

    from course.grading.boundary import KernelModule, Remote

    kside = KernelModule(tch, "kernel_side")
    n0 = _flush(tch)
    first = len(Remote(tch, "alive")())
    things = [kside.make_thing() for _ in range(3)]
    assert _flush(tch) == n0 + 3
    assert Remote(tch, "alive")()[first:] == [True, True, True]
    del things
    gc.collect()
    assert len(tch.dropped) == 3
    assert Remote(tch, "live_count")() == n0  # freed by the very next call
    assert tch.dropped == []
    assert Remote(tch, "alive")()[first:] == [False, False, False]

    # a call that cannot be sent does not lose the handles it would have carried
    thing = kside.make_thing()
    assert _flush(tch) == n0 + 1
    del thing
    gc.collect()
    with pytest.raises(TypeError, match="cannot cross"):
        Remote(tch, "square")(object())
    assert Remote(tch, "live_count")() == n0


def test_in_place_changes_of_tensors_fail_a_graded_call_and_never_reach_the_caller(tch):
    import torch

    from course.grading.boundary import InputModified, KernelModule, Remote

    t = torch.zeros(3)
    with pytest.raises(InputModified, match="bump changed its argument 0"):
        Remote(tch, "bump")(t)
    assert t.tolist() == [0.0, 0.0, 0.0]
    leaf = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    KernelModule(tch, "kernel_side").bump(t=leaf)  # the course's own code: no error, no write-back
    assert leaf.tolist() == [0.0, 0.0] and leaf.requires_grad and leaf.is_leaf
    untouched = torch.arange(3.0)
    Remote(tch, "square")(untouched)
    assert untouched.tolist() == [0.0, 1.0, 2.0]


def test_a_graded_call_never_makes_a_live_and_a_remote_arrives_as_the_function(tch):
    import torch

    from course.grading.boundary import KernelModule, NotPlainReturn, Remote

    n0 = _flush(tch)
    first = len(Remote(tch, "alive")())
    with pytest.raises(NotPlainReturn):
        Remote(tch, "make_thing")()
    with pytest.raises(NotPlainReturn):
        Remote(tch, "pair")(Remote(tch, "square"), 2.0)  # a tuple holding a function
    assert Remote(tch, "live_count")() == n0
    assert Remote(tch, "alive")()[first:] == [False]

    assert Remote(tch, "is_notebook_fn")(Remote(tch, "square"), "square") is True
    assert Remote(tch, "apply")(Remote(tch, "square"), 3.0) == 9.0
    x = torch.tensor([2.0, -1.0], requires_grad=True)
    y = KernelModule(tch, "kernel_side").apply(Remote(tch, "square"), x)
    y.sum().backward()
    assert y.tolist() == [4.0, 1.0] and x.grad.tolist() == [4.0, -2.0]
    # a function the notebook does not define, passed by name: the error names it, not the call
    with pytest.raises(NameError, match="defines no function 'no_such_function'"):
        Remote(tch, "apply")(Remote(tch, "no_such_function"), 1.0)
    with pytest.raises(NameError, match="defines no function 'no_such_function'"):
        KernelModule(tch, "kernel_side").apply(Remote(tch, "no_such_function"), 1.0)
    assert Remote(tch, "square")(4) == 16, "the channel kept serving"


# --- the trusted test cells ----------------------------------------------------------------------


def _free_names(code: str) -> set[str]:
    tree = ast.parse(code)
    assigned, used = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (assigned if isinstance(n.ctx, (ast.Store, ast.Del)) else used).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            assigned.add(n.name)
        elif isinstance(n, ast.arg):
            assigned.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            assigned |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            assigned.add(n.name)
    return used - assigned - set(dir(builtins))


@pytest.mark.parametrize("lesson", LESSONS)
def test_trusted_tests_need_only_their_preamble_and_the_graded_functions(lesson):
    given_names = _free_names(preamble(lesson)) | set(graded_functions(lesson))
    given_names |= set(kernel_names(lesson))  # called in the kernel (helpers/standins.py)
    ns: dict = {}
    exec(preamble(lesson), ns)
    given_names |= set(ns)
    for gid, test in trusted_tests(lesson).items():
        missing = _free_names(test.code) - given_names
        assert not missing, f"{lesson} {gid} uses names the grader does not provide: {missing}"
        assert test.hidden_line > 0, f"{lesson} {gid} has no hidden tests"


@pytest.mark.parametrize("lesson", LESSONS)
def test_source_notebook_and_release_of_a_trusted_lesson_hold_no_hidden_test(lesson):
    """The hidden part's own lines (those the lesson source has nowhere else) are in neither."""
    source = (ROOT / "course" / "lessons" / lesson / "lesson.py").read_text()
    outside = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", source, flags=re.S)
    for nb in ("source_notebooks", "release"):
        text = "\n".join(
            c.source for c in nbformat.read(ROOT / nb / lesson / f"{lesson}.ipynb", 4).cells
        )
        assert "BEGIN HIDDEN TESTS" not in text and "_ref_" not in text, nb
        for test in trusted_tests(lesson).values():
            hidden = test.code.splitlines()[test.hidden_line :]
            own = [
                ln.strip() for ln in hidden if len(ln.strip()) >= 30 and ln.strip() not in outside
            ]
            assert own, f"{test.grade_id}: the hidden part should hold lines of its own"
            leaked = [ln for ln in own if ln in text]
            assert not leaked, f"{nb}/{lesson} holds hidden lines: {leaked[:2]}"


def test_the_threat_model_quotes_the_channels_limits():
    """INSTRUCTOR.md's numbers for the channel are the code's: dict caps, key tuples, graphs kept."""

    from course.grading.boundary import SERVER

    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    graphs = int(re.search(r"len\(graphs\) > (\d+)", SERVER).group(1))
    assert f"the last {graphs:,} gradient graphs are kept" in text
    assert (
        f"capped at {wire.MAX_DICT:,} entries each and {wire.MAX_DICT_ENTRIES:,} per answer" in text
    )
    assert f"tuples of at most {wire.MAX_KEY_TUPLE} scalars" in text


def test_the_threat_model_quotes_the_sandboxs_limits():
    """INSTRUCTOR.md's numbers for the sandbox's limits are ``sandbox.Limits``'s defaults."""
    from course.grading.sandbox import Limits

    text = " ".join((ROOT / "course" / "docs" / "INSTRUCTOR.md").read_text().split())
    lim = Limits()
    for quoted in (f"`memory_mb` = {lim.memory_mb}", f"`max_processes` = {lim.processes}",
                   f"`file_mb` = {lim.file_mb}", f"`workdir_mb` = {lim.workdir_mb}",
                   f"`tmp_mb` = {lim.tmp_mb}", f"`/dev/shm` is {lim.shm_mb} MiB",
                   f"the ipc folder {lim.ipc_kb} KiB", f"tmpfs of its own ({lim.ipc_kb} KiB)"):  # fmt: skip
        assert quoted in text, quoted


THREADLESS = """
import _socket, _struct, _thread, os, socket, struct, threading
def _refuse(*a, **k):
    raise RuntimeError("can't start new thread")
_thread.start_new_thread = _refuse
threading._start_new_thread = _refuse
threading.Thread.start = lambda self: _refuse()
socket.setdefaulttimeout(0.5)  # every socket made from now on times out after half a second
# every public name of the modules the server's thread uses, gone (the class, not one spelling)
for _m in (socket, _socket, struct, _struct):
    for _name in [n for n in dir(_m) if not n.startswith("__")]:
        try:
            setattr(_m, _name, None)
        except (AttributeError, TypeError):
            pass
os.unlink = os.close = None
def f(x):
    return x + 1
"""


def test_a_server_installed_before_the_notebook_serves_a_kernel_that_cannot_start_threads():
    """The class of notebooks that leave their kernel unable to start a thread (memory used up,
    the thread budget spent, threading replaced): the grader installs the server as soon as the
    kernel starts (``install_server``), so its thread exists before the notebook runs and the
    functions are still graded; installing after the notebook (no ``server``) fails closed."""
    from jupyter_client.manager import start_new_kernel

    from course.grading.boundary import Channel, ChannelError, Remote, install_server

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        server = install_server(km.connection_file, timeout=60)
        reply = kc.execute_interactive(THREADLESS, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        with pytest.raises(ChannelError, match="could not be installed"):
            Channel(km.connection_file, timeout=20)  # a late install: no socket type, no thread
        name = server.rsplit("/", 1)[1]
        wrong = [server.replace(name, "other-" + name[7:]), "/var/" + name, server + "x"]
        for path in wrong:
            with pytest.raises(ChannelError, match="not a grading server"):
                Channel(km.connection_file, timeout=20, server=path)
        ch = Channel(km.connection_file, timeout=20, server=server)
        assert Remote(ch, "f")(41) == 42
        time.sleep(1.5)  # longer than the notebook's default socket timeout: the server waits
        assert Remote(ch, "f")(1) == 2
        ch.close()
        with pytest.raises(ChannelError, match="could not be reached"):
            Channel(km.connection_file, timeout=20, server=server)  # one connection per server
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.parametrize("wait", [True, False])
def test_the_verdict_process_runs_its_numerics_on_one_thread(wait):
    """verdict.main sets one torch thread, for torch imported by ``warm`` (``--wait``) and for torch
    imported later by a test's preamble (the direct form), on a machine where torch would take more
    (a second thread only spins while the kernel works: verdict.one_thread)."""
    prog = (
        "import sys, torch\n"
        "torch.set_num_threads(2)\n"
        "from course.grading import verdict\n"
        # --wait: warm imports torch (9.5), then the empty request ends it; direct: a missing
        # connection file ends it after one_thread, before any test
        f"verdict.main({['9.5', '--wait'] if wait else ['9.5', '/nonexistent.json']!r})\n"
        "print('THREADS', torch.get_num_threads(), file=sys.stderr)\n"
    )
    if not wait:  # torch imported after main's call, as a test's preamble would
        prog = prog.replace("import sys, torch\ntorch.set_num_threads(2)\n", "import sys\n")
        prog = prog.replace("print('THREADS'", "import torch\nprint('THREADS'")
    out = subprocess.run([sys.executable, "-c", prog], input="", capture_output=True, text=True,
                         cwd=ROOT, timeout=180, env={**__import__("os").environ,
                                                      "OMP_NUM_THREADS": "2"})  # fmt: skip
    assert re.search(r"^THREADS 1$", out.stderr, re.M), out.stderr[-2000:]


def test_the_verdict_process_grades_through_the_server_its_request_names():
    """GuardedExecute installs the server before the notebook and names it in the verdict request:
    the verdict uses that one (this kernel can no longer start the thread a late install needs)."""
    from jupyter_client.manager import start_new_kernel

    from course.grading.boundary import install_server

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        server = install_server(km.connection_file, timeout=60)
        assert kc.execute_interactive(THREADLESS, timeout=120)["content"]["status"] == "ok"
        cells = list(trusted_tests("9.1"))[:1]
        req = {"connection_file": km.connection_file, "cells": cells, "timeout": 20}
        for extra, graded in (({"server": server}, True), ({}, False)):
            out = subprocess.run(WAIT, input=json.dumps(req | extra) + "\n", capture_output=True,
                                 text=True, cwd=ROOT, timeout=180)  # fmt: skip
            got = [json.loads(line) for line in out.stdout.splitlines()]
            if graded:  # 9.1's functions are not defined here: graded, and failed by NameError
                assert [v.get("grade_id") for v in got] == cells, (got, out.stderr[-2000:])
                assert "NameError" in got[0]["message"], got
            else:  # a late install needs a socket and a thread: no verdict, the error says why
                assert len(got) == 1 and "could not be installed" in got[0].get("error", ""), got
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_late_install_keeps_the_notebooks_errstate():
    """Without an early server (``Channel`` alone), the server installed after the notebook ran
    takes the notebook's np.seterr as it was then."""
    from course.grading.boundary import Remote

    for ch in _kernel_channel(KERNEL_CODE, 20, early=False):
        with pytest.raises(FloatingPointError):
            Remote(ch, "overflows")()
        with np.errstate(over="ignore"):
            assert Remote(ch, "overflows")() == np.inf


def test_a_server_that_accepts_and_never_answers_fails_at_once(tmp_path, monkeypatch):
    """A notebook that breaks the server after it was installed (its thread stuck, its socket
    held): the channel's first exchange (a ping) fails within its own short limit, so the cell
    is failed closed at once rather than at each call's time limit, kernel after kernel."""
    import secrets
    import socket

    from course.grading import boundary
    from course.grading.boundary import Channel, ChannelError

    conn_file = tmp_path / "kernel.json"  # no kernel behind it: the errstate request times out
    conn_file.write_text(json.dumps({"transport": "ipc", "ip": str(tmp_path / "k"),
                                     "shell_port": 1, "key": "", "signature_scheme": "hmac-sha256"}))  # fmt: skip
    path = str(tmp_path / f"course-{secrets.token_hex(6)}.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    try:
        monkeypatch.setattr(boundary, "PING_S", 1.0)
        t0 = time.monotonic()
        with pytest.raises(ChannelError, match="does not answer"):
            Channel(str(conn_file), timeout=120, server=path)
        assert time.monotonic() - t0 < 10  # the ping's limit and the errstate's, not the call's
    finally:
        srv.close()
