"""The trusted side's channel into a student's kernel: call a function the notebook defined, with
plain data in and plain data out (course/grading/wire.py).

The kernel receives the function's name and its arguments, nothing else: no test source, no
reference, no expected value. A small server (``SERVER``, readable by anyone, secret from no one)
is installed in the kernel by one ``execute_request``; it listens on a Unix socket beside the
kernel's connection file (the sandbox's ipc folder) in a thread of the kernel, and each call is one
length-prefixed request and answer of wire text on it. What the kernel returns is only ever the
student's answer: forging the server, its socket or the kernel's messages changes nothing but that
answer, and the verdict is decided here.

The server also reports, per call, the arguments the function changed in place (their new values
are written back into the caller's objects, so "the input was not modified" can be tested) and the
returned arrays that share memory with an argument (returned here as views of the caller's
argument, so ``np.shares_memory`` keeps its meaning). Output the function prints during a call goes
to no notebook: the grader does not listen to the kernel's iopub channel.
"""

from __future__ import annotations

import builtins
import os
import secrets
import socket
import struct
import time
import warnings
from pathlib import Path

import numpy as np

from course.grading import wire

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
    errstate_at_install = np.geterr()  # the notebook's own np.seterr, unless a test sets one

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

    def serve(text):
        try:
            return serve_one(text)
        except BaseException as err:  # a request this kernel cannot serve: say so, keep serving
            return wire.envelope(["bad", f"the call could not be served ({type(err).__name__})",
                                  [], []])

    def qualnames(cls):
        return [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__]

    def serve_one(text):
        req = wire.loads(text)
        fn = shell.user_ns.get(req["f"])
        if not callable(fn):
            return wire.envelope(["missing", req["f"], [], []])
        args, kwargs = list(req["a"]), dict(req["k"])
        slots = [*enumerate(args), *kwargs.items()]
        before = {k: wire.dumps(a) for k, a in slots if type(a) in (np.ndarray, list, dict)}
        err_state = req["e"] if req.get("e") is not None else errstate_at_install
        with warnings.catch_warnings(record=True) as caught, np.errstate(**err_state):
            warnings.simplefilter("always")  # the caller's filters decide, on its side
            try:
                result = fn(*args, **kwargs)
            except BaseException as err:
                reply = ["raise", qualnames(type(err)), str(err)[:400]]
            else:
                try:
                    reply = ["ok", wire.encode(result), aliases(result, args)]
                except Exception as err:
                    reply = ["bad", str(err)[:400]]
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
                    now = wire.dumps(a)
                except Exception:
                    continue
                if now != before[k]:
                    changed.append([k, now])
        return wire.envelope([*reply, warned, changed])

    serve.limit = wire.MAX_TEXT
    serve.over = lambda n: wire.envelope(["bad", f"an answer of {n} bytes is over the size limit",
                                          [], []])  # fmt: skip
    return serve


def _course_listen(serve, path, limit, over):
    # One connection, length-prefixed messages: far cheaper per call than an execute_request.
    import os, socket, struct, threading
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
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
        conn, _ = srv.accept()
        srv.close()
        try:
            os.unlink(path)
        except OSError:
            pass
        try:
            while True:
                (n,) = struct.unpack("!Q", recv(conn, 8))
                reply = serve(recv(conn, n).decode("ascii")).encode("ascii")
                if len(reply) > limit:  # an answer the grader would refuse unread: say so
                    reply = over(len(reply)).encode("ascii")
                conn.sendall(struct.pack("!Q", len(reply)) + reply)
        except BaseException:
            conn.close()

    threading.Thread(target=loop, name="course-grading-channel", daemon=True).start()


import sys as _course_sys
_course_serve = _course_server_factory(__WIRE__)
_course_listen(_course_serve, __SOCK__, _course_serve.limit, _course_serve.over)
del _course_server_factory, _course_listen, _course_serve, _course_sys
"""


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


def _write_back(target, value) -> None:
    """Make the caller's ``target`` hold ``value`` (an argument the function changed in place)."""
    if type(target) is np.ndarray and type(value) is np.ndarray:
        if target.shape == value.shape and target.flags.writeable:
            np.copyto(target, value, casting="unsafe")
    elif type(target) is list and type(value) is list:
        target[:] = value
    elif type(target) is dict and type(value) is dict:
        target.clear()
        target.update(value)


class Channel:
    """One kernel, reached through its connection file (``jupyter_client`` shell channel only)."""

    def __init__(self, connection_file: str, timeout: float = 120.0):
        import zmq
        from jupyter_client import BlockingKernelClient

        self.kc = BlockingKernelClient(connection_file=str(connection_file))
        self.kc.load_connection_file()
        # a reply larger than this is dropped by ZeroMQ before it is parsed (bounded memory); set
        # on the context, before the channel's socket exists (after connecting it does nothing)
        self.kc.context.setsockopt(zmq.MAXMSGSIZE, 2 * wire.MAX_TEXT)
        self.kc.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        self.timeout = timeout
        self.deadline: float | None = None  # a wall-clock limit for a group of calls (one cell)
        self.calls = 0
        path = os.path.join(os.path.dirname(os.path.abspath(connection_file)),
                            f"course-{secrets.token_hex(6)}.sock")  # fmt: skip
        code = SERVER.replace("__WIRE__", repr(WIRE_SOURCE)).replace("__SOCK__", repr(path))
        reply = self._request(code, {})
        if reply.get("status") != "ok":
            raise ChannelError("the grading channel could not be installed in the kernel "
                               f"({reply.get('ename')}: {reply.get('evalue')})")  # fmt: skip
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(10)
            self.sock.connect(path)
        except OSError as err:
            raise ChannelError(f"the grading channel could not be reached ({err})") from None
        self.kc.stop_channels()  # every call goes through the socket from here on

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

    def _request(self, code: str, expressions: dict) -> dict:
        limit = self.timeout
        if self.deadline is not None:
            limit = min(limit, self.deadline - time.monotonic())
        if limit <= 0:
            raise CallTimeout("the time limit of this test was reached")
        msg_id = self.kc.execute(code, silent=True, store_history=False,
                                 user_expressions=expressions, allow_stdin=False)  # fmt: skip
        end = time.monotonic() + limit
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise CallTimeout(f"no answer within {limit:.0f} s")
            try:
                msg = self.kc.get_shell_msg(timeout=left)
            except Exception:  # queue.Empty, or a message that failed to deserialise
                if time.monotonic() >= end:
                    raise CallTimeout(f"no answer within {limit:.0f} s") from None
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg.get("content") or {}

    def call(self, function: str, args: tuple, kwargs: dict):
        """``function(*args, **kwargs)`` in the kernel; its return value as plain data, or the
        exception it raised, raised here."""
        self.calls += 1
        err_state = np.geterr()
        try:
            request = wire.dumps({"f": function, "a": list(args), "k": dict(kwargs),
                                  "e": None if err_state == NUMPY_DEFAULT_ERR else err_state})  # fmt: skip
        except wire.NotPlainData as err:  # a test's own argument: an error in the test
            raise TypeError(f"test argument cannot cross to the kernel: {err}") from None
        try:
            reply = wire.open_envelope(self._exchange(request))
        except wire.NotPlainData as err:
            raise NotPlainReturn(f"the answer of {function} could not be read: {err}") from None
        # [kind, payload..., warnings, changed]: ok (value, aliases), raise (MRO, message),
        # bad (why), missing (name)
        if type(reply) is not list or len(reply) < 3 or type(reply[-1]) is not list:
            raise NotPlainReturn(f"the answer of {function} could not be read")
        *reply, caught, changed = reply
        slots = dict(enumerate(args)) | dict(kwargs)
        for item in changed[: len(slots)]:
            if type(item) is list and len(item) == 2 and type(item[0]) in (int, str):
                target = slots.get(item[0])
                try:
                    _write_back(target, wire.loads(item[1]))
                except Exception:  # noqa: BLE001 - a write-back that does not fit is not made
                    pass
        kind = reply[0]
        if type(caught) is list:
            self._reissue(caught[:50])  # may raise, as a warnings filter set to "error" does
        if kind == "ok" and len(reply) == 3:
            try:
                value = wire.decode(reply[1])
            except wire.NotPlainData as err:
                raise NotPlainReturn(
                    f"{function} returned data that could not be read: {err}"
                ) from None
            return self._alias(value, reply[2], args)
        if kind == "raise" and len(reply) == 3:
            err = _student_exception(reply[1], str(reply[2])[:400])
            err.course_function = function
            raise err
        if kind == "bad" and len(reply) == 2:
            raise NotPlainReturn(f"{function} returned a value that is not plain data "
                                 f"({str(reply[1])[:200]}); return numbers, strings, booleans, "
                                 "None, NumPy arrays, tensors or lists/tuples/dicts of those")  # fmt: skip
        if kind == "missing":
            raise NameError(f"the notebook defines no function {function!r} (was its cell run?)")
        raise NotPlainReturn(f"the answer of {function} could not be read")

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
            if not path:
                value = view
            elif type(value) is list:
                value[path[0]] = view
            else:
                value = tuple(view if k == path[0] else x for k, x in enumerate(value))
        return value


class Remote:
    """A graded function of the student's, as the trusted tests see it: calling it calls the
    kernel's function of that name through ``channel``."""

    def __init__(self, channel: Channel, name: str):
        self._channel, self.__name__ = channel, name

    def __call__(self, *args, **kwargs):
        return self._channel.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<the notebook's {self.__name__}>"
