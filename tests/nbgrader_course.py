"""A throwaway nbgrader course in a temporary folder, for tests of the release and of grading.

It holds a copy of the course's nbgrader settings and of source_notebooks/, with its own gradebook,
so tests never touch the repository's release/, submitted/ or gradebook.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from course.grading import sandbox
from course.grading.common import NBGRADER
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
# Grading runs in the bubblewrap sandbox wherever it can start (./test.sh installs bubblewrap); where
# it cannot, tests grade trusted (the attack suite, tests/test_sandbox.py, skips and says why).
SANDBOX_MISSING = sandbox.unavailable_reason()
TRUSTED = SANDBOX_MISSING is not None


class Course:
    def __init__(self, path: Path, lessons: list[str] | None = None):
        self.root = path
        path.mkdir(parents=True, exist_ok=True)
        (path / "course").mkdir(exist_ok=True)
        shutil.copy(ROOT / "course" / "nbgrader_config.py", path / "course" / "nbgrader_config.py")
        shutil.copy(ROOT / "nbgrader_config.py", path / "nbgrader_config.py")
        src = ROOT / "source_notebooks"
        for lesson in lessons or [p.name for p in src.iterdir() if p.is_dir()]:
            shutil.copytree(src / lesson, path / "source_notebooks" / lesson, dirs_exist_ok=True)

    def nbgrader(
        self, *args: str, timeout: int = 900, check: bool = True
    ) -> subprocess.CompletedProcess:
        env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
        if args and args[0] in ("autograde", "validate") and TRUSTED:
            args = (*args, "--GuardedExecute.sandbox=none")
        out = subprocess.run([*NBGRADER, *args], cwd=self.root, env=env,
                             capture_output=True, text=True, timeout=timeout)  # fmt: skip
        if check and out.returncode != 0:
            raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
        return out

    def release(self, lesson: str) -> Path:
        self.nbgrader("generate_assignment", lesson, "--force")
        return self.root / "release" / lesson

    def submit(self, lesson: str, student: str, notebook: Path) -> Path:
        dest = self.root / "submitted" / student / lesson
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, dest / notebook.name)
        (dest / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")
        return dest

    def autograde(self, lesson: str, student: str | None = None, check: bool = False):
        args = ["autograde", lesson, "--force"]
        if student:
            args += ["--student", student]
        return self.nbgrader(*args, check=check)

    def scores(self, lesson: str) -> dict[str, dict[str, float]]:
        """student -> {grade_id: auto score} for autograded test cells of one lesson."""
        from nbgrader.api import Gradebook

        out: dict[str, dict[str, float]] = {}
        with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}") as gb:
            assignment = gb.find_assignment(lesson)
            for sub in gb.assignment_submissions(lesson):
                per = {}
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        if grade.cell.name and grade.auto_score is not None:
                            per[grade.cell.name] = float(grade.auto_score)
                out[sub.student.id] = per
            del assignment
        return out


def graded_cells(notebook: Path) -> dict[str, float]:
    """grade_id -> max points of the autograded test cells of a notebook."""
    nb = json.loads(notebook.read_text())
    return {
        c["metadata"]["nbgrader"]["grade_id"]: float(c["metadata"]["nbgrader"]["points"])
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade") and c["cell_type"] == "code"
    }
