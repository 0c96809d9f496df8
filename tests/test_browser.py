"""The student path in a real browser: ./notebook.sh serves a lesson, headless Chromium (driven by
Playwright) opens it, runs every cell through JupyterLab's own "Run All Cells" command, and checks
what a student would see. Screenshots land in test-artifacts/.

Skipped, with the reason, only when Chromium cannot start. test.sh installs Debian's chromium.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS, CHROMIUM, FLAGS, ROOT, free_port  # noqa: F401 - FLAGS: test_hub
from tests.test_notebook_sh import stop

pytestmark = pytest.mark.browser


def lab_settings(path: Path) -> Path:
    """JupyterLab user settings for the test: render every cell (JupyterLab 4 virtualises long
    notebooks, so off-screen cells have no prompt to read) and ask no news question."""
    tracker = path / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text('{"windowingMode": "none"}')
    news = path / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True, exist_ok=True)
    news.write_text('{"fetchNews": "false"}')
    return path


class Server:
    """./notebook.sh <lesson> --no-browser on a free port, with a throwaway workspace."""

    def __init__(self, lesson: str, workspace: Path, release: Path | None = None):
        self.port = free_port()
        env = dict(os.environ, COURSE_WORKSPACE=str(workspace), COURSE_SMOKE="1",
                   JUPYTERLAB_SETTINGS_DIR=str(lab_settings(workspace.parent / "lab-settings")),
                   JUPYTERLAB_WORKSPACES_DIR=str(workspace.parent / "lab-workspaces"))  # fmt: skip
        if release:
            env["COURSE_RELEASE_DIR"] = str(release)
        self.proc = subprocess.Popen(
            [str(ROOT / "notebook.sh"), lesson, "--no-browser", "--port", str(self.port)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 900) -> str:
        # First use may build BaseLM (9.5); the URL is printed once the server listens.
        deadline = time.time() + timeout
        pattern = re.compile(rf"(http://127\.0\.0\.1:{self.port}/lab\S*token=\w+)")
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                if self.proc.poll() is not None:
                    raise RuntimeError("notebook.sh exited:\n" + "".join(self.lines[-40:]))
                continue
            self.lines.append(line)
            m = pattern.search(line)
            if m:
                return m.group(1)
        raise TimeoutError("JupyterLab printed no URL:\n" + "".join(self.lines[-40:]))

    def close(self):
        self.proc.stdout.close()
        stop(self.proc)


def _kernel_idle(page, timeout_s: float) -> bool:
    """Wait until the status bar reports the notebook's kernel as idle ("Python 3 ... | Idle")."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if re.search(r"\(ipykernel\) \| Idle", page.locator("#jp-main-statusbar").inner_text()):
            return True
        time.sleep(1)
    return False


def open_notebook(browser, url: str):
    """Open the lesson and wait for its kernel. A kernel that has not come up after two minutes is
    given one page reload (the server then starts the session's kernel again)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    for attempt in range(2):
        page.reload() if attempt else page.goto(url)
        try:
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "open-timeout.png"))
            raise
        dialog = page.locator(".jp-Dialog:has-text('Select Kernel') button:has-text('Select')")
        if dialog.count():  # a notebook without kernelspec metadata asks; the lessons never do
            dialog.first.click()
        if _kernel_idle(page, 120):
            return page
    raise TimeoutError(
        "the notebook's kernel never became idle: "
        + page.locator("#jp-main-statusbar").inner_text()
    )


def _prompts(page) -> list[str]:
    return page.eval_on_selector_all(
        ".jp-CodeCell .jp-InputPrompt", "els => els.map(e => e.textContent.trim())"
    )


def _dialogs(page) -> list[str]:
    return page.locator(".jp-Dialog").all_inner_texts()


def run_all(page, timeout_s: float, stall_s: float = 120):
    """JupyterLab's Run > Run All Cells, then wait until every code cell has run. If nothing has
    started after ``stall_s`` (a kernel that never came up), restart the kernel and run all once
    more; on failure, save a screenshot and report the prompts and any open dialog."""
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
    start, deadline, retried = time.time(), time.time() + timeout_s, False
    time.sleep(2)
    while time.time() < deadline:
        prompts = _prompts(page)
        if not any(p in ("[*]:", "[ ]:", "[]:", "") for p in prompts):
            return prompts
        started = any(re.fullmatch(r"\[(\d+|\*)\]:", p) for p in prompts)
        if not started and not retried and time.time() - start > stall_s:
            retried = True
            page.keyboard.press("Escape")  # close a menu or dialog that may be in the way
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-itemLabel:has-text('Restart Kernel and Run All')")
            page.locator(".jp-Dialog .jp-mod-accept").click()
        time.sleep(2)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "run-all-timeout.png"))
    raise TimeoutError(
        f"Run All did not finish: prompts {_prompts(page)}, dialogs {_dialogs(page)}"
    )


def error_outputs(page) -> list[str]:
    texts = page.eval_on_selector_all(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
        "els => els.map(e => e.textContent)",
    )
    return [t for t in texts if "Traceback" in t or "Error" in t]


@pytest.mark.parametrize("lesson,budget_s", [("9.1", 600), ("9.5", 900)])
def test_lesson_runs_in_the_browser(browser, tmp_path, lesson, budget_s):
    if not (ROOT / "release" / lesson).exists():
        pytest.skip(f"lesson {lesson} is not released yet")
    # The source notebook (solutions in place) is what a student's finished copy looks like;
    # serve it from a throwaway workspace so every graded cell runs.
    release = tmp_path / "release"
    (release / lesson).mkdir(parents=True)
    src = ROOT / "source_notebooks" / lesson / f"{lesson}.ipynb"
    (release / lesson / f"{lesson}.ipynb").write_bytes(src.read_bytes())
    server = Server(lesson, tmp_path / "ws", release)
    try:
        page = open_notebook(browser, server.url)
        run_all(page, budget_s)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"lesson-{lesson}-end.png"))
        figure = page.locator(".jp-OutputArea-output[data-mime-type='image/png'] img").first
        figure.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"lesson-{lesson}-figure.png"))
        assert not error_outputs(page), error_outputs(page)[:2]
        assert page.locator(".jp-OutputArea-output[data-mime-type='image/png'] img").count() >= 1
        bars = page.locator(".jp-OutputArea-output .widget-hprogress")
        assert bars.count() >= 1, "no progress-bar widget rendered (text fallback?)"
        check = page.locator(".selfcheck").first
        check.scroll_into_view_if_needed()
        check.locator("input[type='radio'], input[type='text']").first.click()
        if check.locator("input[type='text']").count():
            check.locator("input[type='text']").first.fill("0")
        check.locator("button:has-text('Check')").click()
        page.wait_for_timeout(500)
        verdict = check.inner_text()
        assert "Correct." in verdict or "Not quite" in verdict, verdict
        assert "Why:" in verdict
        check.screenshot(path=str(ARTIFACTS / f"lesson-{lesson}-selfcheck.png"))
    finally:
        server.close()


def test_wrong_answer_shows_a_helpful_assertion(browser, tmp_path):
    lesson = "9.2"
    if not (ROOT / "release" / lesson).exists():
        pytest.skip("lesson 9.2 is not released yet")
    server = Server(lesson, tmp_path / "ws")
    try:
        page = open_notebook(browser, server.url)
        # The graded cell for group advantages: replace the stub with a wrong answer (no std
        # scaling), typed on one line so the editor's auto-indent cannot change it.
        cell = page.locator(".jp-CodeCell", has_text="def group_advantages").first
        cell.scroll_into_view_if_needed()
        cell.locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.type(
            "def group_advantages(rewards, eps=1e-6): return rewards - rewards.mean(axis=-1, keepdims=True)"
        )
        # Run All: everything above runs, then the visible tests of this cell fail and Run All
        # stops there, as it does for a student.
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        test_cell = cell.locator("xpath=following-sibling::div[contains(@class,'jp-CodeCell')][1]")
        test_cell.locator(".jp-OutputArea-output").first.wait_for(timeout=300_000)
        page.wait_for_timeout(1000)
        output = test_cell.locator(".jp-OutputArea").inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        test_cell.screenshot(path=str(ARTIFACTS / "wrong-answer-9.2.png"))
        assert "AssertionError" in output, output
        message = output.split("AssertionError", 1)[1]
        assert len(message.strip()) > 20, f"the assertion must say what is wrong: {output!r}"
    finally:
        server.close()
