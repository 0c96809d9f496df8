"""The course's nbgrader settings: directories, stubs, execution limits and grading safety.

Loaded by ../nbgrader_config.py. Directory names follow the bundle layout: source_notebooks/ (the
instructor's versions with solutions and hidden tests), release/ (generated student versions),
submitted/ (collected work), autograded/, feedback/.
"""

import sys
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

c = get_config()  # noqa: F821

ROOT = Path(__file__).resolve().parent.parent
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.course_id = "rlvr-grpo-module9"
c.CourseDirectory.source_directory = "source_notebooks"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = f"sqlite:///{ROOT / 'gradebook.db'}"
# Only notebooks are released; helpers/ ships with the bundle itself, not inside an assignment.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A submission that hangs must not stall a class run: every cell gets a hard limit. On a timeout the
# kernel is replaced rather than interrupted (a loop that catches KeyboardInterrupt would otherwise
# make every later cell wait out the limit too): see GuardedExecute below.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = False
# (nbgrader always runs with allow_errors=True; it is not a config option.)
# Restore test cells a student deleted, so their points are still graded (and lost).
c.OverwriteCells.add_missing_cells = True
# Policy: stderr never fails a test cell (nbgrader would give 0 points for any stderr output, so a
# correct answer that logs or warns would lose them). StderrShownNotGraded (course/grading/
# stderr_policy.py, in the autograde list below) turns stderr into stdout marked "[stderr] ", so the
# student still sees it; only an error fails a cell. IgnorePattern stays enabled as a second line:
# any stderr left after that (there is none) would be dropped.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?s).*"


# Grading safety (course/grading/safety.py): GuardedExecute replaces Execute (runs the kernel in the
# bubblewrap sandbox, takes each test cell's verdict from the trusted tests that run outside the
# kernel, survives a killed kernel or a runaway cell, caps output). Hidden tests never reach a
# notebook, so feedback has none to remove; SanitiseOutputs makes student output inert.
# The package is imported from the course this file belongs to, not from wherever the venv was
# installed: nbgrader runs this file by path (no package context), and on JupyterHub the instructor's
# course is a clone of its own beside the shared venv's (deploy/jupyterhub/install.sh), so the one
# path entry below binds a course to its own grading code, as the kernel's PYTHONPATH binds it to
# its own helpers/. The course's commands (python -m course.instructor) start nbgrader with the
# course root on PYTHONPATH already; a throwaway course (tests, bench) that holds only this file
# gets the checkout's there.
if (ROOT / "course" / "grading").is_dir() and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Sandbox and limits for every student's kernel (see course/docs/INSTRUCTOR.md, "Threat model").
# "none" (UNSAFE) only through `course-admin autograde --trusted-students`.
c.GuardedExecute.sandbox = "bwrap"
c.GuardedExecute.memory_mb = 4096  # address space of each process (RLIMIT_AS)
c.GuardedExecute.max_processes = 256  # RLIMIT_NPROC
c.GuardedExecute.file_mb = 256  # largest file written (RLIMIT_FSIZE)
c.GuardedExecute.workdir_mb = 1024  # working directory: a tmpfs of this size
c.GuardedExecute.tmp_mb = 512  # /tmp: a tmpfs of this size
c.GuardedExecute.notebook_timeout = 1800  # wall seconds per notebook (per cell: Execute.timeout)
# leave out the lesson's demo cells no graded code needs (course/grading/demos.py); False: run all
c.GuardedExecute.skip_demos = True

from course.grading.safety import make_safety_classes  # noqa: E402
from course.grading.sanitise import SanitiseOutputs  # noqa: E402
from course.grading.stderr_policy import StderrShownNotGraded  # noqa: E402

GuardedExecute = make_safety_classes()
c.Autograde.autograde_preprocessors = [
    GuardedExecute,
    StderrShownNotGraded,
    SanitiseOutputs,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
c.GenerateFeedback.preprocessors = [
    SanitiseOutputs,
    GetGrades,
    CSSHTMLHeaderPreprocessor,
]
