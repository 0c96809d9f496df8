"""Shared fixtures: the repository root, the venv's Python, a free loopback port, headless Chromium."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# The end-to-end files: real nbgrader classes, notebook runs, servers, browsers, TRL on BaseLM,
# installs. `./test.sh --fast` leaves them out (marker "e2e"); `./test.sh` and CI run everything.
END_TO_END = {
    "test_autograder.py",
    "test_baselm.py",
    "test_browser.py",
    "test_formgrader_browser.py",
    "test_hub.py",
    "test_lab_record.py",
    "test_lessons.py",
    "test_level_b.py",
    "test_mutation.py",
    "test_notebook_sh.py",
    "test_sandbox.py",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in END_TO_END:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", autouse=True)
def one_thread():
    """The tests run tiny models, which are far faster on one torch thread, above all on a shared
    2-core machine (notebook kernels and subprocesses choose their own)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


_HANDED_OUT: set[int] = set()


def _ephemeral_range() -> tuple[int, int]:
    try:
        lo, hi = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(lo), int(hi)
    except (OSError, ValueError):
        return (49152, 65535) if sys.platform == "darwin" else (32768, 60999)  # the defaults


def free_port() -> int:
    """A loopback port that is free now, never handed out before in this test process, and outside
    the kernel's ephemeral range. Binding port 0 draws from that range, which is also where every
    outgoing connection and every Jupyter kernel's ports come from: two such draws made in a row
    can return the same number (CI once gave the Hub's proxy and its API one port), and any process
    may take it between our close and the server's bind."""
    import random

    lo, hi = _ephemeral_range()
    rng = random.Random()
    candidates = [p for p in range(10000, 65536) if not lo <= p <= hi]
    if len(candidates) < 1000:  # a host whose ephemeral range covers nearly everything: inside it
        candidates = list(range(max(1024, lo), hi + 1))  # (still distinct, still free now)
    for port in rng.sample(candidates, len(candidates)):
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise RuntimeError("no free loopback port left")


# --- headless Chromium (Debian's; test.sh installs it), driven by Playwright
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        except Exception as exc:  # noqa: BLE001 - any launch failure means "cannot start"
            pytest.skip(f"Chromium could not start: {exc}")
        yield b
        b.close()


@pytest.fixture()
def bundle(tmp_path: Path) -> dict[str, str]:
    """Two fixture lessons (9.0, 9.10) in a release folder and an empty workspace: the environment
    that points notebook.sh and the course command at them."""
    import nbformat

    release = tmp_path / "release"
    for lesson, title in [("9.0", "Fixture lesson"), ("9.10", "Another fixture")]:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {lesson} {title}"),
                    nbformat.v4.new_code_cell("x = 1")]  # fmt: skip
        (release / lesson).mkdir(parents=True)
        nbformat.write(nb, release / lesson / f"{lesson}.ipynb")
    env = dict(os.environ, COURSE_RELEASE_DIR=str(release), COURSE_WORKSPACE=str(tmp_path / "ws"))
    return env
