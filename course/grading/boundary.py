"""The trusted side's channel into a student's kernel: call a function the notebook defined, with
plain data in and plain data out (course/grading/wire.py).

The kernel receives the function's name and its arguments, nothing else: no test source, no
reference, no expected value. A small server (``SERVER``, readable by anyone, secret from no one)
is installed in the kernel by one ``execute_request``; it listens on a Unix socket beside the
kernel's connection file (the sandbox's ipc folder) in a thread of the kernel, and each call is one
length-prefixed request and answer of wire text on it. What the kernel returns is only ever the
student's answer: forging the server, its socket or the kernel's messages changes nothing but that
answer, and the verdict is decided here.

The server also reports, per call, the arguments the function changed in place and the returned
arrays that share memory with an argument (returned here as views of the caller's argument, so
``np.shares_memory`` keeps its meaning). Nothing the kernel sends is written into the caller's
objects: every lesson's contract says the inputs are not modified, so a graded function that
changed one fails its call with ``InputModified`` (naming the argument), and the test's own data
stay as the test made them (a kernel that zeroed a mask could otherwise corrupt the reference's
inputs later in the same test). Output the function prints during a call goes
to no notebook: the grader does not listen to the kernel's iopub channel.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import secrets
import socket
import struct
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from course.grading import wire
from course.grading.sandbox import open_socket

WIRE_SOURCE = Path(wire.__file__).read_text()
NUMPY_DEFAULT_ERR = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}

# Installed in the kernel (__WIRE__ and __SOCK__ are replaced). It keeps no reference to the grader.
SERVER = r"""
def _course_server_factory(wire_source):
    import sys, types
    import numpy as np
    from IPython import get_ipython
    wire = types.ModuleType("course_wire")
    exec(compile(wire_source, "<course wire>", "exec"), wire.__dict__)
    shell = get_ipython()
    errstate_at_install = np.geterr()
    modes = ("ignore", "warn", "raise", "call", "print", "log")

    def notebook_errstate():
        # the notebook's own np.seterr, unless a test sets one: read in the kernel's main thread
        # once the notebook has run (``ERRSTATE``, sent by the grader), else as it was here
        st = shell.user_ns.get("__course_errstate__")
        if (type(st) is dict and set(st) == set(errstate_at_install)
                and all(type(v) is str and v in modes for v in st.values())):
            return dict(st)
        return errstate_at_install

    def aliases(result, args):
        found = []
        leaves = [((), result)] if type(result) is np.ndarray else []
        if type(result) in (tuple, list):
            leaves += [((k,), x) for k, x in enumerate(result) if type(x) is np.ndarray]
        for path, x in leaves:
            for i, a in enumerate(args):
                if type(a) is np.ndarray and a.size and x.size and np.shares_memory(x, a):
                    off = x.__array_interface__["data"][0] - a.__array_interface__["data"][0]
                    found.append([list(path), i, int(off), list(x.strides), x is a])
                    break
        return found

    import warnings

    class Missing(Exception):  # a function named by the trusted side that the notebook lacks
        pass

    def serve(text):
        try:
            return serve_one(text)
        except Missing as err:
            return wire.envelope(["missing", str(err.args[0]), [], []])
        except BaseException as err:  # a request this kernel cannot serve: say so, keep serving
            return wire.envelope(["bad", f"the call could not be served ({type(err).__name__})",
                                  [], []])

    def qualnames(cls):
        return [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__]

    live = {}  # handle -> an object the trusted side addresses (a stand-in model, a trainer)
    graphs = {}  # graph id -> (inputs, outputs) of the last calls whose answer carries gradient
    ids = [0]

    def resolve(x, depth=0):
        # Ref("h", n) -> live object n; Ref("f", name) -> the notebook's function of that name
        if type(x) is wire.Ref:
            if x.kind == "h":
                if x.key not in live:
                    raise LookupError(f"no live object {x.key}")
                return live[x.key]
            fn = shell.user_ns.get(x.key)
            if not callable(fn):
                raise Missing(x.key)
            return fn
        if depth < 24 and type(x) in (list, tuple, dict):
            items = x.items() if type(x) is dict else enumerate(x)
            if any(type(v) in (wire.Ref, list, tuple, dict) for _, v in items):
                if type(x) is dict:
                    return {k: resolve(v, depth + 1) for k, v in x.items()}
                return type(x)(resolve(v, depth + 1) for v in x)
        return x

    def snapshot(a):
        # an argument's values, dtype and shape: a tensor's requires-grad flag is not part of it
        # (x.detach_() on an argument changes no value the caller holds)
        if wire.is_tensor(a):
            a = a.detach()
        return wire.dumps(a)

    def new_id():
        ids[0] += 1
        return ids[0]

    def grad_mode(req):
        torch = sys.modules.get("torch")
        if torch is None or type(req.get("g")) is not bool:
            import contextlib
            return contextlib.nullcontext()
        return torch.set_grad_enabled(req["g"])

    def vjp(req):
        # backward through the graph of an earlier answer: grads of its outputs in, grads of the
        # call's inputs out; gradients also accumulate in the kernel's own leaves (a live model's
        # parameters), as backward() does
        import torch
        ins, outs = graphs[req["id"]]
        grads = req["a"]
        if type(grads) is not list or len(grads) != len(outs):
            raise ValueError("one gradient per output")
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        for o, g in pairs:
            if type(g) is not torch.Tensor or g.shape != o.shape:
                raise ValueError("a gradient of the wrong shape")
        before = [None if x.grad is None else x.grad.clone() for x in ins]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs], [g.to(o.dtype) for o, g in pairs],
                                    retain_graph=True)
        res = []
        for x, b in zip(ins, before):
            res.append(None if x.grad is None else (x.grad.clone() if b is None else x.grad - b))
        return res

    def serve_one(text):
        req = wire.loads(text)
        for hid in req.get("x") or []:  # handles the trusted side no longer holds
            live.pop(hid, None)
        op = req.get("op", "call")
        if op == "ping":  # the grader asks whether this server is alive before its first call
            return wire.envelope(["ok", wire.encode(None), [], None, [], []])
        graded = op == "call"  # the student's graded function: its answer must be plain data
        if op == "call":
            fn = shell.user_ns.get(req["f"])
            if not callable(fn):
                return wire.envelope(["missing", req["f"], [], []])
        elif op == "mod":
            import importlib
            fn = getattr(importlib.import_module(req["m"]), req["f"])
        elif op in ("live", "attr"):
            fn = resolve(wire.Ref("h", req["h"]))
        elif op == "vjp":
            fn = None
        else:
            raise ValueError(f"unknown operation {op!r}")
        args, kwargs = list(req.get("a", [])), dict(req.get("k", {}))
        # the tensors the caller sent, in its order (not those inside a live object it names)
        ins = wire.grad_leaves([args, kwargs])
        args, kwargs = resolve(args), resolve(kwargs)
        slots = [*enumerate(args), *kwargs.items()]
        before = {}
        for k, a in slots:
            if type(a) in (np.ndarray, list, dict) or wire.is_tensor(a):
                try:
                    before[k] = snapshot(a)
                except Exception:
                    pass
        err_state = req["e"] if req.get("e") is not None else notebook_errstate()
        with warnings.catch_warnings(record=True) as caught, np.errstate(**err_state), grad_mode(req):
            warnings.simplefilter("always")  # the caller's filters decide, on its side
            try:
                if op == "vjp":
                    result = vjp(req)
                elif op == "attr":
                    result = getattr(fn, req["n"])
                else:
                    result = fn(*args, **kwargs)
            except BaseException as err:
                reply = ["raise", qualnames(type(err)), str(err)[:400]]
            else:
                try:
                    # an attribute read is a snapshot: no graph (a live model's gradients are
                    # read with a helper, e.g. helpers.standins.param_grads)
                    outs = wire.grad_leaves(result) if op in ("call", "mod", "live") else []
                    reply = ["ok", wire.encode(result), aliases(result, args), None]
                    if outs:
                        gid = new_id()
                        graphs[gid] = (ins, outs)
                        while len(graphs) > 1024:
                            graphs.pop(next(iter(graphs)))
                        reply[3] = gid
                except Exception as err:
                    if graded or len(live) >= 10000:
                        reply = ["bad", str(err)[:400]]
                    else:  # a live object (a model, a trainer, a method): it stays here
                        hid = new_id()
                        live[hid] = result
                        reply = ["live", hid]
        seen, warned = set(), []
        for w in caught:
            key = (w.category, str(w.message)[:400])
            if key not in seen and len(warned) < 50:
                seen.add(key)
                warned.append([qualnames(w.category), key[1]])
        changed = []
        for k, a in slots:
            if k in before:
                try:
                    now = snapshot(a)
                except Exception:  # plain when it came, not plain now: the function changed it
                    now = None
                if now != before[k]:
                    changed.append([k, ""])  # which argument changed (its value stays here)
        return wire.envelope([*reply, warned, changed])

    serve.limit = wire.MAX_TEXT
    serve.over = lambda n: wire.envelope(["bad", f"an answer of {n} bytes is over the size limit",
                                          [], []])  # fmt: skip
    return serve


def _course_listen(serve, path, limit, over):
    # One connection, length-prefixed messages: far cheaper per call than an execute_request.
    # Installed before the notebook runs: everything the thread uses is taken now (the C socket
    # type, struct's and os's functions), so a notebook that replaces a module's names later
    # (socket.socket = None) does not stop it; whatever does stop it closes the connection, so
    # the grader is told at once instead of waiting for an answer.
    import _socket, os, struct, threading
    sock, unlink, close_fd = _socket.socket, os.unlink, os.close
    pack, unpack = struct.pack, struct.unpack
    unix, stream = _socket.AF_UNIX, _socket.SOCK_STREAM
    srv = sock(unix, stream)
    srv.bind(path)
    srv.listen(1)

    def recv(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(min(n - len(data), 1 << 20))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def loop():
        conn = fd = None
        try:
            fd, _ = srv._accept()
            srv.close()
            try:
                unlink(path)
            except OSError:
                pass
            conn = sock(unix, stream, 0, fd)
            fd = None
            conn.settimeout(None)  # not the notebook's socket.setdefaulttimeout: the grader may pause
            while True:
                (n,) = unpack("!Q", recv(conn, 8))
                reply = serve(recv(conn, n).decode("ascii")).encode("ascii")
                if len(reply) > limit:  # an answer the grader would refuse unread: say so
                    reply = over(len(reply)).encode("ascii")
                conn.sendall(pack("!Q", len(reply)) + reply)
        except BaseException:
            for close in (srv.close, getattr(conn, "close", None),
                          None if fd is None else (lambda: close_fd(fd))):
                try:
                    close()
                except BaseException:
                    pass

    try:
        threading.Thread(target=loop, name="course-grading-channel", daemon=True).start()
    except BaseException:  # no thread (a late install in a kernel that cannot start one): no socket
        srv.close()
        try:
            unlink(path)
        except OSError:
            pass
        raise


import sys as _course_sys
_course_serve = _course_server_factory(__WIRE__)
_course_listen(_course_serve, __SOCK__, _course_serve.limit, _course_serve.over)
del _course_server_factory, _course_listen, _course_serve, _course_sys
"""


# Sent by the grader once the notebook has run (a silent execute_request in the kernel's main
# thread, where the notebook's np.seterr lives): the server installed at the kernel's start uses it
# for calls whose test sets no errstate of its own.
ERRSTATE = "import numpy as _course_np\n__course_errstate__ = _course_np.geterr()\ndel _course_np\n"


PING_S = 30.0  # how long the grader waits for a server's first answer (and for ERRSTATE)


class ChannelError(BaseException):
    """The channel could not get an answer (no kernel, a timeout, a reply that is not wire text).

    A BaseException, so that a test's ``except Exception`` or ``except ValueError`` never swallows
    it: the test fails, with this message."""


class CallTimeout(ChannelError):
    """A call ran past its time limit: the kernel is busy and must be replaced."""

    public = "a call ran past the time limit"


class ChannelBroken(ChannelError):
    """The kernel closed the channel (it died during a call): the kernel must be replaced."""

    public = "the kernel died during a call"


class NotPlainReturn(ChannelError):
    """The student's function returned something that is not plain data (or an answer that could
    not be read). ``public`` is what a hidden test may say: no text the kernel sent."""

    public = "the function returned a value that is not plain data"


class InputModified(NotPlainReturn):
    """A graded function changed one of its arguments in place (every lesson's contract says the
    inputs are not modified); the caller's object is left as it was."""

    public = "the function changed one of its arguments in place"


class StudentRaised(Exception):
    """Stands for an exception of the student's that has no builtin class to raise here."""


def _builtin(names, base: type) -> type | None:
    """The first class of a student's MRO (a list of "module.qualname") that is a builtin subclass
    of ``base``; a student's own class named ``ValueError`` is not the builtin one."""
    for n in names if type(names) is list else []:
        if type(n) is str and n.startswith("builtins."):
            cls = getattr(builtins, n.removeprefix("builtins."), None)
            if cls in (StopIteration, StopAsyncIteration):  # would end a test's loop silently
                return None
            if isinstance(cls, type) and issubclass(cls, base):
                return cls
    return None


def _student_exception(names: list, message: str) -> BaseException:
    """An exception to raise on the trusted side for one the student's function raised: the first
    builtin class in its MRO (so ``except ValueError`` catches a subclass of ValueError), never one
    that would stop the grader (SystemExit, KeyboardInterrupt: those become StudentRaised)."""
    cls = _builtin(names, Exception)
    err: BaseException
    try:
        err = cls(message) if cls is not None else StudentRaised(message)
    except Exception:  # a builtin that needs other arguments (UnicodeDecodeError, ...)
        err = StudentRaised(message)
    err.course_student = True  # raised by the student's code, not by a test
    return err


def _view_of(arg, shape, dtype, offset: int, strides, same: bool):
    """A view of the caller's array ``arg`` matching a returned array that shared memory with the
    kernel's copy of it (which is C-contiguous): the same object when the kernel returned the
    argument itself. None when no such view can be made (then the returned copy is used)."""
    if same and arg.shape == tuple(shape) and arg.dtype == dtype:
        return arg
    if not (arg.flags.c_contiguous and arg.dtype == dtype):
        return None
    try:
        return np.ndarray(tuple(shape), dtype, buffer=arg, offset=offset, strides=tuple(strides))
    except (TypeError, ValueError):
        return None


def _grad_enabled() -> bool | None:
    """The caller's grad mode (None without torch): a call made under ``torch.no_grad()`` here
    runs under it in the kernel."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


# types with nothing inside to replace
_LEAVES = frozenset({float, int, str, bool, bytes, type(None), np.ndarray})


def _to_wire(obj, depth: int = 0):
    """``obj`` with every ``Live`` and ``Remote`` in it replaced by its ``wire.Ref`` (containers
    without one are kept as they are)."""
    if isinstance(obj, Live):
        return wire.Ref("h", obj._handle)
    if isinstance(obj, Remote):
        return wire.Ref("f", obj.__name__)
    if depth < wire.MAX_DEPTH and type(obj) in (list, tuple, dict):
        items = list(obj.values()) if type(obj) is dict else list(obj)
        new = [v if type(v) in _LEAVES else _to_wire(v, depth + 1) for v in items]
        if any(n is not v for n, v in zip(new, items)):
            return dict(zip(obj, new)) if type(obj) is dict else type(obj)(new)
    return obj


def _replace_grad_leaves(value, fresh: list, depth: int = 0):
    """``value`` with its tensors that require grad replaced, in ``wire.grad_leaves`` order."""
    if wire.is_tensor(value):
        return fresh.pop(0) if value.requires_grad else value
    if depth <= wire.MAX_DEPTH and type(value) in (list, tuple):
        return type(value)(_replace_grad_leaves(v, fresh, depth + 1) for v in value)
    if depth <= wire.MAX_DEPTH and type(value) is dict:
        return {k: _replace_grad_leaves(v, fresh, depth + 1) for k, v in value.items()}
    return value


def _remote_graph(channel, graph: int, value, inputs: list):
    """``value`` with its tensors that require grad made outputs of one autograd node here whose
    backward asks the kernel for the vector-Jacobian product (``Channel.vjp``): ``loss.backward()``
    in a test fills the ``.grad`` of the test's own input tensors, and of a live model's
    parameters in the kernel, as it would if the function had run here."""
    import torch

    outs = wire.grad_leaves(value)
    if not outs:
        return value

    class RemoteGraph(torch.autograd.Function):
        @staticmethod
        def forward(ctx, anchor, *tensors):
            return tuple(t.detach().clone() for t in tensors[len(inputs) :])

        @staticmethod
        def backward(ctx, *grads):
            got = channel.vjp(graph, [None if g is None else g.detach() for g in grads])
            if len(got) != len(inputs):
                raise NotPlainReturn("the kernel's backward answered for other inputs")
            back = []
            for x, g in zip(inputs, got):
                if g is not None and not (wire.is_tensor(g) and g.shape == x.shape):
                    raise NotPlainReturn("the kernel's backward gave a gradient of another shape")
                back.append(None if g is None else g.to(x.dtype))
            return (None, *back, *[None] * len(outs))

    # the anchor makes the outputs require grad even when no input here does (a live model's
    # parameters are the kernel's)
    anchor = torch.zeros((), requires_grad=True)
    fresh = list(RemoteGraph.apply(anchor, *inputs, *[o.detach() for o in outs]))
    return _replace_grad_leaves(value, fresh)


SOCKET_NAME = re.compile(r"course-[0-9a-f]{12}\.sock")


def _sandbox_root(connection_file: str) -> str:
    """``course_sandbox_root`` of a connection file ("" outside a sandbox), checked to be one."""
    with open(connection_file) as f:
        root = json.load(f).get("course_sandbox_root") or ""
    if type(root) is not str or (root and not re.fullmatch(r"/proc/\d+/root", root)):
        raise ChannelError(f"a connection file with a sandbox root that is not one: {root!r}")
    return root


def _execute_silent(connection_file: str, code: str, timeout: float) -> dict:
    """Run ``code`` in the kernel's main thread (one silent ``execute_request`` on the shell
    channel, nothing stored in its history); the reply's content. CallTimeout past ``timeout``."""
    import zmq
    from jupyter_client import BlockingKernelClient

    kc = BlockingKernelClient(connection_file=str(connection_file))
    kc.load_connection_file()
    # a reply larger than this is dropped by ZeroMQ before it is parsed (bounded memory); set
    # on the context, before the channel's socket exists (after connecting it does nothing)
    kc.context.setsockopt(zmq.MAXMSGSIZE, 2 * wire.MAX_TEXT)
    kc.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
    try:
        msg_id = kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise CallTimeout(f"the kernel did not answer within {timeout:.0f} s")
            try:
                msg = kc.get_shell_msg(timeout=left)
            except Exception:  # queue.Empty, or a message that failed to deserialise
                continue
            parent = msg.get("parent_header") if isinstance(msg, dict) else None
            if isinstance(parent, dict) and parent.get("msg_id") == msg_id:
                content = msg.get("content")
                return content if isinstance(content, dict) else {}
    finally:
        # every call goes through the socket from here on; on a failure, nothing may stay
        # queued on the client's ZeroMQ context (collecting it would block in term())
        kc.stop_channels()
        kc.context.destroy(linger=0)


def install_server(connection_file: str, timeout: float = 120.0) -> str:
    """Install ``SERVER`` in the kernel of ``connection_file``; return the path of its socket,
    beside the connection file (in the folder the kernel binds its own sockets in). The grader
    calls it as soon as a kernel has started, before the notebook runs, so the server's thread
    exists before the student's code can use up the kernel's memory or threads (a kernel that did
    can no longer start one); ``Channel`` installs it itself when it is given no path."""
    _sandbox_root(connection_file)
    path = os.path.join(os.path.dirname(os.path.abspath(connection_file)),
                        f"course-{secrets.token_hex(6)}.sock")  # fmt: skip
    code = SERVER.replace("__WIRE__", repr(WIRE_SOURCE)).replace("__SOCK__", repr(path))
    reply = _execute_silent(connection_file, code, timeout)
    if reply.get("status") != "ok":
        raise ChannelError("the grading channel could not be installed in the kernel "
                           f"({reply.get('ename')}: {reply.get('evalue')})")  # fmt: skip
    return path


class Channel:
    """One kernel's grading server (``SERVER``), reached through its socket.

    ``server`` is the socket path ``install_server`` returned for this kernel; without it the
    server is installed now (in a kernel whose notebook has already run)."""

    def __init__(self, connection_file: str, timeout: float = 120.0, server: str | None = None):
        self.timeout = timeout
        self.deadline: float | None = None  # a wall-clock limit for a group of calls (one cell)
        self.calls = 0
        self.dropped: list[int] = []  # handles of Live objects collected here: freed in the kernel
        self.connection_file = str(connection_file)
        root = _sandbox_root(connection_file)
        if server is None:
            server = install_server(connection_file, timeout)
        elif (os.path.dirname(server) != os.path.dirname(os.path.abspath(connection_file))
              or not SOCKET_NAME.fullmatch(os.path.basename(server))):  # fmt: skip
            raise ChannelError(f"not a grading server's socket of this kernel: {server!r}")
        else:
            try:  # the notebook's np.seterr, read where it lives; without it, numpy's defaults
                _execute_silent(connection_file, ERRSTATE, min(timeout, PING_S))
            except ChannelError:
                pass
        self._connect(root, server)
        self._ping(min(timeout, PING_S))

    def _ping(self, limit: float) -> None:
        """A server that accepted the connection but no longer answers (the notebook broke it
        after it was installed) fails here, at once, not at the first call's time limit."""
        self.deadline = time.monotonic() + limit
        try:
            kind, reply = self._answer(wire.dumps({"op": "ping"}), "the grading server", (), {})
        except ChannelError as err:
            self.sock.close()
            raise ChannelError(
                f"the grading server in the kernel does not answer ({err})"
            ) from None
        finally:
            self.deadline = None
        if kind != "ok":
            self.sock.close()
            raise ChannelError("the grading server in the kernel does not answer as one")

    def _connect(self, root: str, path: str) -> None:
        # From a sandbox (course/grading/sandbox.py) the server's folder is reached from here
        # through the sandbox's root, ``course_sandbox_root`` in the connection file.
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = None
        try:
            self.sock.settimeout(10)
            if root:  # never by name: the kernel may have put a link there (sandbox.open_socket)
                fd = open_socket(root, path)
                self.sock.connect(f"/proc/self/fd/{fd}")
            else:
                self.sock.connect(path)
        except OSError as err:
            self.sock.close()
            raise ChannelError(f"the grading channel could not be reached ({err})") from None
        finally:
            if fd is not None:
                os.close(fd)

    def close(self) -> None:
        self.sock.close()

    def _recv(self, n: int, end: float) -> bytes:
        data = bytearray()
        while len(data) < n:
            left = end - time.monotonic()
            if left <= 0:
                raise CallTimeout("no answer within the time limit")
            self.sock.settimeout(left)  # the limit holds for the whole answer, not one chunk
            try:
                chunk = self.sock.recv(min(n - len(data), 1 << 20))
            except TimeoutError:
                raise CallTimeout("no answer within the time limit") from None
            except OSError as err:
                raise ChannelBroken(f"the grading channel broke ({err})") from None
            if not chunk:
                raise ChannelBroken("the kernel closed the grading channel")
            data += chunk
        return bytes(data)

    def _exchange(self, request: str) -> str:
        limit = self.timeout
        if self.deadline is not None:
            limit = min(limit, self.deadline - time.monotonic())
        if limit <= 0:
            raise CallTimeout("the time limit of this test was reached")
        end = time.monotonic() + limit
        try:
            self.sock.settimeout(limit)
            self.sock.sendall(struct.pack("!Q", len(request)) + request.encode("ascii"))
        except TimeoutError:
            raise CallTimeout("the kernel did not take the call within the time limit") from None
        except OSError as err:
            raise ChannelBroken(f"the grading channel broke ({err})") from None
        (n,) = struct.unpack("!Q", self._recv(8, end))
        if n > wire.MAX_TEXT:  # unread, the body would be taken for the next answer: replace
            raise ChannelBroken(f"an answer of {n} bytes is over the size limit")
        return self._recv(n, end).decode("ascii", errors="replace")

    def call(self, function: str, args: tuple, kwargs: dict):
        """``function(*args, **kwargs)`` in the kernel (the notebook's function of that name); its
        return value as plain data, or the exception it raised, raised here."""
        return self._invoke({"op": "call", "f": function}, function, args, kwargs)

    def call_module(self, module: str, name: str, args: tuple, kwargs: dict):
        """``module.name(*args, **kwargs)`` in the kernel (a stand-in's constructor or a helper
        that inspects one): plain data back, or a ``Live`` handle for an object that is not."""
        return self._invoke({"op": "mod", "m": module, "f": name}, f"{module}.{name}", args, kwargs)

    def call_live(self, handle: int, label: str, args: tuple, kwargs: dict):
        return self._invoke({"op": "live", "h": handle}, label, args, kwargs)

    def attr(self, handle: int, label: str, name: str):
        return self._invoke({"op": "attr", "h": handle, "n": name}, f"{label}.{name}", (), {})

    def _invoke(self, req: dict, label: str, args: tuple, kwargs: dict):
        self.calls += 1
        err_state = np.geterr()
        inputs = wire.grad_leaves([list(args), dict(kwargs)])  # what a remote graph connects to
        sent_args, sent_kwargs = _to_wire(list(args)), _to_wire(dict(kwargs))
        dropped, self.dropped = self.dropped[:10_000], self.dropped[10_000:]
        req = {**req, "a": sent_args, "k": sent_kwargs, "g": _grad_enabled(), "x": dropped,
               "e": None if err_state == NUMPY_DEFAULT_ERR else err_state}  # fmt: skip
        try:
            request = wire.dumps(req)
        except wire.NotPlainData as err:  # a test's own argument: an error in the test
            self.dropped[:0] = dropped  # not sent: freed with the next request instead
            raise TypeError(f"test argument cannot cross to the kernel: {err}") from None
        graded = req.get("op") == "call"  # a graded function: its answer must be plain data
        kind, reply = self._answer(request, label, args, kwargs, graded)
        if kind == "ok" and len(reply) == 3:
            value = self._alias(self._decoded(reply[0], label), reply[1], args)
            if type(reply[2]) is int and _grad_enabled():
                value = _remote_graph(self, reply[2], value, inputs)
            return value
        if kind == "live" and not graded and len(reply) == 1 and type(reply[0]) is int:
            return Live(self, reply[0], label)
        self._fail(kind, reply, label)

    def vjp(self, graph: int, grads: list) -> list:
        """Gradients of the inputs of the call whose answer made ``graph``, for ``grads`` of its
        outputs (None: no gradient for that output)."""
        request = wire.dumps({"op": "vjp", "id": graph, "a": list(grads), "k": {}, "g": True,
                              "e": None})  # fmt: skip
        kind, reply = self._answer(request, "backward", (), {})
        if kind == "ok" and len(reply) == 3:
            value = self._decoded(reply[0], "backward")
            if type(value) is list:
                return value
        self._fail(kind, reply, "backward")

    def _decoded(self, node, label: str):
        try:
            return wire.decode(node, refs=False)
        except wire.NotPlainData as err:
            raise NotPlainReturn(f"{label} returned data that could not be read: {err}") from None

    def _answer(self, request: str, label: str, args: tuple, kwargs: dict, graded: bool = False):
        """Send one request; re-issue the warnings; (kind, payload). A graded function that
        changed an argument in place raises InputModified (nothing is written back)."""
        try:
            reply = wire.open_envelope(self._exchange(request))
        except wire.NotPlainData as err:
            raise NotPlainReturn(f"the answer of {label} could not be read: {err}") from None
        # [kind, payload..., warnings, changed]: ok (value, aliases, graph), live (handle),
        # raise (MRO, message), bad (why), missing (name)
        if type(reply) is not list or len(reply) < 3 or type(reply[-1]) is not list:
            raise NotPlainReturn(f"the answer of {label} could not be read")
        kind, *payload, caught, changed = reply
        slots = dict(enumerate(args)) | dict(kwargs)
        modified = [item[0] for item in changed[: len(slots)]
                    if type(item) is list and len(item) == 2 and type(item[0]) in (int, str)
                    and item[0] in slots]  # fmt: skip
        if type(caught) is list:
            self._reissue(caught[:50])  # may raise, as a warnings filter set to "error" does
        if graded and modified and kind == "ok":
            which = ", ".join(f"argument {k}" if type(k) is int else f"argument {k!r}"
                              for k in modified)  # fmt: skip
            err = InputModified(f"{label} changed its {which} in place; leave the inputs "
                                "unmodified (work on a copy)")  # fmt: skip
            err.course_function = label
            raise err
        return kind, payload

    def _fail(self, kind, reply: list, label: str):
        if kind == "raise" and len(reply) == 2:
            err = _student_exception(reply[0], str(reply[1])[:400])
            err.course_function = label
            raise err
        if kind == "bad" and len(reply) == 1:
            raise NotPlainReturn(f"{label} returned a value that is not plain data "
                                 f"({str(reply[0])[:200]}); return numbers, strings, booleans, "
                                 "None, NumPy arrays, tensors or lists/tuples/dicts of those")  # fmt: skip
        if kind == "missing":  # the function called, or one passed to it by name
            name = (
                reply[0] if reply and type(reply[0]) is str and reply[0].isidentifier() else label
            )
            raise NameError(f"the notebook defines no function {name!r} (was its cell run?)")
        raise NotPlainReturn(f"the answer of {label} could not be read")

    @staticmethod
    def _reissue(caught: list) -> None:
        """The warnings the student's function issued, issued again here, so the test's own
        filters decide (``simplefilter("error", RuntimeWarning)`` fails the call, as it did when
        the test ran in the kernel). The category is the first builtin warning class of its MRO."""
        for item in caught:
            if type(item) is not list or len(item) != 2 or type(item[1]) is not str:
                continue
            cat = _builtin(item[0], Warning) or UserWarning
            warnings.warn(item[1][:400], cat, stacklevel=4)

    @staticmethod
    def _alias(value, found, args):
        if type(found) is not list:
            return value
        for item in found:
            try:
                path, i, offset, strides, same = item
                leaf = value if not path else value[path[0]]
                arg = args[i]
            except (TypeError, ValueError, IndexError, KeyError):
                continue
            if type(arg) is not np.ndarray or type(leaf) is not np.ndarray:
                continue
            if path and type(value) not in (list, tuple):
                continue
            view = _view_of(arg, leaf.shape, leaf.dtype, offset, strides, same)
            nan_ok = leaf.dtype.kind in "fc"
            if view is None or not np.array_equal(view, leaf, equal_nan=nan_ok):
                continue
            if view is not arg:
                # the claim is the kernel's word: the view shows the test that the answer shares
                # memory with its input (np.shares_memory), but cannot be used to write into it
                view.flags.writeable = False
            if not path:
                value = view
            elif type(value) is list:
                value[path[0]] = view
            else:
                value = tuple(view if k == path[0] else x for k, x in enumerate(value))
        return value


class Live:
    """An object that stays in the kernel (a stand-in model, a trainer, a method of one), as the
    trusted tests see it: an attribute read returns the attribute's value as plain data (or
    another ``Live``), a call calls it there; passed to a kernel function, the kernel gets the
    object itself. What it answers is the student's answer, like any return value: the tests
    compare it with what the reference computes here, on a copy built here."""

    def __init__(self, channel: Channel, handle: int, label: str):
        self._channel, self._handle, self._label = channel, handle, label

    def __del__(self):
        # the kernel keeps the object until no Live here names it (sent with the next request)
        self._channel.dropped.append(self._handle)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._channel.attr(self._handle, self._label, name)

    def __call__(self, *args, **kwargs):
        return self._channel.call_live(self._handle, self._label, args, kwargs)

    def __repr__(self) -> str:
        return f"<live {self._label} in the kernel>"


class KernelModule:
    """A module of the student library as imported in the kernel: ``KernelModule(ch,
    "helpers.standins").UniformLM(7)`` builds the stand-in there and returns a ``Live``."""

    def __init__(self, channel: Channel, module: str):
        self._channel, self._module = channel, module

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            return self._channel.call_module(self._module, name, args, kwargs)

        call.__name__ = name
        return call


class Remote:
    """A graded function of the student's, as the trusted tests see it: calling it calls the
    kernel's function of that name through ``channel``."""

    def __init__(self, channel: Channel, name: str):
        self._channel, self.__name__ = channel, name

    def __call__(self, *args, **kwargs):
        return self._channel.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<the notebook's {self.__name__}>"
