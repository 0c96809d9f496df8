"""The course commands: ``course`` (helpers/cli.py, which ./notebook.sh runs) and ``course-admin``
(course/instructor.py). notebook.sh's own behaviour is in tests/test_notebook_sh.py; here: its
spelling maps onto ``course``'s for every combination, nothing installs before the input is checked,
one student-id rule on both sides of a hand-in, BaseLM's options pass through untouched, the console
scripts are installed and run, and course-admin works on the folder it is run in."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import cli, student_lab, submission
from tests.conftest import ROOT
from tests.test_notebook_sh import bundle, run  # noqa: F401  (the fixture)

# ----------------------------------------------------------------------------------------------
# notebook.sh's spelling -> course's

FLAGS = ["--fresh", "--no-browser", "--setup-only"]


@pytest.mark.parametrize("n_flags", range(len(FLAGS) + 1))
@pytest.mark.parametrize("port", [None, "8890", "--port=8891"])
def test_every_open_spelling_maps_to_course_open(n_flags, port):
    for flags in itertools.permutations(FLAGS, n_flags):
        port_args = [] if port is None else (["--port", port] if "=" not in port else [port])
        for position in range(len(flags) + 1):  # the lesson anywhere among the options
            argv = [*flags[:position], "9.2", *flags[position:], *port_args]
            got = cli._parser().parse_args(cli.from_notebook_sh(argv))  # course accepts it
            assert (got.command, got.lesson) == ("open", "9.2"), (argv, got)
            assert [got.fresh, got.no_browser, got.setup_only] == [f in flags for f in FLAGS]
            assert got.port == ("8888" if port is None else port.split("=")[-1])


@pytest.mark.parametrize(
    "argv, want",
    [
        ([], ["list"]),
        (["--doctor"], ["doctor"]),
        (["--doctor", "--port", "9000"], ["doctor", "--port=9000"]),
        (["--port=9000", "--doctor"], ["doctor", "--port=9000"]),
        (["9.3", "--submit"], ["submit", "9.3"]),
        (["--submit", "9.3", "--as", "ada"], ["submit", "9.3", "--as=ada"]),
        (["9.3", "--as=ada", "--submit"], ["submit", "9.3", "--as=ada"]),
        (["9.3", "--submit", "--as", "-rf"], ["submit", "9.3", "--as=-rf"]),
        (["--help"], ["--notebook-sh-help"]),
        (["9.1", "-h"], ["--notebook-sh-help"]),
    ],
)
def test_the_other_spellings(argv, want):
    assert cli.from_notebook_sh(argv) == want


@pytest.mark.parametrize(
    "argv, says",
    [
        (["9.1", "--bogus"], "unknown option --bogus"),
        (["9.1", "9.2"], "one lesson at a time"),
        (["9.1", "--port"], "--port needs a value"),
        (["9.1", "--submit", "--as"], "--as needs your name"),
    ],
)
def test_bad_spellings_name_the_fix(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.from_notebook_sh(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and says in err and "fix:" in err


def test_baselm_options_pass_through_untouched(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "baselm", lambda args, argv: seen.setdefault("args", args) and 0)
    for args in [[], ["--rebuild"], ["--seed", "3", "--profile", "tiny"], ["-h"], ["--force", "x"]]:
        seen.clear()
        cli.main(["baselm", *args])
        assert seen["args"] == args


# ----------------------------------------------------------------------------------------------
# nothing is installed before the input is checked


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["9.9"],
        ["9.0", "--bogus"],
        ["9.0", "--port", "x"],
        ["9.0", "--port", "70000"],
        ["--help"],
        ["9.0", "--setup-only"],
        ["9.9", "--submit", "--as", "ada"],
        ["9.0", "--submit", "--as", "-rf"],
    ],  # fmt: skip
)
def test_listing_and_bad_input_install_nothing(bundle, tmp_path, argv):  # noqa: F811
    venv = tmp_path / "venv-that-must-not-appear"
    out = run(argv, dict(bundle, COURSE_VENV=str(venv)))
    assert not venv.exists(), out.stdout + out.stderr
    assert "installing" not in out.stdout + out.stderr
    if out.returncode:
        assert "fix:" in out.stderr, out.stderr


# ----------------------------------------------------------------------------------------------
# one student-id rule: what course submit accepts is exactly what collect keeps as it is


NAMES = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
) | st.from_regex(r"[A-Za-z0-9_.\- ]{0,10}", fullmatch=True)


@given(NAMES)
def test_an_accepted_name_is_its_own_id_and_every_id_is_acceptable(name):
    sid = submission.student_id(name)
    assert submission.is_student_id(name) == (sid == name)
    if sid is not None:
        assert submission.is_student_id(sid)
        assert sid[0].isascii() and sid[0].isalnum()  # no hidden file, no option, no empty name


@pytest.mark.parametrize(
    "name, accepted, collected",
    [("ada.lovelace", True, "ada.lovelace"), ("Ada_L-2", True, "Ada_L-2"), ("ada lovelace", False,
     "ada_lovelace"), ("-rf", False, None), (".hidden", False, None), ("..", False, None),
     ("_x", False, "x"), ("", False, None), ("é", False, None), ("a/b", False, "a_b")],
)  # fmt: skip
def test_the_rule_on_named_cases(name, accepted, collected):
    assert submission.is_student_id(name) is accepted
    assert submission.student_id(name) == collected


def test_collect_and_submit_share_the_rule():
    from course.grading import collect

    assert collect.student_id is submission.student_id


# ----------------------------------------------------------------------------------------------
# the student's JupyterLab: one list of what is switched off, laptop and JupyterHub


def test_the_hub_and_the_laptop_share_one_list(tmp_path):
    from course import hub

    lab_hub, server_hub = student_lab.disabled(exchange=True)
    lab_laptop, server_laptop = student_lab.disabled(exchange=False)
    assert hub.STUDENT_DISABLED_LAB == lab_hub and hub.STUDENT_DISABLED_SERVER == server_hub
    assert set(lab_hub) < set(lab_laptop) and set(server_hub) < set(server_laptop)
    assert "@jupyter/nbgrader:validate-assignment" not in lab_laptop
    assert "@jupyter/nbgrader:assignment-list" in set(lab_laptop) - set(lab_hub)


# ----------------------------------------------------------------------------------------------
# the console scripts


def test_the_console_scripts_are_declared_and_installed(bundle, tmp_path):  # noqa: F811
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"course": "helpers.cli:main", "course-admin": "course.instructor:admin"}
    bindir = Path(sys.executable).parent
    env = dict(bundle)
    out = subprocess.run([str(bindir / "course"), "list"], env=env, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0 and "9.0 " in out.stdout and "Fixture lesson" in out.stdout
    out = subprocess.run([str(bindir / "course"), "open", "9.10", "--setup-only"], env=env,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (Path(env["COURSE_WORKSPACE"]) / "9.10" / "9.10.ipynb").is_file()
    out = subprocess.run([str(bindir / "course-admin"), "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0 and "autograde" in out.stdout


def _fake_course(root: Path, marker: str) -> Path:
    (root / "course" / "lessons").mkdir(parents=True)
    (root / "course" / "__init__.py").write_text("")
    (root / "course" / "instructor.py").write_text(f"import sys\nprint({marker!r}, sys.argv[1:])\n")
    (root / "deep" / "er").mkdir(parents=True)
    return root


def test_course_admin_runs_the_course_folder_it_stands_in(tmp_path):
    other = _fake_course(tmp_path / "last-term", "last term's course")
    call = [
        sys.executable,
        "-c",
        "from course.instructor import admin; admin()",
        "autograde",
        "9.1",
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(call, cwd=other / "deep" / "er", env=env, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "last term's course ['autograde', '9.1']"


def test_course_admin_outside_a_course_names_the_fix(tmp_path, monkeypatch):
    from course import instructor

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(instructor, "ROOT", tmp_path / "site-packages")  # a non-editable install
    with pytest.raises(SystemExit) as exit_:
        instructor.admin(["export"])
    assert exit_.value.code == 2
    assert instructor.course_root(ROOT / "course" / "grading") == ROOT
