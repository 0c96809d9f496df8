"""One warm verdict process per class run: the trusted tests' imports (torch and transformers for
9.5, about 7 CPU seconds) made once per lesson, not once per student.

    python -m course.grading.zygote serve LESSON SOCKET     (runner.autograde starts it)
    python -m course.grading.zygote client LESSON SOCKET     (GuardedExecute starts it per kernel)

``serve`` imports what ``course.grading.verdict --wait`` would (``verdict.warm``), listens on a unix
socket in a private folder of the grader (mode 0700; the sandboxed kernel has its own /tmp, its own
pid namespace and no view of that folder), and for every client forks a child that runs
``verdict.main([LESSON, "--wait"])`` on the client's stdin and stdout. Each student's verdict is a
fresh fork of a process that has never run anything of a student's: nothing one student's grading
does reaches the next one's.

``client`` is what GuardedExecute spawns where it would spawn the verdict itself, so the caller
keeps a real process to feed, read, time out and kill: it hands its stdin and stdout to the warm
process (SCM_RIGHTS), then waits and exits with the child's exit status. The child dies when its
client does (it watches the connection), so killing the client kills the verdict. When no warm
process answers (none running, another lesson's, refused), the client becomes the verdict itself
(``exec``), exactly as without a warm process; the memory cap the caller set on the client holds
either way (the child sets the same cap on itself, passed in the request).

Standard library only at import time: the client must start fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ACK = b"+"


def _peer_ok(conn: socket.socket) -> bool:
    """Only a process of the grader's own user in the grader's own pid namespace may ask (the
    folder already keeps the sandbox out: this is the second lock, not the first)."""
    import struct

    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    if uid != os.getuid() or pid <= 0:
        return False
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") == os.readlink("/proc/self/ns/pid")
    except OSError:
        return False


def _watch(conn: socket.socket) -> None:
    """In the child: end the process when its client has gone (killed by the caller's timeout or
    by ``_end_verdict_process``); the client never sends anything after its request."""
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
        if cap > 0:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
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


def serve(lesson: str, path: str) -> int:
    """Listen on ``path``; fork a verdict per accepted client, for ``lesson`` only. Ends when the
    process that started it has gone (checked every 2 s) or on SIGTERM."""
    from course.grading import verdict

    parent = os.getppid()
    verdict.one_thread()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o600)
    sock.listen(64)
    sock.settimeout(2.0)
    verdict.warm(lesson)  # clients that connect meanwhile wait in the backlog
    verdict.one_thread()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    forks = 0
    print(f"zygote: warm for {lesson}", file=sys.stderr, flush=True)
    while os.getppid() == parent:
        try:
            conn, _ = sock.accept()
        except TimeoutError:
            continue
        fds: list[int] = []
        try:
            if not _peer_ok(conn):
                raise ValueError("refused")
            conn.settimeout(5.0)
            msg, fds, _flags, _addr = socket.recv_fds(conn, 4096, 2)
            req = json.loads(msg.decode() or "null")
            if len(fds) != 2 or req.get("lesson") != lesson:
                raise ValueError("refused")
            cap = int(req.get("cap") or 0)
            conn.settimeout(None)
            pid = os.fork()
        except (OSError, ValueError, TypeError, AttributeError):
            for fd in fds:
                os.close(fd)
            conn.close()
            continue
        if pid == 0:
            sock.close()
            _child(conn, fds, lesson, cap)  # never returns
        forks += 1
        print(f"zygote: fork {forks} pid {pid}", file=sys.stderr, flush=True)
        try:
            conn.sendall(ACK)
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        conn.close()
    return 0


def client(lesson: str, path: str, cap: int) -> int:
    """Hand stdin and stdout to the warm process and wait for the verdict's exit status; become the
    verdict itself when no warm process takes the request."""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30.0)
        s.connect(path)
        socket.send_fds(s, [json.dumps({"lesson": lesson, "cap": cap}).encode()], [0, 1])
        ack = s.recv(1)
    except OSError:
        ack = b""
    if ack != ACK:
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
    count is also set by the process itself, verdict.one_thread), this course first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NBGRADER_")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@contextlib.contextmanager
def warm_process(lesson: str):
    """A warm verdict process for ``lesson`` while the block runs: yields its socket's path (pass
    it as ``--GuardedExecute.verdict_zygote``) and a function that says how many verdicts it has
    forked so far; stopped, and its folder removed, on leaving."""
    folder = tempfile.mkdtemp(prefix="verdict-zygote-")  # mode 0700
    path = os.path.join(folder, "s")
    log = open(os.path.join(folder, "log"), "w+")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "course.grading.zygote", "serve", lesson, path],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=verdict_env(),
                            cwd=ROOT)  # fmt: skip

    def forks() -> int:
        log.flush()
        with open(log.name) as f:
            return sum(1 for line in f if line.startswith("zygote: fork "))

    deadline = time.monotonic() + 60
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # listening before the first grading starts (else it would not be used)
    try:
        yield path, forks
    finally:
        proc.terminate()
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
