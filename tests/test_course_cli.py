"""The course commands: ``course`` (helpers/cli.py, which ./notebook.sh runs) and ``course-admin``
(course/instructor.py). notebook.sh's own behaviour is in tests/test_notebook_sh.py; here: its
spelling maps onto ``course``'s for every combination, nothing installs before the input is checked,
one student-id rule on both sides of a hand-in, BaseLM's options pass through untouched, the console
scripts are installed and run, and course-admin works on the folder it is run in."""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import cli, student_lab, submission
from tests.conftest import ROOT
from tests.test_notebook_sh import env_without_python, run

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
def test_listing_and_bad_input_install_nothing(bundle, tmp_path, argv):
    venv = tmp_path / "venv-that-must-not-appear"
    out = run(argv, dict(bundle, COURSE_VENV=str(venv)))
    assert not venv.exists(), out.stdout + out.stderr
    assert "installing" not in out.stdout + out.stderr
    good = argv in ([], ["--help"], ["9.0", "--setup-only"])
    assert out.returncode == (0 if good else 2), out.stdout + out.stderr
    if not good:
        assert "error:" in out.stderr and "fix:" in out.stderr, out.stderr


def test_an_inherited_marker_does_not_skip_the_copy(bundle):
    """JupyterLab's terminals and kernels descend from the re-started command; the marker it ran
    under names its own process, so a later ./notebook.sh from a terminal still makes the copy."""
    for marker in ["1", str(os.getpid()), "0"]:
        env = dict(bundle, COURSE_IN_ENV=marker)
        out = run(["9.0", "--setup-only"], env)
        assert out.returncode == 0, out.stderr
        assert (Path(bundle["COURSE_WORKSPACE"]) / "9.0" / "9.0.ipynb").is_file(), marker


def test_fresh_through_the_environment_archives_once(bundle, tmp_path):
    """A real open goes through the re-start inside .venv (and stops at a busy port): the copy is
    archived once, before the re-start, never again after it."""
    ws = Path(bundle["COURSE_WORKSPACE"])
    run(["9.0", "--setup-only"], bundle)
    (ws / "9.0" / "9.0.ipynb").write_text((ws / "9.0" / "9.0.ipynb").read_text() + " ")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = run(["9.0", "--fresh", "--no-browser", "--port", str(port)], bundle)
        again = run(["9.0", "--fresh", "--no-browser", "--port", str(port)], bundle)
    assert out.returncode == 4 and again.returncode == 4, out.stdout + out.stderr
    assert f"port {port} is busy" in out.stderr
    archived = sorted((ws / "archive").iterdir())
    assert len(archived) == 2, archived  # one per run; both in the same second get distinct names
    assert out.stdout.count("archived your previous copy") == 1


def test_an_environment_that_is_not_python_3_11_names_the_rebuild(bundle, tmp_path):
    """The shim runs on an older Python (3.8+) to list; opening needs 3.11, and ensure_env.sh's
    'not found' (exit 3, with the fix) comes through the command unchanged."""
    older = next((Path(f"/root/.pyenv/versions/{v}/bin/python3") for v in ("3.10.13", "3.9.18")
                  if Path(f"/root/.pyenv/versions/{v}/bin/python3").exists()), None)  # fmt: skip
    if older is None:
        older = shutil.which("python3.10") or shutil.which("python3.9")
    if older is None:
        pytest.skip("no Python 3.8-3.10 on this machine to stand in for an older one")
    env, bindir = env_without_python(bundle, tmp_path)
    (bindir / "python3").symlink_to(older)
    listed = run([], env)
    assert listed.returncode == 0 and "Fixture lesson" in listed.stdout, listed.stderr
    out = run(["9.0", "--no-browser"], env)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "Python 3.11 was not found" in out.stderr and "fix:" in out.stderr


def test_a_venv_left_from_another_python_is_named_before_anything_is_installed(tmp_path):
    """An existing .venv whose Python is not 3.11 gets the rebuild fix from ensure_env.sh itself,
    before pip runs (no stamp written, nothing installed into it)."""
    older = next((Path(f"/root/.pyenv/versions/{v}/bin/python3") for v in ("3.10.13", "3.9.18")
                  if Path(f"/root/.pyenv/versions/{v}/bin/python3").exists()), None)  # fmt: skip
    older = older or shutil.which("python3.10") or shutil.which("python3.9")
    if older is None:
        pytest.skip("no Python 3.8-3.10 on this machine to stand in for an older one")
    venv = tmp_path / "my venv"  # a space: the printed fix must still name this folder
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(older)
    out = subprocess.run(["bash", "-c", f'source "{ROOT}/scripts/ensure_env.sh"'],
                         env=dict(os.environ, COURSE_VENV=str(venv)), capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 3, out.stdout + out.stderr
    assert "is not a Python 3.11 environment" in out.stderr
    fix = out.stderr.split("again: ", 1)[1].split(" && ")[0]
    assert shlex.split(fix) == ["rm", "-rf", str(venv)], fix  # pasted, it removes this folder only
    assert "installing" not in out.stdout
    assert sorted(p.name for p in venv.iterdir()) == ["bin"]


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
     ("_x", False, "x"), ("x_", False, "x"), ("", False, None), ("é", False, None), ("a/b", False, "a_b")],
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
    """What the hub writes for a student switches off exactly the exchange set; the laptop's is
    that plus the parts that need an exchange; Validate is never switched off."""
    import json

    from course import hub

    def written(folder: Path) -> tuple[set[str], set[str]]:
        page = json.loads((folder / "labconfig" / "page_config.json").read_text())
        server = json.loads((folder / "jupyter_server_config.json").read_text())
        lab = {k for k, v in page["disabledExtensions"].items() if v}
        ext = {k for k, v in server["ServerApp"]["jpserver_extensions"].items() if v is False}
        return lab, ext

    hub_lab, hub_server = written(hub.write_jupyter_config(tmp_path / "hub", tmp_path / "exchange"))
    laptop_lab, laptop_server = written(
        student_lab.write_config(tmp_path / "laptop", exchange=False)
    )
    assert (hub_lab, hub_server) == tuple(set(x) for x in student_lab.disabled(exchange=True))
    assert hub_lab < laptop_lab and hub_server < laptop_server
    assert (
        "@jupyter/nbgrader:formgrader" in hub_lab
        and "nbgrader.server_extensions.formgrader" in hub_server
    )
    assert laptop_lab - hub_lab == {"@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu"}
    assert not any("validate" in name for name in laptop_lab | laptop_server)


# ----------------------------------------------------------------------------------------------
# the console scripts


def test_the_console_scripts_are_declared_and_installed(bundle, tmp_path):
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
    out = subprocess.run([str(bindir / "course-admin"), "--help"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0 and "autograde" in out.stdout


def _fake_course(root: Path) -> Path:
    """A folder that calls itself a course: a student could hand one in."""
    (root / "course" / "lessons").mkdir(parents=True)
    (root / "course" / "__init__.py").write_text("")
    (root / "course" / "instructor.py").write_text("print('THE FOLDER\\'S OWN CODE RAN')\n")
    (root / "deep" / "er").mkdir(parents=True)
    return root


def test_course_admin_never_runs_code_it_finds_where_it_stands(tmp_path):
    other = _fake_course(tmp_path / "inbox" / "mallory")
    bindir = Path(sys.executable).parent
    for cwd in [other, other / "deep" / "er"]:
        out = subprocess.run([str(bindir / "course-admin"), "collect", ".", "9.1"], cwd=cwd,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        assert out.returncode == 2, out.stdout + out.stderr
        assert "OWN CODE RAN" not in out.stdout + out.stderr
        assert f"another course folder, {other}" in out.stderr and "fix:" in out.stderr


def test_course_admin_runs_its_own_course_from_anywhere_else(tmp_path, monkeypatch):
    from course import instructor

    ran = []
    monkeypatch.setattr(instructor, "main", lambda argv: ran.append(argv))
    monkeypatch.chdir(tmp_path)  # in no course at all
    instructor.admin(["export", "--to", "g.csv"])
    monkeypatch.chdir(ROOT / "course" / "grading")  # inside its own
    instructor.admin(["export"])
    assert ran == [["export", "--to", "g.csv"], ["export"]]
    assert instructor.course_root(ROOT / "course" / "grading") == ROOT


def test_course_admin_installed_without_its_course_names_the_fix(tmp_path, monkeypatch, capsys):
    from course import instructor

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(instructor, "ROOT", tmp_path / "site-packages")  # a non-editable install
    with pytest.raises(SystemExit) as exit_:
        instructor.admin(["export"])
    assert exit_.value.code == 2 and "fix:" in capsys.readouterr().err


def test_no_abbreviations_no_hidden_lessons_and_no_command_lists(
    bundle, tmp_path, monkeypatch, capsys
):
    for key in ("COURSE_RELEASE_DIR", "COURSE_WORKSPACE"):
        monkeypatch.setenv(key, bundle[key])
    release = Path(bundle["COURSE_RELEASE_DIR"])
    (release / ".hidden").mkdir()
    (release / ".hidden" / "x.ipynb").write_text("{}")
    (release / "9.0" / ".ipynb_checkpoints").mkdir()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["open", "9.0", "--fr", "--setup-only"])  # --fr is not --fresh
    assert exit_.value.code == 2 and "unrecognized arguments: --fr" in capsys.readouterr().err
    assert cli.main([]) == 0
    listed = capsys.readouterr().out
    assert "9.0 " in listed and ".hidden" not in listed
    assert cli.lessons() == ["9.0", "9.10"]
    assert cli.main(["open", "9.0", "--setup-only"]) == 0
    assert sorted(p.name for p in (Path(bundle["COURSE_WORKSPACE"]) / "9.0").iterdir()) == [
        "9.0.ipynb"
    ]
