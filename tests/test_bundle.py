"""The student bundle is true: every repository path that a shipped text mentions is in the bundle.

``course-admin bundle`` ships release/, helpers/, the launch scripts, the requirements and
two documents, and nothing else of the repository. A lesson, docstring or comment that names
``dev/records/gru_lab_smoke.py`` or ``tests/test_x.py`` sends a student to a file they do not have.
The test builds the bundle into a temporary folder, reads every shipped text (notebook cells, code
and markdown alike, and .py .md .sh .toml .yml .txt files) and checks each path it mentions.

What counts as a mention (``mentions``): a relative path that ends in a known file extension
(``x.py``, ``helpers/data/x.json``), or that starts with a folder name of the repository or of a
run (``tests/``, ``course/...``, ``workspace/...``). Prose with slashes (``top-k/top-p``,
``Qwen/Qwen3-0.6B``), URLs, absolute and home paths (``/tmp/...``, ``~/.cache/...``, Colab's
``/content/...``), shell variables (``$VENV/bin``) and pathlib joins onto a run folder
(``RUN_DIR / "audit.json"``) are not mentions. ``$ROOT/`` in a shell script is the bundle root.

Where a mention may resolve (``resolves``): the bundle root, the mentioning file's folder, helpers/
(the package's own relative names), anywhere in the bundle for a bare file name, and an installed
package's source for a path that starts with its name (``trl/trainer/grpo_trainer.py``).
``<placeholder>`` and ``{placeholder}`` segments match any name.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sysconfig
from pathlib import Path

import pytest

from course.instructor import bundle
from tests.conftest import ROOT

TEXT_SUFFIXES = {".ipynb", ".py", ".md", ".sh", ".toml", ".yml", ".yaml", ".txt"}
EXTENSIONS = ("py", "ipynb", "json", "jsonl", "md", "sh", "toml", "yml", "yaml", "txt", "lock",
              "csv", "db", "safetensors", "gz", "zip", "cfg", "ini", "pt", "html", "log", "whl")  # fmt: skip
HAS_EXTENSION = re.compile(r"(?<=[\w*>}-])\.(?:" + "|".join(EXTENSIONS) + r")$")  # not `.py` alone

# Folders a student's own run creates (so they are in no bundle), each with where it comes from.
RUN_CREATED = {
    "workspace/": "notebook.sh copies each lesson to workspace/<lesson>/ (and archives to it)",
    "submit/": "notebook.sh --submit writes the hand-in zip there",
    "artifacts/": "./baselm.sh and helpers.baselm.build() install BaseLM in artifacts/baselm/",
}
# Shipped files that name instructor files on purpose: file -> (paths, reason). Keep it short.
ALLOWED = {
    "pyproject.toml": (
        {
            "requirements-dev.lock",
            "scripts/lock.sh",
            "scripts/ensure_env.sh",
            "deploy/jupyterhub/",
            "tests/test_hub.py",
            "tests/grading/mutation.py",
            "course/lessons/*/lesson.py",
            "course/lessons/*/hidden/*.py",
            "./test.sh",
        },
        "the repository's build file, shipped for `pip install -e .` without its course-admin line; "
        "its comments and its ruff/pytest sections describe the instructor's tree, and "
        "scripts/ensure_env.sh hashes it (an edit reinstalls every venv)",
    ),
    "scripts/ensure_env.sh": (
        {"requirements-dev.lock"},
        "its COURSE_DEPS=dev branch, taken only by the instructor's test runner",
    ),
}

URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
# "$ROOT"/x, ${ROOT}/x and $ROOT/x in a shell script: x, from the bundle root
ROOT_VAR = re.compile(r"\"?\$\{?ROOT\}?\"?/")
# A candidate: optional ./, ../ or a hidden name's dot, then name characters and slashes; not
# inside a longer word, a dotted name, an absolute or home path, a URL, a shell variable or an option.
TOKEN = re.compile(r"(?<![\w.~/:@$}\\-])((?:\.\.?/|\.(?=\w))?\w[\w.*<>{}-]*(?:/[\w.*<>{}-]*)*)")
JOINED = re.compile(r"/\s*[rbf]?[\"']$")  # `folder / "x.json"`: a file inside a run's folder


def repo_dirs(root: Path = ROOT) -> set[str]:
    """Folder names of the repository (top level, and everything under course/ dev/ helpers/ tests/
    bench/ scripts/ deploy/) plus the run-created ones: a slash path starting with one of them is a
    mention even without a file extension."""
    names = {p.name for p in root.iterdir() if p.is_dir()}
    for top in ("course", "dev", "helpers", "tests", "bench", "scripts", "deploy"):
        if (root / top).is_dir():
            names |= {p.name for p in (root / top).rglob("*") if p.is_dir()}
    names |= {d.rstrip("/") for d in RUN_CREATED}
    return {n for n in names if re.fullmatch(r"[A-Za-z_][\w.-]*", n) and n != "__pycache__"}


DIRS = repo_dirs()


def mentions(line: str, dirs: set[str] = DIRS, shell: bool = False) -> list[str]:
    """The repository paths one line of text mentions, in order."""
    line = URL.sub(" ", line)
    if shell:
        line = ROOT_VAR.sub(" ", line)
    out = []
    for m in TOKEN.finditer(line):
        tok = m.group(1).rstrip(".-")
        after = line[m.start(1) + len(tok) :][:1]
        if not tok or after == "(" or JOINED.search(line[: m.start(1)]):
            continue  # a call (`results.json()`), or a name joined onto a runtime folder
        first = tok.removeprefix("./").removeprefix("../").split("/")[0]
        if HAS_EXTENSION.search(tok) or ("/" in tok and first in dirs):
            out.append(tok)
    return out


def text_lines(path: Path):
    """(where, line) for every line of a shipped text: a notebook's cell sources, or the file."""
    if path.suffix == ".ipynb":
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for n, line in enumerate(src.splitlines(), 1):
                yield f"cell {i}:{n}", line
    else:
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            yield str(n), line


SITE = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}


def _installed(name: str) -> Path | None:
    """The site-packages folder holding the installed package ``name`` (``trl``), if any; never
    this repository's own folders (helpers is installed in development mode, from the checkout)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        if Path(loc).resolve().parent in SITE:
            return Path(loc).resolve().parent
    return None


def resolves(tok: str, where: Path, root: Path, names: set[str], dirs: set[str] = DIRS) -> bool:
    """Whether a mention in ``where`` (a file inside the bundle ``root``) names something there."""
    pattern = re.sub(r"<[^/>]*>|\{[^/}]*\}", "*", tok.removeprefix("./")).rstrip("/")
    bases = [root, where.parent, root / "helpers"]
    first = pattern.split("/")[0]
    if "/" in pattern and first not in dirs and (pkg := _installed(first)) is not None:
        bases.append(pkg)
    for base in bases:
        if any(c in pattern for c in "*?["):
            if next(base.glob(pattern), None) is not None:
                return True
        elif (base / pattern).exists():
            return True
    return "/" not in pattern and "*" not in pattern and pattern in names


def missing_mentions(root: Path, dirs: set[str] = DIRS, allowed=ALLOWED) -> list[str]:
    """'file:line: path' for every mention in the bundle at ``root`` that is not there."""
    names = {p.name for p in root.rglob("*")}
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        rel = path.relative_to(root).as_posix()
        allowed_here = allowed[rel][0] if rel in allowed else set()
        for where, line in text_lines(path):
            for tok in mentions(line, dirs, shell=path.suffix == ".sh"):
                if any(tok.startswith(d) for d in RUN_CREATED) or tok in allowed_here:
                    continue
                if not resolves(tok, path, root, names, dirs):
                    out.append(f"{rel}:{where}: {tok}")
    return out


@pytest.fixture(scope="module")
def student_bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    bundle(out)
    return out / "rlvr-grpo-module9"


def test_bundle_mentions_only_files_it_has(student_bundle):
    missing = missing_mentions(student_bundle)
    assert not missing, (
        "the student bundle mentions paths it does not ship (reword the text, or add the file to "
        "the bundle; ALLOWED is for instructor files named on purpose):\n  " + "\n  ".join(missing)
    )


# Tool pragmas: the formatter's and the linters' markers. Lesson sources are exempt from the
# formatter (pyproject.toml, [tool.ruff.format]) so none is needed in a student's notebook.
# A tool directive in a comment (case-sensitive, as the tools read them): black/ruff's fmt, noqa,
# type: ignore, and the directive prefixes of ruff, flake8, isort, pylint, mypy, pyright, yapf,
# coverage (pragma), bandit (nosec) and pyre.
PRAGMA = re.compile(
    r"#\s*(?:fmt:\s*(?:off|on|skip)\b|type:\s*ignore\b|(?:ruff|flake8|isort|pylint|mypy|pyright|yapf|pragma)\s*:)"
    r"|\bnoqa\b|\bnosec\b|\bpyre-(?:ignore|fixme)\b"
)


def comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment in a code cell: tokenized, so a '#' inside a string is not
    one; a cell that does not tokenize (IPython magics) is read line by line from its first '#'."""
    import io
    import tokenize

    try:
        return [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT]  # fmt: skip
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [(n, line[line.index("#") :]) for n, line in enumerate(source.splitlines(), 1)
                if "#" in line]  # fmt: skip


@pytest.mark.parametrize(
    "line, hit",
    [("x = 1  # fmt: skip", True), ("# fmt: off", True), ("import os  # noqa: F401", True),
     ("y = f(x)  # type: ignore[arg-type]", True), ("#pylint: disable=x", True),
     ("# ruff: noqa", True), ("# flake8: noqa", True), ("import a  # isort: skip", True),
     ("x  # pyright: ignore", True), ("# mypy: ignore-errors", True), ("run()  # nosec", True),
     ("# yapf: disable", True), ("x  # pyre-ignore[6]", True), ("x  # pragma: no cover", True),
     ("print(f'R_format={fmt:.0f}')", False), ("# the format: one case per line", False),
     ("# Type: ignore the sign here", False), ("fmt = '.3f'  # fmt: three decimals", False),
     ("print('# noqa is a pragma')", False)],
)  # fmt: skip
def test_pragma_detector(line, hit):
    assert bool([c for _, c in comments(line) if PRAGMA.search(c)]) is hit, line


def test_no_tool_pragmas_in_student_notebooks(student_bundle):
    found = []
    for nb_path in sorted(student_bundle.rglob("*.ipynb")):
        for i, cell in enumerate(json.loads(nb_path.read_text())["cells"]):
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            if cell["cell_type"] != "code":
                continue
            for n, comment in comments(src):
                if PRAGMA.search(comment):
                    found.append(
                        f"{nb_path.relative_to(student_bundle)} cell {i} line {n}: {comment}"
                    )
    assert not found, "tool pragmas reach the student:\n  " + "\n  ".join(found)


def test_every_allowed_entry_is_still_mentioned(student_bundle):
    """An allow-list entry nothing mentions any more is stale: remove it."""
    used = set()
    for rel in ALLOWED:
        path = student_bundle / rel
        assert path.is_file(), f"ALLOWED names {rel}, which the bundle does not ship"
        for _, line in text_lines(path):
            used |= {(rel, t) for t in mentions(line, shell=path.suffix == ".sh")}
    stale = [(rel, p) for rel, (paths, _) in ALLOWED.items() for p in paths if (rel, p) not in used]
    assert not stale, f"ALLOWED entries nothing mentions: {stale}"
    run_used = {d for p in student_bundle.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
                for _, line in text_lines(p) for t in mentions(line, shell=p.suffix == ".sh")
                for d in RUN_CREATED if t.startswith(d)}  # fmt: skip
    assert run_used == set(RUN_CREATED), (
        f"RUN_CREATED entries nothing mentions: {set(RUN_CREATED) - run_used}"
    )


# fmt: off
SAMPLES = [
    # (line, shell script?, the mentions it holds)
    ("regenerate it with: python dev/records/gru_lab_smoke.py", False, ["dev/records/gru_lab_smoke.py"]),
    ("The tests live in `tests/test_verifiers.py`, see tests/ too.", False,
     ["tests/test_verifiers.py", "tests/"]),
    ("Speed (``bench/bench_sampler.py``, BENCHMARKS.md): each prompt", False,
     ["bench/bench_sampler.py", "BENCHMARKS.md"]),
    ("the registry course/records/baselm_lab.json and records/x.json", False,
     ["course/records/baselm_lab.json", "records/x.json"]),
    ("see scripts/lock.sh.", False, ["scripts/lock.sh"]),
    ("read `helpers/data/gru_lab_smoke.json` and helpers/verifiers.py", False,
     ["helpers/data/gru_lab_smoke.json", "helpers/verifiers.py"]),
    ("open release/9.4/9.4.ipynb or 9.4.ipynb", False, ["release/9.4/9.4.ipynb", "9.4.ipynb"]),
    ("Your work lives in `workspace/<lesson>/`", False, ["workspace/<lesson>/"]),
    ("artifacts/baselm/ holds config.json and model.safetensors", False,
     ["artifacts/baselm/", "config.json", "model.safetensors"]),
    ("read in `trl/trainer/grpo_trainer.py`, `_compute_loss`", False,
     ["trl/trainer/grpo_trainer.py"]),
    ('helpers = ["data/*.json", "data/baselm/*"]', False, ["data/*.json", "data/baselm/*"]),
    ('source "$ROOT/scripts/ensure_env.sh"; LOCK="$ROOT/requirements-dev.lock"', True,
     ["scripts/ensure_env.sh", "requirements-dev.lock"]),
    # not mentions: prose with slashes, URLs, absolute/home/Colab paths, variables, joins, calls
    ("top-k/top-p, and/or, Qwen/Qwen3-0.6B, mean/std, 1/2, inf/NaN, REINFORCE/RLOO/PPO", False, []),
    ("see https://github.com/huggingface/trl/blob/main/trl/trainer/grpo_trainer.py", False, []),
    ("cached in ~/.cache/huggingface/hub/x.json, or /tmp/rlvr-9.5-runs/audit.json", False, []),
    ("on Colab: /content/drive/MyDrive/course/9.5.ipynb", False, []),
    ('"$VENV/bin/python" -c ...; cp "$jconf/labconfig/page_config.json" .', True, []),
    ('(RUN_DIR / "audit.json").write_text(x); out_dir / "history.json"', False, []),
    ("json.dumps(x); r.json(); np.random.seed(0); trl.trainer.utils.nanstd; e.g. v1.16.0", False, []),
    ("pip install --no-deps -e . && python -m pytest -q", False, []),
    (".github/workflows/ci.yml, but not `.py` files or .venv/bin/python", False,
     [".github/workflows/ci.yml"]),
]
# fmt: on


@pytest.mark.parametrize("line,shell,expected", SAMPLES)
def test_mentions_finds_what_it_should(line, shell, expected):
    assert mentions(line, shell=shell) == expected


def test_the_check_reports_file_line_and_path(tmp_path):
    """On a small fake bundle the check names each missing path with its file and line, and lets
    through what is there (root, own folder, helpers/, a bare name elsewhere, placeholders)."""
    (tmp_path / "helpers" / "data").mkdir(parents=True)
    (tmp_path / "helpers" / "data" / "x.json").write_text("{}")
    (tmp_path / "release" / "9.9").mkdir(parents=True)
    cells = ["see helpers/data/x.json, data/x.json, x.json and release/<lesson>/",
             "then\nrun `python course/make.py` (tests/ has it)", "see ../9.9/9.9.ipynb"]  # fmt: skip
    nb = {"cells": [{"cell_type": "markdown", "source": s, "metadata": {}} for s in cells]}
    (tmp_path / "release" / "9.9" / "9.9.ipynb").write_text(json.dumps(nb))
    (tmp_path / "README.md").write_text("Start with notebook.sh.\n\nThen read bench/x.py.\n")
    assert missing_mentions(tmp_path, dirs={"course", "tests", "bench", "release", "helpers"}) == [
        "README.md:1: notebook.sh",
        "README.md:3: bench/x.py",
        "release/9.9/9.9.ipynb:cell 1:2: course/make.py",
        "release/9.9/9.9.ipynb:cell 1:2: tests/",
    ]


def test_the_bundles_pyproject_declares_only_the_students_command(student_bundle):
    """The student's install gets `course`; `course-admin` would be a command whose package
    (course/) the bundle lacks, so the bundle's pyproject.toml leaves it out."""
    import tomllib

    ours = tomllib.loads((ROOT / "pyproject.toml").read_text())
    theirs = tomllib.loads((student_bundle / "pyproject.toml").read_text())
    assert set(ours["project"]["scripts"]) == {"course", "course-admin"}
    assert theirs["project"]["scripts"] == {"course": ours["project"]["scripts"]["course"]}
    ours["project"]["scripts"].pop("course-admin")
    assert theirs == ours, "only the course-admin line may differ"


def test_no_text_in_the_bundle_cites_the_courses_authoring_documents(student_bundle):
    """Code, notebooks and documents a student reads name no authoring document of the course."""
    from tests.test_claims import AUTHORING_JARGON

    found = []
    for f in sorted(student_bundle.rglob("*")):
        if f.is_file() and f.suffix in {".py", ".ipynb", ".md", ".sh", ".toml", ".yml", ".txt"}:
            for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = AUTHORING_JARGON.search(line)
                if m:
                    found.append(f"{f.relative_to(student_bundle)}:{i}: {m.group(0)!r}")
    assert not found, found
