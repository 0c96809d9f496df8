"""One warm verdict process per class run: the trusted tests' imports (torch and transformers for
9.5, about 7 CPU seconds) made once per lesson, not once per student.

    python -m course.grading.zygote serve LESSON SOCKET     (runner.autograde starts it)
    python -m course.grading.zygote client LESSON SOCKET CAP (GuardedExecute starts it per kernel)

``serve`` imports what ``course.grading.verdict --wait`` would (``verdict.warm``), listens on a unix
socket in a private folder of the grader (mode 0700, outside every folder the sandbox mounts; the
sandboxed kernel also has its own /tmp and its own pid namespace), and for every client forks a
child that runs ``verdict.main([LESSON, "--wait"])`` on the client's stdin and stdout. Each
student's verdict is a fresh fork of a process that has never run anything of a student's: nothing
one student's grading does reaches the next one's (the forks share the warm process's hash seed;
Python's and NumPy's global random states are drawn afresh in each, as in a new process).

``client`` is what GuardedExecute spawns where it would spawn the verdict itself, so the caller
keeps a real process to feed, read, time out and kill: it hands its stdin and stdout to the warm
process (SCM_RIGHTS), then waits and exits with the fork's exit status. When the client ends (it
finished, or the caller killed it), the warm process kills the fork (through a pidfd: never
another process that reused the pid), and the fork also ends itself when it sees its client gone;
the warm process kills every fork left when it stops. When no warm process answers (none running,
another lesson's, refused), the client becomes the verdict itself (``exec``), exactly as without a
warm process; the memory cap the caller set on the client holds either way (the fork sets the same
cap on itself, passed in the request).

Standard library only at import time: the client must start fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACK = b"+"  # sent by the fork itself, first: the client's next byte is the fork's exit status
PREFIX = "verdict-zygote-"


def _peer_ok(conn: socket.socket) -> bool:
    """Only a process of the grader's own user in the grader's own pid namespace may ask (the
    folder already keeps the sandbox out: this is the second lock, not the first; the sandbox maps
    its user to the grader's, so the pid namespace is the check that tells them apart)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("iII"))
    pid, uid, _gid = struct.unpack("iII", creds)
    if uid != os.getuid() or pid <= 0:
        return False
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") == os.readlink("/proc/self/ns/pid")
    except OSError:
        return False


def _watch(conn: socket.socket) -> None:
    """In the fork: end the process when its client has gone (the warm process also kills it)."""
    try:
        while conn.recv(64):
            pass
    except OSError:
        pass
    os._exit(1)


def _child(conn: socket.socket, fds: list[int], lesson: str, cap: int) -> None:
    """The forked verdict: the client's stdin and stdout as its own, then ``verdict.main``."""
    rc = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)  # as the spawned verdict: its stderr is not kept
        for fd in (*fds, null):
            os.close(fd)
        _close_other_fds(conn.fileno())
        if cap > 0:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        import random

        random.seed()  # from the OS, as a new process would be
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        conn.sendall(ACK)
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        from course.grading import verdict

        rc = verdict.main([lesson, "--wait"])
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - the caller reads a missing verdict as a failed cell
        rc = 1
    finally:
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
        try:
            conn.sendall(bytes([rc & 0xFF]))
        except OSError:
            pass
        os._exit(rc)


def _alive(conn: socket.socket) -> bool:
    """False when the client has already closed its end (it gave up waiting and became the verdict
    itself: a fork on its pipes would race that verdict)."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def _drained(conn: socket.socket) -> bool:
    """Read what a client's connection holds: False when the client has gone."""
    try:
        return conn.recv(4096, socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def _close_other_fds(keep: int) -> None:
    """In the fork: close every descriptor but 0, 1, 2 and ``keep`` (the listening socket, the
    other clients' connections, their pidfds, the warm process's log and selector)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def serve(lesson: str, path: str) -> int:
    """Listen on ``path``; fork a verdict per accepted client, for ``lesson`` only. Ends when its
    stdin ends (a pipe from the process that started it, which closes when that process ends,
    however it ends), when that process is no longer its parent, or on SIGTERM; every fork still
    running is killed then, and the socket removed."""
    import gc

    from course.grading import verdict

    parent = os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    verdict.one_thread()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = f"{path}.{os.getpid()}"
    sock.bind(tmp)
    os.chmod(tmp, 0o600)
    sock.listen(64)
    os.rename(tmp, path)  # the name appears when it already listens
    children: dict[int, tuple[int, socket.socket]] = {}  # fd of the client's connection -> fork
    try:
        verdict.warm(lesson)  # clients that connect meanwhile wait in the backlog
        verdict.one_thread()
        gc.collect()
        gc.freeze()  # the forks' collections leave the imported objects' pages shared
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks reaped by the kernel
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ, "accept")
        if stat.S_ISFIFO(os.fstat(0).st_mode):
            sel.register(0, selectors.EVENT_READ, "parent")
        forks = 0
        print(f"zygote: warm for {lesson}", file=sys.stderr, flush=True)
        while os.getppid() == parent:
            for key, _ in sel.select(timeout=2.0):
                if key.data == "parent":
                    if not os.read(0, 4096):
                        return 0
                elif key.data == "accept":
                    forked = _accept(sock, lesson)
                    if forked:
                        pid, pidfd, conn = forked
                        forks += 1
                        children[conn.fileno()] = (pidfd, conn)
                        sel.register(conn, selectors.EVENT_READ, "client")
                        print(f"zygote: fork {forks} pid {pid}", file=sys.stderr, flush=True)
                else:  # a client's connection: it sends nothing after its request, only ends
                    conn = key.fileobj
                    if not _drained(conn):
                        sel.unregister(conn)
                        pidfd, _ = children.pop(conn.fileno())
                        _kill(pidfd)
                        conn.close()
        return 0
    finally:
        for pidfd, conn in children.values():
            _kill(pidfd)
            conn.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _kill(pidfd: int) -> None:
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    os.close(pidfd)


def _accept(sock: socket.socket, lesson: str):
    """Take one client: (pid, pidfd, connection) of its fork, or None when refused."""
    conn, _ = sock.accept()
    fds: list[int] = []
    try:
        if not _peer_ok(conn):
            print("zygote: refused (peer)", file=sys.stderr, flush=True)
            raise ValueError("refused")
        conn.settimeout(5.0)
        msg, fds, _flags, _addr = socket.recv_fds(conn, 4096, 2)
        req = json.loads(msg.decode() or "null")
        if len(fds) != 2 or req.get("lesson") != lesson:
            print("zygote: refused (request)", file=sys.stderr, flush=True)
            raise ValueError("refused")
        cap = int(req.get("cap") or 0)
        conn.settimeout(None)
        if not _alive(conn):
            raise ValueError("gone")
        pid = os.fork()
    except (OSError, ValueError, TypeError, AttributeError):
        for fd in fds:
            os.close(fd)
        conn.close()
        return None
    if pid == 0:
        _child(conn, fds, lesson, cap)  # never returns
    for fd in fds:
        os.close(fd)
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # it has ended already
        conn.close()
        return None
    return pid, pidfd, conn


def client(lesson: str, path: str, cap: int) -> int:
    """Hand stdin and stdout to the warm process and wait for the verdict's exit status; become the
    verdict itself when no warm process takes the request."""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(120.0)  # the warm process is still making its imports: it accepts after
        s.connect(path)
        socket.send_fds(s, [json.dumps({"lesson": lesson, "cap": cap}).encode()], [0, 1])
        ack = s.recv(1)
    except OSError:
        ack = b""
    if ack != ACK:
        with contextlib.suppress(NameError, OSError):
            s.close()  # a warm process that took the request late sees it gone, and forks nothing
        os.execv(sys.executable, [sys.executable, "-m", "course.grading.verdict", lesson, "--wait"])
    s.settimeout(None)
    try:
        rc = s.recv(1)
    except OSError:
        rc = b""
    return rc[0] if rc else 1


def verdict_env() -> dict[str, str]:
    """The environment of a verdict process (spawned or warm): the grader's, less nbgrader's own
    variables, one numerics thread from the start (numpy's BLAS reads these when it loads; torch's
    count is also set by the process itself, verdict.one_thread), this course first on the path.
    A fork has the environment of the class run's warm process: the runner's TMPDIR, not the one
    the runner gives each student's nbgrader (the verdict writes no temporary file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NBGRADER_")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    return env


def private_folder() -> str:
    """A new 0700 folder for the socket, outside every folder the sandbox mounts (TMPDIR could lie
    under one: then /tmp, and if that is mounted too, refused)."""
    from pathlib import Path

    from course.grading import sandbox

    mounted = [Path(p) for p in sandbox._ro_paths([])]
    for base in (tempfile.gettempdir(), "/tmp"):
        b = Path(base).resolve()
        if not any(b == m or m in b.parents for m in mounted):
            return tempfile.mkdtemp(prefix=PREFIX, dir=b)
    raise RuntimeError("no temporary folder outside the sandbox's mounts")


@contextlib.contextmanager
def warm_process(lesson: str):
    """A warm verdict process for ``lesson`` while the block runs: yields its socket's path (pass
    it as ``--GuardedExecute.verdict_zygote``) and ``status()``, which says how many verdicts it has
    forked and, when it has stopped, the tail of its log. Stopped, and its folder removed, on
    leaving; it also stops by itself when this process ends (its stdin is a pipe from here)."""
    folder = private_folder()
    path = os.path.join(folder, "s")
    log = open(os.path.join(folder, "log"), "w+")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "course.grading.zygote", "serve", lesson, path],
                            stdin=subprocess.PIPE, stdout=log, stderr=log, env=verdict_env(),
                            cwd=ROOT)  # fmt: skip

    def status() -> tuple[int, str]:
        log.flush()
        with open(log.name) as f:
            text = f.read()
        forks = sum(1 for line in text.splitlines() if line.startswith("zygote: fork "))
        return forks, ("" if proc.poll() is None else text[-1500:] or "(no output)")

    deadline = time.monotonic() + 60
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # listening before the first grading starts (else it would not be used)
    try:
        yield path, status
    finally:
        proc.stdin.close()  # its signal to stop (it kills the forks it still has)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 3 and args[0] == "serve":
        return serve(args[1], args[2])
    if len(args) >= 3 and args[0] == "client":
        cap = int(args[3]) if len(args) > 3 else 0
        return client(args[1], args[2], cap)
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
