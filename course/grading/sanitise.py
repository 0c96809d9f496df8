"""Output that cannot hurt: ``SanitiseOutputs``, an nbgrader preprocessor that makes what a
submission shows safe to render as HTML and bounded in size. Loaded by course/nbgrader_config.py
(autograde and feedback lists).

Why. The formgrader renders the autograded notebook as HTML in the Jupyter server's own origin,
next to the instructor's session and XSRF token; feedback is HTML too. Without this step, a
submission's HTML or JavaScript output, a ``<script>`` in a written answer, or an ``onerror=`` in
an image's metadata would run there (stored XSS), and every byte a cell printed was copied into the
autograded notebook. All of the following comes from the student: any code cell's outputs (a test
cell calls the student's code, so its outputs are the student's too), every markdown and raw cell
that nbgrader does not restore from the gradebook (and a student can add cells), attachments, cell
ids, tags and execution counts, and the notebook's widget state (the kernel writes it).

Rules.
- Outputs keep only ``text/plain``, stream text, error text (ename, evalue, traceback: nbconvert
  always renders them escaped) and images ``image/png``, ``image/jpeg``, ``image/gif`` that are
  valid base64 of a file of that type, at most ``max_image_bytes``. Everything else is removed:
  ``text/html``, ``application/javascript``, ``text/javascript``, ``image/svg+xml`` (SVG can carry
  script), ``text/markdown``, ``text/latex``, widget views and any other MIME type. A display with
  nothing safe left shows ``[output removed: active content]``. Output metadata keeps only numeric
  image ``width``/``height`` and ``unconfined``; execution counts must be integers; stream names
  other than stdout/stderr become stdout.
- Markdown cells are rendered here exactly as nbconvert will render them (same renderer, same
  attachments, then ``strip_files_prefix``) and the HTML is checked against a strict allowlist
  (``html_problems``): the tags plain markdown produces and a few harmless ones (``details``,
  ``sub``, ...), no comments, balanced tags, few attributes per tag, ``href`` only to ``http``,
  ``https``, ``mailto`` or a ``#fragment`` (a relative link would open a file the student
  submitted, in the server's origin), ``src`` only ``http(s)``, a relative path or a PNG/JPEG/GIF
  data URL, ``style`` only as a table column's ``text-align``. The cell's text outside code and
  math must not hold raw script-like tags, script URLs or event handlers either
  (``source_problems``), for renderers other than nbconvert's. A cell that passes is left exactly
  as written: normal markdown, math and code survive untouched. A cell that fails is rewritten:
  outside code and math, raw HTML tags are stripped (with the content of script, style, iframe,
  svg, ...), ``&`` and ``<`` are escaped and ``[`` is escaped (on a line long enough to make
  nbconvert's ``strip_files_prefix`` slow, replaced by a full-width bracket; such a cell fails
  the check), so links and images show as text;
  ``javascript:`` (``vbscript:``, ``livescript:``) loses its colon; a ``mermaid`` block becomes
  a plain code block; a note at the top says so. Should the rewritten cell still fail (only if the
  code and math spans found here differ from the renderer's), its text is replaced by a note. Raw
  cells get the same check and a plain rewrite (tags stripped, text escaped).
- Attachments keep only valid PNG/JPEG/GIF images (an SVG attachment would be embedded as is).
- Cell ids that are not nbformat ids are replaced; cell tags that are not plain words are dropped;
  the notebook's ``metadata.widgets`` (widget state, which also makes the page load the widget
  renderer from a CDN) is removed; a code cell's ``metadata.alt`` is removed.
- Bounds: each output's text at most ``max_output_chars``, a cell's output text at most
  ``max_cell_chars``, the notebook's outputs (text, images, and markdown attachments) at most
  ``max_notebook_chars``, a markdown or raw cell's text at most ``max_markdown_chars``. A cut
  leaves the marker line ``[... output truncated by the grader: N more characters]`` (``text
  truncated`` in a markdown or raw cell).

What it never does (grading depends on it): change an output's type or a stream's stderr/stdout
name, reorder outputs, or drop what nbgrader's ``determine_grade`` reads. That function stops at a
cell's first error, stderr stream or execute_result; so, until the first error or execute_result,
no error or stderr stream is dropped (IgnorePattern, later in the list, may remove stderr), and the
first execute_result keeps its first ``RESULT_CHARS`` characters whatever the room (a partial
grade is a number in it). Other outputs are dropped when there is no room left, counted by one
marker per cell where the first of them was; with no room, a run of stderr streams shares one
marker. The verdict after this step is the verdict before it, also after an IgnorePattern that
removes every stderr stream (the course's). An IgnorePattern with a selective pattern tests the
text of stderr streams, which a cut may change: with one, put this step after IgnorePattern. (In
the course, StderrShownNotGraded has turned every stderr stream into stdout before this step.)
A second pass (feedback runs it on the autograded notebook) changes nothing: markers and notes
are neither counted nor cut again.

Not covered here: files the formgrader serves from a student's autograded folder (the course's
collect copies only the notebook), a code cell's source (pygments escapes it), and nbconvert's
MathJax (loaded with its Safe extension, which limits \\href and \\style).
"""

from __future__ import annotations

import base64
import binascii
import re
from html.parser import HTMLParser

from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.strings import strip_files_prefix
from nbformat.v4 import new_output
from nbformat.v4.nbbase import random_cell_id
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer

ACTIVE_NOTE = "[output removed: active content]"
IMAGE_NOTE = "[output removed: an image too large, or not a valid PNG, JPEG or GIF]"
UNKNOWN_NOTE = "[output removed: unknown output type]"
MARKDOWN_NOTE = (
    "*[The grader removed raw HTML from this cell and shows its links and images as text, "
    "so that it cannot run in a browser.]*\n\n"
)
RAW_NOTE = "[The grader removed HTML from this cell, so that it cannot run in a browser.]\n"
UNSAFE_NOTE = (
    "[The grader removed the text of this cell: it held HTML or script that could not be shown "
    "safely. The submitted notebook still has it.]"
)


def truncation_marker(n: int, what: str = "output") -> str:
    """The line that replaces ``n`` characters cut by the grader."""
    return f"[... {what} truncated by the grader: {n} more characters]"


# --- the HTML allowlist ----------------------------------------------------------------------------

VOID_TAGS = frozenset({"br", "hr", "img", "input", "wbr", "col"})
ALLOWED_TAGS = frozenset(
    "a abbr b blockquote br caption cite code col colgroup dd del details dfn div dl dt em h1 h2 h3"
    " h4 h5 h6 hr i img input ins kbd li mark ol p pre q s samp small span strike strong sub summary"
    " sup table tbody td tfoot th thead tr tt u ul var wbr".split()
)
_COMMON_ATTRS = frozenset({"class", "title"})
_TAG_ATTRS = {
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    **{f"h{n}": {"id"} for n in range(1, 7)},
    "td": {"style", "align", "colspan", "rowspan"},
    "th": {"style", "align", "colspan", "rowspan"},
    "ol": {"start"},
    "input": {"type", "disabled", "checked"},
    "details": {"open"},
    "col": {"span"},
    "colgroup": {"span"},
}
# Classes that markdown, pygments and nbconvert's anchors produce (pygments' token classes are one
# to three letters and a digit). "jp-Mermaid"/"mermaid" are not among them: the lab template hands
# such a block to mermaid.js.
_CLASS_TOKEN = re.compile(
    r"[a-z]{1,3}[0-9]?|highlight|hl-[a-z0-9_+-]+|anchor-link|task-list-item(?:-checkbox)?"
    r"|language-[A-Za-z0-9_+#.-]+"
)
_NUMBER = re.compile(r"[0-9]{1,5}%?")
_TEXT_ALIGN = re.compile(r"\s*text-align\s*:\s*(?:left|right|center)\s*;?\s*", re.I)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=]*", re.I)
_URL_IGNORED = re.compile(r"[\t\n\r]")  # browsers drop these anywhere in a URL
_URL_EDGES = "".join(chr(i) for i in range(33))  # and C0 controls and spaces at either end
# Belt and braces for what html.parser might read differently from a browser: raw tags that must
# never appear (text is always escaped by the renderer, so an honest cell has none of these), a
# script URL anywhere, an event-handler attribute inside any tag.
_RAW_RED_FLAGS = re.compile(
    r"<\s*/?\s*(?:script|svg|math|iframe|frame|frameset|object|embed|applet|style|link|meta|base"
    r"|form|button|select|option|textarea|title|noscript|noembed|noframes|template|xmp|plaintext"
    r"|listing|image|isindex|video|audio|source|portal)\b"
    r"|(?:java|vb|live)script\s*:",
    re.I,
)
_RAW_TAG = re.compile(r"<[^<>]*>")
_HANDLER_IN_TAG = re.compile(r"[\s/\"'](?:on[a-z]+|formaction|srcdoc|xlink:href)\s*=", re.I)


def _url_allowed(value: str, *, image: bool) -> bool:
    url = _URL_IGNORED.sub("", value).strip(_URL_EDGES)
    m = _SCHEME.match(url)
    if m is None:  # no scheme: a fragment, or (images only) a relative path
        return image or url.startswith("#")
    scheme = m.group(1).lower()
    if scheme in ("http", "https"):
        return True
    if scheme == "mailto":
        return not image
    return image and scheme == "data" and _DATA_IMAGE.fullmatch(url) is not None


def _attr_allowed(tag: str, name: str, value: str | None) -> bool:
    if name not in _COMMON_ATTRS and name not in _TAG_ATTRS.get(tag, ()):
        return False
    v = value or ""
    if name == "class":
        return all(_CLASS_TOKEN.fullmatch(t) for t in v.split())
    if name == "href":
        return _url_allowed(v, image=False)
    if name == "src":
        return _url_allowed(v, image=True)
    if name in ("width", "height", "colspan", "rowspan", "start", "span"):
        return _NUMBER.fullmatch(v) is not None
    if name == "align":
        return v.lower() in ("left", "right", "center", "justify")
    if name == "style":
        return _TEXT_ALIGN.fullmatch(v) is not None
    if name == "type":
        return v.lower() == "checkbox"
    if name in ("disabled", "checked", "open"):
        return v in ("", name)
    return True  # title, alt, a heading's id: plain attribute text


class _HtmlInspector(HTMLParser):
    """Reads HTML and lists every way it leaves the allowlist (empty list: safe)."""

    def __init__(self) -> None:
        # Character references stay as they are in text (so "&lt;" is not a bare "<"); attribute
        # values are always decoded, as a browser decodes them.
        super().__init__(convert_charrefs=False)
        self.problems: list[str] = []
        self._open: list[str] = []

    def _check(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
            return
        for name, value in attrs:
            if not _attr_allowed(tag, name, value):
                self.problems.append(f"attribute {name}={value!r} on <{tag}>")

    def handle_starttag(self, tag, attrs):
        self._check(tag, attrs)
        if tag not in VOID_TAGS:
            self._open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._check(tag, attrs)
        if tag not in VOID_TAGS:  # a browser ignores "/>" on <div/>: the element stays open
            self.problems.append(f"self-closed <{tag}/>")

    def handle_endtag(self, tag):
        if not self._open or self._open[-1] != tag:
            self.problems.append(f"unbalanced </{tag}>")
        else:
            self._open.pop()

    def handle_data(self, data):
        if "<" in data:  # the renderer escapes text: a bare "<" is HTML it did not understand
            self.problems.append("a bare '<' in text")

    def handle_comment(self, data):
        self.problems.append("a comment")

    def handle_decl(self, decl):
        self.problems.append("a declaration")

    def unknown_decl(self, data):
        self.problems.append("a declaration")

    def handle_pi(self, data):
        self.problems.append("a processing instruction")


def html_problems(html: str) -> list[str]:
    """Every way ``html`` leaves the allowlist; an empty list means it is safe to show."""
    inspector = _HtmlInspector()
    try:
        inspector.feed(html)
        inspector.close()
    except Exception:  # html.parser gives up on some malformed declarations ("<![`...")
        return ["HTML that cannot be parsed"]
    problems = inspector.problems
    if inspector._open:
        problems.append(f"unclosed <{inspector._open[-1]}>")
    if _RAW_RED_FLAGS.search(html):
        problems.append(f"raw {_RAW_RED_FLAGS.search(html).group(0)!r}")
    if any(_HANDLER_IN_TAG.search(t) for t in _RAW_TAG.findall(html)):
        problems.append("an event handler inside a tag")
    return problems


def render_markdown(source: str, attachments: dict | None = None) -> str:
    """The HTML nbconvert's HTMLExporter (feedback, formgrader) makes of a markdown cell."""
    renderer = IPythonRenderer(escape=False, attachments=attachments or {})
    return strip_files_prefix(MarkdownWithMath(renderer=renderer).render(source))


# --- rewriting a cell that failed the check ---------------------------------------------------------

# Elements whose content is dropped with them (script text, CSS, embedded documents, SVG/MathML).
_DROP_CONTENT = frozenset(
    "script style iframe frame frameset object embed applet svg math noscript noembed noframes"
    " template textarea title xmp plaintext select audio video head".split()
)


class _TagStripper(HTMLParser):
    """Keeps the text of an HTML-ish string, without its tags, comments or dangerous content."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._dropping: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _DROP_CONTENT:
            self._dropping.append(tag)

    def handle_endtag(self, tag):
        if tag in self._dropping:
            while self._dropping and self._dropping.pop() != tag:
                pass

    def handle_data(self, data):
        if not self._dropping:
            self.parts.append(data)


def strip_tags(text: str) -> str:
    """``text`` without HTML tags, comments or the content of script/style/iframe/svg/..., with
    ``&`` and ``<`` escaped so that no tag or character reference can form again."""
    stripper = _TagStripper()
    try:
        stripper.feed(text)
        stripper.close()
        kept = "".join(stripper.parts)
    except Exception:  # html.parser gave up: keep all of it, escaped
        kept = text
    return kept.replace("&", "&amp;").replace("<", "&lt;")


_SCRIPT_SCHEME = re.compile(r"((?:java|vb|live)script\s*):", re.I)
# "javascript:" becomes "javascript\uff1a" (a full-width colon): still readable, no longer a scheme.
_BROKEN_SCHEME = "\\1\uff1a"
_MERMAID_FENCE = re.compile(r"^([ \t]*(?:`{3,}|~{3,})[ \t]*)mermaid", re.I | re.M)
# Code and math, which the renderer escapes itself: kept verbatim so that "a<b" in them survives.
# Should this find a span the renderer does not (the recheck would see raw HTML), the cell's text
# is replaced by a note, so a mismatch costs fidelity, never safety. A mermaid block is matched
# first, and is not kept: nbconvert copies its text into the page unescaped.
_VERBATIM = re.compile(
    r"(?P<mermaid>^[ \t]*(?P<mf>`{3,}|~{3,})[ \t]*(?i:mermaid)[^\n]*\n.*?^[ \t]*(?P=mf)[ \t]*$)"
    r"|^[ \t]*(?P<f>`{3,}|~{3,})[^\n]*\n.*?^[ \t]*(?P=f)[ \t]*$"  # a fenced code block
    r"|(?P<c>`+)(?!`).+?(?<!`)(?P=c)(?!`)"  # a code span
    r"|(?<!\\)\$\$.+?(?<!\\)\$\$"  # display math
    r"|(?<![\\$])\$(?!\$).+?(?<![\\$])\$",  # inline math
    re.M | re.S,
)


# _VERBATIM's cost grows with (number of `, ~, $ marks) x (length of the text): past this budget a
# cell gets no verbatim spans at all, so it is checked, and rewritten, as plain text (slow to
# scan on purpose is not a way to stall the grader or the formgrader).
VERBATIM_BUDGET = 20_000_000


def _split_verbatim(source: str) -> list[tuple[bool, str]]:
    """``source`` as (verbatim?, text) pieces, in order."""
    marks = source.count("`") + source.count("~") + source.count("$")
    if marks * len(source) > VERBATIM_BUDGET:
        return [(False, source)]
    pieces, pos = [], 0
    for m in _VERBATIM.finditer(source):
        if m.group("mermaid"):
            continue
        pieces += [(False, source[pos : m.start()]), (True, m.group(0))]
        pos = m.end()
    pieces.append((False, source[pos:]))
    return pieces


def source_problems(source: str) -> list[str]:
    """Raw tags, script URLs or event handlers in a markdown cell's text outside code and math,
    even where nbconvert's renderer would escape them: another renderer (JupyterLab's, a browser
    reading a tag without spaces, ``<img/src/onerror=...>``) might not."""
    text = " ".join(t for verbatim, t in _split_verbatim(source) if not verbatim)
    problems = [f"raw {m.group(0)!r} in the text" for m in _RAW_RED_FLAGS.finditer(text)]
    if any(_HANDLER_IN_TAG.search(t) for t in _RAW_TAG.findall(text)):
        problems.append("an event handler inside a tag, in the text")
    return problems


# nbconvert's strip_files_prefix (the templates apply it to every markdown cell) runs a regex that
# takes time proportional to the number of "[" on a line times the line's length: a line of 20 000
# "[" holds the formgrader (and the whole Jupyter server) for seconds, 100 000 for minutes.
SLOW_LINE = 500_000  # "[" on a line x its length: about 10 ms of that regex


def slow_lines(source: str) -> bool:
    """Whether a line of ``source`` would make that regex slow ("&#91;" and the like count too)."""
    for line in source.splitlines():
        n = line.count("[") + line.count("&")
        if n and n * len(line) > SLOW_LINE:
            return True
    return False


def _escape_brackets(text: str) -> str:
    """``[`` escaped so that no link or image forms; on a line that would be slow to render, a
    full-width bracket instead, which that regex does not look at."""
    return "".join(
        line.replace("[", "\uff3b")
        if line.count("[") * len(line) > SLOW_LINE // 4
        else line.replace("[", "\\[")
        for line in text.splitlines(keepends=True)
    )


def defang_markdown(source: str) -> str:
    """A failed markdown cell made inert: outside code and math, tags stripped and ``[`` escaped
    (links and images show as text); everywhere, script URLs broken and mermaid shown as code."""
    parts = [
        t if verbatim else _escape_brackets(strip_tags(t))
        for verbatim, t in _split_verbatim(source)
    ]
    text = _SCRIPT_SCHEME.sub(_BROKEN_SCHEME, "".join(parts))
    return _MERMAID_FENCE.sub(r"\1text", text)


# --- outputs ---------------------------------------------------------------------------------------

IMAGE_TYPES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}
_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_TAG_WORD = re.compile(r"[A-Za-z0-9_.:-]{1,100}")
_WHITESPACE = re.compile(r"\s+")
ENAME_CHARS = 200  # an exception's name, whatever the room left
RESULT_CHARS = 100  # an execute_result's text kept whatever the room left


def _as_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return "" if value is None else str(value)


def valid_image(value, mime: str, max_bytes: int) -> str | None:
    """The base64 text of ``value`` if it decodes to a file of type ``mime`` of at most
    ``max_bytes`` bytes, else None."""
    limit = (max_bytes + 2) // 3 * 4  # base64 characters of max_bytes bytes
    text = _as_text(value)
    if len(text) > 2 * limit + 1024:  # not worth reading (line breaks do not double a text)
        return None
    text = _WHITESPACE.sub("", text)
    if len(text) > limit:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) > max_bytes or not raw.startswith(IMAGE_TYPES[mime]):
        return None
    return text


def _is_bare_stderr_marker(out) -> bool:
    if out is None or out.get("output_type") != "stream" or out.get("name") != "stderr":
        return False
    body, n = split_marker(out.get("text", ""))
    return n > 0 and not body


def _body_chars(error) -> int:
    """The characters of an error's evalue and traceback, without truncation markers."""
    tb = error.get("traceback")
    lines = [_as_text(x) for x in tb] if isinstance(tb, list) else [_as_text(tb)]
    parts = [_as_text(error.get("evalue")), *lines]
    return sum(len(split_marker(x)[0]) for x in parts)


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _image_metadata(metadata, kept: set[str]) -> dict:
    """Only what the templates read for an image and cannot misuse: numeric size, unconfined."""
    if not isinstance(metadata, dict) or not kept:
        return {}

    def clean(d) -> dict:
        out = {}
        for key in ("width", "height"):
            v = d.get(key)
            if isinstance(v, str) and re.fullmatch(r"[0-9]{1,5}", v):
                v = int(v)
            if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 100_000:
                out[key] = v
        if isinstance(d.get("unconfined"), bool):
            out["unconfined"] = d["unconfined"]
        return out

    result = clean(metadata)
    for mime in kept:
        sub = clean(metadata[mime]) if isinstance(metadata.get(mime), dict) else {}
        if sub:
            result[mime] = sub
    return result


_MARKER = re.compile(
    r"(?:^|\n)\[\.\.\. (?:output|text) truncated by the grader: (\d+) more characters\]\n?\Z"
)
NOTES = frozenset({ACTIVE_NOTE, IMAGE_NOTE, UNKNOWN_NOTE})


def split_marker(text: str) -> tuple[str, int]:
    """(the text without a final truncation marker, the characters that marker counts)."""
    m = _MARKER.search(text)
    return (text[: m.start()], int(m.group(1))) if m else (text, 0)


def cut_text(text: str, room: int, what: str = "output") -> tuple[str, int]:
    """``text`` cut to ``room`` characters, ending in a marker line that counts what was cut (with
    what an earlier cut had counted); returns (text, characters kept). Markers are not counted
    against the room, so a second pass leaves a cut text as it is."""
    body, before = split_marker(text)
    room = max(room, 0)
    if len(body) <= room:
        return text, len(body)
    kept = body[:room]
    sep = "" if not kept or kept.endswith("\n") else "\n"
    return f"{kept}{sep}{truncation_marker(len(body) - room + before, what)}\n", room


def cut_lines(lines: list[str], room: int) -> tuple[list[str], int]:
    """A traceback cut to ``room`` characters: its first and last lines, a marker line between;
    returns (lines, characters kept). Marker lines are not counted against the room."""
    before = 0
    body = []
    for line in lines:
        rest, n = split_marker(line)
        if n and not rest:
            before += n
        else:
            body.append(line)
    total = sum(len(x) for x in body)
    room = max(room, 0)
    if total <= room:
        return lines, total
    head, used = [], 0
    for line in body:
        if used + len(line) > room // 2:
            break
        head.append(line)
        used += len(line)
    tail, used_tail = [], 0
    for line in reversed(body[len(head) :]):
        if used + used_tail + len(line) > room:
            break
        tail.append(line)
        used_tail += len(line)
    tail.reverse()
    if not head and not tail and room:  # one line longer than the room
        head, used = [body[0][:room]], room
    marker = truncation_marker(total - used - used_tail + before)
    return [*head, marker, *tail], used + used_tail


class SanitiseOutputs(NbGraderPreprocessor):
    """Make every output, written answer and rendering-relevant metadata of a submission safe to
    show as HTML, and bound its size. See the module's docstring for the rules."""

    max_output_chars = Integer(
        100_000, help="most characters of text kept in one output (stream, text/plain, error)"
    ).tag(config=True)
    max_cell_chars = Integer(200_000, help="most characters of output text kept in one cell").tag(
        config=True
    )
    max_notebook_chars = Integer(
        5_000_000, help="most characters of output kept in the notebook (text and base64 images)"
    ).tag(config=True)
    max_image_bytes = Integer(1_000_000, help="largest image (decoded bytes) kept").tag(config=True)
    max_markdown_chars = Integer(
        100_000, help="most characters kept of one markdown or raw cell's text"
    ).tag(config=True)

    def preprocess(self, nb, resources):
        self._left = self.max_notebook_chars
        self._ids: set[str] = set()
        if isinstance(nb.get("metadata"), dict) and "widgets" in nb.metadata:
            del nb.metadata["widgets"]
            self.log.warning("OUTPUT-SAFETY: removed the notebook's widget state")
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        self._clean_cell_fields(cell)
        if cell.cell_type == "code":
            self._clean_code_cell(cell, cell_index)
        elif cell.cell_type == "markdown":
            self._clean_markdown_cell(cell, cell_index)
        elif cell.cell_type == "raw":
            self._clean_raw_cell(cell, cell_index)
        return cell, resources

    # -- fields every cell has --

    def _clean_cell_fields(self, cell) -> None:
        cid = cell.get("id")
        if cid is not None and (
            not isinstance(cid, str) or not _CELL_ID.fullmatch(cid) or cid in self._ids
        ):
            cid = random_cell_id()
            while cid in self._ids:
                cid = random_cell_id()
            cell["id"] = cid
        if cid is not None:
            self._ids.add(cid)
        md = cell.get("metadata")
        if not isinstance(md, dict):
            return
        if "tags" in md:
            tags = md["tags"] if isinstance(md["tags"], list) else []
            md["tags"] = [t for t in tags if isinstance(t, str) and _TAG_WORD.fullmatch(t)]
        if cell.get("cell_type") == "code":
            md.pop("alt", None)

    # -- code cells --

    def _room(self, cell_used: int) -> int:
        return max(0, min(self.max_output_chars, self.max_cell_chars - cell_used, self._left))

    def _charge(self, n: int) -> None:
        self._left = max(0, self._left - n)

    def _clean_code_cell(self, cell, index: int) -> None:
        cell["execution_count"] = _count(cell.get("execution_count"))
        kept: list = []
        used = 0  # output text kept in this cell
        dropped = 0  # characters of outputs dropped for lack of room
        at = None  # where the first dropped output was: the marker goes there
        # nbgrader's determine_grade stops at the first error, stderr stream or execute_result.
        # Until an error or execute_result is seen, errors and stderr streams are never dropped
        # (IgnorePattern, later in the list, may remove stderr); the first execute_result keeps
        # RESULT_CHARS. After that, nothing can change the grade and any output may be dropped.
        decided = False
        removed: set[str] = set()
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            room = self._room(used)
            if kind == "stream":
                name = "stderr" if out.get("name") == "stderr" else "stdout"
                text = _as_text(out.get("text"))
                body = split_marker(text)[0]
                if room == 0 and body and (name == "stdout" or decided):
                    dropped += len(body)
                    at = len(kept) if at is None else at
                    continue
                last = kept[-1] if kept else None
                if room == 0 and body and name == "stderr" and _is_bare_stderr_marker(last):
                    # with no room left, a run of stderr streams shares one marker
                    last.text = truncation_marker(split_marker(last.text)[1] + len(body)) + "\n"
                    continue
                text, n = cut_text(text, room)
                used += n
                self._charge(n)
                kept.append(new_output("stream", name=name, text=text))
            elif kind in ("display_data", "execute_result"):
                first_result = kind == "execute_result" and not decided
                decided = decided or kind == "execute_result"
                new, n_dropped, n_used = self._clean_bundle(
                    out, room, removed, droppable=not first_result
                )
                if n_dropped:
                    dropped += n_dropped
                    at = len(kept) if at is None else at
                if new is not None:
                    used += n_used
                    kept.append(new)
            elif kind == "error":
                ename = _as_text(out.get("ename"))[:ENAME_CHARS]
                evalue, n_value = cut_text(_as_text(out.get("evalue")), room)
                tb = out.get("traceback")
                tb = [_as_text(x) for x in tb] if isinstance(tb, list) else [_as_text(tb)]
                tb, n_tb = cut_lines(tb, room - n_value)
                if room == 0 and decided:  # the grade is already decided: it may go
                    dropped += len(ename) + _body_chars(out)
                    at = len(kept) if at is None else at
                    continue
                decided = True
                used += len(ename) + n_value + n_tb
                self._charge(len(ename) + n_value + n_tb)
                kept.append(new_output("error", ename=ename, evalue=evalue, traceback=tb))
            else:
                removed.add(f"output type {kind!r}")
                kept.append(new_output("display_data", data={"text/plain": UNKNOWN_NOTE}))
        if dropped:
            marker = new_output("stream", name="stdout", text=truncation_marker(dropped) + "\n")
            kept.insert(at, marker)
            self.log.warning(
                "OUTPUT-SAFETY: cell %d: %d characters of output dropped (limits)", index, dropped
            )
        if removed:
            self.log.warning(
                "OUTPUT-SAFETY: cell %d: removed %s", index, ", ".join(sorted(removed))
            )
        cell["outputs"] = kept

    def _clean_bundle(self, out, room: int, removed: set[str], droppable: bool):
        """(new output or None if it was dropped, characters dropped, cell text used)."""
        kind = out.get("output_type")
        data = out.get("data") if isinstance(out.get("data"), dict) else {}
        new_data: dict[str, str] = {}
        active = bad_image = False
        text_used = dropped = 0
        for mime, value in data.items():
            if mime == "text/plain":
                continue  # below, after the images have taken their share
            if mime in IMAGE_TYPES:
                b64 = valid_image(value, mime, self.max_image_bytes)
                if b64 is None:
                    bad_image = True
                    removed.add(f"{mime} (invalid or too large)")
                elif len(b64) > self._left:
                    dropped += len(b64)
                    bad_image = True
                else:
                    self._charge(len(b64))
                    new_data[mime] = b64
            else:
                active = True
                removed.add(mime)
        if not droppable:  # the cell's first result keeps its start: it may be a partial grade
            room = max(room, RESULT_CHARS)  # (nbgrader reads a number from it)
            plain = _as_text(data.get("text/plain", ""))
            try:  # a number is kept whole: a cut one would not parse, and nbgrader would then
                float(plain)  # award full points
                room = max(room, len(plain))
            except ValueError:
                pass
        if "text/plain" in data:
            text = _as_text(data["text/plain"])
            body = split_marker(text)[0]
            if text in NOTES:  # an earlier pass's note: kept, not counted
                new_data["text/plain"] = text
            elif room == 0 and droppable and body:
                dropped += len(body)
            else:
                text, text_used = cut_text(text, room)
                self._charge(text_used)
                new_data["text/plain"] = text
        if not new_data:
            if dropped and droppable:
                return None, dropped, 0
            if active or bad_image or dropped:
                new_data["text/plain"] = ACTIVE_NOTE if active else IMAGE_NOTE
        metadata = _image_metadata(out.get("metadata"), set(new_data) & set(IMAGE_TYPES))
        if kind == "execute_result":
            new = new_output(
                "execute_result",
                data=new_data,
                metadata=metadata,
                execution_count=_count(out.get("execution_count")),
            )
        else:
            new = new_output("display_data", data=new_data, metadata=metadata)
        return new, dropped, text_used

    # -- markdown and raw cells --

    def _clean_attachments(self, cell, index: int) -> dict:
        attachments = cell.get("attachments")
        if attachments is None:
            return {}
        clean: dict = {}
        if isinstance(attachments, dict):
            for name, bundle in attachments.items():
                kept = {}
                for mime, value in bundle.items() if isinstance(bundle, dict) else ():
                    b64 = (
                        valid_image(value, mime, self.max_image_bytes)
                        if (mime in IMAGE_TYPES)
                        else None
                    )
                    if b64 is not None and len(b64) <= self._left:
                        self._charge(len(b64))
                        kept[mime] = b64
                if kept and isinstance(name, str):
                    clean[name] = kept
        if clean != attachments:
            self.log.warning(
                "OUTPUT-SAFETY: cell %d: attachments cleaned (only valid PNG, JPEG "
                "or GIF images within the limits are kept)",
                index,
            )
        cell["attachments"] = clean
        return clean

    def _clean_markdown_cell(self, cell, index: int) -> None:
        attachments = self._clean_attachments(cell, index)
        source, _ = cut_text(_as_text(cell.get("source")), self.max_markdown_chars, "text")
        problems = self._markdown_problems(source, attachments)
        if problems:
            self.log.warning(
                "OUTPUT-SAFETY: markdown cell %d rewritten: %s", index, "; ".join(problems[:5])
            )
            body, n = split_marker(source)
            source = self._bounded(MARKDOWN_NOTE + defang_markdown(body), n)
            if self._markdown_problems(source, attachments):
                source = UNSAFE_NOTE
        cell["source"] = source

    def _bounded(self, text: str, cut_before: int) -> str:
        """A rewritten cell's text, with the marker of an earlier cut, within the limit again."""
        if cut_before:
            text = f"{text}\n{truncation_marker(cut_before, 'text')}\n"
        return cut_text(text, self.max_markdown_chars, "text")[0]

    @staticmethod
    def _markdown_problems(source: str, attachments: dict) -> list[str]:
        if slow_lines(source):
            return ["a line with so many '[' that nbconvert would take very long to render it"]
        try:
            html = render_markdown(source, attachments)
        except Exception as err:  # a missing attachment makes nbconvert raise: feedback would fail
            return [f"cannot be rendered ({type(err).__name__})"]
        return html_problems(html) + source_problems(source)

    def _clean_raw_cell(self, cell, index: int) -> None:
        self._clean_attachments(cell, index)
        source, _ = cut_text(_as_text(cell.get("source")), self.max_markdown_chars, "text")
        problems = html_problems(source)
        if problems:
            self.log.warning(
                "OUTPUT-SAFETY: raw cell %d rewritten: %s", index, "; ".join(problems[:5])
            )
            body, n = split_marker(source)
            body = _SCRIPT_SCHEME.sub(_BROKEN_SCHEME, strip_tags(body))
            source = self._bounded(RAW_NOTE + body, n)
            if html_problems(source):
                source = UNSAFE_NOTE
        cell["source"] = source


__all__ = [
    "SanitiseOutputs",
    "html_problems",
    "render_markdown",
    "source_problems",
    "truncation_marker",
]
