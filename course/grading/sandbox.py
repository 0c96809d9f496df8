"""The sandbox around a student's kernel: bubblewrap (Linux user namespaces), no daemon, no root.

nbgrader starts the kernel through a kernel manager; ``SandboxedKernelManager`` (built by
``kernel_manager_class``) is jupyter_client's own manager with two changes:

- the kernel talks to nbgrader over Jupyter's ``ipc`` transport (Unix sockets): the sandbox has its
  own network namespace (no interface but a down loopback), so TCP to the host is impossible. The
  kernel binds its sockets in its ipc folder, which inside the sandbox is a tiny tmpfs of its own
  (``Limits.ipc_kb``) holding the connection file read-only; the grader reaches those sockets from
  outside through the sandbox's root, ``/proc/<pid of the sandbox's init>/root/<ipc folder>``, and
  no host folder is writable from inside. The student may replace a socket with a link (to a host
  socket, or another student's): a link met under ``/proc/<pid>/root`` resolves against the
  *grader's* root. So no socket of the sandbox is ever connected to by name: ``open_socket`` walks
  the path one name at a time without following a link and keeps the socket's inode open
  (``O_PATH``); the grader connects to ``/proc/<grader>/fd/<n>``, through links in a folder of its
  own (``links/``, for jupyter_client's ``<ip>-<port>`` names);
- the kernel command is wrapped: ``bwrap <mounts> sh -c 'seed the work dir; exec prlimit <limits>
  python -m ipykernel_launcher -f <connection file>'``.

Inside, the kernel sees read-only: /usr (the system's programs and libraries), the Python
installation and the venv, ``helpers/``, the BaseLM artifact and the lesson's release folder;
read-write only: its working directory (a size-capped tmpfs seeded with a copy of the folder nbgrader
runs it in), a size-capped private /tmp, and its ipc folder (a tmpfs too). Not visible at all: the course root
(source_notebooks/, gradebook.db, autograded/, feedback/, submitted/), the instructor's home, other
students, the grader's environment (``--clearenv``; a short whitelist is set again), host processes
(own pid namespace: nothing outside can be seen or signalled). Everything the student started dies
with the sandbox (``--die-with-parent`` on a pid namespace whose init is bubblewrap's).
Limits (``Limits``): address space, processes, file size, open files, tmpfs sizes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

MiB = 1024 * 1024
# A Unix socket's path has at most 107 bytes (sun_path is 108 with its NUL; ZeroMQ's limit for the
# kernel's sockets; Linux would take 108 for the server's, which this bound leaves one byte under). The longest socket
# name under the sandbox's ipc folder: the grading server's "/course-<12 hex>.sock" (the kernel's
# own are "/k-<port>", the grader's links "/links/k-<port>").
SUN_PATH_MAX = 107
LONGEST_SOCKET_NAME = len("/course-0123456789ab.sock")
# Environment variables the kernel gets again after --clearenv (values taken from the grader's).
# ATEN_CPU_CAPABILITY picks torch's float-kernel path: the kernel must compute on the path the
# trusted verdict recomputes on, or a value compared at rtol 1e-4 can differ by more.
ENV_KEEP = ["NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "COURSE_SMOKE", "OMP_NUM_THREADS",
            "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TORCH_NUM_THREADS", "ATEN_CPU_CAPABILITY",
            "LANG", "TZ"]  # fmt: skip
FIX = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
    "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
    "24.04+ kernel.apparmor_restrict_unprivileged_userns=0), or grade inside a Linux container or VM "
    "that has both; only for work you trust: --trusted-students (no sandbox, UNSAFE)"
)


@dataclass
class Limits:
    """Per-kernel limits (defaults in course/nbgrader_config.py, ``c.GuardedExecute.*``)."""

    memory_mb: int = 4096  # RLIMIT_AS of the kernel and each process it starts
    processes: int = 256  # RLIMIT_NPROC; as root (exempt from it) a pids cgroup, ``pids_cgroup``
    file_mb: int = 256  # RLIMIT_FSIZE: largest file it may write
    open_files: int = 1024  # RLIMIT_NOFILE
    workdir_mb: int = 1024  # tmpfs size of its working directory
    tmp_mb: int = 512  # tmpfs size of /tmp
    shm_mb: int = 64  # tmpfs size of /dev/shm (without it, /dev's tmpfs has no size cap)
    ipc_kb: int = 256  # tmpfs size of the ipc folder (sockets take no space; the file is bound)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def unavailable_reason() -> str | None:
    """None when a sandbox can be started here, else why not (with the fix)."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (this is {sys.platform}); fix: {FIX}"
    bw = bwrap_path()
    if bw is None:
        return f"bubblewrap (bwrap) is not installed; fix: {FIX}"
    try:
        out = subprocess.run(
            [bw, "--unshare-all", "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/",
             "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bubblewrap could not be run ({err}); fix: {FIX}"
    if out.returncode != 0:
        return f"bubblewrap cannot create namespaces here ({out.stderr.strip()}); fix: {FIX}"
    return None


def helpers_dir() -> Path | None:
    """The ``helpers`` package the grader imports (its PYTHONPATH first, as for the verdict
    process): the copy mounted in the sandbox, and the one the kernel is told to import."""
    spec = importlib.util.find_spec("helpers")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).resolve().parent


def _ro_paths(lesson_dirs: list[Path]) -> list[Path]:
    """Host folders the kernel may read: Python, the venv, helpers/, BaseLM, the lesson's files."""
    paths = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent]
    helpers = helpers_dir()
    if helpers is not None:
        paths += [helpers, helpers.parent / "artifacts" / "baselm"]
    if os.environ.get("BASELM_DIR"):
        paths.append(Path(os.environ["BASELM_DIR"]))
    paths += lesson_dirs
    out: list[Path] = []
    for p in paths:
        p = p.resolve()
        if p.exists() and p not in out:
            out.append(p)
    return out


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for etc in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives", "fonts"):
        p = Path("/etc") / etc
        if p.exists():
            args += ["--ro-bind", str(p), str(p)]
    return args


def pids_cgroup(processes: int) -> Path | None:
    """Where the grader runs as root, RLIMIT_NPROC does not bind (Linux exempts uid 0, and the
    sandbox's uid maps to it): a fresh cgroup (v1 ``pids`` hierarchy, under this process's own)
    whose ``pids.max`` is ``processes``, for everything the sandbox starts. None when not root, or
    when no pids hierarchy can be written here (then INSTRUCTOR.md's systemd-run line applies)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    try:
        own = next(line.split(":", 2)[2].strip() for line in
                   Path("/proc/self/cgroup").read_text().splitlines()
                   if line.split(":", 2)[1].split(",").count("pids"))  # fmt: skip
        base = Path("/sys/fs/cgroup/pids") / own.lstrip("/")
        path = Path(tempfile.mkdtemp(prefix="course-sandbox-", dir=base))
    except (OSError, StopIteration, IndexError):
        return None
    try:
        (path / "pids.max").write_text(str(processes))
    except OSError:
        remove_cgroup(path)
        return None
    return path


def process_cap_binds(processes: int = Limits.processes) -> bool:
    """Whether ``Limits.processes`` binds here: always for a user (RLIMIT_NPROC), for root only
    where a pids cgroup can be made (probed by making and removing one)."""
    if os.geteuid() != 0:
        return True
    probe = pids_cgroup(processes)
    if probe is not None:
        remove_cgroup(probe)
    return probe is not None


def remove_cgroup(path: Path) -> None:
    """Kill what is left in a sandbox's cgroup and remove it (best effort)."""
    import signal

    for _ in range(50):
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.02)


def bwrap_command(kernel_cmd: list[str], cwd: str, ipc_dir: str, limits: Limits,
                  lesson_dirs: list[Path] = (), cgroup: Path | None = None) -> list[str]:  # fmt: skip
    """The full argv: bubblewrap, mounts, environment, limits, then ``kernel_cmd``; with
    ``cgroup`` (``pids_cgroup``), a shell first moves itself into it, then becomes the rest."""
    bw = bwrap_path()
    if bw is None:
        raise RuntimeError(f"grading sandbox: bubblewrap (bwrap) is not installed; fix: {FIX}")
    venv_bin = str(Path(sys.executable).parent)
    args = [bw, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", "1000",
            "--gid", "1000", "--hostname", "sandbox", "--cap-drop", "ALL", "--die-with-parent",
            "--new-session", "--clearenv"]  # fmt: skip
    env = {"PATH": f"{venv_bin}:/usr/bin:/bin", "HOME": "/tmp", "USER": "student",
           "MPLCONFIGDIR": "/tmp/.mpl", "XDG_CACHE_HOME": "/tmp/.cache", "MPLBACKEND": "agg",
           "LANG": "C.UTF-8"}  # fmt: skip
    env.update({k: os.environ[k] for k in ENV_KEEP if k in os.environ})
    helpers = helpers_dir()
    if helpers is not None:  # the mounted copy, not one the venv's editable install may name
        env["PYTHONPATH"] = str(helpers.parent)
    for k, v in env.items():
        args += ["--setenv", k, v]
    args += _system_mounts()
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(limits.shm_mb * MiB), "--tmpfs", "/dev/shm"]
    args += ["--size", str(limits.tmp_mb * MiB), "--tmpfs", "/tmp"]
    for p in _ro_paths(list(lesson_dirs)):
        args += ["--ro-bind", str(p), str(p)]
    # the ipc folder: a tmpfs of the sandbox's own (the sockets the kernel binds live there, the
    # grader reaches them through /proc/<pid>/root), with the connection file bound read-only
    args += ["--size", str(limits.ipc_kb * 1024), "--tmpfs", ipc_dir]
    connection = Path(ipc_dir) / "kernel.json"
    args += ["--ro-bind", str(connection), str(connection)]
    # The work dir is seeded with a copy of the folder nbgrader runs the kernel in (autograded/
    # <student>/<lesson>/), never with a course root (should a caller start a kernel there).
    course_like = any(
        (Path(cwd) / n).exists() for n in ("gradebook.db", "source_notebooks", "submitted")
    )
    args += ["--ro-bind", str(Path(ipc_dir) / "seed") if course_like else cwd, "/run/seed"]
    args += ["--size", str(limits.workdir_mb * MiB), "--tmpfs", cwd, "--chdir", cwd]
    # last: bubblewrap's own root and /dev are tmpfs mounts without a size cap, writable by the
    # student; read-only, only the capped mounts above take writes (devices such as /dev/null
    # still work)
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    rl = [
        "prlimit",
        f"--as={limits.memory_mb * MiB}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_mb * MiB}",
        f"--nofile={limits.open_files}",
        "--core=0",
        "--",
    ]
    inner = "cp -R /run/seed/. . 2>/dev/null; exec " + " ".join(
        shlex.quote(a) for a in rl + kernel_cmd
    )
    # bubblewrap itself starts with the same short environment: the sandbox's pid 1 is a fork of
    # it, and its /proc/1/environ would otherwise show the grader's environment to the student.
    clean = [shutil.which("env") or "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items())]
    enter = []
    if cgroup is not None:  # before bubblewrap starts: every process after it is counted
        enter = ["/bin/sh", "-c", 'echo $$ > "$1" || exit 1; shift; exec "$@"', "course-cgroup",
                 str(cgroup / "cgroup.procs")]  # fmt: skip
    return enter + clean + args + ["/bin/sh", "-c", inner]


def sandbox_init(bwrap_pid: int, wait_s: float = 10.0, exited=lambda: False) -> int | None:
    """The host pid of the sandbox's init (bubblewrap's child, pid 1 of the sandbox), whose
    ``/proc/<pid>/root`` is the sandbox's root; None when it does not appear within ``wait_s``
    or bubblewrap has exited (``exited()``)."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end and not exited():
        try:
            kids = Path(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children").read_text().split()
        except OSError:
            kids = [p.name for p in Path("/proc").iterdir() if p.name.isdigit()
                    and _ppid(p.name) == bwrap_pid]  # fmt: skip
        if kids:
            return int(kids[0])
        if not Path(f"/proc/{bwrap_pid}").exists():
            return None
        time.sleep(0.005)
    return None


def open_socket(root: str, path: str) -> int:
    """An ``O_PATH`` descriptor of the Unix socket at ``path`` under ``root`` (a sandbox's
    ``/proc/<pid>/root``), reached one name at a time with no link followed (``O_NOFOLLOW``) and no
    ``..``; connect to ``/proc/self/fd/<fd>`` (or ``/proc/<this pid>/fd/<fd>``) to reach exactly
    that inode, whatever the name points at later. OSError when a name is missing, a link, or the
    last one is not a socket; the caller closes the descriptor."""
    names = [n for n in path.split("/") if n not in ("", ".")]
    if not names or ".." in names:
        raise OSError(f"not a plain absolute path: {path!r}")
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    try:
        for i, name in enumerate(names):
            last = i == len(names) - 1
            flags = os.O_PATH | os.O_NOFOLLOW | (0 if last else os.O_DIRECTORY)
            nxt = os.open(name, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            raise OSError(f"{path!r} in the sandbox is not a socket")
        return fd
    except BaseException:
        os.close(fd)
        raise


def _ppid(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _close_all(fds: list[int]) -> None:
    while fds:
        try:
            os.close(fds.pop())
        except OSError:
            pass


def kernel_manager_class(limits: Limits, lesson_dirs: list[Path] = ()):
    """An AsyncKernelManager whose kernels run in the sandbox (jupyter_client imported lazily)."""
    from jupyter_client.manager import AsyncKernelManager

    class SandboxedKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(**kw)
            self._sandbox_dir = tempfile.mkdtemp(prefix="nbg-sandbox-")
            need = len(os.fsencode(self._sandbox_dir)) + LONGEST_SOCKET_NAME
            if need > SUN_PATH_MAX:  # say so now, not as a kernel that never answers
                shutil.rmtree(self._sandbox_dir, ignore_errors=True)
                raise RuntimeError(
                    f"grading sandbox: the kernel's socket paths under {tempfile.gettempdir()} "
                    f"would be {need} bytes, over the {SUN_PATH_MAX} a Unix socket path may "
                    "have; fix: set TMPDIR to a short folder (for example TMPDIR=/tmp) and "
                    "grade again"
                )
            os.mkdir(os.path.join(self._sandbox_dir, "seed"))
            weakref.finalize(self, shutil.rmtree, self._sandbox_dir, True)
            self.transport = "ipc"
            self.ip = os.path.join(self._sandbox_dir, "k")
            self.connection_file = os.path.join(self._sandbox_dir, "kernel.json")
            self._empty_cwd = tempfile.mkdtemp(prefix="nbg-cwd-")
            weakref.finalize(self, shutil.rmtree, self._empty_cwd, True)
            self._socket_fds: list[int] = []  # O_PATH descriptors of the kernel's sockets
            weakref.finalize(self, _close_all, self._socket_fds)
            self._cgroup = pids_cgroup(limits.processes)
            if self._cgroup is not None:
                weakref.finalize(self, remove_cgroup, self._cgroup)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            """Launch, then point this manager (and every client it makes) at the kernel's sockets
            as seen from outside the sandbox: ``/proc/<init>/root`` + the folder they are in.
            ``connection_file`` becomes a copy for the grader's side (``client.json``, with that
            path and ``course_sandbox_root``); the kernel keeps reading its own."""
            await super()._async_launch_kernel(kernel_cmd, **kw)
            proc = self.provisioner.process
            init = sandbox_init(self.provisioner.pid, exited=lambda: proc.poll() is not None)
            if init is None:
                proc.kill()
                proc.wait()
                raise RuntimeError("grading sandbox: the sandbox's init process did not start")
            root = f"/proc/{init}/root"
            with open(self.connection_file) as f:
                info = json.load(f)
            ports = [info[f"{c}_port"] for c in ("shell", "iopub", "stdin", "control", "hb")]
            links = await self._link_sockets(root, info["ip"], ports, proc)
            self.ip = info["ip"] = os.path.join(links, "k")
            info["course_sandbox_root"] = root
            client = os.path.join(self._sandbox_dir, "client.json")
            fd = os.open(client, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(info, f)
            self.connection_file = client

        async def _link_sockets(self, root, ip, ports, proc, wait_s: float = 120.0) -> str:
            """Wait for the kernel's sockets (``<ip>-<port>`` in the sandbox), hold each one's
            inode (``open_socket``) and link ``links/k-<port>`` to ``/proc/<this pid>/fd/<n>``:
            every client of this kernel, in this process or another of the grader's, connects
            through those links to the sockets the kernel bound, never to where a name in the
            sandbox points. RuntimeError when the kernel exits or binds no socket in ``wait_s``."""
            import asyncio

            self._close_sockets()
            links = os.path.join(self._sandbox_dir, "links")
            shutil.rmtree(links, ignore_errors=True)
            os.mkdir(links, 0o700)
            end = time.monotonic() + wait_s
            for port in ports:
                while True:
                    try:
                        fd = open_socket(root, f"{ip}-{port}")
                        break
                    except FileNotFoundError:
                        pass
                    except OSError as err:
                        proc.kill()
                        proc.wait()
                        self._close_sockets()  # nothing calls cleanup after a failed start
                        raise RuntimeError(f"grading sandbox: the kernel's socket is not one "
                                           f"({err})") from None  # fmt: skip
                    if proc.poll() is not None or time.monotonic() > end:
                        proc.kill()
                        proc.wait()
                        self._close_sockets()
                        raise RuntimeError("grading sandbox: the kernel did not start (it bound "
                                           f"no socket within {wait_s:.0f} s)")  # fmt: skip
                    await asyncio.sleep(0.01)
                self._socket_fds.append(fd)
                os.symlink(f"/proc/{os.getpid()}/fd/{fd}", os.path.join(links, f"k-{port}"))
            return links

        def _close_sockets(self):
            while self._socket_fds:
                os.close(self._socket_fds.pop())

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            self._close_sockets()
            await super()._async_cleanup_resources(restart)

        cleanup_resources = _async_cleanup_resources  # as AsyncKernelManager does

        async def _async_restart_kernel(self, now: bool = False, newports: bool = False, **kw):
            """Not supported: the connection file and ``ip`` now name the grader's links, which a
            relaunched kernel cannot bind. The grading code starts a new manager instead."""
            raise RuntimeError("a sandboxed kernel is not restarted: start a new kernel manager")

        restart_kernel = _async_restart_kernel

        def format_kernel_cmd(self, extra_arguments=None):
            cmd = super().format_kernel_cmd(extra_arguments)
            cwd = (self._launch_args or {}).get("cwd") or self._empty_cwd
            return bwrap_command(cmd, str(Path(cwd).resolve()), self._sandbox_dir, limits,
                                 lesson_dirs, self._cgroup)  # fmt: skip

    return SandboxedKernelManager
