"""Output that cannot hurt (course/grading/sanitise.py): hostile outputs, written answers and
metadata come out inert, in the notebook and in the HTML that nbgrader's feedback and formgrader
templates make of it; ordinary content survives; outputs are bounded with a visible marker; grades
do not change. No kernel: notebooks are built with nbformat.v4.new_output."""

from __future__ import annotations

import base64
import copy
import json
import os
import re
from html.parser import HTMLParser

import nbformat
import nbgrader
import pytest
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import (
    new_code_cell,
    new_markdown_cell,
    new_notebook,
    new_output,
    new_raw_cell,
)
from nbgrader.preprocessors import IgnorePattern
from nbgrader.utils import determine_grade
from traitlets.config import Config

from course.grading.sanitise import (
    ACTIVE_NOTE,
    MARKDOWN_NOTE,
    SanitiseOutputs,
    html_problems,
    render_markdown,
    slow_lines,
    source_problems,
    truncation_marker,
)
from tests.conftest import ROOT

# --- hostile input, as a class ----------------------------------------------------------------------

# HTML and script payloads: each goes into every output kind and every markdown/raw placement.
PAYLOADS = {
    "script": "<script>alert(1)</script>",
    "script-src": "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "img-onerror": "<img src=x onerror=alert(1)>",
    "img-slash": "<img/src/onerror=alert(1)>",
    "body-onload": "<body onload=alert(1)>",
    "svg-onload": "<svg onload=alert(1)>",
    "svg-script": "<svg><script>alert(1)</script></svg>",
    "svg-use": '<svg><use href="data:image/svg+xml,<svg id=x onload=alert(1)>#x"/></svg>',
    "iframe-js": '<iframe src="javascript:alert(1)"></iframe>',
    "iframe-srcdoc": '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    "a-js": '<a href="javascript:alert(1)">x</a>',
    "a-js-case": '<a href="JaVaScRiPt:alert(1)">x</a>',
    "a-js-tab": '<a href="java&#x09;script:alert(1)">x</a>',
    "a-js-entity": '<a href="&#106;avascript:alert(1)">x</a>',
    "a-js-colon-entity": '<a href="javascript&colon;alert(1)">x</a>',
    "a-data-html": '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    "object": '<object data="javascript:alert(1)"></object>',
    "embed": '<embed src="javascript:alert(1)">',
    "style-tag": "<style>@import 'javascript:alert(1)';</style>",
    "style-attr": '<div style="background:url(javascript:alert(1))">x</div>',
    "mxss-math": "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "noscript": '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "details-ontoggle": "<details open ontoggle=alert(1)>",
    "input-onfocus": "<input autofocus onfocus=alert(1)>",
    "form-action": '<form action="javascript:alert(1)"><button>x</button></form>',
    "button-formaction": '<button formaction="javascript:alert(1)">x</button>',
    "base-href": '<base href="javascript:alert(1)//">',
    "meta-refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "comment-breakout": "<!--><img src=x onerror=alert(1)>-->",
    "attr-breakout": '"><script>alert(1)</script>',
    "container-breakout": "</pre></div></div><script>alert(1)</script>",
    "template": "<template><script>alert(1)</script></template>",
    "textarea": "<textarea></textarea><img src=x onerror=alert(1)>",
}
# Markdown's own ways to make a link or a block that runs: only in markdown cells.
MARKDOWN_PAYLOADS = {
    "md-link-js": "[x](javascript:alert(1))",
    "md-link-entity": "[x](&#106;avascript:alert(1))",
    "md-image-js": "![x](javascript:alert(1))",
    "md-autolink-js": "<javascript:alert(1)>",
    "md-reference-js": "[x]\n\n[x]: javascript:alert(1)",
    "md-link-data": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "md-files-prefix": "[x](files/javascript:alert(1)) ![y](files/javascript:alert(1))",
    "md-mermaid": "```mermaid\ngraph TD; A-->B\n<img src=x onerror=alert(1)>\n```",
    "md-math-href": "$\\href{javascript:alert(1)}{x}$",
    "md-relative-link": "[my interactive plot](plot.html)",  # a submitted file, server's origin
    "md-missing-attachment": "![x](attachment:nothere.png)",  # nbconvert would raise
}
ACTIVE_MIMES = [
    "text/html",
    "application/javascript",
    "text/javascript",
    "image/svg+xml",
    "text/markdown",
    "text/latex",
    "application/vnd.jupyter.widget-view+json",
    "application/x-unknown",
]
# What must not survive (the brief's list): in student-controlled notebook fields, and in HTML tags.
FORBIDDEN = [
    re.compile(p, re.I) for p in (r"<script", r"on\w+=", r"javascript:", r"<svg", r"<iframe")
]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(64)).decode()
GIF = base64.b64encode(b"GIF89a" + bytes(64)).decode()


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def stdout(text: str) -> nbformat.NotebookNode:
    return new_output("stream", name="stdout", text=text)


def stderr(text: str) -> nbformat.NotebookNode:
    return new_output("stream", name="stderr", text=text)


def error(text: str) -> nbformat.NotebookNode:
    return new_output("error", ename="AssertionError", evalue=text, traceback=[text])


def result(text: str) -> nbformat.NotebookNode:
    return new_output("execute_result", data={"text/plain": text}, execution_count=1)


def display(**data) -> nbformat.NotebookNode:
    return new_output("display_data", data={k.replace("_", "/", 1): v for k, v in data.items()})


def code_notebook(*outputs: list) -> nbformat.NotebookNode:
    """A notebook of code cells, one per list of outputs."""
    return new_notebook(cells=[new_code_cell("f()", outputs=list(o)) for o in outputs])


def markdown_placements(p: str) -> list[str]:
    if p in MARKDOWN_PAYLOADS.values():
        return [p, f"Before.\n\n{p}\n\nAfter, with $a<b$."]
    return [
        f"Answer: {p} end.",
        f"{p}\n\nAfter.",
        f"| a | b |\n|---|---|\n| {p} | 2 |",
        f"- item {p}",
        f"> quoted {p}",
        f"# Title {p}",
        f"Text [link {p}](https://example.org) and ![alt {p}](https://example.org/a.png)",
    ]


def hostile_notebook(p: str) -> nbformat.NotebookNode:
    """One notebook with ``p`` in every place a submission controls."""
    written = new_markdown_cell(f"My answer: {p}")
    written.metadata["nbgrader"] = {
        "grade": True,
        "solution": True,
        "grade_id": "written",
        "points": 1,
        "score": 0,
        "locked": False,
        "schema_version": 3,
    }
    cells = [written] + [new_markdown_cell(s) for s in markdown_placements(p)]
    attached = new_markdown_cell(
        "![a](attachment:a.svg) ![b](attachment:b.png) ![c](attachment:c.png)"
    )
    attached["attachments"] = {
        "a.svg": {"image/svg+xml": b64(f"<svg xmlns='http://www.w3.org/2000/svg'>{p}</svg>")},
        "b.png": {"image/png": b64(p)},  # not a PNG
        "c.png": {"image/png": PNG, "text/html": b64(p)},
    }
    cells += [attached, new_raw_cell(p, metadata={"raw_mimetype": "text/html"}), new_raw_cell(p)]
    outputs = [
        new_output(
            "display_data",
            data={mime: p}
            if "widget" not in mime
            else {mime: {"model_id": p, "version_major": 2, "version_minor": 0}},
        )
        for mime in ACTIVE_MIMES
    ]
    outputs += [
        new_output("display_data", data={"text/html": p, "text/plain": "PLAIN-ALT"}),
        new_output("execute_result", data={"text/html": p}, execution_count=1),
        new_output("display_data", data={"image/png": p}),
        new_output(
            "display_data",
            data={"image/png": PNG, "image/svg+xml": f"<svg>{p}</svg>"},
            metadata={
                "image/png": {"width": p, "height": p, "alt": p},
                "width": p,
                "filenames": {"image/png": p},
                "isolated": True,
                "alt": p,
            },
        ),
        new_output("stream", name="stdout", text=f"STREAM-TEXT {p}\n"),
        new_output("stream", name=p, text="odd name\n"),
        new_output("display_data", data={"text/plain": f"PLAIN-TEXT {p}"}),
        new_output("error", ename=f"Error{p}", evalue=f"EVALUE {p}", traceback=[f"TB {p}"]),
    ]
    code = new_code_cell("show(x)", outputs=outputs, execution_count=1)
    nb = new_notebook(cells=[*cells, code])  # (it validates: the invalid fields come after)
    code["execution_count"] = p
    code["id"] = p
    code.metadata["tags"] = [p, "fine-tag"]
    code.metadata["alt"] = p
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {"m": {"state": {"value": p}}}}
    }
    return nb


def sanitise(nb, **limits):
    nb, _ = SanitiseOutputs(**limits).preprocess(nb, {})
    return nb


def student_controlled_json(nb) -> str:
    """The notebook's student-controlled fields that a renderer could treat as markup: markdown and
    raw sources, attachments, every output field except text (stream text, text/plain, error text
    are always rendered escaped: they are checked in the HTML instead), output and cell metadata,
    cell ids, execution counts, the notebook's metadata."""
    parts = [json.dumps(nb.metadata)]
    for cell in nb.cells:
        parts += [
            json.dumps(cell.get("id")),
            json.dumps(cell.metadata),
            json.dumps(cell.get("attachments", {})),
        ]
        if cell.cell_type in ("markdown", "raw"):
            parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(json.dumps(out.get("metadata", {})))
            parts.append(json.dumps(out.get("execution_count")))
            parts.append(json.dumps(out.get("name")))
            parts += [json.dumps(v) for k, v in out.get("data", {}).items() if k != "text/plain"]
    return "\n".join(parts)


# --- rendering as nbgrader does -------------------------------------------------------------------

TEMPLATES = os.path.join(
    os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"
)
RESOURCES = {
    "nbgrader": {"notebook": "nb", "score": 0, "max_score": 1, "late_penalty": 0},
    "assignment_id": "a",
    "notebook_id": "nb",
    "submission_id": "s",
    "index": 0,
    "total": 1,
    "base_url": "/base",
    "student": "st",
    "last_name": "L",
    "first_name": "F",
    "notebook_path": "autograded/st/a/nb.ipynb",
}


@pytest.fixture(scope="module", params=["feedback", "formgrade"])
def exporter(request):
    """HTMLExporter configured as nbgrader's GenerateFeedback (feedback) and formgrader (formgrade)
    configure it."""
    c = Config()
    c.HTMLExporter.template_name = request.param
    c.HTMLExporter.extra_template_basedirs = [TEMPLATES]
    c.HTMLExporter.extra_template_paths = [
        os.path.join(TEMPLATES, "..", "static", "node_modules", "bootstrap", "dist", "css")
    ]
    exp = HTMLExporter(config=c)
    # what the template itself holds (scripts, the formgrader's buttons): the same notebook, harmless
    exp.baseline = render(exp, sanitise(hostile_notebook("harmless")))
    return exp


def render(exp, nb) -> str:
    html, _ = exp.from_notebook_node(copy.deepcopy(nb), resources=copy.deepcopy(RESOURCES))
    return html


class _Profile(HTMLParser):
    """What in a page could run or navigate: script elements and their text, active elements,
    event-handler attributes, URL attributes that are not http(s)/mailto/#fragment, start tags."""

    ACTIVE = {
        "script",
        "iframe",
        "frame",
        "object",
        "embed",
        "svg",
        "math",
        "style",
        "base",
        "form",
        "meta",
        "link",
        "template",
        "button",
        "textarea",
    }
    URL_ATTRS = {"href", "src", "action", "formaction", "data", "xlink:href", "srcset", "poster"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list = []
        self.tags: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(self.get_starttag_text())
        if tag in self.ACTIVE:
            self.found.append((tag, tuple(attrs)))
        self._in_script = tag == "script"
        for name, value in attrs:
            v = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if name.startswith("on") or name == "srcdoc":
                self.found.append(("handler", tag, name))
            elif name in self.URL_ATTRS and not self._url_ok(tag, name, v):
                self.found.append(("url", tag, name, value))
            elif name == "style" and not re.fullmatch(r"text-align:(left|right|center);?", v):
                self.found.append(("style", tag, value))

    handle_startendtag = handle_starttag

    @staticmethod
    def _url_ok(tag: str, name: str, v: str) -> bool:
        if re.match(r"(https?:|mailto:|#|$)", v):
            return True
        if tag == "img" and name == "src":  # an image may be embedded, or a relative path
            return bool(re.match(r"data:image/(png|jpeg|gif);base64,", v)) or not re.match(
                r"[a-z][a-z0-9+.-]*:", v
            )
        return False

    def handle_data(self, data):
        if self._in_script:
            self.found.append(("script-text", data))

    def handle_endtag(self, tag):
        self._in_script = False


try:  # the WHATWG parsing algorithm (as a browser parses), vendored in bleach (nbconvert needs it)
    from bleach._vendor import html5lib
except ImportError:  # pragma: no cover
    html5lib = None


def browser_view(html: str, fragment: bool = False) -> list:
    """What html5lib's tree of the page holds that could run or navigate: active elements, event
    handlers, URLs that are not http(s)/mailto/#fragment (images: also data:image and relative)."""
    if html5lib is None:
        return []
    parse = html5lib.parseFragment if fragment else html5lib.parse
    tree = parse(html, treebuilder="etree", namespaceHTMLElements=False)
    found = []
    for el in tree.iter():
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.split("}")[-1]
        if tag in _Profile.ACTIVE:
            found.append(("html5lib", tag, tuple(sorted(el.attrib.items()))))
        for name, value in el.attrib.items():
            name = name.split("}")[-1].lower()
            v = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if name.startswith("on") or name == "srcdoc":
                found.append(("html5lib-handler", tag, name))
            elif name in _Profile.URL_ATTRS and not _Profile._url_ok(tag, name, v):
                found.append(("html5lib-url", tag, name, value))
    return found


def profile(html: str):
    p = _Profile()
    p.feed(html)
    p.close()
    p.found += browser_view(html)
    tags = "".join(p.tags)
    counts = [len(r.findall(tags)) for r in FORBIDDEN] + [
        len(re.findall(t, html, re.I)) for t in ("<script", "<svg", "<iframe", "<object", "<embed")
    ]
    return sorted(map(repr, p.found)), counts


def assert_inert_html(exp, html: str) -> None:
    """Nothing in the page can run or navigate beyond what the template itself holds."""
    found, counts = profile(html)
    base_found, base_counts = profile(exp.baseline)
    extra = sorted(set(found) - set(base_found))
    assert not extra, f"active content in the {exp.template_name} HTML: {extra[:5]}"
    assert all(n <= b for n, b in zip(counts, base_counts)), (counts, base_counts)


# --- the tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*PAYLOADS, *MARKDOWN_PAYLOADS])
def test_hostile_content_is_inert_in_the_notebook_and_in_the_html(name, exporter):
    p = {**PAYLOADS, **MARKDOWN_PAYLOADS}[name]
    nb = sanitise(hostile_notebook(p))
    controlled = student_controlled_json(nb)
    for rx in FORBIDDEN:
        assert not rx.search(controlled), f"{rx.pattern} survives in the notebook: {controlled!r}"
    assert "widgets" not in nb.metadata
    code = nb.cells[-1]
    assert code.execution_count is None and code.metadata["tags"] == ["fine-tag"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", code.id) and "alt" not in code.metadata
    for out in code.outputs:
        assert set(out.get("data", {})) <= {"text/plain", "image/png"}, out
    assert nbformat.validate(nb) is None
    html = render(exporter, nb)  # also: a missing attachment no longer makes nbconvert raise
    assert_inert_html(exporter, html)
    # the student's text stays visible, as text
    assert "STREAM-TEXT" in html and "PLAIN-TEXT" in html and "PLAIN-ALT" in html
    assert "EVALUE" in json.dumps(code.outputs[-1]) and "TB " in html


def test_every_removed_output_kind_leaves_a_note_or_its_plain_text():
    nb = sanitise(hostile_notebook(PAYLOADS["script"]))
    outs = nb.cells[-1].outputs
    for out in outs[: len(ACTIVE_MIMES)]:
        assert out.data == {"text/plain": ACTIVE_NOTE}
    assert outs[len(ACTIVE_MIMES)].data == {"text/plain": "PLAIN-ALT"}  # html gone, plain kept
    assert outs[len(ACTIVE_MIMES) + 1].output_type == "execute_result"
    assert outs[len(ACTIVE_MIMES) + 1].data == {"text/plain": ACTIVE_NOTE}
    assert "image/png" not in outs[len(ACTIVE_MIMES) + 2].data  # not base64 of a PNG
    image = outs[len(ACTIVE_MIMES) + 3]
    assert image.data == {"image/png": PNG} and image.metadata == {}  # no width="<script..."
    assert [o.name for o in outs if o.output_type == "stream"] == ["stdout", "stdout"]
    assert outs[-1].output_type == "error" and outs[-1].evalue == "EVALUE " + PAYLOADS["script"]
    attached = nb.cells[-4]
    assert attached["attachments"] == {"c.png": {"image/png": PNG}}


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_payload_in_code_or_math_is_shown_as_text_and_the_cell_left_alone(name):
    p = PAYLOADS[name]
    if "`" in p or "$" in p:
        pytest.skip("the payload would end the span")
    for source in (f"`{p}`", f"```\n{p}\n```", f"$x {p}$", f"$$\n{p}\n$$"):
        nb = sanitise(new_notebook(cells=[new_markdown_cell(source)]))
        html = render_markdown(nb.cells[0].source)
        if "javascript:" not in p.lower():  # a script URL anywhere makes the cell fall back
            assert nb.cells[0].source == source
        assert not html_problems(html), (source, html)
        assert not re.search(r"<(script|svg|iframe|img|a )", html, re.I), html


@pytest.mark.filterwarnings("ignore:Your element with mimetype")  # nbconvert shows no GIF
def test_ordinary_markdown_math_code_and_images_survive_unchanged(exporter):
    sources = [
        "# Heading with `code`, *emphasis* and $x_i<y$\n\nText with a < b, a & b and 3 > 2.",
        "$$\\frac{\\pi_\\theta(o_{i,t}\\mid q,o_{i,<t})}{\\pi_{\\text{old}}}$$ and \\(a<b\\)",
        "| left | right |\n|:--|--:|\n| 1 | 2 |\n\n- [ ] todo\n- [x] done\n\n1. one\n2. two",
        "```python\nif x < 3 and y > 2:\n    print('<b>')\n```\n\n    indented <code>\n\n> quote",
        "[a link](https://example.org) <https://example.org> [anchor](#Heading) mail@x.org",
        "![plot](attachment:p.png) ![remote](https://example.org/a.png) ![local](plot.png)",
        "<details><summary>More</summary>\n\nHidden **text**.\n\n</details>\n\nH<sub>2</sub>O, x<sup>2</sup>, <kbd>Ctrl</kbd>, <br> and <b>bold</b>",
        "~~struck~~ term\n: its definition\n\n---\n\nYOUR ANSWER HERE",
    ]
    cells = [new_markdown_cell(s) for s in sources]
    cells[5]["attachments"] = {"p.png": {"image/png": PNG}}
    outs = [
        new_output(
            "display_data",
            data={"image/png": PNG, "text/plain": "<Figure>"},
            metadata={"image/png": {"width": 300, "height": 200}},
        ),
        new_output("display_data", data={"image/jpeg": JPEG}),
        new_output("display_data", data={"image/gif": GIF}),
        new_output("stream", name="stdout", text="loss 0.25 < 0.3\n"),
        new_output("stream", name="stderr", text="[stderr] warning\n"),
        new_output("execute_result", data={"text/plain": "0.5"}, execution_count=3),
        new_output(
            "error", ename="ValueError", evalue="bad", traceback=["\x1b[31mValueError\x1b[0m: bad"]
        ),
    ]
    cells.append(new_code_cell("f()", outputs=outs, execution_count=3))
    nb = new_notebook(cells=cells)
    before = copy.deepcopy(nb)
    nb = sanitise(nb)
    assert nb == before
    html = render(exporter, nb)
    assert_inert_html(exporter, html)
    for text in (
        "<sub>2</sub>",
        "<details>",
        "$x_i&lt;y$",
        'src="data:image/png;base64,' + PNG,
        'width="300"',
        "loss 0.25 &lt; 0.3",
        "0.5",
        'href="https://example.org"',
    ):
        assert text in html, text


@pytest.mark.parametrize(
    "path", sorted((ROOT / "source_notebooks").glob("*/*.ipynb")), ids=lambda p: p.parent.name
)
def test_the_course_notebooks_pass_unchanged(path):
    nb = nbformat.read(path, as_version=4)
    before = copy.deepcopy(nb)
    assert sanitise(nb) == before


def test_a_failed_written_answer_keeps_its_words_and_says_what_happened():
    source = (
        "My answer: $p<0.5$, `a<b` and <b onmouseover=alert(1)>bold</b>; see [the plot](plot.html)."
    )
    nb = sanitise(new_notebook(cells=[new_markdown_cell(source)]))
    text = nb.cells[0].source
    assert text.startswith(MARKDOWN_NOTE)
    assert "$p<0.5$" in text and "`a<b`" in text and "bold" in text and "plot.html" in text
    assert "onmouseover" not in text and not html_problems(render_markdown(text))


def test_a_bracket_bomb_leaves_nothing_that_nbconvert_would_take_minutes_to_render():
    """nbconvert's strip_files_prefix takes time proportional to "[" per line times the line's
    length: unprotected, the first cell below holds the formgrader for about ten seconds."""
    bombs = ["[a]" * 20_000, "![" * 30_000, "&#91;" * 20_000, "```\n" + "[" * 20_000 + "\n```"]
    nb = sanitise(new_notebook(cells=[new_markdown_cell(b) for b in bombs]))
    for cell in nb.cells:
        assert not slow_lines(cell.source), cell.source[:80]
        assert not html_problems(render_markdown(cell.source))
    assert nb.cells[0].source.startswith(MARKDOWN_NOTE) and "\uff3ba]" in nb.cells[0].source


def test_output_text_is_cut_per_output_with_a_marker():
    nb = code_notebook([stdout("x" * 300_001), result("y" * 150_000)])
    out = sanitise(nb).cells[0].outputs
    assert out[0].text == "x" * 100_000 + "\n" + truncation_marker(200_001) + "\n"
    assert out[0].text.endswith("[... output truncated by the grader: 200001 more characters]\n")
    # the cell's room (200 000) is what is left for the second output
    assert out[1].data["text/plain"] == "y" * 100_000 + "\n" + truncation_marker(50_000) + "\n"


def test_a_cell_and_a_notebook_are_bounded_and_one_marker_counts_what_was_dropped():
    cell = [stdout("a" * 90), display(text_plain="b" * 90), stdout("c" * 90), stdout("d" * 40)]
    nb = code_notebook(cell, copy.deepcopy(cell), copy.deepcopy(cell))
    nb = sanitise(nb, max_output_chars=100, max_cell_chars=200, max_notebook_chars=300)
    first, second, third = (c.outputs for c in nb.cells)
    assert [o.get("text", o.get("data", {}).get("text/plain")) for o in first] == [
        "a" * 90,
        "b" * 90,
        "c" * 20 + "\n" + truncation_marker(70) + "\n",
        truncation_marker(40) + "\n",
    ]
    assert second[0].text == "a" * 90 and second[1].data["text/plain"].startswith("b" * 10 + "\n")
    assert second[-1].text == truncation_marker(130) + "\n"  # c and d dropped
    assert third == [stdout(truncation_marker(310) + "\n")]


def test_images_too_large_or_not_images_are_removed_and_count_against_the_notebook():
    big = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(2_000)).decode()
    nb = code_notebook(
        [
            display(image_png=big),
            display(image_png=JPEG),  # a JPEG that says it is a PNG
            display(image_png=PNG + "!"),  # not base64
            display(image_png=PNG, text_plain="<Figure>"),
        ]
    )
    out = sanitise(nb, max_image_bytes=1_000).cells[0].outputs
    assert all("image/png" not in o.data for o in out[:3]) and out[3].data["image/png"] == PNG
    assert out[0].data["text/plain"].startswith("[output removed")
    nb = code_notebook([display(image_png=PNG), display(image_png=PNG)])
    out = sanitise(nb, max_notebook_chars=len(PNG) + 10).cells[0].outputs
    assert out[0].data == {"image/png": PNG} and out[-1].text == truncation_marker(len(PNG)) + "\n"


def test_a_traceback_keeps_its_first_and_last_lines():
    tb = [f"line {i:04d} " + "t" * 90 + "\n" for i in range(100)]
    nb = code_notebook([new_output("error", ename="E", evalue="v", traceback=tb)])
    out = sanitise(nb, max_output_chars=1_000).cells[0].outputs[0]
    assert out.traceback[0] == tb[0] and out.traceback[-1] == tb[-1]
    marker = [t for t in out.traceback if t.startswith("[... output truncated")]
    assert len(marker) == 1 and sum(len(t) for t in out.traceback if t not in marker) <= 1_000


def big_outputs_notebook() -> nbformat.NotebookNode:
    tb = [f"frame {i} " + "t" * 50 for i in range(40)]
    cell = [
        stdout("s" * 700),
        display(text_plain="p" * 300, text_html="<b>x</b>"),
        display(image_png=PNG),
        stderr("e" * 400),
        result("r" * 500),
        new_output("error", ename="ValueError", evalue="v" * 300, traceback=tb),
    ]
    return code_notebook(*(copy.deepcopy(cell) for _ in range(4)))


@pytest.mark.parametrize(
    "limits", [{}, {"max_output_chars": 200, "max_cell_chars": 500, "max_notebook_chars": 1500}]
)
def test_a_second_pass_changes_nothing(limits):
    """Feedback runs it again on the autograded notebook: the second pass keeps the first's cuts,
    markers and counts as they are."""
    long_answer = new_notebook(
        cells=[
            new_markdown_cell("<b>x</b> [a](b.html) " * 10_000),
            new_raw_cell("<i>y</i>" * 30_000),
        ]
    )
    notebooks = [
        hostile_notebook(PAYLOADS["script"]),
        hostile_notebook(MARKDOWN_PAYLOADS["md-mermaid"]),
        long_answer,  # cut, then rewritten: the note and the escapes must fit the limit too
    ]
    for nb in [*notebooks, big_outputs_notebook()]:
        once = sanitise(nb, **limits)
        assert sanitise(copy.deepcopy(once), **limits) == once
    once = sanitise(big_outputs_notebook(), **limits)
    assert limits == {} or "truncated by the grader" in json.dumps(once)


def test_bounds_never_change_a_grade_even_with_ignore_pattern_after_it():
    z = "z" * 500
    nb = code_notebook(
        [stdout(z)],
        [stdout(z), error(z)],
        [stdout(z), stdout(z), stderr(z)],
        [stdout(z), stderr(z), stdout(z), stderr(z), stderr(z), error(z)],
        [display(text_html=z), stdout(z), stdout(z), stdout(z), result("0.5")],
        [stdout(z), result("0.5"), error(z), stderr(z)],  # the result decides: the rest may go
        [stdout(z), stdout(z), result("0.25"), result("1.0")],
        [stderr(z), stderr(z)] * 20,  # with no room, a run of stderr shares one marker
    )
    for i, cell in enumerate(nb.cells):
        cell.metadata["nbgrader"] = {
            "grade": True,
            "solution": False,
            "points": 2,
            "grade_id": f"t{i}",
            "locked": True,
            "schema_version": 3,
        }

    def grades(nb, ignore: str = ""):
        nb = copy.deepcopy(nb)
        if ignore:
            nb, _ = IgnorePattern(pattern=ignore).preprocess(nb, {})
        return [determine_grade(c) for c in nb.cells]

    limits = {"max_output_chars": 100, "max_cell_chars": 150, "max_notebook_chars": 700}
    clean = sanitise(copy.deepcopy(nb), **limits)
    assert "truncated by the grader" in json.dumps(clean.cells[-1].outputs)
    # without IgnorePattern, and with the course's (it removes every stderr stream). A selective
    # pattern would test stderr text that a cut has changed: see the module's docstring.
    for ignore in ("", r"(?s).*"):
        assert grades(clean, ignore) == grades(nb, ignore), ignore
    assert grades(nb) == [(2, 2), (0, 2), (0, 2), (0, 2), (0.5, 2), (0.5, 2), (0.25, 2), (0, 2)]
    assert grades(nb, r"(?s).*")[2:4] == [(2, 2), (0, 2)]
    assert len(clean.cells[-1].outputs) <= 3  # 40 stderr streams: one kept, one marker


def test_the_course_config_runs_it_before_the_autograded_notebook_is_written_and_in_feedback():
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config()
    names = [getattr(p, "__name__", p) for p in cfg.Autograde.autograde_preprocessors]
    assert names.index("SanitiseOutputs") == names.index("StderrShownNotGraded") + 1
    assert names.index("SanitiseOutputs") < names.index("SaveAutoGrades")
    feedback = [getattr(p, "__name__", p) for p in cfg.GenerateFeedback.preprocessors]
    assert feedback[0] == "SanitiseOutputs" and "GetGrades" in feedback


FUZZ_PIECES = [
    *"<>/\"'= \n`$[]()!&#;\\*_|-",
    "\n\n",
    "```",
    "~~~",
    "$$",
    "    ",
    "> ",
    "1. ",
    "- [ ] ",
    "[x]: ",
    "<img",
    "<svg",
    "<script>",
    "</script>",
    "<a href=",
    "<iframe",
    "<math>",
    "<style>",
    "<title>",
    "<noscript>",
    "<textarea>",
    "<select>",
    "<template>",
    "<xmp>",
    "<plaintext>",
    "<details",
    "<b>",
    "</b>",
    "<p",
    "</p>",
    "<div",
    "</div>",
    "<table>",
    "<td>",
    "<input",
    "<br/>",
    "/>",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<?",
    "onerror",
    "onload",
    "ontoggle",
    "onfocus",
    "autofocus",
    "=alert(1)",
    "javascript:",
    "java\tscript:",
    "&#106;",
    "&colon;",
    "src=x",
    "href=",
    "style=",
    "formaction=",
    "<form action=",
    "<base href=",
    "<object data=",
    "<embed src=",
    "data:text/html,",
    "mermaid",
    "background:url(",
    "<img/src/onerror=alert(1)>",
    "<javascript:alert(1)>",
    "![",
    "](",
    "x",
    "1",
    "attachment:a.png",
    "files/",
]


def test_random_markup_soup_is_inert_as_a_browser_parses_it():
    """A seeded fuzz: random soups of markup, markdown and script fragments in markdown and raw
    cells; what nbconvert renders of the result, parsed as a browser parses it, holds nothing that
    can run or navigate, and the cells' text holds no runnable tag outside code and math."""
    if html5lib is None:
        pytest.skip("html5lib (vendored in bleach) is not available")
    import random

    from nbconvert.filters.strings import clean_html

    rng = random.Random(9)
    for _ in range(400):
        src = "".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randint(1, 40)))
        nb = new_notebook(cells=[new_markdown_cell(src), new_raw_cell(src)])
        nb.cells[0]["attachments"] = {"a.png": {"image/png": PNG}}
        nb = sanitise(nb)
        md, raw = nb.cells
        html = render_markdown(md.source, md.attachments)
        assert not browser_view(f"<div>{html}</div>", fragment=True), (src, md.source, html)
        assert not browser_view(clean_html(raw.source), fragment=True), (src, raw.source)
        # outside code and math (escaped by any markdown renderer), no tag that could run
        assert not source_problems(md.source) and not html_problems(raw.source), (src, md.source)
