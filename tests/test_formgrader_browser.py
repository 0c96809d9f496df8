"""Hostile student output cannot run script where the instructor or the student looks at it.

A throwaway course autogrades two students of 9.1 (course/instructor.py's autograde, sandboxed where
bubblewrap starts): ``alice_reference`` (the reference answers) and ``x_xss``, whose cells display
HTML with ``<script>``, ``<img onerror>``, ``<svg onload>``, ``<iframe srcdoc>``, JavaScript, raw
HTML, markdown and SVG outputs, print and raise HTML, call a graded function that displays HTML
inside a test cell, and write markdown (an added cell and a graded written answer) with
``<img onerror>`` and ``javascript:`` links. Every payload, if it runs, records its label on
``window.__pwned`` (of its frame, its parent and the top page), changes ``document.title``, writes
``localStorage`` and opens an alert.

Headless Chromium then opens, as the instructor and the student would see them, nbgrader's
formgrader page of x_xss's submission (a real ``jupyter server`` with the formgrader extension,
started from the course root) and x_xss's feedback HTML (file://), and checks every frame: no
label recorded, no title changed, no marker in localStorage, no dialog, no console message naming a
payload, no ``javascript:`` link left; and that the sanitised content is shown (the student's
printed text, the sanitiser's notes). Controls prove the detector: the same payload cells, executed
in a plain kernel and not sanitised, shown by the same formgrader (a submission ``ctl_raw``) and by
the feedback template, set every live payload's marker. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from course import instructor
from course.grading.sanitise import ACTIVE_NOTE, MARKDOWN_NOTE
from tests.conftest import ROOT, free_port
from tests.grading import students as S
from tests.nbgrader_course import BIN, TRUSTED, Course, graded_cells
from tests.test_browser import ARTIFACTS
from tests.test_notebook_sh import stop

# nbgrader's own Gradebook.add_submission (the control's submission) warns; nothing to fix here
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]
LESSON = "9.1"
XSS, REF, RAW = "x_xss", "alice_reference", "ctl_raw"
SENTINEL = "x_xss printed this plain text"
TOKEN = secrets.token_hex(16)


def js(label: str) -> str:
    """Script that, if it runs, leaves ``label`` everywhere the test looks (single quotes only, so
    it fits in a double-quoted attribute)."""
    return (
        "(function(){var L='LABEL';[window,window.parent,window.top].forEach(function(w){try{"
        "w.__pwned=(w.__pwned||[]).concat([L]);w.document.title='PWNED '+L}catch(e){}});"
        "try{localStorage.setItem('pwned-'+L,'1')}catch(e){}alert('PWNED '+L)})()"
    ).replace("LABEL", label)


def img(label: str) -> str:
    return f'<img src=x onerror="{js(label)}">'


# label -> code cell source. Each appended to the release; they run when x_xss is autograded.
PAYLOADS = {
    "html-script": f"display(HTML({'<script>' + js('html-script') + '</script>'!r}))",
    "html-img": f"display(HTML({img('html-img')!r}))",
    "html-svg": "display(HTML({!r}))".format('<svg onload="' + js("html-svg") + '"></svg>'),
    "html-iframe": "display(HTML({!r}))".format(
        '<iframe srcdoc="<script>' + js("html-iframe") + '</script>"></iframe>'
    ),
    "js-output": f"display(Javascript({js('js-output')!r}))",
    "raw-html": f'display({{"text/html": {img("raw-html")!r}}}, raw=True)',
    "markdown-output": f"display(Markdown({'**md** ' + img('markdown-output')!r}))",
    "svg-output": "display(SVG({!r}))".format(
        '<svg xmlns="http://www.w3.org/2000/svg" onload="' + js("svg-output") + '"></svg>'
    ),
    "result-html": f"HTML({img('result-html')!r})",
    "stdout-html": f"print({img('stdout-html')!r})",
    "error-html": f"raise ValueError({img('error-html')!r})",
}
# Inert even unsanitised, so the controls do not expect them: nbconvert escapes stream and error
# text and shows SVG output as an <img> (no script runs in an image).
INERT_ANYWAY = {"stdout-html", "error-html", "svg-output"}
# A graded function that displays HTML when the (trusted) test cell calls it.
TEST_CELL_FN = (
    "def p_info(p, G):\n"
    "    from IPython.display import HTML, display\n"
    f"    display(HTML({img('test-cell-html')!r}))\n"
    "    raise NotImplementedError()\n"
)


def markdown(label: str) -> str:
    return (
        f"A student's {label} {img(label + '-img')} and "
        f'<a href="javascript:{js(label + "-a-js")}">click me</a>.'
    )


LINK_LABELS = {"md-cell-a-js", "md-answer-a-js"}  # run only when clicked
LABELS = set(PAYLOADS) | {"test-cell-html", "md-cell-img", "md-answer-img"} | LINK_LABELS
IMPORTS = (
    f"from IPython.display import HTML, SVG, Javascript, Markdown, display\nprint({SENTINEL!r})"
)


def hostile_cells() -> list:
    cells = [new_code_cell(IMPORTS)]
    cells += [new_code_cell(code) for code in PAYLOADS.values()]
    return cells


def xss_notebook() -> nbformat.NotebookNode:
    nb = S.release_nb(LESSON)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "p_info":
            cell.source = TEST_CELL_FN
        elif gid == "w1_code_passport":
            cell.source = markdown("md-answer")
    nb.cells.insert(1, new_markdown_cell(markdown("md-cell")))
    nb.cells += hostile_cells()
    return nb


def raw_notebook(workdir: Path) -> nbformat.NotebookNode:
    """The payloads executed in a plain kernel, outputs untouched: what x_xss would show without
    the sanitiser."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(S.release_nb(LESSON).metadata))
    nb.cells = [new_markdown_cell(markdown("md-cell")), new_markdown_cell(markdown("md-answer"))]
    nb.cells += [*hostile_cells(), new_code_cell(TEST_CELL_FN), new_code_cell("p_info(0.5, 2)")]
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(workdir)}}).execute()  # fmt: skip
    return nb


def feedback_html(nb: nbformat.NotebookNode) -> str:
    """``nb`` through nbgrader's feedback template, as GenerateFeedback configures it."""
    import nbgrader
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    c = Config()
    c.HTMLExporter.template_name = "feedback"
    c.HTMLExporter.extra_template_basedirs = [str(templates)]
    c.HTMLExporter.extra_template_paths = [
        str(templates.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css")
    ]
    resources = {"nbgrader": {"notebook": LESSON, "score": 0, "max_score": 1, "late_penalty": 0}}
    return HTMLExporter(config=c).from_notebook_node(copy.deepcopy(nb), resources=resources)[0]


# ---------------------------------------------------------------------------------------------
# fixtures: the graded course, its formgrader, the browser


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    t0 = time.monotonic()
    tmp = tmp_path_factory.mktemp("formgrader-xss")
    course = Course(tmp / "course", [LESSON])
    release = course.release(LESSON)
    for student, nb in {REF: S.filled(LESSON), XSS: xss_notebook()}.items():
        dest = course.root / "submitted" / student / LESSON
        dest.mkdir(parents=True)
        nbformat.write(nb, dest / f"{LESSON}.ipynb")
        (dest / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")
    # check=False: no preflight; alice's full marks below prove the grader works
    report = instructor.autograde(LESSON, workers=2, timeout=60, root=course.root,
                                  trusted=TRUSTED, check=False)  # fmt: skip
    assert not report["failed"], report["failed"]
    full = graded_cells(release / f"{LESSON}.ipynb")
    got = course.scores(LESSON)
    assert {k: got[REF][k] for k in full} == full, f"the reference lost points: {got[REF]}"
    course.nbgrader("generate_feedback", LESSON, "--force")
    t_grade = time.monotonic() - t0

    # the control: an unsanitised copy of the payloads as a third submission in the gradebook
    raw = raw_notebook(tmp)
    dest = course.root / "autograded" / RAW / LESSON
    dest.mkdir(parents=True)
    nbformat.write(raw, dest / f"{LESSON}.ipynb")
    raw_feedback = tmp / "raw-feedback.html"
    raw_feedback.write_text(feedback_html(raw))
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        gb.add_student(RAW)
        gb.add_submission(LESSON, RAW)
        ids = {s: gb.find_submission_notebook(LESSON, LESSON, s).id for s in (XSS, RAW)}
    print(f"\n[formgrader-xss] graded 2 students + feedback in {t_grade:.0f} s, "
          f"control ready at {time.monotonic() - t0:.0f} s")  # fmt: skip
    return {"course": course, "ids": ids, "raw_feedback": raw_feedback,
            "feedback": course.root / "feedback" / XSS / LESSON / f"{LESSON}.html"}  # fmt: skip


@pytest.fixture(scope="module")
def formgrader(graded, tmp_path_factory):
    """``jupyter server`` from the course root, as the instructor starts it; its base URL."""
    course = graded["course"]
    tmp = tmp_path_factory.mktemp("server")
    port = free_port()
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", PYTHONPATH=str(ROOT),
               JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               IPYTHONDIR=str(tmp / "ipython"))  # fmt: skip
    log = tmp / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(BIN / "jupyter"), "server", "--no-browser", f"--port={port}",
             "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", "--allow-root",
             f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={course.root}"],
            cwd=course.root, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError("jupyter server exited:\n" + log.read_text()[-4000:])
            if time.time() > deadline:
                raise TimeoutError("jupyter server never answered:\n" + log.read_text()[-4000:])
            req = urllib.request.Request(f"{base}/api/status",
                                         headers={"Authorization": f"token {TOKEN}"})  # fmt: skip
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        yield {"base": base, "log": log}
    finally:
        stop(proc)


# ---------------------------------------------------------------------------------------------
# what a page let run

FRAME_STATE = """() => {
  const links = [...document.querySelectorAll('a[href], area[href]')]
    .filter(a => /^(java|vb)script:/i.test(a.protocol)).map(a => a.getAttribute('href'));
  let stored = [];
  try { stored = Object.keys(localStorage).filter(k => k.startsWith('pwned-')); } catch (e) {}
  return {pwned: window.__pwned || null, title: document.title, stored, links,
          text: document.body ? document.body.innerText : ''};
}"""


def visit(browser, url: str, shot: str | None = None, click_links: bool = False) -> dict:
    """Open ``url`` in a fresh context (nothing leaves 127.0.0.1), let it settle, and report what
    ran: labels recorded per frame, titles, localStorage markers, dialogs, console messages,
    page errors, script links left, and the text shown."""
    ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
    ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        ("http://127.0.0.1", "file:", "data:", "about:")) else route.abort())  # fmt: skip
    page = ctx.new_page()
    seen = {"dialogs": [], "console": [], "errors": []}
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    try:
        response = page.goto(url, wait_until="load", timeout=60_000)
        seen["status"] = response.status if response else None
        page.wait_for_timeout(2000)  # img onerror, iframes, late scripts
        if click_links:
            for frame in page.frames:
                for a in frame.locator("a[href^='javascript:' i]").all():
                    a.click(timeout=5000)
            page.wait_for_timeout(500)
        frames = []
        for frame in page.frames:
            try:
                frames.append({"url": frame.url, **frame.evaluate(FRAME_STATE)})
            except Exception as exc:  # noqa: BLE001 - a frame that navigated away
                frames.append({"url": frame.url, "error": str(exc), "pwned": None, "title": "",
                               "stored": [], "links": [], "text": ""})  # fmt: skip
        if shot:  # the viewport at the student's hostile cells (a full 9.1 page is ~4 MB)
            ARTIFACTS.mkdir(exist_ok=True)
            target = page.get_by_text(SENTINEL).first
            if target.count():
                target.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / shot))
    finally:
        ctx.close()
    fired: dict[str, list[str]] = {}
    for f in frames:
        for label in f["pwned"] or []:
            fired.setdefault(label, []).append(f"window.__pwned in {f['url'][:80]}")
        if f["title"].startswith("PWNED"):
            fired.setdefault(f["title"][6:], []).append(f"document.title in {f['url'][:80]}")
        for key in f["stored"]:
            fired.setdefault(key[6:], []).append(f"localStorage in {f['url'][:80]}")
    for msg in seen["dialogs"]:
        fired.setdefault(msg.removeprefix("PWNED "), []).append(f"dialog {msg!r}")
    for msg in seen["console"] + seen["errors"]:
        hits = [label for label in LABELS if label in msg] or (["?"] if "PWNED" in msg else [])
        for label in hits:
            fired.setdefault(label, []).append(f"console {msg[:160]!r}")
    print(f"[formgrader-xss] {url.split('?')[0][-60:]}: {len(frames)} frame(s), "
          f"{len(seen['dialogs'])} dialog(s), fired {sorted(fired)}")  # fmt: skip
    return {**seen, "frames": frames, "fired": fired,
            "links": [lk for f in frames for lk in f["links"]],
            "text": "\n".join(f["text"] for f in frames)}  # fmt: skip


def assert_inert(seen: dict, where: str) -> None:
    assert not seen["fired"], f"{where}: payloads ran: {json.dumps(seen['fired'], indent=1)}"
    assert not seen["dialogs"], f"{where}: dialogs opened: {seen['dialogs']}"
    for f in seen["frames"]:
        assert f["pwned"] is None, f"{where}: window.__pwned = {f['pwned']} in {f['url']}"
        assert not f["title"].startswith("PWNED"), f"{where}: title {f['title']!r} in {f['url']}"
        assert not f["stored"], f"{where}: localStorage {f['stored']} in {f['url']}"
    assert not seen["links"], f"{where}: script links left: {seen['links']}"
    # not an empty page: the student's plain output and the sanitiser's notes are shown
    for text in (SENTINEL, ACTIVE_NOTE, MARKDOWN_NOTE.strip("*\n")[:60]):
        assert text in seen["text"], f"{where}: {text!r} is not shown"


def assert_live(seen: dict, where: str, also_inert: tuple = ()) -> None:
    want = LABELS - INERT_ANYWAY - set(also_inert)
    assert set(seen["fired"]) == want, (
        f"{where}: the detector missed {sorted(want - set(seen['fired']))}, "
        f"or saw unexpected {sorted(set(seen['fired']) - want)}; console: {seen['console'][:8]}"
    )
    assert seen["dialogs"], f"{where}: no dialog seen"


# ---------------------------------------------------------------------------------------------
# the checks


def test_formgrader_shows_hostile_submission_inert(graded, formgrader, browser):
    url = f"{formgrader['base']}/formgrader/submissions/{graded['ids'][XSS]}/?token={TOKEN}"
    seen = visit(browser, url, shot="formgrader-xss.png")
    assert seen["status"] == 200, formgrader["log"].read_text()[-3000:]
    assert "Submission" in seen["text"] and "test_p_info" in seen["text"], "not the formgrader"
    assert_inert(seen, "formgrader")


def test_feedback_html_is_inert(graded, browser):
    assert graded["feedback"].exists(), "generate_feedback wrote no feedback for x_xss"
    seen = visit(browser, graded["feedback"].as_uri(), shot="feedback-xss.png")
    assert_inert(seen, "feedback")


def test_control_unsanitised_payloads_run_in_the_formgrader(graded, formgrader, browser):
    url = f"{formgrader['base']}/formgrader/submissions/{graded['ids'][RAW]}/?token={TOKEN}"
    seen = visit(browser, url, shot="formgrader-raw-control.png", click_links=True)
    assert seen["status"] == 200, formgrader["log"].read_text()[-3000:]
    assert_live(seen, "formgrader control")


def test_control_unsanitised_payloads_run_in_feedback_html(graded, browser):
    seen = visit(browser, graded["raw_feedback"].as_uri(), click_links=True)
    # the feedback page has no jQuery: a JavaScript output's first line, $('#...'), throws
    assert_live(seen, "feedback control", also_inert=("js-output",))
