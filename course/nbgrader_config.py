"""The course's nbgrader settings: directories, stubs, execution limits and grading safety.

Loaded by ../nbgrader_config.py. Directory names follow the bundle layout: source_notebooks/ (the
instructor's versions with solutions and hidden tests), release/ (generated student versions),
submitted/ (collected work), autograded/, feedback/.
"""

from pathlib import Path

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

# A submission that hangs must not stall a class run: every cell gets a hard limit.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
c.Execute.allow_errors = True
# Restore test cells a student deleted, so their points are still graded (and lost).
c.OverwriteCells.add_missing_cells = True
# A correct answer that triggers a library warning must not score 0: stderr lines matching this
# pattern are dropped before grading (nbgrader fails a test cell on any stderr output).
c.IgnorePattern.pattern = r"(?s).*(Warning|warn\().*"
