"""The class run's warm verdict process (course/grading/zygote.py): a fork of it grades exactly as a
verdict process of its own would, dies with the client that stands for it, carries the memory cap,
serves only its lesson and only the grader's own processes, and ends with the run that started it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.build_lessons import trusted_tests
from course.grading import zygote

ROOT = Path(__file__).resolve().parent.parent
CAP = 3 << 30


def _client(lesson: str, sock: str, cap: int = CAP) -> list[str]:
    return [sys.executable, "-m", "course.grading.zygote", "client", lesson, sock, str(cap)]


DIRECT = [sys.executable, "-m", "course.grading.verdict"]


def _ask(cmd: list[str], request: dict | None, timeout: float = 180) -> tuple[int, str]:
    line = "" if request is None else json.dumps(request) + "\n"
    out = subprocess.run(cmd, input=line, capture_output=True, text=True, cwd=ROOT,
                         env=zygote.verdict_env(), timeout=timeout)  # fmt: skip
    return out.returncode, out.stdout


def _pids(sock: str) -> list[int]:
    log = Path(sock).parent / "log"
    return [int(ln.split()[-1]) for ln in log.read_text().splitlines() if " pid " in ln]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pid: int, seconds: float = 15) -> bool:
    end = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


@pytest.fixture(scope="module")
def warm():
    with zygote.warm_process("9.1") as (sock, status):
        assert os.path.exists(sock), "warm_process yielded before its socket existed"
        assert oct(os.stat(Path(sock).parent).st_mode & 0o777) == "0o700"
        yield sock, lambda: status()[0]


@pytest.fixture(scope="module")
def kernel():
    from jupyter_client.manager import start_new_kernel

    from course.grading.boundary import install_server

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        yield km, install_server
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.parametrize("request_", [None, {"cells": ["x"]}, {"connection_file": "/nonexistent"}])
def test_a_fork_answers_a_bad_request_as_the_verdict_itself_does(warm, request_):
    sock, forks = warm
    before = forks()
    got = _ask(_client("9.1", sock), request_)
    want = _ask([*DIRECT, "9.1", "--wait"], request_)
    assert got == want
    assert forks() == before + 1, "the request was not served by a fork of the warm process"


def test_a_fork_grades_a_kernel_as_the_verdict_itself_does(warm, kernel):
    """A real kernel that defines none of 9.1's functions: both fail every named cell, by
    NameError, in the same order and with the same messages."""
    km, install_server = kernel
    sock, forks = warm
    before = forks()
    cells = list(trusted_tests("9.1"))[:2]
    outs = []
    for cmd in (_client("9.1", sock), [*DIRECT, "9.1", "--wait"]):
        server = install_server(km.connection_file, timeout=60)
        req = {"connection_file": km.connection_file, "cells": cells, "timeout": 20,
               "server": server}  # fmt: skip
        rc, out = _ask(cmd, req)
        outs.append((rc, [json.loads(line) for line in out.splitlines()]))
    assert forks() == before + 1, "the client's request was not served by a fork"
    assert outs[0] == outs[1]
    rc, got = outs[0]
    assert rc == 0 and [v["grade_id"] for v in got] == cells, got
    assert all(not v["passed"] and "NameError" in v["message"] for v in got), got


def _new_fork(sock: str, forks, before: int) -> int:
    end = time.monotonic() + 30
    while forks() < before + 1 and time.monotonic() < end:
        time.sleep(0.05)
    pid = _pids(sock)[before]
    zpid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    assert Path(f"/proc/{zpid}/cmdline").read_bytes().split(b"\0")[3:5] == [b"serve", b"9.1"]
    return pid


def test_a_fork_holds_what_a_spawned_verdict_would_and_dies_with_its_client(warm):
    """Its memory cap, stderr to /dev/null, no nbgrader variable, no descriptor of the warm
    process (the listening socket, its log, other clients'); killing the client ends it."""
    sock, forks = warm
    before = forks()
    env = {**zygote.verdict_env(), "NBGRADER_TEST": "x"}
    proc = subprocess.Popen(_client("9.1", sock), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            cwd=ROOT, env=env)  # fmt: skip
    try:
        child = _new_fork(sock, forks, before)
        end, line = time.monotonic() + 30, ""
        while time.monotonic() < end:  # the fork sets its cap first thing
            limits = Path(f"/proc/{child}/limits").read_text()
            line = next(ln for ln in limits.splitlines() if ln.startswith("Max address space"))
            if line.split()[3] == str(CAP):
                break
            time.sleep(0.05)
        assert line.split()[3] == str(CAP), line
        fds = {
            int(f): os.readlink(f"/proc/{child}/fd/{f}") for f in os.listdir(f"/proc/{child}/fd")
        }
        assert fds[2] == os.devnull, fds
        assert not [t for t in fds.values() if t.startswith(str(Path(sock).parent))], fds
        assert sum(t.startswith("socket:") for t in fds.values()) == 1, fds  # its client's only
        environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
        assert not [e for e in environ if e.startswith(b"NBGRADER_")]
    finally:
        proc.kill()
        proc.wait()
    assert _wait_gone(child), "the fork outlived the client that stands for it"


def test_another_lessons_request_or_no_warm_process_falls_back_to_a_verdict_of_its_own(
    warm, tmp_path
):
    sock, forks = warm
    before = forks()
    req = {"connection_file": "/nonexistent"}
    want = _ask([*DIRECT, "9.2", "--wait"], req)
    assert _ask(_client("9.2", sock), req) == want  # a 9.1 process never grades 9.2
    assert _ask(_client("9.2", str(tmp_path / "none")), req) == want
    assert forks() == before


@pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")
def test_a_process_in_another_pid_namespace_is_refused(warm):
    """The sandbox cannot see the socket's folder; were it to, its pid namespace is another one."""
    sock, forks = warm
    probe = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "true"],
                           capture_output=True)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("bubblewrap cannot make a pid namespace here")
    before = forks()
    req = {"connection_file": "/nonexistent"}
    cmd = ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--", *_client("9.1", sock)]
    assert _ask(cmd, req) == _ask([*DIRECT, "9.1", "--wait"], req)  # answered by its own verdict
    assert forks() == before
    assert "zygote: refused (peer)" in (Path(sock).parent / "log").read_text()


@pytest.mark.parametrize("how", ["stdin", "parent"])
def test_the_warm_process_ends_with_the_process_that_started_it(tmp_path, how):
    """A class run killed outright leaves no warm process behind: its stdin (a pipe from the run)
    ends, or, started without one, its parent changes (checked every 2 s)."""
    sock = str(tmp_path / "s")
    stdin = "subprocess.PIPE" if how == "stdin" else "subprocess.DEVNULL"
    prog = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-m', 'course.grading.zygote', 'serve', '9.1', "
        f"{sock!r}], stdin={stdin}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(p.pid, flush=True)\n"
        "import os, time\n"
        f"while not os.path.exists({sock!r}): time.sleep(0.02)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, cwd=ROOT,
                         env=zygote.verdict_env(), timeout=120)  # fmt: skip
    pid = int(out.stdout.split()[0])
    try:
        assert _wait_gone(pid, 30), "the warm process outlived the run that started it"
        assert not os.path.exists(sock), "it left its socket behind"
    finally:
        if _alive(pid):
            os.kill(pid, 9)


def test_the_folder_is_outside_the_sandboxs_mounts(monkeypatch, tmp_path):
    from course.grading import sandbox

    monkeypatch.setattr(sandbox, "_ro_paths", lambda dirs: [tmp_path])
    monkeypatch.setenv("TMPDIR", str(tmp_path / "t"))
    (tmp_path / "t").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    folder = zygote.private_folder()
    try:
        assert not folder.startswith(str(tmp_path)), folder
    finally:
        os.rmdir(folder)
