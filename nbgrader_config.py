"""nbgrader configuration for the course (run nbgrader commands from the repository root).

The course's own settings live in course/nbgrader_config.py (see course/README.md); this file only
loads them so that `nbgrader ...` finds them from the repository root, where nbgrader looks.
"""

from pathlib import Path

c = get_config()  # noqa: F821  (injected by traitlets)
load_subconfig(str(Path(__file__).resolve().parent / "course" / "nbgrader_config.py"))  # noqa: F821
